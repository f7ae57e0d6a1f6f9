package identity_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// accessEnv is an oidcEnv whose ada is a member of ops and eng (created in
// that order), carrying editor and viewer, and holds admin directly.
func newAccessEnv(t *testing.T) *oidcEnv {
	t.Helper()
	e := newOIDCEnv(t, nil)
	admin, editor, viewer := e.role("admin"), e.role("editor"), e.role("viewer")
	ops, eng := e.group("ops"), e.group("eng")
	for _, err := range []error{
		e.ws.AssignGroupRole(e.ctx, eng.ID, editor.ID), e.ws.AssignGroupRole(e.ctx, ops.ID, viewer.ID),
		e.ws.AssignGroupRole(e.ctx, ops.ID, editor.ID),
		e.ws.AddGroupMember(e.ctx, ops.ID, e.ada.ID), e.ws.AddGroupMember(e.ctx, eng.ID, e.ada.ID),
		e.ws.AssignRole(e.ctx, e.ada.ID, admin.ID),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// group creates a group named name and returns it.
func (e *testEnv) group(name string) identity.Group {
	e.t.Helper()
	g, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: name})
	if err != nil {
		e.t.Fatalf("CreateGroup(%q): %v", name, err)
	}
	return g
}

// accessOf returns a token's groups and roles claims, and its overage
// claims, as JSON decoded them.
func accessOf(c map[string]any) map[string]any {
	out := map[string]any{}
	for _, name := range []string{"groups", "roles", "groups_overage", "roles_overage"} {
		if v, ok := c[name]; ok {
			out[name] = v
		}
	}
	return out
}

// TestAccessClaims: the groups and roles scopes put flat, sorted arrays of
// names in the ID token, the access token and userinfo; without them no
// such claim; a client's Claims ask for them whatever the scopes.
func TestAccessClaims(t *testing.T) {
	e := newAccessEnv(t)
	both := map[string]any{
		"groups": []any{"eng", "ops"},
		"roles":  []any{"admin", "editor", "viewer"},
	}
	tok, _ := e.codeTokens("openid", "groups", "roles")
	if diff := cmp.Diff(both, accessOf(claimsOf(t, tok.IDToken))); diff != "" {
		t.Errorf("ID token (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(both, accessOf(claimsOf(t, tok.AccessToken))); diff != "" {
		t.Errorf("access token (-want +got):\n%s", diff)
	}
	info, err := e.ws.Provider().GetUserInfo(e.ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"groups": []string{"eng", "ops"}, "roles": []string{"admin", "editor", "viewer"}}, accessOf(info)); diff != "" {
		t.Errorf("userinfo (-want +got):\n%s", diff)
	}
	at := e.wantActive(tok.AccessToken)
	if diff := cmp.Diff([][]string{{"eng", "ops"}, {"admin", "editor", "viewer"}}, [][]string{at.Groups, at.Roles}); diff != "" || at.GroupsOverage || at.RolesOverage {
		t.Errorf("VerifyAccessToken groups and roles (-want +got):\n%s (overage %t %t)", diff, at.GroupsOverage, at.RolesOverage)
	}
	if _, ok := at.Claims["groups"]; ok {
		t.Errorf("VerifiedToken.Claims holds groups, a claim of its own field: %v", at.Claims)
	}

	plain, _ := e.codeTokens("openid", "profile")
	for what, c := range map[string]map[string]any{"ID token": claimsOf(t, plain.IDToken), "access token": claimsOf(t, plain.AccessToken)} {
		if got := accessOf(c); len(got) != 0 {
			t.Errorf("%s without the scopes carries %v", what, got)
		}
	}
	if at := e.wantActive(plain.AccessToken); at.Groups != nil || at.Roles != nil {
		t.Errorf("VerifyAccessToken without the scopes: groups %v, roles %v; want nil", at.Groups, at.Roles)
	}

	// A client that always receives groups, asking for openid alone.
	c := e.client(identity.NewClient{Name: "Proxy", RedirectURIs: []string{webRedirect}, Claims: []string{"groups"}})
	proxied := e.issue(identity.TokenRequest{ClientID: c.Client.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
	want := map[string]any{"groups": []any{"eng", "ops"}}
	if diff := cmp.Diff(want, accessOf(claimsOf(t, proxied.IDToken))); diff != "" {
		t.Errorf("ID token of a client with Claims groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, accessOf(claimsOf(t, proxied.AccessToken))); diff != "" {
		t.Errorf("access token of a client with Claims groups (-want +got):\n%s", diff)
	}
	info, err = e.ws.Provider().GetUserInfo(e.ctx, proxied.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"groups": []string{"eng", "ops"}}, accessOf(info)); diff != "" {
		t.Errorf("userinfo of a client with Claims groups (-want +got):\n%s", diff)
	}
}

// TestAccessClaimsOverage: a claim carries at most Limits.ClaimNames names
// (100 by default): at 100 the names, at 101 none but the overage
// indication, and userinfo the whole list either way.
func TestAccessClaimsOverage(t *testing.T) {
	for _, n := range []int{100, 101} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			s, err := e.ws.GetSettings(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			s.Limits.GroupsPerUser = 200
			if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				g, r := e.group(fmt.Sprintf("g%03d", i)), e.role(fmt.Sprintf("r%03d", i))
				if err := e.ws.AddGroupMember(e.ctx, g.ID, e.ada.ID); err != nil {
					t.Fatal(err)
				}
				if err := e.ws.AssignRole(e.ctx, e.ada.ID, r.ID); err != nil {
					t.Fatal(err)
				}
			}
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid", "groups", "roles"}})
			at := e.wantActive(tok.AccessToken)
			for what, c := range map[string]map[string]any{"ID token": claimsOf(t, tok.IDToken), "access token": claimsOf(t, tok.AccessToken)} {
				got := accessOf(c)
				switch n {
				case 100:
					groups, _ := got["groups"].([]any)
					roles, _ := got["roles"].([]any)
					if len(groups) != 100 || len(roles) != 100 || groups[0] != "g000" || roles[99] != "r099" || len(got) != 2 {
						t.Errorf("%s of a user with 100 groups and roles: %d groups, %d roles, %d claims", what, len(groups), len(roles), len(got))
					}
				case 101:
					if diff := cmp.Diff(map[string]any{"groups_overage": true, "roles_overage": true}, got); diff != "" {
						t.Errorf("%s of a user with 101 groups and roles (-want +got):\n%s", what, diff)
					}
				}
			}
			if over := n > 100; at.GroupsOverage != over || at.RolesOverage != over {
				t.Errorf("VerifyAccessToken overage = %t, %t; want %t", at.GroupsOverage, at.RolesOverage, over)
			}
			info, err := e.ws.Provider().GetUserInfo(e.ctx, tok.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if groups, _ := info["groups"].([]string); len(groups) != n {
				t.Errorf("userinfo holds %d groups, want all %d", len(groups), n)
			}
		})
	}
}

// TestAccessClaimsFollowChanges: a refresh after a change carries it (a
// role renamed, a membership ended), while the earlier token still
// verifies with what it said.
func TestAccessClaimsFollowChanges(t *testing.T) {
	e := newAccessEnv(t)
	tok, _ := e.codeTokens("openid", "groups", "roles")
	viewer, err := e.ws.GetRoleByName(e.ctx, "viewer")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.UpdateRole(e.ctx, viewer.ID, identity.RoleUpdate{Name: "reader"}); err != nil {
		t.Fatal(err)
	}
	ops, err := e.ws.GetGroupByName(e.ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ws.RemoveGroupMember(e.ctx, ops.ID, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	next, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"groups": []any{"eng"}, "roles": []any{"admin", "editor"}}
	if diff := cmp.Diff(want, accessOf(claimsOf(t, next.IDToken))); diff != "" {
		t.Errorf("the refreshed ID token (-want +got):\n%s", diff)
	}
	e.role("viewer") // a new role of the old name is another role
	if err := e.ws.AddGroupMember(e.ctx, ops.ID, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	again, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, next.RefreshToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"groups": []any{"eng", "ops"}, "roles": []any{"admin", "editor", "reader"}}
	if diff := cmp.Diff(want, accessOf(claimsOf(t, again.AccessToken))); diff != "" {
		t.Errorf("the access token after rejoining ops (-want +got):\n%s", diff)
	}
	at := e.wantActive(tok.AccessToken)
	if diff := cmp.Diff([]string{"eng", "ops"}, at.Groups); diff != "" {
		t.Errorf("the first token's groups (-want +got):\n%s", diff)
	}
}

// TestClientClaimsValidation: a client's Claims name known access claims,
// once each.
func TestClientClaimsValidation(t *testing.T) {
	e := newOIDCEnv(t, nil)
	for _, c := range []struct {
		claims []string
		fields []identity.FieldError
	}{
		{[]string{"groups", "roles"}, nil},
		{[]string{"roles"}, nil},
		{[]string{"groups", "email"}, field("claims[1]", identity.RuleUnknown)},
		{[]string{"roles", "roles"}, field("claims[1]", identity.RuleDuplicate)},
	} {
		created, err := e.ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{webRedirect}, Claims: c.claims})
		if c.fields == nil {
			if err != nil || !cmp.Equal(c.claims, created.Client.Claims) {
				t.Errorf("Claims %v: client %+v, %v", c.claims, created.Client, err)
			}
			continue
		}
		identitytest.WantCode(t, err, identity.CodeInvalid)
		identitytest.WantFields(t, err, c.fields)
	}
	if diff := cmp.Diff([]string{"groups", "roles"}, identity.AccessClaims()); diff != "" {
		t.Errorf("AccessClaims (-want +got):\n%s", diff)
	}
}

// TestListGroupRoles: the roles a group carries, by id; a name may hold
// every letter up to z; an unknown group is CodeNotFound.
func TestListGroupRoles(t *testing.T) {
	e := newTestEnv(t, nil)
	admin, zeta := e.role("admin"), e.role("zeta-9")
	eng := e.group("eng")
	for _, r := range []identity.Role{zeta, admin} {
		if err := e.ws.AssignGroupRole(e.ctx, eng.ID, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	roles, err := e.ws.ListGroupRoles(e.ctx, eng.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"admin", "zeta-9"}, names); diff != "" {
		t.Errorf("ListGroupRoles (-want +got):\n%s", diff)
	}
	_, err = e.ws.ListGroupRoles(e.ctx, 99)
	identitytest.WantCode(t, err, identity.CodeNotFound)
}
