package boltstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// previousReleaseFile is a file written by the previous release (see
// testdata/README.md): workspace acme with webhook endpoint 1 and user 1,
// whose creation queued mail job 1 (a verification email, stored under
// endpoint 0 without a kind) and webhook delivery 2, both pending.
const previousReleaseFile = "testdata/previous-release.db"

// previousReleaseTime is the clock of the program that wrote it.
var previousReleaseTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// copyFile copies src into a fresh temporary directory and returns the
// copy's path, so that a test never changes the file it starts from.
func copyFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPreviousReleaseFile checks that the jobs of a file written by the
// previous release, whose records have no kind, read back with their
// kind: through Deliveries, MailJobs, Delivery and DueDeliveries, after a
// write of the mail job, and after reopening.
func TestPreviousReleaseFile(t *testing.T) {
	path := copyFile(t, previousReleaseFile)
	ignore := cmpopts.IgnoreFields(store.Delivery{}, "EventID", "Payload")
	mail := store.Delivery{
		ID: 1, Kind: store.JobMail, EventType: "email.verification",
		CreatedAt: previousReleaseTime, Status: store.DeliveryPending, NextAttemptAt: previousReleaseTime,
	}
	hook := store.Delivery{
		ID: 2, Kind: store.JobWebhook, EndpointID: 1, EventType: "user.created",
		CreatedAt: previousReleaseTime, Status: store.DeliveryPending, NextAttemptAt: previousReleaseTime,
	}
	check := func(t *testing.T, s store.Store, mail, hook store.Delivery) {
		t.Helper()
		mustView(t, s, func(tx store.Tx) error {
			hooks, err := tx.Deliveries(testSlug, 1)
			if err != nil {
				return err
			}
			if diff := cmp.Diff([]store.Delivery{hook}, hooks, ignore); diff != "" {
				t.Errorf("Deliveries(endpoint 1) mismatch (-want +got):\n%s", diff)
			}
			mails, err := tx.MailJobs(testSlug)
			if err != nil {
				return err
			}
			if diff := cmp.Diff([]store.Delivery{mail}, mails, ignore); diff != "" {
				t.Errorf("MailJobs mismatch (-want +got):\n%s", diff)
			}
			if len(mails) == 1 && string(mails[0].Payload) != `{"kind":"verify_email","userId":1,"email":"alice@acme.example"}` {
				t.Errorf("mail job payload = %s", mails[0].Payload)
			}
			for _, want := range []store.Delivery{mail, hook} {
				got, err := tx.Delivery(testSlug, want.ID)
				if err != nil {
					return err
				}
				if diff := cmp.Diff(want, got, ignore); diff != "" {
					t.Errorf("Delivery(%d) mismatch (-want +got):\n%s", want.ID, diff)
				}
			}
			due, err := tx.DueDeliveries(previousReleaseTime.Add(time.Hour), 10)
			if err != nil {
				return err
			}
			wantDue := []store.QueuedDelivery{{Workspace: testSlug, Delivery: mail}, {Workspace: testSlug, Delivery: hook}}
			if mail.DueAt().After(hook.DueAt()) {
				wantDue[0], wantDue[1] = wantDue[1], wantDue[0]
			}
			if diff := cmp.Diff(wantDue, due, ignore); diff != "" {
				t.Errorf("DueDeliveries mismatch (-want +got):\n%s", diff)
			}
			if n, err := tx.PendingDeliveries(); err != nil || n != 2 {
				t.Errorf("PendingDeliveries = %d, %v; want 2", n, err)
			}
			return nil
		})
	}

	s, err := boltstore.Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	check(t, s, mail, hook)

	// A dispatcher leases the mail job: the record is written again, now
	// with its kind.
	leased := mail
	leased.LeaseUntil, leased.LeaseOwner = previousReleaseTime.Add(time.Minute), "dispatcher-1"
	mustUpdate(t, s, func(tx store.Tx) error {
		d, ok, err := tx.ClaimDelivery(testSlug, 1)
		if err != nil || !ok {
			t.Errorf("ClaimDelivery(1) = %t, %v; want the mail job", ok, err)
			return err
		}
		d.LeaseUntil, d.LeaseOwner = leased.LeaseUntil, leased.LeaseOwner
		return tx.PutDelivery(testSlug, d)
	})
	check(t, s, leased, hook)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path, nil)
	check(t, s, leased, hook)

	// The file predates OAuth clients: Open gave its workspace their
	// bucket.
	client := store.OAuthClient{ID: "idc_0123456789abcdef", Public: true, RedirectURIs: []string{"https://app.example/cb"}}
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutOAuthClient(testSlug, client) })
	mustView(t, s, func(tx store.Tx) error {
		got, err := tx.OAuthClients(testSlug)
		if diff := cmp.Diff([]store.OAuthClient{client}, got); err != nil || diff != "" {
			t.Errorf("OAuthClients = %v (-want +got):\n%s", err, diff)
		}
		return nil
	})

	// It predates the OpenID Provider's records too: Open gave its
	// workspace their buckets, the grants' per-user index among them.
	key := store.SigningKey{
		ID: "kid-1", Algorithm: "ES256", State: "active", PrivateKey: []byte("private"), PublicKey: []byte("public"),
		CreatedAt: previousReleaseTime, ActivatedAt: previousReleaseTime,
	}
	req := store.AuthRequest{
		ID: "ar-1", ClientID: client.ID, RedirectURI: "https://app.example/cb", Scopes: []string{"openid"},
		CreatedAt: previousReleaseTime, ExpiresAt: previousReleaseTime.Add(10 * time.Minute),
	}
	grant := store.Grant{
		ID: "gr-1", ClientID: client.ID, UserID: 1, Scopes: []string{"openid", "offline_access"},
		AuthTime: previousReleaseTime, CreatedAt: previousReleaseTime, ExpiresAt: previousReleaseTime.Add(720 * time.Hour),
	}
	refresh := store.RefreshToken{
		ID: "rt-1", GrantID: "gr-1", SecretHash: []byte("hash"),
		CreatedAt: previousReleaseTime, ExpiresAt: previousReleaseTime.Add(720 * time.Hour),
	}
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutSigningKey(testSlug, key),
			tx.PutAuthRequest(testSlug, req),
			tx.PutGrant(testSlug, grant),
			tx.PutRefreshToken(testSlug, refresh),
		)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, nil)
	mustView(t, s, func(tx store.Tx) error {
		keys, err := tx.SigningKeys(testSlug)
		if diff := cmp.Diff([]store.SigningKey{key}, keys); err != nil || diff != "" {
			t.Errorf("SigningKeys = %v (-want +got):\n%s", err, diff)
		}
		gotReq, err := tx.AuthRequest(testSlug, "ar-1")
		if diff := cmp.Diff(req, gotReq); err != nil || diff != "" {
			t.Errorf("AuthRequest = %v (-want +got):\n%s", err, diff)
		}
		grants, err := tx.UserGrants(testSlug, 1)
		if diff := cmp.Diff([]store.Grant{grant}, grants); err != nil || diff != "" {
			t.Errorf("UserGrants(1) = %v (-want +got):\n%s", err, diff)
		}
		gotRefresh, err := tx.RefreshToken(testSlug, "rt-1")
		if diff := cmp.Diff(refresh, gotRefresh); err != nil || diff != "" {
			t.Errorf("RefreshToken = %v (-want +got):\n%s", err, diff)
		}
		return nil
	})

	// And the lockout state: Open gave its workspace the bucket, in which
	// its user has none yet.
	mustView(t, s, func(tx store.Tx) error {
		_, err := tx.LoginAttempts(testSlug, 1)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LoginAttempts(1) before any write: error = %v, want ErrNotFound", err)
		}
		return nil
	})
	attempts := store.LoginAttempts{
		UserID: 1, Failures: 4,
		Pending:     []time.Time{previousReleaseTime.Add(30 * time.Second), previousReleaseTime.Add(10 * time.Second)},
		LockedUntil: previousReleaseTime.Add(15 * time.Minute),
	}
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutLoginAttempts(testSlug, attempts) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, nil)
	mustView(t, s, func(tx store.Tx) error {
		got, err := tx.LoginAttempts(testSlug, 1)
		if diff := cmp.Diff(attempts, got); err != nil || diff != "" {
			t.Errorf("LoginAttempts(1) = %v (-want +got):\n%s", err, diff)
		}
		return nil
	})

	// And the second factors: Open gave its workspace the bucket, in which
	// its user has none yet.
	mustView(t, s, func(tx store.Tx) error {
		_, err := tx.SecondFactor(testSlug, 1)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SecondFactor(1) before any write: error = %v, want ErrNotFound", err)
		}
		return nil
	})
	factor := store.SecondFactor{
		UserID: 1, Secret: []byte("sealed secret"), Confirmed: true,
		CreatedAt: previousReleaseTime, ConfirmedAt: previousReleaseTime.Add(time.Minute), LastStep: 58_910_768,
		RecoveryCodes: [][]byte{[]byte("code-hash-1"), []byte("code-hash-2")},
	}
	reset := store.VerificationToken{
		ID: "tok-reset", UserID: 1, Email: "alice@acme.example", SecretHash: []byte("hash-of-reset-token"),
		CreatedAt: previousReleaseTime, ExpiresAt: previousReleaseTime.Add(time.Hour), Purpose: store.PurposePasswordReset,
	}
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(tx.PutSecondFactor(testSlug, factor), tx.PutVerificationToken(testSlug, reset))
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The previous release wrote verification tokens without a purpose:
	// one as it wrote them, straight into the file, reads back as an email
	// verification token.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		tokens := btx.Bucket([]byte("ws")).Bucket([]byte(testSlug)).Bucket([]byte("verification_tokens"))
		return tokens.Put([]byte("tok-old"), []byte(`{"user_id":1,"email":"alice@acme.example",`+
			`"secret_hash":"aGFzaC1vZi1vbGQtdG9rZW4=","created_us":1767323045000000,"expires_us":1767409445000000}`))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, nil)
	mustView(t, s, func(tx store.Tx) error {
		got, err := tx.SecondFactor(testSlug, 1)
		if diff := cmp.Diff(factor, got); err != nil || diff != "" {
			t.Errorf("SecondFactor(1) = %v (-want +got):\n%s", err, diff)
		}
		old, err := tx.VerificationToken(testSlug, "tok-old")
		if diff := cmp.Diff(store.VerificationToken{
			ID: "tok-old", UserID: 1, Email: "alice@acme.example", SecretHash: []byte("hash-of-old-token"),
			CreatedAt: previousReleaseTime, ExpiresAt: previousReleaseTime.Add(24 * time.Hour),
			Purpose: store.PurposeVerifyEmail,
		}, old); err != nil || diff != "" {
			t.Errorf("VerificationToken(tok-old) = %v (-want +got):\n%s", err, diff)
		}
		gotReset, err := tx.VerificationToken(testSlug, "tok-reset")
		if diff := cmp.Diff(reset, gotReset); err != nil || diff != "" {
			t.Errorf("VerificationToken(tok-reset) = %v (-want +got):\n%s", err, diff)
		}
		return nil
	})
}
