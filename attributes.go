package identity

import (
	"context"
	"fmt"

	"github.com/identitylib/identity/store"
)

// ListAttributes returns the user's attributes: opaque key/value strings the
// library stores and never interprets (an empty, non-nil map when there
// are none).
func (w *Workspace) ListAttributes(ctx context.Context, userID int64) (map[string]string, error) {
	var attrs map[string]string
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if attrs, err = tx.UserAttributes(w.slug, userID); err != nil || len(attrs) > 0 {
			return err // attributes go with their user: having some, the user exists
		}
		_, err = w.user(tx, userID)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return attrs, nil
}

// SetAttribute creates or replaces one attribute of the user and returns
// the user as the write left it. The key has 1-64 characters, none of
// them NUL or a bidirectional control; the value 0-1024 characters but
// NUL.
//
// An attribute is part of the user (a claim mapped from it changes what
// the user is to a relying party), so setting one to a new value changes
// the user's Version and UpdatedAt and emits user.attributes.changed, and
// the audit trail records the value before and after
// (user.attribute.set), in one transaction. Setting an attribute to the
// value it has changes nothing.
//
// pre, when not nil, makes the write conditional on the user's version,
// in its transaction, as UserUpdate.Precondition does for UpdateUser:
// IfVersion(u.Version) for a user u read before. Errors are checked in
// this order: invalid input, a missing user (CodeNotFound), pre
// (CodePreconditionFailed), the workspace's limit of attributes.
func (w *Workspace) SetAttribute(ctx context.Context, userID int64, key, value string, pre *Precondition) (User, error) {
	var p problems
	checkAttributeKey(&p, "key", key)
	checkAttributeValue(&p, "value", value)
	if err := p.err("invalid attribute"); err != nil {
		return User{}, err
	}
	var u store.User
	err := w.update(ctx, func(tx store.Tx) error {
		var attrs map[string]string
		var err error
		if u, attrs, err = w.userAttributes(tx, userID); err != nil {
			return err
		}
		if err := pre.check(true, u.Version, fmt.Sprintf("user %d", userID)); err != nil {
			return err
		}
		before, had := attrs[key]
		if had && before == value {
			return nil
		}
		if err := w.checkAttributeRoom(tx, userID, attrs, key); err != nil {
			return err
		}
		if err := tx.PutUserAttribute(w.slug, userID, key, value); err != nil {
			return err
		}
		var was any
		if had {
			was = before
		}
		return w.attributeChanged(ctx, tx, &u, key, was, value)
	})
	if err != nil {
		return User{}, fromStore(err, "user")
	}
	return userFromRecord(u), nil
}

// attributeChanged records in tx that the attribute key of the user *u
// went from before to after (nil: none): the user's new version, written
// to *u too, the event and the audit record.
func (w *Workspace) attributeChanged(ctx context.Context, tx store.Tx, u *store.User, key string, before, after any) error {
	u.UpdatedAt, u.Version = w.svc.timestamp(), newVersion(u.Version)
	if err := tx.PutUser(w.slug, *u); err != nil {
		return err
	}
	action := AuditUserAttributeSet
	if after == nil {
		action = AuditUserAttributeDeleted
	}
	err := w.audit(ctx, tx, auditEntry{action: action, target: userTarget(*u),
		changes: auditChanges{}.set("attributes."+key, before, after)})
	if err != nil {
		return err
	}
	return w.emit(tx, EventUserAttributesChanged, attributesChangedEvent{UserID: u.ID, Key: key, Set: after != nil})
}

// userAttributes returns the user and its attributes, or a not-found
// error when the user does not exist. A store that implements store.Bulk
// reads both in one request.
func (w *Workspace) userAttributes(tx store.Tx, userID int64) (store.User, map[string]string, error) {
	if bulk, ok := bulkOf(tx); ok && userID > 0 {
		u, attrs, err := bulk.UserWithAttributes(w.slug, userID)
		if isNotFound(err) {
			return store.User{}, nil, notFound("user %d not found", userID)
		}
		return u, attrs, err
	}
	u, err := w.user(tx, userID)
	if err != nil {
		return store.User{}, nil, err
	}
	attrs, err := tx.UserAttributes(w.slug, userID)
	return u, attrs, err
}

// checkAttributeRoom refuses a new attribute key for a user who has as
// many attributes (attrs) as the workspace's Limits allow; replacing the
// value of a key the user has is always allowed.
func (w *Workspace) checkAttributeRoom(tx store.Tx, userID int64, attrs map[string]string, key string) error {
	if _, ok := attrs[key]; ok {
		return nil
	}
	set, err := w.settings(tx)
	if err != nil {
		return err
	}
	if limit := set.Limits.attributesPerUser(); len(attrs) >= limit {
		return errorf(CodeLimitReached, "user %d already has the maximum of %d attributes", userID, limit)
	}
	return nil
}

// DeleteAttribute removes one attribute of the user and returns the user
// as the write left it; a claim mapped from the attribute no longer
// appears in Claims. Like SetAttribute it changes the user's Version and
// UpdatedAt, emits user.attributes.changed and records the value removed
// (user.attribute.deleted). pre, when not nil, makes the write
// conditional as it does for SetAttribute. Errors are checked in this
// order: a missing user (CodeNotFound), pre (CodePreconditionFailed), a
// missing attribute (CodeNotFound).
func (w *Workspace) DeleteAttribute(ctx context.Context, userID int64, key string, pre *Precondition) (User, error) {
	var u store.User
	err := w.update(ctx, func(tx store.Tx) error {
		var attrs map[string]string
		var err error
		if u, attrs, err = w.userAttributes(tx, userID); err != nil {
			return err
		}
		if err := pre.check(true, u.Version, fmt.Sprintf("user %d", userID)); err != nil {
			return err
		}
		before, ok := attrs[key]
		if !ok {
			return notFound("attribute %q of user %d not found", key, userID)
		}
		err = tx.DeleteUserAttribute(w.slug, userID, key)
		if isNotFound(err) {
			return notFound("attribute %q of user %d not found", key, userID)
		}
		if err != nil {
			return err
		}
		return w.attributeChanged(ctx, tx, &u, key, before, nil)
	})
	if err != nil {
		return User{}, fromStore(err, "attribute")
	}
	return userFromRecord(u), nil
}
