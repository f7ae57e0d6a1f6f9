package httpapi

import (
	"context"
	"net/http"

	"github.com/identitylib/identity"
)

// route is one endpoint: a method and path (below basePath), the scopes a
// key needs for it, and the function that serves it once authorized.
type route struct {
	method string
	path   string
	scopes scopes
	serve  func(ctx context.Context, w http.ResponseWriter, c *call) error
}

// scopes lists what a route needs: every one of them.
type scopes []identity.Scope

// routes is the route table and the scope table in one: every endpoint of
// the API and the scopes it needs, as openapi.yaml documents them.
var routes = []route{
	{http.MethodGet, "/users", scopes{identity.ScopeUsersRead}, listUsers},
	{http.MethodPost, "/users", scopes{identity.ScopeUsersWrite}, createUser},
	{http.MethodGet, "/users/:userId", scopes{identity.ScopeUsersRead}, getUser},
	{http.MethodPut, "/users/:userId", scopes{identity.ScopeUsersWrite}, updateUser},
	{http.MethodDelete, "/users/:userId", scopes{identity.ScopeUsersWrite}, disableUser},
	{http.MethodPost, "/users/:userId/enable", scopes{identity.ScopeUsersWrite}, enableUser},
	{http.MethodPost, "/users/:userId/unlock", scopes{identity.ScopeUsersWrite}, unlockUser},
	{http.MethodDelete, "/users/:userId/mfa", scopes{identity.ScopeUsersWrite}, resetMFA},
	{http.MethodGet, "/users/:userId/claims", scopes{identity.ScopeUsersRead, identity.ScopeClaimMappersRead}, previewClaims},
	{http.MethodPost, "/users/:userId/roles/:roleId", scopes{identity.ScopeUsersWrite}, assignRole},
	{http.MethodDelete, "/users/:userId/roles/:roleId", scopes{identity.ScopeUsersWrite}, removeRole},

	{http.MethodGet, "/users/:userId/attributes", scopes{identity.ScopeUserAttributesRead}, getAttributes},
	{http.MethodPut, "/users/:userId/attributes/:key", scopes{identity.ScopeUserAttributesWrite}, setAttribute},
	{http.MethodDelete, "/users/:userId/attributes/:key", scopes{identity.ScopeUserAttributesWrite}, deleteAttribute},

	{http.MethodGet, "/claim-mappers", scopes{identity.ScopeClaimMappersRead}, listClaimMappers},
	{http.MethodGet, "/claim-mappers/:attributeKey", scopes{identity.ScopeClaimMappersRead}, getClaimMapper},
	{http.MethodPut, "/claim-mappers/:attributeKey", scopes{identity.ScopeClaimMappersWrite}, putClaimMapper},
	{http.MethodDelete, "/claim-mappers/:attributeKey", scopes{identity.ScopeClaimMappersWrite}, deleteClaimMapper},

	{http.MethodGet, "/webhooks", scopes{identity.ScopeWebhooksRead}, listWebhooks},
	{http.MethodPost, "/webhooks", scopes{identity.ScopeWebhooksWrite}, createWebhook},
	{http.MethodDelete, "/webhooks/:endpointId", scopes{identity.ScopeWebhooksWrite}, deleteWebhook},
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

// createUser answers 201 with the user, its Location and its ETag. With an
// Idempotency-Key, a retry gets the same answer (or the same refusal)
// without creating anything: the library stores the outcome.
func createUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	idem, err := c.idempotent()
	if err != nil {
		return err
	}
	var nu identity.NewUser
	err = decodeBody(w, c.r,
		field("username", &nu.Username), field("email", &nu.Email),
		field("fullName", &nu.FullName), field("password", &nu.Password))
	if err != nil {
		return err
	}
	nu.Idempotency = idem.of()
	u, err := c.ws.CreateUser(ctx, nu)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(u.Version))
	return writeCreated(w, c.r, u.ID, u)
}

// getUser answers with the user and its ETag, or 304 for a matching
// If-None-Match.
func getUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	ifNoneMatch, err := parseCondition(c.r.Header, "If-None-Match")
	if err != nil {
		return err
	}
	u, err := c.ws.GetUser(ctx, id)
	if err != nil {
		return err
	}
	return writeVersioned(w, ifNoneMatch, u.Version, u)
}

// updateUser replaces the user if If-Match and If-None-Match, when sent,
// hold for its current version (412 otherwise, changing nothing), and
// answers with the user and its new ETag.
func updateUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	var upd identity.UserUpdate
	if upd.Precondition, err = preconditionOf(c.r.Header); err != nil {
		return err
	}
	if err := decodeBody(w, c.r, field("email", &upd.Email), field("fullName", &upd.FullName)); err != nil {
		return err
	}
	u, err := c.ws.UpdateUser(ctx, id, upd)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(u.Version))
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

// enableUser undoes disableUser; like it, it is idempotent.
func enableUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.EnableUser(ctx, id))
}

// unlockUser ends the user's lockout (an extension: POST
// /users/{userId}/unlock, 204).
func unlockUser(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.UnlockUser(ctx, id))
}

// resetMFA clears the user's second factor and recovery codes (an
// extension: DELETE /users/{userId}/mfa, 204).
func resetMFA(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.ResetMFA(ctx, id))
}

// previewClaims answers with the claims the workspace's mappers project
// for the user into the token that the query parameter token names
// (access or id), as Workspace.Claims computes them for an issuer.
func previewClaims(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	q, err := query(c.r)
	if err != nil {
		return err
	}
	kind, err := tokenKindOf(q)
	if err != nil {
		return err
	}
	claims, err := c.ws.Claims(ctx, id, kind)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, claimsResponse{Claims: claims})
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

// getClaimMapper answers with one mapper and its ETag, or 304 for a
// matching If-None-Match.
func getClaimMapper(ctx context.Context, w http.ResponseWriter, c *call) error {
	ifNoneMatch, err := parseCondition(c.r.Header, "If-None-Match")
	if err != nil {
		return err
	}
	m, err := c.ws.ClaimMapper(ctx, c.param("attributeKey"))
	if err != nil {
		return err
	}
	return writeVersioned(w, ifNoneMatch, m.Version, m)
}

// putClaimMapper passes omitted flags on as nil, so the library's defaults
// apply, and If-Match and If-None-Match as the put's precondition
// (If-Match: * updates only, If-None-Match: * creates only). The 204
// carries the stored mapper's ETag, for the next conditional put.
func putClaimMapper(ctx context.Context, w http.ResponseWriter, c *call) error {
	var spec identity.ClaimMapperSpec
	var err error
	if spec.Precondition, err = preconditionOf(c.r.Header); err != nil {
		return err
	}
	err = decodeBody(w, c.r, field("claimName", &spec.ClaimName),
		field("includeInAccess", &spec.IncludeInAccess), field("includeInId", &spec.IncludeInID))
	if err != nil {
		return err
	}
	m, err := c.ws.PutClaimMapper(ctx, c.param("attributeKey"), spec)
	if err == nil {
		w.Header().Set("ETag", etag(m.Version))
	}
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
// secret is shown, but for a retry with the same Idempotency-Key, which
// gets the same answer.
func createWebhook(ctx context.Context, w http.ResponseWriter, c *call) error {
	idem, err := c.idempotent()
	if err != nil {
		return err
	}
	var nw identity.NewWebhook
	err = decodeBody(w, c.r, field("url", &nw.URL), field("description", &nw.Description), field("events", &nw.Events))
	if err != nil {
		return err
	}
	nw.Idempotency = idem.of()
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
