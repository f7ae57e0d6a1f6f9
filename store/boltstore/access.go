package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// Roles and groups.
//
// A workspace keeps its roles, its groups and who holds what in these
// buckets, besides user_roles (user id + role id -> empty), the direct
// assignments:
//
//	roles                role id -> JSON role record
//	role_names           folded name -> role id
//	groups               group id -> JSON group record
//	group_names          folded name -> group id
//	group_members        group id + user id -> empty
//	user_groups          user id + group id -> empty
//	group_roles          group id + role id -> empty
//	role_groups          role id + group id -> empty
//	role_holders         role id + user id -> holding (below)
//	role_holder_counts   role id -> uint64 number of its role_holders
//	                     entries
//	group_member_counts  group id -> uint64 number of its members
//
// and the numbers of its roles and groups in meta, under "role_count"
// and "group_count". A count that falls to zero is deleted.
//
// A holding is the reference count of a user's hold on a role, in its two
// parts: a byte, 1 when the role is assigned to the user directly (when
// user_roles has it) and 0 otherwise, then the uvarint number of the
// user's groups that carry the role. The entry exists while either part is
// not zero, so the holders of a role are one prefix of role_holders, each
// user once, in id order: RoleHolders, like GroupMembers, costs a seek, a
// step per key before its offset and one per id it returns, and reads its
// total from a count, whatever the number of users. The direct byte lets
// DeleteRole find the direct assignments it removes among the holders it
// walks anyway.
//
// Every method that changes who holds what moves the holdings and counts
// in its own transaction:
//
//   - AddUserRole, RemoveUserRole: one holding.
//   - AddGroupMember, RemoveGroupMember: one holding per role of the
//     group, which the identity package bounds at 50.
//   - AddGroupRole, RemoveGroupRole: one holding per member of the group.
//     A group of a million members is a million index writes in one
//     transaction, held in memory until it commits: the price of listing
//     holders in proportion to the page, paid when a group gains or loses
//     a role, which is rare, rather than on every listing.
//   - DeleteRole: one step per holder and per group of the role.
//   - DeleteGroup: one step per member times the roles of the group.
//   - DeleteUser: one step per group of the user times its roles, and per
//     direct role.
//   - DeleteWorkspace deletes the workspace's bucket, these with it.
//
// A file written before roles were records has role ids in user_roles and
// none of these buckets: Open gives each of those ids a record and builds
// the indexes (upgradeRoles and buildAccessIndex, from ensureLayout).

// errAccessMismatch reports an access index that disagrees with the
// assignments and memberships it is kept from.
var errAccessMismatch = errors.New("boltstore: the holders of roles disagree with the assignments")

// named is roles or groups: the buckets of their records and names, the
// meta key of their number, and what to call one in messages.
type named struct {
	records, names nested
	count          []byte
	what           string
}

var (
	roleKind  = named{bucketRoles, bucketRoleNames, keyRoleCount, "role"}
	groupKind = named{bucketGroups, bucketGroupNames, keyGroupCount, "group"}
)

// putNamed stores v, the record of the role or group id named name, and
// moves its entry in the name index. It returns store.ErrConflict, having
// written nothing, when the folded name belongs to another record.
func (sp *space) putNamed(kind named, id int64, name string, v []byte) error {
	records, names := sp.bucket(kind.records), sp.bucket(kind.names)
	k, nk := idKey(id), uniqueKey(store.Fold(name))
	if owner := names.Get(nk); owner != nil && decodeID(owner) != id {
		return fmt.Errorf("boltstore: %s name %q belongs to %s %d: %w", kind.what, name, kind.what, decodeID(owner), store.ErrConflict)
	}
	if prev := records.Get(k); prev != nil {
		old, err := decodeNamed(k, prev)
		if err != nil {
			return fmt.Errorf("boltstore: %s %d: %w", kind.what, id, err)
		}
		// A rename frees the old name.
		if ok := uniqueKey(store.Fold(old.Name)); !bytes.Equal(ok, nk) && bytes.Equal(names.Get(ok), k) {
			if err := names.Delete(ok); err != nil {
				return err
			}
		}
	} else if err := addCount(sp.bucket(bucketMeta), kind.count, +1, 8); err != nil {
		return err
	}
	if err := names.Put(nk, k); err != nil {
		return err
	}
	return records.Put(k, v)
}

// deleteNamed deletes the record of the role or group id with its name
// entry and counts it out, or returns an error wrapping store.ErrNotFound.
// What refers to it is the caller's.
func (sp *space) deleteNamed(kind named, id int64) error {
	records, k := sp.bucket(kind.records), idKey(id)
	v := records.Get(k)
	if v == nil {
		return notFound("%s %d", kind.what, id)
	}
	old, err := decodeNamed(k, v)
	if err != nil {
		return fmt.Errorf("boltstore: %s %d: %w", kind.what, id, err)
	}
	names, nk := sp.bucket(kind.names), uniqueKey(store.Fold(old.Name))
	if bytes.Equal(names.Get(nk), k) {
		if err := names.Delete(nk); err != nil {
			return err
		}
	}
	if err := records.Delete(k); err != nil {
		return err
	}
	return addCount(sp.bucket(bucketMeta), kind.count, -1, 8)
}

// idByName returns the id that the name index of kind maps the folded
// name to.
func (sp *space) idByName(kind named, name string) (int64, error) {
	v := sp.bucket(kind.names).Get(uniqueKey(store.Fold(name)))
	if v == nil {
		return 0, notFound("%s named %q", kind.what, name)
	}
	return decodeID(v), nil
}

// listNamed returns one page of the roles or groups that match q, in
// ascending id order (a group as the role with its fields), and the
// number of them in all.
//
// Without a prefix the total is the count in meta and the page a walk of
// the records from the first. With one, the ids are collected from the
// name index, whose keys with the folded prefix are exactly the matches,
// and sorted: a workspace has at most 1,000 roles and 10,000 groups (the
// identity package's limits), so the matches are few enough to sort at
// every call, which spares an index by prefix and id its writes.
func (sp *space) listNamed(kind named, q store.NameQuery) ([]store.Role, int, error) {
	offset := max(q.Offset, 0)
	records := sp.bucket(kind.records)
	decode := func(k, v []byte) (store.Role, error) {
		r, err := decodeNamed(k, v)
		if err != nil {
			return store.Role{}, fmt.Errorf("boltstore: %s %d: %w", kind.what, decodeID(k), err)
		}
		return r, nil
	}
	if q.Prefix == "" {
		total := int(readCount(sp.bucket(bucketMeta).Get(kind.count)))
		if q.Limit <= 0 || offset >= total {
			return nil, total, nil
		}
		out := make([]store.Role, 0, min(q.Limit, total-offset))
		c := records.Cursor()
		k, v := c.First()
		for skip := offset; skip > 0 && k != nil; skip-- {
			k, v = c.Next()
		}
		for ; k != nil && len(out) < q.Limit; k, v = c.Next() {
			r, err := decode(k, v)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, r)
		}
		return out, total, nil
	}
	prefix := []byte(store.Fold(q.Prefix))
	var ids []int64
	c := sp.bucket(kind.names).Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ids = append(ids, decodeID(v))
	}
	slices.Sort(ids)
	total := len(ids)
	if q.Limit <= 0 || offset >= total {
		return nil, total, nil
	}
	page := ids[offset:min(offset+q.Limit, total)]
	out := make([]store.Role, 0, len(page))
	for _, id := range page {
		k := idKey(id)
		v := records.Get(k)
		if v == nil {
			return nil, 0, fmt.Errorf("boltstore: %s_names names %s %d, which does not exist", kind.what, kind.what, id)
		}
		r, err := decode(k, v)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, total, nil
}

// Roles.

// PutRole implements store.Tx.
func (t *tx) PutRole(slug string, r store.Role) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	v, err := encodeRole(r)
	if err != nil {
		return err
	}
	return sp.putNamed(roleKind, r.ID, r.Name, v)
}

// Role implements store.Tx.
func (t *tx) Role(slug string, id int64) (store.Role, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Role{}, err
	}
	return getRecord(sp.bucket(bucketRoles), idKey(id), decodeRole, "role %d", id)
}

// RoleIDByName implements store.Tx.
func (t *tx) RoleIDByName(slug, name string) (int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	return sp.idByName(roleKind, name)
}

// Roles implements store.Tx (see listNamed).
func (t *tx) Roles(slug string, q store.NameQuery) ([]store.Role, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	return sp.listNamed(roleKind, q)
}

// DeleteRole implements store.Tx. It walks the role's holders, removing
// the direct assignments their holdings mark, and the role's groups: it
// costs one step per holder and per group.
func (t *tx) DeleteRole(slug string, id int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if err := sp.deleteNamed(roleKind, id); err != nil {
		return err
	}
	prefix := idKey(id)
	holders := sp.bucket(bucketRoleHolders)
	var users, direct []int64
	c := holders.Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		h, err := decodeHolding(v)
		if err != nil {
			return err
		}
		user := decodeID(k[idKeyLen:])
		users = append(users, user)
		if h.direct {
			direct = append(direct, user)
		}
	}
	assigned := sp.bucket(bucketUserRoles)
	for _, user := range direct {
		if err := assigned.Delete(pairKey(user, id)); err != nil {
			return err
		}
	}
	for _, user := range users {
		if err := holders.Delete(pairKey(id, user)); err != nil {
			return err
		}
	}
	if err := sp.bucket(bucketRoleHolderCounts).Delete(prefix); err != nil {
		return err
	}
	for _, group := range idsAfter(sp.bucket(bucketRoleGroups), id) {
		if err := sp.bucket(bucketGroupRoles).Delete(pairKey(group, id)); err != nil {
			return err
		}
		if err := sp.bucket(bucketRoleGroups).Delete(pairKey(id, group)); err != nil {
			return err
		}
	}
	return nil
}

// UserRoles implements store.Tx.
func (t *tx) UserRoles(slug string, userID int64) ([]int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	return idsAfter(sp.bucket(bucketUserRoles), userID), nil
}

// AddUserRole implements store.Tx: the assignment and the holding's
// direct part.
func (t *tx) AddUserRole(slug string, userID, roleID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	b, k := sp.bucket(bucketUserRoles), pairKey(userID, roleID)
	if hasKey(b, k) {
		return nil
	}
	if err := b.Put(k, nil); err != nil {
		return err
	}
	return sp.moveHolding(roleID, userID, assignDirect)
}

// RemoveUserRole implements store.Tx: the assignment and the holding's
// direct part.
func (t *tx) RemoveUserRole(slug string, userID, roleID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	b, k := sp.bucket(bucketUserRoles), pairKey(userID, roleID)
	if !hasKey(b, k) {
		return notFound("role %d of user %d", roleID, userID)
	}
	if err := b.Delete(k); err != nil {
		return err
	}
	return sp.moveHolding(roleID, userID, unassignDirect)
}

// RoleHolders implements store.Tx: the total from role_holder_counts, the
// page from a prefix scan of role_holders.
func (t *tx) RoleHolders(slug string, roleID int64, offset, limit int) ([]int64, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	ids, total := pageIDs(sp.bucket(bucketRoleHolders), sp.bucket(bucketRoleHolderCounts), roleID, offset, limit)
	return ids, total, nil
}

// Groups.

// PutGroup implements store.Tx.
func (t *tx) PutGroup(slug string, g store.Group) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	v, err := encodeGroup(g)
	if err != nil {
		return err
	}
	return sp.putNamed(groupKind, g.ID, g.Name, v)
}

// Group implements store.Tx.
func (t *tx) Group(slug string, id int64) (store.Group, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Group{}, err
	}
	return getRecord(sp.bucket(bucketGroups), idKey(id), decodeGroup, "group %d", id)
}

// GroupIDByName implements store.Tx.
func (t *tx) GroupIDByName(slug, name string) (int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	return sp.idByName(groupKind, name)
}

// Groups implements store.Tx (see listNamed).
func (t *tx) Groups(slug string, q store.NameQuery) ([]store.Group, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	records, total, err := sp.listNamed(groupKind, q)
	if err != nil {
		return nil, 0, err
	}
	groups := make([]store.Group, len(records))
	for i, r := range records {
		groups[i] = store.Group(r)
	}
	return groups, total, nil
}

// DeleteGroup implements store.Tx. It walks the group's members once,
// taking each out of the holdings of every role of the group: one step
// per member times the group's roles.
func (t *tx) DeleteGroup(slug string, id int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if err := sp.deleteNamed(groupKind, id); err != nil {
		return err
	}
	roles := idsAfter(sp.bucket(bucketGroupRoles), id)
	// Collected first: deleting under a cursor can skip keys in bbolt.
	members := idsAfter(sp.bucket(bucketGroupMembers), id)
	holders, deltas := sp.bucket(bucketRoleHolders), make([]int, len(roles))
	for _, user := range members {
		if err := sp.bucket(bucketGroupMembers).Delete(pairKey(id, user)); err != nil {
			return err
		}
		if err := sp.bucket(bucketUserGroups).Delete(pairKey(user, id)); err != nil {
			return err
		}
		for i, role := range roles {
			d, err := adjustHolding(holders, role, user, leaveGroup)
			if err != nil {
				return err
			}
			deltas[i] += d
		}
	}
	for i, role := range roles {
		if deltas[i] != 0 {
			if err := addCount(sp.bucket(bucketRoleHolderCounts), idKey(role), deltas[i], 8); err != nil {
				return err
			}
		}
		if err := sp.bucket(bucketGroupRoles).Delete(pairKey(id, role)); err != nil {
			return err
		}
		if err := sp.bucket(bucketRoleGroups).Delete(pairKey(role, id)); err != nil {
			return err
		}
	}
	return sp.bucket(bucketGroupMemberCounts).Delete(idKey(id))
}

// AddGroupMember implements store.Tx: the membership both ways, the
// group's count, and a holding for each role of the group.
func (t *tx) AddGroupMember(slug string, groupID, userID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	members, k := sp.bucket(bucketGroupMembers), pairKey(groupID, userID)
	if hasKey(members, k) {
		return nil
	}
	if err := members.Put(k, nil); err != nil {
		return err
	}
	if err := sp.bucket(bucketUserGroups).Put(pairKey(userID, groupID), nil); err != nil {
		return err
	}
	if err := addCount(sp.bucket(bucketGroupMemberCounts), idKey(groupID), +1, 8); err != nil {
		return err
	}
	for _, role := range idsAfter(sp.bucket(bucketGroupRoles), groupID) {
		if err := sp.moveHolding(role, userID, joinGroup); err != nil {
			return err
		}
	}
	return nil
}

// RemoveGroupMember implements store.Tx, undoing what AddGroupMember did.
func (t *tx) RemoveGroupMember(slug string, groupID, userID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	members, k := sp.bucket(bucketGroupMembers), pairKey(groupID, userID)
	if !hasKey(members, k) {
		return notFound("member %d of group %d", userID, groupID)
	}
	if err := members.Delete(k); err != nil {
		return err
	}
	if err := sp.bucket(bucketUserGroups).Delete(pairKey(userID, groupID)); err != nil {
		return err
	}
	if err := addCount(sp.bucket(bucketGroupMemberCounts), idKey(groupID), -1, 8); err != nil {
		return err
	}
	for _, role := range idsAfter(sp.bucket(bucketGroupRoles), groupID) {
		if err := sp.moveHolding(role, userID, leaveGroup); err != nil {
			return err
		}
	}
	return nil
}

// GroupMembers implements store.Tx: the total from group_member_counts,
// the page from a prefix scan of group_members.
func (t *tx) GroupMembers(slug string, groupID int64, offset, limit int) ([]int64, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	ids, total := pageIDs(sp.bucket(bucketGroupMembers), sp.bucket(bucketGroupMemberCounts), groupID, offset, limit)
	return ids, total, nil
}

// UserGroups implements store.Tx.
func (t *tx) UserGroups(slug string, userID int64) ([]int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	return idsAfter(sp.bucket(bucketUserGroups), userID), nil
}

// AddGroupRole implements store.Tx: the role both ways and a holding for
// every member of the group (see the costs above).
func (t *tx) AddGroupRole(slug string, groupID, roleID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	carried, k := sp.bucket(bucketGroupRoles), pairKey(groupID, roleID)
	if hasKey(carried, k) {
		return nil
	}
	if err := carried.Put(k, nil); err != nil {
		return err
	}
	if err := sp.bucket(bucketRoleGroups).Put(pairKey(roleID, groupID), nil); err != nil {
		return err
	}
	return sp.moveMembersHoldings(groupID, roleID, joinGroup)
}

// RemoveGroupRole implements store.Tx, undoing what AddGroupRole did.
func (t *tx) RemoveGroupRole(slug string, groupID, roleID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	carried, k := sp.bucket(bucketGroupRoles), pairKey(groupID, roleID)
	if !hasKey(carried, k) {
		return notFound("role %d of group %d", roleID, groupID)
	}
	if err := carried.Delete(k); err != nil {
		return err
	}
	if err := sp.bucket(bucketRoleGroups).Delete(pairKey(roleID, groupID)); err != nil {
		return err
	}
	return sp.moveMembersHoldings(groupID, roleID, leaveGroup)
}

// GroupRoles implements store.Tx.
func (t *tx) GroupRoles(slug string, groupID int64) ([]int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	return idsAfter(sp.bucket(bucketGroupRoles), groupID), nil
}

// removeAccess ends every membership of the user and every holding, for
// DeleteUser, which deletes the user's direct assignments (user_roles)
// after it. The holdings are those of the direct roles and of the roles
// of the user's groups: role_holders is keyed by role first, so they are
// found through these rather than by a scan.
func (sp *space) removeAccess(userID int64) error {
	groups := idsAfter(sp.bucket(bucketUserGroups), userID)
	held := idsAfter(sp.bucket(bucketUserRoles), userID)
	for _, group := range groups {
		held = append(held, idsAfter(sp.bucket(bucketGroupRoles), group)...)
	}
	slices.Sort(held)
	holders, counts := sp.bucket(bucketRoleHolders), sp.bucket(bucketRoleHolderCounts)
	for _, role := range slices.Compact(held) {
		k := pairKey(role, userID)
		if !hasKey(holders, k) {
			return fmt.Errorf("role %d of user %d has no holding: %w", role, userID, errAccessMismatch)
		}
		if err := holders.Delete(k); err != nil {
			return err
		}
		if err := addCount(counts, idKey(role), -1, 8); err != nil {
			return err
		}
	}
	for _, group := range groups {
		if err := sp.bucket(bucketGroupMembers).Delete(pairKey(group, userID)); err != nil {
			return err
		}
		if err := sp.bucket(bucketUserGroups).Delete(pairKey(userID, group)); err != nil {
			return err
		}
		if err := addCount(sp.bucket(bucketGroupMemberCounts), idKey(group), -1, 8); err != nil {
			return err
		}
	}
	return nil
}

// Holdings.

// holding is what a user holds of a role: directly, and through how many
// of its groups.
type holding struct {
	direct bool
	groups uint64
}

// held reports whether the holding holds the role at all.
func (h holding) held() bool { return h.direct || h.groups > 0 }

// encode returns the role_holders value of h.
func (h holding) encode() []byte {
	v := make([]byte, 1, 1+binary.MaxVarintLen64)
	if h.direct {
		v[0] = 1
	}
	return binary.AppendUvarint(v, h.groups)
}

// decodeHolding decodes a role_holders value.
func decodeHolding(v []byte) (holding, error) {
	if len(v) < 2 || v[0] > 1 {
		return holding{}, fmt.Errorf("role_holders value %x: %w", v, errAccessMismatch)
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 {
		return holding{}, fmt.Errorf("role_holders value %x: %w", v, errAccessMismatch)
	}
	return holding{direct: v[0] == 1, groups: n}, nil
}

// The changes of a holding.

func assignDirect(h *holding) error   { h.direct = true; return nil }
func unassignDirect(h *holding) error { h.direct = false; return nil }
func joinGroup(h *holding) error      { h.groups++; return nil }

func leaveGroup(h *holding) error {
	if h.groups == 0 {
		return errAccessMismatch
	}
	h.groups--
	return nil
}

// adjustHolding applies change to the holding of the role by the user in
// holders, deleting it when it holds nothing any more, and returns how the
// role's number of holders changes: +1, -1 or 0.
func adjustHolding(holders *bbolt.Bucket, roleID, userID int64, change func(*holding) error) (int, error) {
	k := pairKey(roleID, userID)
	var h holding
	v := holders.Get(k)
	if v != nil {
		var err error
		if h, err = decodeHolding(v); err != nil {
			return 0, err
		}
	}
	before := h.held()
	if err := change(&h); err != nil {
		return 0, fmt.Errorf("role %d of user %d: %w", roleID, userID, err)
	}
	switch {
	case h.held():
		if err := holders.Put(k, h.encode()); err != nil {
			return 0, err
		}
		if !before {
			return +1, nil
		}
	case before:
		return -1, holders.Delete(k)
	}
	return 0, nil
}

// moveHolding applies change to one holding and counts the role's holders
// in step.
func (sp *space) moveHolding(roleID, userID int64, change func(*holding) error) error {
	d, err := adjustHolding(sp.bucket(bucketRoleHolders), roleID, userID, change)
	if err != nil || d == 0 {
		return err
	}
	return addCount(sp.bucket(bucketRoleHolderCounts), idKey(roleID), d, 8)
}

// moveMembersHoldings applies change to the holding of the role by every
// member of the group, and the sum of what that does to the role's count
// once.
func (sp *space) moveMembersHoldings(groupID, roleID int64, change func(*holding) error) error {
	holders, prefix, delta := sp.bucket(bucketRoleHolders), idKey(groupID), 0
	// The cursor walks group_members while the writes go to role_holders,
	// another bucket.
	c := sp.bucket(bucketGroupMembers).Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		d, err := adjustHolding(holders, roleID, decodeID(k[idKeyLen:]), change)
		if err != nil {
			return err
		}
		delta += d
	}
	if delta == 0 {
		return nil
	}
	return addCount(sp.bucket(bucketRoleHolderCounts), idKey(roleID), delta, 8)
}

// idsAfter returns the second ids of the keys of b (pairs of ids) whose
// first id is id, ascending.
func idsAfter(b *bbolt.Bucket, id int64) []int64 {
	prefix := idKey(id)
	var ids []int64
	c := b.Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, decodeID(k[idKeyLen:]))
	}
	return ids
}

// pageIDs returns the second ids of the entries of b (pairs of ids) whose
// first id is id, from the offset-th on, at most limit, and their number,
// which counts holds under the id's key: a seek, a step per entry before
// the offset and one per id returned.
func pageIDs(entries, counts *bbolt.Bucket, id int64, offset, limit int) ([]int64, int) {
	prefix := idKey(id)
	total := int(readCount(counts.Get(prefix)))
	offset = max(offset, 0)
	if limit <= 0 || offset >= total {
		return nil, total
	}
	ids := make([]int64, 0, min(limit, total-offset))
	c := entries.Cursor()
	k, _ := c.Seek(prefix)
	for skip := offset; skip > 0 && bytes.HasPrefix(k, prefix); skip-- {
		k, _ = c.Next()
	}
	for ; bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _ = c.Next() {
		ids = append(ids, decodeID(k[idKeyLen:]))
	}
	return ids, total
}

// The upgrade and the indexes' builds.

// upgradeRoles gives every role id that user_roles assigns a record, as
// store.Role describes: named "role-" and the id, dated now (UTC, to the
// microsecond), Version 1; and moves SeqRoles past the largest id. It runs
// when Open creates the roles bucket in a workspace of a file written
// before roles were records, and only then: the bucket's existence marks
// it done. role_holders and its counts are built after it, from user_roles
// (buildAccessIndex).
func upgradeRoles(sp *space, now time.Time) error {
	now = fromMicros(toMicros(now))
	ids := make(map[int64]bool) // the distinct role ids: few, though the assignments are many
	err := sp.bucket(bucketUserRoles).ForEach(func(k, _ []byte) error {
		if len(k) != 2*idKeyLen {
			return fmt.Errorf("user_roles key %x is not a user id and a role id", k)
		}
		ids[decodeID(k[idKeyLen:])] = true
		return nil
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	var last int64
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		r := store.Role{ID: id, Name: "role-" + strconv.FormatInt(id, 10), CreatedAt: now, UpdatedAt: now, Version: 1}
		v, err := encodeRole(r)
		if err != nil {
			return err
		}
		if err := sp.putNamed(roleKind, id, r.Name, v); err != nil {
			return err
		}
		last = max(last, id)
	}
	seq, err := sp.bucket(bucketSeq).CreateBucketIfNotExists([]byte(store.SeqRoles))
	if err != nil {
		return err
	}
	if last > 0 && uint64(last) > seq.Sequence() {
		return seq.SetSequence(uint64(last))
	}
	return nil
}

// buildAccessIndex fills the empty bucket n, an index of roles and groups,
// from what it is kept from: the name indexes from the records, the
// reverse memberships and role_groups from group_members and group_roles,
// role_holders from user_roles and the groups' members and roles, and the
// counts from the entries they count (ensureLayout builds role_holders
// before role_holder_counts, as it comes first in nestedNames).
func buildAccessIndex(sp *space, n nested) error {
	switch n {
	case bucketRoleNames:
		return buildNames(sp, roleKind)
	case bucketGroupNames:
		return buildNames(sp, groupKind)
	case bucketUserGroups:
		return buildReverse(sp.bucket(bucketGroupMembers), sp.bucket(bucketUserGroups))
	case bucketRoleGroups:
		return buildReverse(sp.bucket(bucketGroupRoles), sp.bucket(bucketRoleGroups))
	case bucketRoleHolders:
		return buildHolders(sp)
	case bucketRoleHolderCounts:
		return buildCounts(sp.bucket(bucketRoleHolders), sp.bucket(bucketRoleHolderCounts))
	case bucketGroupMemberCounts:
		return buildCounts(sp.bucket(bucketGroupMembers), sp.bucket(bucketGroupMemberCounts))
	}
	return nil
}

// buildNames fills the name index of kind from its records.
func buildNames(sp *space, kind named) error {
	names := sp.bucket(kind.names)
	return sp.bucket(kind.records).ForEach(func(k, v []byte) error {
		r, err := decodeNamed(k, v)
		if err != nil {
			return fmt.Errorf("%s %d: %w", kind.what, decodeID(k), err)
		}
		return names.Put(uniqueKey(store.Fold(r.Name)), bytes.Clone(k))
	})
}

// buildReverse puts into dst, for every key a + b of src (two ids), the
// key b + a.
func buildReverse(src, dst *bbolt.Bucket) error {
	return src.ForEach(func(k, _ []byte) error {
		if len(k) != 2*idKeyLen {
			return fmt.Errorf("key %x is not a pair of ids", k)
		}
		return dst.Put(append(bytes.Clone(k[idKeyLen:]), k[:idKeyLen]...), nil)
	})
}

// buildHolders fills role_holders from the direct assignments and from
// the members of the groups that carry each role. Its counts are built
// after it (buildCounts).
func buildHolders(sp *space) error {
	holders := sp.bucket(bucketRoleHolders)
	err := sp.bucket(bucketUserRoles).ForEach(func(k, _ []byte) error {
		if len(k) != 2*idKeyLen {
			return fmt.Errorf("user_roles key %x is not a user id and a role id", k)
		}
		_, err := adjustHolding(holders, decodeID(k[idKeyLen:]), decodeID(k), assignDirect)
		return err
	})
	if err != nil {
		return err
	}
	return sp.bucket(bucketGroupRoles).ForEach(func(k, _ []byte) error {
		if len(k) != 2*idKeyLen {
			return fmt.Errorf("group_roles key %x is not a group id and a role id", k)
		}
		group, role := decodeID(k), decodeID(k[idKeyLen:])
		members := sp.bucket(bucketGroupMembers).Cursor()
		for mk, _ := members.Seek(k[:idKeyLen]); bytes.HasPrefix(mk, k[:idKeyLen]); mk, _ = members.Next() {
			if _, err := adjustHolding(holders, role, decodeID(mk[idKeyLen:]), joinGroup); err != nil {
				return fmt.Errorf("group %d: %w", group, err)
			}
		}
		return nil
	})
}

// buildCounts fills counts with the number of entries of each first id of
// entries (pairs of ids), whose entries of one id are adjacent, so that
// no count is held in memory but the one being summed.
func buildCounts(entries, counts *bbolt.Bucket) error {
	var prefix []byte
	var count uint64
	flush := func() error {
		if count == 0 {
			return nil
		}
		return counts.Put(prefix, binary.BigEndian.AppendUint64(nil, count))
	}
	c := entries.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 2*idKeyLen {
			return fmt.Errorf("key %x is not a pair of ids", k)
		}
		if count > 0 && bytes.Equal(k[:idKeyLen], prefix) {
			count++
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		prefix, count = bytes.Clone(k[:idKeyLen]), 1
	}
	return flush()
}
