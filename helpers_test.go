package identity_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// testEnv is a Service on a fake clock over a fresh in-memory store that
// a test can make fail, with workspace "acme" and its user "ada".
type testEnv struct {
	t     *testing.T
	ctx   context.Context
	clock *testutil.Clock
	st    *flakyStore
	svc   *identity.Service
	ws    *identity.Workspace
	ada   identity.User
}

// adaPassword is the password of every test env's user "ada".
const adaPassword = "analytical engine"

// newTestEnv returns a testEnv. opts may be nil; its Now and
// PasswordHashing default to the fake clock and cheap hashing.
func newTestEnv(t *testing.T, opts *identity.Options) *testEnv {
	t.Helper()
	return newTestEnvOver(t, opts, nil)
}

// newTestEnvOver is newTestEnv whose Service runs over wrap(st), the
// env's store as wrap sees it (nil: as it is).
func newTestEnvOver(t *testing.T, opts *identity.Options, wrap func(store.Store) store.Store) *testEnv {
	t.Helper()
	clock := newFakeClock()
	if opts == nil {
		opts = &identity.Options{}
	}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.PasswordHashing == nil {
		opts.PasswordHashing = &cheapArgon2
	}
	st := &flakyStore{Store: memstore.New()}
	t.Cleanup(func() { st.Close() })
	var over store.Store = st
	if wrap != nil {
		over = wrap(st)
	}
	svc, err := identity.New(over, opts)
	if err != nil {
		t.Fatalf("identity.New: %v", err)
	}
	ctx := t.Context()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	ada, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: adaPassword,
	})
	if err != nil {
		t.Fatalf("CreateUser(ada): %v", err)
	}
	return &testEnv{t: t, ctx: ctx, clock: clock, st: st, svc: svc, ws: ws, ada: ada}
}

// role creates a role named name and returns it.
func (e *testEnv) role(name string) identity.Role {
	e.t.Helper()
	r, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: name})
	if err != nil {
		e.t.Fatalf("CreateRole(%q): %v", name, err)
	}
	return r
}

// user creates a user named name with password "correct horse battery".
func (e *testEnv) user(name string) identity.User {
	e.t.Helper()
	u, err := e.ws.CreateUser(e.ctx, newUserNamed(name))
	if err != nil {
		e.t.Fatalf("CreateUser(%q): %v", name, err)
	}
	return u
}

func newUserNamed(name string) identity.NewUser {
	return identity.NewUser{Username: name, Email: name + "@example.com", FullName: "User " + name, Password: "correct horse battery"}
}

// hook creates an endpoint at a public URL subscribed to events and
// returns its id.
func (e *testEnv) hook(events ...identity.EventType) int64 {
	e.t.Helper()
	names := make([]string, len(events))
	for i, ev := range events {
		names[i] = string(ev)
	}
	created, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/identity", Events: names})
	if err != nil {
		e.t.Fatalf("CreateWebhook: %v", err)
	}
	return created.Endpoint.ID
}

// disableInStore disables the endpoint straight in the store, as a
// dispatcher of another process would, so that its pending jobs stay.
func (e *testEnv) disableInStore(hook int64) {
	e.t.Helper()
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		w, err := tx.Webhook("acme", hook)
		if err != nil {
			return err
		}
		w.Enabled = false
		return tx.PutWebhook("acme", w)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// stored reads a delivery's record straight from the store.
func (e *testEnv) stored(id int64) store.Delivery {
	e.t.Helper()
	var d store.Delivery
	err := e.st.Store.View(e.ctx, func(tx store.Tx) (err error) {
		d, err = tx.Delivery("acme", id)
		return err
	})
	if err != nil {
		e.t.Fatalf("store Delivery(%d): %v", id, err)
	}
	return d
}

// payloads returns the data of the endpoint's deliveries, oldest first,
// as JSON text.
func (e *testEnv) payloads(endpointID int64) []string {
	e.t.Helper()
	var out []string
	err := e.st.Store.View(e.ctx, func(tx store.Tx) error {
		all, err := tx.Deliveries("acme", endpointID)
		for _, d := range all {
			out = append(out, string(d.Payload))
		}
		return err
	})
	if err != nil {
		e.t.Fatalf("store Deliveries(%d): %v", endpointID, err)
	}
	return out
}

// field is a FieldError of field and rule, for identitytest.WantFields.
func field(name, rule string) []identity.FieldError {
	return []identity.FieldError{{Field: name, Rule: rule}}
}

// mismatch returns an error describing the difference between want and
// got, nil when there is none: for table rows whose check is a value.
func mismatch(what string, want, got any, opts ...cmp.Option) error {
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		return fmt.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
	return nil
}

// errFlaky is the failure flakyStore injects.
var errFlaky = errors.New("injected store failure")

// flakyStore is a Store that fails on demand: every View or Update, or
// one method of the transactions it runs.
type flakyStore struct {
	store.Store
	mu         sync.Mutex
	failView   bool
	failUpdate bool
	broken     map[string]error
}

// set makes View and Update fail from now on, or work again.
func (s *flakyStore) set(view, update bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failView, s.failUpdate = view, update
}

// mend makes everything work again.
func (s *flakyStore) mend() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failView, s.failUpdate, s.broken = false, false, nil
}

// breakMethod makes the Tx method named return err (nil mends it).
func (s *flakyStore) breakMethod(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = map[string]error{}
	}
	s.broken[name] = err
}

func (s *flakyStore) err(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken[name]
}

func (s *flakyStore) View(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	fail := s.failView
	s.mu.Unlock()
	if fail {
		return errFlaky
	}
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(&flakyTx{Tx: tx, s: s}) })
}

func (s *flakyStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	fail := s.failUpdate
	s.mu.Unlock()
	if fail {
		return errFlaky
	}
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(&flakyTx{Tx: tx, s: s}) })
}

// flakyTx fails the methods its store has broken.
type flakyTx struct {
	store.Tx
	s *flakyStore
}

func (tx *flakyTx) Webhook(slug string, id int64) (store.Webhook, error) {
	if err := tx.s.err("Webhook"); err != nil {
		return store.Webhook{}, err
	}
	return tx.Tx.Webhook(slug, id)
}

func (tx *flakyTx) Webhooks(slug string, offset, limit int) ([]store.Webhook, int, error) {
	if err := tx.s.err("Webhooks"); err != nil {
		return nil, 0, err
	}
	return tx.Tx.Webhooks(slug, offset, limit)
}

func (tx *flakyTx) PutWebhook(slug string, w store.Webhook) error {
	if err := tx.s.err("PutWebhook"); err != nil {
		return err
	}
	return tx.Tx.PutWebhook(slug, w)
}

func (tx *flakyTx) Delivery(slug string, id int64) (store.Delivery, error) {
	if err := tx.s.err("Delivery"); err != nil {
		return store.Delivery{}, err
	}
	return tx.Tx.Delivery(slug, id)
}

func (tx *flakyTx) ClaimDelivery(slug string, id int64) (store.Delivery, bool, error) {
	if err := tx.s.err("ClaimDelivery"); err != nil {
		return store.Delivery{}, false, err
	}
	return tx.Tx.ClaimDelivery(slug, id)
}

func (tx *flakyTx) PutDelivery(slug string, d store.Delivery) error {
	if err := tx.s.err("PutDelivery"); err != nil {
		return err
	}
	return tx.Tx.PutDelivery(slug, d)
}

func (tx *flakyTx) Deliveries(slug string, endpointID int64) ([]store.Delivery, error) {
	if err := tx.s.err("Deliveries"); err != nil {
		return nil, err
	}
	return tx.Tx.Deliveries(slug, endpointID)
}

func (tx *flakyTx) DueDeliveries(now time.Time, limit int) ([]store.QueuedDelivery, error) {
	if err := tx.s.err("DueDeliveries"); err != nil {
		return nil, err
	}
	return tx.Tx.DueDeliveries(now, limit)
}

func (tx *flakyTx) NextDueAt() (time.Time, bool, error) {
	if err := tx.s.err("NextDueAt"); err != nil {
		return time.Time{}, false, err
	}
	return tx.Tx.NextDueAt()
}

func (tx *flakyTx) PutUser(slug string, u store.User) error {
	if err := tx.s.err("PutUser"); err != nil {
		return err
	}
	return tx.Tx.PutUser(slug, u)
}

func (tx *flakyTx) User(slug string, id int64) (store.User, error) {
	if err := tx.s.err("User"); err != nil {
		return store.User{}, err
	}
	return tx.Tx.User(slug, id)
}

func (tx *flakyTx) UserIDByUsername(slug, username string) (int64, error) {
	if err := tx.s.err("UserIDByUsername"); err != nil {
		return 0, err
	}
	return tx.Tx.UserIDByUsername(slug, username)
}

func (tx *flakyTx) OAuthClient(slug, id string) (store.OAuthClient, error) {
	if err := tx.s.err("OAuthClient"); err != nil {
		return store.OAuthClient{}, err
	}
	return tx.Tx.OAuthClient(slug, id)
}

func (tx *flakyTx) Session(slug, id string) (store.Session, error) {
	if err := tx.s.err("Session"); err != nil {
		return store.Session{}, err
	}
	return tx.Tx.Session(slug, id)
}

func (tx *flakyTx) PutSession(slug string, s store.Session) error {
	if err := tx.s.err("PutSession"); err != nil {
		return err
	}
	return tx.Tx.PutSession(slug, s)
}

func (tx *flakyTx) PutVerificationToken(slug string, t store.VerificationToken) error {
	if err := tx.s.err("PutVerificationToken"); err != nil {
		return err
	}
	return tx.Tx.PutVerificationToken(slug, t)
}

func (tx *flakyTx) VerificationToken(slug, id string) (store.VerificationToken, error) {
	if err := tx.s.err("VerificationToken"); err != nil {
		return store.VerificationToken{}, err
	}
	return tx.Tx.VerificationToken(slug, id)
}

func (tx *flakyTx) DeleteSigningKey(slug, id string) error {
	if err := tx.s.err("DeleteSigningKey"); err != nil {
		return err
	}
	return tx.Tx.DeleteSigningKey(slug, id)
}
