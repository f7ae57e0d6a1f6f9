package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// token returns a verification token record with every field but UsedAt
// set, created at at(created).
func token(id string, userID int64, created int) store.VerificationToken {
	return store.VerificationToken{
		ID:         id,
		UserID:     userID,
		Email:      fmt.Sprintf("user%d@example.com", userID),
		SecretHash: []byte("hash-of-" + id + "\x00\xff"),
		CreatedAt:  at(created),
		ExpiresAt:  at(created + 86400),
	}
}

// testVerificationTokens checks PutVerificationToken and VerificationToken.
func testVerificationTokens(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	read := func(t *testing.T, slug, id string) (store.VerificationToken, error) {
		t.Helper()
		var got store.VerificationToken
		var lookupErr error
		view(t, s, func(tx store.Tx) error {
			got, lookupErr = tx.VerificationToken(slug, id)
			return nil
		})
		return got, lookupErr
	}
	check := func(t *testing.T, slug string, want store.VerificationToken) {
		t.Helper()
		got, err := read(t, slug, want.ID)
		if err != nil {
			t.Fatalf("VerificationToken(%q, %q): %v", slug, want.ID, err)
		}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("VerificationToken(%q, %q) mismatch (-want +got):\n%s", slug, want.ID, diff)
		}
	}
	a1, a2, b1 := token("tok1", 1, 10), token("tok2", 2, 20), token("tok1", 7, 30)

	t.Run("RoundTrip", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				slug string
				tok  store.VerificationToken
			}{{slugA, a1}, {slugA, a2}, {slugB, b1}} {
				if err := tx.PutVerificationToken(c.slug, c.tok); err != nil {
					return err
				}
			}
			return nil
		})
		check(t, slugA, a1)
		check(t, slugA, a2)
		check(t, slugB, b1) // the same id in another workspace is another token
	})

	t.Run("Replace", func(t *testing.T) {
		used := a1
		used.UsedAt = at(500)
		update(t, s, func(tx store.Tx) error { return tx.PutVerificationToken(slugA, used) })
		check(t, slugA, used)
		check(t, slugB, b1)
	})

	t.Run("Purposes", func(t *testing.T) {
		// A token of each purpose; the one of the zero value is an email
		// verification token.
		update(t, s, func(tx store.Tx) error {
			for _, v := range []store.VerificationToken{
				{
					ID: "verify", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h1"),
					CreatedAt: at(1), ExpiresAt: at(86401), Purpose: store.PurposeVerifyEmail,
				},
				{
					ID: "reset", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h2\x00\xff"),
					CreatedAt: at(2), ExpiresAt: at(3602), Purpose: store.PurposePasswordReset,
				},
				{
					ID: "second", UserID: 4, SecretHash: []byte("h3"),
					CreatedAt: at(3), ExpiresAt: at(303), UsedAt: at(4), Purpose: store.PurposeSecondFactor,
				},
			} {
				if err := tx.PutVerificationToken(slugA, v); err != nil {
					return err
				}
			}
			return nil
		})
		check(t, slugA, store.VerificationToken{
			ID: "verify", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h1"),
			CreatedAt: at(1), ExpiresAt: at(86401), Purpose: "",
		})
		check(t, slugA, store.VerificationToken{
			ID: "reset", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h2\x00\xff"),
			CreatedAt: at(2), ExpiresAt: at(3602), Purpose: "password_reset",
		})
		check(t, slugA, store.VerificationToken{
			ID: "second", UserID: 4, SecretHash: []byte("h3"),
			CreatedAt: at(3), ExpiresAt: at(303), UsedAt: at(4), Purpose: "second_factor",
		})
		// Written again with another purpose, each reads back with it, the
		// zero value included.
		update(t, s, func(tx store.Tx) error {
			return errors.Join(
				tx.PutVerificationToken(slugA, store.VerificationToken{
					ID: "verify", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h1"),
					CreatedAt: at(1), ExpiresAt: at(86401), Purpose: store.PurposeSecondFactor,
				}),
				tx.PutVerificationToken(slugA, store.VerificationToken{
					ID: "reset", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h2\x00\xff"),
					CreatedAt: at(2), ExpiresAt: at(3602), UsedAt: at(5), Purpose: store.PurposeVerifyEmail,
				}),
			)
		})
		check(t, slugA, store.VerificationToken{
			ID: "verify", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h1"),
			CreatedAt: at(1), ExpiresAt: at(86401), Purpose: "second_factor",
		})
		check(t, slugA, store.VerificationToken{
			ID: "reset", UserID: 3, Email: "user3@example.com", SecretHash: []byte("h2\x00\xff"),
			CreatedAt: at(2), ExpiresAt: at(3602), UsedAt: at(5), Purpose: "",
		})
	})

	t.Run("NotFound", func(t *testing.T) {
		for _, c := range []struct{ slug, id string }{
			{slugA, "nope"}, {slugB, "tok2"}, {slugA, ""}, {slugMissing, "tok1"},
		} {
			_, err := read(t, c.slug, c.id)
			checkErr(t, fmt.Sprintf("VerificationToken(%q, %q)", c.slug, c.id), err, store.ErrNotFound)
		}
		err := s.Update(t.Context(), func(tx store.Tx) error {
			return tx.PutVerificationToken(slugMissing, token("x", 1, 0))
		})
		checkErr(t, "PutVerificationToken in a missing workspace", err, store.ErrNotFound)
	})

	t.Run("ReadOnly", func(t *testing.T) {
		err := s.View(t.Context(), func(tx store.Tx) error {
			return tx.PutVerificationToken(slugA, token("ro", 1, 0))
		})
		checkErr(t, "PutVerificationToken in View", err, store.ErrReadOnly)
	})

	t.Run("RolledBack", func(t *testing.T) {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutVerificationToken(slugA, token("gone", 1, 0)); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		_, err = read(t, slugA, "gone")
		checkErr(t, "VerificationToken after a rollback", err, store.ErrNotFound)
	})
}

// idem returns an idempotency record that expires at at(expires).
func idem(slug, scope, key string, expires int) store.IdempotencyRecord {
	return store.IdempotencyRecord{
		Workspace:   slug,
		Scope:       scope,
		Key:         key,
		Fingerprint: []byte("fp:" + key + "\x00\xff"),
		CreatedAt:   at(expires - 86400),
		ExpiresAt:   at(expires),
		LockedUntil: at(expires - 86340),
	}
}

// done returns r completed with the result.
func done(r store.IdempotencyRecord, result string) store.IdempotencyRecord {
	r.Done, r.LockedUntil, r.Result = true, time.Time{}, []byte(result)
	return r
}

// testIdempotency checks the idempotency records and their expiry sweep.
func testIdempotency(t *testing.T, newStore func(t *testing.T) store.Store) {
	read := func(t *testing.T, s store.Store, slug, scope, key string) (store.IdempotencyRecord, error) {
		t.Helper()
		var got store.IdempotencyRecord
		var lookupErr error
		view(t, s, func(tx store.Tx) error {
			got, lookupErr = tx.Idempotency(slug, scope, key)
			return nil
		})
		return got, lookupErr
	}
	check := func(t *testing.T, s store.Store, want store.IdempotencyRecord) {
		t.Helper()
		got, err := read(t, s, want.Workspace, want.Scope, want.Key)
		if err != nil {
			t.Fatalf("Idempotency(%q, %q, %q): %v", want.Workspace, want.Scope, want.Key, err)
		}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("Idempotency(%q, %q, %q) mismatch (-want +got):\n%s", want.Workspace, want.Scope, want.Key, diff)
		}
	}
	checkGone := func(t *testing.T, s store.Store, slug, scope, key string) {
		t.Helper()
		_, err := read(t, s, slug, scope, key)
		checkErr(t, fmt.Sprintf("Idempotency(%q, %q, %q)", slug, scope, key), err, store.ErrNotFound)
	}
	put := func(t *testing.T, s store.Store, recs ...store.IdempotencyRecord) {
		t.Helper()
		update(t, s, func(tx store.Tx) error {
			for _, r := range recs {
				if err := tx.PutIdempotency(r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	sweep := func(t *testing.T, s store.Store, now time.Time, limit int) int {
		t.Helper()
		var n int
		update(t, s, func(tx store.Tx) (err error) {
			n, err = tx.DeleteExpiredIdempotency(now, limit)
			return err
		})
		return n
	}

	t.Run("RoundTripAndScopes", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		// Keys and scopes are any strings: one that holds the other's
		// bytes must not be confused with it.
		recs := []store.IdempotencyRecord{
			idem(slugA, "key1", "k", 100),
			done(idem(slugA, "key2", "k", 100), `{"id":1}`),
			idem(slugA, "key1", "kk", 100),
			idem(slugA, "key1k", "k", 100),
			idem(slugA, "", "", 100),
			idem(slugB, "key1", "k", 100),
		}
		put(t, s, recs...)
		for _, r := range recs {
			check(t, s, r)
		}
		checkGone(t, s, slugA, "key3", "k")
		checkGone(t, s, slugB, "key2", "k")
		checkGone(t, s, slugMissing, "key1", "k")
	})

	t.Run("ReplaceAndDelete", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		r := idem(slugA, "key1", "k", 100)
		put(t, s, r)
		completed := done(r, `{"status":201}`)
		completed.ExpiresAt = at(200)
		put(t, s, completed)
		check(t, s, completed)
		// The replaced record's old expiry no longer counts.
		if n := sweep(t, s, at(150), 10); n != 0 {
			t.Errorf("sweep at 150 removed %d, want 0", n)
		}
		check(t, s, completed)
		update(t, s, func(tx store.Tx) error { return tx.DeleteIdempotency(slugA, "key1", "k") })
		checkGone(t, s, slugA, "key1", "k")
		err := s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteIdempotency(slugA, "key1", "k") })
		checkErr(t, "DeleteIdempotency of a deleted record", err, store.ErrNotFound)
		if n := sweep(t, s, at(1000), 10); n != 0 {
			t.Errorf("sweep after delete removed %d, want 0", n)
		}
	})

	t.Run("SweepOldestFirstAcrossWorkspaces", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		put(t, s,
			idem(slugA, "s", "late", 300),
			idem(slugB, "s", "first", 100),
			idem(slugA, "s", "second", 150),
			idem(slugB, "s", "edge", 200),
			idem(slugA, "s", "live", 201),
		)
		if n := sweep(t, s, at(200), 2); n != 2 {
			t.Errorf("first sweep removed %d, want 2", n)
		}
		checkGone(t, s, slugB, "s", "first")
		checkGone(t, s, slugA, "s", "second")
		check(t, s, idem(slugB, "s", "edge", 200))
		// ExpiresAt equal to now is expired.
		if n := sweep(t, s, at(200), 10); n != 1 {
			t.Errorf("second sweep removed %d, want 1", n)
		}
		checkGone(t, s, slugB, "s", "edge")
		check(t, s, idem(slugA, "s", "live", 201))
		check(t, s, idem(slugA, "s", "late", 300))
		if n := sweep(t, s, at(200), 10); n != 0 {
			t.Errorf("third sweep removed %d, want 0", n)
		}
		if n := sweep(t, s, at(1000), 0); n != 0 {
			t.Errorf("sweep with limit 0 removed %d, want 0", n)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutIdempotency(idem(slugMissing, "s", "k", 1)) })
		checkErr(t, "PutIdempotency in a missing workspace", err, store.ErrNotFound)
		err = s.View(t.Context(), func(tx store.Tx) error { return tx.PutIdempotency(idem(slugA, "s", "k", 1)) })
		checkErr(t, "PutIdempotency in View", err, store.ErrReadOnly)
		err = s.View(t.Context(), func(tx store.Tx) error {
			_, err := tx.DeleteExpiredIdempotency(at(0), 1)
			return err
		})
		checkErr(t, "DeleteExpiredIdempotency in View", err, store.ErrReadOnly)
		err = s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutIdempotency(idem(slugA, "s", "k", 1)); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		checkGone(t, s, slugA, "s", "k")
		// The rolled-back record left nothing for the sweep either.
		if n := sweep(t, s, at(10), 10); n != 0 {
			t.Errorf("sweep after a rollback removed %d, want 0", n)
		}
	})
}
