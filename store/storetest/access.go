package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// Roles, groups, memberships and the holders of roles.

func role(id int64, name string) store.Role {
	return store.Role{ID: id, Name: name, Description: "the " + name + " role", CreatedAt: at(int(id)), UpdatedAt: at(int(id) + 1), Version: id + 100}
}

func group(id int64, name string) store.Group {
	return store.Group{ID: id, Name: name, Description: "the " + name + " group", CreatedAt: at(int(id)), UpdatedAt: at(int(id) + 2), Version: id + 200}
}

// accessState is what a workspace's roles and groups are, read back
// through the Tx interface for the roles, groups and users named.
type accessState struct {
	Roles      []store.Role
	RoleTotal  int
	Groups     []store.Group
	GroupTotal int
	// Direct, UserGroups: by user id; Members, GroupRoles: by group id;
	// Holders: by role id. Empty lists are left out.
	Direct     map[int64][]int64
	UserGroups map[int64][]int64
	Members    map[int64][]int64
	MemberTot  map[int64]int
	GroupRoles map[int64][]int64
	Holders    map[int64][]int64
	HolderTot  map[int64]int
}

// readAccess reads the workspace's access state for the given role,
// group and user ids (whether or not they exist).
func readAccess(t *testing.T, s store.Store, slug string, roleIDs, groupIDs, userIDs []int64) accessState {
	t.Helper()
	var st accessState
	view(t, s, func(tx store.Tx) error {
		st = accessState{Direct: map[int64][]int64{}, UserGroups: map[int64][]int64{}, Members: map[int64][]int64{},
			MemberTot: map[int64]int{}, GroupRoles: map[int64][]int64{}, Holders: map[int64][]int64{}, HolderTot: map[int64]int{}}
		var err error
		if st.Roles, st.RoleTotal, err = tx.Roles(slug, store.NameQuery{Limit: 1 << 30}); err != nil {
			return fmt.Errorf("Roles: %w", err)
		}
		if st.Groups, st.GroupTotal, err = tx.Groups(slug, store.NameQuery{Limit: 1 << 30}); err != nil {
			return fmt.Errorf("Groups: %w", err)
		}
		keep := func(m map[int64][]int64, k int64, ids []int64) {
			if len(ids) > 0 {
				m[k] = ids
			}
		}
		for _, u := range userIDs {
			direct, err := tx.UserRoles(slug, u)
			if err != nil {
				return fmt.Errorf("UserRoles: %w", err)
			}
			keep(st.Direct, u, direct)
			groups, err := tx.UserGroups(slug, u)
			if err != nil {
				return fmt.Errorf("UserGroups: %w", err)
			}
			keep(st.UserGroups, u, groups)
		}
		for _, g := range groupIDs {
			members, total, err := tx.GroupMembers(slug, g, 0, 1<<30)
			if err != nil {
				return fmt.Errorf("GroupMembers: %w", err)
			}
			keep(st.Members, g, members)
			if total != 0 {
				st.MemberTot[g] = total
			}
			roles, err := tx.GroupRoles(slug, g)
			if err != nil {
				return fmt.Errorf("GroupRoles: %w", err)
			}
			keep(st.GroupRoles, g, roles)
		}
		for _, r := range roleIDs {
			holders, total, err := tx.RoleHolders(slug, r, 0, 1<<30)
			if err != nil {
				return fmt.Errorf("RoleHolders: %w", err)
			}
			keep(st.Holders, r, holders)
			if total != 0 {
				st.HolderTot[r] = total
			}
		}
		return nil
	})
	return st
}

// accessIDs are the role, group and user ids the access tests read.
var accessIDs = struct{ roles, groups, users []int64 }{
	[]int64{1, 2, 3, 4}, []int64{1, 2, 3}, []int64{1, 2, 3, 4, 5},
}

func (a accessState) diff(want accessState) string {
	return cmp.Diff(want, a, equateEmpty)
}

// testAccess checks roles, groups, memberships, the groups' roles and the
// holders of roles, and that every change keeps them in step.
func testAccess(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Records", func(t *testing.T) { testNamedRecords(t, newStore) })
	t.Run("Holders", func(t *testing.T) { testHolders(t, newStore) })
	t.Run("Pages", func(t *testing.T) { testAccessPages(t, newStore) })
	t.Run("Rollback", func(t *testing.T) { testAccessRollback(t, newStore) })
	t.Run("DeleteUser", func(t *testing.T) { testAccessDeleteUser(t, newStore) })
	t.Run("DeleteWorkspace", func(t *testing.T) { testAccessDeleteWorkspace(t, newStore) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testAccessConcurrent(t, newStore) })
}

// namedKind is roles or groups, for the tests their records share.
type namedKind struct {
	name   string
	put    func(tx store.Tx, slug string, id int64, name string) error
	get    func(tx store.Tx, slug string, id int64) (any, error)
	record func(id int64, name string) any
	byName func(tx store.Tx, slug, name string) (int64, error)
	list   func(tx store.Tx, slug string, q store.NameQuery) ([]int64, int, error)
	delete func(tx store.Tx, slug string, id int64) error
}

var namedKinds = []namedKind{
	{
		name:   "Role",
		put:    func(tx store.Tx, slug string, id int64, name string) error { return tx.PutRole(slug, role(id, name)) },
		get:    func(tx store.Tx, slug string, id int64) (any, error) { return tx.Role(slug, id) },
		record: func(id int64, name string) any { return role(id, name) },
		byName: func(tx store.Tx, slug, name string) (int64, error) { return tx.RoleIDByName(slug, name) },
		list: func(tx store.Tx, slug string, q store.NameQuery) ([]int64, int, error) {
			roles, total, err := tx.Roles(slug, q)
			var ids []int64
			for _, r := range roles {
				ids = append(ids, r.ID)
			}
			return ids, total, err
		},
		delete: func(tx store.Tx, slug string, id int64) error { return tx.DeleteRole(slug, id) },
	},
	{
		name:   "Group",
		put:    func(tx store.Tx, slug string, id int64, name string) error { return tx.PutGroup(slug, group(id, name)) },
		get:    func(tx store.Tx, slug string, id int64) (any, error) { return tx.Group(slug, id) },
		record: func(id int64, name string) any { return group(id, name) },
		byName: func(tx store.Tx, slug, name string) (int64, error) { return tx.GroupIDByName(slug, name) },
		list: func(tx store.Tx, slug string, q store.NameQuery) ([]int64, int, error) {
			groups, total, err := tx.Groups(slug, q)
			var ids []int64
			for _, g := range groups {
				ids = append(ids, g.ID)
			}
			return ids, total, err
		},
		delete: func(tx store.Tx, slug string, id int64) error { return tx.DeleteGroup(slug, id) },
	},
}

// testNamedRecords checks PutRole, Role, RoleIDByName, Roles and
// DeleteRole, and their group counterparts: round trip, folded unique
// names, renames, paging and prefixes, workspaces apart.
func testNamedRecords(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, k := range namedKinds {
		t.Run(k.name, func(t *testing.T) {
			s := newStoreWith(t, newStore, slugA, slugB)
			update(t, s, func(tx store.Tx) error {
				for id, name := range map[int64]string{1: "admin", 2: "Auditor", 3: "billing.read", 7: "billing:write"} {
					if err := k.put(tx, slugA, id, name); err != nil {
						return err
					}
				}
				return k.put(tx, slugB, 1, "admin") // the same name in another workspace
			})
			view(t, s, func(tx store.Tx) error {
				got, err := k.get(tx, slugA, 2)
				if diff := cmp.Diff(k.record(2, "Auditor"), got); err != nil || diff != "" {
					t.Errorf("%s(2) = %v (-want +got):\n%s", k.name, err, diff)
				}
				_, err = k.get(tx, slugA, 5)
				checkErr(t, k.name+"(5)", err, store.ErrNotFound)
				_, err = k.get(tx, slugMissing, 1)
				checkErr(t, k.name+" of a missing workspace", err, store.ErrNotFound)
				for name, want := range map[string]int64{"AUDITOR": 2, "auditor": 2, "Billing:Write": 7} {
					if id, err := k.byName(tx, slugA, name); err != nil || id != want {
						t.Errorf("%sIDByName(%q) = %d, %v; want %d", k.name, name, id, err, want)
					}
				}
				_, err = k.byName(tx, slugA, "audit")
				checkErr(t, k.name+"IDByName(audit)", err, store.ErrNotFound)
				_, err = k.byName(tx, slugB, "auditor")
				checkErr(t, k.name+"IDByName in the other workspace", err, store.ErrNotFound)
				return nil
			})

			// A name another record holds, in any case, is a conflict that
			// writes nothing; the record's own name is not.
			var conflict, own error
			update(t, s, func(tx store.Tx) error {
				conflict = k.put(tx, slugA, 3, "ADMIN")
				own = k.put(tx, slugA, 1, "Admin")
				return nil
			})
			checkErr(t, "a taken name", conflict, store.ErrConflict)
			if own != nil {
				t.Errorf("a record keeping its own name, recased: %v", own)
			}
			// A rename frees the old name for another record.
			update(t, s, func(tx store.Tx) error {
				if err := k.put(tx, slugA, 3, "billing.view"); err != nil {
					return err
				}
				return k.put(tx, slugA, 8, "billing.read")
			})
			view(t, s, func(tx store.Tx) error {
				for name, want := range map[string]int64{"admin": 1, "billing.view": 3, "billing.read": 8} {
					if id, err := k.byName(tx, slugA, name); err != nil || id != want {
						t.Errorf("after the rename, %sIDByName(%q) = %d, %v; want %d", k.name, name, id, err, want)
					}
				}
				got, err := k.get(tx, slugA, 3)
				if diff := cmp.Diff(k.record(3, "billing.view"), got); err != nil || diff != "" {
					t.Errorf("%s(3) after the rename = %v (-want +got):\n%s", k.name, err, diff)
				}
				return nil
			})

			// Pages: ascending ids, prefixes folded and literal, totals.
			for _, c := range []struct {
				q     store.NameQuery
				ids   []int64
				total int
			}{
				{store.NameQuery{Limit: 10}, []int64{1, 2, 3, 7, 8}, 5},
				{store.NameQuery{Offset: 1, Limit: 2}, []int64{2, 3}, 5},
				{store.NameQuery{Offset: 5, Limit: 2}, nil, 5},
				{store.NameQuery{Limit: 0}, nil, 5},
				{store.NameQuery{Prefix: "BILLING", Limit: 10}, []int64{3, 7, 8}, 3},
				{store.NameQuery{Prefix: "billing.", Limit: 1}, []int64{3}, 2},
				{store.NameQuery{Prefix: "billing.", Offset: 1, Limit: 5}, []int64{8}, 2},
				{store.NameQuery{Prefix: "b%", Limit: 10}, nil, 0},
				{store.NameQuery{Prefix: "admin", Limit: 10}, []int64{1}, 1},
			} {
				view(t, s, func(tx store.Tx) error {
					ids, total, err := k.list(tx, slugA, c.q)
					if diff := cmp.Diff(c.ids, ids, equateEmpty); err != nil || diff != "" || total != c.total {
						t.Errorf("%ss(%+v) = total %d, %v, want %d (-want +got):\n%s", k.name, c.q, total, err, c.total, diff)
					}
					return nil
				})
			}

			var deleted, again, missing error
			update(t, s, func(tx store.Tx) error {
				deleted = k.delete(tx, slugA, 1)
				again = k.delete(tx, slugA, 1)
				missing = k.delete(tx, slugMissing, 1)
				return nil
			})
			if deleted != nil {
				t.Errorf("Delete%s: %v", k.name, deleted)
			}
			checkErr(t, "a second Delete"+k.name, again, store.ErrNotFound)
			checkErr(t, "Delete"+k.name+" in a missing workspace", missing, store.ErrNotFound)
			view(t, s, func(tx store.Tx) error {
				_, err := k.byName(tx, slugA, "admin")
				checkErr(t, k.name+"IDByName of the deleted one", err, store.ErrNotFound)
				if id, err := k.byName(tx, slugB, "admin"); err != nil || id != 1 {
					t.Errorf("the other workspace's %s: %d, %v", k.name, id, err)
				}
				return nil
			})
			// A deleted record's name is free.
			update(t, s, func(tx store.Tx) error { return k.put(tx, slugA, 9, "ADMIN") })
		})
	}
}

// testHolders checks memberships both ways, the groups' roles and the
// holders of each role through every change that moves them.
func testHolders(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putUsers(t, s, slugA, user(1, "u1", "u1@example.com", "U One"), user(2, "u2", "u2@example.com", "U Two"),
		user(3, "u3", "u3@example.com", "U Three"), user(4, "u4", "u4@example.com", "U Four"))
	putUsers(t, s, slugB, user(1, "u1", "u1@example.com", "U One"))
	update(t, s, func(tx store.Tx) error {
		for _, r := range []store.Role{role(1, "admin"), role(2, "editor"), role(3, "viewer")} {
			if err := tx.PutRole(slugA, r); err != nil {
				return err
			}
		}
		for _, g := range []store.Group{group(1, "eng"), group(2, "ops")} {
			if err := tx.PutGroup(slugA, g); err != nil {
				return err
			}
		}
		return tx.PutRole(slugB, role(1, "admin"))
	})
	check := func(t *testing.T, what string, want accessState) {
		t.Helper()
		got := readAccess(t, s, slugA, accessIDs.roles, accessIDs.groups, accessIDs.users)
		got.Roles, got.Groups, got.RoleTotal, got.GroupTotal = nil, nil, 0, 0
		if diff := got.diff(want); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	run := func(t *testing.T, fn func(tx store.Tx) error) {
		t.Helper()
		update(t, s, fn)
	}

	run(t, func(tx store.Tx) error {
		for _, m := range [][2]int64{{1, 1}, {1, 2}, {1, 2}, {2, 2}, {2, 3}} { // (group, user); one twice
			if err := tx.AddGroupMember(slugA, m[0], m[1]); err != nil {
				return err
			}
		}
		if err := tx.AddGroupRole(slugA, 1, 2); err != nil { // eng: editor
			return err
		}
		if err := tx.AddGroupRole(slugA, 1, 2); err != nil { // again
			return err
		}
		if err := tx.AddGroupRole(slugA, 2, 3); err != nil { // ops: viewer
			return err
		}
		if err := tx.AddUserRole(slugA, 2, 2); err != nil { // u2: editor, directly and through eng
			return err
		}
		return tx.AddUserRole(slugA, 4, 1) // u4: admin
	})
	check(t, "after the first assignments", accessState{
		Direct:     map[int64][]int64{2: {2}, 4: {1}},
		UserGroups: map[int64][]int64{1: {1}, 2: {1, 2}, 3: {2}},
		Members:    map[int64][]int64{1: {1, 2}, 2: {2, 3}},
		MemberTot:  map[int64]int{1: 2, 2: 2},
		GroupRoles: map[int64][]int64{1: {2}, 2: {3}},
		Holders:    map[int64][]int64{1: {4}, 2: {1, 2}, 3: {2, 3}},
		HolderTot:  map[int64]int{1: 1, 2: 2, 3: 2},
	})
	view(t, s, func(tx store.Tx) error {
		holders, total, err := tx.RoleHolders(slugB, 2, 0, 10)
		if err != nil || len(holders) != 0 || total != 0 {
			t.Errorf("RoleHolders in the other workspace = %v, %d, %v; want none", holders, total, err)
		}
		_, _, err = tx.RoleHolders(slugMissing, 1, 0, 10)
		checkErr(t, "RoleHolders of a missing workspace", err, store.ErrNotFound)
		_, _, err = tx.GroupMembers(slugMissing, 1, 0, 10)
		checkErr(t, "GroupMembers of a missing workspace", err, store.ErrNotFound)
		_, err = tx.UserGroups(slugMissing, 1)
		checkErr(t, "UserGroups of a missing workspace", err, store.ErrNotFound)
		_, err = tx.GroupRoles(slugMissing, 1)
		checkErr(t, "GroupRoles of a missing workspace", err, store.ErrNotFound)
		return nil
	})

	// u2 keeps editor through eng when its direct assignment goes.
	run(t, func(tx store.Tx) error { return tx.RemoveUserRole(slugA, 2, 2) })
	check(t, "after removing u2's direct editor", accessState{
		Direct:     map[int64][]int64{4: {1}},
		UserGroups: map[int64][]int64{1: {1}, 2: {1, 2}, 3: {2}},
		Members:    map[int64][]int64{1: {1, 2}, 2: {2, 3}},
		MemberTot:  map[int64]int{1: 2, 2: 2},
		GroupRoles: map[int64][]int64{1: {2}, 2: {3}},
		Holders:    map[int64][]int64{1: {4}, 2: {1, 2}, 3: {2, 3}},
		HolderTot:  map[int64]int{1: 1, 2: 2, 3: 2},
	})

	// Leaving eng, u2 loses editor; ops gains editor, and u2 holds it again.
	var notMember, notCarried error
	run(t, func(tx store.Tx) error {
		if err := tx.RemoveGroupMember(slugA, 1, 2); err != nil {
			return err
		}
		notMember = tx.RemoveGroupMember(slugA, 1, 4)
		notCarried = tx.RemoveGroupRole(slugA, 1, 3)
		return nil
	})
	checkErr(t, "RemoveGroupMember of a non-member", notMember, store.ErrNotFound)
	checkErr(t, "RemoveGroupRole of a role the group lacks", notCarried, store.ErrNotFound)
	check(t, "after u2 left eng", accessState{
		Direct:     map[int64][]int64{4: {1}},
		UserGroups: map[int64][]int64{1: {1}, 2: {2}, 3: {2}},
		Members:    map[int64][]int64{1: {1}, 2: {2, 3}},
		MemberTot:  map[int64]int{1: 1, 2: 2},
		GroupRoles: map[int64][]int64{1: {2}, 2: {3}},
		Holders:    map[int64][]int64{1: {4}, 2: {1}, 3: {2, 3}},
		HolderTot:  map[int64]int{1: 1, 2: 1, 3: 2},
	})
	run(t, func(tx store.Tx) error { return tx.AddGroupRole(slugA, 2, 2) })
	check(t, "after ops gained editor", accessState{
		Direct:     map[int64][]int64{4: {1}},
		UserGroups: map[int64][]int64{1: {1}, 2: {2}, 3: {2}},
		Members:    map[int64][]int64{1: {1}, 2: {2, 3}},
		MemberTot:  map[int64]int{1: 1, 2: 2},
		GroupRoles: map[int64][]int64{1: {2}, 2: {2, 3}},
		Holders:    map[int64][]int64{1: {4}, 2: {1, 2, 3}, 3: {2, 3}},
		HolderTot:  map[int64]int{1: 1, 2: 3, 3: 2},
	})
	run(t, func(tx store.Tx) error { return tx.RemoveGroupRole(slugA, 2, 3) })
	check(t, "after ops lost viewer", accessState{
		Direct:     map[int64][]int64{4: {1}},
		UserGroups: map[int64][]int64{1: {1}, 2: {2}, 3: {2}},
		Members:    map[int64][]int64{1: {1}, 2: {2, 3}},
		MemberTot:  map[int64]int{1: 1, 2: 2},
		GroupRoles: map[int64][]int64{1: {2}, 2: {2}},
		Holders:    map[int64][]int64{1: {4}, 2: {1, 2, 3}},
		HolderTot:  map[int64]int{1: 1, 2: 3},
	})

	// Deleting editor removes it from the groups and the users; deleting
	// ops removes its memberships.
	run(t, func(tx store.Tx) error {
		if err := tx.AddUserRole(slugA, 1, 2); err != nil {
			return err
		}
		return tx.DeleteRole(slugA, 2)
	})
	check(t, "after deleting editor", accessState{
		Direct:     map[int64][]int64{4: {1}},
		UserGroups: map[int64][]int64{1: {1}, 2: {2}, 3: {2}},
		Members:    map[int64][]int64{1: {1}, 2: {2, 3}},
		MemberTot:  map[int64]int{1: 1, 2: 2},
		Holders:    map[int64][]int64{1: {4}},
		HolderTot:  map[int64]int{1: 1},
	})
	run(t, func(tx store.Tx) error {
		if err := tx.AddGroupRole(slugA, 2, 1); err != nil { // ops: admin
			return err
		}
		return tx.DeleteGroup(slugA, 2)
	})
	check(t, "after deleting ops", accessState{
		Direct:     map[int64][]int64{4: {1}},
		UserGroups: map[int64][]int64{1: {1}},
		Members:    map[int64][]int64{1: {1}},
		MemberTot:  map[int64]int{1: 1},
		Holders:    map[int64][]int64{1: {4}},
		HolderTot:  map[int64]int{1: 1},
	})
}

// testAccessPages checks the pages of GroupMembers and RoleHolders.
func testAccessPages(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	var users []store.User
	for id := int64(1); id <= 12; id++ {
		users = append(users, user(id, fmt.Sprintf("u%d", id), fmt.Sprintf("u%d@example.com", id), "U"))
	}
	putUsers(t, s, slugA, users...)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutRole(slugA, role(1, "admin")); err != nil {
			return err
		}
		if err := tx.PutGroup(slugA, group(1, "eng")); err != nil {
			return err
		}
		if err := tx.AddGroupRole(slugA, 1, 1); err != nil {
			return err
		}
		// Members in no order: 12, 10, ..., 2; direct holders 1 to 6.
		for id := int64(12); id >= 2; id -= 2 {
			if err := tx.AddGroupMember(slugA, 1, id); err != nil {
				return err
			}
		}
		for id := int64(1); id <= 6; id++ {
			if err := tx.AddUserRole(slugA, id, 1); err != nil {
				return err
			}
		}
		return nil
	})
	for _, c := range []struct {
		offset, limit int
		members       []int64
		holders       []int64
	}{
		{0, 100, []int64{2, 4, 6, 8, 10, 12}, []int64{1, 2, 3, 4, 5, 6, 8, 10, 12}},
		{0, 3, []int64{2, 4, 6}, []int64{1, 2, 3}},
		{4, 3, []int64{10, 12}, []int64{5, 6, 8}},
		{8, 3, nil, []int64{12}},
		{9, 3, nil, nil},
		{0, 0, nil, nil},
	} {
		view(t, s, func(tx store.Tx) error {
			members, mTotal, err := tx.GroupMembers(slugA, 1, c.offset, c.limit)
			if diff := cmp.Diff(c.members, members, equateEmpty); err != nil || diff != "" || mTotal != 6 {
				t.Errorf("GroupMembers(%d, %d) = total %d, %v; want 6 (-want +got):\n%s", c.offset, c.limit, mTotal, err, diff)
			}
			holders, hTotal, err := tx.RoleHolders(slugA, 1, c.offset, c.limit)
			if diff := cmp.Diff(c.holders, holders, equateEmpty); err != nil || diff != "" || hTotal != 9 {
				t.Errorf("RoleHolders(%d, %d) = total %d, %v; want 9 (-want +got):\n%s", c.offset, c.limit, hTotal, err, diff)
			}
			return nil
		})
	}
	view(t, s, func(tx store.Tx) error {
		for _, id := range []int64{2, 99} {
			members, total, err := tx.GroupMembers(slugA, id, 0, 10)
			if err != nil || len(members) != 0 || total != 0 {
				t.Errorf("GroupMembers of group %d, which has none = %v, %d, %v", id, members, total, err)
			}
			holders, total, err := tx.RoleHolders(slugA, id, 0, 10)
			if err != nil || len(holders) != 0 || total != 0 {
				t.Errorf("RoleHolders of role %d, which nobody holds = %v, %d, %v", id, holders, total, err)
			}
		}
		return nil
	})
}

// accessFixture is a workspace with roles, groups, members and holders.
func accessFixture(t *testing.T, s store.Store, slug string) {
	t.Helper()
	putUsers(t, s, slug, user(1, "u1", "u1@example.com", "U One"), user(2, "u2", "u2@example.com", "U Two"),
		user(3, "u3", "u3@example.com", "U Three"))
	update(t, s, func(tx store.Tx) error {
		steps := []error{
			tx.PutRole(slug, role(1, "admin")), tx.PutRole(slug, role(2, "editor")),
			tx.PutGroup(slug, group(1, "eng")), tx.PutGroup(slug, group(2, "ops")),
			tx.AddGroupMember(slug, 1, 1), tx.AddGroupMember(slug, 1, 2), tx.AddGroupMember(slug, 2, 2),
			tx.AddGroupRole(slug, 1, 1), tx.AddGroupRole(slug, 2, 2),
			tx.AddUserRole(slug, 3, 2), tx.AddUserRole(slug, 2, 1),
		}
		for _, err := range steps {
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// testAccessRollback checks that a failed Update keeps nothing of what it
// changed in roles, groups, memberships and holders.
func testAccessRollback(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	accessFixture(t, s, slugA)
	before := readAccess(t, s, slugA, accessIDs.roles, accessIDs.groups, accessIDs.users)
	changes := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"PutRole", func(tx store.Tx) error { return tx.PutRole(slugA, role(3, "viewer")) }},
		{"rename", func(tx store.Tx) error { return tx.PutRole(slugA, role(1, "root")) }},
		{"PutGroup", func(tx store.Tx) error { return tx.PutGroup(slugA, group(3, "sales")) }},
		{"AddGroupMember", func(tx store.Tx) error { return tx.AddGroupMember(slugA, 2, 3) }},
		{"RemoveGroupMember", func(tx store.Tx) error { return tx.RemoveGroupMember(slugA, 1, 2) }},
		{"AddGroupRole", func(tx store.Tx) error { return tx.AddGroupRole(slugA, 2, 1) }},
		{"RemoveGroupRole", func(tx store.Tx) error { return tx.RemoveGroupRole(slugA, 1, 1) }},
		{"AddUserRole", func(tx store.Tx) error { return tx.AddUserRole(slugA, 1, 2) }},
		{"RemoveUserRole", func(tx store.Tx) error { return tx.RemoveUserRole(slugA, 2, 1) }},
		// Deletions last, for the run of every change in one transaction.
		{"DeleteRole", func(tx store.Tx) error { return tx.DeleteRole(slugA, 1) }},
		{"DeleteGroup", func(tx store.Tx) error { return tx.DeleteGroup(slugA, 1) }},
		{"DeleteUser", func(tx store.Tx) error { return tx.DeleteUser(slugA, 2) }},
	}
	for _, c := range changes {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := c.fn(tx); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, c.name+" then a failure", err, errBoom)
		after := readAccess(t, s, slugA, accessIDs.roles, accessIDs.groups, accessIDs.users)
		if diff := after.diff(before); diff != "" {
			t.Errorf("%s rolled back: the access state changed (-before +after):\n%s", c.name, diff)
		}
	}
	// All of them in one transaction, too.
	err := s.Update(t.Context(), func(tx store.Tx) error {
		for _, c := range changes {
			if err := c.fn(tx); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		return errBoom
	})
	checkErr(t, "every change then a failure", err, errBoom)
	if diff := readAccess(t, s, slugA, accessIDs.roles, accessIDs.groups, accessIDs.users).diff(before); diff != "" {
		t.Errorf("every change rolled back: the access state changed (-before +after):\n%s", diff)
	}
}

// testAccessDeleteUser checks that DeleteUser ends the user's memberships
// and what the user held, and nothing of anyone else's.
func testAccessDeleteUser(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	accessFixture(t, s, slugA)
	update(t, s, func(tx store.Tx) error { return tx.DeleteUser(slugA, 2) })
	got := readAccess(t, s, slugA, accessIDs.roles, accessIDs.groups, accessIDs.users)
	want := accessState{
		Roles: []store.Role{role(1, "admin"), role(2, "editor")}, RoleTotal: 2,
		Groups: []store.Group{group(1, "eng"), group(2, "ops")}, GroupTotal: 2,
		Direct:     map[int64][]int64{3: {2}},
		UserGroups: map[int64][]int64{1: {1}},
		Members:    map[int64][]int64{1: {1}},
		MemberTot:  map[int64]int{1: 1},
		GroupRoles: map[int64][]int64{1: {1}, 2: {2}},
		Holders:    map[int64][]int64{1: {1}, 2: {3}},
		HolderTot:  map[int64]int{1: 1, 2: 1},
	}
	if diff := got.diff(want); diff != "" {
		t.Errorf("after DeleteUser(2) (-want +got):\n%s", diff)
	}
}

// testAccessDeleteWorkspace checks that a workspace's roles and groups go
// with it, and that one created again with the slug starts without them,
// its role and group sequences at 1.
func testAccessDeleteWorkspace(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	accessFixture(t, s, slugA)
	accessFixture(t, s, slugB)
	update(t, s, func(tx store.Tx) error {
		for _, seq := range []store.Sequence{store.SeqRoles, store.SeqGroups} {
			if _, err := tx.NextID(slugA, seq); err != nil {
				return err
			}
		}
		return tx.DeleteWorkspace(slugA)
	})
	update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace(slugA)) })
	if diff := readAccess(t, s, slugA, accessIDs.roles, accessIDs.groups, accessIDs.users).diff(accessState{}); diff != "" {
		t.Errorf("the workspace created again (-want +got):\n%s", diff)
	}
	var roleID, groupID int64
	update(t, s, func(tx store.Tx) (err error) {
		if roleID, err = tx.NextID(slugA, store.SeqRoles); err != nil {
			return err
		}
		groupID, err = tx.NextID(slugA, store.SeqGroups)
		return err
	})
	if roleID != 1 || groupID != 1 {
		t.Errorf("the sequences of the workspace created again: roles %d, groups %d; want 1 and 1", roleID, groupID)
	}
	other := readAccess(t, s, slugB, accessIDs.roles, accessIDs.groups, accessIDs.users)
	if other.RoleTotal != 2 || other.GroupTotal != 2 || other.HolderTot[1] != 2 || other.MemberTot[1] != 2 {
		t.Errorf("the other workspace's access: %+v", other)
	}
}

// testAccessConcurrent checks that concurrent writers keep the members,
// holders and their totals exact.
func testAccessConcurrent(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	const n = 24
	var users []store.User
	for id := int64(1); id <= n; id++ {
		users = append(users, user(id, fmt.Sprintf("u%d", id), fmt.Sprintf("u%d@example.com", id), "U"))
	}
	putUsers(t, s, slugA, users...)
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutRole(slugA, role(1, "admin")); err != nil {
			return err
		}
		if err := tx.PutGroup(slugA, group(1, "eng")); err != nil {
			return err
		}
		return tx.AddGroupRole(slugA, 1, 1)
	})
	// Every user joins the group in a transaction of its own, and every
	// third one also gets the role directly in another.
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for id := int64(1); id <= n; id++ {
		wg.Go(func() {
			errs <- s.Update(t.Context(), func(tx store.Tx) error { return tx.AddGroupMember(slugA, 1, id) })
		})
		if id%3 == 0 {
			wg.Go(func() {
				errs <- s.Update(t.Context(), func(tx store.Tx) error { return tx.AddUserRole(slugA, id, 1) })
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent writer: %v", err)
		}
	}
	view(t, s, func(tx store.Tx) error {
		_, members, err := tx.GroupMembers(slugA, 1, 0, 0)
		if err != nil || members != n {
			t.Errorf("GroupMembers total = %d, %v; want %d", members, err, n)
		}
		_, holders, err := tx.RoleHolders(slugA, 1, 0, 0)
		if err != nil || holders != n {
			t.Errorf("RoleHolders total = %d, %v; want %d: each user once", holders, err, n)
		}
		return nil
	})
	// Half of them leave, concurrently: those with the role directly keep
	// holding it.
	for id := int64(1); id <= n; id += 2 {
		wg.Go(func() {
			if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.RemoveGroupMember(slugA, 1, id) }); err != nil {
				t.Errorf("RemoveGroupMember(%d): %v", id, err)
			}
		})
	}
	wg.Wait()
	view(t, s, func(tx store.Tx) error {
		_, members, err := tx.GroupMembers(slugA, 1, 0, 0)
		if err != nil || members != n/2 {
			t.Errorf("GroupMembers total after half left = %d, %v; want %d", members, err, n/2)
		}
		// Stayed: the even ids (12). Left but direct: 3, 9, 15, 21 (4).
		_, holders, err := tx.RoleHolders(slugA, 1, 0, 0)
		if err != nil || holders != 16 {
			t.Errorf("RoleHolders total after half left = %d, %v; want 16", holders, err)
		}
		return nil
	})
}
