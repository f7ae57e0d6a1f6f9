package httpapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/identitylib/identity"
)

// OAuth clients: the applications that sign users in through the
// workspace's OpenID Provider. routes names each function here with its
// scopes. A client's id is a string ("idc_" and 16 hex digits), not a
// number, so it is passed to the library as sent: an id of another shape
// names no client, and the library answers 404 for it.

// clientsResponse is the body of GET /clients; the library returns a
// non-nil slice, so clients is [] and never null. A workspace has at most
// identity.MaxOAuthClients clients, so the list comes whole, like a
// group's roles, rather than in pages.
type clientsResponse struct {
	Clients []identity.OAuthClient `json:"clients"`
}

// listClients answers every client of the workspace, without secrets.
func listClients(ctx context.Context, w http.ResponseWriter, c *call) error {
	clients, err := c.ws.ListClients(ctx)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, clientsResponse{Clients: clients})
}

// createClient answers 201 with the client and, for a confidential
// client, its secret: the only time the secret is shown. The library
// cannot store the outcome of a client's creation for a retry (NewClient
// takes no Idempotency), so an Idempotency-Key is refused rather than
// ignored: a client that sent one would take a retry for safe, and a
// retry would register a second client with a second secret.
func createClient(ctx context.Context, w http.ResponseWriter, c *call) error {
	if len(c.r.Header.Values(idempotencyHeader)) > 0 {
		return invalid("invalid idempotency key", []identity.FieldError{{
			Field: idempotencyHeader, Rule: identity.RuleNotAllowed,
			Message: "is not supported by POST /clients: a retry would create another client",
		}})
	}
	var nc identity.NewClient
	var public *bool
	var grants []string
	err := decodeBody(w, c.r,
		field("name", &nc.Name), field("public", &public),
		field("redirectUris", &nc.RedirectURIs), field("postLogoutRedirectUris", &nc.PostLogoutRedirectURIs),
		field("grantTypes", &grants), field("claims", &nc.Claims))
	if err != nil {
		return err
	}
	nc.Public = public != nil && *public
	for _, g := range grants {
		nc.GrantTypes = append(nc.GrantTypes, identity.GrantType(g))
	}
	created, err := c.ws.CreateClient(ctx, nc)
	if err != nil {
		return err
	}
	return writeCreatedAt(w, c.r, url.PathEscape(created.Client.ID), created)
}

// getClient answers with the client, without its secret.
func getClient(ctx context.Context, w http.ResponseWriter, c *call) error {
	client, err := c.ws.GetClient(ctx, c.param("clientId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, client)
}

// deleteClient removes the client, and its logo with it; its tokens stop
// working, as the library has it.
func deleteClient(ctx context.Context, w http.ResponseWriter, c *call) error {
	return writeNoContent(w, c.ws.DeleteClient(ctx, c.param("clientId")))
}

// putClientLogo sets the client's logo from the PNG body (see readLogo).
func putClientLogo(ctx context.Context, w http.ResponseWriter, c *call) error {
	data, err := readLogo(w, c.r)
	if err != nil {
		return err
	}
	logo, err := c.ws.SetClientLogo(ctx, c.param("clientId"), data)
	if err != nil {
		return err
	}
	return writeLogoMeta(w, logo)
}

// getClientLogo answers the client's logo as a PNG (see writeLogo).
func getClientLogo(ctx context.Context, w http.ResponseWriter, c *call) error {
	ifNoneMatch, err := parseCondition(c.r.Header, "If-None-Match")
	if err != nil {
		return err
	}
	logo, err := c.ws.GetClientLogo(ctx, c.param("clientId"))
	if err != nil {
		return err
	}
	writeLogo(w, ifNoneMatch, logo)
	return nil
}

// deleteClientLogo removes the client's logo; 404 when it has none.
func deleteClientLogo(ctx context.Context, w http.ResponseWriter, c *call) error {
	return writeNoContent(w, c.ws.DeleteClientLogo(ctx, c.param("clientId")))
}
