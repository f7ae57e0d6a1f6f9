package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// importUsers creates n users named prefix + a four-digit number from 0,
// in batches of the library's bulk import; edit, when set, changes the
// i-th before it is imported.
func (e *env) importUsers(ws *identity.Workspace, prefix string, n int, edit func(i int, u *identity.ImportedUser)) []identity.User {
	e.t.Helper()
	var out []identity.User
	for start := 0; start < n; start += identity.MaxImportBatch {
		var batch []identity.ImportedUser
		for i := start; i < min(start+identity.MaxImportBatch, n); i++ {
			name := fmt.Sprintf("%s%04d", prefix, i)
			u := identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "User " + name}
			if edit != nil {
				edit(i, &u)
			}
			batch = append(batch, u)
		}
		users, err := ws.ImportUsers(e.t.Context(), batch)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, users...)
	}
	return out
}

var userRowName = regexp.MustCompile(`<th scope="row"><a href="[^"]*/users/\d+">([^<]+)</a></th>`)

// listed returns the usernames of a users page's rows.
func listed(body string) []string {
	var out []string
	for _, m := range userRowName.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

var nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

// next returns the URL of a page's next page, or "".
func (e *env) next(body string) string {
	m := nextLink.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return e.srv.URL + html.UnescapeString(m[1])
}

func names(prefix string, nums ...int) []string {
	var out []string
	for _, n := range nums {
		out = append(out, fmt.Sprintf("%s%04d", prefix, n))
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// The users page: the prefix search with its total and pages that keep
// the search, the state filters' scan with its "more" while users are
// left to examine, and the attribute filter.
func TestUsersList(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	e.importUsers(ws, "u", 1200, func(i int, u *identity.ImportedUser) {
		u.Disabled = i%100 == 7
		u.EmailVerified = i%2 == 0
		if i%300 == 0 {
			u.Attributes = map[string]string{"team": "blue"}
		}
	})
	admin := e.operator("root", console.RoleAdmin)
	tests := []struct {
		name    string
		query   string
		heading string
		want    []string
		// next is the heading of the next page, "" when there is none.
		next     string
		nextWant []string
	}{
		{"search", "q=u00", "Users 1–50 of 100", names("u", seq(0, 50)...), "Users 51–100 of 100", names("u", seq(50, 100)...)},
		{"search ignores case", "q=U119", "Users 1–10 of 10", names("u", seq(1190, 1200)...), "", nil},
		{"no match", "q=nobody", "No users match (0)", nil, "", nil},
		{"disabled, scanned by 1000", "disabled=1", "Users 1–1000 of 1200 examined: 10 match",
			names("u", 7, 107, 207, 307, 407, 507, 607, 707, 807, 907), "Users 1001–1200 of 1200 examined: 2 match", names("u", 1007, 1107)},
		{"disabled and unverified in a search", "q=u11&disabled=1&unverified=1", "Users 1–100 of 100 examined: 1 match", names("u", 1107), "", nil},
		{"attribute", "key=team&value=blue", "Users 1–4 of 4", names("u", 0, 300, 600, 900), "", nil},
		{"attribute, exact value", "key=team&value=Blue", "No users match (0)", nil, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := admin.get(e.url("workspaces/acme/users?" + tc.query))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if !strings.Contains(r.body, "<h2 id=\"results-heading\">"+tc.heading+"</h2>") {
				t.Errorf("no heading %q", tc.heading)
			}
			if diff := cmp.Diff(tc.want, listed(r.body)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			next := e.next(r.body)
			if (next != "") != (tc.next != "") {
				t.Fatalf("next page link %q, want one: %v", next, tc.next != "")
			}
			if next == "" {
				return
			}
			r = admin.get(next)
			if !strings.Contains(r.body, "<h2 id=\"results-heading\">"+tc.next+"</h2>") {
				t.Errorf("next page: no heading %q in %s", tc.next, next)
			}
			if diff := cmp.Diff(tc.nextWant, listed(r.body)); diff != "" {
				t.Errorf("next page rows (-want +got):\n%s", diff)
			}
			if e.next(r.body) != "" {
				t.Errorf("the next page links to another")
			}
		})
	}
	// An invalid attribute filter is shown next to its field.
	r := admin.get(e.url("workspaces/acme/users?key=" + strings.Repeat("k", 65) + "&value=x"))
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="key-error"`) {
		t.Errorf("a key too long: %d, want 422 with the key's error", r.status)
	}
}

// userPage returns the user page's URL.
func (e *env) userPage(slug string, id int64, rest string) string {
	return e.url("workspaces/" + slug + "/users/" + strconv.FormatInt(id, 10) + rest)
}

// Each action of the user page changes what it says, redirects to the
// page, and the page's notice says so only because it is true.
func TestUserActions(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	ws := e.workspace("acme")
	ada, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	role, err := ws.CreateRole(ctx, identity.NewRole{Name: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	group, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "staff"})
	if err != nil {
		t.Fatal(err)
	}
	groupRole, err := ws.CreateRole(ctx, identity.NewRole{Name: "reader"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.AssignGroupRole(ctx, group.ID, groupRole.ID); err != nil {
		t.Fatal(err)
	}
	s1, err := ws.CreateSession(ctx, ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateSession(ctx, ada.ID, nil); err != nil {
		t.Fatal(err)
	}
	admin := e.operator("root", console.RoleAdmin)
	page := e.userPage("acme", ada.ID, "")
	steps := []struct {
		name   string
		path   string
		form   url.Values
		notice string
		check  func() error
	}{
		{"disable", "/disable", nil, "User disabled: their sessions and tokens are revoked.", func() error {
			if u, _ := ws.GetUser(ctx, ada.ID); u.Enabled {
				return fmt.Errorf("still enabled")
			}
			return nil
		}},
		{"enable", "/enable", nil, "User enabled.", func() error {
			if u, _ := ws.GetUser(ctx, ada.ID); !u.Enabled {
				return fmt.Errorf("still disabled")
			}
			return nil
		}},
		{"verify email", "/email-verified", url.Values{"verified": {"true"}}, "Email marked verified.", func() error {
			if u, _ := ws.GetUser(ctx, ada.ID); !u.EmailVerified {
				return fmt.Errorf("not verified")
			}
			return nil
		}},
		{"profile", "", url.Values{"email": {"ada@example.org"}, "fullName": {"Augusta Ada King"}}, "Profile saved.", func() error {
			if u, _ := ws.GetUser(ctx, ada.ID); u.Email != "ada@example.org" || u.FullName != "Augusta Ada King" || u.EmailVerified {
				return fmt.Errorf("user %+v", u)
			}
			return nil
		}},
		{"set attribute", "/attributes", url.Values{"key": {"team"}, "value": {"blue"}}, "Attribute team saved.", func() error {
			if a, _ := ws.ListAttributes(ctx, ada.ID); a["team"] != "blue" {
				return fmt.Errorf("attributes %v", a)
			}
			return nil
		}},
		{"delete attribute", "/attributes/delete", url.Values{"key": {"team"}}, "Attribute team deleted.", func() error {
			if a, _ := ws.ListAttributes(ctx, ada.ID); len(a) != 0 {
				return fmt.Errorf("attributes %v", a)
			}
			return nil
		}},
		{"assign role", "/roles", url.Values{"role": {"billing"}}, "Role billing assigned.", func() error {
			return hasRoles(ctx, ws, ada.ID, "billing direct")
		}},
		{"add to group", "/groups", url.Values{"group": {strconv.FormatInt(group.ID, 10)}}, "Added to group staff.", func() error {
			return hasRoles(ctx, ws, ada.ID, "billing direct", "reader staff")
		}},
		{"remove role", "/roles/" + strconv.FormatInt(role.ID, 10) + "/remove", nil, "Role billing is no longer assigned directly.", func() error {
			return hasRoles(ctx, ws, ada.ID, "reader staff")
		}},
		{"remove from group", "/groups/" + strconv.FormatInt(group.ID, 10) + "/remove", nil, "Removed from group staff.", func() error {
			return hasRoles(ctx, ws, ada.ID)
		}},
		{"revoke one session", "/sessions/" + s1.Session.ID + "/revoke", nil, "Session revoked.", func() error {
			if s, _ := ws.GetSession(ctx, s1.Session.ID); s.RevokedAt == nil {
				return fmt.Errorf("session not revoked")
			}
			return nil
		}},
		{"revoke every session", "/sessions/revoke", nil, "Every session of the user is revoked.", func() error {
			list, _ := ws.ListSessions(ctx, ada.ID, nil)
			for _, s := range list.Items {
				if s.RevokedAt == nil {
					return fmt.Errorf("session %s not revoked", s.ID)
				}
			}
			return nil
		}},
	}
	for _, s := range steps {
		r := admin.post(page+s.path, s.form)
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), e.base+"workspaces/acme/users/"+strconv.FormatInt(ada.ID, 10)+"?done=") {
			t.Fatalf("%s: %d %q: %s", s.name, r.status, r.location(), r.body)
		}
		if err := s.check(); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
		r = admin.get(e.srv.URL + r.location())
		if !strings.Contains(r.body, `<div class="message notice" role="status" tabindex="-1" autofocus><p>`+html.EscapeString(s.notice)+`</p>`) {
			t.Errorf("%s: no notice %q", s.name, s.notice)
		}
	}
	// A notice that is not true is not shown.
	for _, q := range []string{"?done=disabled", "?done=verified&x=1", "?done=role&role=" + strconv.FormatInt(role.ID, 10), "?done=saved&version=1"} {
		u, _ := ws.GetUser(ctx, ada.ID)
		if q == "?done=verified&x=1" && u.EmailVerified {
			t.Fatal("the test expects ada's new email unverified")
		}
		if r := admin.get(page + q); strings.Contains(r.body, `class="message notice"`) {
			t.Errorf("%s: a notice is shown", q)
		}
	}
}

// hasRoles checks the user's effective roles as "name source", the
// source "direct" or the groups.
func hasRoles(ctx context.Context, ws *identity.Workspace, id int64, want ...string) error {
	roles, err := ws.ListUserRoles(ctx, id)
	if err != nil {
		return err
	}
	var got []string
	for _, r := range roles {
		src := []string{}
		if r.Direct {
			src = append(src, "direct")
		}
		for _, g := range r.Groups {
			src = append(src, g.Name)
		}
		got = append(got, r.Name+" "+strings.Join(src, ","))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("roles (-want +got):\n%s", diff)
	}
	return nil
}
