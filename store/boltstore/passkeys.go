package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/identitylib/identity/store"
)

// The passkeys of a workspace live in its passkeys bucket under their
// credential ids, each with an entry in user_passkeys (user id key +
// credential id, no value) that UserPasskeys and DeleteUser find them by.
// A user's handle lives in passkey_handles under the user's id key, and
// handle_users maps the handle back to the user id key. The front passes
// PutPasskey only a non-empty id and a positive UserID, and
// PutPasskeyHandle only a positive UserID and a non-empty handle.

// passkeyRecord is the stored form of store.Passkey; the credential id
// is the key. LastUsedAt is omitted while zero.
type passkeyRecord struct {
	UserID         int64  `json:"user_id"`
	Name           string `json:"name,omitempty"`
	PublicKey      []byte `json:"public_key,omitempty"`
	SignCount      int64  `json:"sign_count,omitempty"`
	AAGUID         []byte `json:"aaguid,omitempty"`
	BackupEligible bool   `json:"backup_eligible,omitempty"`
	BackupState    bool   `json:"backup_state,omitempty"`
	CreatedAt      int64  `json:"created_us"`
	LastUsedAt     *int64 `json:"last_used_us,omitempty"`
}

func encodePasskey(p store.Passkey) ([]byte, error) {
	return json.Marshal(passkeyRecord{
		UserID: p.UserID, Name: p.Name, PublicKey: p.PublicKey, SignCount: p.SignCount, AAGUID: p.AAGUID,
		BackupEligible: p.BackupEligible, BackupState: p.BackupState,
		CreatedAt: toMicros(p.CreatedAt), LastUsedAt: optMicros(p.LastUsedAt),
	})
}

func decodePasskey(k, v []byte) (store.Passkey, error) {
	var r passkeyRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.Passkey{}, fmt.Errorf("boltstore: passkey %q: %w", k, err)
	}
	return store.Passkey{
		ID: string(k), UserID: r.UserID, Name: r.Name, PublicKey: r.PublicKey, SignCount: r.SignCount, AAGUID: r.AAGUID,
		BackupEligible: r.BackupEligible, BackupState: r.BackupState,
		CreatedAt: fromMicros(r.CreatedAt), LastUsedAt: fromOptMicros(r.LastUsedAt),
	}, nil
}

// passkeyHandleRecord is the stored form of store.PasskeyHandle; the user
// id is the key.
type passkeyHandleRecord struct {
	Handle    []byte `json:"handle"`
	CreatedAt int64  `json:"created_us"`
}

func encodePasskeyHandle(h store.PasskeyHandle) ([]byte, error) {
	return json.Marshal(passkeyHandleRecord{Handle: h.Handle, CreatedAt: toMicros(h.CreatedAt)})
}

func decodePasskeyHandle(k, v []byte) (store.PasskeyHandle, error) {
	var r passkeyHandleRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.PasskeyHandle{}, fmt.Errorf("boltstore: passkey handle of user %d: %w", decodeID(k), err)
	}
	return store.PasskeyHandle{UserID: decodeID(k), Handle: r.Handle, CreatedAt: fromMicros(r.CreatedAt)}, nil
}

// userPasskeyKey is the user_passkeys key of a user's passkey.
func userPasskeyKey(userID int64, id string) []byte {
	return append(idKey(userID), id...)
}

// PutPasskey implements store.Tx.
func (t *tx) PutPasskey(slug string, p store.Passkey) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if v := sp.bucket(bucketPasskeys).Get([]byte(p.ID)); v != nil {
		old, err := decodePasskey([]byte(p.ID), v)
		if err != nil {
			return err
		}
		if err := sp.bucket(bucketUserPasskeys).Delete(userPasskeyKey(old.UserID, old.ID)); err != nil {
			return err
		}
	}
	if err := putRecord(sp.bucket(bucketPasskeys), []byte(p.ID), p, encodePasskey); err != nil {
		return err
	}
	return sp.bucket(bucketUserPasskeys).Put(userPasskeyKey(p.UserID, p.ID), nil)
}

// Passkey implements store.Tx.
func (t *tx) Passkey(slug, id string) (store.Passkey, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Passkey{}, err
	}
	if id == "" {
		return store.Passkey{}, notFound("passkey %q", id)
	}
	return getRecord(sp.bucket(bucketPasskeys), []byte(id), decodePasskey, "passkey %q", id)
}

// UserPasskeys implements store.Tx.
func (t *tx) UserPasskeys(slug string, userID int64) ([]store.Passkey, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	var out []store.Passkey
	for _, k := range prefixKeys(sp.bucket(bucketUserPasskeys), idKey(userID)) {
		id := k[idKeyLen:]
		p, err := decodePasskey(id, sp.bucket(bucketPasskeys).Get(id))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b store.Passkey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// DeletePasskey implements store.Tx.
func (t *tx) DeletePasskey(slug, id string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	p, err := t.Passkey(slug, id)
	if err != nil {
		return err
	}
	if err := sp.bucket(bucketUserPasskeys).Delete(userPasskeyKey(p.UserID, id)); err != nil {
		return err
	}
	return sp.bucket(bucketPasskeys).Delete([]byte(id))
}

// deleteUserPasskeys removes the user's passkeys and handle with their
// index entries (DeleteUser).
func (sp *space) deleteUserPasskeys(userID int64) error {
	for _, k := range prefixKeys(sp.bucket(bucketUserPasskeys), idKey(userID)) {
		if err := sp.bucket(bucketPasskeys).Delete(k[idKeyLen:]); err != nil {
			return err
		}
		if err := sp.bucket(bucketUserPasskeys).Delete(k); err != nil {
			return err
		}
	}
	if v := sp.bucket(bucketPasskeyHandles).Get(idKey(userID)); v != nil {
		h, err := decodePasskeyHandle(idKey(userID), v)
		if err != nil {
			return err
		}
		if err := sp.bucket(bucketHandleUsers).Delete(h.Handle); err != nil {
			return err
		}
		return sp.bucket(bucketPasskeyHandles).Delete(idKey(userID))
	}
	return nil
}

// PutPasskeyHandle implements store.Tx.
func (t *tx) PutPasskeyHandle(slug string, h store.PasskeyHandle) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if owner := sp.bucket(bucketHandleUsers).Get(h.Handle); owner != nil && !bytes.Equal(owner, idKey(h.UserID)) {
		return store.ErrConflict
	}
	if v := sp.bucket(bucketPasskeyHandles).Get(idKey(h.UserID)); v != nil {
		old, err := decodePasskeyHandle(idKey(h.UserID), v)
		if err != nil {
			return err
		}
		if err := sp.bucket(bucketHandleUsers).Delete(old.Handle); err != nil {
			return err
		}
	}
	if err := putRecord(sp.bucket(bucketPasskeyHandles), idKey(h.UserID), h, encodePasskeyHandle); err != nil {
		return err
	}
	return sp.bucket(bucketHandleUsers).Put(h.Handle, idKey(h.UserID))
}

// PasskeyHandle implements store.Tx.
func (t *tx) PasskeyHandle(slug string, userID int64) (store.PasskeyHandle, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.PasskeyHandle{}, err
	}
	return getRecord(sp.bucket(bucketPasskeyHandles), idKey(userID), decodePasskeyHandle, "passkey handle of user %d", userID)
}

// UserIDByPasskeyHandle implements store.Tx.
func (t *tx) UserIDByPasskeyHandle(slug string, handle []byte) (int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	if len(handle) == 0 {
		return 0, notFound("passkey handle")
	}
	v := sp.bucket(bucketHandleUsers).Get(handle)
	if v == nil {
		return 0, notFound("passkey handle")
	}
	return decodeID(v), nil
}
