package boltstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/memstore"
)

// access is what a workspace's roles and groups are, read through the Tx
// interface for roles, groups and users 1 to 4.
type access struct {
	Roles, Groups []string
	// By user: direct roles, groups; by group: members (and total),
	// roles; by role: holders (and total). Empty lists are left out.
	Direct, UserGroups, Members, GroupRoles, Holders map[int64][]int64
	MemberTotals, HolderTotals                       map[int64]int
}

// readAccess reads the access state of the test workspace.
func readAccess(t *testing.T, s store.Store) access {
	t.Helper()
	a := access{Direct: map[int64][]int64{}, UserGroups: map[int64][]int64{}, Members: map[int64][]int64{},
		GroupRoles: map[int64][]int64{}, Holders: map[int64][]int64{}, MemberTotals: map[int64]int{}, HolderTotals: map[int64]int{}}
	keep := func(m map[int64][]int64, id int64, ids []int64, err error) error {
		if len(ids) > 0 {
			m[id] = ids
		}
		return err
	}
	mustView(t, s, func(tx store.Tx) error {
		roles, _, err := tx.Roles(testSlug, store.NameQuery{Limit: 100})
		for _, r := range roles {
			a.Roles = append(a.Roles, r.Name)
		}
		groups, _, err2 := tx.Groups(testSlug, store.NameQuery{Limit: 100})
		for _, g := range groups {
			a.Groups = append(a.Groups, g.Name)
		}
		errs := []error{err, err2}
		for id := int64(1); id <= 4; id++ {
			direct, err := tx.UserRoles(testSlug, id)
			errs = append(errs, keep(a.Direct, id, direct, err))
			groups, err := tx.UserGroups(testSlug, id)
			errs = append(errs, keep(a.UserGroups, id, groups, err))
			members, total, err := tx.GroupMembers(testSlug, id, 0, 100)
			errs = append(errs, keep(a.Members, id, members, err))
			if total > 0 {
				a.MemberTotals[id] = total
			}
			carried, err := tx.GroupRoles(testSlug, id)
			errs = append(errs, keep(a.GroupRoles, id, carried, err))
			holders, total, err := tx.RoleHolders(testSlug, id, 0, 100)
			errs = append(errs, keep(a.Holders, id, holders, err))
			if total > 0 {
				a.HolderTotals[id] = total
			}
		}
		return errors.Join(errs...)
	})
	return a
}

// accessFixture gives the test workspace users 1 to 3, roles 1 to 3,
// groups 1 and 2, memberships, the groups' roles and direct assignments,
// with ids of roles and groups that are also users' ids.
func accessFixture(t *testing.T, s store.Store) {
	t.Helper()
	mustUpdate(t, s, func(tx store.Tx) error {
		steps := []error{
			tx.PutRole(testSlug, store.Role{ID: 1, Name: "admin"}),
			tx.PutRole(testSlug, store.Role{ID: 2, Name: "editor"}),
			tx.PutRole(testSlug, store.Role{ID: 3, Name: "viewer"}),
			tx.PutGroup(testSlug, store.Group{ID: 1, Name: "eng"}),
			tx.PutGroup(testSlug, store.Group{ID: 2, Name: "ops"}),
		}
		for id := int64(1); id <= 3; id++ {
			steps = append(steps, tx.PutUser(testSlug, userWithID(id)))
		}
		for _, m := range [][2]int64{{1, 1}, {1, 2}, {2, 2}, {2, 3}} {
			steps = append(steps, tx.AddGroupMember(testSlug, m[0], m[1]))
		}
		steps = append(steps,
			tx.AddGroupRole(testSlug, 1, 2), tx.AddGroupRole(testSlug, 2, 2), tx.AddGroupRole(testSlug, 2, 3),
			tx.AddUserRole(testSlug, 2, 1), tx.AddUserRole(testSlug, 2, 2), tx.AddUserRole(testSlug, 3, 1),
		)
		return errors.Join(steps...)
	})
}

// accessIndexes are the buckets of roles and groups that Open builds from
// the others when a file lacks them.
var accessIndexes = []string{"role_names", "group_names", "user_groups", "role_groups",
	"role_holders", "role_holder_counts", "group_member_counts"}

// TestAccessIndexesBuiltForOlderFile: a file whose workspace lacks the
// indexes of roles and groups gets them built from the records,
// memberships, groups' roles and assignments when it is opened, and
// they move with later changes as if they had always been kept.
func TestAccessIndexesBuiltForOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}) })
	accessFixture(t, s)
	want := readAccess(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	boltstore.DropBuckets(t, path, testSlug, accessIndexes...)

	s = openStore(t, path, nil)
	if diff := cmp.Diff(want, readAccess(t, s)); diff != "" {
		t.Errorf("after the indexes were built (-kept +built):\n%s", diff)
	}
	mustView(t, s, func(tx store.Tx) error {
		if id, err := tx.GroupIDByName(testSlug, "OPS"); err != nil || id != 2 {
			t.Errorf("GroupIDByName(OPS) = %d, %v; want 2", id, err)
		}
		return nil
	})
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(tx.RemoveGroupMember(testSlug, 2, 3), tx.DeleteRole(testSlug, 1), tx.DeleteUser(testSlug, 1))
	})
	got := readAccess(t, s)
	wantAfter := access{
		Roles: []string{"editor", "viewer"}, Groups: []string{"eng", "ops"},
		Direct:     map[int64][]int64{2: {2}},
		UserGroups: map[int64][]int64{2: {1, 2}},
		Members:    map[int64][]int64{1: {2}, 2: {2}}, MemberTotals: map[int64]int{1: 1, 2: 1},
		GroupRoles: map[int64][]int64{1: {2}, 2: {2, 3}},
		Holders:    map[int64][]int64{2: {2}, 3: {2}}, HolderTotals: map[int64]int{2: 1, 3: 1},
	}
	if diff := cmp.Diff(wantAfter, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("after changes on the built indexes (-want +got):\n%s", diff)
	}
}

// TestAccessMatchesMemstore applies the same random changes of roles,
// groups, memberships, assignments and users to this store and to
// memstore, which finds holders by scanning, and compares what each
// returns and holds after every change: the holdings and counts kept here
// must say what the scan finds.
func TestAccessMatchesMemstore(t *testing.T) {
	bolt, mem := newStore(t), memstore.New()
	t.Cleanup(func() { _ = mem.Close() })
	mustUpdate(t, mem, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}) })
	for _, s := range []store.Store{bolt, mem} {
		accessFixture(t, s)
		mustUpdate(t, s, func(tx store.Tx) error {
			return errors.Join(tx.PutUser(testSlug, userWithID(4)), tx.PutRole(testSlug, store.Role{ID: 4, Name: "auditor"}),
				tx.PutGroup(testSlug, store.Group{ID: 3, Name: "sales"}), tx.PutGroup(testSlug, store.Group{ID: 4, Name: "hr"}))
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	id := func() int64 { return rng.Int64N(4) + 1 }
	changes := []struct {
		name string
		fn   func(tx store.Tx, a, b int64) error
	}{
		{"AddUserRole", func(tx store.Tx, user, role int64) error { return tx.AddUserRole(testSlug, user, role) }},
		{"RemoveUserRole", func(tx store.Tx, user, role int64) error { return tx.RemoveUserRole(testSlug, user, role) }},
		{"AddGroupMember", func(tx store.Tx, group, user int64) error { return tx.AddGroupMember(testSlug, group, user) }},
		{"RemoveGroupMember", func(tx store.Tx, group, user int64) error { return tx.RemoveGroupMember(testSlug, group, user) }},
		{"AddGroupRole", func(tx store.Tx, group, role int64) error { return tx.AddGroupRole(testSlug, group, role) }},
		{"RemoveGroupRole", func(tx store.Tx, group, role int64) error { return tx.RemoveGroupRole(testSlug, group, role) }},
		{"DeleteRole, PutRole", func(tx store.Tx, role, _ int64) error {
			if err := tx.DeleteRole(testSlug, role); err != nil {
				return err
			}
			return tx.PutRole(testSlug, store.Role{ID: role, Name: fmt.Sprint("role-", role)})
		}},
		{"DeleteGroup, PutGroup", func(tx store.Tx, group, _ int64) error {
			if err := tx.DeleteGroup(testSlug, group); err != nil {
				return err
			}
			return tx.PutGroup(testSlug, store.Group{ID: group, Name: fmt.Sprint("group-", group)})
		}},
		{"DeleteUser, PutUser", func(tx store.Tx, user, _ int64) error {
			if err := tx.DeleteUser(testSlug, user); err != nil {
				return err
			}
			return tx.PutUser(testSlug, userWithID(user))
		}},
	}
	for step := range 400 {
		c, a, b := changes[rng.IntN(len(changes))], id(), id()
		what := fmt.Sprintf("step %d: %s(%d, %d)", step, c.name, a, b)
		var errs [2]error
		for i, s := range []store.Store{bolt, mem} {
			errs[i] = s.Update(t.Context(), func(tx store.Tx) error { return c.fn(tx, a, b) })
		}
		if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && !errors.Is(errs[0], store.ErrNotFound) {
			t.Fatalf("%s: bbolt %v, memstore %v", what, errs[0], errs[1])
		}
		if diff := cmp.Diff(readAccess(t, mem), readAccess(t, bolt)); diff != "" {
			t.Fatalf("%s: the access state differs (-memstore +bbolt):\n%s", what, diff)
		}
	}
}
