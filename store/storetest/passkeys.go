package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// The passkeys of users and their user handles. Every record a test
// expects is written out in full. How many passkeys a user may have is
// the identity package's rule: a store holds as many as it is given.

// passkeyOf returns a passkey of the user with every field set, created
// at second n.
func passkeyOf(id string, userID int64, n int) store.Passkey {
	return store.Passkey{
		ID: id, UserID: userID, Name: "key " + id, PublicKey: []byte("cose key \x00\xff " + id), SignCount: int64(n),
		AAGUID: []byte("0123456789abcdef"), BackupEligible: true, BackupState: n%2 == 0,
		CreatedAt: at(n), LastUsedAt: at(n + 100),
	}
}

func putPasskeys(t *testing.T, s store.Store, slug string, ps ...store.Passkey) {
	t.Helper()
	putAll(t, s, "PutPasskey", slug, func(p store.Passkey) string { return p.ID },
		func(tx store.Tx, p store.Passkey) error { return tx.PutPasskey(slug, p) }, ps...)
}

func checkUserPasskeys(t *testing.T, s store.Store, slug string, userID int64, want []store.Passkey) {
	t.Helper()
	got, err := readRecord(t, s, func(tx store.Tx) ([]store.Passkey, error) { return tx.UserPasskeys(slug, userID) })
	if err != nil {
		t.Errorf("UserPasskeys(%q, %d): %v", slug, userID, err)
		return
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("UserPasskeys(%q, %d) (-want +got):\n%s", slug, userID, diff)
	}
}

// testPasskeys checks PutPasskey, Passkey, UserPasskeys, DeletePasskey,
// PutPasskeyHandle, PasskeyHandle and UserIDByPasskeyHandle.
func testPasskeys(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		// Never used: LastUsedAt zero, no AAGUID, count 0.
		fresh := store.Passkey{ID: "AQIDBA", UserID: 7, Name: "", PublicKey: []byte{1}, CreatedAt: at(1)}
		big := store.Passkey{ID: "big", UserID: 1 << 62, Name: "Ünïcode ✓", PublicKey: []byte{2}, SignCount: 1<<32 - 1,
			AAGUID: make([]byte, 16), CreatedAt: at(2), LastUsedAt: at(3)}
		putPasskeys(t, s, slugA, passkeyOf("pk-1", 7, 10), fresh, big)
		checkRecord(t, s, `Passkey("pk-1")`, store.Passkey{
			ID: "pk-1", UserID: 7, Name: "key pk-1", PublicKey: []byte("cose key \x00\xff pk-1"), SignCount: 10,
			AAGUID: []byte("0123456789abcdef"), BackupEligible: true, BackupState: true, CreatedAt: at(10), LastUsedAt: at(110),
		}, func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "pk-1") })
		checkRecord(t, s, `Passkey("AQIDBA")`, store.Passkey{ID: "AQIDBA", UserID: 7, PublicKey: []byte{1}, CreatedAt: at(1)},
			func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "AQIDBA") })
		checkRecord(t, s, `Passkey("big")`, store.Passkey{ID: "big", UserID: 1 << 62, Name: "Ünïcode ✓", PublicKey: []byte{2},
			SignCount: 1<<32 - 1, AAGUID: make([]byte, 16), CreatedAt: at(2), LastUsedAt: at(3)},
			func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "big") })
		got, err := readRecord(t, s, func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "AQIDBA") })
		if err != nil || !got.LastUsedAt.IsZero() {
			t.Errorf(`Passkey("AQIDBA") = %v, %v; want a zero LastUsedAt`, got.LastUsedAt, err)
		}
	})

	t.Run("ListByUser", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		// Written out of order; two created at the same time (ties by id).
		putPasskeys(t, s, slugA, passkeyOf("c", 7, 30), passkeyOf("b", 7, 10), passkeyOf("a", 7, 30), passkeyOf("x", 8, 5))
		putPasskeys(t, s, slugB, passkeyOf("y", 7, 1))
		checkUserPasskeys(t, s, slugA, 7, []store.Passkey{passkeyOf("b", 7, 10), passkeyOf("a", 7, 30), passkeyOf("c", 7, 30)})
		checkUserPasskeys(t, s, slugA, 8, []store.Passkey{passkeyOf("x", 8, 5)})
		checkUserPasskeys(t, s, slugA, 9, nil)
		checkUserPasskeys(t, s, slugB, 7, []store.Passkey{passkeyOf("y", 7, 1)})
		_, err := readRecord(t, s, func(tx store.Tx) ([]store.Passkey, error) { return tx.UserPasskeys(slugMissing, 7) })
		checkErr(t, "UserPasskeys in a missing workspace", err, store.ErrNotFound)
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putPasskeys(t, s, slugA, passkeyOf("pk", 7, 10))
		// Used: a new count and time, renamed.
		used := passkeyOf("pk", 7, 10)
		used.SignCount, used.LastUsedAt, used.Name, used.BackupState = 11, at(500), "Laptop", true
		putPasskeys(t, s, slugA, used)
		checkUserPasskeys(t, s, slugA, 7, []store.Passkey{used})
		// Given to another user: it leaves the first user's list.
		moved := used
		moved.UserID = 8
		putPasskeys(t, s, slugA, moved)
		checkUserPasskeys(t, s, slugA, 7, nil)
		checkUserPasskeys(t, s, slugA, 8, []store.Passkey{moved})
	})

	t.Run("WorkspaceScoped", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putPasskeys(t, s, slugA, passkeyOf("shared-looking-id", 7, 10))
		checkMissing(t, s, `Passkey(B, "shared-looking-id")`,
			func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugB, "shared-looking-id") })
		checkMissing(t, s, `Passkey(A, "")`, func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "") })
		checkMissing(t, s, `Passkey(missing)`,
			func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugMissing, "shared-looking-id") })
		// The same credential id in B is B's own record.
		putPasskeys(t, s, slugB, passkeyOf("shared-looking-id", 3, 20))
		checkRecord(t, s, `Passkey(A, "shared-looking-id")`, passkeyOf("shared-looking-id", 7, 10),
			func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "shared-looking-id") })
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutPasskey(slugMissing, passkeyOf("z", 1, 1))
			return nil
		})
		checkErr(t, "PutPasskey in a missing workspace", err, store.ErrNotFound)
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putPasskeys(t, s, slugA, passkeyOf("a", 7, 1), passkeyOf("b", 7, 2))
		putPasskeys(t, s, slugB, passkeyOf("a", 7, 1))
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.DeletePasskey(slugA, "a")
			return nil
		})
		if err != nil {
			t.Fatalf("DeletePasskey: %v", err)
		}
		checkMissing(t, s, `Passkey("a")`, func(tx store.Tx) (store.Passkey, error) { return tx.Passkey(slugA, "a") })
		checkUserPasskeys(t, s, slugA, 7, []store.Passkey{passkeyOf("b", 7, 2)})
		checkUserPasskeys(t, s, slugB, 7, []store.Passkey{passkeyOf("a", 7, 1)})
		for _, c := range []struct{ slug, id string }{{slugA, "a"}, {slugA, ""}, {slugMissing, "b"}} {
			update(t, s, func(tx store.Tx) error {
				err = tx.DeletePasskey(c.slug, c.id)
				return nil
			})
			checkErr(t, fmt.Sprintf("DeletePasskey(%q, %q)", c.slug, c.id), err, store.ErrNotFound)
		}
	})

	t.Run("Handles", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		h7 := store.PasskeyHandle{UserID: 7, Handle: []byte("\x00handle of seven\xff"), CreatedAt: at(1)}
		update(t, s, func(tx store.Tx) error { return tx.PutPasskeyHandle(slugA, h7) })
		checkRecord(t, s, "PasskeyHandle(7)", store.PasskeyHandle{UserID: 7, Handle: []byte("\x00handle of seven\xff"), CreatedAt: at(1)},
			func(tx store.Tx) (store.PasskeyHandle, error) { return tx.PasskeyHandle(slugA, 7) })
		checkRecord(t, s, "UserIDByPasskeyHandle", int64(7),
			func(tx store.Tx) (int64, error) {
				return tx.UserIDByPasskeyHandle(slugA, []byte("\x00handle of seven\xff"))
			})
		checkMissing(t, s, "PasskeyHandle(8)", func(tx store.Tx) (store.PasskeyHandle, error) { return tx.PasskeyHandle(slugA, 8) })
		checkMissing(t, s, "PasskeyHandle in B", func(tx store.Tx) (store.PasskeyHandle, error) { return tx.PasskeyHandle(slugB, 7) })
		checkMissing(t, s, "UserIDByPasskeyHandle in B",
			func(tx store.Tx) (int64, error) {
				return tx.UserIDByPasskeyHandle(slugB, []byte("\x00handle of seven\xff"))
			})
		checkMissing(t, s, "UserIDByPasskeyHandle of a prefix",
			func(tx store.Tx) (int64, error) { return tx.UserIDByPasskeyHandle(slugA, []byte("\x00handle")) })
		checkMissing(t, s, "UserIDByPasskeyHandle of nothing",
			func(tx store.Tx) (int64, error) { return tx.UserIDByPasskeyHandle(slugA, nil) })

		// Another user with the same handle: a conflict, nothing written.
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutPasskeyHandle(slugA, store.PasskeyHandle{UserID: 8, Handle: h7.Handle, CreatedAt: at(2)})
			return nil
		})
		checkErr(t, "PutPasskeyHandle of a taken handle", err, store.ErrConflict)
		checkMissing(t, s, "PasskeyHandle(8) after the conflict",
			func(tx store.Tx) (store.PasskeyHandle, error) { return tx.PasskeyHandle(slugA, 8) })
		// The same handle in another workspace is no conflict.
		update(t, s, func(tx store.Tx) error {
			return tx.PutPasskeyHandle(slugB, store.PasskeyHandle{UserID: 8, Handle: h7.Handle, CreatedAt: at(3)})
		})
		checkRecord(t, s, "UserIDByPasskeyHandle in B", int64(8),
			func(tx store.Tx) (int64, error) { return tx.UserIDByPasskeyHandle(slugB, h7.Handle) })

		// Replaced: the old handle finds nobody, the new one the user.
		update(t, s, func(tx store.Tx) error {
			return tx.PutPasskeyHandle(slugA, store.PasskeyHandle{UserID: 7, Handle: []byte("new"), CreatedAt: at(4)})
		})
		checkMissing(t, s, "UserIDByPasskeyHandle of the old handle",
			func(tx store.Tx) (int64, error) { return tx.UserIDByPasskeyHandle(slugA, h7.Handle) })
		checkRecord(t, s, "UserIDByPasskeyHandle of the new handle", int64(7),
			func(tx store.Tx) (int64, error) { return tx.UserIDByPasskeyHandle(slugA, []byte("new")) })
	})
}
