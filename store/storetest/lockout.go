package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// The lockout state of users. Every record a test expects is written out
// in full; the stores must return each as it was written, Pending in the
// order written (a nil Pending may come back empty and the other way
// round).

func putLoginAttempts(t *testing.T, s store.Store, slug string, as ...store.LoginAttempts) {
	t.Helper()
	putAll(t, s, "PutLoginAttempts", slug, func(a store.LoginAttempts) string { return fmt.Sprint("user ", a.UserID) },
		func(tx store.Tx, a store.LoginAttempts) error { return tx.PutLoginAttempts(slug, a) }, as...)
}

func checkLoginAttempts(t *testing.T, s store.Store, slug string, want store.LoginAttempts) {
	t.Helper()
	checkRecord(t, s, fmt.Sprintf("LoginAttempts(%q, %d)", slug, want.UserID), want,
		func(tx store.Tx) (store.LoginAttempts, error) { return tx.LoginAttempts(slug, want.UserID) })
}

func checkNoLoginAttempts(t *testing.T, s store.Store, slug string, userID int64) {
	t.Helper()
	checkMissing(t, s, fmt.Sprintf("LoginAttempts(%q, %d)", slug, userID),
		func(tx store.Tx) (store.LoginAttempts, error) { return tx.LoginAttempts(slug, userID) })
}

// testLoginAttempts checks PutLoginAttempts and LoginAttempts.
func testLoginAttempts(t *testing.T, newStore func(t *testing.T) store.Store) {
	// A user locked out, with three attempts in flight whose reservations
	// lapse out of order: every field set.
	locked := store.LoginAttempts{
		UserID: 7, Failures: 5,
		Pending:     []time.Time{at(130), at(110), at(120)},
		LockedUntil: at(1000),
	}
	// A user with one failure and one attempt in flight, never locked.
	failing := store.LoginAttempts{
		UserID: 8, Failures: 1,
		Pending: []time.Time{at(60)},
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		// No failures, nothing in flight, never locked.
		bare := store.LoginAttempts{UserID: 9}
		// No attempt in flight, an empty (not nil) Pending, and a lock.
		idle := store.LoginAttempts{UserID: 10, Failures: 3, Pending: []time.Time{}, LockedUntil: at(500)}
		// A large id and count.
		large := store.LoginAttempts{UserID: 1 << 62, Failures: 1 << 30, Pending: []time.Time{at(2), at(1)}}
		putLoginAttempts(t, s, slugA, locked, failing, bare)
		putLoginAttempts(t, s, slugA, idle, large)
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{
			UserID: 7, Failures: 5,
			Pending:     []time.Time{at(130), at(110), at(120)},
			LockedUntil: at(1000),
		})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 1, Pending: []time.Time{at(60)}})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 9})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 10, Failures: 3, LockedUntil: at(500)})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{
			UserID: 1 << 62, Failures: 1 << 30, Pending: []time.Time{at(2), at(1)},
		})
		// A zero LockedUntil reads back zero, not 1970.
		got, err := readRecord(t, s, func(tx store.Tx) (store.LoginAttempts, error) { return tx.LoginAttempts(slugA, 8) })
		if err != nil || !got.LockedUntil.IsZero() {
			t.Errorf("LoginAttempts(%q, 8) = %v, %v; want a zero LockedUntil", slugA, got.LockedUntil, err)
		}
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putLoginAttempts(t, s, slugA, failing)
		// A second attempt reserved, then the first released as failed.
		putLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 1, Pending: []time.Time{at(60), at(70)}})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 1, Pending: []time.Time{at(60), at(70)}})
		putLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 2, Pending: []time.Time{at(70)}, LockedUntil: at(900)})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 2, Pending: []time.Time{at(70)}, LockedUntil: at(900)})
		// Unlocked and cleared: every field written again, the lock read
		// back zero.
		putLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8})
		// And set again, twice in one transaction: the last write counts.
		putLoginAttempts(t, s, slugA,
			store.LoginAttempts{UserID: 8, Failures: 9, Pending: []time.Time{at(1)}},
			store.LoginAttempts{UserID: 8, Failures: 4, Pending: []time.Time{at(30), at(10), at(20)}, LockedUntil: at(40)},
		)
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{
			UserID: 8, Failures: 4, Pending: []time.Time{at(30), at(10), at(20)}, LockedUntil: at(40),
		})
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putLoginAttempts(t, s, slugB, locked)
		checkNoLoginAttempts(t, s, slugA, 7) // only in another workspace
		checkNoLoginAttempts(t, s, slugB, 8) // an unknown user
		checkNoLoginAttempts(t, s, slugB, 0)
		checkNoLoginAttempts(t, s, slugB, -7)
		checkNoLoginAttempts(t, s, slugMissing, 7)
		checkLoginAttempts(t, s, slugB, store.LoginAttempts{
			UserID: 7, Failures: 5,
			Pending:     []time.Time{at(130), at(110), at(120)},
			LockedUntil: at(1000),
		})
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var errs [2]error
		update(t, s, func(tx store.Tx) error {
			errs[0] = tx.PutLoginAttempts(slugMissing, locked)
			_, errs[1] = tx.LoginAttempts(slugMissing, 7)
			return nil // commit: the refused put must have written nothing
		})
		for i, name := range []string{"PutLoginAttempts", "LoginAttempts"} {
			checkErr(t, name+" in a missing workspace", errs[i], store.ErrNotFound)
		}
		checkNoLoginAttempts(t, s, slugMissing, 7)
		checkNoLoginAttempts(t, s, slugA, 7)
	})

	t.Run("Isolation", func(t *testing.T) {
		// One user id in two workspaces names two users; two users of one
		// workspace have a state each.
		s := newStoreWith(t, newStore, slugA, slugB)
		putLoginAttempts(t, s, slugA, locked, failing)
		putLoginAttempts(t, s, slugB, store.LoginAttempts{UserID: 7, Failures: 2, Pending: []time.Time{at(5)}})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{
			UserID: 7, Failures: 5,
			Pending:     []time.Time{at(130), at(110), at(120)},
			LockedUntil: at(1000),
		})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 1, Pending: []time.Time{at(60)}})
		checkLoginAttempts(t, s, slugB, store.LoginAttempts{UserID: 7, Failures: 2, Pending: []time.Time{at(5)}})
		checkNoLoginAttempts(t, s, slugB, 8)
		// Clearing one user's state leaves the other user's, and the same
		// user's in the other workspace, alone.
		putLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 7})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 7})
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 1, Pending: []time.Time{at(60)}})
		checkLoginAttempts(t, s, slugB, store.LoginAttempts{UserID: 7, Failures: 2, Pending: []time.Time{at(5)}})
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putLoginAttempts(t, s, slugA, failing)
		var seen store.LoginAttempts
		err := s.Update(t.Context(), func(tx store.Tx) error {
			for _, w := range []struct {
				slug string
				a    store.LoginAttempts
			}{
				{slugA, store.LoginAttempts{UserID: 8, Failures: 6, Pending: []time.Time{at(99), at(98)}, LockedUntil: at(999)}},
				{slugA, locked},
				{slugB, locked},
			} {
				if err := tx.PutLoginAttempts(w.slug, w.a); err != nil {
					return err
				}
			}
			var err error
			if seen, err = tx.LoginAttempts(slugA, 8); err != nil { // the transaction sees its own write
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		if diff := cmp.Diff(store.LoginAttempts{
			UserID: 8, Failures: 6, Pending: []time.Time{at(99), at(98)}, LockedUntil: at(999),
		}, seen, equateEmpty); diff != "" {
			t.Errorf("LoginAttempts inside the Update mismatch (-want +got):\n%s", diff)
		}
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 8, Failures: 1, Pending: []time.Time{at(60)}})
		checkNoLoginAttempts(t, s, slugA, 7)
		checkNoLoginAttempts(t, s, slugB, 7)
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		a := store.LoginAttempts{UserID: 7, Failures: 2, Pending: []time.Time{at(20), at(10)}}
		putLoginAttempts(t, s, slugA, a)
		a.Pending[0] = at(999)
		got, err := readRecord(t, s, func(tx store.Tx) (store.LoginAttempts, error) { return tx.LoginAttempts(slugA, 7) })
		if err != nil || len(got.Pending) != 2 {
			t.Fatalf("LoginAttempts = %v, %v; want two pending times", got, err)
		}
		got.Pending[1] = at(999)
		checkLoginAttempts(t, s, slugA, store.LoginAttempts{UserID: 7, Failures: 2, Pending: []time.Time{at(20), at(10)}})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putLoginAttempts(t, s, slugA, store.LoginAttempts{
			UserID: 7, Failures: 5,
			Pending:     []time.Time{at(130).In(utcMinus3), at(110).In(utcMinus3), at(120).In(utcMinus3)},
			LockedUntil: at(1000).In(utcMinus3),
		})
		got, err := readRecord(t, s, func(tx store.Tx) (store.LoginAttempts, error) { return tx.LoginAttempts(slugA, 7) })
		if err != nil {
			t.Fatalf("LoginAttempts: %v", err)
		}
		checkUTC(t, "LoginAttempts", append([]time.Time{got.LockedUntil}, got.Pending...)...)
		want := store.LoginAttempts{
			UserID: 7, Failures: 5,
			Pending:     []time.Time{at(130), at(110), at(120)},
			LockedUntil: at(1000),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LoginAttempts mismatch (-want +got):\n%s", diff)
		}
	})
}
