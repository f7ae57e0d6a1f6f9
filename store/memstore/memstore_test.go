package memstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

func TestCloseTwice(t *testing.T) {
	s := memstore.New()
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close: error = %v, want ErrClosed", err)
	}
}

// TestTimesNormalized checks that memstore stores times as a persistent
// store would: microsecond precision, UTC, no monotonic clock reading.
func TestTimesNormalized(t *testing.T) {
	s := memstore.New()
	defer s.Close()
	now := time.Now().In(time.FixedZone("X", 3600)) // nanoseconds and a monotonic reading
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	var got time.Time
	if err := s.View(t.Context(), func(tx store.Tx) error {
		w, err := tx.Workspace("acme")
		got = w.CreatedAt
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := now.Round(0).Truncate(time.Microsecond).UTC()
	if got != want {
		t.Errorf("CreatedAt = %#v, want %#v", got, want)
	}
}

// TestRollbackOfInterleavedWrites undoes writes that depend on each
// other within one transaction (delete then re-create, move and move back)
// and checks the store is exactly as before.
func TestRollbackOfInterleavedWrites(t *testing.T) {
	s := memstore.New()
	defer s.Close()
	const ws = "acme"
	mustUpdate := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(t.Context(), fn); err != nil {
			t.Fatal(err)
		}
	}
	mustUpdate(func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: ws}); err != nil {
			return err
		}
		if err := tx.PutUser(ws, store.User{ID: 1, Username: "a", Email: "a@x"}); err != nil {
			return err
		}
		if err := tx.PutUserAttribute(ws, 1, "k", "v"); err != nil {
			return err
		}
		if err := tx.AddUserRole(ws, 1, 5); err != nil {
			return err
		}
		if err := tx.PutWebhook(ws, store.Webhook{ID: 1}); err != nil {
			return err
		}
		return tx.PutDelivery(ws, store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1, Status: store.DeliveryPending})
	})
	boom := errors.New("boom")
	err := s.Update(t.Context(), func(tx store.Tx) error {
		steps := []func() error{
			func() error { return tx.DeleteUserAttribute(ws, 1, "k") },
			func() error { return tx.PutUserAttribute(ws, 1, "k", "v2") },
			func() error { return tx.DeleteUserAttribute(ws, 1, "k") },
			func() error { return tx.PutUserAttribute(ws, 1, "k2", "x") },
			func() error { return tx.RemoveUserRole(ws, 1, 5) },
			func() error { return tx.AddUserRole(ws, 1, 6) },
			func() error { return tx.PutUser(ws, store.User{ID: 1, Username: "b", Email: "b@x"}) },
			func() error { return tx.PutUser(ws, store.User{ID: 2, Username: "a", Email: "a@x"}) },
			func() error { return tx.DeleteWebhook(ws, 1) },
			func() error { return tx.PutWebhook(ws, store.Webhook{ID: 1}) },
			func() error { return tx.PutWebhook(ws, store.Webhook{ID: 2}) },
			func() error { return tx.PutDelivery(ws, store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 2}) },
			func() error {
				return tx.PutDelivery(ws, store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1, Status: store.DeliveryPending})
			},
			func() error {
				return tx.PutDelivery(ws, store.Delivery{ID: 2, Kind: store.JobWebhook, EndpointID: 1, Status: store.DeliveryPending})
			},
			func() error { return tx.DeleteWebhook(ws, 1) },
			func() error { return tx.PutSession(ws, store.Session{ID: "s", UserID: 1}) },
			func() error { return tx.PutSession(ws, store.Session{ID: "s", UserID: 2}) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update = %v, want boom", err)
	}
	if err := s.View(t.Context(), func(tx store.Tx) error {
		attrs, err := tx.UserAttributes(ws, 1)
		if err != nil || len(attrs) != 1 || attrs["k"] != "v" {
			t.Errorf("UserAttributes = %v, %v; want k=v", attrs, err)
		}
		roles, err := tx.UserRoles(ws, 1)
		if err != nil || len(roles) != 1 || roles[0] != 5 {
			t.Errorf("UserRoles = %v, %v; want [5]", roles, err)
		}
		if id, err := tx.UserIDByUsername(ws, "a"); err != nil || id != 1 {
			t.Errorf("UserIDByUsername(a) = %d, %v; want 1", id, err)
		}
		if _, err := tx.UserIDByUsername(ws, "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserIDByUsername(b) = %v, want ErrNotFound", err)
		}
		if _, err := tx.User(ws, 2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("User(2) = %v, want ErrNotFound", err)
		}
		users, total, err := tx.Users(ws, store.UserQuery{Limit: 10})
		if err != nil || total != 1 || len(users) != 1 || users[0].ID != 1 {
			t.Errorf("Users = %v, %d, %v; want user 1 alone", users, total, err)
		}
		hooks, total, err := tx.Webhooks(ws, 0, 10)
		if err != nil || total != 1 || len(hooks) != 1 || hooks[0].ID != 1 {
			t.Errorf("Webhooks = %v, %d, %v; want endpoint 1 alone", hooks, total, err)
		}
		for _, c := range []struct {
			endpoint int64
			want     int
		}{{1, 1}, {2, 0}} {
			ds, err := tx.Deliveries(ws, c.endpoint)
			if err != nil || len(ds) != c.want {
				t.Errorf("Deliveries(%d) = %v, %v; want %d", c.endpoint, ds, err, c.want)
			}
		}
		due, err := tx.DueDeliveries(time.Now(), 10)
		if err != nil || len(due) != 1 || due[0].ID != 1 || due[0].EndpointID != 1 {
			t.Errorf("DueDeliveries = %v, %v; want delivery 1 of endpoint 1 alone", due, err)
		}
		if n, err := tx.PendingDeliveries(); err != nil || n != 1 {
			t.Errorf("PendingDeliveries = %d, %v; want 1", n, err)
		}
		for _, user := range []int64{1, 2} {
			if ss, err := tx.UserSessions(ws, user); err != nil || len(ss) != 0 {
				t.Errorf("UserSessions(%d) = %v, %v; want none", user, ss, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
