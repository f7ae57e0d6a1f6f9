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
	v, err := encodeLoginAttempts(a)
	if err != nil {
		return err
	}
	return sp.bucket(bucketLoginAttempts).Put(idKey(a.UserID), v)
}

// LoginAttempts implements store.Tx.
func (t *tx) LoginAttempts(slug string, userID int64) (store.LoginAttempts, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.LoginAttempts{}, err
	}
	v := sp.bucket(bucketLoginAttempts).Get(idKey(userID))
	if v == nil { // a record is never empty: JSON is at least "{}"
		return store.LoginAttempts{}, notFound("login attempts of user %d", userID)
	}
	return decodeLoginAttempts(userID, v)
}
