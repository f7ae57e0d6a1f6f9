package httpapi

import (
	"context"
	"net/http"

	"github.com/identitylib/identity"
)

// route is one endpoint: a method and path (below basePath), the scope a
// key needs for it, and the function that serves it once authorized.
type route struct {
	method string
	path   string
	scope  identity.Scope
	serve  func(ctx context.Context, w http.ResponseWriter, c *call) error
}

// routes is the route table and the scope table in one: every endpoint of
// the API and the one scope it needs (SPEC.md, Authentication).
var routes = []route{
	{http.MethodGet, "/users", identity.ScopeUsersRead, listUsers},
	{http.MethodPost, "/users", identity.ScopeUsersWrite, createUser},
	{http.MethodGet, "/users/:userId", identity.ScopeUsersRead, getUser},
	{http.MethodPut, "/users/:userId", identity.ScopeUsersWrite, updateUser},
	{http.MethodDelete, "/users/:userId", identity.ScopeUsersWrite, disableUser},
	{http.MethodPost, "/users/:userId/roles/:roleId", identity.ScopeUsersWrite, assignRole},
	{http.MethodDelete, "/users/:userId/roles/:roleId", identity.ScopeUsersWrite, removeRole},

	{http.MethodGet, "/users/:userId/attributes", identity.ScopeUserAttributesRead, getAttributes},
	{http.MethodPut, "/users/:userId/attributes/:key", identity.ScopeUserAttributesWrite, setAttribute},
	{http.MethodDelete, "/users/:userId/attributes/:key", identity.ScopeUserAttributesWrite, deleteAttribute},

	{http.MethodGet, "/claim-mappers", identity.ScopeClaimMappersRead, listClaimMappers},
	{http.MethodPut, "/claim-mappers/:attributeKey", identity.ScopeClaimMappersWrite, putClaimMapper},
	{http.MethodDelete, "/claim-mappers/:attributeKey", identity.ScopeClaimMappersWrite, deleteClaimMapper},

	{http.MethodGet, "/webhooks", identity.ScopeWebhooksRead, listWebhooks},
	{http.MethodPost, "/webhooks", identity.ScopeWebhooksWrite, createWebhook},
	{http.MethodDelete, "/webhooks/:endpointId", identity.ScopeWebhooksWrite, deleteWebhook},
}

// Users.

func listUsers(ctx context.Context, w http.ResponseWriter, c *call) error {
	q, err := query(c.r)
	if err != nil {
		return err
	}
	page, err := pageOf(q)
	if err != nil {
		return err
	}
	list, err := c.ws.ListUsers(ctx, q.Get("search"), page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

func createUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	var nu identity.NewUser
	err := decodeBody(w, c.r,
		field("username", &nu.Username), field("email", &nu.Email),
		field("fullName", &nu.FullName), field("password", &nu.Password))
	if err != nil {
		return err
	}
	u, err := c.ws.CreateUser(ctx, nu)
	if err != nil {
		return err
	}
	return writeCreated(w, c.r, u.ID, u)
}

func getUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	u, err := c.ws.GetUser(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, u)
}

func updateUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	var upd identity.UserUpdate
	if err := decodeBody(w, c.r, field("email", &upd.Email), field("fullName", &upd.FullName)); err != nil {
		return err
	}
	u, err := c.ws.UpdateUser(ctx, id, upd)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, u)
}

// disableUser serves DELETE on a user: users are disabled, never deleted,
// through this API.
func disableUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.DisableUser(ctx, id))
}

func assignRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	userID, roleID, err := c.userAndRole()
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.AssignRole(ctx, userID, roleID))
}

func removeRole(ctx context.Context, w http.ResponseWriter, c *call) error {
	userID, roleID, err := c.userAndRole()
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.RemoveRole(ctx, userID, roleID))
}

// userAndRole returns the ids of a roles path, the user's checked first.
func (c *call) userAndRole() (userID, roleID int64, err error) {
	if userID, err = c.id("userId", "user"); err != nil {
		return 0, 0, err
	}
	if roleID, err = c.id("roleId", "role"); err != nil {
		return 0, 0, err
	}
	return userID, roleID, nil
}

// Attributes.

func getAttributes(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	attrs, err := c.ws.Attributes(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, attributesResponse{Attributes: attrs})
}

func setAttribute(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	var value string
	if err := decodeBody(w, c.r, requiredField("value", &value)); err != nil {
		return err
	}
	return writeNoContent(w, c.ws.SetAttribute(ctx, id, c.param("key"), value))
}

func deleteAttribute(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.DeleteAttribute(ctx, id, c.param("key")))
}

// Claim mappers.

func listClaimMappers(ctx context.Context, w http.ResponseWriter, c *call) error {
	mappers, err := c.ws.ClaimMappers(ctx)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mappersResponse{Mappers: mappers})
}

// putClaimMapper passes omitted flags on as nil, so the library's defaults
// apply.
func putClaimMapper(ctx context.Context, w http.ResponseWriter, c *call) error {
	var spec identity.ClaimMapperSpec
	err := decodeBody(w, c.r, field("claimName", &spec.ClaimName),
		field("includeInAccess", &spec.IncludeInAccess), field("includeInId", &spec.IncludeInID))
	if err != nil {
		return err
	}
	_, err = c.ws.PutClaimMapper(ctx, c.param("attributeKey"), spec)
	return writeNoContent(w, err)
}

func deleteClaimMapper(ctx context.Context, w http.ResponseWriter, c *call) error {
	return writeNoContent(w, c.ws.DeleteClaimMapper(ctx, c.param("attributeKey")))
}

// Webhook endpoints.

func listWebhooks(ctx context.Context, w http.ResponseWriter, c *call) error {
	q, err := query(c.r)
	if err != nil {
		return err
	}
	page, err := pageOf(q)
	if err != nil {
		return err
	}
	list, err := c.ws.ListWebhooks(ctx, page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

// createWebhook answers with the endpoint and its secret: the only time the
// secret is shown.
func createWebhook(ctx context.Context, w http.ResponseWriter, c *call) error {
	var nw identity.NewWebhook
	err := decodeBody(w, c.r, field("url", &nw.URL), field("description", &nw.Description), field("events", &nw.Events))
	if err != nil {
		return err
	}
	created, err := c.ws.CreateWebhook(ctx, nw)
	if err != nil {
		return err
	}
	return writeCreated(w, c.r, created.Endpoint.ID, created)
}

func deleteWebhook(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("endpointId", "webhook endpoint")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.DeleteWebhook(ctx, id))
}
