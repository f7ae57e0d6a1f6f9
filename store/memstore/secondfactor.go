package memstore

import (
	"slices"

	"github.com/identitylib/identity/store"
)

// The second factors of users. The front passes PutSecondFactor only a
// positive UserID.

func copySecondFactor(f store.SecondFactor) store.SecondFactor {
	f.Secret = slices.Clone(f.Secret)
	f.CreatedAt = normTime(f.CreatedAt)
	f.ConfirmedAt = normTime(f.ConfirmedAt)
	if f.RecoveryCodes != nil {
		codes := make([][]byte, len(f.RecoveryCodes))
		for i, c := range f.RecoveryCodes {
			codes[i] = slices.Clone(c)
		}
		f.RecoveryCodes = codes
	}
	return f
}

// PutSecondFactor implements store.Tx.
func (t *tx) PutSecondFactor(slug string, f store.SecondFactor) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.secondFactors, f.UserID, copySecondFactor(f))
	return nil
}

// SecondFactor implements store.Tx.
func (t *tx) SecondFactor(slug string, userID int64) (store.SecondFactor, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.SecondFactor{}, err
	}
	return getRecord(n.secondFactors, userID, copySecondFactor)
}

// DeleteSecondFactor implements store.Tx.
func (t *tx) DeleteSecondFactor(slug string, userID int64) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.secondFactors, userID)
}
