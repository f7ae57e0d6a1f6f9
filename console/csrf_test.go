package console_test

import (
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/identitylib/identity/console"
)

// csrfRows are every POST route of the console with a form that would
// succeed: the test sends it without the CSRF token, with a wrong one and
// from another origin, and each must be refused with nothing changed. A
// new POST route fails TestCSRFEveryRoute until it has a row here.
var csrfRows = map[string]struct {
	// path is the route's path with its wildcards filled in.
	path string
	form url.Values
}{
	"logout":                   {"logout", nil},
	"setup":                    {"setup", url.Values{"token": {"idas_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, "password": {"long enough password"}, "password2": {"long enough password"}}},
	"workspaces":               {"workspaces", url.Values{"slug": {"forged"}}},
	"workspaces/{slug}/delete": {"workspaces/acme/delete", url.Values{"confirm": {"acme"}}},
}

// TestCSRFEveryRoute: every POST route is refused without the session's
// CSRF token (public routes: from another origin), and the route table
// has no POST route without a row in csrfRows.
func TestCSRFEveryRoute(t *testing.T) {
	e := newEnv(t)
	e.workspace("acme")
	maps.Copy(csrfRows, usersCSRFRows)
	posts := map[string]bool{}
	for _, rt := range console.Routes() {
		if rt.Method != http.MethodPost {
			continue
		}
		posts[rt.Path] = true
		row, ok := csrfRows[rt.Path]
		if !ok {
			t.Errorf("POST %s has no row in csrfRows", rt.Path)
			continue
		}
		t.Run(rt.Path, func(t *testing.T) {
			admin := e.operator("op-"+strings.NewReplacer("/", "-", "{", "", "}", "").Replace(rt.Path), console.RoleAdmin)
			tries := map[string]func() reply{
				"cross-origin": func() reply {
					form := url.Values{"csrf": {admin.csrf}}
					for k, v := range row.form {
						form[k] = v
					}
					req, _ := http.NewRequest(http.MethodPost, e.url(row.path), strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("Sec-Fetch-Site", "cross-site")
					return admin.do(req)
				},
			}
			if !rt.Public {
				tries["no token"] = func() reply {
					form := url.Values{"csrf": {""}}
					for k, v := range row.form {
						form[k] = v
					}
					return admin.post(e.url(row.path), form)
				}
				tries["another session's token"] = func() reply {
					other := e.operator("other-"+strings.ReplaceAll(row.path, "/", "-"), console.RoleAdmin)
					form := url.Values{"csrf": {other.csrf}}
					for k, v := range row.form {
						form[k] = v
					}
					return admin.post(e.url(row.path), form)
				}
			}
			for name, try := range tries {
				if r := try(); r.status != http.StatusForbidden || !strings.Contains(r.body, "Request refused") {
					t.Errorf("%s: %d, want 403 Request refused", name, r.status)
				}
			}
			// Nothing changed: the workspace is there, no "forged" one, and
			// the session still works.
			if _, err := e.svc.GetWorkspace(t.Context(), "acme"); err != nil {
				t.Errorf("acme: %v", err)
			}
			if _, err := e.svc.GetWorkspace(t.Context(), "forged"); err == nil {
				t.Error("a forged request created a workspace")
			}
			if r := admin.get(e.url("workspaces")); r.status != http.StatusOK {
				t.Errorf("the session ended: %d", r.status)
			}
		})
	}
	for path := range csrfRows {
		if !posts[path] {
			t.Errorf("csrfRows has %s, which is no POST route", path)
		}
	}
}
