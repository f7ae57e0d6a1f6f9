package identity

import (
	"context"

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

// SetAttribute creates or replaces one attribute of the user. The key has
// 1-64 characters, none of them NUL or a bidirectional control; the value
// 0-1024 characters but NUL.
func (w *Workspace) SetAttribute(ctx context.Context, userID int64, key, value string) error {
	var p problems
	checkAttributeKey(&p, "key", key)
	checkAttributeValue(&p, "value", value)
	if err := p.err("invalid attribute"); err != nil {
		return err
	}
	err := w.update(ctx, func(tx store.Tx) error {
		attrs, err := w.userAttributes(tx, userID)
		if err != nil {
			return err
		}
		if err := w.checkAttributeRoom(tx, userID, attrs, key); err != nil {
			return err
		}
		return tx.PutUserAttribute(w.slug, userID, key, value)
	})
	return fromStore(err, "user")
}

// userAttributes returns the attributes of the user, or a not-found error
// when the user does not exist. A store that implements store.Bulk reads
// the user and its attributes in one request.
func (w *Workspace) userAttributes(tx store.Tx, userID int64) (map[string]string, error) {
	if bulk, ok := bulkOf(tx); ok && userID > 0 {
		_, attrs, err := bulk.UserWithAttributes(w.slug, userID)
		if isNotFound(err) {
			return nil, notFound("user %d not found", userID)
		}
		return attrs, err
	}
	if _, err := w.user(tx, userID); err != nil {
		return nil, err
	}
	return tx.UserAttributes(w.slug, userID)
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

// DeleteAttribute removes one attribute of the user; a claim mapped from
// it no longer appears in Claims. A missing user or attribute is a
// not-found error.
func (w *Workspace) DeleteAttribute(ctx context.Context, userID int64, key string) error {
	err := w.update(ctx, func(tx store.Tx) error {
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		err := tx.DeleteUserAttribute(w.slug, userID, key)
		if isNotFound(err) {
			return notFound("attribute %q of user %d not found", key, userID)
		}
		return err
	})
	return fromStore(err, "attribute")
}
