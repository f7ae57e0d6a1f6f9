package boltstore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// TestSweepIndex checks that a file written before the sweep index and
// webhook_events existed has them built when it is opened, and that sweeping every record
// leaves every index of them empty.
func TestSweepIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	t1 := testTime.Add(time.Hour)
	mustUpdate(t, s, func(tx store.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.PutWorkspace(store.Workspace{Slug: testSlug}) },
			func() error { return tx.PutUser(testSlug, store.User{ID: 1, Username: "alice"}) },
			func() error { return tx.PutWebhook(testSlug, store.Webhook{ID: 1, Events: []string{"user.created"}}) },
			func() error {
				return tx.PutDelivery(testSlug, store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1, Status: store.DeliverySucceeded, LastAttemptAt: testTime})
			},
			func() error {
				return tx.PutDelivery(testSlug, store.Delivery{ID: 2, Kind: store.JobMail, UserID: 1, Status: store.DeliveryFailed, LastAttemptAt: testTime})
			},
			func() error {
				return tx.PutSession(testSlug, store.Session{ID: "s", UserID: 1, CreatedAt: testTime, ExpiresAt: testTime})
			},
			func() error {
				return tx.PutVerificationToken(testSlug, store.VerificationToken{ID: "v", UserID: 1, ExpiresAt: testTime})
			},
			func() error {
				return tx.PutAuthRequest(testSlug, store.AuthRequest{ID: "a", UserID: 1, ExpiresAt: testTime})
			},
			func() error { return tx.PutGrant(testSlug, store.Grant{ID: "g", UserID: 1, ExpiresAt: testTime}) },
			func() error {
				return tx.PutRefreshToken(testSlug, store.RefreshToken{ID: "r", GrantID: "g", ExpiresAt: testTime})
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	// Make the file one of the previous release: no sweep bucket.
	err := boltstore.DB(s).Update(func(btx *bbolt.Tx) error {
		ws := btx.Bucket([]byte("ws")).Bucket([]byte(testSlug))
		if err := ws.DeleteBucket([]byte("webhook_events")); err != nil {
			return err
		}
		return ws.DeleteBucket([]byte("sweep"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, nil)
	mustView(t, s, func(tx store.Tx) error {
		hooks, err := tx.WebhooksForEvent(testSlug, "user.created")
		if err != nil || len(hooks) != 1 || hooks[0].ID != 1 {
			t.Errorf("WebhooksForEvent(user.created) after open = %v, %v; want webhook 1", hooks, err)
		}
		return nil
	})
	var got []int
	mustUpdate(t, s, func(tx store.Tx) error {
		got = nil
		for _, c := range []struct {
			kind   store.JobKind
			status store.DeliveryStatus
		}{{store.JobWebhook, store.DeliverySucceeded}, {store.JobMail, store.DeliveryFailed}} {
			n, err := tx.DeleteFinishedDeliveries(testSlug, c.kind, c.status, t1, 10)
			if err != nil {
				return err
			}
			got = append(got, n)
		}
		n, err := tx.DeleteEndedSessions(testSlug, t1, 10)
		if err != nil {
			return err
		}
		got = append(got, n)
		n, err = tx.DeleteExpiredTokens(testSlug, t1, 10)
		got = append(got, n)
		return err
	})
	if diff := cmp.Diff([]int{1, 1, 1, 4}, got); diff != "" {
		t.Errorf("removed (webhook, mail, sessions, tokens) (-want +got):\n%s", diff)
	}
	var left []string
	err = boltstore.DB(s).View(func(btx *bbolt.Tx) error {
		ws := btx.Bucket([]byte("ws")).Bucket([]byte(testSlug))
		for _, name := range []string{
			"deliveries", "delivery_endpoint", "sessions", "user_sessions", "verification_tokens", "user_tokens",
			"auth_requests", "user_auth_requests", "grants", "user_grants", "refresh_tokens",
			"grant_refresh_tokens", "user_mail", "sweep",
		} {
			if k, _ := ws.Bucket([]byte(name)).Cursor().First(); k != nil {
				left = append(left, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("buckets not empty after sweeping every record: %v", left)
	}
}
