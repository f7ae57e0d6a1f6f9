package identity_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// gateStore lets a test step into the Updates of a store: before each, it
// calls before with the Update's number (from 1), and fails the Update
// with the error before returns.
type gateStore struct {
	store.Store
	mu     sync.Mutex
	n      int
	before func(n int) error
}

func (s *gateStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	s.n++
	n, before := s.n, s.before
	s.mu.Unlock()
	if before != nil {
		if err := before(n); err != nil {
			return err
		}
	}
	return s.Store.Update(ctx, fn)
}

// arm resets the count and sets the hook.
func (s *gateStore) arm(before func(n int) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n, s.before = 0, before
}

func keyed(key string, fingerprint string) *identity.Idempotency {
	return &identity.Idempotency{Scope: "client-1", Key: key, Fingerprint: []byte(fingerprint)}
}

func newAda(idem *identity.Idempotency) identity.NewUser {
	return identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace",
		Password: "analytical engine", Idempotency: idem}
}

func userCount(t *testing.T, ws *identity.Workspace) int {
	t.Helper()
	list, err := ws.ListUsers(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return list.Total
}

// TestIdempotentCreateUser: a retry with the same key and fingerprint gets
// the first outcome and creates nothing; another fingerprint or operation
// is refused; another scope is another key; no key is no protection.
func TestIdempotentCreateUser(t *testing.T) {
	ctx := t.Context()
	_, ws := newWorkspace(t, memstore.New(), nil, nil)
	first, err := ws.CreateUser(ctx, newAda(keyed("k1", "body-1")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		call  func() (any, error)
		want  any
		code  identity.Code
		users int
	}{
		{"same key and fingerprint", func() (any, error) { return ws.CreateUser(ctx, newAda(keyed("k1", "body-1"))) },
			first, "", 1},
		{"same key, another fingerprint", func() (any, error) { return ws.CreateUser(ctx, newAda(keyed("k1", "body-2"))) },
			identity.User{}, identity.CodeIdempotencyKeyReused, 1},
		{"same key, another operation", func() (any, error) {
			return ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://h.example.com", Events: []string{"user.created"},
				Idempotency: keyed("k1", "body-1")})
		}, identity.CreatedWebhook{}, identity.CodeIdempotencyKeyReused, 1},
		{"same key, another scope", func() (any, error) {
			nu := newAda(&identity.Idempotency{Scope: "client-2", Key: "k1", Fingerprint: []byte("body-1")})
			nu.Username, nu.Email = "ada2", "ada2@example.com"
			u, err := ws.CreateUser(ctx, nu)
			return u.Username, err
		}, "ada2", "", 2},
		{"no key: a conflict", func() (any, error) { return ws.CreateUser(ctx, newAda(nil)) },
			identity.User{}, identity.CodeConflict, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			wantErrCode(t, err, tt.code)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
			if n := userCount(t, ws); n != tt.users {
				t.Errorf("%d users, want %d", n, tt.users)
			}
		})
	}
	// The replay is the created user, version included, even after the
	// user has changed since.
	if _, err := ws.UpdateUser(ctx, first.ID, identity.UserUpdate{Email: "ada@lovelace.org", FullName: "Ada"}); err != nil {
		t.Fatal(err)
	}
	again, err := ws.CreateUser(ctx, newAda(keyed("k1", "body-1")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replay after an update (-first +replay):\n%s", diff)
	}
}

// TestIdempotentRefusalIsReplayed: a refusal of the request is its outcome
// too: the retry gets the same error even after the cause has gone.
func TestIdempotentRefusalIsReplayed(t *testing.T) {
	ctx := t.Context()
	_, ws := newWorkspace(t, memstore.New(), nil, nil)
	short := newAda(keyed("k", "short password"))
	short.Password = "short"
	_, first := ws.CreateUser(ctx, short)
	wantErrCode(t, first, identity.CodeInvalid)

	// The policy now admits the password, yet the key's outcome stands.
	settings, err := ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	settings.PasswordPolicy.MinLength = 4
	if err := ws.UpdateSettings(ctx, settings); err != nil {
		t.Fatal(err)
	}
	_, again := ws.CreateUser(ctx, short)
	wantErrCode(t, again, identity.CodeInvalid)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replayed refusal (-first +replay):\n%s", diff)
	}
	if n := userCount(t, ws); n != 0 {
		t.Errorf("%d users, want 0", n)
	}
	// Without the key the same request now succeeds.
	short.Idempotency = nil
	if _, err := ws.CreateUser(ctx, short); err != nil {
		t.Errorf("without the key: %v", err)
	}
}

// TestIdempotentFailureReleasesKey: a failure that is not the caller's
// stores nothing: the retry does the work.
func TestIdempotentFailureReleasesKey(t *testing.T) {
	ctx := t.Context()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, nil, nil)
	disk := errors.New("disk full")
	st.arm(func(n int) error {
		if n == 2 { // 1 reserves the key, 2 creates the user
			return disk
		}
		return nil
	})
	_, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
	wantErrCode(t, err, identity.CodeInternal)
	st.arm(nil)
	u, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
	if err != nil {
		t.Fatalf("retry after an internal failure: %v", err)
	}
	if u.ID != 1 || userCount(t, ws) != 1 {
		t.Errorf("user %d, %d users; want user 1 alone", u.ID, userCount(t, ws))
	}
}

// TestIdempotentInProgress: a retry while the first call runs is refused
// as in use; once the first is done, a retry replays it. A call held up
// past its hold is taken over, and then creates nothing itself.
func TestIdempotentInProgress(t *testing.T) {
	for _, takeOver := range []bool{false, true} {
		name := "wait"
		if takeOver {
			name = "take over"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			clock := newFakeClock()
			st := &gateStore{Store: memstore.New()}
			_, ws := newWorkspace(t, st, clock, nil)
			entered, release := make(chan struct{}), make(chan struct{})
			st.arm(func(n int) error {
				if n == 2 { // the creating transaction of the first call
					close(entered)
					<-release
				}
				return nil
			})
			type result struct {
				u   identity.User
				err error
			}
			firstDone := make(chan result, 1)
			go func() {
				u, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
				firstDone <- result{u, err}
			}()
			<-entered

			_, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
			wantErrCode(t, err, identity.CodeIdempotencyKeyInUse)
			var second identity.User
			if takeOver {
				clock.Advance(time.Minute)
				if second, err = ws.CreateUser(ctx, newAda(keyed("k", "fp"))); err != nil {
					t.Fatalf("take-over: %v", err)
				}
			}
			close(release)
			first := <-firstDone
			if takeOver {
				wantErrCode(t, first.err, identity.CodeIdempotencyKeyInUse)
				first.u = second
			} else if first.err != nil {
				t.Fatal(first.err)
			}
			replay, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(first.u, replay); diff != "" {
				t.Errorf("replay (-created +replay):\n%s", diff)
			}
			if n := userCount(t, ws); n != 1 {
				t.Errorf("%d users, want 1", n)
			}
		})
	}
}

// TestIdempotentConcurrentRetries: many calls with one key at once create
// one user; each gets that user or an in-use refusal.
func TestIdempotentConcurrentRetries(t *testing.T) {
	for name, st := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			_, ws := newWorkspace(t, st, nil, nil)
			const calls = 50
			users := make([]identity.User, calls)
			errs := make([]error, calls)
			var wg sync.WaitGroup
			for i := range calls {
				wg.Go(func() { users[i], errs[i] = ws.CreateUser(context.Background(), newAda(keyed("k", "fp"))) })
			}
			wg.Wait()
			created := mustGetUser(t, ws, 1)
			for i, err := range errs {
				switch identity.ErrorCode(err) {
				case "":
					if diff := cmp.Diff(created, users[i]); diff != "" {
						t.Errorf("call %d got another user (-stored +got):\n%s", i, diff)
					}
				case identity.CodeIdempotencyKeyInUse:
				default:
					t.Errorf("call %d: %v", i, err)
				}
			}
			if n := userCount(t, ws); n != 1 {
				t.Errorf("%d users, want 1", n)
			}
		})
	}
}

// TestIdempotentCreateWebhook: the replay carries the same secret.
func TestIdempotentCreateWebhook(t *testing.T) {
	ctx := t.Context()
	_, ws := newWorkspace(t, memstore.New(), nil, nil)
	nw := identity.NewWebhook{URL: "https://hooks.example.com/a", Events: []string{"user.created"}, Idempotency: keyed("w", "fp")}
	first, err := ws.CreateWebhook(ctx, nw)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ws.CreateWebhook(ctx, nw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replay (-first +replay):\n%s", diff)
	}
	list, err := ws.ListWebhooks(ctx, nil)
	if err != nil || list.Total != 1 {
		t.Errorf("%d endpoints (%v), want 1", list.Total, err)
	}
}

// TestIdempotencyExpires: an outcome counts for its lifetime and not after
// it, whether swept or not; SweepIdempotency deletes exactly the expired.
func TestIdempotencyExpires(t *testing.T) {
	for _, lifetime := range []time.Duration{0, time.Hour} {
		want := lifetime
		if want == 0 {
			want = identity.DefaultIdempotencyLifetime
		}
		t.Run(want.String(), func(t *testing.T) {
			ctx := t.Context()
			clock := newFakeClock()
			st := memstore.New()
			svc, ws := newWorkspace(t, st, clock, &identity.Options{IdempotencyLifetime: lifetime})
			hook := func(key string) identity.CreatedWebhook {
				t.Helper()
				c, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/a",
					Events: []string{"user.created"}, Idempotency: keyed(key, "fp")})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			first := hook("a")
			hook("b")
			clock.Advance(want - time.Microsecond)
			if got := hook("a"); got.Endpoint.ID != first.Endpoint.ID {
				t.Errorf("just before the end of the lifetime: endpoint %d, want the replay of %d", got.Endpoint.ID, first.Endpoint.ID)
			}
			if n, err := svc.SweepIdempotency(ctx); n != 0 || err != nil {
				t.Errorf("sweep before expiry: %d, %v; want 0, nil", n, err)
			}
			clock.Advance(time.Microsecond)
			// Expired but not yet swept: absent, so the key does the work again.
			if got := hook("a"); got.Endpoint.ID == first.Endpoint.ID {
				t.Errorf("after the lifetime: endpoint %d replayed, want a new one", got.Endpoint.ID)
			}
			// "a" holds a fresh outcome now; only "b" is expired.
			if n, err := svc.SweepIdempotency(ctx); n != 1 || err != nil {
				t.Errorf("sweep after expiry: %d, %v; want 1, nil", n, err)
			}
			err := st.View(ctx, func(tx store.Tx) error {
				if _, err := tx.Idempotency("acme", "client-1", "b"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("swept record b: %v, want not found", err)
				}
				rec, err := tx.Idempotency("acme", "client-1", "a")
				if err != nil {
					return err
				}
				if got := rec.ExpiresAt.Sub(rec.CreatedAt); got != want || !rec.Done {
					t.Errorf("record a: lifetime %v, done %t; want %v, true", got, rec.Done, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSweepIdempotencyBatches: a sweep deletes more than one batch.
func TestSweepIdempotencyBatches(t *testing.T) {
	ctx := t.Context()
	clock := newFakeClock()
	st := memstore.New()
	svc, _ := newWorkspace(t, st, clock, nil)
	const n = 1234
	err := st.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			err := tx.PutIdempotency(store.IdempotencyRecord{Workspace: "acme", Scope: "s", Key: fmt.Sprintf("k%d", i),
				CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Duration(i) * time.Microsecond), Done: true, Result: []byte(`{"op":"create_user"}`)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if got, err := svc.SweepIdempotency(ctx); got != n || err != nil {
		t.Errorf("SweepIdempotency = %d, %v; want %d, nil", got, err, n)
	}
}

// TestIdempotencySurvivesReopen: the outcome is in the store, not in the
// process.
func TestIdempotencySurvivesReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "id.db")
	clock := newFakeClock()
	open := func() *identity.Service {
		svc, err := identity.Open(path, &identity.Options{Now: clock.Now, PasswordHashing: &cheapArgon2})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := open()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	svc = open()
	defer svc.Close()
	if ws, err = svc.GetWorkspace(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	again, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replay after reopening (-first +replay):\n%s", diff)
	}
}

// TestIdempotencyKeyRules: keys are 1-255 characters of visible ASCII.
func TestIdempotencyKeyRules(t *testing.T) {
	_, ws := newWorkspace(t, memstore.New(), nil, nil)
	tests := []struct {
		key  string
		rule string // "" means accepted
	}{
		{"a", ""},
		{strings.Repeat("~", 255), ""},
		{"9f1c0c4e-7d2b-4c1e-9a57-1b0f2c3d4e5f", ""},
		{"", identity.RuleRequired},
		{strings.Repeat("k", 256), identity.RuleMaxLength},
		{"with space", identity.RulePattern},
		{"tab\t", identity.RulePattern},
		{"clé", identity.RulePattern},
	}
	for i, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			nu := newAda(keyed(tt.key, "fp"))
			nu.Username, nu.Email = "user"+string(rune('a'+i)), "user"+string(rune('a'+i))+"@example.com"
			_, err := ws.CreateUser(t.Context(), nu)
			if tt.rule == "" {
				wantErrCode(t, err, "")
				return
			}
			wantErrCode(t, err, identity.CodeInvalid)
			var e *identity.Error
			errors.As(err, &e)
			want := []identity.FieldError{{Field: "Idempotency-Key", Rule: tt.rule}}
			if diff := cmp.Diff(want, e.Fields, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Message" }, cmp.Ignore())); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIdempotentReplayWritesNothing: a retry of a finished call is
// answered from a read, in no write transaction.
func TestIdempotentReplayWritesNothing(t *testing.T) {
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, nil, nil)
	first, err := ws.CreateUser(t.Context(), newAda(keyed("k", "fp")))
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	st.arm(func(int) error { updates++; return nil })
	replay, err := ws.CreateUser(t.Context(), newAda(keyed("k", "fp")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, replay); diff != "" {
		t.Errorf("replay (-created +replay):\n%s", diff)
	}
	if updates != 0 {
		t.Errorf("the replay ran %d write transactions, want 0", updates)
	}
}

// TestIdempotentKeyTakenBetweenLookAndHold: a key found free by the first
// look but used by another request before the hold is taken is refused,
// and the other request's outcome stays.
func TestIdempotentKeyTakenBetweenLookAndHold(t *testing.T) {
	ctx := t.Context()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, nil, nil)
	grace := newUserNamed("grace")
	grace.Idempotency = keyed("k", "fp-grace")
	st.arm(func(n int) error {
		if n == 1 { // the hold of bob's call, after its look found the key free
			if _, err := ws.CreateUser(ctx, grace); err != nil {
				t.Errorf("CreateUser(grace): %v", err)
			}
		}
		return nil
	})
	bob := newUserNamed("bob")
	bob.Idempotency = keyed("k", "fp-bob")
	_, err := ws.CreateUser(ctx, bob)
	wantErrCode(t, err, identity.CodeIdempotencyKeyReused)
	st.arm(nil)
	if n := userCount(t, ws); n != 1 {
		t.Errorf("%d users, want 1 (grace)", n)
	}
	replay, err := ws.CreateUser(ctx, grace)
	if err != nil || replay.Username != "grace" {
		t.Errorf("grace's retry = %+v, %v; want grace's outcome", replay, err)
	}
}

// TestIdempotentHoldTakenOverByARunningCall: a call whose hold was taken
// over creates nothing even while the call that took it over still runs.
func TestIdempotentHoldTakenOverByARunningCall(t *testing.T) {
	ctx := t.Context()
	clock := newFakeClock()
	st := &gateStore{Store: memstore.New()}
	_, ws := newWorkspace(t, st, clock, nil)
	// Updates: 1 the first call's hold, 2 its creation, 3 the second
	// call's hold, 4 its creation. Both creations wait for the test.
	entered := map[int]chan struct{}{2: make(chan struct{}), 4: make(chan struct{})}
	release := map[int]chan struct{}{2: make(chan struct{}), 4: make(chan struct{})}
	st.arm(func(n int) error {
		if entered[n] != nil {
			close(entered[n])
			<-release[n]
		}
		return nil
	})
	type result struct {
		u   identity.User
		err error
	}
	call := func() chan result {
		done := make(chan result, 1)
		go func() {
			u, err := ws.CreateUser(ctx, newAda(keyed("k", "fp")))
			done <- result{u, err}
		}()
		return done
	}
	first := call()
	<-entered[2]
	clock.Advance(time.Minute) // the first call's hold is over
	second := call()
	<-entered[4]
	close(release[2])
	if r := <-first; identity.ErrorCode(r.err) != identity.CodeIdempotencyKeyInUse {
		t.Errorf("the call whose hold was taken over = %+v, %v; want %s", r.u, r.err, identity.CodeIdempotencyKeyInUse)
	}
	close(release[4])
	got := <-second
	if got.err != nil {
		t.Fatalf("the second call: %v", got.err)
	}
	if n := userCount(t, ws); n != 1 {
		t.Errorf("%d users, want 1", n)
	}
}
