package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// deferredStore returns a store whose workspace "acme" has users 1, 2
// and 3, and whose user_attributes refuses the value "boom": a deferred
// write that fails, which no write of the store's own can be.
func deferredStore(t *testing.T) *pgstore.Store {
	t.Helper()
	url := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), url, &pgstore.Options{QueueWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := connect(t, url).Exec(t.Context(),
		`ALTER TABLE user_attributes ADD CONSTRAINT no_boom CHECK (value <> '\x626f6f6d'::bytea)`); err != nil {
		t.Fatal(err)
	}
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0}); err != nil {
			return err
		}
		for id, name := range map[int64]string{1: "ann", 2: "ben", 3: "cat"} {
			if err := tx.PutUser("acme", store.User{ID: id, Username: name, Email: name + "@example.com", CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	return s
}

// attributesOf lists the attributes of users 1 to 3 as "id key=value".
func attributesOf(t *testing.T, s store.Store) []string {
	t.Helper()
	var got []string
	view(t, s, func(tx store.Tx) error {
		for id := int64(1); id <= 3; id++ {
			attrs, err := tx.UserAttributes("acme", id)
			if err != nil {
				return err
			}
			for k, v := range attrs {
				got = append(got, fmt.Sprintf("%d %s=%s", id, k, v))
			}
		}
		return nil
	})
	slices.Sort(got)
	return got
}

// readThenPut reads the user and sets an attribute: the write is
// deferred, for the user is known to exist.
func readThenPut(id int64, key, value string) func(store.Tx) error {
	return func(tx store.Tx) error {
		if _, err := tx.User("acme", id); err != nil {
			return err
		}
		return tx.PutUserAttribute("acme", id, key, value)
	}
}

// checkViolation reports whether err is PostgreSQL's refusal of a value
// by a CHECK constraint.
func checkViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514"
}

// TestDeferredWrites covers the attribute writes of a user the
// transaction has read, which wait for the next statement or the COMMIT:
// they commit with their transaction, a failed one commits nothing of it
// and is reported as itself, and the users they may be deferred for are
// those the transaction read and did not delete since.
func TestDeferredWrites(t *testing.T) {
	t.Run("commit with the transaction", func(t *testing.T) {
		s := deferredStore(t)
		update(t, s, readThenPut(1, "tier", ""))
		update(t, s, readThenPut(2, "tier", "gold"))
		if diff := cmp.Diff([]string{"1 tier=", "2 tier=gold"}, attributesOf(t, s)); diff != "" {
			t.Errorf("attributes (-want +got):\n%s", diff)
		}
	})

	t.Run("a failed one at the commit commits nothing", func(t *testing.T) {
		s := deferredStore(t)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutUserAttribute("acme", 1, "plan", "pro"); err != nil { // not read yet: sent at once
				return err
			}
			return readThenPut(2, "tier", "boom")(tx)
		})
		if !checkViolation(err) {
			t.Errorf("Update: %v, want the CHECK violation", err)
		}
		if got := attributesOf(t, s); len(got) != 0 {
			t.Errorf("attributes %q, want none", got)
		}
	})

	t.Run("a failed one before a read aborts the read", func(t *testing.T) {
		s := deferredStore(t)
		var readErr error
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := readThenPut(1, "tier", "boom")(tx); err != nil {
				return err
			}
			_, readErr = tx.User("acme", 2)
			return nil
		})
		// The read never ran: its error says so, and is neither a missing
		// user nor a conflict.
		if readErr == nil || errors.Is(readErr, store.ErrNotFound) || errors.Is(readErr, store.ErrConflict) ||
			!strings.Contains(readErr.Error(), "an earlier statement of the transaction failed") {
			t.Errorf("the read after the failed write: %v", readErr)
		}
		if !checkViolation(err) || !strings.Contains(err.Error(), "not committed") {
			t.Errorf("Update: %v, want it not committed for the CHECK violation", err)
		}
		if got := attributesOf(t, s); len(got) != 0 {
			t.Errorf("attributes %q, want none", got)
		}
	})

	t.Run("not for a user deleted since", func(t *testing.T) {
		s := deferredStore(t)
		for _, del := range []struct {
			name string
			fn   func(tx store.Tx) error
		}{
			{"DeleteUser", func(tx store.Tx) error { return tx.DeleteUser("acme", 1) }},
			{"DeleteWorkspace", func(tx store.Tx) error { return tx.DeleteWorkspace("acme") }},
		} {
			var putErr error
			err := s.Update(t.Context(), func(tx store.Tx) error {
				if _, err := tx.User("acme", 1); err != nil {
					return err
				}
				if err := del.fn(tx); err != nil {
					return err
				}
				putErr = tx.PutUserAttribute("acme", 1, "tier", "gold")
				return errors.New("roll back")
			})
			if err == nil || err.Error() != "roll back" {
				t.Errorf("%s: Update: %v", del.name, err)
			}
			if !errors.Is(putErr, store.ErrNotFound) {
				t.Errorf("%s: PutUserAttribute of the deleted user: %v, want ErrNotFound", del.name, putErr)
			}
		}
	})
}

// TestDeferredWritesGrouped covers deferred writes in a group (see
// group.go): a function's deferred writes go with the next function's
// first statement or the group's COMMIT and stand or fall with the
// function; one that fails there fails the whole group, for the
// function whose write it was has ended as kept.
func TestDeferredWritesGrouped(t *testing.T) {
	boom := errors.New("boom")
	background := func(n int) []context.Context {
		ctxs := make([]context.Context, n)
		for i := range ctxs {
			ctxs[i] = context.Background()
		}
		return ctxs
	}
	outcome := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, boom):
			return "boom"
		case errors.Is(err, store.ErrNotFound):
			return "not found"
		case checkViolation(err):
			return "check violation"
		default:
			return err.Error()
		}
	}
	for _, tc := range []struct {
		name  string
		fns   []func(store.Tx) error
		want  []string // each function's outcome
		attrs []string
	}{
		{
			name: "each function's writes with the next one's first statement",
			fns:  []func(store.Tx) error{readThenPut(1, "a", "1"), readThenPut(2, "b", "2"), readThenPut(3, "c", "3")},
			want: []string{"ok", "ok", "ok"}, attrs: []string{"1 a=1", "2 b=2", "3 c=3"},
		},
		{
			name: "a failed function's deferred writes are dropped",
			fns: []func(store.Tx) error{
				readThenPut(1, "a", "1"),
				func(tx store.Tx) error {
					if err := readThenPut(2, "b", "2")(tx); err != nil {
						return err
					}
					return boom
				},
				readThenPut(3, "c", "3"),
			},
			want: []string{"ok", "boom", "ok"}, attrs: []string{"1 a=1", "3 c=3"},
		},
		{
			// The second and third function send no statement of their
			// own: user 1 is known from the first.
			name: "deferred writes of a function that sends no statement",
			fns: []func(store.Tx) error{
				func(tx store.Tx) error { _, err := tx.User("acme", 1); return err },
				func(tx store.Tx) error { return tx.PutUserAttribute("acme", 1, "a", "1") },
				func(tx store.Tx) error {
					if err := tx.PutUserAttribute("acme", 1, "b", "2"); err != nil {
						return err
					}
					return boom
				},
				readThenPut(3, "c", "3"),
			},
			want: []string{"ok", "ok", "boom", "ok"}, attrs: []string{"1 a=1", "3 c=3"},
		},
		{
			// The first function's user is rolled back with it, so the
			// second's write is not deferred: it finds no user.
			name: "users read by a failed function are forgotten",
			fns: []func(store.Tx) error{
				func(tx store.Tx) error {
					if err := tx.PutUser("acme", store.User{ID: 7, Username: "dan", Email: "dan@example.com"}); err != nil {
						return err
					}
					if _, err := tx.User("acme", 7); err != nil {
						return err
					}
					return boom
				},
				func(tx store.Tx) error { return tx.PutUserAttribute("acme", 7, "a", "1") },
				readThenPut(3, "c", "3"),
			},
			want: []string{"boom", "not found", "ok"}, attrs: []string{"3 c=3"},
		},
		{
			name: "a failed deferred write fails the group",
			fns:  []func(store.Tx) error{readThenPut(1, "a", "boom"), readThenPut(2, "b", "2"), readThenPut(3, "c", "3")},
			want: []string{"check violation", "check violation", "check violation"},
		},
		{
			name: "a failed deferred write at the COMMIT fails the group",
			fns:  []func(store.Tx) error{readThenPut(1, "a", "1"), readThenPut(2, "b", "boom")},
			want: []string{"check violation", "check violation"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := deferredStore(t)
			before := s.Stats()
			errs, panics := stageGroup(t, s, background(len(tc.fns)), tc.fns)
			after := s.Stats()
			var got []string
			for i, err := range errs {
				if panics[i] != nil {
					t.Fatalf("function %d panicked: %v", i, panics[i])
				}
				got = append(got, outcome(err))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.attrs, attributesOf(t, s)); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
			if n := after.Retries - before.Retries; n != 0 {
				t.Errorf("%d retries, want none", n)
			}
		})
	}
}

// TestQueueFreeWhileCommitting: an Update leaves the writer queue once its
// writes are done, before its COMMIT ends, so that the next one's
// statements run while it commits. The COMMIT here waits for a lock the
// test holds (a deferred constraint trigger takes it), and the next
// Update must run meanwhile, on a snapshot without the first one's write.
func TestQueueFreeWhileCommitting(t *testing.T) {
	const key = 7261934 // the advisory lock the COMMIT waits for
	url := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), url, &pgstore.Options{QueueWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	admin := connect(t, url)
	for _, sql := range []string{
		fmt.Sprintf(`CREATE FUNCTION wait_for_test() RETURNS trigger LANGUAGE plpgsql
			AS $$ BEGIN PERFORM pg_advisory_xact_lock(%d); RETURN NULL; END $$`, key),
		`CREATE CONSTRAINT TRIGGER wait_for_test AFTER INSERT ON user_attributes
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wait_for_test()`,
	} {
		if _, err := admin.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0}); err != nil {
			return err
		}
		return tx.PutUser("acme", store.User{ID: 1, Username: "ann", Email: "ann@example.com", CreatedAt: t0, UpdatedAt: t0})
	})
	if _, err := admin.Exec(t.Context(), "SELECT pg_advisory_lock($1)", key); err != nil {
		t.Fatal(err)
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			if _, err := admin.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", key); err != nil {
				t.Error(err)
			}
		}
	}
	defer unlock()

	first := make(chan error, 1)
	go func() { first <- s.Update(context.Background(), readThenPut(1, "tier", "gold")) }()
	// Wait until the first Update's COMMIT waits for the lock.
	for {
		var waiting int
		if err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, key).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var seen map[string]string
	second := make(chan error, 1)
	go func() {
		second <- s.Update(context.Background(), func(tx store.Tx) (err error) {
			seen, err = tx.UserAttributes("acme", 1)
			return err
		})
	}()
	// The second Update ends at once, or never while the lock is held: the
	// minute only keeps a failure from hanging the test.
	var ranMeanwhile bool
	select {
	case err := <-second:
		ranMeanwhile = true
		if err != nil {
			t.Fatalf("the second Update: %v", err)
		}
	case <-time.After(time.Minute):
	}
	unlock()
	if err := <-first; err != nil {
		t.Fatalf("the first Update: %v", err)
	}
	if !ranMeanwhile {
		if err := <-second; err != nil {
			t.Fatalf("the second Update: %v", err)
		}
		t.Fatal("the second Update waited for the first one's COMMIT")
	}
	if len(seen) != 0 {
		t.Errorf("the second Update saw %v, which was not committed when it ran", seen)
	}
	if diff := cmp.Diff([]string{"1 tier=gold"}, attributesOf(t, s)); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
}
