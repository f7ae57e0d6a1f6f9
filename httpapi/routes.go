package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

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
	{http.MethodPut, "/users/:userId/email-verified", scopes{identity.ScopeUsersWrite}, setEmailVerified},
	{http.MethodGet, "/users/:userId/claims", scopes{identity.ScopeUsersRead, identity.ScopeClaimMappersRead}, previewClaims},
	{http.MethodGet, "/users/:userId/roles", scopes{identity.ScopeUsersRead}, listUserRoles},
	{http.MethodPost, "/users/:userId/roles/:roleId", scopes{identity.ScopeUsersWrite}, assignRole},
	{http.MethodDelete, "/users/:userId/roles/:roleId", scopes{identity.ScopeUsersWrite}, removeRole},
	{http.MethodGet, "/users/:userId/groups", scopes{identity.ScopeUsersRead}, listUserGroups},
	{http.MethodGet, "/users/:userId/passkeys", scopes{identity.ScopeUsersRead}, listPasskeys},
	{http.MethodDelete, "/users/:userId/passkeys/:passkeyId", scopes{identity.ScopeUsersWrite}, deletePasskey},

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

	// The listings of users through a role or a group disclose users, so
	// they need users:read as well.
	{http.MethodGet, "/roles", scopes{identity.ScopeRolesRead}, listRoles},
	{http.MethodPost, "/roles", scopes{identity.ScopeRolesWrite}, createRole},
	{http.MethodGet, "/roles/:roleId", scopes{identity.ScopeRolesRead}, getRole},
	{http.MethodPut, "/roles/:roleId", scopes{identity.ScopeRolesWrite}, updateRole},
	{http.MethodDelete, "/roles/:roleId", scopes{identity.ScopeRolesWrite}, deleteRole},
	{http.MethodGet, "/roles/:roleId/users", scopes{identity.ScopeRolesRead, identity.ScopeUsersRead}, listRoleHolders},

	{http.MethodGet, "/groups", scopes{identity.ScopeGroupsRead}, listGroups},
	{http.MethodPost, "/groups", scopes{identity.ScopeGroupsWrite}, createGroup},
	{http.MethodGet, "/groups/:groupId", scopes{identity.ScopeGroupsRead}, getGroup},
	{http.MethodPut, "/groups/:groupId", scopes{identity.ScopeGroupsWrite}, updateGroup},
	{http.MethodDelete, "/groups/:groupId", scopes{identity.ScopeGroupsWrite}, deleteGroup},
	{http.MethodGet, "/groups/:groupId/members", scopes{identity.ScopeGroupsRead, identity.ScopeUsersRead}, listGroupMembers},
	{http.MethodPut, "/groups/:groupId/members/:userId", scopes{identity.ScopeGroupsWrite}, addGroupMember},
	{http.MethodDelete, "/groups/:groupId/members/:userId", scopes{identity.ScopeGroupsWrite}, removeGroupMember},
	{http.MethodGet, "/groups/:groupId/roles", scopes{identity.ScopeGroupsRead}, listGroupRoles},
	{http.MethodPut, "/groups/:groupId/roles/:roleId", scopes{identity.ScopeGroupsWrite}, assignGroupRole},
	{http.MethodDelete, "/groups/:groupId/roles/:roleId", scopes{identity.ScopeGroupsWrite}, removeGroupRole},

	{http.MethodGet, "/clients", scopes{identity.ScopeClientsRead}, listClients},
	{http.MethodPost, "/clients", scopes{identity.ScopeClientsWrite}, createClient},
	{http.MethodGet, "/clients/:clientId", scopes{identity.ScopeClientsRead}, getClient},
	{http.MethodDelete, "/clients/:clientId", scopes{identity.ScopeClientsWrite}, deleteClient},
	{http.MethodGet, "/clients/:clientId/logo", scopes{identity.ScopeClientsRead}, getClientLogo},
	{http.MethodPut, "/clients/:clientId/logo", scopes{identity.ScopeClientsWrite}, putClientLogo},
	{http.MethodDelete, "/clients/:clientId/logo", scopes{identity.ScopeClientsWrite}, deleteClientLogo},

	{http.MethodGet, "/branding", scopes{identity.ScopeBrandingRead}, getBranding},
	{http.MethodPut, "/branding", scopes{identity.ScopeBrandingWrite}, putBranding},
	{http.MethodGet, "/branding/logo", scopes{identity.ScopeBrandingRead}, getLogo},
	{http.MethodPut, "/branding/logo", scopes{identity.ScopeBrandingWrite}, putLogo},
	{http.MethodDelete, "/branding/logo", scopes{identity.ScopeBrandingWrite}, deleteLogo},

	{http.MethodGet, "/audit", scopes{identity.ScopeAuditRead}, listAudit},
}

// queryScopes completes the scope table: a request of the route (method
// and path, as in routes) whose query string names param needs scopes,
// every one of them, instead of the route's own. It is checked where the
// route's scopes are, before anything else, and refused the same way
// (see scopesOf). openapi.yaml documents each entry in the operation's
// description and its x-required-scope-by-parameter.
var queryScopes = []struct {
	method, path, param string
	scopes              scopes
}{
	{http.MethodGet, "/users", "attribute", scopes{identity.ScopeUsersRead, identity.ScopeUserAttributesRead}},
}

// scopesOf returns what a request of rt needs: rt.scopes, or the scopes
// of the first entry of queryScopes for rt whose parameter the request's
// query string names (even without a value, even when the query string
// is malformed and refused later). Only routes with such entries look at
// the query string here.
func scopesOf(rt route) func(r *http.Request) scopes {
	type byParam struct {
		param  string
		scopes scopes
	}
	var entries []byParam
	for _, e := range queryScopes {
		if e.method == rt.method && e.path == rt.path {
			entries = append(entries, byParam{e.param, e.scopes})
		}
	}
	if len(entries) == 0 {
		return func(*http.Request) scopes { return rt.scopes }
	}
	return func(r *http.Request) scopes {
		raw := r.URL.RawQuery
		var q url.Values
		for _, e := range entries {
			// Decoding turns only %XX and + into other bytes: a query
			// string with neither the name nor a % cannot name it, and
			// is not parsed (the route parses it again anyway).
			if !strings.Contains(raw, e.param) && !strings.Contains(raw, "%") {
				continue
			}
			if q == nil {
				q, _ = url.ParseQuery(raw)
			}
			if q.Has(e.param) {
				return e.scopes
			}
		}
		return rt.scopes
	}
}

// Users.

// listUsers answers a page of users: every user, those a search matches,
// or, with attribute=KEY:VALUE, those whose attribute KEY has exactly the
// value VALUE (see findUsers).
func listUsers(ctx context.Context, w http.ResponseWriter, c *call) error {
	q, err := query(c.r)
	if err != nil {
		return err
	}
	if q.Has("attribute") {
		return findUsers(ctx, w, c, q)
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

// findUsers answers GET /users?attribute=KEY:VALUE, which needs
// user_attributes:read besides users:read (see queryScopes). The
// parameter is split at its first colon, so a value may hold colons and
// a key may not. Refused with 422, naming the parameter: no colon, a
// search as well (a lookup is exact, a search by prefix: they do not
// combine), and whatever the library refuses of the key and value (an
// empty key, say), its message then saying which part; offset and limit
// as for the list.
func findUsers(ctx context.Context, w http.ResponseWriter, c *call, q url.Values) error {
	var fields []identity.FieldError
	page, err := pageOf(q)
	if err != nil {
		e, ok := errors.AsType[*identity.Error](err)
		if !ok {
			return err
		}
		fields = append(fields, e.Fields...)
	}
	key, value, found := strings.Cut(q.Get("attribute"), ":")
	if !found {
		fields = append(fields, identity.FieldError{Field: "attribute", Rule: identity.RuleFormat,
			Message: "must be KEY:VALUE, the key before the first colon"})
	}
	if q.Has("search") {
		fields = append(fields, identity.FieldError{Field: "attribute", Rule: identity.RuleNotAllowed,
			Message: "cannot be combined with search"})
	}
	if len(fields) > 0 {
		return invalid("invalid attribute lookup", fields)
	}
	list, err := c.ws.ListUsersByAttribute(ctx, key, value, page)
	if err != nil {
		return attributeFields(err)
	}
	return writeJSON(w, http.StatusOK, envelope(list))
}

// attributeFields returns err with the field errors the library reports
// of the key and value of a lookup naming the query parameter attribute
// instead, their messages the part: {"field": "attribute", "message":
// "the key is required"}.
func attributeFields(err error) error {
	e, ok := errors.AsType[*identity.Error](err)
	if !ok || e.Code != identity.CodeInvalid {
		return err
	}
	renamed := *e
	renamed.Fields = slices.Clone(e.Fields)
	for i, f := range renamed.Fields {
		if f.Field == "key" || f.Field == "value" {
			renamed.Fields[i].Field, renamed.Fields[i].Message = "attribute", "the "+f.Field+" "+f.Message
		}
	}
	return &renamed
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

// listPasskeys answers the user's passkeys (an extension: GET
// /users/{userId}/passkeys, {"passkeys": [...]}, oldest first).
func listPasskeys(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	list, err := c.ws.ListPasskeys(ctx, id)
	if err != nil {
		return err
	}
	out := passkeysResponse{Passkeys: make([]passkeyJSON, len(list))}
	for i, p := range list {
		out.Passkeys[i] = passkeyOf(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// deletePasskey removes the user's passkey (an extension: DELETE
// /users/{userId}/passkeys/{passkeyId}, 204); under a workspace that
// requires passkeys the user's last one is 409.
func deletePasskey(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	return writeNoContent(w, c.ws.DeletePasskey(ctx, id, c.param("passkeyId")))
}

// setEmailVerified marks the user's email address verified or not (an
// extension: PUT /users/{userId}/email-verified with the body
// {"emailVerified": true|false}, the member required), for an
// administrator who checked the address another way, and answers with
// the user and its new ETag. Setting the value the user has changes
// nothing and answers the same. PUT /users/{userId} keeps ignoring emailVerified, as it ignores
// every member but email and fullName: the specification's update body
// stays as it is.
func setEmailVerified(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	var verified *bool
	if err := decodeBody(w, c.r, requiredField("emailVerified", &verified)); err != nil {
		return err
	}
	u, err := c.ws.SetEmailVerified(ctx, id, *verified)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(u.Version))
	return writeJSON(w, http.StatusOK, u)
}

// previewClaims answers with the claims the workspace's mappers project
// for the user into the token that the query parameter token names
// (access or id), as Workspace.GetClaims computes them for an issuer.
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
	claims, err := c.ws.GetClaims(ctx, id, kind)
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
	attrs, err := c.ws.ListAttributes(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, attributesResponse{Attributes: attrs})
}

// setAttribute creates or replaces one attribute of the user, under
// If-Match and If-None-Match against the user's ETag, evaluated in the
// write's transaction, and answers 204 with the ETag of the user as the
// write left it: an attribute is part of the user, whose version it
// changes.
func setAttribute(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	cond, err := preconditionOf(c.r.Header)
	if err != nil {
		return err
	}
	var value string
	if err := decodeBody(w, c.r, requiredField("value", &value)); err != nil {
		return err
	}
	u, err := c.ws.SetAttribute(ctx, id, c.param("key"), value, cond)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(u.Version))
	return writeNoContent(w, nil)
}

// deleteAttribute removes one attribute of the user, under the
// conditions setAttribute takes, and answers as it does.
func deleteAttribute(ctx context.Context, w http.ResponseWriter, c *call) error {
	id, err := c.id("userId", "user")
	if err != nil {
		return err
	}
	cond, err := preconditionOf(c.r.Header)
	if err != nil {
		return err
	}
	u, err := c.ws.DeleteAttribute(ctx, id, c.param("key"), cond)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(u.Version))
	return writeNoContent(w, nil)
}

// Claim mappers.

func listClaimMappers(ctx context.Context, w http.ResponseWriter, c *call) error {
	mappers, err := c.ws.ListClaimMappers(ctx)
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
	m, err := c.ws.GetClaimMapper(ctx, c.param("attributeKey"))
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
	m, err := c.ws.SetClaimMapper(ctx, c.param("attributeKey"), spec)
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
