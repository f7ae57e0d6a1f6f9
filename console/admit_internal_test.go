package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestAdmit: the router's access rules for every access level, role and
// method, through probe routes that answer 200 when they run: a page of
// a workspace (inWorkspace) for a reader of it, its actions for a writer;
// the service's pages (service) for console.admin and, reading,
// console.viewer; anyOperator for any console role; public for anyone.
func TestAdmit(t *testing.T) {
	h, err := newTestHandler(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := h.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	ops, err := h.operatorWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []access{public, anyOperator, service, inWorkspace} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			rt := route{method: m, path: fmt.Sprintf("probe%d/{slug}", a), access: a,
				serve: func(_ *Handler, rq *request) error { rq.w.WriteHeader(http.StatusOK); return nil }}
			h.mux.Handle(m+" "+h.base+rt.path, h.wrap(rt))
		}
	}
	session := func(name string, roles ...string) string {
		u, err := ops.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: name, Password: "a good password"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range roles {
			role, err := ensureRole(ctx, ops, r)
			if err != nil {
				t.Fatal(err)
			}
			if err := ops.AssignRole(ctx, u.ID, role.ID); err != nil {
				t.Fatal(err)
			}
		}
		s, err := ops.CreateSession(ctx, u.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.Secret
	}
	operators := map[string]string{
		"nobody":      "",
		"no role":     session("norole"),
		"admin":       session("admin", RoleAdmin),
		"viewer":      session("viewer", RoleViewer),
		"acme admin":  session("acmeadmin", WorkspaceRole(RoleAdmin, "acme")),
		"acme viewer": session("acmeviewer", WorkspaceRole(RoleViewer, "acme")),
	}
	statuses := func(token string) string {
		var out []string
		for _, a := range []access{public, anyOperator, service, inWorkspace} {
			for _, slug := range []string{"acme", "other", "operators"} {
				for _, m := range []string{http.MethodGet, http.MethodPost} {
					form := url.Values{"csrf": {csrfOf(token)}}
					req := httptest.NewRequest(m, fmt.Sprintf("https://id.example.com%sprobe%d/%s", h.base, a, slug), strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("Sec-Fetch-Site", "same-origin")
					if token != "" {
						req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					out = append(out, fmt.Sprint(rec.Code))
				}
			}
		}
		return strings.Join(out, " ")
	}
	got := map[string]string{}
	for name, token := range operators {
		got[name] = statuses(token)
	}
	// Per access level (public, anyOperator, service, inWorkspace), per
	// slug (acme, other, operators), GET then POST.
	want := map[string]string{
		"nobody":      "200 200 200 200 200 200 303 403 303 403 303 403 303 403 303 403 303 403 303 403 303 403 303 403",
		"no role":     "200 200 200 200 200 200 403 403 403 403 403 403 403 403 403 403 403 403 403 403 403 403 403 403",
		"admin":       "200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200 200",
		"viewer":      "200 200 200 200 200 200 200 200 200 200 200 200 200 403 200 403 200 403 200 403 200 403 200 403",
		"acme admin":  "200 200 200 200 200 200 200 200 200 200 200 200 403 403 403 403 403 403 200 200 403 403 403 403",
		"acme viewer": "200 200 200 200 200 200 200 200 200 200 200 200 403 403 403 403 403 403 200 403 403 403 403 403",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
