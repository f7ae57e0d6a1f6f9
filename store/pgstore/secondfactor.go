package pgstore

import (
	"github.com/identitylib/identity/store"
)

// The second factors of users (migration 0006): one row per user, keyed
// by (workspace, user_id), its recovery codes a bytea[] in the order
// written. The front passes PutSecondFactor only a positive UserID.

// PutSecondFactor implements store.Tx.
func (t *tx) PutSecondFactor(slug string, f store.SecondFactor) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	codes := make([][]byte, len(f.RecoveryCodes)) // never nil, nor an element: the column is NOT NULL
	for i, c := range f.RecoveryCodes {
		codes[i] = bin(c)
	}
	tag, err := t.exec(`INSERT INTO second_factors (workspace, user_id, secret, confirmed, created_at, confirmed_at,
			last_step, recovery_codes)
		SELECT slug, $2::bigint, $3::bytea, $4::boolean, $5::timestamptz, $6::timestamptz, $7::bigint, $8::bytea[]
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, user_id) DO UPDATE SET secret = excluded.secret, confirmed = excluded.confirmed,
			created_at = excluded.created_at, confirmed_at = excluded.confirmed_at, last_step = excluded.last_step,
			recovery_codes = excluded.recovery_codes`,
		slug, f.UserID, bin(f.Secret), f.Confirmed, ts(f.CreatedAt), ts(f.ConfirmedAt), f.LastStep, codes)
	return t.written(tag, err, slug)
}

// SecondFactor implements store.Tx.
func (t *tx) SecondFactor(slug string, userID int64) (store.SecondFactor, error) {
	if !storable(slug) {
		return store.SecondFactor{}, notFound("workspace %q", slug)
	}
	f := store.SecondFactor{UserID: userID}
	found, err := t.queryRow(`SELECT secret, confirmed, created_at, confirmed_at, last_step, recovery_codes
		FROM second_factors WHERE workspace = $1 AND user_id = $2`, []any{slug, userID},
		&f.Secret, &f.Confirmed, &f.CreatedAt, &f.ConfirmedAt, &f.LastStep, &f.RecoveryCodes)
	if err != nil {
		return store.SecondFactor{}, err
	}
	if !found {
		return store.SecondFactor{}, t.missing(slug, "second factor of user %d", userID)
	}
	return f, nil
}

// DeleteSecondFactor implements store.Tx.
func (t *tx) DeleteSecondFactor(slug string, userID int64) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	tag, err := t.exec("DELETE FROM second_factors WHERE workspace = $1 AND user_id = $2", slug, userID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return t.missing(slug, "second factor of user %d", userID)
	}
	return nil
}
