package identitytest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
)

// Roles and groups: their records, memberships, what a user holds and
// from where, the cascades of deletion, and the limits under concurrency.

// namedAPI is what the rules of roles' and groups' records call, for one
// kind: the same rules hold for both.
type namedAPI struct {
	kind   string
	create func(e *env, name, description string) (int64, error)
	get    func(e *env, id int64) (string, error)
	byName func(e *env, name string) (int64, error)
	update func(e *env, id int64, name, description string, pre *identity.Precondition) (int64, error)
	delete func(e *env, id int64) error
	list   func(e *env, search string, page *identity.Page) ([]string, int, error)
}

var namedAPIs = []namedAPI{
	{
		kind: "role",
		create: func(e *env, name, description string) (int64, error) {
			r, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: name, Description: description})
			return r.ID, err
		},
		get: func(e *env, id int64) (string, error) { r, err := e.ws.GetRole(e.ctx, id); return r.Name, err },
		byName: func(e *env, name string) (int64, error) {
			r, err := e.ws.GetRoleByName(e.ctx, name)
			return r.ID, err
		},
		update: func(e *env, id int64, name, description string, pre *identity.Precondition) (int64, error) {
			r, err := e.ws.UpdateRole(e.ctx, id, identity.RoleUpdate{Name: name, Description: description, Precondition: pre})
			return r.Version, err
		},
		delete: func(e *env, id int64) error { return e.ws.DeleteRole(e.ctx, id) },
		list: func(e *env, search string, page *identity.Page) ([]string, int, error) {
			l, err := e.ws.ListRoles(e.ctx, search, page)
			var names []string
			for _, r := range l.Items {
				names = append(names, r.Name)
			}
			return names, l.Total, err
		},
	},
	{
		kind: "group",
		create: func(e *env, name, description string) (int64, error) {
			g, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: name, Description: description})
			return g.ID, err
		},
		get: func(e *env, id int64) (string, error) { g, err := e.ws.GetGroup(e.ctx, id); return g.Name, err },
		byName: func(e *env, name string) (int64, error) {
			g, err := e.ws.GetGroupByName(e.ctx, name)
			return g.ID, err
		},
		update: func(e *env, id int64, name, description string, pre *identity.Precondition) (int64, error) {
			g, err := e.ws.UpdateGroup(e.ctx, id, identity.GroupUpdate{Name: name, Description: description, Precondition: pre})
			return g.Version, err
		},
		delete: func(e *env, id int64) error { return e.ws.DeleteGroup(e.ctx, id) },
		list: func(e *env, search string, page *identity.Page) ([]string, int, error) {
			l, err := e.ws.ListGroups(e.ctx, search, page)
			var names []string
			for _, g := range l.Items {
				names = append(names, g.Name)
			}
			return names, l.Total, err
		},
	},
}

// testRuleNamedRecords checks the rules roles and groups share: names and
// descriptions on both sides of their bounds, uniqueness, renames, pages,
// ids never reused, and the created, updated and deleted events.
func testRuleNamedRecords(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventTypes()...)
	for _, api := range namedAPIs {
		// Names: 1-64 characters of [a-z0-9._:-]; descriptions: at most
		// 1024 characters, line breaks and tabs allowed.
		for _, c := range []struct {
			name, description string
			field, rule       string
		}{
			{"a", "", "", ""},
			{strings.Repeat("n", 64), strings.Repeat("d", 1024), "", ""},
			{"billing.read:v2_x-y", "line one\n\tline two", "", ""},
			{strings.Repeat("n", 65), "", "name", identity.RuleMaxLength},
			{"", "", "name", identity.RuleRequired},
			{"Admin", "", "name", identity.RulePattern},
			{"a b", "", "name", identity.RulePattern},
			{"a/b", "", "name", identity.RulePattern},
			{"é", "", "name", identity.RulePattern},
			{"ok", strings.Repeat("d", 1025), "description", identity.RuleMaxLength},
			{"ok", "bell\a", "description", identity.RuleControlCharacter},
		} {
			_, err := api.create(e, c.name, c.description)
			if c.field == "" {
				if err != nil {
					t.Errorf("create %s %q: %v", api.kind, c.name, err)
				}
				continue
			}
			WantCode(t, err, identity.CodeInvalid)
			WantFields(t, err, []identity.FieldError{fe(c.field, c.rule)})
		}
		// A name is unique in the workspace; a rename frees the old one.
		_, err := api.create(e, "a", "again")
		WantCode(t, err, identity.CodeConflict)
		WantFields(t, err, []identity.FieldError{fe("name", identity.RuleTaken)})
		admin, err := api.create(e, "admin", "")
		if err != nil {
			t.Fatal(err)
		}
		if admin != 4 {
			t.Errorf("the fourth %s has id %d, want 4", api.kind, admin)
		}
		v1, err := api.update(e, admin, "root", "the root", nil)
		if err != nil {
			t.Fatal(err)
		}
		if v2, err := api.update(e, admin, "root", "the root", nil); err != nil || v2 != v1 {
			t.Errorf("an update that changes nothing: version %d -> %d, %v; want the same", v1, v2, err)
		}
		_, err = api.update(e, admin, "a", "", nil)
		WantCode(t, err, identity.CodeConflict)
		_, err = api.update(e, admin, "root", "", identity.IfVersion(v1+1))
		WantCode(t, err, identity.CodePreconditionFailed)
		if _, err := api.update(e, admin, "root", "described again", identity.IfVersion(v1)); err != nil {
			t.Errorf("an update at the right version: %v", err)
		}
		if id, err := api.create(e, "admin", ""); err != nil || id != 5 {
			t.Errorf("create %s admin after the rename = id %d, %v; want 5", api.kind, id, err)
		}
		if id, err := api.byName(e, "root"); err != nil || id != admin {
			t.Errorf("%s by name root = %d, %v; want %d", api.kind, id, err, admin)
		}
		_, err = api.byName(e, "nobody")
		WantCode(t, err, identity.CodeNotFound)
		_, err = api.update(e, 99, "x", "", nil)
		WantCode(t, err, identity.CodeNotFound)
		for _, id := range []int64{0, -1, 99} {
			_, err = api.get(e, id)
			WantCode(t, err, identity.CodeNotFound)
		}

		// Pages: ascending ids, a literal prefix, totals.
		for _, c := range []struct {
			search string
			page   *identity.Page
			names  []string
			total  int
		}{
			{"", nil, []string{"a", strings.Repeat("n", 64), "billing.read:v2_x-y", "root", "admin"}, 5},
			{"", &identity.Page{Offset: 1, Limit: 2}, []string{strings.Repeat("n", 64), "billing.read:v2_x-y"}, 5},
			{"b", nil, []string{"billing.read:v2_x-y"}, 1},
			{"B", nil, []string{"billing.read:v2_x-y"}, 1},
			{"ro", nil, []string{"root"}, 1},
			{"r_", nil, nil, 0},
			{"", &identity.Page{Offset: 5, Limit: 10}, nil, 5},
		} {
			names, total, err := api.list(e, c.search, c.page)
			if diff := cmp.Diff(c.names, names, cmpopts.EquateEmpty()); err != nil || diff != "" || total != c.total {
				t.Errorf("list %ss %q %+v = total %d, %v; want %d (-want +got):\n%s", api.kind, c.search, c.page, total, err, c.total, diff)
			}
		}
		_, _, err = api.list(e, "", &identity.Page{Limit: 101})
		WantCode(t, err, identity.CodeInvalid)

		// Deleted, an id is never used again.
		if err := api.delete(e, 5); err != nil {
			t.Fatal(err)
		}
		WantCode(t, api.delete(e, 5), identity.CodeNotFound)
		if id, err := api.create(e, "admin", ""); err != nil || id != 6 {
			t.Errorf("create %s admin after deleting id 5 = id %d, %v; want 6", api.kind, id, err)
		}
	}
	want := []string{}
	for _, kind := range []string{"role", "group"} {
		for range 3 {
			want = append(want, kind+".created")
		}
		want = append(want, kind+".created", kind+".updated", kind+".updated", kind+".created", kind+".deleted", kind+".created")
	}
	if diff := cmp.Diff(want, eventTypes(e.events(hook))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// accessFixture makes roles 1-3 (admin, editor, viewer), groups 1-2 (eng
// carrying editor, ops carrying viewer and editor) and users ada (in eng,
// admin directly), bob (in eng and ops, editor directly) and cy (no
// group).
func (e *env) accessFixture() (ada, bob, cy identity.User) {
	e.t.Helper()
	t := e.t
	for _, name := range []string{"admin", "editor", "viewer"} {
		if _, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"eng", "ops"} {
		if _, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	ada, bob, cy = e.user("ada"), e.user("bob"), e.user("cy")
	steps := []error{
		e.ws.AssignGroupRole(e.ctx, 1, 2), e.ws.AssignGroupRole(e.ctx, 2, 3), e.ws.AssignGroupRole(e.ctx, 2, 2),
		e.ws.AddGroupMember(e.ctx, 1, ada.ID), e.ws.AddGroupMember(e.ctx, 1, bob.ID), e.ws.AddGroupMember(e.ctx, 2, bob.ID),
		e.ws.AssignRole(e.ctx, ada.ID, 1), e.ws.AssignRole(e.ctx, bob.ID, 2),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return ada, bob, cy
}

// userRoles returns "name:direct:groups" of each role the user holds.
func (e *env) userRoles(userID int64) []string {
	e.t.Helper()
	roles, err := e.ws.ListUserRoles(e.ctx, userID)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, r := range roles {
		var groups []string
		for _, g := range r.Groups {
			groups = append(groups, fmt.Sprintf("%d=%s", g.ID, g.Name))
		}
		out = append(out, fmt.Sprintf("%s:%t:%s", r.Name, r.Direct, strings.Join(groups, ",")))
	}
	return out
}

// holders returns the usernames of the role's holders and their number.
func (e *env) holders(roleID int64) ([]string, int) {
	e.t.Helper()
	l, err := e.ws.ListRoleHolders(e.ctx, roleID, &identity.Page{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, u := range l.Items {
		names = append(names, u.Username)
	}
	return names, l.Total
}

// testRuleEffectiveRoles checks what a user holds and from where, that
// RemoveRole removes only a direct assignment, and the holders of roles.
func testRuleEffectiveRoles(t *testing.T, e *env) {
	ada, bob, cy := e.accessFixture()
	check := func(what string, user int64, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, e.userRoles(user), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("ada", ada.ID, []string{"admin:true:", "editor:false:1=eng"})
	check("bob", bob.ID, []string{"editor:true:1=eng,2=ops", "viewer:false:2=ops"})
	check("cy", cy.ID, nil)
	if names, total := e.holders(2); !cmp.Equal([]string{"ada", "bob"}, names) || total != 2 {
		t.Errorf("holders of editor = %v, %d; want ada and bob, 2", names, total)
	}

	// The direct assignment goes; what comes through groups stays.
	if err := e.ws.RemoveRole(e.ctx, bob.ID, 2); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.RemoveRole(e.ctx, bob.ID, 2), identity.CodeNotFound) // inherited only
	WantCode(t, e.ws.RemoveRole(e.ctx, bob.ID, 3), identity.CodeNotFound) // inherited only
	check("bob without his direct editor", bob.ID, []string{"editor:false:1=eng,2=ops", "viewer:false:2=ops"})

	// Leaving a group, or the group losing a role.
	if err := e.ws.RemoveGroupMember(e.ctx, 1, bob.ID); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.RemoveGroupMember(e.ctx, 1, bob.ID), identity.CodeNotFound)
	check("bob out of eng", bob.ID, []string{"editor:false:2=ops", "viewer:false:2=ops"})
	if err := e.ws.RemoveGroupRole(e.ctx, 2, 2); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.RemoveGroupRole(e.ctx, 2, 2), identity.CodeNotFound)
	check("bob after ops lost editor", bob.ID, []string{"viewer:false:2=ops"})
	if names, total := e.holders(2); !cmp.Equal([]string{"ada"}, names) || total != 1 {
		t.Errorf("holders of editor = %v, %d; want ada, 1", names, total)
	}

	// A role renamed is the same role.
	if _, err := e.ws.UpdateRole(e.ctx, 3, identity.RoleUpdate{Name: "reader"}); err != nil {
		t.Fatal(err)
	}
	check("bob after viewer became reader", bob.ID, []string{"reader:false:2=ops"})

	// Deleting a role removes every assignment of it; deleting a group,
	// its memberships and roles.
	if err := e.ws.AssignRole(e.ctx, cy.ID, 2); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.DeleteRole(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	check("ada after editor was deleted", ada.ID, []string{"admin:true:"})
	check("cy after editor was deleted", cy.ID, nil)
	groups, err := e.ws.ListGroupRoles(e.ctx, 1)
	if err != nil || len(groups) != 0 {
		t.Errorf("eng's roles after editor was deleted = %+v, %v; want none", groups, err)
	}
	_, err = e.ws.ListRoleHolders(e.ctx, 2, nil)
	WantCode(t, err, identity.CodeNotFound)
	if err := e.ws.DeleteGroup(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	check("bob after ops was deleted", bob.ID, nil)
	if names, total := e.holders(3); len(names) != 0 || total != 0 {
		t.Errorf("holders of reader after ops was deleted = %v, %d; want none", names, total)
	}
	if g, err := e.ws.ListUserGroups(e.ctx, bob.ID); err != nil || len(g) != 0 {
		t.Errorf("bob's groups = %+v, %v; want none", g, err)
	}
	if g, err := e.ws.ListUserGroups(e.ctx, ada.ID); err != nil || len(g) != 1 || g[0].Name != "eng" {
		t.Errorf("ada's groups = %+v, %v; want eng", g, err)
	}
	_, err = e.ws.ListUserRoles(e.ctx, 99)
	WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.ListUserGroups(e.ctx, 99)
	WantCode(t, err, identity.CodeNotFound)
}

// testRuleMemberships checks AddGroupMember and RemoveGroupMember: unknown
// groups and users, a second addition, disabled members, the members'
// pages, and the events.
func testRuleMemberships(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventGroupMemberAdded, identity.EventGroupMemberRemoved,
		identity.EventGroupRoleAssigned, identity.EventGroupRoleRemoved)
	g, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	role, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	var users []identity.User
	for i := range 5 {
		users = append(users, e.user(fmt.Sprintf("m%d", i)))
	}
	if err := e.ws.DisableUser(e.ctx, users[4].ID); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		for range 2 { // the second addition changes nothing and emits nothing
			if err := e.ws.AddGroupMember(e.ctx, g.ID, u.ID); err != nil {
				t.Fatalf("AddGroupMember(%s): %v", u.Username, err)
			}
		}
	}
	WantCode(t, e.ws.AddGroupMember(e.ctx, 99, users[0].ID), identity.CodeNotFound)
	WantCode(t, e.ws.AddGroupMember(e.ctx, g.ID, 99), identity.CodeNotFound)
	WantCode(t, e.ws.RemoveGroupMember(e.ctx, 99, users[0].ID), identity.CodeNotFound)
	WantCode(t, e.ws.RemoveGroupMember(e.ctx, g.ID, 99), identity.CodeNotFound)
	for range 2 {
		if err := e.ws.AssignGroupRole(e.ctx, g.ID, role.ID); err != nil {
			t.Fatal(err)
		}
	}
	WantCode(t, e.ws.AssignGroupRole(e.ctx, g.ID, 99), identity.CodeNotFound)
	WantCode(t, e.ws.AssignGroupRole(e.ctx, 99, role.ID), identity.CodeNotFound)

	page, err := e.ws.ListGroupMembers(e.ctx, g.ID, &identity.Page{Offset: 3, Limit: 10})
	if err != nil || page.Total != 5 || len(page.Items) != 2 || page.Items[0].Username != "m3" || page.Items[1].Enabled {
		t.Errorf("members from offset 3 = %+v, %v; want m3 and the disabled m4 of 5", page, err)
	}
	_, err = e.ws.ListGroupMembers(e.ctx, 99, nil)
	WantCode(t, err, identity.CodeNotFound)
	if err := e.ws.RemoveGroupMember(e.ctx, g.ID, users[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.RemoveGroupRole(e.ctx, g.ID, role.ID); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, u := range users {
		want = append(want, fmt.Sprintf("group.member.added %d %d", g.ID, u.ID))
	}
	want = append(want, fmt.Sprintf("group.role.assigned %d r%d", g.ID, role.ID),
		fmt.Sprintf("group.member.removed %d %d", g.ID, users[0].ID), fmt.Sprintf("group.role.removed %d r%d", g.ID, role.ID))
	var got []string
	for _, ev := range e.events(hook) {
		var d struct{ GroupID, UserID, RoleID int64 }
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.RoleID != 0 {
			got = append(got, fmt.Sprintf("%s %d r%d", ev.Type, d.GroupID, d.RoleID))
		} else {
			got = append(got, fmt.Sprintf("%s %d %d", ev.Type, d.GroupID, d.UserID))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// raceLimit sets one limit, fills it to five below, races 20 additions and
// wants exactly five of them to succeed and the rest CodeLimitReached.
func raceLimit(t *testing.T, e *env, set func(*identity.Limits), fill int, add func(i int) error) {
	t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	set(&s.Limits)
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	for i := range fill {
		if err := add(1000 + i); err != nil {
			t.Fatalf("filling to the limit minus 5: %v", err)
		}
	}
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { errs[i] = add(i) })
	}
	wg.Wait()
	codes := map[identity.Code]int{}
	for _, err := range errs {
		codes[identity.ErrorCode(err)]++
	}
	if diff := cmp.Diff(map[identity.Code]int{"": 5, identity.CodeLimitReached: 15}, codes); diff != "" {
		t.Errorf("20 additions at the limit minus 5 (-want +got):\n%s", diff)
	}
}

// inWorkspace returns an env of a new workspace of the same Service.
func (e *env) inWorkspace(slug string) *env {
	e.t.Helper()
	ws, err := e.svc.CreateWorkspace(e.ctx, slug, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	sub := *e
	sub.ws = ws
	return &sub
}

// testRuleAccessLimits checks each limit of roles and groups on both sides
// and under a race, each in a workspace of its own.
func testRuleAccessLimits(t *testing.T, e *env) {
	t.Run("Roles", func(t *testing.T) {
		e := e.inWorkspace("roles")
		raceLimit(t, e, func(l *identity.Limits) { l.Roles = 10 }, 5, func(i int) error {
			_, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: fmt.Sprintf("race-%d", i)})
			return err
		})
	})
	t.Run("Groups", func(t *testing.T) {
		e := e.inWorkspace("groups")
		raceLimit(t, e, func(l *identity.Limits) { l.Groups = 12 }, 7, func(i int) error {
			_, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: fmt.Sprintf("race-%d", i)})
			return err
		})
	})
	t.Run("GroupsPerUser", func(t *testing.T) {
		e := e.inWorkspace("groups-per-user")
		u := e.user("joiner")
		groups := map[int]int64{}
		for i := range 20 {
			g, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: fmt.Sprintf("join-%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			groups[i] = g.ID
		}
		for i := range 5 {
			g, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: fmt.Sprintf("fill-%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			groups[1000+i] = g.ID
		}
		raceLimit(t, e, func(l *identity.Limits) { l.GroupsPerUser = 10 }, 5, func(i int) error {
			return e.ws.AddGroupMember(e.ctx, groups[i], u.ID)
		})
	})
	t.Run("RolesPerGroup", func(t *testing.T) {
		e := e.inWorkspace("roles-per-group")
		g, err := e.ws.CreateGroup(e.ctx, identity.NewGroup{Name: "carrier"})
		if err != nil {
			t.Fatal(err)
		}
		roles := map[int]int64{}
		for _, i := range append(seq(0, 20), seq(1000, 1005)...) {
			r, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: fmt.Sprintf("carried-%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			roles[i] = r.ID
		}
		raceLimit(t, e, func(l *identity.Limits) { l.RolesPerGroup = 10 }, 5, func(i int) error {
			return e.ws.AssignGroupRole(e.ctx, g.ID, roles[i])
		})
	})
}

// seq returns the integers from lo to hi, hi excluded.
func seq(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// testRuleImportAccess checks that an import names roles and groups that
// exist, creates those that do not, once, and refuses ids no role has.
func testRuleImportAccess(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventRoleCreated, identity.EventGroupCreated)
	if _, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: "admin"}); err != nil {
		t.Fatal(err)
	}
	line := func(name string, roles []identity.RoleRef, groups []string) identity.ImportedUser {
		return identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "User " + name, Roles: roles, Groups: groups}
	}
	users, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{
		line("ann", []identity.RoleRef{identity.RoleID(1), identity.RoleName("auditor")}, []string{"eng", "ops"}),
		line("ben", []identity.RoleRef{identity.RoleName("admin"), identity.RoleName("auditor")}, []string{"eng"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"admin:true:", "auditor:true:"}, e.userRoles(users[0].ID)); diff != "" {
		t.Errorf("ann's roles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"admin:true:", "auditor:true:"}, e.userRoles(users[1].ID)); diff != "" {
		t.Errorf("ben's roles (-want +got):\n%s", diff)
	}
	members, err := e.ws.ListGroupMembers(e.ctx, 1, nil)
	if err != nil || members.Total != 2 {
		t.Errorf("members of eng = %+v, %v; want ann and ben", members, err)
	}
	// admin, created above; auditor, eng and ops, created by the import,
	// once each.
	if diff := cmp.Diff([]string{"role.created", "role.created", "group.created", "group.created"}, eventTypes(e.events(hook))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	_, err = e.ws.ImportUsers(e.ctx, []identity.ImportedUser{line("cid", []identity.RoleRef{identity.RoleID(3)}, nil)})
	WantCode(t, err, identity.CodeInvalid)
	WantFields(t, err, []identity.FieldError{fe("users[0].roles[0]", identity.RuleUnknown)})
}
