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

// TestHeaders: every answer, page, error, redirect or static file, carries
// the console's security headers.
func TestHeaders(t *testing.T) {
	e := newEnv(t)
	admin := e.operator("root", console.RoleAdmin)
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self' " +
			e.srv.URL + "; frame-ancestors 'none'; base-uri 'none'",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
		"X-Frame-Options":        "DENY",
	}
	pages := []struct {
		name   string
		b      *browser
		path   string
		status int
	}{
		{"page", admin, "workspaces", http.StatusOK},
		{"not found", admin, "nothing-here", http.StatusNotFound},
		{"signed out", e.browser(), "workspaces", http.StatusSeeOther},
		{"setup link invalid", e.browser(), "setup?token=nope", http.StatusBadRequest},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			r := p.b.get(e.url(p.path))
			if r.status != p.status {
				t.Fatalf("status %d, want %d: %s", r.status, p.status, r.body)
			}
			got := map[string]string{}
			for k := range want {
				got[k] = r.header.Get(k)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
	// Static files may be revalidated, never kept unchecked.
	r := admin.get(e.url("static/console.css"))
	if r.status != http.StatusOK || r.header.Get("Cache-Control") != "no-cache" || r.header.Get("Content-Type") != "text/css; charset=utf-8" {
		t.Errorf("console.css: %d %q %q", r.status, r.header.Get("Cache-Control"), r.header.Get("Content-Type"))
	}
}

// TestSignedOut: a page without a session goes to the sign-in, with the
// page to come back to; an action without one is refused.
func TestSignedOut(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	r := b.get(e.url("workspaces?offset=5"))
	if want := e.base + "login?next=" + url.QueryEscape(e.base+"workspaces?offset=5"); r.status != http.StatusSeeOther || r.location() != want {
		t.Errorf("GET workspaces: %d %q, want 303 %q", r.status, r.location(), want)
	}
	r = b.post(e.url("workspaces"), url.Values{"slug": {"acme"}})
	if r.status != http.StatusForbidden {
		t.Errorf("POST workspaces: %d, want 403", r.status)
	}
	if _, err := e.svc.GetWorkspace(t.Context(), "acme"); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("the workspace was created: %v", err)
	}
	// A session cookie that names no session counts as none.
	base, _ := url.Parse(e.url(""))
	b.c.Jar.SetCookies(base, []*http.Cookie{{Name: "identity_console", Value: "ids_0123456789abcdef_forged", Path: e.base}})
	if r := b.get(e.url("workspaces")); r.status != http.StatusSeeOther {
		t.Errorf("forged cookie: %d, want 303", r.status)
	}
}

// TestNoRole: an operator without a console role is told so on every
// page.
func TestNoRole(t *testing.T) {
	e := newEnv(t)
	b := e.operator("nobody")
	r := b.get(e.url("workspaces"))
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "No console role") {
		t.Errorf("%d %s", r.status, r.body)
	}
}

// TestWorkspacesPage: the list shows the workspaces an operator may
// read; console.admin creates and deletes (with the slug typed); a
// viewer sees no form and a forged POST is refused; a bad slug is shown
// next to its field.
func TestWorkspacesPage(t *testing.T) {
	e := newEnv(t)
	e.workspace("acme")
	e.workspace("zeta")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	scoped := e.operator("acme-admin", console.WorkspaceRole(console.RoleAdmin, "acme"))

	r := admin.get(e.url("workspaces"))
	for _, s := range []string{`<a href="` + e.base + `workspaces/acme/users">acme</a>`, ">zeta<", `>operators</a> <span class="tag">console operators`,
		`action="` + e.base + `workspaces"`, `href="` + e.base + `workspaces/acme/delete"`} {
		if !strings.Contains(r.body, s) {
			t.Errorf("admin's list lacks %q:\n%s", s, r.body)
		}
	}
	if strings.Contains(r.body, `workspaces/operators/delete`) {
		t.Error("the operator workspace has a delete link")
	}
	r = viewer.get(e.url("workspaces"))
	if !strings.Contains(r.body, ">acme<") || strings.Contains(r.body, `method="post" action="`+e.base+`workspaces"`) || strings.Contains(r.body, "/delete") {
		t.Errorf("viewer's list:\n%s", r.body)
	}
	r = scoped.get(e.url("workspaces"))
	if !strings.Contains(r.body, ">acme<") || strings.Contains(r.body, ">zeta<") || strings.Contains(r.body, ">operators") {
		t.Errorf("acme admin's list shows other workspaces:\n%s", r.body)
	}

	// Writes: the viewer and the workspace admin may not create.
	for name, b := range map[string]*browser{"viewer": viewer, "workspace admin": scoped} {
		if r := b.post(e.url("workspaces"), url.Values{"slug": {"forged"}}); r.status != http.StatusForbidden {
			t.Errorf("%s creating: %d, want 403", name, r.status)
		}
	}
	r = admin.post(e.url("workspaces"), url.Values{"slug": {"Not A Slug"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="slug-error"`) || !strings.Contains(r.body, `value="Not A Slug"`) {
		t.Errorf("bad slug: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces"), url.Values{"slug": {"acme"}})
	if r.status != http.StatusConflict {
		t.Errorf("taken slug: %d, want 409", r.status)
	}
	r = admin.post(e.url("workspaces"), url.Values{"slug": {"beta"}})
	if r.status != http.StatusSeeOther || r.location() != e.base+"workspaces?created=beta" {
		t.Fatalf("create: %d %q", r.status, r.location())
	}
	if r := admin.get(e.url("workspaces?created=beta")); !strings.Contains(r.body, "Workspace beta created.") {
		t.Errorf("no notice:\n%s", r.body)
	}
	if r := admin.get(e.url("workspaces?created=nonesuch")); strings.Contains(r.body, "created.") {
		t.Errorf("a link made the page claim a creation:\n%s", r.body)
	}

	// Deleting: typed confirmation; never the operator workspace.
	if r := viewer.post(e.url("workspaces/beta/delete"), url.Values{"confirm": {"beta"}}); r.status != http.StatusForbidden {
		t.Errorf("viewer deleting: %d", r.status)
	}
	if r := admin.get(e.url("workspaces/beta/delete")); r.status != http.StatusOK || !strings.Contains(r.body, `<label for="confirm">`) {
		t.Errorf("confirm page: %d\n%s", r.status, r.body)
	}
	if r := admin.post(e.url("workspaces/beta/delete"), url.Values{"confirm": {"bet"}}); r.status != http.StatusUnprocessableEntity {
		t.Errorf("wrong confirmation: %d", r.status)
	}
	if r := admin.post(e.url("workspaces/operators/delete"), url.Values{"confirm": {"operators"}}); r.status != http.StatusConflict {
		t.Errorf("deleting the operators: %d", r.status)
	}
	r = admin.post(e.url("workspaces/beta/delete"), url.Values{"confirm": {"beta"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if _, err := e.svc.GetWorkspace(t.Context(), "beta"); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("beta still there: %v", err)
	}
	if r := admin.get(e.url("workspaces/beta/delete")); r.status != http.StatusNotFound {
		t.Errorf("confirm page of a deleted workspace: %d", r.status)
	}
}

// TestEscaping: names that an attacker chooses are text on the page,
// never markup.
func TestEscaping(t *testing.T) {
	e := newEnv(t)
	admin := e.operator("root", console.RoleAdmin)
	r := admin.post(e.url("workspaces"), url.Values{"slug": {`<script>alert(1)</script>`}})
	if strings.Contains(r.body, "<script>alert") || !strings.Contains(r.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the slug is not escaped:\n%s", r.body)
	}
}

// TestOperatorReadEachRequest: the session, the user and the roles are
// read on every request: a role removed, a user disabled or a session
// revoked elsewhere takes effect at the next click.
func TestOperatorReadEachRequest(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	other := e.operator("third", console.RoleAdmin)
	if r := admin.get(e.url("workspaces")); r.status != http.StatusOK {
		t.Fatalf("%d", r.status)
	}
	find := func(name string) identity.User {
		l, err := e.ops.ListUsers(ctx, name, nil)
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("%s: %v", name, err)
		}
		return l.Items[0]
	}
	role, err := e.ops.GetRoleByName(ctx, console.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ops.RemoveRole(ctx, find("root").ID, role.ID); err != nil {
		t.Fatal(err)
	}
	if r := admin.get(e.url("workspaces")); r.status != http.StatusForbidden || titleOf(r.body) != "No console role" {
		t.Errorf("role removed: %d %s", r.status, titleOf(r.body))
	}
	if err := e.ops.DisableUser(ctx, find("watcher").ID); err != nil {
		t.Fatal(err)
	}
	if r := viewer.get(e.url("workspaces")); r.status != http.StatusSeeOther {
		t.Errorf("user disabled: %d", r.status)
	}
	sessions, err := e.ops.ListSessions(ctx, find("third").ID, nil)
	if err != nil || len(sessions.Items) != 1 {
		t.Fatal(sessions, err)
	}
	if err := e.ops.RevokeSession(ctx, sessions.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	if r := other.get(e.url("workspaces")); r.status != http.StatusSeeOther {
		t.Errorf("session revoked: %d", r.status)
	}
}

// TestBodyLimit: a form over MaxFormBytes is refused before anything
// reads it.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	admin := e.operator("root", console.RoleAdmin)
	r := admin.post(e.url("workspaces"), url.Values{"slug": {"big"}, "pad": {strings.Repeat("x", console.MaxFormBytes)}})
	if r.status != http.StatusBadRequest {
		t.Errorf("%d, want 400", r.status)
	}
	if _, err := e.svc.GetWorkspace(t.Context(), "big"); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("created: %v", err)
	}
}
