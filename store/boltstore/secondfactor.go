package boltstore

import (
	"github.com/identitylib/identity/store"
)

// The second factor of each user lives in the workspace's second_factors
// bucket under the user's id key. The store front passes PutSecondFactor
// only a positive UserID.

// PutSecondFactor implements store.Tx.
func (t *tx) PutSecondFactor(slug string, f store.SecondFactor) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return putRecord(sp.bucket(bucketSecondFactors), idKey(f.UserID), f, encodeSecondFactor)
}

// SecondFactor implements store.Tx.
func (t *tx) SecondFactor(slug string, userID int64) (store.SecondFactor, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.SecondFactor{}, err
	}
	return getRecord(sp.bucket(bucketSecondFactors), idKey(userID), decodeSecondFactor, "second factor of user %d", userID)
}

// DeleteSecondFactor implements store.Tx.
func (t *tx) DeleteSecondFactor(slug string, userID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return deleteRecord(sp.bucket(bucketSecondFactors), idKey(userID), "second factor of user %d", userID)
}
