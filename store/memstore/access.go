package memstore

import (
	"maps"
	"slices"
	"strings"

	"github.com/identitylib/identity/store"
)

// Roles and groups. A workspace's roles and groups, their names' indexes,
// memberships both ways and the groups' roles are maps of its namespace;
// the holders of a role are found by scanning the direct assignments and
// the members of the groups that carry it, as memstore, built for tests,
// does for its other listings.
//
// A write to any of them first keeps a copy of them all, and of the
// users' direct roles, once per transaction (keepAccess): the undo log
// puts the copy back in place, whatever the transaction changed among
// them.

// keepAccess saves the namespace's roles, groups and assignments once per
// transaction, so that a rollback restores them.
func (t *tx) keepAccess(n *namespace) {
	if t.keptAccess == nil {
		t.keptAccess = map[*namespace]bool{}
	}
	if t.keptAccess[n] {
		return
	}
	t.keptAccess[n] = true
	roles, groups := maps.Clone(n.roleRecs), maps.Clone(n.groupRecs)
	roleByName, groupByName := maps.Clone(n.roleByName), maps.Clone(n.groupByName)
	direct, members := cloneLists(n.roles), cloneLists(n.members)
	userGroups, groupRoles := cloneLists(n.userGroups), cloneLists(n.groupRoles)
	t.onUndo(func() {
		// In place: other entries of the undo log hold these maps.
		restore(n.roleRecs, roles)
		restore(n.groupRecs, groups)
		restore(n.roleByName, roleByName)
		restore(n.groupByName, groupByName)
		restore(n.roles, direct)
		restore(n.members, members)
		restore(n.userGroups, userGroups)
		restore(n.groupRoles, groupRoles)
	})
}

// cloneLists copies a map of id lists, lists included.
func cloneLists(m map[int64][]int64) map[int64][]int64 {
	out := make(map[int64][]int64, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// restore makes m hold what saved holds, in place.
func restore[K comparable, V any](m, saved map[K]V) {
	clear(m)
	maps.Copy(m, saved)
}

// addTo inserts id into the ascending list m[k]; false if it was there.
func addTo(m map[int64][]int64, k, id int64) bool {
	list, added := insertSorted(m[k], id)
	if added {
		m[k] = list
	}
	return added
}

// removeFrom removes id from the ascending list m[k], dropping an empty
// list; false if it was not there.
func removeFrom(m map[int64][]int64, k, id int64) bool {
	list, removed := removeSorted(m[k], id)
	switch {
	case !removed:
	case len(list) == 0:
		delete(m, k)
	default:
		m[k] = list
	}
	return removed
}

// named is a role or a group, as the name index and NameQuery see it.
type named interface{ store.Role | store.Group }

// nameOf returns the name of a role or a group.
func nameOf[R named](r R) string {
	switch r := any(r).(type) {
	case store.Role:
		return r.Name
	case store.Group:
		return r.Name
	}
	return ""
}

// putNamed stores r under id in recs, keeping byName (Fold(name) -> id)
// in step, or returns store.ErrConflict when another record has the name.
func putNamed[R named](recs map[int64]R, byName map[string]int64, id int64, r R) error {
	key := store.Fold(nameOf(r))
	if other, ok := byName[key]; ok && other != id {
		return store.ErrConflict
	}
	if old, ok := recs[id]; ok {
		delete(byName, store.Fold(nameOf(old)))
	}
	recs[id] = r
	byName[key] = id
	return nil
}

// pageNamed returns one page of the records of recs that match q, in
// ascending id order, and their number in all.
func pageNamed[R named](recs map[int64]R, q store.NameQuery, norm func(R) R) ([]R, int) {
	prefix := store.Fold(q.Prefix)
	var match []R
	for _, id := range slices.Sorted(maps.Keys(recs)) {
		if r := recs[id]; strings.HasPrefix(store.Fold(nameOf(r)), prefix) {
			match = append(match, norm(r))
		}
	}
	lo, hi := page(len(match), q.Offset, q.Limit)
	return match[lo:hi], len(match)
}

func copyRole(r store.Role) store.Role {
	r.CreatedAt, r.UpdatedAt = normTime(r.CreatedAt), normTime(r.UpdatedAt)
	return r
}

func copyGroup(g store.Group) store.Group {
	g.CreatedAt, g.UpdatedAt = normTime(g.CreatedAt), normTime(g.UpdatedAt)
	return g
}

// PutRole implements store.Tx.
func (t *tx) PutRole(slug string, r store.Role) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	t.keepAccess(n)
	return putNamed(n.roleRecs, n.roleByName, r.ID, copyRole(r))
}

// Role implements store.Tx.
func (t *tx) Role(slug string, id int64) (store.Role, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Role{}, err
	}
	return getRecord(n.roleRecs, id, copyRole)
}

// RoleIDByName implements store.Tx.
func (t *tx) RoleIDByName(slug, name string) (int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	return getRecord(n.roleByName, store.Fold(name), func(id int64) int64 { return id })
}

// Roles implements store.Tx.
func (t *tx) Roles(slug string, q store.NameQuery) ([]store.Role, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	roles, total := pageNamed(n.roleRecs, q, copyRole)
	return roles, total, nil
}

// DeleteRole implements store.Tx.
func (t *tx) DeleteRole(slug string, id int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	r, ok := n.roleRecs[id]
	if !ok {
		return store.ErrNotFound
	}
	t.keepAccess(n)
	delete(n.roleRecs, id)
	delete(n.roleByName, store.Fold(r.Name))
	for _, user := range slices.Collect(maps.Keys(n.roles)) {
		removeFrom(n.roles, user, id)
	}
	for _, group := range slices.Collect(maps.Keys(n.groupRoles)) {
		removeFrom(n.groupRoles, group, id)
	}
	return nil
}

// PutGroup implements store.Tx.
func (t *tx) PutGroup(slug string, g store.Group) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	t.keepAccess(n)
	return putNamed(n.groupRecs, n.groupByName, g.ID, copyGroup(g))
}

// Group implements store.Tx.
func (t *tx) Group(slug string, id int64) (store.Group, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Group{}, err
	}
	return getRecord(n.groupRecs, id, copyGroup)
}

// GroupIDByName implements store.Tx.
func (t *tx) GroupIDByName(slug, name string) (int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	return getRecord(n.groupByName, store.Fold(name), func(id int64) int64 { return id })
}

// Groups implements store.Tx.
func (t *tx) Groups(slug string, q store.NameQuery) ([]store.Group, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	groups, total := pageNamed(n.groupRecs, q, copyGroup)
	return groups, total, nil
}

// DeleteGroup implements store.Tx.
func (t *tx) DeleteGroup(slug string, id int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	g, ok := n.groupRecs[id]
	if !ok {
		return store.ErrNotFound
	}
	t.keepAccess(n)
	delete(n.groupRecs, id)
	delete(n.groupByName, store.Fold(g.Name))
	for _, user := range n.members[id] {
		removeFrom(n.userGroups, user, id)
	}
	delete(n.members, id)
	delete(n.groupRoles, id)
	return nil
}

// AddGroupMember implements store.Tx.
func (t *tx) AddGroupMember(slug string, groupID, userID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	t.keepAccess(n)
	addTo(n.members, groupID, userID)
	addTo(n.userGroups, userID, groupID)
	return nil
}

// RemoveGroupMember implements store.Tx.
func (t *tx) RemoveGroupMember(slug string, groupID, userID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	if _, member := slices.BinarySearch(n.members[groupID], userID); !member {
		return store.ErrNotFound
	}
	t.keepAccess(n)
	removeFrom(n.members, groupID, userID)
	removeFrom(n.userGroups, userID, groupID)
	return nil
}

// GroupMembers implements store.Tx.
func (t *tx) GroupMembers(slug string, groupID int64, offset, limit int) ([]int64, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	members := n.members[groupID]
	lo, hi := page(len(members), offset, limit)
	return slices.Clone(members[lo:hi]), len(members), nil
}

// UserGroups implements store.Tx.
func (t *tx) UserGroups(slug string, userID int64) ([]int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	return slices.Clone(n.userGroups[userID]), nil
}

// AddGroupRole implements store.Tx.
func (t *tx) AddGroupRole(slug string, groupID, roleID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	t.keepAccess(n)
	addTo(n.groupRoles, groupID, roleID)
	return nil
}

// RemoveGroupRole implements store.Tx.
func (t *tx) RemoveGroupRole(slug string, groupID, roleID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	if _, carried := slices.BinarySearch(n.groupRoles[groupID], roleID); !carried {
		return store.ErrNotFound
	}
	t.keepAccess(n)
	removeFrom(n.groupRoles, groupID, roleID)
	return nil
}

// GroupRoles implements store.Tx.
func (t *tx) GroupRoles(slug string, groupID int64) ([]int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	return slices.Clone(n.groupRoles[groupID]), nil
}

// RoleHolders implements store.Tx. It scans the users' direct roles and
// the members of the groups that carry the role.
func (t *tx) RoleHolders(slug string, roleID int64, offset, limit int) ([]int64, int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, 0, err
	}
	holders := map[int64]bool{}
	for user, roles := range n.roles {
		if _, ok := slices.BinarySearch(roles, roleID); ok {
			holders[user] = true
		}
	}
	for group, roles := range n.groupRoles {
		if _, ok := slices.BinarySearch(roles, roleID); ok {
			for _, user := range n.members[group] {
				holders[user] = true
			}
		}
	}
	ids := slices.Sorted(maps.Keys(holders))
	lo, hi := page(len(ids), offset, limit)
	return ids[lo:hi], len(ids), nil
}

// deleteMemberships ends every membership of the user, for DeleteUser.
func (t *tx) deleteMemberships(n *namespace, userID int64) {
	if len(n.userGroups[userID]) == 0 {
		return
	}
	t.keepAccess(n)
	for _, group := range n.userGroups[userID] {
		removeFrom(n.members, group, userID)
	}
	delete(n.userGroups, userID)
}
