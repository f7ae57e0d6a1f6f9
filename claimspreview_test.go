package identity_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// newPreviewEnv is an accessEnv (ada: admin directly, editor and viewer
// through ops and eng) with mappers of department (both tokens),
// employee_id (access), nickname (ID) and badge (both; ada has no badge),
// ada's attributes for the first three, and a client "dash" that always
// receives the roles claim.
func newPreviewEnv(t *testing.T) (*oidcEnv, identity.OAuthClient) {
	t.Helper()
	e := newAccessEnv(t)
	e.mapper("department", "dept", true, true)
	e.mapper("employee_id", "emp", true, false)
	e.mapper("nickname", "nick", false, true)
	e.mapper("badge", "badge", true, true)
	e.attr(e.ada.ID, "department", "R&D")
	e.attr(e.ada.ID, "employee_id", "42")
	e.attr(e.ada.ID, "nickname", "Countess")
	dash := e.client(identity.NewClient{Name: "Dash", RedirectURIs: []string{webRedirect}, Claims: []string{identity.ScopeRoles}}).Client
	return e, dash
}

// Every claim with the rule that puts it there: mappers by attribute
// key, scopes, the client's access claims and the protocol's own.
func TestGetClaimsPreview(t *testing.T) {
	e, dash := newPreviewEnv(t)
	ada, err := e.ws.GetUser(e.ctx, e.ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	proto := func(d string) identity.ClaimSource {
		return identity.ClaimSource{Kind: identity.ClaimFromProtocol, Detail: d}
	}
	mapper := func(key string) identity.ClaimSource {
		return identity.ClaimSource{Kind: identity.ClaimFromMapper, Detail: key}
	}
	scope := func(s string) identity.ClaimSource {
		return identity.ClaimSource{Kind: identity.ClaimFromScope, Detail: s}
	}
	client := func(c string) identity.ClaimSource {
		return identity.ClaimSource{Kind: identity.ClaimFromClient, Detail: c}
	}
	for _, c := range []struct {
		name string
		req  identity.ClaimsPreviewRequest
		want identity.ClaimsPreview
	}{
		{"web, the default scopes", identity.ClaimsPreviewRequest{UserID: e.ada.ID, ClientID: e.web.ID}, identity.ClaimsPreview{
			Scopes: []string{"openid", "profile", "email"},
			Access: []identity.PreviewClaim{
				{"aud", e.web.ID, proto("the client")},
				{"auth_time", int64(t0Unix), proto("the time of sign-in")},
				{"client_id", e.web.ID, proto("the client")},
				{"dept", "R&D", mapper("department")},
				{"emp", "42", mapper("employee_id")},
				{"exp", int64(t0Unix + 600), proto("the access token's lifetime")},
				{"iat", int64(t0Unix), proto("the time of issue")},
				{"iss", acmeIssuer, proto("the workspace's issuer")},
				{"jti", nil, proto("unique to each token")},
				{"scope", "openid profile email", proto("the scopes granted")},
				{"sub", "1", proto("the user's id")},
			},
			ID: []identity.PreviewClaim{
				{"at_hash", nil, proto("a hash of the access token")},
				{"aud", e.web.ID, proto("the client")},
				{"auth_time", int64(t0Unix), proto("the time of sign-in")},
				{"azp", e.web.ID, proto("the client")},
				{"dept", "R&D", mapper("department")},
				{"email", "ada@example.com", scope("email")},
				{"email_verified", false, scope("email")},
				{"exp", int64(t0Unix + 600), proto("the ID token's lifetime")},
				{"iat", int64(t0Unix), proto("the time of issue")},
				{"iss", acmeIssuer, proto("the workspace's issuer")},
				{"name", "Ada Lovelace", scope("profile")},
				{"nick", "Countess", mapper("nickname")},
				{"preferred_username", "ada", scope("profile")},
				{"sub", "1", proto("the user's id")},
				{"updated_at", ada.UpdatedAt.Unix(), scope("profile")},
			},
		}},
		{"dash: groups by scope, roles by the client", identity.ClaimsPreviewRequest{UserID: e.ada.ID, ClientID: dash.ID, Scopes: []string{"openid", "groups", "bogus"}}, identity.ClaimsPreview{
			Scopes: []string{"openid", "groups"},
			Access: []identity.PreviewClaim{
				{"aud", dash.ID, proto("the client")},
				{"auth_time", int64(t0Unix), proto("the time of sign-in")},
				{"client_id", dash.ID, proto("the client")},
				{"dept", "R&D", mapper("department")},
				{"emp", "42", mapper("employee_id")},
				{"exp", int64(t0Unix + 600), proto("the access token's lifetime")},
				{"groups", []string{"eng", "ops"}, scope("groups")},
				{"iat", int64(t0Unix), proto("the time of issue")},
				{"iss", acmeIssuer, proto("the workspace's issuer")},
				{"jti", nil, proto("unique to each token")},
				{"roles", []string{"admin", "editor", "viewer"}, client("roles")},
				{"scope", "openid groups", proto("the scopes granted")},
				{"sub", "1", proto("the user's id")},
			},
			ID: []identity.PreviewClaim{
				{"at_hash", nil, proto("a hash of the access token")},
				{"aud", dash.ID, proto("the client")},
				{"auth_time", int64(t0Unix), proto("the time of sign-in")},
				{"azp", dash.ID, proto("the client")},
				{"dept", "R&D", mapper("department")},
				{"exp", int64(t0Unix + 600), proto("the ID token's lifetime")},
				{"groups", []string{"eng", "ops"}, scope("groups")},
				{"iat", int64(t0Unix), proto("the time of issue")},
				{"iss", acmeIssuer, proto("the workspace's issuer")},
				{"nick", "Countess", mapper("nickname")},
				{"roles", []string{"admin", "editor", "viewer"}, client("roles")},
				{"sub", "1", proto("the user's id")},
			},
		}},
		{"dash, roles alone by the client", identity.ClaimsPreviewRequest{UserID: e.ada.ID, ClientID: dash.ID, Scopes: []string{"email"}}, identity.ClaimsPreview{
			Scopes: []string{"email"},
			Access: []identity.PreviewClaim{
				{"aud", dash.ID, proto("the client")},
				{"auth_time", int64(t0Unix), proto("the time of sign-in")},
				{"client_id", dash.ID, proto("the client")},
				{"dept", "R&D", mapper("department")},
				{"emp", "42", mapper("employee_id")},
				{"exp", int64(t0Unix + 600), proto("the access token's lifetime")},
				{"iat", int64(t0Unix), proto("the time of issue")},
				{"iss", acmeIssuer, proto("the workspace's issuer")},
				{"jti", nil, proto("unique to each token")},
				{"roles", []string{"admin", "editor", "viewer"}, client("roles")},
				{"scope", "email", proto("the scopes granted")},
				{"sub", "1", proto("the user's id")},
			},
			ID: []identity.PreviewClaim{},
		}},
		{"no client, no openid: no audience, no ID token", identity.ClaimsPreviewRequest{UserID: e.ada.ID, Scopes: []string{"profile"}}, identity.ClaimsPreview{
			Scopes: []string{"profile"},
			Access: []identity.PreviewClaim{
				{"auth_time", int64(t0Unix), proto("the time of sign-in")},
				{"dept", "R&D", mapper("department")},
				{"emp", "42", mapper("employee_id")},
				{"exp", int64(t0Unix + 600), proto("the access token's lifetime")},
				{"iat", int64(t0Unix), proto("the time of issue")},
				{"iss", acmeIssuer, proto("the workspace's issuer")},
				{"jti", nil, proto("unique to each token")},
				{"scope", "profile", proto("the scopes granted")},
				{"sub", "1", proto("the user's id")},
			},
			ID: []identity.PreviewClaim{},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.ws.GetClaimsPreview(e.ctx, c.req)
			if err != nil {
				t.Fatalf("GetClaimsPreview: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("GetClaimsPreview (-want +got):\n%s", diff)
			}
		})
	}
}

// The preview is what a token issued at the same moment carries, but for
// jti and at_hash.
func TestGetClaimsPreviewMatchesIssuedTokens(t *testing.T) {
	e, dash := newPreviewEnv(t)
	scopes := []string{"openid", "profile", "email", "groups"}
	preview, err := e.ws.GetClaimsPreview(e.ctx, identity.ClaimsPreviewRequest{UserID: e.ada.ID, ClientID: dash.ID, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	tok := e.issue(identity.TokenRequest{ClientID: dash.ID, UserID: e.ada.ID, Scopes: scopes})
	for _, c := range []struct {
		name    string
		claims  []identity.PreviewClaim
		token   string
		special string
	}{
		{"access", preview.Access, tok.AccessToken, "jti"},
		{"id", preview.ID, tok.IDToken, "at_hash"},
	} {
		issued := claimsOf(t, c.token)
		if _, ok := issued[c.special]; !ok {
			t.Errorf("%s token has no %s", c.name, c.special)
		}
		delete(issued, c.special)
		previewed := map[string]any{}
		for _, pc := range c.claims {
			if pc.Name != c.special {
				previewed[pc.Name] = pc.Value
			}
		}
		b, err := json.Marshal(previewed)
		if err != nil {
			t.Fatal(err)
		}
		var asJSON map[string]any
		if err := json.Unmarshal(b, &asJSON); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(issued, asJSON); diff != "" {
			t.Errorf("%s token (-issued +previewed):\n%s", c.name, diff)
		}
	}
}

// The preview refuses what issuing refuses: an unknown user or client, a
// disabled user.
func TestGetClaimsPreviewRefused(t *testing.T) {
	e, _ := newPreviewEnv(t)
	bea := e.user("bea")
	if err := e.ws.DisableUser(e.ctx, bea.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  identity.ClaimsPreviewRequest
		want identity.Code
	}{
		{"user 0", identity.ClaimsPreviewRequest{ClientID: e.web.ID}, identity.CodeNotFound},
		{"unknown user", identity.ClaimsPreviewRequest{UserID: 99, ClientID: e.web.ID}, identity.CodeNotFound},
		{"unknown client", identity.ClaimsPreviewRequest{UserID: e.ada.ID, ClientID: "idc_nope"}, identity.CodeNotFound},
		{"disabled user", identity.ClaimsPreviewRequest{UserID: bea.ID}, identity.CodeForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := e.ws.GetClaimsPreview(e.ctx, c.req); identity.ErrorCode(err) != c.want {
				t.Errorf("GetClaimsPreview = %v, want %s", err, c.want)
			}
		})
	}
}
