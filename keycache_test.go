package identity_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// countingStore counts the read transactions run over it, and runs
// afterView (when set) after each one has read and before it returns.
type countingStore struct {
	store.Store
	views     atomic.Int64
	afterView func()
}

func (s *countingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	s.views.Add(1)
	err := s.Store.View(ctx, fn)
	if s.afterView != nil {
		s.afterView()
	}
	return err
}

// keyEnv is a Service over a countingStore of a memstore, with the
// workspaces "acme" and "globex" and a key of each.
type keyEnv struct {
	t            *testing.T
	ctx          context.Context
	clock        *testutil.Clock
	st           *countingStore
	svc          *identity.Service
	acme, globex *identity.Workspace
	// acmeKey has users:read and webhooks:read; globexKey users:read.
	acmeKey, globexKey string
	acmeKeyID          string
}

func newKeyEnv(t *testing.T, ttl time.Duration) *keyEnv {
	t.Helper()
	e := &keyEnv{t: t, ctx: t.Context(), clock: newFakeClock(), st: &countingStore{Store: memstore.New()}}
	t.Cleanup(func() { e.st.Close() })
	var err error
	e.svc, err = identity.New(e.st, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2, KeyCacheTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	e.acme, e.acmeKeyID, e.acmeKey = e.workspaceWithKey(t, e.svc, "acme", identity.ScopeUsersRead, identity.ScopeWebhooksRead)
	e.globex, _, e.globexKey = e.workspaceWithKey(t, e.svc, "globex", identity.ScopeUsersRead)
	return e
}

// workspaceWithKey creates the workspace slug in svc and a key of it with
// scopes, and returns them.
func (e *keyEnv) workspaceWithKey(t *testing.T, svc *identity.Service, slug string, scopes ...identity.Scope) (*identity.Workspace, string, string) {
	t.Helper()
	ws, err := svc.CreateWorkspace(e.ctx, slug, nil)
	if err != nil {
		t.Fatal(err)
	}
	created, err := ws.CreateAPIKey(e.ctx, "", scopes)
	if err != nil {
		t.Fatal(err)
	}
	k, key := created.APIKey, created.Secret
	return ws, k.ID, key
}

// authorize calls svc.Authorize and returns the error's code ("" for
// none) and how many read transactions the call ran.
func (e *keyEnv) authorize(svc *identity.Service, key, slug string, scopes ...identity.Scope) (identity.Code, int64) {
	e.t.Helper()
	before := e.st.views.Load()
	a, err := svc.AuthorizeAPIKey(e.ctx, key, slug, scopes...)
	views := e.st.views.Load() - before
	if err != nil {
		return codeOf(err), views
	}
	if a.Workspace.Slug() != slug {
		e.t.Errorf("Authorize(%q) returned workspace %q", slug, a.Workspace.Slug())
	}
	if id, _ := identity.APIKeyID(key); a.Key.ID != id || a.Key.Workspace != slug {
		e.t.Errorf("Authorize(%q) returned key %+v, want id %q", slug, a.Key, id)
	}
	return "", views
}

// codeOf returns the code of an *identity.Error, or "not an identity error".
func codeOf(err error) identity.Code {
	if e, ok := errors.AsType[*identity.Error](err); ok {
		return e.Code
	}
	return "not an identity error: " + identity.Code(err.Error())
}

// outcome is what one Authorize call came to.
type outcome struct {
	Code  identity.Code
	Views int64
}

// TestKeyCacheHits: with the cache on, the first use of a key reads the
// store once and every later use reads nothing, whatever it comes to: a
// wrong secret for the key's id, another workspace, a missing scope are
// all decided from memory, as they were from the store.
func TestKeyCacheHits(t *testing.T) {
	e := newKeyEnv(t, identity.KeyCacheNoExpiry)
	wrongSecret := e.acmeKey[:len(e.acmeKey)-4] + "AAAA"
	if wrongSecret == e.acmeKey {
		wrongSecret = e.acmeKey[:len(e.acmeKey)-4] + "BBBB"
	}
	calls := []struct {
		name  string
		key   string
		slug  string
		scope identity.Scope
		want  outcome
	}{
		{"first use reads the key", e.acmeKey, "acme", identity.ScopeUsersRead, outcome{"", 1}},
		{"second use reads nothing", e.acmeKey, "acme", identity.ScopeUsersRead, outcome{"", 0}},
		{"other scope it has", e.acmeKey, "acme", identity.ScopeWebhooksRead, outcome{"", 0}},
		{"scope it lacks", e.acmeKey, "acme", identity.ScopeUsersWrite, outcome{identity.CodeForbidden, 0}},
		{"another workspace", e.acmeKey, "globex", identity.ScopeUsersRead, outcome{identity.CodeForbidden, 0}},
		{"a workspace that does not exist", e.acmeKey, "initech", identity.ScopeUsersRead, outcome{identity.CodeForbidden, 0}},
		{"wrong secret of a cached id", wrongSecret, "acme", identity.ScopeUsersRead, outcome{identity.CodeUnauthenticated, 0}},
		{"malformed key", "idk_nope", "acme", identity.ScopeUsersRead, outcome{identity.CodeUnauthenticated, 0}},
		{"the other workspace's key, first use", e.globexKey, "globex", identity.ScopeUsersRead, outcome{"", 1}},
		{"the other workspace's key, second use", e.globexKey, "globex", identity.ScopeUsersRead, outcome{"", 0}},
		{"the right key still works", e.acmeKey, "acme", identity.ScopeUsersRead, outcome{"", 0}},
	}
	for _, c := range calls {
		code, views := e.authorize(e.svc, c.key, c.slug, c.scope)
		if diff := cmp.Diff(c.want, outcome{code, views}); diff != "" {
			t.Errorf("%s: Authorize mismatch (-want +got):\n%s", c.name, diff)
		}
	}

	before := e.st.views.Load()
	k, err := e.svc.VerifyAPIKey(e.ctx, e.acmeKey)
	if err != nil {
		t.Fatal(err)
	}
	if views := e.st.views.Load() - before; views != 0 {
		t.Errorf("VerifyAPIKey of a cached key ran %d read transactions, want 0", views)
	}
	want := identity.APIKey{ID: e.acmeKeyID, Workspace: "acme", Scopes: []identity.Scope{identity.ScopeUsersRead, identity.ScopeWebhooksRead}, CreatedAt: k.CreatedAt}
	if diff := cmp.Diff(want, k); diff != "" {
		t.Errorf("VerifyAPIKey from the cache mismatch (-want +got):\n%s", diff)
	}
	if _, err := e.svc.VerifyAPIKey(e.ctx, wrongSecret); codeOf(err) != identity.CodeUnauthenticated {
		t.Errorf("VerifyAPIKey(wrong secret of a cached id) = %v, want %s", err, identity.CodeUnauthenticated)
	}
}

// TestKeyCacheMissesAreNotCached: a key that did not verify (unknown id,
// wrong secret) reads the store every time it is presented.
func TestKeyCacheMissesAreNotCached(t *testing.T) {
	e := newKeyEnv(t, identity.KeyCacheNoExpiry)
	unknown := "idk_0123456789abcdef_" + e.acmeKey[len(e.acmeKey)-43:]
	wrongSecret := e.acmeKey[:len(e.acmeKey)-43] + e.globexKey[len(e.globexKey)-43:]
	for _, key := range []string{unknown, wrongSecret} {
		for range 2 {
			code, views := e.authorize(e.svc, key, "acme", identity.ScopeUsersRead)
			if diff := cmp.Diff(outcome{identity.CodeUnauthenticated, 1}, outcome{code, views}); diff != "" {
				t.Errorf("Authorize(%q) mismatch (-want +got):\n%s", key, diff)
			}
		}
	}
}

// TestKeyCacheRefusesAtOnce: a key that stops working through the
// Service is refused by the very next request, cached or not.
func TestKeyCacheRefusesAtOnce(t *testing.T) {
	tests := []struct {
		name string
		stop func(e *keyEnv) error
		// after is the outcome of the acme key on "acme" once stopped.
		after outcome
	}{
		{
			name:  "RevokeAPIKey",
			stop:  func(e *keyEnv) error { return e.acme.RevokeAPIKey(e.ctx, e.acmeKeyID) },
			after: outcome{identity.CodeUnauthenticated, 1},
		},
		{
			name: "DeleteWorkspace",
			stop: func(e *keyEnv) error {
				_, err := e.svc.DeleteWorkspace(e.ctx, "acme")
				return err
			},
			after: outcome{identity.CodeUnauthenticated, 1},
		},
		{
			name: "DeleteWorkspace, then CreateWorkspace of the same slug",
			stop: func(e *keyEnv) error {
				if _, err := e.svc.DeleteWorkspace(e.ctx, "acme"); err != nil {
					return err
				}
				_, err := e.svc.CreateWorkspace(e.ctx, "acme", nil)
				return err
			},
			after: outcome{identity.CodeUnauthenticated, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newKeyEnv(t, identity.KeyCacheNoExpiry)
			e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead) // fills the cache
			e.authorize(e.svc, e.globexKey, "globex", identity.ScopeUsersRead)
			if code, views := e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead); code != "" || views != 0 {
				t.Fatalf("before: Authorize = %q with %d reads, want a cache hit", code, views)
			}
			if err := tt.stop(e); err != nil {
				t.Fatal(err)
			}
			got := []outcome{}
			for range 2 {
				code, views := e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead)
				got = append(got, outcome{code, views})
			}
			if diff := cmp.Diff([]outcome{tt.after, tt.after}, got); diff != "" {
				t.Errorf("Authorize after %s mismatch (-want +got):\n%s", tt.name, diff)
			}
			if _, err := e.svc.VerifyAPIKey(e.ctx, e.acmeKey); codeOf(err) != identity.CodeUnauthenticated {
				t.Errorf("VerifyAPIKey after %s = %v, want %s", tt.name, err, identity.CodeUnauthenticated)
			}
			// The other workspace's key is untouched and still cached.
			code, views := e.authorize(e.svc, e.globexKey, "globex", identity.ScopeUsersRead)
			if diff := cmp.Diff(outcome{"", 0}, outcome{code, views}); diff != "" {
				t.Errorf("globex key after %s mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestKeyCacheRevokeOfAnotherWorkspace: revoking a key through the handle
// of a workspace it is not of is a not-found error and leaves the key
// working (and cached); its own workspace's handle revokes it.
func TestKeyCacheRevokeOfAnotherWorkspace(t *testing.T) {
	e := newKeyEnv(t, identity.KeyCacheNoExpiry)
	e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead)
	if err := e.globex.RevokeAPIKey(e.ctx, e.acmeKeyID); codeOf(err) != identity.CodeNotFound {
		t.Errorf("globex.RevokeAPIKey(acme's key) = %v, want %s", err, identity.CodeNotFound)
	}
	code, _ := e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead)
	if code != "" {
		t.Errorf("after a refused revoke, Authorize = %q, want success", code)
	}
	if err := e.acme.RevokeAPIKey(e.ctx, e.acmeKeyID); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead); code != identity.CodeUnauthenticated {
		t.Errorf("after RevokeAPIKey, Authorize = %q, want %s", code, identity.CodeUnauthenticated)
	}
}

// TestKeyCacheFillRacingRevoke: a request that read the key just before
// a revocation committed, and would fill the cache just after it, does
// not: the next request is refused.
func TestKeyCacheFillRacingRevoke(t *testing.T) {
	e := newKeyEnv(t, identity.KeyCacheNoExpiry)
	read, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	e.st.afterView = func() {
		if once.CompareAndSwap(false, true) { // the first read only: the racing request's
			close(read)
			<-release
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.svc.AuthorizeAPIKey(e.ctx, e.acmeKey, "acme", identity.ScopeUsersRead)
		done <- err
	}()
	<-read // the request has read the key, not yet filled the cache
	if err := e.acme.RevokeAPIKey(e.ctx, e.acmeKeyID); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("the racing Authorize, which read before the revocation = %v, want success", err)
	}
	if code, views := e.authorize(e.svc, e.acmeKey, "acme", identity.ScopeUsersRead); code != identity.CodeUnauthenticated || views != 1 {
		t.Errorf("Authorize after the revocation = %q with %d reads, want %s with 1", code, views, identity.CodeUnauthenticated)
	}
}

// TestKeyCacheTTL: with a TTL, an entry is trusted for that long after
// the read that filled it, then read again. Two Services over one store
// stand for two processes sharing a database: a key revoked through one
// is refused by the other within the TTL, and at once by the one that
// revoked it.
func TestKeyCacheTTL(t *testing.T) {
	e := newKeyEnv(t, time.Minute)
	other, err := identity.New(keepOpenStore{e.st}, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2, KeyCacheTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		advance time.Duration
		svc     *identity.Service
		want    outcome
	}{
		{"first use", 0, e.svc, outcome{"", 1}},
		{"within the TTL", 59 * time.Second, e.svc, outcome{"", 0}},
		{"at the TTL", time.Second, e.svc, outcome{"", 1}},
		{"within the new TTL", 30 * time.Second, e.svc, outcome{"", 0}},
		{"the other Service's first use", 0, other, outcome{"", 1}},
	}
	var got []outcome
	for _, s := range steps {
		e.clock.Advance(s.advance)
		code, views := e.authorize(s.svc, e.acmeKey, "acme", identity.ScopeUsersRead)
		got = append(got, outcome{code, views})
	}
	ws, err := other.GetWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.RevokeAPIKey(e.ctx, e.acmeKeyID); err != nil {
		t.Fatal(err)
	}
	after := []struct {
		name    string
		advance time.Duration
		svc     *identity.Service
		want    outcome
	}{
		{"the revoking Service, at once", 0, other, outcome{identity.CodeUnauthenticated, 1}},
		{"the other Service, within its TTL", 29 * time.Second, e.svc, outcome{"", 0}},
		{"the other Service, at its TTL", time.Second, e.svc, outcome{identity.CodeUnauthenticated, 1}},
	}
	steps = append(steps, after...)
	for _, s := range after {
		e.clock.Advance(s.advance)
		code, views := e.authorize(s.svc, e.acmeKey, "acme", identity.ScopeUsersRead)
		got = append(got, outcome{code, views})
	}
	var want []outcome
	for _, s := range steps {
		want = append(want, s.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Authorize outcomes mismatch (-want +got):\n%s", diff)
	}
}

// keepOpenStore is a Store whose Close leaves it open, for a second
// Service over a store a test closes.
type keepOpenStore struct{ store.Store }

func (keepOpenStore) Close() error { return nil }

// txCounter is an Observer counting read transactions.
type txCounter struct {
	identity.NopObserver
	views atomic.Int64
}

func (c *txCounter) TransactionDone(kind identity.TxKind, _ time.Duration, _ error) {
	if kind == identity.TxView {
		c.views.Add(1)
	}
}

// TestKeyCacheDefault: by default a bbolt file (which one process holds)
// caches keys until revoked, any other store (here a memstore, standing
// for PostgreSQL, which New cannot tell apart) caches nothing, and a
// negative TTL turns the cache off on bbolt too.
func TestKeyCacheDefault(t *testing.T) {
	tests := []struct {
		name string
		bolt bool
		ttl  time.Duration
		want []int64 // read transactions of three Authorize calls
	}{
		{"bbolt, default", true, 0, []int64{1, 0, 0}},
		{"bbolt, negative TTL", true, -1, []int64{1, 1, 1}},
		{"other store, default", false, 0, []int64{1, 1, 1}},
		{"other store, KeyCacheNoExpiry", false, identity.KeyCacheNoExpiry, []int64{1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			obs := &txCounter{}
			opts := &identity.Options{PasswordHashing: &cheapArgon2, KeyCacheTTL: tt.ttl, Observer: obs}
			var svc *identity.Service
			var err error
			if tt.bolt {
				svc, err = identity.Open(filepath.Join(t.TempDir(), "identity.db"), opts)
			} else {
				svc, err = identity.New(memstore.New(), opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			ws, err := svc.CreateWorkspace(ctx, "acme", nil)
			if err != nil {
				t.Fatal(err)
			}
			created, err := ws.CreateAPIKey(ctx, "", []identity.Scope{identity.ScopeUsersRead})
			if err != nil {
				t.Fatal(err)
			}
			key := created.Secret
			var got []int64
			for range 3 {
				before := obs.views.Load()
				if _, err := svc.AuthorizeAPIKey(ctx, key, "acme", identity.ScopeUsersRead); err != nil {
					t.Fatal(err)
				}
				got = append(got, obs.views.Load()-before)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("read transactions per Authorize mismatch (-want +got):\n%s", diff)
			}
			if err := ws.RevokeAPIKey(ctx, mustKeyID(t, key)); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.AuthorizeAPIKey(ctx, key, "acme", identity.ScopeUsersRead); codeOf(err) != identity.CodeUnauthenticated {
				t.Errorf("Authorize after RevokeAPIKey = %v, want %s", err, identity.CodeUnauthenticated)
			}
		})
	}
}

func mustKeyID(t *testing.T, key string) string {
	t.Helper()
	id, ok := identity.APIKeyID(key)
	if !ok {
		t.Fatalf("APIKeyID(%q) failed", key)
	}
	return id
}
