package pgstore_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// roundTrip is a record of TestSignInRecords: put writes its version v,
// check reads it back and compares it with version v.
type roundTrip struct {
	name  string
	put   func(tx store.Tx, v int) error
	check func(t *testing.T, tx store.Tx, v int)
}

// recordRoundTrip returns the roundTrip of a record of type T written by
// put and read by get, in two versions.
func recordRoundTrip[T any](name string, versions [2]T, put func(store.Tx, T) error, get func(store.Tx) (T, error)) roundTrip {
	return roundTrip{
		name: name,
		put:  func(tx store.Tx, v int) error { return put(tx, versions[v]) },
		check: func(t *testing.T, tx store.Tx, v int) {
			t.Helper()
			got, err := get(tx)
			if err != nil {
				t.Errorf("%s, version %d: %v", name, v, err)
				return
			}
			// No cmpopts.EquateEmpty: a list written as nil reads back nil.
			if diff := cmp.Diff(versions[v], got); diff != "" {
				t.Errorf("%s, version %d, mismatch (-want +got):\n%s", name, v, diff)
			}
		},
	}
}

// TestSignInRecords checks that the fields of migration 0012 round-trip
// exactly, written new (version 0) and written over (version 1), among
// them lists left nil and lists emptied.
func TestSignInRecords(t *testing.T) {
	s := withWorkspace(t, nil)
	later := t0.Add(time.Hour)
	signedIn := store.Session{
		ID: "s-1", UserID: 1, SecretHash: []byte("hash"), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour),
		LastSeenAt: t0, UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0 – Büro", Address: "2001:db8::1",
		AMR: []string{"pwd", "otp", "mfa"},
	}
	revoked := signedIn
	revoked.RevokedAt, revoked.UserAgent, revoked.Address, revoked.AMR = later, "", "", nil
	noClient := store.Session{ID: "s-2", UserID: 1, SecretHash: []byte("hash"), CreatedAt: t0, ExpiresAt: later}
	withClient := noClient
	withClient.UserAgent, withClient.Address, withClient.AMR = "curl/8.5.0", "192.0.2.7", []string{"hwk", "user"}

	pending := store.AuthRequest{
		ID: "ar-1", ClientID: "app", RedirectURI: "https://app.example.com/cb", Scopes: []string{"openid", "email"},
		State: "st", Nonce: "n", Prompt: "login", UILocales: "de-CH fr-CH en", CreatedAt: t0, ExpiresAt: later,
		CodeHash: []byte{}, // no code yet: a bytea reads back empty, not nil
	}
	authorized := pending
	authorized.UserID, authorized.SessionID, authorized.AuthTime, authorized.AMR = 1, "s-1", t0, []string{"pwd", "otp"}
	authorized.CodeHash = []byte("code")

	grant := store.Grant{
		ID: "g-1", ClientID: "app", UserID: 1, SessionID: "s-1", Scopes: []string{"openid", "offline_access"},
		AuthTime: t0, AMR: []string{"pwd", "otp"}, CreatedAt: t0, ExpiresAt: later,
	}
	revokedGrant := grant
	revokedGrant.RevokedAt, revokedGrant.RevokeReason = later, "logout"
	clientGrant := store.Grant{ID: "g-2", ClientID: "svc", Scopes: []string{"api"}, CreatedAt: t0, ExpiresAt: later}

	token := store.RefreshToken{ID: "rt-1", GrantID: "g-1", SecretHash: []byte("hash"), CreatedAt: t0, ExpiresAt: later}
	exchanged := token
	exchanged.UsedAt, exchanged.SuccessorID = t0.Add(time.Minute), "rt-2"

	records := []roundTrip{
		recordRoundTrip("session signed in, then revoked and its client cleared", [2]store.Session{signedIn, revoked},
			func(tx store.Tx, r store.Session) error { return tx.PutSession("acme", r) },
			func(tx store.Tx) (store.Session, error) { return tx.Session("acme", "s-1") }),
		recordRoundTrip("session of no known client, then of one", [2]store.Session{noClient, withClient},
			func(tx store.Tx, r store.Session) error { return tx.PutSession("acme", r) },
			func(tx store.Tx) (store.Session, error) { return tx.Session("acme", "s-2") }),
		recordRoundTrip("authorization request, then signed in", [2]store.AuthRequest{pending, authorized},
			func(tx store.Tx, r store.AuthRequest) error { return tx.PutAuthRequest("acme", r) },
			func(tx store.Tx) (store.AuthRequest, error) { return tx.AuthRequest("acme", "ar-1") }),
		recordRoundTrip("grant, then revoked", [2]store.Grant{grant, revokedGrant},
			func(tx store.Tx, r store.Grant) error { return tx.PutGrant("acme", r) },
			func(tx store.Tx) (store.Grant, error) { return tx.Grant("acme", "g-1") }),
		recordRoundTrip("client's own grant", [2]store.Grant{clientGrant, clientGrant},
			func(tx store.Tx, r store.Grant) error { return tx.PutGrant("acme", r) },
			func(tx store.Tx) (store.Grant, error) { return tx.Grant("acme", "g-2") }),
		recordRoundTrip("refresh token, then exchanged", [2]store.RefreshToken{token, exchanged},
			func(tx store.Tx, r store.RefreshToken) error { return tx.PutRefreshToken("acme", r) },
			func(tx store.Tx) (store.RefreshToken, error) { return tx.RefreshToken("acme", "rt-1") }),
	}
	for v := range 2 {
		update(t, s, func(tx store.Tx) error {
			for _, r := range records {
				if err := r.put(tx, v); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			for _, r := range records {
				r.check(t, tx, v)
			}
			return nil
		})
	}

	// The listings read the same columns.
	view(t, s, func(tx store.Tx) error {
		sessions, err := tx.UserSessions("acme", 1)
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.Session{revoked, withClient}, sessions); diff != "" {
			t.Errorf("UserSessions mismatch (-want +got):\n%s", diff)
		}
		grants, err := tx.UserGrants("acme", 1)
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.Grant{revokedGrant}, grants); diff != "" {
			t.Errorf("UserGrants mismatch (-want +got):\n%s", diff)
		}
		return nil
	})
}

// TestUpgradeToSignInRecords brings a schema of migration 0011 holding a
// session, an authorization request, a grant and a refresh token up to
// date with Open, and checks that they read back with the fields of
// migration 0012 empty, and that the upgraded schema keeps assets.
func TestUpgradeToSignInRecords(t *testing.T) {
	url := pgtest.URL(t)
	conn := connect(t, url)
	if _, err := pgstore.Migrate(t.Context(), conn, migrationsUpTo(t, 11)); err != nil {
		t.Fatalf("Migrate to migration 0011: %v", err)
	}
	zero := time.Time{}
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO workspaces (slug, created_at, settings) VALUES ('acme', $1, '')", []any{t0}},
		{`INSERT INTO sessions (workspace, id, user_id, secret_hash, created_at, expires_at, last_seen_at, revoked_at)
			VALUES ('acme', 's-1', 1, 'hash', $1, $1, $1, $2)`, []any{t0, zero}},
		{`INSERT INTO auth_requests (workspace, id, client_id, redirect_uri, scopes, state, nonce, code_challenge,
				code_challenge_method, prompt, created_at, expires_at, user_id, session_id, auth_time, code_hash, used_at, grant_id)
			VALUES ('acme', 'ar-1', 'app', 'https://app.example.com/cb', '{openid}', 'st', 'n', '', '', '', $1, $1,
				1, 's-1', $1, 'code', $2, '')`, []any{t0, zero}},
		{`INSERT INTO grants (workspace, id, client_id, user_id, session_id, scopes, auth_time, created_at, expires_at,
				revoked_at, revoke_reason)
			VALUES ('acme', 'g-1', 'app', 1, 's-1', '{openid}', $1, $1, $1, $2, '')`, []any{t0, zero}},
		{`INSERT INTO refresh_tokens (workspace, id, grant_id, secret_hash, created_at, expires_at, used_at)
			VALUES ('acme', 'rt-1', 'g-1', 'hash', $1, $1, $1)`, []any{t0}},
	} {
		if _, err := conn.Exec(t.Context(), stmt.sql, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}

	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	want := []any{
		store.Session{ID: "s-1", UserID: 1, SecretHash: []byte("hash"), CreatedAt: t0, ExpiresAt: t0, LastSeenAt: t0},
		store.AuthRequest{
			ID: "ar-1", ClientID: "app", RedirectURI: "https://app.example.com/cb", Scopes: []string{"openid"},
			State: "st", Nonce: "n", CreatedAt: t0, ExpiresAt: t0, UserID: 1, SessionID: "s-1", AuthTime: t0,
			CodeHash: []byte("code"),
		},
		store.Grant{
			ID: "g-1", ClientID: "app", UserID: 1, SessionID: "s-1", Scopes: []string{"openid"}, AuthTime: t0,
			CreatedAt: t0, ExpiresAt: t0,
		},
		store.RefreshToken{ID: "rt-1", GrantID: "g-1", SecretHash: []byte("hash"), CreatedAt: t0, ExpiresAt: t0, UsedAt: t0},
	}
	var got []any
	view(t, s, func(tx store.Tx) error {
		for _, read := range []func() (any, error){
			func() (any, error) { return tx.Session("acme", "s-1") },
			func() (any, error) { return tx.AuthRequest("acme", "ar-1") },
			func() (any, error) { return tx.Grant("acme", "g-1") },
			func() (any, error) { return tx.RefreshToken("acme", "rt-1") },
		} {
			r, err := read()
			if err != nil {
				return err
			}
			got = append(got, r)
		}
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records of the older schema (-want +got):\n%s", diff)
	}

	logo := store.Asset{Name: "logo", ContentType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0}, UpdatedAt: t0}
	update(t, s, func(tx store.Tx) error { return tx.PutAsset("acme", logo) })
	view(t, s, func(tx store.Tx) error {
		a, err := tx.Asset("acme", "logo")
		if diff := cmp.Diff(logo, a); err == nil && diff != "" {
			t.Errorf("Asset after the upgrade mismatch (-want +got):\n%s", diff)
		}
		return err
	})
}

// TestAssetLimits checks what the conformance suite leaves out: an asset
// of 64 KiB of any bytes round-trips exactly, times keep the microsecond
// in UTC, and an asset without a name is refused with an error of its own
// that leaves the transaction usable.
func TestAssetLimits(t *testing.T) {
	s := withWorkspace(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	local := time.Date(2024, 5, 6, 9, 8, 9, 123456789, time.FixedZone("CEST", 2*3600))
	big := store.Asset{Name: "client/app-1/logo", ContentType: "image/jpeg", Data: data, UpdatedAt: local}
	var refused error
	update(t, s, func(tx store.Tx) error {
		refused = tx.PutAsset("acme", store.Asset{ContentType: "image/png", Data: []byte("x"), UpdatedAt: t0})
		return tx.PutAsset("acme", big)
	})
	if refused == nil || errors.Is(refused, store.ErrNotFound) || errors.Is(refused, store.ErrConflict) {
		t.Errorf("PutAsset without a name: error = %v, want a refusal of its own", refused)
	}
	view(t, s, func(tx store.Tx) error {
		got, err := tx.Asset("acme", big.Name)
		if err != nil {
			return err
		}
		if !bytes.Equal(got.Data, data) {
			t.Errorf("Asset data: %d bytes, not the %d written", len(got.Data), len(data))
		}
		want := store.Asset{Name: big.Name, ContentType: big.ContentType, UpdatedAt: t0}
		got.Data = nil
		if diff := cmp.Diff(want, got); diff != "" || got.UpdatedAt.Location() != time.UTC {
			t.Errorf("Asset mismatch (-want +got):\n%s(location %v)", diff, got.UpdatedAt.Location())
		}
		if _, err := tx.Asset("acme", ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Asset without a name: error = %v, want ErrNotFound", err)
		}
		return nil
	})
}
