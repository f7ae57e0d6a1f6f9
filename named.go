package identity

import (
	"context"
	"strconv"
	"time"

	"github.com/identitylib/identity/store"
)

// Roles and groups are both named records of a workspace, with one set of
// rules: a name of 1-64 characters of [a-z0-9._:-], unique in the
// workspace, that may change (what refers to the record keeps its id); an
// optional description; ids from a sequence, never reused; a limit on how
// many the workspace holds; events when they are created, updated and
// deleted. This file holds those rules once; roles.go and groups.go say
// what differs.

// Rules of role and group names and descriptions.
const (
	// MaxNameLength bounds the name of a role or a group, in characters.
	MaxNameLength = 64
)

// namedRecord is the domain form of a role or a group: Role and Group
// have its fields, so that each converts to and from it.
type namedRecord struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Version     int64     `json:"-"`
}

// namedKind is what differs between roles and groups.
type namedKind struct {
	what    string // "role" or "group", in messages
	seq     store.Sequence
	op      string // the operation an idempotency key stands for
	created EventType
	updated EventType
	deleted EventType
	limit   func(Limits) int
	// The audit trail: the kind of target, and the actions of a record
	// created, updated and deleted.
	target       string
	auditCreated AuditAction
	auditUpdated AuditAction
	auditDeleted AuditAction
	// The store's methods, with a group's record read as a role's: their
	// fields are the same.
	put    func(tx store.Tx, slug string, r store.Role) error
	get    func(tx store.Tx, slug string, id int64) (store.Role, error)
	byName func(tx store.Tx, slug, name string) (int64, error)
	list   func(tx store.Tx, slug string, q store.NameQuery) ([]store.Role, int, error)
	del    func(tx store.Tx, slug string, id int64) error
}

// emptyAsNil returns s, or nil for "": an optional text's value in an
// audit change, where nil is "none".
func emptyAsNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// namedTarget is the record as the target of an audit record.
func namedTarget(k namedKind, r store.Role) AuditTarget {
	return AuditTarget{Kind: k.target, ID: strconv.FormatInt(r.ID, 10), Display: r.Name}
}

func namedFromRecord(r store.Role) namedRecord {
	return namedRecord{ID: r.ID, Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version}
}

// checkNamed adds the problems of a name and a description.
func checkNamed(p *problems, name, description string) {
	checkNamedName(p, "name", name)
	checkDescription(p, "description", description)
}

// checkNamedName adds the problems of the name of a role or a group.
func checkNamedName(p *problems, field, name string) {
	if checkText(p, field, name, 1, MaxNameLength) && !validName(name) {
		p.add(field, RulePattern, "must be lowercase letters, digits and . _ : -")
	}
}

// validName reports whether name is made of [a-z0-9._:-].
func validName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// getNamed reads the record with the id in tx, or a not-found error naming
// the kind.
func (w *Workspace) getNamed(tx store.Tx, k namedKind, id int64) (store.Role, error) {
	if id <= 0 {
		return store.Role{}, notFound("%s %d not found", k.what, id)
	}
	r, err := k.get(tx, w.slug, id)
	if isNotFound(err) {
		return store.Role{}, notFound("%s %d not found", k.what, id)
	}
	return r, err
}

// checkNameFree returns a CodeConflict error, with the field "name", when
// another record of the kind than self has the name (ignoring case).
func (w *Workspace) checkNameFree(tx store.Tx, k namedKind, self int64, name string) error {
	id, err := k.byName(tx, w.slug, name)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return err
	case id == self:
		return nil
	}
	return &Error{Code: CodeConflict, Message: "the " + k.what + " name is taken",
		Fields: []FieldError{{Field: "name", Rule: RuleTaken, Message: "is taken by " + k.what + " " + strconv.FormatInt(id, 10)}}}
}

// createNamed creates a record of the kind with a new id, within the
// workspace's limit, with its created event, in tx.
func (w *Workspace) createNamed(tx store.Tx, k namedKind, name, description string, now time.Time) (store.Role, error) {
	set, err := w.settings(tx)
	if err != nil {
		return store.Role{}, err
	}
	if _, total, err := k.list(tx, w.slug, store.NameQuery{}); err != nil {
		return store.Role{}, err
	} else if total >= k.limit(set.Limits) {
		return store.Role{}, errorf(CodeLimitReached, "the workspace has %d %ss, its limit", total, k.what)
	}
	if err := w.checkNameFree(tx, k, 0, name); err != nil {
		return store.Role{}, err
	}
	id, err := tx.NextID(w.slug, k.seq)
	if err != nil {
		return store.Role{}, err
	}
	r := store.Role{ID: id, Name: name, Description: description, CreatedAt: now, UpdatedAt: now, Version: newVersion(0)}
	if err := k.put(tx, w.slug, r); err != nil {
		return store.Role{}, err
	}
	return r, w.emit(tx, k.created, namedFromRecord(r))
}

// create is CreateRole and CreateGroup: the input checked, then the
// record created in one transaction, once per idempotency key.
func (w *Workspace) create(ctx context.Context, k namedKind, name, description string, idem *Idempotency) (_ namedRecord, err error) {
	var p problems
	checkNamed(&p, name, description)
	if err := p.err("invalid " + k.what); err != nil {
		return namedRecord{}, err
	}
	once, err := w.beginIdempotent(ctx, idem, k.op)
	if err != nil {
		return namedRecord{}, err
	}
	if once.replaying() {
		var r namedRecord
		err = once.replay(&r, &r.Version)
		return r, err
	}
	defer once.finish(ctx, &err)
	var rec store.Role
	err = w.update(ctx, func(tx store.Tx) (err error) {
		if err := once.check(tx); err != nil {
			return err
		}
		if rec, err = w.createNamed(tx, k, name, description, w.svc.timestamp()); err != nil {
			return err
		}
		changes := auditChanges{}.set("name", nil, name)
		if description != "" {
			changes = changes.set("description", nil, description)
		}
		if err := w.audit(ctx, tx, auditEntry{action: k.auditCreated, target: namedTarget(k, rec), changes: changes}); err != nil {
			return err
		}
		return once.complete(tx, namedFromRecord(rec), rec.Version)
	})
	if err != nil {
		return namedRecord{}, fromStore(err, k.what)
	}
	return namedFromRecord(rec), nil
}

// get is GetRole and GetGroup.
func (w *Workspace) get(ctx context.Context, k namedKind, id int64) (namedRecord, error) {
	var rec store.Role
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = w.getNamed(tx, k, id)
		return err
	})
	if err != nil {
		return namedRecord{}, fromStore(err, k.what)
	}
	return namedFromRecord(rec), nil
}

// getByName is GetRoleByName and GetGroupByName.
func (w *Workspace) getByName(ctx context.Context, k namedKind, name string) (namedRecord, error) {
	var rec store.Role
	err := w.view(ctx, func(tx store.Tx) error {
		id, err := k.byName(tx, w.slug, name)
		if isNotFound(err) {
			if _, werr := tx.Workspace(w.slug); werr != nil {
				return werr
			}
			return notFound("no %s is named %q", k.what, name)
		}
		if err != nil {
			return err
		}
		rec, err = w.getNamed(tx, k, id)
		return err
	})
	if err != nil {
		return namedRecord{}, fromStore(err, "workspace")
	}
	return namedFromRecord(rec), nil
}

// updateNamed is UpdateRole and UpdateGroup: the name and description
// replaced, under the precondition, with the updated event when anything
// changed.
func (w *Workspace) updateNamed(ctx context.Context, k namedKind, id int64, name, description string, pre *Precondition) (namedRecord, error) {
	var p problems
	checkNamed(&p, name, description)
	if err := p.err("invalid " + k.what); err != nil {
		return namedRecord{}, err
	}
	var rec store.Role
	err := w.update(ctx, func(tx store.Tx) (err error) {
		if rec, err = w.getNamed(tx, k, id); err != nil {
			return err
		}
		if err := pre.check(true, rec.Version, k.what); err != nil {
			return err
		}
		if rec.Name == name && rec.Description == description {
			return nil // nothing changes: no write, no event, the same version
		}
		if err := w.checkNameFree(tx, k, id, name); err != nil {
			return err
		}
		changes := auditChanges{}.setIfChanged("name", rec.Name, name).
			setIfChanged("description", emptyAsNil(rec.Description), emptyAsNil(description))
		rec.Name, rec.Description = name, description
		rec.UpdatedAt, rec.Version = w.svc.timestamp(), newVersion(rec.Version)
		if err := k.put(tx, w.slug, rec); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{action: k.auditUpdated, target: namedTarget(k, rec), changes: changes}); err != nil {
			return err
		}
		return w.emit(tx, k.updated, namedFromRecord(rec))
	})
	if err != nil {
		return namedRecord{}, fromStore(err, k.what)
	}
	return namedFromRecord(rec), nil
}

// deleteNamed is DeleteRole and DeleteGroup: the record and everything
// that refers to it (the store's cascade), with the deleted event.
func (w *Workspace) deleteNamed(ctx context.Context, k namedKind, id int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := w.getNamed(tx, k, id)
		if err != nil {
			return err
		}
		if err := k.del(tx, w.slug, id); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{action: k.auditDeleted, target: namedTarget(k, rec)}); err != nil {
			return err
		}
		return w.emit(tx, k.deleted, namedFromRecord(rec))
	})
	return fromStore(err, k.what)
}

// list is ListRoles and ListGroups: one page of the records whose name
// starts with search (ignoring case, taken literally), in ascending id
// order, with their number in all.
func (w *Workspace) list(ctx context.Context, k namedKind, search string, page *Page) (List[namedRecord], error) {
	pg, err := page.resolve()
	if err != nil {
		return List[namedRecord]{}, err
	}
	var p problems
	checkUTF8(&p, "search", search)
	if err := p.err("invalid search"); err != nil {
		return List[namedRecord]{}, err
	}
	var recs []store.Role
	var total int
	err = w.view(ctx, func(tx store.Tx) (err error) {
		recs, total, err = k.list(tx, w.slug, store.NameQuery{Prefix: search, Offset: pg.Offset, Limit: pg.Limit})
		return err
	})
	if err != nil {
		return List[namedRecord]{}, fromStore(err, "workspace")
	}
	return List[namedRecord]{Items: mapAll(recs, namedFromRecord), Total: total, Offset: pg.Offset, Limit: pg.Limit}, nil
}

// listOf returns the function that converts a page of records, and its
// error, to a page of T, a type with the record's fields (Role, Group):
// listOf(roleOf)(w.list(...)).
func listOf[T any](conv func(namedRecord) T) func(List[namedRecord], error) (List[T], error) {
	return func(l List[namedRecord], err error) (List[T], error) {
		if err != nil {
			return List[T]{}, err
		}
		return List[T]{Items: mapAll(l.Items, conv), Total: l.Total, Offset: l.Offset, Limit: l.Limit}, nil
	}
}

// usersOf reads the users of a page of ids, in the page's order, for the
// listings of members and holders.
func (w *Workspace) usersOf(tx store.Tx, ids []int64) ([]store.User, error) {
	users := make([]store.User, 0, len(ids))
	for _, id := range ids {
		u, err := tx.User(w.slug, id)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}
