package memstore

import (
	"cmp"
	"slices"

	"github.com/identitylib/identity/store"
)

// The passkeys of users, by credential id, and their user handles, by
// user and by handle. UserPasskeys scans the workspace's passkeys (see the
// package documentation). The front passes PutPasskey only a non-empty id
// and a positive UserID, and PutPasskeyHandle only a positive UserID and a
// non-empty handle.

func copyPasskey(p store.Passkey) store.Passkey {
	p.PublicKey = slices.Clone(p.PublicKey)
	p.AAGUID = slices.Clone(p.AAGUID)
	p.CreatedAt = normTime(p.CreatedAt)
	p.LastUsedAt = normTime(p.LastUsedAt)
	return p
}

func copyPasskeyHandle(h store.PasskeyHandle) store.PasskeyHandle {
	h.Handle = slices.Clone(h.Handle)
	h.CreatedAt = normTime(h.CreatedAt)
	return h
}

// PutPasskey implements store.Tx.
func (t *tx) PutPasskey(slug string, p store.Passkey) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.passkeys, p.ID, copyPasskey(p))
	return nil
}

// Passkey implements store.Tx.
func (t *tx) Passkey(slug, id string) (store.Passkey, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Passkey{}, err
	}
	return getRecord(n.passkeys, id, copyPasskey)
}

// UserPasskeys implements store.Tx.
func (t *tx) UserPasskeys(slug string, userID int64) ([]store.Passkey, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	var out []store.Passkey
	for _, p := range n.passkeys {
		if p.UserID == userID {
			out = append(out, copyPasskey(p))
		}
	}
	slices.SortFunc(out, func(a, b store.Passkey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// DeletePasskey implements store.Tx.
func (t *tx) DeletePasskey(slug, id string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.passkeys, id)
}

// PutPasskeyHandle implements store.Tx.
func (t *tx) PutPasskeyHandle(slug string, h store.PasskeyHandle) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	if owner, ok := n.byHandle[string(h.Handle)]; ok && owner != h.UserID {
		return store.ErrConflict
	}
	if old, ok := n.passkeyHandles[h.UserID]; ok {
		if err := deleteRecord(t, n.byHandle, string(old.Handle)); err != nil {
			return err
		}
	}
	setRecord(t, n.passkeyHandles, h.UserID, copyPasskeyHandle(h))
	setRecord(t, n.byHandle, string(h.Handle), h.UserID)
	return nil
}

// PasskeyHandle implements store.Tx.
func (t *tx) PasskeyHandle(slug string, userID int64) (store.PasskeyHandle, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.PasskeyHandle{}, err
	}
	return getRecord(n.passkeyHandles, userID, copyPasskeyHandle)
}

// UserIDByPasskeyHandle implements store.Tx.
func (t *tx) UserIDByPasskeyHandle(slug string, handle []byte) (int64, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	id, ok := n.byHandle[string(handle)]
	if !ok {
		return 0, store.ErrNotFound
	}
	return id, nil
}
