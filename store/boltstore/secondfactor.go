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
	v, err := encodeSecondFactor(f)
	if err != nil {
		return err
	}
	return sp.bucket(bucketSecondFactors).Put(idKey(f.UserID), v)
}

// SecondFactor implements store.Tx.
func (t *tx) SecondFactor(slug string, userID int64) (store.SecondFactor, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.SecondFactor{}, err
	}
	v := sp.bucket(bucketSecondFactors).Get(idKey(userID))
	if v == nil { // a record is never empty: JSON is at least "{}"
		return store.SecondFactor{}, notFound("second factor of user %d", userID)
	}
	return decodeSecondFactor(userID, v)
}

// DeleteSecondFactor implements store.Tx.
func (t *tx) DeleteSecondFactor(slug string, userID int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	b := sp.bucket(bucketSecondFactors)
	if b.Get(idKey(userID)) == nil { // a record is never empty
		return notFound("second factor of user %d", userID)
	}
	return b.Delete(idKey(userID))
}
