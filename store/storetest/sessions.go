package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// storedSession returns a session record with every field but RevokedAt
// set, created at at(created).
func storedSession(id string, userID int64, created int) store.Session {
	return store.Session{
		ID:         id,
		UserID:     userID,
		SecretHash: []byte("hash-of-" + id + "\x00\xff"),
		CreatedAt:  at(created),
		ExpiresAt:  at(created + 3600),
		LastSeenAt: at(created + 60),
	}
}

// revoked returns s revoked at at(when).
func revoked(s store.Session, when int) store.Session {
	s.RevokedAt = at(when)
	return s
}

// putSessions writes the sessions into the workspace in one transaction.
func putSessions(t *testing.T, s store.Store, slug string, sessions ...store.Session) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, sess := range sessions {
			if err := tx.PutSession(slug, sess); err != nil {
				return fmt.Errorf("PutSession(%q, %q): %w", slug, sess.ID, err)
			}
		}
		return nil
	})
}

// checkSession checks that Session returns want.
func checkSession(t *testing.T, s store.Store, slug string, want store.Session) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Session(slug, want.ID)
		if err != nil {
			t.Errorf("Session(%q, %q): %v", slug, want.ID, err)
			return nil
		}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("Session(%q, %q) mismatch (-want +got):\n%s", slug, want.ID, diff)
		}
		return nil
	})
}

// checkNoSession checks that Session returns ErrNotFound.
func checkNoSession(t *testing.T, s store.Store, slug, id string) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Session(slug, id)
		checkErr(t, fmt.Sprintf("Session(%q, %q)", slug, id), err, store.ErrNotFound)
		return nil
	})
}

// checkUserSessions checks UserSessions against want, in order.
func checkUserSessions(t *testing.T, s store.Store, slug string, userID int64, want []store.Session) {
	t.Helper()
	var got []store.Session
	view(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.UserSessions(slug, userID)
		return err
	})
	ids := func(ss []store.Session) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	if diff := cmp.Diff(ids(want), ids(got)); diff != "" {
		t.Errorf("UserSessions(%q, %d) ids mismatch (-want +got):\n%s", slug, userID, diff)
	} else if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("UserSessions(%q, %d) mismatch (-want +got):\n%s", slug, userID, diff)
	}
}

// testSessions checks PutSession, Session and UserSessions.
func testSessions(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		want := []store.Session{
			storedSession("s1", 1, 10),
			revoked(storedSession("s2", 1, 20), 30),
			{ID: "bare", UserID: 2}, // nil hash, zero times
			storedSession("sess/é\x00\xff~", 3, 10),
			storedSession(strings.Repeat("x", 300), 3, 11),
			storedSession("negative-user", -4, 10),
		}
		putSessions(t, s, slugA, want...)
		for _, sess := range want {
			checkSession(t, s, slugA, sess)
		}
		checkUserSessions(t, s, slugA, 2, want[2:3])
		checkUserSessions(t, s, slugA, -4, want[5:])
	})

	t.Run("UserSessionsOrder", func(t *testing.T) { testUserSessionsOrder(t, newStore) })

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		s1, s2, s3 := storedSession("s1", 1, 10), storedSession("s2", 1, 20), storedSession("s3", 2, 15)
		putSessions(t, s, slugA, s1, s2, s3)
		// Seen again, then revoked: still one session each.
		seen := s1
		seen.LastSeenAt, seen.ExpiresAt = at(500), at(4000)
		putSessions(t, s, slugA, seen)
		gone := revoked(s2, 600)
		putSessions(t, s, slugA, gone)
		checkUserSessions(t, s, slugA, 1, []store.Session{seen, gone})
		// A new CreatedAt reorders the user's sessions.
		older := seen
		older.CreatedAt = at(25)
		putSessions(t, s, slugA, older)
		checkUserSessions(t, s, slugA, 1, []store.Session{gone, older})
		// A new UserID moves the session to that user.
		moved := gone
		moved.UserID = 2
		putSessions(t, s, slugA, moved)
		checkUserSessions(t, s, slugA, 1, []store.Session{older})
		checkUserSessions(t, s, slugA, 2, []store.Session{s3, moved})
		// Clearing RevokedAt reads back zero.
		putSessions(t, s, slugA, s2)
		checkSession(t, s, slugA, s2)
		checkUserSessions(t, s, slugA, 1, []store.Session{s2, older})
		checkUserSessions(t, s, slugA, 2, []store.Session{s3})
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putSessions(t, s, slugB, storedSession("s1", 1, 10))
		checkNoSession(t, s, slugA, "s1") // only in another workspace
		checkNoSession(t, s, slugB, "S1") // ids are not folded
		checkNoSession(t, s, slugB, "s")  // a prefix of an id
		checkNoSession(t, s, slugB, "")
		checkUserSessions(t, s, slugA, 1, nil)
		checkUserSessions(t, s, slugB, 2, nil) // no sessions: none, not an error
		checkSession(t, s, slugB, storedSession("s1", 1, 10))
	})

	t.Run("EmptyIDRefused", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutSession(slugA, storedSession("", 1, 10))
			return nil // commit: the refused PutSession must have written nothing
		})
		if err == nil {
			t.Errorf("PutSession with an empty id succeeded, want an error")
		}
		checkNoSession(t, s, slugA, "")
		checkUserSessions(t, s, slugA, 1, nil)
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		s1, s2 := storedSession("s1", 1, 10), storedSession("s2", 2, 20)
		putSessions(t, s, slugA, s1, s2)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			moved := revoked(s1, 99)
			moved.UserID, moved.CreatedAt = 2, at(30)
			for _, sess := range []store.Session{moved, storedSession("s3", 1, 5), storedSession("s4", 2, 1)} {
				if err := tx.PutSession(slugA, sess); err != nil {
					return err
				}
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Update error = %v, want errBoom", err)
		}
		checkSession(t, s, slugA, s1)
		checkNoSession(t, s, slugA, "s3")
		checkNoSession(t, s, slugA, "s4")
		checkUserSessions(t, s, slugA, 1, []store.Session{s1})
		checkUserSessions(t, s, slugA, 2, []store.Session{s2})
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		sess := storedSession("s1", 1, 10)
		putSessions(t, s, slugA, sess)
		sess.SecretHash[0] = 'X'
		var got []store.Session
		view(t, s, func(tx store.Tx) error {
			one, err := tx.Session(slugA, "s1")
			if err != nil {
				return err
			}
			one.SecretHash[1] = 'Y'
			got, err = tx.UserSessions(slugA, 1)
			return err
		})
		if len(got) == 1 {
			got[0].SecretHash[2] = 'Z'
		}
		checkSession(t, s, slugA, storedSession("s1", 1, 10))
		checkUserSessions(t, s, slugA, 1, []store.Session{storedSession("s1", 1, 10)})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		zone := time.FixedZone("UTC-3", -3*3600)
		sess := revoked(storedSession("s1", 1, 10), 40)
		in := sess
		in.CreatedAt, in.ExpiresAt = sess.CreatedAt.In(zone), sess.ExpiresAt.In(zone)
		in.LastSeenAt, in.RevokedAt = sess.LastSeenAt.In(zone), sess.RevokedAt.In(zone)
		putSessions(t, s, slugA, in)
		var got store.Session
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.Session(slugA, "s1")
			return err
		})
		for _, tm := range []time.Time{got.CreatedAt, got.ExpiresAt, got.LastSeenAt, got.RevokedAt} {
			if tm.Location() != time.UTC {
				t.Errorf("Session time %v is not in UTC", tm)
			}
		}
		if diff := cmp.Diff(sess, got); diff != "" {
			t.Errorf("Session mismatch (-want +got):\n%s", diff)
		}
	})
}

// testUserSessionsOrder checks that UserSessions returns every session of
// the user, and only those, in CreatedAt order, ties by id.
func testUserSessionsOrder(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	early := storedSession("z-early", 1, 0)
	early.CreatedAt = time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC)
	user1 := []store.Session{
		early,
		storedSession("a", 1, 10),
		storedSession("a0", 1, 10),
		storedSession("b", 1, 10),
		revoked(storedSession("c", 1, 20), 25),
		storedSession("0", 1, 30),
	}
	user2 := []store.Session{storedSession("d", 2, 5), storedSession("e", 2, 50)}
	// Written out of order, over several transactions, users interleaved.
	putSessions(t, s, slugA, user1[3], user2[1], user1[5])
	putSessions(t, s, slugA, user1[1], user1[0], user2[0])
	putSessions(t, s, slugA, user1[4], user1[2])
	// The same user ids and session ids in another workspace.
	putSessions(t, s, slugB, storedSession("a", 1, 1), storedSession("x", 2, 1))

	checkUserSessions(t, s, slugA, 1, user1)
	checkUserSessions(t, s, slugA, 2, user2)
	checkUserSessions(t, s, slugA, 3, nil)
	checkUserSessions(t, s, slugA, 0, nil)
	checkUserSessions(t, s, slugB, 1, []store.Session{storedSession("a", 1, 1)})
	checkUserSessions(t, s, slugB, 2, []store.Session{storedSession("x", 2, 1)})
}
