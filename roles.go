package identity

import (
	"context"
	"time"

	"github.com/identitylib/identity/store"
)

// Role is a named role of a workspace. Users hold it directly
// (AssignRole) or as members of a group that carries it
// (AssignGroupRole); tokens carry the names of the roles a user holds
// (the "roles" scope).
type Role struct {
	// ID is a positive integer from the workspace's role sequence, never
	// reused; assignments refer to it, so a role keeps them when renamed.
	ID int64 `json:"id"`
	// Name is 1-64 characters of [a-z0-9._:-], unique in the workspace.
	Name string `json:"name"`
	// Description is free text, at most 1024 characters.
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Version changes on every write of the role (see Precondition); the
	// REST adapter serves it as the ETag, not in the JSON.
	Version int64 `json:"-"`
}

// NewRole is the input of CreateRole.
type NewRole struct {
	// Name: 1-64 characters of [a-z0-9._:-], unique in the workspace.
	Name string
	// Description: optional, at most 1024 characters.
	Description string
	// Idempotency, when not nil, makes the creation safe to retry: see
	// Idempotency.
	Idempotency *Idempotency
}

// RoleUpdate is the input of UpdateRole: the role's new name and
// description (both replaced), and an optional condition on its version.
type RoleUpdate struct {
	Name        string
	Description string
	// Precondition, when not nil, makes the update conditional (see
	// UserUpdate.Precondition).
	Precondition *Precondition
}

// roleKind is what roles' rules (named.go) need to know of them.
var roleKind = namedKind{
	what: "role", seq: store.SeqRoles, op: opCreateRole,
	created: EventRoleCreated, updated: EventRoleUpdated, deleted: EventRoleDeleted,
	target: TargetRole, auditCreated: AuditRoleCreated, auditUpdated: AuditRoleUpdated, auditDeleted: AuditRoleDeleted,
	limit:  Limits.roles,
	put:    func(tx store.Tx, slug string, r store.Role) error { return tx.PutRole(slug, r) },
	get:    func(tx store.Tx, slug string, id int64) (store.Role, error) { return tx.Role(slug, id) },
	byName: func(tx store.Tx, slug, name string) (int64, error) { return tx.RoleIDByName(slug, name) },
	list:   func(tx store.Tx, slug string, q store.NameQuery) ([]store.Role, int, error) { return tx.Roles(slug, q) },
	del:    func(tx store.Tx, slug string, id int64) error { return tx.DeleteRole(slug, id) },
}

func roleOf(r namedRecord) Role { return Role(r) }

// CreateRole creates a role with role.created. A name another role has
// (ignoring case) is CodeConflict on "name"; a workspace that has
// Limits.Roles roles already is CodeLimitReached. With nr.Idempotency, a
// retry returns the first call's outcome.
func (w *Workspace) CreateRole(ctx context.Context, nr NewRole) (Role, error) {
	r, err := w.create(ctx, roleKind, nr.Name, nr.Description, nr.Idempotency)
	return Role(r), err
}

// GetRole returns the role with the id, or CodeNotFound.
func (w *Workspace) GetRole(ctx context.Context, id int64) (Role, error) {
	r, err := w.get(ctx, roleKind, id)
	return Role(r), err
}

// GetRoleByName returns the role named name (ignoring case), or
// CodeNotFound.
func (w *Workspace) GetRoleByName(ctx context.Context, name string) (Role, error) {
	r, err := w.getByName(ctx, roleKind, name)
	return Role(r), err
}

// UpdateRole renames or redescribes the role, with role.updated when
// anything changed: its assignments keep its id, and tokens issued from
// then on carry the new name. A name another role has is CodeConflict on
// "name". Errors are checked in this order: invalid input, a missing
// role, upd.Precondition, a taken name.
func (w *Workspace) UpdateRole(ctx context.Context, id int64, upd RoleUpdate) (Role, error) {
	r, err := w.updateNamed(ctx, roleKind, id, upd.Name, upd.Description, upd.Precondition)
	return Role(r), err
}

// DeleteRole deletes the role, with role.deleted, and in the same
// transaction every assignment of it: to users directly and to groups.
// An unknown role is CodeNotFound.
func (w *Workspace) DeleteRole(ctx context.Context, id int64) error {
	return w.deleteNamed(ctx, roleKind, id)
}

// ListRoles returns one page of the workspace's roles whose name starts
// with search (ignoring case, taken literally; empty for all), in
// ascending id order, with their number in all (a nil page is the first
// DefaultPageLimit, see Page).
func (w *Workspace) ListRoles(ctx context.Context, search string, page *Page) (List[Role], error) {
	return listOf(roleOf)(w.list(ctx, roleKind, search, page))
}

// ListRoleHolders returns one page of the users who hold the role,
// directly or through a group, each once, in ascending id order, with
// their number in all. An unknown role is CodeNotFound.
func (w *Workspace) ListRoleHolders(ctx context.Context, roleID int64, page *Page) (List[User], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[User]{}, err
	}
	var users []store.User
	var total int
	err = w.view(ctx, func(tx store.Tx) error {
		if _, err := w.getNamed(tx, roleKind, roleID); err != nil {
			return err
		}
		ids, n, err := tx.RoleHolders(w.slug, roleID, pg.Offset, pg.Limit)
		if err != nil {
			return err
		}
		total = n
		users, err = w.usersOf(tx, ids)
		return err
	})
	if err != nil {
		return List[User]{}, fromStore(err, "role")
	}
	return List[User]{Items: mapAll(users, userFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}
