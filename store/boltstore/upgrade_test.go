package boltstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// beforeRolesFile is a file written by the release before roles were
// records (see testdata/README.md): workspace acme with users 1 (ada,
// assigned role ids 3 and 7), 2 (bob, 7) and 3 (carol, none), and a
// public OAuth client written before clients had claims.
const beforeRolesFile = "testdata/before-roles.db"

// beforeRolesClient is the id of its OAuth client.
const beforeRolesClient = "idc_fd83a20f30bee0b6"

// TestBeforeRolesFile checks the upgrade of a file written before roles
// were records: every role id assigned gets a record named after it,
// dated by Options.Now, SeqRoles continues past the largest, the holders
// are those of the assignments and move with later changes, the old
// client has no claims, and a second Open upgrades nothing again.
func TestBeforeRolesFile(t *testing.T) {
	path := copyFile(t, beforeRolesFile)
	upgraded := time.Date(2026, 11, 27, 13, 14, 15, 123456789, time.FixedZone("CET", 3600))
	at := upgraded.UTC().Truncate(time.Microsecond)
	s := openStore(t, path, &boltstore.Options{Now: func() time.Time { return upgraded }})

	roleRecord := func(id int64) store.Role {
		return store.Role{ID: id, Name: "role-" + strconv.FormatInt(id, 10), CreatedAt: at, UpdatedAt: at, Version: 1}
	}
	type holders struct {
		IDs   []int64
		Total int
	}
	readHolders := func(t *testing.T, s store.Store, roles ...int64) map[int64]holders {
		t.Helper()
		got := map[int64]holders{}
		mustView(t, s, func(tx store.Tx) error {
			for _, id := range roles {
				ids, total, err := tx.RoleHolders(testSlug, id, 0, 10)
				if err != nil {
					return err
				}
				got[id] = holders{ids, total}
			}
			return nil
		})
		return got
	}

	mustView(t, s, func(tx store.Tx) error {
		roles, total, err := tx.Roles(testSlug, store.NameQuery{Limit: 10})
		if diff := cmp.Diff([]store.Role{roleRecord(3), roleRecord(7)}, roles); err != nil || diff != "" || total != 2 {
			t.Errorf("Roles = total %d, %v; want 2 (-want +got):\n%s", total, err, diff)
		}
		if id, err := tx.RoleIDByName(testSlug, "ROLE-7"); err != nil || id != 7 {
			t.Errorf("RoleIDByName(ROLE-7) = %d, %v; want 7", id, err)
		}
		for user, want := range map[int64][]int64{1: {3, 7}, 2: {7}, 3: nil} {
			got, err := tx.UserRoles(testSlug, user)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); err != nil || diff != "" {
				t.Errorf("UserRoles(%d) = %v (-want +got):\n%s", user, err, diff)
			}
		}
		c, err := tx.OAuthClient(testSlug, beforeRolesClient)
		if err != nil || c.Name != "app" || !c.Public || len(c.Claims) != 0 {
			t.Errorf("the old client = %+v, %v; want app, public, without claims", c, err)
		}
		return nil
	})
	if diff := cmp.Diff(map[int64]holders{3: {[]int64{1}, 1}, 7: {[]int64{1, 2}, 2}}, readHolders(t, s, 3, 7)); diff != "" {
		t.Errorf("RoleHolders after the upgrade (-want +got):\n%s", diff)
	}

	// SeqRoles continues past 7; the holders move with a group; a role id
	// assigned now, without a record (the store checks no reference),
	// would get one from a second upgrade, which must not run.
	var next int64
	mustUpdate(t, s, func(tx store.Tx) (err error) {
		if next, err = tx.NextID(testSlug, store.SeqRoles); err != nil {
			return err
		}
		return errors.Join(
			tx.PutRole(testSlug, store.Role{ID: next, Name: "auditor", CreatedAt: at, UpdatedAt: at, Version: 1}),
			tx.PutGroup(testSlug, store.Group{ID: 1, Name: "staff", CreatedAt: at, UpdatedAt: at, Version: 1}),
			tx.AddGroupRole(testSlug, 1, 7),
			tx.AddGroupMember(testSlug, 1, 3),
			tx.RemoveUserRole(testSlug, 1, 7),
			tx.AddUserRole(testSlug, 3, 42),
			tx.PutOAuthClient(testSlug, store.OAuthClient{ID: "idc_new", Name: "new", Claims: []string{"groups", "roles"}}),
		)
	})
	if next != 8 {
		t.Errorf("NextID(SeqRoles) after the upgrade = %d, want 8", next)
	}
	want := map[int64]holders{3: {[]int64{1}, 1}, 7: {[]int64{2, 3}, 2}, 8: {}, 42: {[]int64{3}, 1}}
	if diff := cmp.Diff(want, readHolders(t, s, 3, 7, 8, 42), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("RoleHolders after the changes (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path, &boltstore.Options{Now: func() time.Time { return upgraded.Add(time.Hour) }})
	mustView(t, s, func(tx store.Tx) error {
		roles, total, err := tx.Roles(testSlug, store.NameQuery{Limit: 10})
		auditor := store.Role{ID: 8, Name: "auditor", CreatedAt: at, UpdatedAt: at, Version: 1}
		if diff := cmp.Diff([]store.Role{roleRecord(3), roleRecord(7), auditor}, roles); err != nil || diff != "" || total != 3 {
			t.Errorf("Roles after reopening = total %d, %v; want 3 (-want +got):\n%s", total, err, diff)
		}
		c, err := tx.OAuthClient(testSlug, "idc_new")
		if diff := cmp.Diff([]string{"groups", "roles"}, c.Claims); err != nil || diff != "" {
			t.Errorf("the new client's claims = %v (-want +got):\n%s", err, diff)
		}
		return nil
	})
	if diff := cmp.Diff(want, readHolders(t, s, 3, 7, 8, 42), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("RoleHolders after reopening (-want +got):\n%s", diff)
	}
	mustUpdate(t, s, func(tx store.Tx) (err error) {
		next, err = tx.NextID(testSlug, store.SeqRoles)
		return err
	})
	if next != 9 {
		t.Errorf("NextID(SeqRoles) after reopening = %d, want 9", next)
	}
}
