package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// The records of the OpenID Provider: signing keys, authorization
// requests, grants and refresh tokens. Every record a test expects is
// written out in full; the stores must return each as it was written.

// readRecord runs get in a View and returns its result; the test fails
// only if View itself fails.
func readRecord[T any](t *testing.T, s store.Store, get func(tx store.Tx) (T, error)) (T, error) {
	t.Helper()
	var got T
	var err error
	view(t, s, func(tx store.Tx) error {
		got, err = get(tx)
		return nil
	})
	return got, err
}

// checkRecord checks that get returns want.
func checkRecord[T any](t *testing.T, s store.Store, what string, want T, get func(tx store.Tx) (T, error)) {
	t.Helper()
	got, err := readRecord(t, s, get)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
}

// checkList checks that list returns want, in order: first the ids, so
// that an ordering mistake reads plainly, then the records.
func checkList[T any](t *testing.T, s store.Store, what string, want []T, id func(T) string, list func(tx store.Tx) ([]T, error)) {
	t.Helper()
	got, err := readRecord(t, s, list)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	ids := func(rs []T) []string {
		var out []string
		for _, r := range rs {
			out = append(out, id(r))
		}
		return out
	}
	if diff := cmp.Diff(ids(want), ids(got)); diff != "" {
		t.Errorf("%s ids mismatch (-want +got):\n%s", what, diff)
	} else if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
}

// putAll writes records with put in one Update; a failure names the
// method, the workspace and the record's id.
func putAll[T any](t *testing.T, s store.Store, method, slug string, id func(T) string, put func(tx store.Tx, r T) error, rs ...T) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, r := range rs {
			if err := put(tx, r); err != nil {
				return fmt.Errorf("%s(%q, %q): %w", method, slug, id(r), err)
			}
		}
		return nil
	})
}

// checkMissing checks that get returns ErrNotFound.
func checkMissing[T any](t *testing.T, s store.Store, what string, get func(tx store.Tx) (T, error)) {
	t.Helper()
	_, err := readRecord(t, s, get)
	checkErr(t, what, err, store.ErrNotFound)
}

// checkUTC checks that every time is in UTC; cmp compares times with
// their Equal method, which ignores the location.
func checkUTC(t *testing.T, what string, times ...time.Time) {
	t.Helper()
	for _, tm := range times {
		if tm.Location() != time.UTC {
			t.Errorf("%s: time %v is not in UTC", what, tm)
		}
	}
}

// utcMinus3 is a zone the TimesInUTC tests write times in.
var utcMinus3 = time.FixedZone("UTC-3", -3*3600)

// Signing keys.

func putSigningKeys(t *testing.T, s store.Store, slug string, keys ...store.SigningKey) {
	t.Helper()
	putAll(t, s, "PutSigningKey", slug, func(k store.SigningKey) string { return k.ID },
		func(tx store.Tx, k store.SigningKey) error { return tx.PutSigningKey(slug, k) }, keys...)
}

func checkSigningKeys(t *testing.T, s store.Store, slug string, want []store.SigningKey) {
	t.Helper()
	checkList(t, s, fmt.Sprintf("SigningKeys(%q)", slug), want, func(k store.SigningKey) string { return k.ID },
		func(tx store.Tx) ([]store.SigningKey, error) { return tx.SigningKeys(slug) })
}

// testSigningKeys checks PutSigningKey, SigningKeys and DeleteSigningKey.
func testSigningKeys(t *testing.T, newStore func(t *testing.T) store.Store) {
	// A key that signed and was retired: every field set.
	retired := store.SigningKey{
		ID: "kid-retired", Algorithm: "RS256", State: "retired",
		PrivateKey: []byte("sealed private key \x00\xff"), PublicKey: []byte("\x30\x82\x01\x22\x00\xff"),
		CreatedAt: at(10), ActivatedAt: at(20), RetiredAt: at(30), RemoveAt: at(40),
	}
	// The key signing now: not retired.
	active := store.SigningKey{
		ID: "kid-active", Algorithm: "ES256", State: "active",
		PrivateKey: []byte("private key 2"), PublicKey: []byte("public key 2"),
		CreatedAt: at(25), ActivatedAt: at(30),
	}
	// The key published ahead of its use: not activated.
	next := store.SigningKey{
		ID: "kid-next", Algorithm: "ES256", State: "next",
		PrivateKey: []byte("private key 3"), PublicKey: []byte("public key 3"),
		CreatedAt: at(35),
	}
	// setup writes next, retired and active into slugA (in that order,
	// over two transactions) and nothing into slugB.
	setup := func(t *testing.T) store.Store {
		t.Helper()
		s := newStoreWith(t, newStore, slugA, slugB)
		putSigningKeys(t, s, slugA, next, retired)
		putSigningKeys(t, s, slugA, active)
		return s
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := setup(t)
		bare := store.SigningKey{ID: "bare"} // nil keys, zero times, empty strings
		putSigningKeys(t, s, slugB, bare)
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, active, next})
		checkSigningKeys(t, s, slugB, []store.SigningKey{bare})
	})

	t.Run("EmptyWorkspace", func(t *testing.T) {
		s := setup(t)
		checkSigningKeys(t, s, slugB, nil)
	})

	t.Run("Order", func(t *testing.T) {
		// CreatedAt first, then ids in byte order: upper case before lower
		// case, "a10" before "a2", multi-byte UTF-8 last.
		s := newStoreWith(t, newStore, slugA)
		key := func(id string, created time.Time) store.SigningKey {
			return store.SigningKey{ID: id, Algorithm: "ES256", State: "retired", PublicKey: []byte(id), CreatedAt: created}
		}
		early := time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC)
		keys := []store.SigningKey{
			key("b", at(10)), key("é", at(10)), key("z", at(5)), key("a2", at(10)), key("B", at(10)),
			key("a10", at(10)), key("y", early), key("a", at(20)), key("0", at(10)),
		}
		for _, k := range keys {
			putSigningKeys(t, s, slugA, k) // one transaction each
		}
		checkSigningKeys(t, s, slugA, []store.SigningKey{
			key("y", early), key("z", at(5)), key("0", at(10)), key("B", at(10)), key("a10", at(10)),
			key("a2", at(10)), key("b", at(10)), key("é", at(10)), key("a", at(20)),
		})
	})

	t.Run("Replace", func(t *testing.T) {
		s := setup(t)
		// Rotation: active retires, next activates. Still three keys.
		nowRetired := store.SigningKey{
			ID: "kid-active", Algorithm: "ES256", State: "retired",
			PrivateKey: []byte("private key 2"), PublicKey: []byte("public key 2"),
			CreatedAt: at(25), ActivatedAt: at(30), RetiredAt: at(90), RemoveAt: at(3690),
		}
		nowActive := store.SigningKey{
			ID: "kid-next", Algorithm: "ES256", State: "active",
			PrivateKey: []byte("private key 3"), PublicKey: []byte("public key 3"),
			CreatedAt: at(35), ActivatedAt: at(90),
		}
		putSigningKeys(t, s, slugA, nowRetired, nowActive)
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, nowRetired, nowActive})
		// A new CreatedAt reorders; every field is written again.
		moved := store.SigningKey{
			ID: "kid-next", Algorithm: "RS256", State: "next",
			PrivateKey: []byte("other"), PublicKey: []byte("other public"),
			CreatedAt: at(1),
		}
		putSigningKeys(t, s, slugA, moved)
		checkSigningKeys(t, s, slugA, []store.SigningKey{moved, retired, nowRetired})
		// Times cleared read back zero.
		putSigningKeys(t, s, slugA, active)
		checkSigningKeys(t, s, slugA, []store.SigningKey{moved, retired, active})
		checkSigningKeys(t, s, slugB, nil)
	})

	t.Run("Delete", func(t *testing.T) {
		s := setup(t)
		update(t, s, func(tx store.Tx) error { return tx.DeleteSigningKey(slugA, "kid-active") })
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, next})
		for _, c := range []struct{ slug, id string }{
			{slugA, "kid-active"}, // deleted already
			{slugA, "kid-unknown"},
			{slugA, "KID-NEXT"}, // ids are not folded
			{slugA, "kid"},      // a prefix of an id
			{slugA, ""},
			{slugB, "kid-next"}, // only in another workspace
		} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.DeleteSigningKey(c.slug, c.id)
				return nil // commit: the refused delete must have changed nothing
			})
			checkErr(t, fmt.Sprintf("DeleteSigningKey(%q, %q)", c.slug, c.id), err, store.ErrNotFound)
		}
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, next})
		checkSigningKeys(t, s, slugB, nil)
		// A deleted id may be put again.
		putSigningKeys(t, s, slugA, active)
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, active, next})
		// Every key deleted: none left, and the workspace is still there.
		update(t, s, func(tx store.Tx) error {
			for _, id := range []string{"kid-next", "kid-retired", "kid-active"} {
				if err := tx.DeleteSigningKey(slugA, id); err != nil {
					return fmt.Errorf("DeleteSigningKey(%q): %w", id, err)
				}
			}
			return nil
		})
		checkSigningKeys(t, s, slugA, nil)
	})

	t.Run("Isolation", func(t *testing.T) {
		// One id in two workspaces names two keys.
		s := setup(t)
		other := store.SigningKey{
			ID: "kid-active", Algorithm: "RS256", State: "next",
			PrivateKey: []byte("globex private"), PublicKey: []byte("globex public"),
			CreatedAt: at(5),
		}
		putSigningKeys(t, s, slugB, other)
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, active, next})
		checkSigningKeys(t, s, slugB, []store.SigningKey{other})
		update(t, s, func(tx store.Tx) error { return tx.DeleteSigningKey(slugB, "kid-active") })
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, active, next})
		checkSigningKeys(t, s, slugB, nil)
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := setup(t)
		var errs [3]error
		update(t, s, func(tx store.Tx) error {
			errs[0] = tx.PutSigningKey(slugMissing, active)
			_, errs[1] = tx.SigningKeys(slugMissing)
			errs[2] = tx.DeleteSigningKey(slugMissing, "kid-active")
			return nil // commit: the refused calls must have written nothing
		})
		for i, name := range []string{"PutSigningKey", "SigningKeys", "DeleteSigningKey"} {
			checkErr(t, name+" in a missing workspace", errs[i], store.ErrNotFound)
		}
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, active, next})
		checkSigningKeys(t, s, slugB, nil)
	})

	t.Run("Rollback", func(t *testing.T) {
		s := setup(t)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			added := store.SigningKey{ID: "kid-new", Algorithm: "ES256", State: "next", CreatedAt: at(50)}
			changed := store.SigningKey{ID: "kid-next", Algorithm: "ES256", State: "active", CreatedAt: at(1)}
			if err := tx.PutSigningKey(slugA, added); err != nil {
				return err
			}
			if err := tx.PutSigningKey(slugA, changed); err != nil {
				return err
			}
			if err := tx.DeleteSigningKey(slugA, "kid-retired"); err != nil {
				return err
			}
			if err := tx.PutSigningKey(slugB, added); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		checkSigningKeys(t, s, slugA, []store.SigningKey{retired, active, next})
		checkSigningKeys(t, s, slugB, nil)
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		k := store.SigningKey{
			ID: "kid-1", Algorithm: "ES256", State: "active",
			PrivateKey: []byte("private"), PublicKey: []byte("public"), CreatedAt: at(1),
		}
		putSigningKeys(t, s, slugA, k)
		k.PrivateKey[0], k.PublicKey[0] = 'X', 'X'
		got, err := readRecord(t, s, func(tx store.Tx) ([]store.SigningKey, error) { return tx.SigningKeys(slugA) })
		if err != nil || len(got) != 1 {
			t.Fatalf("SigningKeys = %v, %v; want one key", got, err)
		}
		got[0].PrivateKey[1], got[0].PublicKey[1] = 'Y', 'Y'
		checkSigningKeys(t, s, slugA, []store.SigningKey{{
			ID: "kid-1", Algorithm: "ES256", State: "active",
			PrivateKey: []byte("private"), PublicKey: []byte("public"), CreatedAt: at(1),
		}})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		in := retired
		in.CreatedAt, in.ActivatedAt = retired.CreatedAt.In(utcMinus3), retired.ActivatedAt.In(utcMinus3)
		in.RetiredAt, in.RemoveAt = retired.RetiredAt.In(utcMinus3), retired.RemoveAt.In(utcMinus3)
		putSigningKeys(t, s, slugA, in)
		got, err := readRecord(t, s, func(tx store.Tx) ([]store.SigningKey, error) { return tx.SigningKeys(slugA) })
		if err != nil || len(got) != 1 {
			t.Fatalf("SigningKeys = %v, %v; want one key", got, err)
		}
		checkUTC(t, "SigningKeys", got[0].CreatedAt, got[0].ActivatedAt, got[0].RetiredAt, got[0].RemoveAt)
		if diff := cmp.Diff(retired, got[0]); diff != "" {
			t.Errorf("SigningKeys mismatch (-want +got):\n%s", diff)
		}
	})
}

// Authorization requests.

func putAuthRequests(t *testing.T, s store.Store, slug string, rs ...store.AuthRequest) {
	t.Helper()
	putAll(t, s, "PutAuthRequest", slug, func(r store.AuthRequest) string { return r.ID },
		func(tx store.Tx, r store.AuthRequest) error { return tx.PutAuthRequest(slug, r) }, rs...)
}

func checkAuthRequest(t *testing.T, s store.Store, slug string, want store.AuthRequest) {
	t.Helper()
	checkRecord(t, s, fmt.Sprintf("AuthRequest(%q, %q)", slug, want.ID), want,
		func(tx store.Tx) (store.AuthRequest, error) { return tx.AuthRequest(slug, want.ID) })
}

func checkNoAuthRequest(t *testing.T, s store.Store, slug, id string) {
	t.Helper()
	checkMissing(t, s, fmt.Sprintf("AuthRequest(%q, %q)", slug, id), func(tx store.Tx) (store.AuthRequest, error) { return tx.AuthRequest(slug, id) })
}

// testAuthRequests checks PutAuthRequest and AuthRequest.
func testAuthRequests(t *testing.T, newStore func(t *testing.T) store.Store) {
	// A request as the client sent it: nobody has signed in, no code.
	sent := store.AuthRequest{
		ID: "ar-1", ClientID: "client-1", RedirectURI: "https://app.example.com/cb?x=1&y=ü",
		Scopes: []string{"openid", "profile", "email", "offline_access"},
		State:  "af0ifjsldkj é~\x00\xff", Nonce: "n-0S6_WzA2Mj\x00\xff",
		CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", CodeChallengeMethod: "S256",
		Prompt: "login consent", CreatedAt: at(100), ExpiresAt: at(700),
	}
	// The same request after sign-in, with a code issued.
	coded := store.AuthRequest{
		ID: "ar-1", ClientID: "client-1", RedirectURI: "https://app.example.com/cb?x=1&y=ü",
		Scopes: []string{"openid", "profile", "email", "offline_access"},
		State:  "af0ifjsldkj é~\x00\xff", Nonce: "n-0S6_WzA2Mj\x00\xff",
		CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", CodeChallengeMethod: "S256",
		Prompt: "login consent", CreatedAt: at(100), ExpiresAt: at(190),
		UserID: 7, SessionID: "sess/é\x00\xff~", AuthTime: at(120), CodeHash: []byte("code hash \x00\xff"),
	}
	// Its code redeemed: every field set.
	redeemed := store.AuthRequest{
		ID: "ar-1", ClientID: "client-1", RedirectURI: "https://app.example.com/cb?x=1&y=ü",
		Scopes: []string{"openid", "profile", "email", "offline_access"},
		State:  "af0ifjsldkj é~\x00\xff", Nonce: "n-0S6_WzA2Mj\x00\xff",
		CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", CodeChallengeMethod: "S256",
		Prompt: "login consent", CreatedAt: at(100), ExpiresAt: at(190),
		UserID: 7, SessionID: "sess/é\x00\xff~", AuthTime: at(120), CodeHash: []byte("code hash \x00\xff"),
		UsedAt: at(150), GrantID: "gr-1",
	}
	// A plain request: one scope, no state, nonce, PKCE or prompt.
	plain := store.AuthRequest{
		ID: "ar-2", ClientID: "client-2", RedirectURI: "http://127.0.0.1:8080/cb",
		Scopes: []string{"openid"}, CreatedAt: at(200), ExpiresAt: at(800),
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		bare := store.AuthRequest{ID: "ar-bare"} // nil scopes and hash, zero times
		putAuthRequests(t, s, slugA, redeemed, plain, bare)
		checkAuthRequest(t, s, slugA, redeemed)
		checkAuthRequest(t, s, slugA, plain)
		checkAuthRequest(t, s, slugA, bare)
	})

	t.Run("Replace", func(t *testing.T) {
		// The request's life: sent, signed in with a code, redeemed;
		// then every field written back to what it was.
		s := newStoreWith(t, newStore, slugA)
		putAuthRequests(t, s, slugA, sent, plain)
		checkAuthRequest(t, s, slugA, sent)
		putAuthRequests(t, s, slugA, coded)
		checkAuthRequest(t, s, slugA, coded)
		putAuthRequests(t, s, slugA, redeemed)
		checkAuthRequest(t, s, slugA, redeemed)
		// Every field changed.
		changed := store.AuthRequest{
			ID: "ar-1", ClientID: "client-3", RedirectURI: "https://other.example.com/cb",
			Scopes: []string{"email"}, State: "s2", Nonce: "n2", CodeChallenge: "c2", CodeChallengeMethod: "plain",
			Prompt: "none", CreatedAt: at(1), ExpiresAt: at(2), UserID: 8, SessionID: "sess-8", AuthTime: at(3),
			CodeHash: []byte("hash 2"), UsedAt: at(4), GrantID: "gr-2",
		}
		putAuthRequests(t, s, slugA, changed)
		checkAuthRequest(t, s, slugA, changed)
		putAuthRequests(t, s, slugA, sent)
		checkAuthRequest(t, s, slugA, sent)
		checkAuthRequest(t, s, slugA, plain)
		// No scopes where there were several.
		noScopes := store.AuthRequest{
			ID: "ar-2", ClientID: "client-2", RedirectURI: "http://127.0.0.1:8080/cb",
			CreatedAt: at(200), ExpiresAt: at(800),
		}
		putAuthRequests(t, s, slugA, noScopes)
		checkAuthRequest(t, s, slugA, noScopes)
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putAuthRequests(t, s, slugB, sent)
		checkNoAuthRequest(t, s, slugA, "ar-1") // only in another workspace
		checkNoAuthRequest(t, s, slugB, "AR-1") // ids are not folded
		checkNoAuthRequest(t, s, slugB, "ar")   // a prefix of an id
		checkNoAuthRequest(t, s, slugB, "ar-10")
		checkNoAuthRequest(t, s, slugB, "")
		checkNoAuthRequest(t, s, slugMissing, "ar-1")
		checkAuthRequest(t, s, slugB, sent)
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutAuthRequest(slugMissing, sent)
			return nil // commit: the refused put must have written nothing
		})
		checkErr(t, "PutAuthRequest in a missing workspace", err, store.ErrNotFound)
		checkNoAuthRequest(t, s, slugMissing, "ar-1")
		checkNoAuthRequest(t, s, slugA, "ar-1")
	})

	t.Run("Isolation", func(t *testing.T) {
		// One id in two workspaces names two requests.
		s := newStoreWith(t, newStore, slugA, slugB)
		other := store.AuthRequest{
			ID: "ar-1", ClientID: "client-9", RedirectURI: "https://globex.example.com/cb",
			Scopes: []string{"openid", "email"}, CreatedAt: at(300), ExpiresAt: at(900),
		}
		putAuthRequests(t, s, slugA, sent)
		putAuthRequests(t, s, slugB, other)
		checkAuthRequest(t, s, slugA, sent)
		checkAuthRequest(t, s, slugB, other)
		putAuthRequests(t, s, slugA, redeemed)
		checkAuthRequest(t, s, slugA, redeemed)
		checkAuthRequest(t, s, slugB, other)
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putAuthRequests(t, s, slugA, sent)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutAuthRequest(slugA, redeemed); err != nil {
				return err
			}
			if err := tx.PutAuthRequest(slugA, plain); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		checkAuthRequest(t, s, slugA, sent)
		checkNoAuthRequest(t, s, slugA, "ar-2")
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		r := store.AuthRequest{
			ID: "ar-1", ClientID: "client-1", Scopes: []string{"openid", "email"},
			CodeHash: []byte("hash"), CreatedAt: at(1),
		}
		putAuthRequests(t, s, slugA, r)
		r.Scopes[0], r.CodeHash[0] = "changed", 'X'
		got, err := readRecord(t, s, func(tx store.Tx) (store.AuthRequest, error) { return tx.AuthRequest(slugA, "ar-1") })
		if err != nil {
			t.Fatalf("AuthRequest: %v", err)
		}
		got.Scopes[1], got.CodeHash[1] = "changed", 'Y'
		checkAuthRequest(t, s, slugA, store.AuthRequest{
			ID: "ar-1", ClientID: "client-1", Scopes: []string{"openid", "email"},
			CodeHash: []byte("hash"), CreatedAt: at(1),
		})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		in := redeemed
		in.CreatedAt, in.ExpiresAt = redeemed.CreatedAt.In(utcMinus3), redeemed.ExpiresAt.In(utcMinus3)
		in.AuthTime, in.UsedAt = redeemed.AuthTime.In(utcMinus3), redeemed.UsedAt.In(utcMinus3)
		putAuthRequests(t, s, slugA, in)
		got, err := readRecord(t, s, func(tx store.Tx) (store.AuthRequest, error) { return tx.AuthRequest(slugA, "ar-1") })
		if err != nil {
			t.Fatalf("AuthRequest: %v", err)
		}
		checkUTC(t, "AuthRequest", got.CreatedAt, got.ExpiresAt, got.AuthTime, got.UsedAt)
		if diff := cmp.Diff(redeemed, got); diff != "" {
			t.Errorf("AuthRequest mismatch (-want +got):\n%s", diff)
		}
	})
}

// Grants.

func putGrants(t *testing.T, s store.Store, slug string, gs ...store.Grant) {
	t.Helper()
	putAll(t, s, "PutGrant", slug, func(g store.Grant) string { return g.ID },
		func(tx store.Tx, g store.Grant) error { return tx.PutGrant(slug, g) }, gs...)
}

func checkGrant(t *testing.T, s store.Store, slug string, want store.Grant) {
	t.Helper()
	checkRecord(t, s, fmt.Sprintf("Grant(%q, %q)", slug, want.ID), want,
		func(tx store.Tx) (store.Grant, error) { return tx.Grant(slug, want.ID) })
}

func checkNoGrant(t *testing.T, s store.Store, slug, id string) {
	t.Helper()
	checkMissing(t, s, fmt.Sprintf("Grant(%q, %q)", slug, id), func(tx store.Tx) (store.Grant, error) { return tx.Grant(slug, id) })
}

func checkUserGrants(t *testing.T, s store.Store, slug string, userID int64, want []store.Grant) {
	t.Helper()
	checkList(t, s, fmt.Sprintf("UserGrants(%q, %d)", slug, userID), want, func(g store.Grant) string { return g.ID },
		func(tx store.Tx) ([]store.Grant, error) { return tx.UserGrants(slug, userID) })
}

// testGrants checks PutGrant, Grant and UserGrants.
func testGrants(t *testing.T, newStore func(t *testing.T) store.Store) {
	// A user's grant, revoked: every field set.
	revokedGrant := store.Grant{
		ID: "gr-1", ClientID: "client-1", UserID: 7, SessionID: "sess/é\x00\xff~",
		Scopes:   []string{"openid", "profile", "offline_access"},
		AuthTime: at(120), CreatedAt: at(150), ExpiresAt: at(150 + 30*86400),
		RevokedAt: at(9000), RevokeReason: "refresh token reused",
	}
	// A user's grant in force.
	activeGrant := store.Grant{
		ID: "gr-2", ClientID: "client-2", UserID: 7, SessionID: "sess-2",
		Scopes:   []string{"openid"},
		AuthTime: at(200), CreatedAt: at(210), ExpiresAt: at(210 + 86400),
	}
	// A client's grant on its own behalf: no user, session or sign-in.
	clientGrant := store.Grant{
		ID: "gr-cc", ClientID: "service-1", Scopes: []string{"api:read", "api:write"},
		CreatedAt: at(300), ExpiresAt: at(3900),
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		bare := store.Grant{ID: "gr-bare"} // no user, nil scopes, zero times
		putGrants(t, s, slugA, revokedGrant, activeGrant, clientGrant, bare)
		checkGrant(t, s, slugA, revokedGrant)
		checkGrant(t, s, slugA, activeGrant)
		checkGrant(t, s, slugA, clientGrant)
		checkGrant(t, s, slugA, bare)
		checkUserGrants(t, s, slugA, 7, []store.Grant{revokedGrant, activeGrant})
	})

	t.Run("UserGrantsOrder", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		grant := func(id string, userID int64, created time.Time) store.Grant {
			return store.Grant{
				ID: id, ClientID: "client-1", UserID: userID, Scopes: []string{"openid"},
				AuthTime: created, CreatedAt: created, ExpiresAt: created.Add(time.Hour),
			}
		}
		early := time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC)
		// Written out of order, over several transactions, users
		// interleaved, grants of no user among them.
		putGrants(t, s, slugA, grant("b", 1, at(10)), grant("e", 2, at(50)), grant("0", 1, at(30)))
		putGrants(t, s, slugA, grant("a", 1, at(10)), grant("z-early", 1, early), grant("d", 2, at(5)))
		putGrants(t, s, slugA, grant("c", 1, at(20)), grant("a0", 1, at(10)), grant("cc-1", 0, at(1)))
		putGrants(t, s, slugA, grant("cc-2", 0, at(15)), grant("neg", -4, at(10)))
		// The same user ids and grant ids in another workspace.
		putGrants(t, s, slugB, grant("a", 1, at(1)), grant("x", 2, at(1)), grant("cc-1", 0, at(1)))

		checkUserGrants(t, s, slugA, 1, []store.Grant{
			grant("z-early", 1, early), grant("a", 1, at(10)), grant("a0", 1, at(10)), grant("b", 1, at(10)),
			grant("c", 1, at(20)), grant("0", 1, at(30)),
		})
		checkUserGrants(t, s, slugA, 2, []store.Grant{grant("d", 2, at(5)), grant("e", 2, at(50))})
		checkUserGrants(t, s, slugA, -4, []store.Grant{grant("neg", -4, at(10))})
		checkUserGrants(t, s, slugA, 3, nil)
		// Grants of no user are in no user's list, not even user 0's.
		checkUserGrants(t, s, slugA, 0, nil)
		checkGrant(t, s, slugA, grant("cc-1", 0, at(1)))
		checkGrant(t, s, slugA, grant("cc-2", 0, at(15)))
		checkUserGrants(t, s, slugB, 1, []store.Grant{grant("a", 1, at(1))})
		checkUserGrants(t, s, slugB, 2, []store.Grant{grant("x", 2, at(1))})
		checkUserGrants(t, s, slugB, 0, nil)
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putGrants(t, s, slugA, activeGrant, clientGrant)
		other := store.Grant{
			ID: "gr-3", ClientID: "client-1", UserID: 8, Scopes: []string{"openid"},
			AuthTime: at(100), CreatedAt: at(100), ExpiresAt: at(4000),
		}
		putGrants(t, s, slugA, other)
		// Revoked: still one grant.
		revoked := store.Grant{
			ID: "gr-2", ClientID: "client-2", UserID: 7, SessionID: "sess-2",
			Scopes:   []string{"openid"},
			AuthTime: at(200), CreatedAt: at(210), ExpiresAt: at(210 + 86400),
			RevokedAt: at(500), RevokeReason: "user signed out",
		}
		putGrants(t, s, slugA, revoked)
		checkGrant(t, s, slugA, revoked)
		checkUserGrants(t, s, slugA, 7, []store.Grant{revoked})
		// Every field changed, the user too.
		changed := store.Grant{
			ID: "gr-2", ClientID: "client-3", UserID: 9, SessionID: "sess-9",
			Scopes:   []string{"email", "profile"},
			AuthTime: at(1), CreatedAt: at(2), ExpiresAt: at(3), RevokedAt: at(4), RevokeReason: "admin",
		}
		putGrants(t, s, slugA, changed)
		checkGrant(t, s, slugA, changed)
		checkUserGrants(t, s, slugA, 7, nil)
		checkUserGrants(t, s, slugA, 9, []store.Grant{changed})
		// A new UserID moves the grant to that user; a new CreatedAt
		// reorders.
		moved := store.Grant{
			ID: "gr-2", ClientID: "client-2", UserID: 8, SessionID: "sess-2",
			Scopes:   []string{"openid"},
			AuthTime: at(200), CreatedAt: at(50), ExpiresAt: at(210 + 86400),
		}
		putGrants(t, s, slugA, moved)
		checkUserGrants(t, s, slugA, 7, nil)
		checkUserGrants(t, s, slugA, 8, []store.Grant{moved, other})
		// To user 0: in no list any more.
		noUser := store.Grant{ID: "gr-2", ClientID: "client-2", CreatedAt: at(50), ExpiresAt: at(4000)}
		putGrants(t, s, slugA, noUser)
		checkGrant(t, s, slugA, noUser)
		checkUserGrants(t, s, slugA, 8, []store.Grant{other})
		checkUserGrants(t, s, slugA, 0, nil)
		// From user 0 to a user: in that user's list; scopes cleared read
		// back empty.
		toUser := store.Grant{ID: "gr-cc", ClientID: "service-1", UserID: 7, CreatedAt: at(300), ExpiresAt: at(3900)}
		putGrants(t, s, slugA, toUser)
		checkGrant(t, s, slugA, toUser)
		checkUserGrants(t, s, slugA, 7, []store.Grant{toUser})
		// And back: every field written again, times cleared read back
		// zero.
		putGrants(t, s, slugA, activeGrant, clientGrant)
		checkGrant(t, s, slugA, activeGrant)
		checkGrant(t, s, slugA, clientGrant)
		checkUserGrants(t, s, slugA, 7, []store.Grant{activeGrant})
		checkUserGrants(t, s, slugA, 8, []store.Grant{other})
		checkUserGrants(t, s, slugA, 0, nil)
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putGrants(t, s, slugB, revokedGrant)
		checkNoGrant(t, s, slugA, "gr-1") // only in another workspace
		checkNoGrant(t, s, slugB, "GR-1") // ids are not folded
		checkNoGrant(t, s, slugB, "gr")   // a prefix of an id
		checkNoGrant(t, s, slugB, "gr-10")
		checkNoGrant(t, s, slugB, "")
		checkNoGrant(t, s, slugMissing, "gr-1")
		checkUserGrants(t, s, slugA, 7, nil) // no grants: none, not an error
		checkUserGrants(t, s, slugB, 8, nil)
		checkGrant(t, s, slugB, revokedGrant)
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var errs [3]error
		update(t, s, func(tx store.Tx) error {
			errs[0] = tx.PutGrant(slugMissing, activeGrant)
			_, errs[1] = tx.Grant(slugMissing, "gr-2")
			_, errs[2] = tx.UserGrants(slugMissing, 7)
			return nil // commit: the refused put must have written nothing
		})
		for i, name := range []string{"PutGrant", "Grant", "UserGrants"} {
			checkErr(t, name+" in a missing workspace", errs[i], store.ErrNotFound)
		}
		_, err := readRecord(t, s, func(tx store.Tx) ([]store.Grant, error) { return tx.UserGrants(slugMissing, 0) })
		checkErr(t, "UserGrants of user 0 in a missing workspace", err, store.ErrNotFound)
		checkNoGrant(t, s, slugA, "gr-2")
		checkUserGrants(t, s, slugA, 7, nil)
	})

	t.Run("Isolation", func(t *testing.T) {
		// One id in two workspaces names two grants, and one user id two
		// users.
		s := newStoreWith(t, newStore, slugA, slugB)
		other := store.Grant{
			ID: "gr-1", ClientID: "client-9", UserID: 7, Scopes: []string{"openid", "email"},
			AuthTime: at(10), CreatedAt: at(10), ExpiresAt: at(20),
		}
		putGrants(t, s, slugA, revokedGrant, activeGrant)
		putGrants(t, s, slugB, other)
		checkGrant(t, s, slugA, revokedGrant)
		checkGrant(t, s, slugB, other)
		checkUserGrants(t, s, slugA, 7, []store.Grant{revokedGrant, activeGrant})
		checkUserGrants(t, s, slugB, 7, []store.Grant{other})
		// Moving slugB's grant to another user leaves slugA's lists alone.
		otherMoved := store.Grant{
			ID: "gr-1", ClientID: "client-9", UserID: 9, Scopes: []string{"openid", "email"},
			AuthTime: at(10), CreatedAt: at(10), ExpiresAt: at(20),
		}
		putGrants(t, s, slugB, otherMoved)
		checkUserGrants(t, s, slugA, 7, []store.Grant{revokedGrant, activeGrant})
		checkUserGrants(t, s, slugB, 7, nil)
		checkUserGrants(t, s, slugB, 9, []store.Grant{otherMoved})
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putGrants(t, s, slugA, revokedGrant, activeGrant)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			for _, g := range []store.Grant{
				{ID: "gr-1", ClientID: "client-1", UserID: 8, CreatedAt: at(1)}, // moved to user 8
				{ID: "gr-2", ClientID: "client-2", CreatedAt: at(210)},          // moved to no user
				{ID: "gr-4", ClientID: "client-1", UserID: 7, CreatedAt: at(5)}, // new
				clientGrant, // new, of no user
			} {
				if err := tx.PutGrant(slugA, g); err != nil {
					return err
				}
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		checkGrant(t, s, slugA, revokedGrant)
		checkGrant(t, s, slugA, activeGrant)
		checkNoGrant(t, s, slugA, "gr-4")
		checkNoGrant(t, s, slugA, "gr-cc")
		checkUserGrants(t, s, slugA, 7, []store.Grant{revokedGrant, activeGrant})
		checkUserGrants(t, s, slugA, 8, nil)
		checkUserGrants(t, s, slugA, 0, nil)
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		g := store.Grant{ID: "gr-1", ClientID: "client-1", UserID: 7, Scopes: []string{"openid", "email"}, CreatedAt: at(1)}
		putGrants(t, s, slugA, g)
		g.Scopes[0] = "changed"
		var list []store.Grant
		one, err := readRecord(t, s, func(tx store.Tx) (store.Grant, error) {
			var err error
			if list, err = tx.UserGrants(slugA, 7); err != nil {
				return store.Grant{}, err
			}
			return tx.Grant(slugA, "gr-1")
		})
		if err != nil || len(list) != 1 {
			t.Fatalf("Grant, UserGrants = %v, %v, %v; want the grant", one, list, err)
		}
		one.Scopes[1] = "changed"
		list[0].Scopes[0] = "changed"
		want := store.Grant{ID: "gr-1", ClientID: "client-1", UserID: 7, Scopes: []string{"openid", "email"}, CreatedAt: at(1)}
		checkGrant(t, s, slugA, want)
		checkUserGrants(t, s, slugA, 7, []store.Grant{want})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		in := revokedGrant
		in.AuthTime, in.CreatedAt = revokedGrant.AuthTime.In(utcMinus3), revokedGrant.CreatedAt.In(utcMinus3)
		in.ExpiresAt, in.RevokedAt = revokedGrant.ExpiresAt.In(utcMinus3), revokedGrant.RevokedAt.In(utcMinus3)
		putGrants(t, s, slugA, in)
		var list []store.Grant
		got, err := readRecord(t, s, func(tx store.Tx) (store.Grant, error) {
			var err error
			if list, err = tx.UserGrants(slugA, 7); err != nil {
				return store.Grant{}, err
			}
			return tx.Grant(slugA, "gr-1")
		})
		if err != nil || len(list) != 1 {
			t.Fatalf("Grant, UserGrants = %v, %v, %v; want the grant", got, list, err)
		}
		for _, g := range []store.Grant{got, list[0]} {
			checkUTC(t, "Grant", g.AuthTime, g.CreatedAt, g.ExpiresAt, g.RevokedAt)
			if diff := cmp.Diff(revokedGrant, g); diff != "" {
				t.Errorf("Grant mismatch (-want +got):\n%s", diff)
			}
		}
	})
}

// Refresh tokens.

func putRefreshTokens(t *testing.T, s store.Store, slug string, ts ...store.RefreshToken) {
	t.Helper()
	putAll(t, s, "PutRefreshToken", slug, func(r store.RefreshToken) string { return r.ID },
		func(tx store.Tx, r store.RefreshToken) error { return tx.PutRefreshToken(slug, r) }, ts...)
}

func checkRefreshToken(t *testing.T, s store.Store, slug string, want store.RefreshToken) {
	t.Helper()
	checkRecord(t, s, fmt.Sprintf("RefreshToken(%q, %q)", slug, want.ID), want,
		func(tx store.Tx) (store.RefreshToken, error) { return tx.RefreshToken(slug, want.ID) })
}

func checkNoRefreshToken(t *testing.T, s store.Store, slug, id string) {
	t.Helper()
	checkMissing(t, s, fmt.Sprintf("RefreshToken(%q, %q)", slug, id), func(tx store.Tx) (store.RefreshToken, error) { return tx.RefreshToken(slug, id) })
}

// testRefreshTokens checks PutRefreshToken and RefreshToken.
func testRefreshTokens(t *testing.T, newStore func(t *testing.T) store.Store) {
	// A token exchanged for its successor: every field set.
	used := store.RefreshToken{
		ID: "rt-1", GrantID: "gr-1", SecretHash: []byte("hash of rt-1 \x00\xff"),
		CreatedAt: at(150), ExpiresAt: at(150 + 86400), UsedAt: at(600),
	}
	// Its successor, not used yet.
	fresh := store.RefreshToken{
		ID: "rt-2", GrantID: "gr-1", SecretHash: []byte("hash of rt-2"),
		CreatedAt: at(600), ExpiresAt: at(600 + 86400),
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		bare := store.RefreshToken{ID: "rt-bare", GrantID: "gr-9"} // nil hash, zero times
		putRefreshTokens(t, s, slugA, used, fresh, bare)
		checkRefreshToken(t, s, slugA, used)
		checkRefreshToken(t, s, slugA, fresh)
		checkRefreshToken(t, s, slugA, bare)
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putRefreshTokens(t, s, slugA, fresh)
		nowUsed := store.RefreshToken{
			ID: "rt-2", GrantID: "gr-1", SecretHash: []byte("hash of rt-2"),
			CreatedAt: at(600), ExpiresAt: at(600 + 86400), UsedAt: at(900),
		}
		putRefreshTokens(t, s, slugA, nowUsed)
		checkRefreshToken(t, s, slugA, nowUsed)
		// Every field changed, UsedAt cleared.
		changed := store.RefreshToken{
			ID: "rt-2", GrantID: "gr-2", SecretHash: []byte("another hash"),
			CreatedAt: at(1), ExpiresAt: at(2),
		}
		putRefreshTokens(t, s, slugA, changed)
		checkRefreshToken(t, s, slugA, changed)
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putRefreshTokens(t, s, slugB, used)
		checkNoRefreshToken(t, s, slugA, "rt-1") // only in another workspace
		checkNoRefreshToken(t, s, slugB, "RT-1") // ids are not folded
		checkNoRefreshToken(t, s, slugB, "rt")   // a prefix of an id
		checkNoRefreshToken(t, s, slugB, "rt-10")
		checkNoRefreshToken(t, s, slugB, "")
		checkNoRefreshToken(t, s, slugB, "gr-1") // a grant id is not a token id
		checkNoRefreshToken(t, s, slugMissing, "rt-1")
		checkRefreshToken(t, s, slugB, used)
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutRefreshToken(slugMissing, fresh)
			return nil // commit: the refused put must have written nothing
		})
		checkErr(t, "PutRefreshToken in a missing workspace", err, store.ErrNotFound)
		checkNoRefreshToken(t, s, slugMissing, "rt-2")
		checkNoRefreshToken(t, s, slugA, "rt-2")
	})

	t.Run("Isolation", func(t *testing.T) {
		// One id in two workspaces names two tokens.
		s := newStoreWith(t, newStore, slugA, slugB)
		other := store.RefreshToken{
			ID: "rt-1", GrantID: "gr-7", SecretHash: []byte("globex hash"),
			CreatedAt: at(10), ExpiresAt: at(20),
		}
		putRefreshTokens(t, s, slugA, used)
		putRefreshTokens(t, s, slugB, other)
		checkRefreshToken(t, s, slugA, used)
		checkRefreshToken(t, s, slugB, other)
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putRefreshTokens(t, s, slugA, fresh)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutRefreshToken(slugA, store.RefreshToken{ID: "rt-2", GrantID: "gr-1", UsedAt: at(999)}); err != nil {
				return err
			}
			if err := tx.PutRefreshToken(slugA, used); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		checkRefreshToken(t, s, slugA, fresh)
		checkNoRefreshToken(t, s, slugA, "rt-1")
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		r := store.RefreshToken{ID: "rt-1", GrantID: "gr-1", SecretHash: []byte("hash"), CreatedAt: at(1)}
		putRefreshTokens(t, s, slugA, r)
		r.SecretHash[0] = 'X'
		got, err := readRecord(t, s, func(tx store.Tx) (store.RefreshToken, error) { return tx.RefreshToken(slugA, "rt-1") })
		if err != nil {
			t.Fatalf("RefreshToken: %v", err)
		}
		got.SecretHash[1] = 'Y'
		checkRefreshToken(t, s, slugA, store.RefreshToken{ID: "rt-1", GrantID: "gr-1", SecretHash: []byte("hash"), CreatedAt: at(1)})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		in := used
		in.CreatedAt, in.ExpiresAt, in.UsedAt = used.CreatedAt.In(utcMinus3), used.ExpiresAt.In(utcMinus3), used.UsedAt.In(utcMinus3)
		putRefreshTokens(t, s, slugA, in)
		got, err := readRecord(t, s, func(tx store.Tx) (store.RefreshToken, error) { return tx.RefreshToken(slugA, "rt-1") })
		if err != nil {
			t.Fatalf("RefreshToken: %v", err)
		}
		checkUTC(t, "RefreshToken", got.CreatedAt, got.ExpiresAt, got.UsedAt)
		if diff := cmp.Diff(used, got); diff != "" {
			t.Errorf("RefreshToken mismatch (-want +got):\n%s", diff)
		}
	})
}
