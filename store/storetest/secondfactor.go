package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// The second factors of users. Every record a test expects is written out
// in full; the stores must return each as it was written, RecoveryCodes in
// the order written (an empty RecoveryCodes may come back nil and the
// other way round).

func putSecondFactors(t *testing.T, s store.Store, slug string, fs ...store.SecondFactor) {
	t.Helper()
	putAll(t, s, "PutSecondFactor", slug, func(f store.SecondFactor) string { return fmt.Sprint("user ", f.UserID) },
		func(tx store.Tx, f store.SecondFactor) error { return tx.PutSecondFactor(slug, f) }, fs...)
}

func checkSecondFactor(t *testing.T, s store.Store, slug string, want store.SecondFactor) {
	t.Helper()
	checkRecord(t, s, fmt.Sprintf("SecondFactor(%q, %d)", slug, want.UserID), want,
		func(tx store.Tx) (store.SecondFactor, error) { return tx.SecondFactor(slug, want.UserID) })
}

func checkNoSecondFactor(t *testing.T, s store.Store, slug string, userID int64) {
	t.Helper()
	checkMissing(t, s, fmt.Sprintf("SecondFactor(%q, %d)", slug, userID),
		func(tx store.Tx) (store.SecondFactor, error) { return tx.SecondFactor(slug, userID) })
}

// deleteSecondFactor runs DeleteSecondFactor in an Update of its own and
// returns its error; the Update commits whatever it returned.
func deleteSecondFactor(t *testing.T, s store.Store, slug string, userID int64) error {
	t.Helper()
	var err error
	update(t, s, func(tx store.Tx) error {
		err = tx.DeleteSecondFactor(slug, userID)
		return nil
	})
	return err
}

// testSecondFactors checks PutSecondFactor, SecondFactor and
// DeleteSecondFactor.
func testSecondFactors(t *testing.T, newStore func(t *testing.T) store.Store) {
	// A confirmed factor that has accepted a code, with two recovery
	// codes: every field set.
	confirmed := store.SecondFactor{
		UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
		CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
		RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
	}
	// An enrolment waiting for its first code: not confirmed, no step, no
	// recovery codes (nil).
	enrolling := store.SecondFactor{UserID: 8, Secret: []byte("enrolment secret"), CreatedAt: at(30)}

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		// Confirmed, every recovery code used: an empty (not nil) list.
		spent := store.SecondFactor{
			UserID: 9, Secret: []byte("s"), Confirmed: true, CreatedAt: at(1), ConfirmedAt: at(2), LastStep: 1,
			RecoveryCodes: [][]byte{},
		}
		// A large id and step, and one recovery code.
		large := store.SecondFactor{
			UserID: 1 << 62, Secret: []byte{0}, Confirmed: true, CreatedAt: at(3), ConfirmedAt: at(3),
			LastStep: 1 << 62, RecoveryCodes: [][]byte{[]byte("only")},
		}
		putSecondFactors(t, s, slugA, confirmed, enrolling)
		putSecondFactors(t, s, slugA, spent, large)
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("enrolment secret"), CreatedAt: at(30)})
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 9, Secret: []byte("s"), Confirmed: true, CreatedAt: at(1), ConfirmedAt: at(2), LastStep: 1,
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 1 << 62, Secret: []byte{0}, Confirmed: true, CreatedAt: at(3), ConfirmedAt: at(3),
			LastStep: 1 << 62, RecoveryCodes: [][]byte{[]byte("only")},
		})
		// A zero ConfirmedAt reads back zero, not 1970.
		got, err := readRecord(t, s, func(tx store.Tx) (store.SecondFactor, error) { return tx.SecondFactor(slugA, 8) })
		if err != nil || !got.ConfirmedAt.IsZero() {
			t.Errorf("SecondFactor(%q, 8) = %v, %v; want a zero ConfirmedAt", slugA, got.ConfirmedAt, err)
		}
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putSecondFactors(t, s, slugA, enrolling)
		// The enrolment confirmed with its first code, recovery codes
		// issued.
		putSecondFactors(t, s, slugA, store.SecondFactor{
			UserID: 8, Secret: []byte("enrolment secret"), Confirmed: true, CreatedAt: at(30), ConfirmedAt: at(40),
			LastStep: 100, RecoveryCodes: [][]byte{[]byte("c1"), []byte("c2"), []byte("c3")},
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 8, Secret: []byte("enrolment secret"), Confirmed: true, CreatedAt: at(30), ConfirmedAt: at(40),
			LastStep: 100, RecoveryCodes: [][]byte{[]byte("c1"), []byte("c2"), []byte("c3")},
		})
		// A recovery code used: the others stay, in their order.
		putSecondFactors(t, s, slugA, store.SecondFactor{
			UserID: 8, Secret: []byte("enrolment secret"), Confirmed: true, CreatedAt: at(30), ConfirmedAt: at(40),
			LastStep: 100, RecoveryCodes: [][]byte{[]byte("c1"), []byte("c3")},
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 8, Secret: []byte("enrolment secret"), Confirmed: true, CreatedAt: at(30), ConfirmedAt: at(40),
			LastStep: 100, RecoveryCodes: [][]byte{[]byte("c1"), []byte("c3")},
		})
		// A new enrolment over the old factor: every field written again,
		// ConfirmedAt read back zero and the codes none.
		putSecondFactors(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("new secret"), CreatedAt: at(50)})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("new secret"), CreatedAt: at(50)})
		// And twice in one transaction: the last write counts.
		putSecondFactors(t, s, slugA,
			store.SecondFactor{UserID: 8, Secret: []byte("x"), Confirmed: true, CreatedAt: at(60), ConfirmedAt: at(61), LastStep: 7},
			store.SecondFactor{
				UserID: 8, Secret: []byte("new secret"), Confirmed: true, CreatedAt: at(50), ConfirmedAt: at(70),
				LastStep: 200, RecoveryCodes: [][]byte{[]byte("d2"), []byte("d1")},
			},
		)
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 8, Secret: []byte("new secret"), Confirmed: true, CreatedAt: at(50), ConfirmedAt: at(70),
			LastStep: 200, RecoveryCodes: [][]byte{[]byte("d2"), []byte("d1")},
		})
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putSecondFactors(t, s, slugB, confirmed)
		checkNoSecondFactor(t, s, slugA, 7) // only in another workspace
		checkNoSecondFactor(t, s, slugB, 8) // a user without one
		checkNoSecondFactor(t, s, slugB, 0)
		checkNoSecondFactor(t, s, slugB, -7)
		checkNoSecondFactor(t, s, slugMissing, 7)
		checkSecondFactor(t, s, slugB, store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		})
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putSecondFactors(t, s, slugA, confirmed, enrolling)
		putSecondFactors(t, s, slugB, confirmed)
		checkErr(t, "DeleteSecondFactor(7)", deleteSecondFactor(t, s, slugA, 7), nil)
		checkNoSecondFactor(t, s, slugA, 7)
		// The other user's and the same user's in another workspace stay.
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("enrolment secret"), CreatedAt: at(30)})
		checkSecondFactor(t, s, slugB, store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		})
		// Deleting what is not there: gone already, never there, an id no
		// user has.
		for _, id := range []int64{7, 9, 0, -7} {
			checkErr(t, fmt.Sprintf("DeleteSecondFactor(%d) of none", id), deleteSecondFactor(t, s, slugA, id), store.ErrNotFound)
		}
		// A user enrols again after a delete.
		putSecondFactors(t, s, slugA, store.SecondFactor{UserID: 7, Secret: []byte("again"), CreatedAt: at(90)})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 7, Secret: []byte("again"), CreatedAt: at(90)})
		// Put and delete in one transaction leave none.
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutSecondFactor(slugA, store.SecondFactor{UserID: 10, Secret: []byte("brief"), CreatedAt: at(5)}); err != nil {
				return err
			}
			return tx.DeleteSecondFactor(slugA, 10)
		})
		checkNoSecondFactor(t, s, slugA, 10)
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putSecondFactors(t, s, slugA, confirmed)
		var errs [3]error
		update(t, s, func(tx store.Tx) error {
			errs[0] = tx.PutSecondFactor(slugMissing, enrolling)
			_, errs[1] = tx.SecondFactor(slugMissing, 7)
			errs[2] = tx.DeleteSecondFactor(slugMissing, 7)
			return nil // commit: the refused calls must have written nothing
		})
		for i, name := range []string{"PutSecondFactor", "SecondFactor", "DeleteSecondFactor"} {
			checkErr(t, name+" in a missing workspace", errs[i], store.ErrNotFound)
		}
		checkNoSecondFactor(t, s, slugMissing, 8)
		checkNoSecondFactor(t, s, slugA, 8)
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		})
	})

	t.Run("Isolation", func(t *testing.T) {
		// One user id in two workspaces names two users; two users of one
		// workspace have a factor each.
		s := newStoreWith(t, newStore, slugA, slugB)
		putSecondFactors(t, s, slugA, confirmed, enrolling)
		putSecondFactors(t, s, slugB, store.SecondFactor{
			UserID: 7, Secret: []byte("globex secret"), Confirmed: true, CreatedAt: at(5), ConfirmedAt: at(6),
			LastStep: 3, RecoveryCodes: [][]byte{[]byte("g1")},
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("enrolment secret"), CreatedAt: at(30)})
		checkSecondFactor(t, s, slugB, store.SecondFactor{
			UserID: 7, Secret: []byte("globex secret"), Confirmed: true, CreatedAt: at(5), ConfirmedAt: at(6),
			LastStep: 3, RecoveryCodes: [][]byte{[]byte("g1")},
		})
		checkNoSecondFactor(t, s, slugB, 8)
		// Replacing one user's factor leaves the other user's, and the same
		// user's in the other workspace, alone.
		putSecondFactors(t, s, slugA, store.SecondFactor{UserID: 7, Secret: []byte("replaced"), CreatedAt: at(99)})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 7, Secret: []byte("replaced"), CreatedAt: at(99)})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("enrolment secret"), CreatedAt: at(30)})
		checkSecondFactor(t, s, slugB, store.SecondFactor{
			UserID: 7, Secret: []byte("globex secret"), Confirmed: true, CreatedAt: at(5), ConfirmedAt: at(6),
			LastStep: 3, RecoveryCodes: [][]byte{[]byte("g1")},
		})
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putSecondFactors(t, s, slugA, confirmed, enrolling)
		var seen store.SecondFactor
		var seenErr error
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutSecondFactor(slugA, store.SecondFactor{
				UserID: 8, Secret: []byte("enrolment secret"), Confirmed: true, CreatedAt: at(30), ConfirmedAt: at(31),
				LastStep: 9, RecoveryCodes: [][]byte{[]byte("r1")},
			}); err != nil {
				return err
			}
			if err := tx.DeleteSecondFactor(slugA, 7); err != nil {
				return err
			}
			if err := tx.PutSecondFactor(slugB, confirmed); err != nil {
				return err
			}
			var err error
			if seen, err = tx.SecondFactor(slugA, 8); err != nil { // the transaction sees its own writes
				return err
			}
			_, seenErr = tx.SecondFactor(slugA, 7)
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		if diff := cmp.Diff(store.SecondFactor{
			UserID: 8, Secret: []byte("enrolment secret"), Confirmed: true, CreatedAt: at(30), ConfirmedAt: at(31),
			LastStep: 9, RecoveryCodes: [][]byte{[]byte("r1")},
		}, seen, equateEmpty); diff != "" {
			t.Errorf("SecondFactor inside the Update mismatch (-want +got):\n%s", diff)
		}
		checkErr(t, "SecondFactor(7) inside the Update after its delete", seenErr, store.ErrNotFound)
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		})
		checkSecondFactor(t, s, slugA, store.SecondFactor{UserID: 8, Secret: []byte("enrolment secret"), CreatedAt: at(30)})
		checkNoSecondFactor(t, s, slugB, 7)
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		f := store.SecondFactor{
			UserID: 7, Secret: []byte("secret"), Confirmed: true, CreatedAt: at(1), ConfirmedAt: at(2),
			RecoveryCodes: [][]byte{[]byte("c1"), []byte("c2")},
		}
		putSecondFactors(t, s, slugA, f)
		f.Secret[0] = 'X'
		f.RecoveryCodes[0][0] = 'X'
		f.RecoveryCodes[1] = []byte("changed")
		got, err := readRecord(t, s, func(tx store.Tx) (store.SecondFactor, error) { return tx.SecondFactor(slugA, 7) })
		if err != nil || len(got.Secret) == 0 || len(got.RecoveryCodes) != 2 || len(got.RecoveryCodes[0]) == 0 {
			t.Fatalf("SecondFactor = %v, %v; want a secret and two recovery codes", got, err)
		}
		got.Secret[0] = 'Y'
		got.RecoveryCodes[0][0] = 'Y'
		got.RecoveryCodes[1] = []byte("changed")
		checkSecondFactor(t, s, slugA, store.SecondFactor{
			UserID: 7, Secret: []byte("secret"), Confirmed: true, CreatedAt: at(1), ConfirmedAt: at(2),
			RecoveryCodes: [][]byte{[]byte("c1"), []byte("c2")},
		})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putSecondFactors(t, s, slugA, store.SecondFactor{
			UserID: 7, Secret: []byte("secret"), Confirmed: true,
			CreatedAt: at(10).In(utcMinus3), ConfirmedAt: at(20).In(utcMinus3),
		})
		got, err := readRecord(t, s, func(tx store.Tx) (store.SecondFactor, error) { return tx.SecondFactor(slugA, 7) })
		if err != nil {
			t.Fatalf("SecondFactor: %v", err)
		}
		checkUTC(t, "SecondFactor", got.CreatedAt, got.ConfirmedAt)
		want := store.SecondFactor{UserID: 7, Secret: []byte("secret"), Confirmed: true, CreatedAt: at(10), ConfirmedAt: at(20)}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("SecondFactor mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("FrontRefusals", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putSecondFactors(t, s, slugA, confirmed)
		want := store.SecondFactor{
			UserID: 7, Secret: []byte("sealed totp secret \x00\xff"), Confirmed: true,
			CreatedAt: at(10), ConfirmedAt: at(20), LastStep: 57_123_456,
			RecoveryCodes: [][]byte{[]byte("hash-of-code-1\x00\xff"), []byte("hash-of-code-2")},
		}

		// A user id below 1 is refused, and nothing is written.
		var refused [2]error
		update(t, s, func(tx store.Tx) error {
			refused[0] = tx.PutSecondFactor(slugA, store.SecondFactor{UserID: 0, Secret: []byte("s"), CreatedAt: at(1)})
			refused[1] = tx.PutSecondFactor(slugA, store.SecondFactor{UserID: -7, Secret: []byte("s"), CreatedAt: at(1)})
			return nil // commit: the refused puts must have written nothing
		})
		for i, id := range []int64{0, -7} {
			if refused[i] == nil {
				t.Errorf("PutSecondFactor(user %d) succeeded, want an error", id)
			}
			checkNoSecondFactor(t, s, slugA, id)
		}

		// The writes in a View are refused; the read is not.
		var inView [3]error
		view(t, s, func(tx store.Tx) error {
			inView[0] = tx.PutSecondFactor(slugA, store.SecondFactor{UserID: 7, Secret: []byte("ro"), CreatedAt: at(1)})
			inView[1] = tx.DeleteSecondFactor(slugA, 7)
			_, inView[2] = tx.SecondFactor(slugA, 7)
			return nil
		})
		checkErr(t, "PutSecondFactor in View", inView[0], store.ErrReadOnly)
		checkErr(t, "DeleteSecondFactor in View", inView[1], store.ErrReadOnly)
		checkErr(t, "SecondFactor in View", inView[2], nil)
		checkSecondFactor(t, s, slugA, want)

		// A Tx used after its function returned refuses every method.
		var fromView, fromUpdate store.Tx
		view(t, s, func(tx store.Tx) error { fromView = tx; return nil })
		update(t, s, func(tx store.Tx) error { fromUpdate = tx; return nil })
		for _, c := range []struct {
			name string
			fn   func(tx store.Tx) error
		}{
			{"PutSecondFactor", func(tx store.Tx) error {
				return tx.PutSecondFactor(slugA, store.SecondFactor{UserID: 7, Secret: []byte("late"), CreatedAt: at(1)})
			}},
			{"SecondFactor", func(tx store.Tx) error { _, err := tx.SecondFactor(slugA, 7); return err }},
			{"DeleteSecondFactor", func(tx store.Tx) error { return tx.DeleteSecondFactor(slugA, 7) }},
		} {
			checkErr(t, c.name+" after View returned", c.fn(fromView), store.ErrTxDone)
			checkErr(t, c.name+" after Update returned", c.fn(fromUpdate), store.ErrTxDone)
		}
		checkSecondFactor(t, s, slugA, want)
	})
}
