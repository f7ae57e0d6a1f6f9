package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// openStore opens a store at path and closes it when the test ends.
func openStore(t testing.TB, path string, opts *boltstore.Options) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newStore opens a store in a fresh file with one workspace, testSlug.
func newStore(t testing.TB) *boltstore.Store {
	t.Helper()
	s := openStore(t, filepath.Join(t.TempDir(), "db"), nil)
	mustUpdate(t, s, func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime})
	})
	return s
}

const testSlug = "acme"

var testTime = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)

// mustUpdate runs fn in an Update and fails the test on error.
func mustUpdate(t testing.TB, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// mustView runs fn in a View and fails the test on error.
func mustView(t testing.TB, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// snapshot is everything TestReopenKeepsData writes, read back.
type snapshot struct {
	Workspaces []store.Workspace
	User       store.User
	UserID     int64
	Users      []store.User
	Total      int
	Roles      []int64
	Attrs      map[string]string
	Mappers    []store.ClaimMapper
	Webhook    store.Webhook
	Deliveries []store.Delivery
	Due        []store.QueuedDelivery
	NextDue    time.Time
	Pending    int
	Sessions   []store.Session
	APIKeys    []store.APIKey
	NextUserID int64
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	user := store.User{
		ID: 1, Username: "Alice", Email: "alice@example.com", FullName: "Alice Liddell",
		EmailVerified: true, Enabled: true, PasswordHash: "$2a$10$hash",
		CreatedAt: testTime, UpdatedAt: testTime.Add(time.Hour),
	}
	hook := store.Webhook{ID: 1, URL: "https://example.com/hook", Events: []string{"user.created"},
		Enabled: true, CreatedAt: testTime, Secret: "s3cret", FailingSince: testTime.Add(time.Second)}
	delivery := store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1, EventID: "ev1", EventType: "user.created",
		Payload: []byte(`{"id":1}`), CreatedAt: testTime, Status: store.DeliveryPending, Attempts: 2,
		NextAttemptAt: testTime.Add(time.Minute), LeaseUntil: testTime.Add(2 * time.Minute), LeaseOwner: "d1",
		LastAttemptAt: testTime.Add(time.Second), LastStatus: 502, LastError: "bad gateway"}
	session := store.Session{ID: "sess", UserID: 1, SecretHash: []byte{4, 5}, CreatedAt: testTime,
		ExpiresAt: testTime.Add(time.Hour), LastSeenAt: testTime.Add(time.Minute), RevokedAt: testTime.Add(2 * time.Minute)}
	key := store.APIKey{ID: "k1", Workspace: testSlug, Name: "ci", Scopes: []string{"users:read"},
		SecretHash: []byte{1, 2, 3}, CreatedAt: testTime}
	mapper := store.ClaimMapper{AttributeKey: "dept", ClaimName: "department", IncludeInID: true}
	want := snapshot{
		Workspaces: []store.Workspace{{Slug: testSlug, CreatedAt: testTime, Settings: []byte(`{"a":1}`)}},
		User:       user, UserID: 1, Users: []store.User{user}, Total: 1,
		Roles: []int64{3, 7}, Attrs: map[string]string{"dept": "r&d"},
		Mappers: []store.ClaimMapper{mapper}, Webhook: hook,
		Deliveries: []store.Delivery{delivery}, APIKeys: []store.APIKey{key},
		Due:     []store.QueuedDelivery{{Workspace: testSlug, Delivery: delivery}},
		NextDue: delivery.LeaseUntil, Pending: 1, Sessions: []store.Session{session},
		NextUserID: 2,
	}

	s, err := boltstore.Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(want.Workspaces[0]),
			tx.PutUser(testSlug, user),
			tx.AddUserRole(testSlug, 1, 7), tx.AddUserRole(testSlug, 1, 3),
			tx.PutUserAttribute(testSlug, 1, "dept", "r&d"),
			tx.PutClaimMapper(testSlug, mapper),
			tx.PutWebhook(testSlug, hook),
			tx.PutDelivery(testSlug, delivery),
			tx.PutSession(testSlug, session),
			tx.PutAPIKey(key),
		)
	})
	mustUpdate(t, s, func(tx store.Tx) error {
		_, err := tx.NextID(testSlug, store.SeqUsers)
		return err
	})
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = openStore(t, path, nil)
	var got snapshot
	mustView(t, s, func(tx store.Tx) error {
		var errs [14]error
		got.Workspaces, errs[0] = tx.Workspaces()
		got.User, errs[1] = tx.User(testSlug, 1)
		got.UserID, errs[2] = tx.UserIDByEmail(testSlug, "ALICE@example.com")
		got.Users, got.Total, errs[3] = tx.Users(testSlug, store.UserQuery{Prefix: "alice l", Limit: 10})
		got.Roles, errs[4] = tx.UserRoles(testSlug, 1)
		got.Attrs, errs[5] = tx.UserAttributes(testSlug, 1)
		got.Mappers, errs[6] = tx.ClaimMappers(testSlug)
		got.Webhook, errs[7] = tx.Webhook(testSlug, 1)
		got.Deliveries, errs[8] = tx.Deliveries(testSlug, 1)
		got.APIKeys, errs[9] = tx.APIKeys(testSlug)
		got.Due, errs[10] = tx.DueDeliveries(testTime.Add(time.Hour), 10)
		got.NextDue, _, errs[11] = tx.NextDueAt()
		got.Pending, errs[12] = tx.PendingDeliveries()
		got.Sessions, errs[13] = tx.UserSessions(testSlug, 1)
		return errors.Join(errs[:]...)
	})
	mustUpdate(t, s, func(tx store.Tx) (err error) {
		got.NextUserID, err = tx.NextID(testSlug, store.SeqUsers)
		return err
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data after reopen mismatch (-want +got):\n%s", diff)
	}
}

func TestCancelledContext(t *testing.T) {
	s := newStore(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	ran := false
	fn := func(store.Tx) error { ran = true; return nil }
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"View cancelled", func() error { return s.View(cancelled, fn) }, context.Canceled},
		{"Update cancelled", func() error { return s.Update(cancelled, fn) }, context.Canceled},
		{"View expired", func() error { return s.View(expired, fn) }, context.DeadlineExceeded},
		{"Update expired", func() error { return s.Update(expired, fn) }, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Errorf("got error %v, want %v", err, tt.want)
			}
			if ran {
				t.Error("fn ran despite the done context")
			}
		})
	}
}

func TestClose(t *testing.T) {
	s := newStore(t)
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	ctx := context.Background()
	fn := func(store.Tx) error { return nil }
	tests := []struct {
		name string
		call func() error
	}{
		{"Close", s.Close},
		{"View", func() error { return s.View(ctx, fn) }},
		{"Update", func() error { return s.Update(ctx, fn) }},
	}
	for _, tt := range tests {
		t.Run(tt.name+" after Close", func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, store.ErrClosed) {
				t.Errorf("got error %v, want store.ErrClosed", err)
			}
		})
	}
}

// TestCloseDuringUpdates checks that every Update racing with Close either
// commits durably or returns store.ErrClosed.
func TestCloseDuringUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := boltstore.Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: testSlug}) })

	const writers = 50
	results := make(chan error, writers)
	for i := range writers {
		go func() {
			results <- s.Update(context.Background(), func(tx store.Tx) error {
				return tx.AddUserRole(testSlug, 1, int64(i))
			})
		}()
	}
	time.Sleep(time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	committed := 0
	for range writers {
		switch err := <-results; {
		case err == nil:
			committed++
		case !errors.Is(err, store.ErrClosed):
			t.Errorf("Update racing Close: got %v, want nil or store.ErrClosed", err)
		}
	}

	s = openStore(t, path, nil)
	var roles []int64
	mustView(t, s, func(tx store.Tx) (err error) {
		roles, err = tx.UserRoles(testSlug, 1)
		return err
	})
	if len(roles) != committed {
		t.Errorf("found %d roles after reopen, but %d Updates reported a commit", len(roles), committed)
	}
}

func TestWritesInViewReturnErrReadOnly(t *testing.T) {
	s := newStore(t)
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWebhook(testSlug, store.Webhook{ID: 1, URL: "https://example.com"}),
			tx.PutUserAttribute(testSlug, 1, "k", "v"),
			tx.AddUserRole(testSlug, 1, 2),
			tx.PutClaimMapper(testSlug, store.ClaimMapper{AttributeKey: "k", ClaimName: "c"}),
			tx.PutAPIKey(store.APIKey{ID: "key", Workspace: testSlug}),
		)
	})
	writes := []struct {
		name  string
		write func(store.Tx) error
	}{
		{"PutWorkspace", func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "new"}) }},
		{"NextID", func(tx store.Tx) error { _, err := tx.NextID(testSlug, store.SeqUsers); return err }},
		{"PutUser", func(tx store.Tx) error { return tx.PutUser(testSlug, store.User{ID: 1, Username: "u"}) }},
		{"AddUserRole", func(tx store.Tx) error { return tx.AddUserRole(testSlug, 1, 3) }},
		{"RemoveUserRole", func(tx store.Tx) error { return tx.RemoveUserRole(testSlug, 1, 2) }},
		{"PutUserAttribute", func(tx store.Tx) error { return tx.PutUserAttribute(testSlug, 1, "k", "w") }},
		{"DeleteUserAttribute", func(tx store.Tx) error { return tx.DeleteUserAttribute(testSlug, 1, "k") }},
		{"PutClaimMapper", func(tx store.Tx) error {
			return tx.PutClaimMapper(testSlug, store.ClaimMapper{AttributeKey: "x"})
		}},
		{"DeleteClaimMapper", func(tx store.Tx) error { return tx.DeleteClaimMapper(testSlug, "k") }},
		{"PutWebhook", func(tx store.Tx) error { return tx.PutWebhook(testSlug, store.Webhook{ID: 2}) }},
		{"DeleteWebhook", func(tx store.Tx) error { return tx.DeleteWebhook(testSlug, 1) }},
		{"PutDelivery", func(tx store.Tx) error {
			return tx.PutDelivery(testSlug, store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1})
		}},
		{"PutSession", func(tx store.Tx) error { return tx.PutSession(testSlug, store.Session{ID: "s", UserID: 1}) }},
		{"PutAPIKey", func(tx store.Tx) error { return tx.PutAPIKey(store.APIKey{ID: "k2", Workspace: testSlug}) }},
		{"DeleteAPIKey", func(tx store.Tx) error { return tx.DeleteAPIKey("key") }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			err := s.View(context.Background(), w.write)
			if !errors.Is(err, store.ErrReadOnly) {
				t.Errorf("got error %v, want store.ErrReadOnly", err)
			}
		})
	}
}

// TestSecondOpenFailsFast: a second Open of a locked file waits for the
// lock for its Timeout (the default, or the one given), then fails with
// bbolt's ErrTimeout rather than waiting on. Only the lower bound of the
// wait is timed, since a loaded machine may take longer to give up, never
// less: bbolt tries the lock every 50 ms and gives up once less than that
// is left.
func TestSecondOpenFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	openStore(t, path, nil)
	tests := []struct {
		name    string
		opts    *boltstore.Options
		minWait time.Duration
	}{
		// Longer than the default, so that waiting it shows the option was used.
		{"explicit timeout", &boltstore.Options{Timeout: 2 * boltstore.DefaultTimeout}, 2*boltstore.DefaultTimeout - lockRetry},
		{"default timeout", nil, boltstore.DefaultTimeout - lockRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				s, err := boltstore.Open(path, tt.opts)
				if err == nil {
					s.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(openWait):
				t.Fatalf("second Open still waiting after %v", openWait)
			}
			if err == nil {
				t.Fatal("second Open of a locked file succeeded")
			}
			if !errors.Is(err, berrors.ErrTimeout) {
				t.Errorf("got error %v, want one wrapping bbolt's ErrTimeout", err)
			}
			if waited := time.Since(start); waited < tt.minWait {
				t.Errorf("second Open gave up after %v, want at least %v", waited, tt.minWait)
			}
		})
	}
}

// lockRetry is how often bbolt tries a file lock.
const lockRetry = 50 * time.Millisecond

// openWait bounds a wait for Open to give up: far beyond any Timeout the
// tests set, so that only an Open that never gives up runs into it.
const openWait = 5 * time.Minute

// TestExclusive: a Store says it alone changes its file, which the
// file's lock (TestSecondOpenFailsFast) makes true.
func TestExclusive(t *testing.T) {
	var st store.Store = newStore(t)
	e, ok := st.(store.Exclusive)
	if !ok {
		t.Fatal("a boltstore.Store does not implement store.Exclusive")
	}
	if !e.Exclusive() {
		t.Error("Exclusive() = false, want true")
	}
}
