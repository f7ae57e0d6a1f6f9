package memstore

import (
	"time"

	"github.com/identitylib/identity/store"
)

// The lockout state of users. The front passes PutLoginAttempts only a
// positive UserID.

func copyLoginAttempts(a store.LoginAttempts) store.LoginAttempts {
	if a.Pending != nil {
		pending := make([]time.Time, len(a.Pending))
		for i, p := range a.Pending {
			pending[i] = normTime(p)
		}
		a.Pending = pending
	}
	a.LockedUntil = normTime(a.LockedUntil)
	return a
}

// PutLoginAttempts implements store.Tx.
func (t *tx) PutLoginAttempts(slug string, a store.LoginAttempts) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	a = copyLoginAttempts(a)
	old, had := n.loginAttempts[a.UserID]
	n.loginAttempts[a.UserID] = a
	t.onUndo(func() {
		if had {
			n.loginAttempts[a.UserID] = old
		} else {
			delete(n.loginAttempts, a.UserID)
		}
	})
	return nil
}

// LoginAttempts implements store.Tx.
func (t *tx) LoginAttempts(slug string, userID int64) (store.LoginAttempts, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.LoginAttempts{}, err
	}
	a, ok := n.loginAttempts[userID]
	if !ok {
		return store.LoginAttempts{}, store.ErrNotFound
	}
	return copyLoginAttempts(a), nil
}
