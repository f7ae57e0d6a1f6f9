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
	setRecord(t, n.loginAttempts, a.UserID, copyLoginAttempts(a))
	return nil
}

// LoginAttempts implements store.Tx.
func (t *tx) LoginAttempts(slug string, userID int64) (store.LoginAttempts, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.LoginAttempts{}, err
	}
	return getRecord(n.loginAttempts, userID, copyLoginAttempts)
}
