package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

func init() {
	rows := map[string]struct {
		path string
		form url.Values
	}{
		"workspaces/{slug}/roles":                             {"workspaces/acme/roles", url.Values{"name": {"forged"}}},
		"workspaces/{slug}/roles/{id}":                        {"workspaces/acme/roles/1", url.Values{"name": {"forged"}}},
		"workspaces/{slug}/roles/{id}/delete":                 {"workspaces/acme/roles/1/delete", nil},
		"workspaces/{slug}/groups":                            {"workspaces/acme/groups", url.Values{"name": {"forged"}}},
		"workspaces/{slug}/groups/{id}":                       {"workspaces/acme/groups/1", url.Values{"name": {"forged"}}},
		"workspaces/{slug}/groups/{id}/delete":                {"workspaces/acme/groups/1/delete", nil},
		"workspaces/{slug}/groups/{id}/members":               {"workspaces/acme/groups/1/members", url.Values{"user": {"1"}}},
		"workspaces/{slug}/groups/{id}/members/{user}/remove": {"workspaces/acme/groups/1/members/1/remove", nil},
		"workspaces/{slug}/groups/{id}/roles":                 {"workspaces/acme/groups/1/roles", url.Values{"role": {"admin"}}},
		"workspaces/{slug}/groups/{id}/roles/{role}/remove":   {"workspaces/acme/groups/1/roles/1/remove", nil},
	}
	for k, v := range rows {
		csrfRows[k] = v
	}
}

// user creates a user of ws.
func (e *env) user(ws *identity.Workspace, username string) identity.User {
	e.t.Helper()
	u, err := ws.CreateUser(e.t.Context(), identity.NewUser{Username: username, Email: username + "@example.com",
		FullName: "User " + username, Password: "correct horse battery"})
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// TestRolesPages: the list, searched and paged with the search kept;
// create, rename and delete with the library's errors next to their
// inputs; a role's holders, direct and through a group.
func TestRolesPages(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	ctx := t.Context()
	admin := e.operator("root", console.RoleAdmin)

	r := admin.post(e.url("workspaces/acme/roles"), url.Values{"name": {"admin"}, "description": {"Does <b>everything</b>"}})
	if r.status != http.StatusSeeOther || r.location() != e.base+"workspaces/acme/roles/1" {
		t.Fatalf("create: %d %q\n%s", r.status, r.location(), r.body)
	}
	r = admin.post(e.url("workspaces/acme/roles"), url.Values{"name": {"Not A Name"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="name-error"`) || !strings.Contains(r.body, `value="Not A Name"`) {
		t.Errorf("bad name: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/roles"), url.Values{"name": {"admin"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, `id="name-error"`) {
		t.Errorf("taken name: %d\n%s", r.status, r.body)
	}
	for i := range 52 {
		if _, err := ws.CreateRole(ctx, identity.NewRole{Name: fmt.Sprintf("r-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	r = admin.get(e.url("workspaces/acme/roles"))
	if !strings.Contains(r.body, "Roles 1–50 of 53") || !strings.Contains(r.body, `Does &lt;b&gt;everything&lt;/b&gt;`) ||
		!strings.Contains(r.body, `href="`+e.base+`workspaces/acme/roles?offset=50" rel="next"`) {
		t.Errorf("list:\n%s", r.body)
	}
	r = admin.get(e.url("workspaces/acme/roles?q=r-"))
	if !strings.Contains(r.body, "Roles whose name starts with “r-”: 1–50 of 52") ||
		!strings.Contains(r.body, `href="`+e.base+`workspaces/acme/roles?offset=50&amp;q=r-" rel="next"`) || strings.Contains(r.body, ">admin<") {
		t.Errorf("search:\n%s", r.body)
	}
	r = admin.get(e.url("workspaces/acme/roles?q=r-&offset=50"))
	if !strings.Contains(r.body, "51–52 of 52") || !strings.Contains(r.body, `href="`+e.base+`workspaces/acme/roles?q=r-" rel="prev"`) {
		t.Errorf("second page:\n%s", r.body)
	}
	if r := admin.get(e.url("workspaces/acme/roles?q=zz")); !strings.Contains(r.body, "No role has a name that starts with “zz”.") {
		t.Errorf("no match:\n%s", r.body)
	}

	// Holders: directly and through a group.
	alice, bob := e.user(ws, "alice"), e.user(ws, "bob")
	g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.AssignRole(ctx, alice.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := ws.AddGroupMember(ctx, g.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if err := ws.AssignGroupRole(ctx, g.ID, 1); err != nil {
		t.Fatal(err)
	}
	r = admin.get(e.url("workspaces/acme/roles/1"))
	if r.status != http.StatusOK || !strings.Contains(r.body, "Holders 1–2 of 2") || !strings.Contains(r.body, "alice") || !strings.Contains(r.body, "bob") {
		t.Errorf("role page: %d\n%s", r.status, r.body)
	}

	// Renaming.
	r = admin.post(e.url("workspaces/acme/roles/1"), url.Values{"name": {"r-01"}, "description": {"typed"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, `id="name-error"`) || !strings.Contains(r.body, `value="r-01"`) || !strings.Contains(r.body, `value="typed"`) {
		t.Errorf("rename to a taken name: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/roles/1"), url.Values{"name": {"owner"}, "description": {"Owns it"}})
	if r.status != http.StatusSeeOther || r.location() != e.base+"workspaces/acme/roles/1?saved=1" {
		t.Fatalf("rename: %d %q", r.status, r.location())
	}
	got, err := ws.GetRole(ctx, 1)
	if err != nil || got.Name != "owner" || got.Description != "Owns it" {
		t.Errorf("renamed role: %+v %v", got, err)
	}
	for _, p := range []string{"workspaces/acme/roles/999", "workspaces/acme/roles/x", "workspaces/acme/roles/-1"} {
		if r := admin.get(e.url(p)); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}

	// Deleting: a confirmation page, then the list with a true notice.
	if r := admin.get(e.url("workspaces/acme/roles/1/delete")); r.status != http.StatusOK || !strings.Contains(r.body, "Delete role owner") {
		t.Errorf("confirm: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/roles/1/delete"), nil)
	if r.status != http.StatusSeeOther || r.location() != e.base+"workspaces/acme/roles?deleted=owner" {
		t.Fatalf("delete: %d %q", r.status, r.location())
	}
	if r := admin.get(e.url("workspaces/acme/roles?deleted=owner")); !strings.Contains(r.body, "The role owner is deleted.") {
		t.Errorf("no notice:\n%s", r.body)
	}
	if r := admin.get(e.url("workspaces/acme/roles?deleted=r-01")); strings.Contains(r.body, "is deleted") {
		t.Error("a link made the page claim a deletion")
	}
	if roles, err := ws.ListGroupRoles(ctx, g.ID); err != nil || len(roles) != 0 {
		t.Errorf("the group still carries %v (%v)", roles, err)
	}
}

// TestGroupPage: members found by a search and added, removed; roles
// given by name and removed; a limit and an unknown role shown inline.
func TestGroupPage(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	ctx := t.Context()
	admin := e.operator("root", console.RoleAdmin)
	alice := e.user(ws, "alice")
	if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "albert", Email: "albert@example.com",
		FullName: `<script>alert("albert")</script>`, Password: "correct horse battery"}); err != nil {
		t.Fatal(err)
	}
	e.user(ws, "bob")
	if _, err := ws.CreateRole(ctx, identity.NewRole{Name: "deploy"}); err != nil {
		t.Fatal(err)
	}
	r := admin.post(e.url("workspaces/acme/groups"), url.Values{"name": {"eng"}, "description": {"Engineers"}})
	if r.status != http.StatusSeeOther || r.location() != e.base+"workspaces/acme/groups/1" {
		t.Fatalf("create: %d %q\n%s", r.status, r.location(), r.body)
	}
	r = admin.get(e.url("workspaces/acme/groups/1?member=al"))
	for _, s := range []string{"The group has no members.", "2 of 2", `<input type="hidden" name="user" value="` + fmt.Sprint(alice.ID) + `">`, ">albert<"} {
		if !strings.Contains(r.body, s) {
			t.Errorf("search lacks %q:\n%s", s, r.body)
		}
	}
	if strings.Contains(r.body, ">bob<") {
		t.Error("the search found bob")
	}
	if strings.Contains(r.body, "<script>alert") || !strings.Contains(r.body, `<td>&lt;script&gt;alert(&#34;albert&#34;)&lt;/script&gt;</td>`) {
		t.Errorf("a user's name is not escaped:\n%s", r.body)
	}
	r = admin.post(e.url("workspaces/acme/groups/1/members"), url.Values{"user": {fmt.Sprint(alice.ID)}})
	if want := e.base + "workspaces/acme/groups/1?added=" + fmt.Sprint(alice.ID); r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("add: %d %q", r.status, r.location())
	}
	r = admin.get(e.url("workspaces/acme/groups/1?added=" + fmt.Sprint(alice.ID)))
	if !strings.Contains(r.body, "alice is a member of eng.") || !strings.Contains(r.body, "Members 1–1 of 1") {
		t.Errorf("after adding:\n%s", r.body)
	}
	if r := admin.get(e.url("workspaces/acme/groups/1?removed=" + fmt.Sprint(alice.ID))); strings.Contains(r.body, "is not a member") {
		t.Error("a link made the page claim a removal")
	}

	// Roles.
	r = admin.post(e.url("workspaces/acme/groups/1/roles"), url.Values{"role": {"nonesuch"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="role-error">no role of this workspace has this name<`) || !strings.Contains(r.body, `value="nonesuch"`) {
		t.Errorf("unknown role: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/groups/1/roles"), url.Values{"role": {"deploy"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("give role: %d\n%s", r.status, r.body)
	}
	roles, err := ws.ListUserRoles(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 1 || roles[0].Name != "deploy" {
		t.Errorf("alice's roles: %+v", roles)
	}
	if r := admin.get(e.url("workspaces/acme/groups/1")); !strings.Contains(r.body, `roles/1">deploy</a>`) {
		t.Errorf("the role is not listed:\n%s", r.body)
	}
	if r := admin.post(e.url("workspaces/acme/groups/1/roles/1/remove"), nil); r.status != http.StatusSeeOther {
		t.Errorf("remove role: %d", r.status)
	}
	if roles, _ := ws.ListGroupRoles(ctx, 1); len(roles) != 0 {
		t.Errorf("the group still carries %+v", roles)
	}

	// A limit: alice may be in one group only.
	s, err := ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Limits.GroupsPerUser = 1
	if err := ws.UpdateSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "ops"}); err != nil {
		t.Fatal(err)
	}
	r = admin.post(e.url("workspaces/acme/groups/2/members"), url.Values{"user": {fmt.Sprint(alice.ID)}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `class="message error"`) || !strings.Contains(r.body, "Group ops") {
		t.Errorf("past the limit: %d\n%s", r.status, r.body)
	}

	// Removing the member.
	r = admin.post(e.url("workspaces/acme/groups/1/members/"+fmt.Sprint(alice.ID)+"/remove"), nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", r.status)
	}
	if r := admin.get(e.url("workspaces/acme/groups/1?removed=" + fmt.Sprint(alice.ID))); !strings.Contains(r.body, "alice is not a member of eng.") {
		t.Errorf("after removing:\n%s", r.body)
	}
	members, err := ws.ListGroupMembers(ctx, 1, nil)
	if err != nil || members.Total != 0 {
		t.Errorf("members: %+v %v", members, err)
	}
	if r := admin.post(e.url("workspaces/acme/groups/1/members"), url.Values{"user": {"abc"}}); r.status != http.StatusBadRequest {
		t.Errorf("a user that is no id: %d", r.status)
	}
	if r := admin.post(e.url("workspaces/acme/groups/1/members"), url.Values{"user": {"999"}}); r.status != http.StatusNotFound {
		t.Errorf("an unknown user: %d", r.status)
	}
	// Deleting.
	if r := admin.post(e.url("workspaces/acme/groups/1/delete"), nil); r.status != http.StatusSeeOther || r.location() != e.base+"workspaces/acme/groups?deleted=eng" {
		t.Errorf("delete: %d %q", r.status, r.location())
	}
	if _, err := ws.GetGroup(ctx, 1); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("group after delete: %v", err)
	}
}

// TestRolesViewer: a viewer reads roles and groups with no form that
// writes, and a write is refused.
func TestRolesViewer(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	ctx := t.Context()
	if _, err := ws.CreateRole(ctx, identity.NewRole{Name: "admin"}); err != nil {
		t.Fatal(err)
	}
	g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	u := e.user(ws, "alice")
	if err := ws.AddGroupMember(ctx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if err := ws.AssignGroupRole(ctx, g.ID, 1); err != nil {
		t.Fatal(err)
	}
	viewer := e.operator("watcher", console.WorkspaceRole(console.RoleViewer, "acme"))
	for _, p := range []string{"workspaces/acme/roles", "workspaces/acme/roles/1", "workspaces/acme/groups", "workspaces/acme/groups/1?member=al"} {
		r := viewer.get(e.url(p))
		if r.status != http.StatusOK {
			t.Errorf("%s: %d", p, r.status)
			continue
		}
		if n := strings.Count(r.body, `method="post"`); n != 1 {
			t.Errorf("%s has %d POST forms, want the sign-out's alone", p, n)
		}
		if strings.Contains(r.body, "Delete") || strings.Contains(r.body, "Create") || strings.Contains(r.body, "Save") ||
			strings.Contains(r.body, "Remove") || strings.Contains(r.body, "Add") || strings.Contains(r.body, "Give role") {
			t.Errorf("%s has a write control:\n%s", p, r.body)
		}
	}
	for p, form := range map[string]url.Values{
		"workspaces/acme/roles":                   {"name": {"x"}},
		"workspaces/acme/groups/1/members":        {"user": {"1"}},
		"workspaces/acme/groups/1/roles/1/remove": nil,
		"workspaces/acme/roles/1/delete":          nil,
	} {
		if r := viewer.post(e.url(p), form); r.status != http.StatusForbidden {
			t.Errorf("viewer POST %s: %d", p, r.status)
		}
	}
	if roles, _ := ws.ListGroupRoles(ctx, g.ID); len(roles) != 1 {
		t.Errorf("group roles: %+v", roles)
	}
}

// TestGroupsAudited: adding a member in the console is in the trail with
// the operator as its actor.
func TestGroupsAudited(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	u := e.user(ws, "alice")
	if r := admin.post(e.url("workspaces/acme/groups"), url.Values{"name": {"eng"}}); r.status != http.StatusSeeOther {
		t.Fatalf("create: %d", r.status)
	}
	if r := admin.post(e.url("workspaces/acme/groups/1/members"), url.Values{"user": {fmt.Sprint(u.ID)}}); r.status != http.StatusSeeOther {
		t.Fatalf("add: %d", r.status)
	}
	page, err := ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: "group."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range page.Records {
		got = append(got, string(rec.Action)+" by "+string(rec.Actor.Kind)+" "+rec.Actor.Display)
	}
	slices.Sort(got) // written at one instant of the fake clock
	want := []string{"group.created by operator root", "group.member.added by operator root"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the trail (-want +got):\n%s", diff)
	}
}
