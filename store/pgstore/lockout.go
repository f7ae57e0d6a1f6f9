package pgstore

import (
	"time"

	"github.com/identitylib/identity/store"
)

// The lockout state of users (migration 0005): one row per user, keyed
// by (workspace, user_id), its pending times a timestamptz[] in the order
// written. The front passes PutLoginAttempts only a positive UserID.

// PutLoginAttempts implements store.Tx.
func (t *tx) PutLoginAttempts(slug string, a store.LoginAttempts) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	pending := make([]time.Time, len(a.Pending)) // never nil: the column is NOT NULL
	for i, p := range a.Pending {
		pending[i] = ts(p)
	}
	tag, err := t.exec(`INSERT INTO login_attempts (workspace, user_id, failures, pending, locked_until)
		SELECT slug, $2::bigint, $3::bigint, $4::timestamptz[], $5::timestamptz
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, user_id) DO UPDATE SET failures = excluded.failures, pending = excluded.pending,
			locked_until = excluded.locked_until`,
		slug, a.UserID, a.Failures, pending, ts(a.LockedUntil))
	return t.written(tag, err, slug)
}

// LoginAttempts implements store.Tx.
func (t *tx) LoginAttempts(slug string, userID int64) (store.LoginAttempts, error) {
	if !storable(slug) {
		return store.LoginAttempts{}, notFound("workspace %q", slug)
	}
	a := store.LoginAttempts{UserID: userID}
	found, err := t.queryRow(`SELECT failures, pending, locked_until
		FROM login_attempts WHERE workspace = $1 AND user_id = $2`, []any{slug, userID},
		&a.Failures, &a.Pending, &a.LockedUntil)
	if err != nil {
		return store.LoginAttempts{}, err
	}
	if !found {
		return store.LoginAttempts{}, t.missing(slug, "login attempts of user %d", userID)
	}
	// pgx scans the elements with the connection's timestamptz codec, in
	// UTC, only because it plans them by OID; the array type it registers
	// by default holds a codec without a location, which would give local
	// times. So the elements are put in UTC here whatever pgx did.
	for i, p := range a.Pending {
		a.Pending[i] = p.UTC()
	}
	return a, nil
}
