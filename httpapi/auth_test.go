package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// routeCase is one valid request of every route, against a seeded
// workspace (see testEnv.seed), the scopes it needs and the status it
// succeeds with.
type routeCase struct {
	method, path string
	body         any
	scopes       []identity.Scope
	status       int
}

// one is the scopes of a route that needs only s.
func one(s identity.Scope) []identity.Scope { return []identity.Scope{s} }

func routeCases() []routeCase {
	const base = "/t/acme/api/v1"
	newUser := map[string]any{"username": "bob", "email": "bob@example.com", "fullName": "Bob", "password": "correct horse"}
	newHook := map[string]any{"url": "https://hooks.example.com/b", "events": []string{"login.failed"}}
	newRole := map[string]any{"name": "auditor", "description": "reads the audit trail"}
	newGroup := map[string]any{"name": "ops"}
	newClient := map[string]any{"name": "cli", "public": true, "redirectUris": []string{"http://127.0.0.1:8080/cb"}}
	logo := pngBody(testPNGData)
	return []routeCase{
		{"GET", base + "/users", nil, one(identity.ScopeUsersRead), 200},
		{"POST", base + "/users", newUser, one(identity.ScopeUsersWrite), 201},
		{"GET", base + "/users/1", nil, one(identity.ScopeUsersRead), 200},
		{"PUT", base + "/users/1", map[string]any{"email": "ada@lovelace.org", "fullName": "Ada"}, one(identity.ScopeUsersWrite), 200},
		{"DELETE", base + "/users/1", nil, one(identity.ScopeUsersWrite), 204},
		{"POST", base + "/users/1/roles/2", nil, one(identity.ScopeUsersWrite), 204},
		{"DELETE", base + "/users/1/roles/1", nil, one(identity.ScopeUsersWrite), 204},
		{"GET", base + "/users/1/attributes", nil, one(identity.ScopeUserAttributesRead), 200},
		{"PUT", base + "/users/1/attributes/tier", map[string]any{"value": "gold"}, one(identity.ScopeUserAttributesWrite), 204},
		{"DELETE", base + "/users/1/attributes/dept", nil, one(identity.ScopeUserAttributesWrite), 204},
		{"GET", base + "/claim-mappers", nil, one(identity.ScopeClaimMappersRead), 200},
		{"PUT", base + "/claim-mappers/tier", map[string]any{"claimName": "tier"}, one(identity.ScopeClaimMappersWrite), 204},
		{"DELETE", base + "/claim-mappers/dept", nil, one(identity.ScopeClaimMappersWrite), 204},
		{"GET", base + "/webhooks", nil, one(identity.ScopeWebhooksRead), 200},
		{"POST", base + "/webhooks", newHook, one(identity.ScopeWebhooksWrite), 201},
		{"DELETE", base + "/webhooks/1", nil, one(identity.ScopeWebhooksWrite), 204},
		// Extensions.
		{"POST", base + "/users/1/enable", nil, one(identity.ScopeUsersWrite), 204},
		{"POST", base + "/users/1/unlock", nil, one(identity.ScopeUsersWrite), 204},
		{"DELETE", base + "/users/1/mfa", nil, one(identity.ScopeUsersWrite), 204},
		{"PUT", base + "/users/1/email-verified", map[string]any{"emailVerified": true}, one(identity.ScopeUsersWrite), 200},
		{"GET", base + "/users/1/claims?token=access", nil, []identity.Scope{identity.ScopeUsersRead, identity.ScopeClaimMappersRead}, 200},
		{"GET", base + "/claim-mappers/dept", nil, one(identity.ScopeClaimMappersRead), 200},
		// Roles and groups.
		{"GET", base + "/roles", nil, one(identity.ScopeRolesRead), 200},
		{"POST", base + "/roles", newRole, one(identity.ScopeRolesWrite), 201},
		{"GET", base + "/roles/1", nil, one(identity.ScopeRolesRead), 200},
		{"PUT", base + "/roles/1", map[string]any{"name": "administrator"}, one(identity.ScopeRolesWrite), 200},
		{"DELETE", base + "/roles/2", nil, one(identity.ScopeRolesWrite), 204},
		{"GET", base + "/roles/1/users", nil, []identity.Scope{identity.ScopeRolesRead, identity.ScopeUsersRead}, 200},
		{"GET", base + "/groups", nil, one(identity.ScopeGroupsRead), 200},
		{"POST", base + "/groups", newGroup, one(identity.ScopeGroupsWrite), 201},
		{"GET", base + "/groups/1", nil, one(identity.ScopeGroupsRead), 200},
		{"PUT", base + "/groups/1", map[string]any{"name": "employees", "description": "everyone"}, one(identity.ScopeGroupsWrite), 200},
		{"DELETE", base + "/groups/1", nil, one(identity.ScopeGroupsWrite), 204},
		{"GET", base + "/groups/1/members", nil, []identity.Scope{identity.ScopeGroupsRead, identity.ScopeUsersRead}, 200},
		{"PUT", base + "/groups/1/members/1", nil, one(identity.ScopeGroupsWrite), 204},
		{"DELETE", base + "/groups/1/members/1", nil, one(identity.ScopeGroupsWrite), 204},
		{"GET", base + "/groups/1/roles", nil, one(identity.ScopeGroupsRead), 200},
		{"PUT", base + "/groups/1/roles/2", nil, one(identity.ScopeGroupsWrite), 204},
		{"DELETE", base + "/groups/1/roles/1", nil, one(identity.ScopeGroupsWrite), 204},
		{"GET", base + "/users/1/groups", nil, one(identity.ScopeUsersRead), 200},
		{"GET", base + "/users/1/roles", nil, one(identity.ScopeUsersRead), 200},
		// OAuth clients and branding; "{client}" is the seeded client.
		{"GET", base + "/clients", nil, one(identity.ScopeClientsRead), 200},
		{"POST", base + "/clients", newClient, one(identity.ScopeClientsWrite), 201},
		{"GET", base + "/clients/{client}", nil, one(identity.ScopeClientsRead), 200},
		{"DELETE", base + "/clients/{client}", nil, one(identity.ScopeClientsWrite), 204},
		{"GET", base + "/clients/{client}/logo", nil, one(identity.ScopeClientsRead), 200},
		{"PUT", base + "/clients/{client}/logo", logo, one(identity.ScopeClientsWrite), 200},
		{"DELETE", base + "/clients/{client}/logo", nil, one(identity.ScopeClientsWrite), 204},
		{"GET", base + "/branding", nil, one(identity.ScopeBrandingRead), 200},
		{"PUT", base + "/branding", map[string]any{"displayName": "Acme Corp"}, one(identity.ScopeBrandingWrite), 200},
		{"GET", base + "/branding/logo", nil, one(identity.ScopeBrandingRead), 200},
		{"PUT", base + "/branding/logo", logo, one(identity.ScopeBrandingWrite), 200},
		{"DELETE", base + "/branding/logo", nil, one(identity.ScopeBrandingWrite), 204},
		// The audit trail.
		{"GET", base + "/audit?action=user.&limit=5", nil, one(identity.ScopeAuditRead), 200},
	}
}

// TestScopes sends every route with a key of each scope and with a key of
// all: it is authorized exactly when the key holds every scope of the
// route, and refused with a challenge naming them all.
func TestScopes(t *testing.T) {
	for _, rc := range routeCases() {
		for _, scope := range append(identity.Scopes(), "all") {
			t.Run(rc.method+" "+rc.path+" "+string(scope), func(t *testing.T) {
				e := newTestEnv(t)
				e.seed(t)
				key := e.keys[scope]
				if scope == "all" {
					key = e.allKey
				}
				rec := e.do(t, rc.method, rc.path, key, rc.body)
				if len(rc.scopes) == 1 && scope == rc.scopes[0] || scope == "all" {
					wantStatus(t, rec, rc.status)
					return
				}
				wantProblem(t, rec, http.StatusForbidden, "forbidden")
				var names []string
				for _, s := range rc.scopes {
					names = append(names, string(s))
				}
				want := `Bearer error="insufficient_scope", scope="` + strings.Join(names, " ") + `"`
				if got := rec.Header().Get("WWW-Authenticate"); got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
			})
		}
	}
}

// TestUnauthenticated: every credential that is not a valid key is 401
// with WWW-Authenticate: Bearer, before anything else is looked at.
func TestUnauthenticated(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	revoked, err := func() (string, error) {
		created, err := e.ws.CreateAPIKey(context.Background(), "revoked", identity.Scopes())
		k, secret := created.APIKey, created.Secret
		if err == nil {
			err = e.ws.RevokeAPIKey(context.Background(), k.ID)
		}
		return secret, err
	}()
	if err != nil {
		t.Fatal(err)
	}
	// unknown is well formed, but no key has its id.
	unknown := "idk_0123456789abcdef_" + strings.Repeat("A", 43)
	// wrongSecret has a real id with another secret.
	wrongSecret := e.allKey[:len(e.allKey)-43] + strings.Repeat("B", 43)

	auths := map[string]string{
		"no header":        "",
		"basic scheme":     "Basic YWRhOnB3",
		"scheme only":      "Bearer",
		"empty token":      "Bearer    ",
		"garbage":          "Bearer not-a-key",
		"key without type": e.allKey,
		"revoked key":      "Bearer " + revoked,
		"unknown key":      "Bearer " + unknown,
		"wrong secret":     "Bearer " + wrongSecret,
		"key with suffix":  "Bearer " + e.allKey + "x",
	}
	requests := []struct {
		method, path string
		body         any
	}{
		{"GET", "/t/acme/api/v1/users", nil},
		{"GET", "/t/acme/api/v1/users/1", nil},
		{"GET", "/t/acme/api/v1/users/99999", nil},  // unknown user
		{"GET", "/t/acme/api/v1/users/abc", nil},    // not an id
		{"GET", "/t/nosuch/api/v1/users/1", nil},    // unknown workspace
		{"DELETE", "/t/acme/api/v1/users/1.5", nil}, // not an id
		{"POST", "/t/acme/api/v1/users", "{not json"},
		{"PUT", "/t/acme/api/v1/users/1/attributes/k", []byte("x")},
		{"DELETE", "/t/acme/api/v1/webhooks/0", nil},
		{"DELETE", "/t/acme/api/v1/claim-mappers/nosuch", nil},
	}
	for name, auth := range auths {
		for _, r := range requests {
			t.Run(name+" "+r.method+" "+r.path, func(t *testing.T) {
				rec := e.do(t, r.method, r.path, "", r.body, "Authorization", auth, "Content-Type", "text/plain")
				wantProblem(t, rec, http.StatusUnauthorized, "unauthenticated")
				if got := rec.Header().Get("WWW-Authenticate"); got != "Bearer" {
					t.Errorf("WWW-Authenticate %q, want Bearer", got)
				}
			})
		}
	}
}

// TestAuthorizationHeader: the scheme is case-insensitive, and two
// Authorization headers are refused as ambiguous.
func TestAuthorizationHeader(t *testing.T) {
	e := newTestEnv(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		rec := e.do(t, "GET", "/t/acme/api/v1/users", "", nil, "Authorization", scheme+" "+e.allKey)
		wantStatus(t, rec, http.StatusOK)
	}
	req := "/t/acme/api/v1/users"
	rec := e.do(t, "GET", req, e.allKey, nil, "X-Unused", "1")
	wantStatus(t, rec, http.StatusOK)

	// Two headers are ambiguous even when they agree.
	twice := e.do(t, "GET", req, "", nil, "Authorization", "Bearer "+e.allKey, "Authorization", "Bearer "+e.allKey)
	wantProblem(t, twice, http.StatusUnauthorized, "unauthenticated")
}

// TestOtherWorkspace: a valid key used on another workspace's slug is 403,
// byte for byte the same whether that workspace exists or not.
func TestOtherWorkspace(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	for _, rc := range routeCases() {
		t.Run(rc.method+" "+rc.path, func(t *testing.T) {
			existing := e.do(t, rc.method, strings.Replace(rc.path, "/t/acme/", "/t/other/", 1), e.allKey, rc.body)
			missing := e.do(t, rc.method, strings.Replace(rc.path, "/t/acme/", "/t/nosuch/", 1), e.allKey, rc.body)
			empty := e.do(t, rc.method, strings.Replace(rc.path, "/t/acme/", "/t//", 1), e.allKey, rc.body)
			foreign := e.do(t, rc.method, rc.path, e.otherKey, rc.body)
			for _, rec := range []*httptest.ResponseRecorder{existing, missing, empty, foreign} {
				wantProblem(t, rec, http.StatusForbidden, "forbidden")
			}
			if diff := cmp.Diff(existing.Body.String(), missing.Body.String()); diff != "" {
				t.Errorf("existing vs missing slug body (-existing +missing):\n%s", diff)
			}
			// Each answer has its own request id; the rest is the same.
			for _, rec := range []*httptest.ResponseRecorder{existing, missing} {
				if rec.Header().Get("X-Request-Id") == "" {
					t.Error("no X-Request-Id")
				}
				rec.Header().Del("X-Request-Id")
			}
			if diff := cmp.Diff(existing.Header(), missing.Header()); diff != "" {
				t.Errorf("existing vs missing slug header (-existing +missing):\n%s", diff)
			}
			if got := existing.Header().Get("WWW-Authenticate"); got != "" {
				t.Errorf("WWW-Authenticate %q on a foreign workspace, want none", got)
			}
		})
	}
}

// TestServeOpenAPIDocument: the document is served without authentication.
func TestServeOpenAPIDocument(t *testing.T) {
	e := newTestEnv(t)
	for _, key := range []string{"", e.allKey, "garbage"} {
		rec := e.do(t, "GET", "/t/acme/api/v1/openapi.yaml", key, nil)
		wantStatus(t, rec, http.StatusOK)
		if ct := rec.Header().Get("Content-Type"); ct != "application/yaml" {
			t.Errorf("Content-Type %q, want application/yaml", ct)
		}
		if !strings.HasPrefix(rec.Body.String(), "openapi: ") {
			t.Errorf("body starts %.40q, want an OpenAPI document", rec.Body.String())
		}
	}
}
