package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// TestAPIKeysPage: an admin creates a key with scopes (shown once, a
// hostile name escaped) that then works, lists it and revokes it after a
// confirmation; invalid values are shown next to their inputs; a viewer
// has nothing to send; the creation is audited with the operator as its
// actor.
func TestAPIKeysPage(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	const hostile = `<script>alert("k")</script>`

	r := admin.post(e.url("workspaces/acme/clients/apikeys"), url.Values{"name": {hostile}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="scopes-error"`) ||
		!strings.Contains(r.body, `<details class="create" open>`) || !strings.Contains(r.body, `value="&lt;script&gt;`) {
		t.Fatalf("no scope: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/clients/apikeys"), url.Values{"name": {hostile}, "scopes": {"users:read", "audit:read"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "<h1>API key created</h1>") || strings.Contains(r.body, "<script>alert") {
		t.Fatalf("create: %d\n%s", r.status, r.body)
	}
	secret := shownSecret(t, r.body)
	key, err := e.svc.VerifyAPIKey(ctx, secret)
	if err != nil {
		t.Fatalf("the key shown does not work: %v", err)
	}
	if diff := cmp.Diff([]identity.Scope{"users:read", "audit:read"}, key.Scopes); diff != "" || key.Name != hostile || key.Workspace != "acme" {
		t.Errorf("key %+v (-want +got scopes):\n%s", key, diff)
	}

	r = admin.get(e.url("workspaces/acme/clients"))
	revoke := "workspaces/acme/clients/apikeys/" + key.ID + "/revoke"
	for _, s := range []string{`<code>` + key.ID + `</code>`, "users:read, audit:read", `href="` + e.base + revoke + `"`,
		"&lt;script&gt;alert(&#34;k&#34;)&lt;/script&gt;"} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the list lacks %q", s)
		}
	}
	for _, p := range []string{"workspaces/acme/clients", "workspaces/acme/audit", revoke} {
		if r := admin.get(e.url(p)); strings.Contains(r.body, secret) || strings.Contains(r.body, "<script>alert") {
			t.Errorf("%s shows the key or the raw name", p)
		}
	}
	r = viewer.get(e.url("workspaces/acme/clients"))
	if r.status != http.StatusOK || len(writeForms(r.body)) > 0 || strings.Contains(r.body, "/revoke") || !strings.Contains(r.body, key.ID) {
		t.Errorf("viewer's page: %d, forms %v", r.status, writeForms(r.body))
	}
	if r := viewer.post(e.url(revoke), nil); r.status != http.StatusForbidden {
		t.Errorf("viewer revoking: %d", r.status)
	}

	// The creation's record names the operator.
	page, err := ws.ListAuditRecords(ctx, &identity.AuditFilter{Action: "api_key.created"}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("records: %+v %v", page, err)
	}
	if a := page.Records[0].Actor; a.Kind != identity.ActorOperator || a.ID != e.operatorID("root") || a.Display != "root" {
		t.Errorf("actor %+v", a)
	}

	if r := admin.get(e.url("workspaces/acme/clients?revoked=" + key.ID)); strings.Contains(r.body, "revoked.") {
		t.Error("a link made the page claim a revocation")
	}
	r = admin.get(e.url(revoke))
	if r.status != http.StatusOK || !strings.Contains(r.body, `action="`+e.base+revoke+`"`) {
		t.Fatalf("confirmation: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url(revoke), nil)
	if want := e.base + "workspaces/acme/clients?revoked=" + key.ID; r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("revoke: %d %q", r.status, r.location())
	}
	if _, err := e.svc.VerifyAPIKey(ctx, secret); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Errorf("the revoked key still works: %v", err)
	}
	if r := admin.get(e.url("workspaces/acme/clients?revoked=" + key.ID)); !strings.Contains(r.body, "API key "+key.ID+" revoked.") {
		t.Errorf("no notice:\n%s", r.body)
	}
	for _, p := range []string{revoke, "workspaces/acme/clients/apikeys/nope/revoke"} {
		if r := admin.get(e.url(p)); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
}

// TestOAuthClientsPage: an admin registers a confidential client (its
// secret shown once, then working) and a public one (no secret), sees
// their URIs, grant types and claims, and deletes one after a
// confirmation; a bad URI is named by its line.
func TestOAuthClientsPage(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	const hostile = `"><script>alert(1)</script>`

	r := admin.post(e.url("workspaces/acme/clients"), url.Values{"name": {hostile},
		"redirectUris": {"https://app.example.com/cb\r\nftp://app.example.com/x"}, "grantTypes": {"authorization_code"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `<p class="field-error" id="redirectUris-error">line 2: `) ||
		!strings.Contains(r.body, "ftp://app.example.com/x</textarea>") {
		t.Fatalf("bad URI: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/clients"), url.Values{"name": {hostile}, "type": {"confidential"},
		"redirectUris":           {"https://app.example.com/cb\r\n\r\nhttps://app.example.com/cb2\r\n"},
		"postLogoutRedirectUris": {"https://app.example.com/bye"},
		"grantTypes":             {"authorization_code", "refresh_token", "client_credentials"}, "claims": {"groups"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "<h1>OAuth client created</h1>") {
		t.Fatalf("create: %d\n%s", r.status, r.body)
	}
	secret := shownSecret(t, r.body)
	clients, err := ws.ListClients(ctx)
	if err != nil || len(clients) != 1 {
		t.Fatalf("clients: %v %v", clients, err)
	}
	c := clients[0]
	want := identity.OAuthClient{ID: c.ID, Name: hostile, RedirectURIs: []string{"https://app.example.com/cb", "https://app.example.com/cb2"},
		PostLogoutRedirectURIs: []string{"https://app.example.com/bye"},
		GrantTypes:             []identity.GrantType{"authorization_code", "refresh_token", "client_credentials"},
		Claims:                 []string{"groups"}, CreatedAt: c.CreatedAt}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("client (-want +got):\n%s", diff)
	}
	if _, err := ws.AuthenticateClient(ctx, c.ID, secret); err != nil {
		t.Errorf("the secret shown does not work: %v", err)
	}

	path := "workspaces/acme/clients/" + c.ID
	r = admin.get(e.url(path))
	for _, s := range []string{"<code>https://app.example.com/cb2</code>", "<code>https://app.example.com/bye</code>",
		"authorization_code, refresh_token, client_credentials", "<dd>groups</dd>", "confidential",
		`href="` + e.base + path + `/delete"`, "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the client's page lacks %q", s)
		}
	}
	for _, p := range []string{"workspaces/acme/clients", path, "workspaces/acme/audit"} {
		if r := admin.get(e.url(p)); r.status != http.StatusOK || strings.Contains(r.body, secret) || strings.Contains(r.body, "<script>alert") {
			t.Errorf("%s: %d, shows the secret or the raw name", p, r.status)
		}
	}
	if r := viewer.get(e.url(path)); r.status != http.StatusOK || strings.Contains(r.body, "/delete") || len(writeForms(r.body)) > 0 {
		t.Errorf("viewer's client page: %d", r.status)
	}
	if r := viewer.post(e.url("workspaces/acme/clients"), url.Values{"redirectUris": {"https://x.example.com/cb"}}); r.status != http.StatusForbidden {
		t.Errorf("viewer registering: %d", r.status)
	}

	// A public client has no secret; none checked is the default grants.
	r = admin.post(e.url("workspaces/acme/clients"), url.Values{"type": {"public"}, "redirectUris": {"http://localhost:8080/cb"}})
	if r.status != http.StatusOK || strings.Contains(r.body, `id="secret"`) || !strings.Contains(r.body, "has no secret") {
		t.Fatalf("public client: %d\n%s", r.status, r.body)
	}
	clients, _ = ws.ListClients(ctx)
	if len(clients) != 2 || !clients[1].Public && !clients[0].Public {
		t.Fatalf("clients: %+v", clients)
	}

	r = admin.get(e.url(path + "/delete"))
	if r.status != http.StatusOK || !strings.Contains(r.body, `action="`+e.base+path+`/delete"`) {
		t.Fatalf("confirmation: %d", r.status)
	}
	r = admin.post(e.url(path+"/delete"), nil)
	if want := e.base + "workspaces/acme/clients?deleted=" + c.ID; r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("delete: %d %q", r.status, r.location())
	}
	if _, err := ws.GetClient(ctx, c.ID); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("the client is still there: %v", err)
	}
	if r := admin.get(e.url("workspaces/acme/clients?deleted=" + c.ID)); !strings.Contains(r.body, "OAuth client "+c.ID+" deleted.") {
		t.Errorf("no notice")
	}
	if r := admin.get(e.url(path)); r.status != http.StatusNotFound {
		t.Errorf("a deleted client's page: %d", r.status)
	}
}

// TestClientsPaging: the API keys are paged by their own parameter,
// and the clients' position is kept in the keys' links.
func TestClientsPaging(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	for range 55 {
		if _, err := ws.CreateAPIKey(t.Context(), "k", []identity.Scope{identity.ScopeUsersRead}); err != nil {
			t.Fatal(err)
		}
	}
	r := admin.get(e.url("workspaces/acme/clients"))
	next := e.base + "workspaces/acme/clients?keys=50"
	if !strings.Contains(r.body, "API keys 1–50 of 55") || !strings.Contains(r.body, `<a href="`+next+`" rel="next">Next API keys</a>`) ||
		strings.Contains(r.body, "Previous API keys") {
		t.Fatalf("first page:\n%s", r.body)
	}
	r = admin.get(e.url("workspaces/acme/clients?clients=0&keys=50"))
	prev := e.base + "workspaces/acme/clients?clients=0&amp;keys=0"
	if !strings.Contains(r.body, "API keys 51–55 of 55") || !strings.Contains(r.body, `<a href="`+prev+`" rel="prev">Previous API keys</a>`) ||
		strings.Contains(r.body, "Next API keys") {
		t.Fatalf("second page:\n%s", r.body)
	}
}
