package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// Retention: DeleteFinishedDeliveries, DeleteEndedSessions and
// DeleteExpiredTokens. Each test writes records with chosen times, sweeps
// with a sequence of (before, limit) and checks what each sweep removed
// and what remains; then it writes new records under the ids swept and
// deletes user 1, which must leave them: an index entry a sweep left
// behind would name them as user 1's.

// sweepCall runs one sweep method in an Update of its own.
func sweepCall(t *testing.T, s store.Store, fn func(tx store.Tx) (int, error)) int {
	t.Helper()
	var n int
	update(t, s, func(tx store.Tx) (err error) {
		n, err = fn(tx)
		return err
	})
	return n
}

// finished returns the delivery with the status, last attempted at
// at(when) (never attempted when when is 0).
func finished(d store.Delivery, status store.DeliveryStatus, when int) store.Delivery {
	d.Status, d.LastAttemptAt, d.LeaseUntil, d.LeaseOwner = status, time.Time{}, time.Time{}, ""
	if when != 0 {
		d.LastAttemptAt = at(when)
	}
	return d
}

// testSweep checks the sweep methods.
func testSweep(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Deliveries", func(t *testing.T) { testSweepDeliveries(t, newStore) })
	t.Run("Sessions", func(t *testing.T) { testSweepSessions(t, newStore) })
	t.Run("Tokens", func(t *testing.T) { testSweepTokens(t, newStore) })
	t.Run("MissingWorkspace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error {
			_, err := tx.DeleteFinishedDeliveries(slugMissing, store.JobWebhook, store.DeliverySucceeded, forever, 10)
			checkErr(t, "DeleteFinishedDeliveries", err, store.ErrNotFound)
			_, err = tx.DeleteEndedSessions(slugMissing, forever, 10)
			checkErr(t, "DeleteEndedSessions", err, store.ErrNotFound)
			_, err = tx.DeleteExpiredTokens(slugMissing, forever, 10)
			checkErr(t, "DeleteExpiredTokens", err, store.ErrNotFound)
			return nil
		})
	})
}

// otherWorkspace writes writeUserRecords into slugB and returns what it
// holds, which no sweep of slugA may change.
func otherWorkspace(t *testing.T, s store.Store) heldRecords {
	t.Helper()
	update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugB) })
	return held(t, s, slugB)
}

func testSweepDeliveries(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	other := otherWorkspace(t, s)
	update(t, s, func(tx store.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.PutUser(slugA, user(1, "alice", "alice@example.com", "Alice")) },
			func() error { return tx.PutUser(slugA, user(2, "bob", "bob@example.com", "Bob")) },
			func() error { return tx.PutWebhook(slugA, webhook(1)) },
			func() error { return tx.PutDelivery(slugA, finished(delivery(1, 1), store.DeliverySucceeded, 100)) },
			func() error { return tx.PutDelivery(slugA, finished(delivery(2, 1), store.DeliverySucceeded, 200)) },
			func() error { return tx.PutDelivery(slugA, finished(delivery(3, 1), store.DeliveryFailed, 100)) },
			func() error { return tx.PutDelivery(slugA, delivery(4, 1)) },
			func() error { return tx.PutDelivery(slugA, finished(mailJob(5, 1), store.DeliverySucceeded, 100)) },
			func() error { return tx.PutDelivery(slugA, finished(mailJob(6, 1), store.DeliveryFailed, 100)) },
			// Never attempted: finished at its CreatedAt, at(7).
			func() error { return tx.PutDelivery(slugA, finished(delivery(7, 1), store.DeliverySucceeded, 0)) },
			// Finished at 100, then written again finished at 300.
			func() error { return tx.PutDelivery(slugA, finished(delivery(8, 1), store.DeliverySucceeded, 100)) },
			func() error { return tx.PutDelivery(slugA, finished(delivery(8, 1), store.DeliverySucceeded, 300)) },
			// Pending, then succeeded at 150.
			func() error { return tx.PutDelivery(slugA, delivery(9, 1)) },
			func() error { return tx.PutDelivery(slugA, finished(delivery(9, 1), store.DeliverySucceeded, 150)) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	wantDue, wantPending := sortedDue(t, s), pendingCount(t, s)
	for i, c := range []struct {
		kind   store.JobKind
		status store.DeliveryStatus
		before time.Time
		limit  int
		want   int
		// webhook and mail are the ids left of each kind.
		webhook, mail []int64
	}{
		{store.JobWebhook, store.DeliverySucceeded, at(99), 10, 1, []int64{1, 2, 3, 4, 8, 9}, []int64{5, 6}},
		{store.JobWebhook, store.DeliverySucceeded, at(200), 0, 0, []int64{1, 2, 3, 4, 8, 9}, []int64{5, 6}},
		{store.JobWebhook, store.DeliverySucceeded, at(200), 1, 1, []int64{2, 3, 4, 8, 9}, []int64{5, 6}},
		{store.JobWebhook, store.DeliverySucceeded, at(200), 10, 2, []int64{3, 4, 8}, []int64{5, 6}},
		{store.JobWebhook, store.DeliveryPending, forever, 10, 0, []int64{3, 4, 8}, []int64{5, 6}},
		{store.JobWebhook, store.DeliveryFailed, at(100), 10, 1, []int64{4, 8}, []int64{5, 6}},
		{store.JobMail, store.DeliveryFailed, at(99), 10, 0, []int64{4, 8}, []int64{5, 6}},
		{store.JobMail, store.DeliveryFailed, at(100), 10, 1, []int64{4, 8}, []int64{5}},
		{store.JobMail, store.DeliverySucceeded, forever, 10, 1, []int64{4, 8}, nil},
		{store.JobWebhook, store.DeliverySucceeded, at(299), 10, 0, []int64{4, 8}, nil},
		{store.JobWebhook, store.DeliverySucceeded, at(300), 10, 1, []int64{4}, nil},
	} {
		got := sweepCall(t, s, func(tx store.Tx) (int, error) {
			return tx.DeleteFinishedDeliveries(slugA, c.kind, c.status, c.before, c.limit)
		})
		var hooks, mail []store.Delivery
		view(t, s, func(tx store.Tx) (err error) {
			if hooks, err = tx.Deliveries(slugA, 1); err != nil {
				return err
			}
			mail, err = tx.MailJobs(slugA)
			return err
		})
		if diff := cmp.Diff([]any{c.want, c.webhook, c.mail}, []any{got, deliveryIDs(hooks), deliveryIDs(mail)}); diff != "" {
			t.Errorf("sweep %d: (%s %s before %v limit %d) removed, webhook ids, mail ids (-want +got):\n%s",
				i, c.kind, c.status, c.before, c.limit, diff)
		}
	}
	if diff := cmp.Diff(wantDue, sortedDue(t, s)); diff != "" {
		t.Errorf("the sweeps changed the due index (-want +got):\n%s", diff)
	}
	if got := pendingCount(t, s); got != wantPending {
		t.Errorf("PendingDeliveries = %d after the sweeps, want %d", got, wantPending)
	}
	// Mail job 5 again, now bob's: deleting alice must leave it.
	update(t, s, func(tx store.Tx) error {
		return tx.PutDelivery(slugA, finished(mailJob(5, 2), store.DeliverySucceeded, 100))
	})
	if err := deleteUser(t, s, slugA, 1); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if got := deliveryIDs(mailJobs(t, s, slugA)); !slices.Equal(got, []int64{5}) {
		t.Errorf("mail jobs after DeleteUser(1) = %v, want [5] (bob's): a sweep left a user_mail entry behind", got)
	}
	if diff := cmp.Diff(other, held(t, s, slugB)); diff != "" {
		t.Errorf("sweeping %q changed %q (-before +after):\n%s", slugA, slugB, diff)
	}
}

func testSweepSessions(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	other := otherWorkspace(t, s)
	s4 := revoked(storedSession("s4", 1, 100), 5000) // revoked after it expired at 3700: ended at 3700
	s5 := storedSession("s5", 2, 0)
	putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"), user(2, "bob", "bob@example.com", "Bob"))
	putSessions(t, s, slugA,
		storedSession("s1", 1, 0),               // ends at 3600
		revoked(storedSession("s2", 1, 10), 99), // ends at 99
		storedSession("s3", 2, 3600),            // ends at 7200
		s4,
		s5,
	)
	s5.ExpiresAt = at(9000) // extended: ends at 9000
	putSessions(t, s, slugA, s5)
	sessionIDs := func() []string {
		var ids []string
		view(t, s, func(tx store.Tx) error {
			for _, u := range []int64{1, 2} {
				ss, err := tx.UserSessions(slugA, u)
				if err != nil {
					return err
				}
				for _, x := range ss {
					ids = append(ids, fmt.Sprint(u, "/", x.ID))
				}
			}
			return nil
		})
		return ids
	}
	for i, c := range []struct {
		before time.Time
		limit  int
		want   int
		left   []string
	}{
		{at(98), 10, 0, []string{"1/s1", "1/s2", "1/s4", "2/s5", "2/s3"}},
		{at(3600), 1, 1, []string{"1/s1", "1/s4", "2/s5", "2/s3"}},
		{at(3699), 10, 1, []string{"1/s4", "2/s5", "2/s3"}},
		{at(3700), 10, 1, []string{"2/s5", "2/s3"}},
		{at(8999), 10, 1, []string{"2/s5"}},
	} {
		got := sweepCall(t, s, func(tx store.Tx) (int, error) { return tx.DeleteEndedSessions(slugA, c.before, c.limit) })
		if diff := cmp.Diff([]any{c.want, c.left}, []any{got, sessionIDs()}); diff != "" {
			t.Errorf("sweep %d (before %v limit %d): removed, sessions left (-want +got):\n%s", i, c.before, c.limit, diff)
		}
	}
	// s1 again, now bob's: deleting alice must leave it.
	putSessions(t, s, slugA, storedSession("s1", 2, 50))
	if err := deleteUser(t, s, slugA, 1); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if diff := cmp.Diff([]string{"2/s5", "2/s1"}, sessionIDs()); diff != "" {
		t.Errorf("sessions after DeleteUser(1) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(other, held(t, s, slugB)); diff != "" {
		t.Errorf("sweeping %q changed %q (-before +after):\n%s", slugA, slugB, diff)
	}
}

func testSweepTokens(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	other := otherWorkspace(t, s)
	type rec struct {
		kind, id string
		userID   int64
		grant    string
		expires  int
	}
	put := func(tx store.Tx, r rec) error {
		switch r.kind {
		case "token":
			v := token(r.id, r.userID, 0)
			v.ExpiresAt = at(r.expires)
			if r.id == "vt-2" {
				v.UsedAt = at(1)
			}
			return tx.PutVerificationToken(slugA, v)
		case "auth request":
			a := authRequestOf(r.id, r.userID)
			a.ExpiresAt = at(r.expires)
			return tx.PutAuthRequest(slugA, a)
		case "grant":
			g := grantOf(r.id, r.userID, 0)
			g.ExpiresAt = at(r.expires)
			return tx.PutGrant(slugA, g)
		default:
			rt := refreshOf(r.id, r.grant, 0)
			rt.ExpiresAt = at(r.expires)
			return tx.PutRefreshToken(slugA, rt)
		}
	}
	all := []rec{
		{"token", "vt-1", 1, "", 100},
		{"token", "vt-2", 1, "", 300}, // used
		{"auth request", "ar-1", 1, "", 100},
		{"auth request", "ar-0", 0, "", 200},
		{"grant", "gr-0", 0, "", 100},
		{"refresh", "rt-0", 0, "gr-0", 100},
		{"refresh", "rt-00", 0, "gr-0", 900}, // outlives its grant: goes with it
		{"grant", "gr-1", 1, "", 500},
		{"refresh", "rt-1", 0, "gr-1", 400},
		{"refresh", "rt-2", 0, "gr-1", 500},
		{"grant", "gr-2", 2, "", 1000},
		{"refresh", "rt-3", 0, "gr-2", 1000},
	}
	update(t, s, func(tx store.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.PutUser(slugA, user(1, "alice", "alice@example.com", "Alice")) },
			func() error { return tx.PutUser(slugA, user(2, "bob", "bob@example.com", "Bob")) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		for _, r := range all {
			if err := put(tx, r); err != nil {
				return fmt.Errorf("%s %s: %w", r.kind, r.id, err)
			}
		}
		return nil
	})
	left := func() []string {
		var out []string
		view(t, s, func(tx store.Tx) error {
			for _, r := range all {
				var err error
				switch r.kind {
				case "token":
					_, err = tx.VerificationToken(slugA, r.id)
				case "auth request":
					_, err = tx.AuthRequest(slugA, r.id)
				case "grant":
					_, err = tx.Grant(slugA, r.id)
				default:
					_, err = tx.RefreshToken(slugA, r.id)
				}
				if err == nil {
					out = append(out, r.id)
				} else if !isNotFound(err) {
					return err
				}
			}
			for _, u := range []int64{1, 2} {
				gs, err := tx.UserGrants(slugA, u)
				if err != nil {
					return err
				}
				for _, g := range gs {
					out = append(out, fmt.Sprint(u, "/", g.ID))
				}
			}
			return nil
		})
		return out
	}
	for i, c := range []struct {
		before time.Time
		limit  int
		want   int
		left   []string
	}{
		{at(99), 10, 0, []string{"vt-1", "vt-2", "ar-1", "ar-0", "gr-0", "rt-0", "rt-00", "gr-1", "rt-1", "rt-2", "gr-2", "rt-3", "1/gr-1", "2/gr-2"}},
		{at(100), 10, 5, []string{"vt-2", "ar-0", "gr-1", "rt-1", "rt-2", "gr-2", "rt-3", "1/gr-1", "2/gr-2"}},
		{at(500), 2, 2, []string{"gr-1", "rt-1", "rt-2", "gr-2", "rt-3", "1/gr-1", "2/gr-2"}},
		{at(500), 10, 3, []string{"gr-2", "rt-3", "2/gr-2"}},
		{at(999), 10, 0, []string{"gr-2", "rt-3", "2/gr-2"}},
	} {
		got := sweepCall(t, s, func(tx store.Tx) (int, error) { return tx.DeleteExpiredTokens(slugA, c.before, c.limit) })
		if diff := cmp.Diff([]any{c.want, c.left}, []any{got, left()}); diff != "" {
			t.Errorf("sweep %d (before %v limit %d): removed, records left (-want +got):\n%s", i, c.before, c.limit, diff)
		}
	}
	// The swept ids again: vt-1, ar-1 and rt-1 (of gr-2) now bob's, gr-1
	// alice's again without refresh tokens. Deleting alice must remove
	// gr-1 alone.
	update(t, s, func(tx store.Tx) error {
		for _, r := range []rec{
			{"token", "vt-1", 2, "", 2000},
			{"auth request", "ar-1", 2, "", 2000},
			{"grant", "gr-1", 1, "", 2000},
			{"refresh", "rt-1", 0, "gr-2", 1000},
		} {
			if err := put(tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err := deleteUser(t, s, slugA, 1); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if diff := cmp.Diff([]string{"vt-1", "ar-1", "rt-1", "gr-2", "rt-3", "2/gr-2"}, left()); diff != "" {
		t.Errorf("after DeleteUser(1): records left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(other, held(t, s, slugB)); diff != "" {
		t.Errorf("sweeping %q changed %q (-before +after):\n%s", slugA, slugB, diff)
	}
}

// isNotFound reports whether err is store.ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
