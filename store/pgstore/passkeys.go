package pgstore

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// The passkeys of users and their user handles (migration 0016): passkeys
// keyed by (workspace, id), listed by user through passkeys_user;
// passkey_handles keyed by (workspace, user_id) and unique by (workspace,
// handle). The front passes PutPasskey only a non-empty id and a positive
// UserID, and PutPasskeyHandle only a positive UserID and a non-empty
// handle.

const passkeyColumns = "id, user_id, name, public_key, sign_count, aaguid, backup_eligible, backup_state, created_at, last_used_at"

func scanPasskey(r pgx.Row) (store.Passkey, error) {
	var p store.Passkey
	err := r.Scan(&p.ID, &p.UserID, &p.Name, &p.PublicKey, &p.SignCount, &p.AAGUID, &p.BackupEligible, &p.BackupState,
		&p.CreatedAt, &p.LastUsedAt)
	return p, err
}

// PutPasskey implements store.Tx.
func (t *tx) PutPasskey(slug string, p store.Passkey) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("passkey id", p.ID, "passkey name", p.Name); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO passkeys (workspace, `+passkeyColumns+`)
		SELECT slug, $2::text, $3::bigint, $4::text, $5::bytea, $6::bigint, $7::bytea, $8::boolean, $9::boolean,
			$10::timestamptz, $11::timestamptz
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET user_id = excluded.user_id, name = excluded.name,
			public_key = excluded.public_key, sign_count = excluded.sign_count, aaguid = excluded.aaguid,
			backup_eligible = excluded.backup_eligible, backup_state = excluded.backup_state,
			created_at = excluded.created_at, last_used_at = excluded.last_used_at`,
		slug, p.ID, p.UserID, p.Name, bin(p.PublicKey), p.SignCount, bin(p.AAGUID), p.BackupEligible, p.BackupState,
		ts(p.CreatedAt), ts(p.LastUsedAt))
	return t.written(tag, err, slug)
}

// Passkey implements store.Tx.
func (t *tx) Passkey(slug, id string) (store.Passkey, error) {
	if !storable(slug) {
		return store.Passkey{}, notFound("workspace %q", slug)
	}
	if !storable(id) {
		return store.Passkey{}, t.missing(slug, "passkey %q", id)
	}
	return getRow(t, slug, t.row("SELECT "+passkeyColumns+" FROM passkeys WHERE workspace = $1 AND id = $2", slug, id),
		scanPasskey, "passkey %q", id)
}

// UserPasskeys implements store.Tx: a range scan of passkeys_user.
func (t *tx) UserPasskeys(slug string, userID int64) ([]store.Passkey, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	return listRows(t, slug, "SELECT "+passkeyColumns+" FROM passkeys WHERE workspace = $1 AND user_id = $2 ORDER BY created_at, id",
		[]any{slug, userID}, scanPasskey)
}

// DeletePasskey implements store.Tx.
func (t *tx) DeletePasskey(slug, id string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if !storable(id) {
		return t.missing(slug, "passkey %q", id)
	}
	tag, err := t.exec("DELETE FROM passkeys WHERE workspace = $1 AND id = $2", slug, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return t.missing(slug, "passkey %q", id)
	}
	return nil
}

// PutPasskeyHandle implements store.Tx. It looks for another user with
// the handle before it writes, so that a conflict fails no statement.
func (t *tx) PutPasskeyHandle(slug string, h store.PasskeyHandle) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	var owner int64
	found, err := t.queryRow("SELECT user_id FROM passkey_handles WHERE workspace = $1 AND handle = $2",
		[]any{slug, h.Handle}, &owner)
	if err != nil {
		return err
	}
	if found && owner != h.UserID {
		return fmt.Errorf("pgstore: passkey handle of user %d: %w", h.UserID, store.ErrConflict)
	}
	tag, err := t.exec(`INSERT INTO passkey_handles (workspace, user_id, handle, created_at)
		SELECT slug, $2::bigint, $3::bytea, $4::timestamptz FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, user_id) DO UPDATE SET handle = excluded.handle, created_at = excluded.created_at`,
		slug, h.UserID, h.Handle, ts(h.CreatedAt))
	return t.written(tag, err, slug)
}

// PasskeyHandle implements store.Tx.
func (t *tx) PasskeyHandle(slug string, userID int64) (store.PasskeyHandle, error) {
	if !storable(slug) {
		return store.PasskeyHandle{}, notFound("workspace %q", slug)
	}
	h := store.PasskeyHandle{UserID: userID}
	found, err := t.queryRow("SELECT handle, created_at FROM passkey_handles WHERE workspace = $1 AND user_id = $2",
		[]any{slug, userID}, &h.Handle, &h.CreatedAt)
	if err != nil {
		return store.PasskeyHandle{}, err
	}
	if !found {
		return store.PasskeyHandle{}, t.missing(slug, "passkey handle of user %d", userID)
	}
	return h, nil
}

// UserIDByPasskeyHandle implements store.Tx.
func (t *tx) UserIDByPasskeyHandle(slug string, handle []byte) (int64, error) {
	if !storable(slug) {
		return 0, notFound("workspace %q", slug)
	}
	var id int64
	found, err := t.queryRow("SELECT user_id FROM passkey_handles WHERE workspace = $1 AND handle = $2",
		[]any{slug, bin(handle)}, &id)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, t.missing(slug, "passkey handle")
	}
	return id, nil
}
