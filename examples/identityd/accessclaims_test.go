package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"
)

// The groups and roles claims, as a real relying party (go-oidc with
// x/oauth2) finds them in the tokens of identityd serve, as memberships
// change through identityd's commands.

// accessClaimNames are the claims of a user's groups and roles.
var accessClaimNames = []string{"groups", "roles", "groups_overage", "roles_overage"}

// accessOf returns the groups and roles claims of a token's or
// userinfo's claims.
func accessOf(c map[string]any) map[string]any { return mapped(c, accessClaimNames...) }

// access is the groups and roles claims holding the names.
func access(groups, roles []string) map[string]any {
	list := func(names []string) []any {
		out := []any{}
		for _, n := range names {
			out = append(out, n)
		}
		return out
	}
	return map[string]any{"groups": list(groups), "roles": list(roles)}
}

// userInfoClaims asks the provider's userinfo with the access token.
func (rp *relyingParty) userInfoClaims(t *testing.T, ctx context.Context, accessToken string) map[string]any {
	t.Helper()
	info, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: accessToken, TokenType: "Bearer"}))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	var c map[string]any
	if err := info.Claims(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// introspect asks the provider's introspection endpoint about a token,
// as the relying party's confidential client.
func (rp *relyingParty) introspect(t *testing.T, token string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(rp.config.Endpoint.TokenURL, "/token")+"/introspect",
		strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(rp.config.ClientID), url.QueryEscape(rp.config.ClientSecret))
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("introspect: status %d, %v", res.StatusCode, err)
	}
	return out
}

// TestRelyingPartyGroupsAndRoles signs a user in with the scopes groups
// and roles, and with a client created with -claims groups,roles, and
// finds the sorted names of its groups and roles in the ID token, the
// access token and userinfo. After group remove through the admin
// socket, the next refresh's tokens lack the group and the role it
// carried, while the access token issued before still verifies, claims
// and all; userinfo answers what the user holds now.
func TestRelyingPartyGroupsAndRoles(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := newDB(t)
	scoped := registerRP(t, db)
	always := registerRP(t, db, "-claims", "groups,roles")
	p := startServe(t, db)
	uid := createUser(t, p.base, key, "ada")
	admin := func(args ...string) string {
		t.Helper()
		return mustRunBinary(t, append([]string{"-db", db}, args...)...).stdout
	}
	// Created out of alphabetical order, so that the claims' order is
	// seen to be the names', not the ids'.
	admin("role", "create", "-workspace", "acme", "viewer") // 1
	admin("role", "create", "-workspace", "acme", "admin")  // 2
	admin("group", "create", "-workspace", "acme", "ops")   // 1
	admin("group", "create", "-workspace", "acme", "eng")   // 2
	admin("group", "add", "-workspace", "acme", "ops", "ada")
	admin("group", "add", "-workspace", "acme", "eng", "ada@example.com")
	admin("group", "grant", "-workspace", "acme", "ops", "viewer")
	admin("group", "grant", "-workspace", "acme", "eng", "admin")
	// admin directly as well: still once in the claim.
	mustCall(t, http.MethodPost, fmt.Sprintf("%s/t/acme/api/v1/users/%d/roles/2", p.base, uid), key, nil, http.StatusNoContent)
	if got := admin("user", "roles", "-workspace", "acme", "ada"); got != "ID  NAME    SOURCES\n1   viewer  group ops\n2   admin   direct, group eng\n" {
		t.Errorf("user roles:\n%s", got)
	}
	before := access([]string{"eng", "ops"}, []string{"admin", "viewer"})

	rp := newRelyingParty(t, ctx, p.base, scoped)
	rp.config.Scopes = append(rp.config.Scopes, "groups", "roles")
	f := newFlow(1)
	tok, id := rp.tokens(t, ctx, f, rp.signIn(t, f, "ada", "correct horse battery"))
	for what, c := range map[string]map[string]any{
		"ID token":     idClaims(t, id),
		"access token": payload(t, tok.AccessToken),
		"userinfo":     rp.userInfoClaims(t, ctx, tok.AccessToken),
	} {
		if diff := cmp.Diff(before, accessOf(c)); diff != "" {
			t.Errorf("groups and roles of the %s (-want +got):\n%s", what, diff)
		}
	}
	if scope := payload(t, tok.AccessToken)["scope"]; scope != "openid profile email groups roles" {
		t.Errorf("access token scope %q", scope)
	}

	// Without the scopes, a client of its own: no such claims (single
	// sign-on, the same browser).
	plain := *rp
	plain.config.Scopes = []string{"openid"}
	f2 := newFlow(2)
	tok2, id2 := plain.tokens(t, ctx, f2, plain.codeOf(t, plain.get(t, plain.authURL(f2)), f2))
	if got := accessOf(idClaims(t, id2)); len(got) != 0 {
		t.Errorf("ID token without the scopes carries %v", got)
	}
	if got := accessOf(payload(t, tok2.AccessToken)); len(got) != 0 {
		t.Errorf("access token without the scopes carries %v", got)
	}

	// A client created with -claims groups,roles gets them with openid
	// alone.
	rpAlways := newRelyingParty(t, ctx, p.base, always)
	rpAlways.config.Scopes = []string{"openid"}
	f3 := newFlow(3)
	tok3, id3 := rpAlways.tokens(t, ctx, f3, rpAlways.signIn(t, f3, "ada", "correct horse battery"))
	for what, c := range map[string]map[string]any{
		"ID token":     idClaims(t, id3),
		"access token": payload(t, tok3.AccessToken),
		"userinfo":     rpAlways.userInfoClaims(t, ctx, tok3.AccessToken),
	} {
		if diff := cmp.Diff(before, accessOf(c)); diff != "" {
			t.Errorf("groups and roles of the %s of the client with -claims (-want +got):\n%s", what, diff)
		}
	}

	// A user in no group, holding no role, gets empty arrays.
	createUser(t, p.base, key, "bob")
	rpAlways.browser = newBrowser(t)
	f4 := newFlow(4)
	_, id4 := rpAlways.tokens(t, ctx, f4, rpAlways.signIn(t, f4, "bob", "correct horse battery"))
	if diff := cmp.Diff(access(nil, nil), accessOf(idClaims(t, id4))); diff != "" {
		t.Errorf("groups and roles of a user without any (-want +got):\n%s", diff)
	}

	// Ada leaves ops, and with it viewer.
	if got := admin("group", "remove", "-workspace", "acme", "ops", "ada"); got != "user 1 (ada) is no longer a member of group 1 (ops)\n" {
		t.Errorf("group remove printed %q", got)
	}
	after := access([]string{"eng"}, []string{"admin"})
	refreshed := rp.refresh(t, ctx, tok)
	for what, c := range map[string]map[string]any{
		"ID token":     idClaims(t, rp.verifyID(t, ctx, refreshed, "")),
		"access token": payload(t, refreshed.AccessToken),
	} {
		if diff := cmp.Diff(after, accessOf(c)); diff != "" {
			t.Errorf("groups and roles of the refreshed %s (-want +got):\n%s", what, diff)
		}
	}
	// The access token issued before is still live, and still says what
	// it said; userinfo, asked with it, answers what Ada holds now.
	in := rp.introspect(t, tok.AccessToken)
	if in["active"] != true || in["jti"] != payload(t, tok.AccessToken)["jti"] || in["scope"] != "openid profile email groups roles" {
		t.Errorf("introspection of the access token issued before the change: %v", in)
	}
	if diff := cmp.Diff(before, accessOf(payload(t, tok.AccessToken))); diff != "" {
		t.Errorf("the access token issued before the change (-want +got):\n%s", diff)
	}
	rp.verifyID(t, ctx, tok, f.nonce)
	if diff := cmp.Diff(after, accessOf(rp.userInfoClaims(t, ctx, tok.AccessToken))); diff != "" {
		t.Errorf("userinfo with the access token issued before the change (-want +got):\n%s", diff)
	}
}

// TestPostgresGroupsTwoProcesses runs two identityd processes on one
// PostgreSQL database: a membership changed through the first (its admin
// socket) is in the next token the second issues, and so is its end.
func TestPostgresGroupsTwoProcesses(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := pgDB(t)
	sock := filepath.Join(t.TempDir(), "a.sock")
	a := startServeWith(t, db, nil, "-admin-socket", sock)
	// One issuer for both, as behind the one address clients see: tokens
	// the second issues verify with the keys the first publishes.
	b := startServeWith(t, db, nil, "-issuer-base", a.base)
	viaA := func(args ...string) string {
		t.Helper()
		return mustRunBinary(t, append([]string{"-db", db, "-admin-socket", sock}, args...)...).stdout
	}
	createUser(t, a.base, key, "grace")
	viaA("group", "create", "-workspace", "acme", "eng")
	viaA("role", "create", "-workspace", "acme", "admin")
	viaA("group", "grant", "-workspace", "acme", "eng", "admin")

	rpA := newRelyingParty(t, ctx, a.base, registerRP(t, db))
	rpA.config.Scopes = append(rpA.config.Scopes, "groups", "roles")
	rpB := *rpA
	rpB.config.Endpoint = oauth2.Endpoint{
		AuthURL: b.base + "/t/acme/authorize", TokenURL: b.base + "/t/acme/token", AuthStyle: oauth2.AuthStyleInHeader,
	}
	f := newFlow(1)
	tok, _ := rpA.tokens(t, ctx, f, rpA.signIn(t, f, "grace", "correct horse battery"))
	if diff := cmp.Diff(access(nil, nil), accessOf(payload(t, tok.AccessToken))); diff != "" {
		t.Errorf("access token before any membership (-want +got):\n%s", diff)
	}

	viaA("group", "add", "-workspace", "acme", "eng", "grace")
	if !strings.Contains(a.log.String(), `msg="admin command" command="group add"`) {
		t.Errorf("group add did not run in the first process; its log:\n%s", a.log)
	}
	tok = rpB.refresh(t, ctx, tok)
	if diff := cmp.Diff(access([]string{"eng"}, []string{"admin"}), accessOf(payload(t, tok.AccessToken))); diff != "" {
		t.Errorf("access token the second process issued after group add through the first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(access([]string{"eng"}, []string{"admin"}), accessOf(idClaims(t, rpB.verifyID(t, ctx, tok, "")))); diff != "" {
		t.Errorf("ID token the second process issued after group add through the first (-want +got):\n%s", diff)
	}

	viaA("group", "remove", "-workspace", "acme", "eng", "grace")
	tok = rpB.refresh(t, ctx, tok)
	if diff := cmp.Diff(access(nil, nil), accessOf(payload(t, tok.AccessToken))); diff != "" {
		t.Errorf("access token the second process issued after group remove through the first (-want +got):\n%s", diff)
	}
}
