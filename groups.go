package identity

import (
	"context"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// Group is a named set of users of a workspace that carries roles: its
// members hold every role it carries, and tokens carry the names of a
// user's groups (the "groups" scope).
//
// Groups are flat: a group has users as members, never other groups. A
// nested tree would make what a user holds, and what a token carries,
// depend on a walk of unbounded depth at every issuance, and relying
// parties read a flat list of names anyway (Kubernetes, oauth2-proxy,
// Grafana, Argo CD); path-shaped names of nested groups have broken them.
// A hierarchy can be expressed in names ("eng.backend") without being
// one.
type Group struct {
	// ID is a positive integer from the workspace's group sequence, never
	// reused; memberships refer to it, so a group keeps them when renamed.
	ID int64 `json:"id"`
	// Name is 1-64 characters of [a-z0-9._:-], unique in the workspace.
	Name string `json:"name"`
	// Description is free text, at most 1024 characters.
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Version changes on every write of the group (see Precondition); the
	// REST adapter serves it as the ETag, not in the JSON.
	Version int64 `json:"-"`
}

// NewGroup is the input of CreateGroup.
type NewGroup struct {
	// Name: 1-64 characters of [a-z0-9._:-], unique in the workspace.
	Name string
	// Description: optional, at most 1024 characters.
	Description string
	// Idempotency, when not nil, makes the creation safe to retry: see
	// Idempotency.
	Idempotency *Idempotency
}

// GroupUpdate is the input of UpdateGroup: the group's new name and
// description (both replaced), and an optional condition on its version.
type GroupUpdate struct {
	Name        string
	Description string
	// Precondition, when not nil, makes the update conditional (see
	// UserUpdate.Precondition).
	Precondition *Precondition
}

// groupKind is what groups' rules (named.go) need to know of them. A
// group's record is read and written as a role's: the fields are the
// same.
var groupKind = namedKind{
	what: "group", seq: store.SeqGroups, op: opCreateGroup,
	created: EventGroupCreated, updated: EventGroupUpdated, deleted: EventGroupDeleted,
	target: TargetGroup, auditCreated: AuditGroupCreated, auditUpdated: AuditGroupUpdated, auditDeleted: AuditGroupDeleted,
	limit: Limits.groups,
	put:   func(tx store.Tx, slug string, r store.Role) error { return tx.PutGroup(slug, store.Group(r)) },
	get: func(tx store.Tx, slug string, id int64) (store.Role, error) {
		g, err := tx.Group(slug, id)
		return store.Role(g), err
	},
	byName: func(tx store.Tx, slug, name string) (int64, error) { return tx.GroupIDByName(slug, name) },
	list: func(tx store.Tx, slug string, q store.NameQuery) ([]store.Role, int, error) {
		groups, total, err := tx.Groups(slug, q)
		return mapAll(groups, func(g store.Group) store.Role { return store.Role(g) }), total, err
	},
	del: func(tx store.Tx, slug string, id int64) error { return tx.DeleteGroup(slug, id) },
}

func groupOf(r namedRecord) Group { return Group(r) }

// CreateGroup creates a group with group.created. A name another group
// has (ignoring case) is CodeConflict on "name"; a workspace that has
// Limits.Groups groups already is CodeLimitReached. With ng.Idempotency,
// a retry returns the first call's outcome.
func (w *Workspace) CreateGroup(ctx context.Context, ng NewGroup) (Group, error) {
	g, err := w.create(ctx, groupKind, ng.Name, ng.Description, ng.Idempotency)
	return Group(g), err
}

// GetGroup returns the group with the id, or CodeNotFound.
func (w *Workspace) GetGroup(ctx context.Context, id int64) (Group, error) {
	g, err := w.get(ctx, groupKind, id)
	return Group(g), err
}

// GetGroupByName returns the group named name (ignoring case), or
// CodeNotFound.
func (w *Workspace) GetGroupByName(ctx context.Context, name string) (Group, error) {
	g, err := w.getByName(ctx, groupKind, name)
	return Group(g), err
}

// UpdateGroup renames or redescribes the group, with group.updated when
// anything changed: its members and roles stay, and tokens issued from
// then on carry the new name. Errors as for UpdateRole.
func (w *Workspace) UpdateGroup(ctx context.Context, id int64, upd GroupUpdate) (Group, error) {
	g, err := w.updateNamed(ctx, groupKind, id, upd.Name, upd.Description, upd.Precondition)
	return Group(g), err
}

// DeleteGroup deletes the group, with group.deleted, and in the same
// transaction its memberships and the roles it carries: its members no
// longer hold what they held through it. An unknown group is
// CodeNotFound.
func (w *Workspace) DeleteGroup(ctx context.Context, id int64) error {
	return w.deleteNamed(ctx, groupKind, id)
}

// ListGroups returns one page of the workspace's groups whose name starts
// with search (ignoring case, taken literally; empty for all), in
// ascending id order, with their number in all.
func (w *Workspace) ListGroups(ctx context.Context, search string, page *Page) (List[Group], error) {
	return listOf(groupOf)(w.list(ctx, groupKind, search, page))
}

// membershipEvent is the data of group.member.added and
// group.member.removed.
type membershipEvent struct {
	GroupID int64 `json:"groupId"`
	UserID  int64 `json:"userId"`
}

// groupRoleEvent is the data of group.role.assigned and
// group.role.removed.
type groupRoleEvent struct {
	GroupID int64 `json:"groupId"`
	RoleID  int64 `json:"roleId"`
}

// AddGroupMember makes the user a member of the group, with
// group.member.added; adding a member again succeeds and emits nothing.
// Disabled users may be members. An unknown group or user is
// CodeNotFound; a user in Limits.GroupsPerUser groups already is
// CodeLimitReached.
func (w *Workspace) AddGroupMember(ctx context.Context, groupID, userID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		g, err := w.getNamed(tx, groupKind, groupID)
		if err != nil {
			return err
		}
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		groups, err := tx.UserGroups(w.slug, userID)
		if err != nil || slices.Contains(groups, groupID) {
			return err
		}
		set, err := w.settings(tx)
		if err != nil {
			return err
		}
		if limit := set.Limits.groupsPerUser(); len(groups) >= limit {
			return errorf(CodeLimitReached, "user %d is a member of %d groups, the limit", userID, limit)
		}
		if err := tx.AddGroupMember(w.slug, groupID, userID); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{
			action: AuditGroupMemberAdded, target: userTarget(u), changes: auditChanges{}.set("group", nil, g.Name),
		}); err != nil {
			return err
		}
		return w.emit(tx, EventGroupMemberAdded, membershipEvent{GroupID: groupID, UserID: userID})
	})
	return fromStore(err, "group")
}

// RemoveGroupMember ends the user's membership of the group, with
// group.member.removed. An unknown group or user, or a user who is not a
// member, is CodeNotFound.
func (w *Workspace) RemoveGroupMember(ctx context.Context, groupID, userID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		g, err := w.getNamed(tx, groupKind, groupID)
		if err != nil {
			return err
		}
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		err = tx.RemoveGroupMember(w.slug, groupID, userID)
		if isNotFound(err) {
			return notFound("user %d is not a member of group %d", userID, groupID)
		}
		if err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{
			action: AuditGroupMemberRemoved, target: userTarget(u), changes: auditChanges{}.set("group", g.Name, nil),
		}); err != nil {
			return err
		}
		return w.emit(tx, EventGroupMemberRemoved, membershipEvent{GroupID: groupID, UserID: userID})
	})
	return fromStore(err, "group")
}

// ListGroupMembers returns one page of the group's members in ascending
// id order, with their number in all. An unknown group is CodeNotFound.
func (w *Workspace) ListGroupMembers(ctx context.Context, groupID int64, page *Page) (List[User], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[User]{}, err
	}
	var users []store.User
	var total int
	err = w.view(ctx, func(tx store.Tx) error {
		if _, err := w.getNamed(tx, groupKind, groupID); err != nil {
			return err
		}
		ids, n, err := tx.GroupMembers(w.slug, groupID, pg.Offset, pg.Limit)
		if err != nil {
			return err
		}
		total = n
		users, err = w.usersOf(tx, ids)
		return err
	})
	if err != nil {
		return List[User]{}, fromStore(err, "group")
	}
	return List[User]{Items: mapAll(users, userFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}

// ListUserGroups returns the groups the user is a member of, in ascending
// id order (never nil). An unknown user is CodeNotFound.
func (w *Workspace) ListUserGroups(ctx context.Context, userID int64) ([]Group, error) {
	var groups []store.Group
	err := w.view(ctx, func(tx store.Tx) (err error) {
		groups, err = w.userGroups(tx, userID)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return mapAll(groups, func(g store.Group) Group { return Group(namedFromRecord(store.Role(g))) }), nil
}

// userGroups reads the user's groups in tx: with what the user holds when
// the store reads that in one request (store.Bulk), else the groups alone,
// without their roles.
func (w *Workspace) userGroups(tx store.Tx, userID int64) ([]store.Group, error) {
	if _, ok := bulkOf(tx); ok {
		acc, err := w.userAccess(tx, userID)
		return acc.Groups, err
	}
	if _, err := w.user(tx, userID); err != nil {
		return nil, err
	}
	ids, err := tx.UserGroups(w.slug, userID)
	if err != nil {
		return nil, err
	}
	groups := make([]store.Group, 0, len(ids))
	for _, id := range ids {
		g, err := tx.Group(w.slug, id)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// AssignGroupRole makes the group carry the role, with
// group.role.assigned: its members hold the role from then on. Assigning
// a role the group carries succeeds and emits nothing. An unknown group
// or role is CodeNotFound; a group that carries Limits.RolesPerGroup
// roles already is CodeLimitReached.
func (w *Workspace) AssignGroupRole(ctx context.Context, groupID, roleID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		g, err := w.getNamed(tx, groupKind, groupID)
		if err != nil {
			return err
		}
		r, err := w.getNamed(tx, roleKind, roleID)
		if err != nil {
			return err
		}
		roles, err := tx.GroupRoles(w.slug, groupID)
		if err != nil || slices.Contains(roles, roleID) {
			return err
		}
		set, err := w.settings(tx)
		if err != nil {
			return err
		}
		if limit := set.Limits.rolesPerGroup(); len(roles) >= limit {
			return errorf(CodeLimitReached, "group %d carries %d roles, the limit", groupID, limit)
		}
		if err := tx.AddGroupRole(w.slug, groupID, roleID); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{
			action: AuditGroupRoleAssigned, target: namedTarget(groupKind, g), changes: auditChanges{}.set("role", nil, r.Name),
		}); err != nil {
			return err
		}
		return w.emit(tx, EventGroupRoleAssigned, groupRoleEvent{GroupID: groupID, RoleID: roleID})
	})
	return fromStore(err, "group")
}

// RemoveGroupRole ends the group's role, with group.role.removed: its
// members no longer hold it through the group. An unknown group or role,
// or a role the group does not carry, is CodeNotFound.
func (w *Workspace) RemoveGroupRole(ctx context.Context, groupID, roleID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		g, err := w.getNamed(tx, groupKind, groupID)
		if err != nil {
			return err
		}
		r, err := w.getNamed(tx, roleKind, roleID)
		if err != nil {
			return err
		}
		err = tx.RemoveGroupRole(w.slug, groupID, roleID)
		if isNotFound(err) {
			return notFound("group %d does not carry role %d", groupID, roleID)
		}
		if err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{
			action: AuditGroupRoleRemoved, target: namedTarget(groupKind, g), changes: auditChanges{}.set("role", r.Name, nil),
		}); err != nil {
			return err
		}
		return w.emit(tx, EventGroupRoleRemoved, groupRoleEvent{GroupID: groupID, RoleID: roleID})
	})
	return fromStore(err, "group")
}

// ListGroupRoles returns the roles the group carries, in ascending id
// order (never nil). An unknown group is CodeNotFound.
func (w *Workspace) ListGroupRoles(ctx context.Context, groupID int64) ([]Role, error) {
	var roles []store.Role
	err := w.view(ctx, func(tx store.Tx) error {
		if _, err := w.getNamed(tx, groupKind, groupID); err != nil {
			return err
		}
		ids, err := tx.GroupRoles(w.slug, groupID)
		if err != nil {
			return err
		}
		roles, err = w.rolesOf(tx, ids)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "group")
	}
	return mapAll(roles, func(r store.Role) Role { return Role(namedFromRecord(r)) }), nil
}
