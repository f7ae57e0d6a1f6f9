package boltstore

import (
	"github.com/identitylib/identity/store"
)

// The lockout state of each user lives in the workspace's login_attempts
// bucket under the user's id key. The store front passes PutLoginAttempts
// only a positive UserID.

// PutLoginAttempts implements store.Tx.
func (t *tx) PutLoginAttempts(slug string, a store.LoginAttempts) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return putRecord(sp.bucket(bucketLoginAttempts), idKey(a.UserID), a, encodeLoginAttempts)
}

// LoginAttempts implements store.Tx.
func (t *tx) LoginAttempts(slug string, userID int64) (store.LoginAttempts, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.LoginAttempts{}, err
	}
	return getRecord(sp.bucket(bucketLoginAttempts), idKey(userID), decodeLoginAttempts, "login attempts of user %d", userID)
}
