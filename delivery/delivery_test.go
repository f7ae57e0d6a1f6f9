package delivery_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
	"github.com/identitylib/identity/webhook"
)

// dlvWait bounds every wait of the delivery tests. Nothing is timed: a
// wait that runs out is a failure, however long the machine took, so the
// bound is far beyond what any wait needs on a loaded machine.
const dlvWait = 10 * time.Minute

// dlvPoll is how often a wait looks again: often enough to keep tests
// quick, rarely enough not to compete with the work it waits for.
const dlvPoll = 20 * time.Millisecond

// newDlvClock starts a fake clock at the current second, so that
// webhook-timestamp values stay near real time until a test advances it.
func newDlvClock() *testutil.Clock {
	return testutil.NewClock(time.Now().UTC().Truncate(time.Second))
}

// dlvRequest is one request a receiver got.
type dlvRequest struct {
	header http.Header
	body   []byte
	status int // what the receiver answered, 0 while it has not
}

// dlvReceiver is an HTTPS endpoint on loopback that records what it gets
// and answers as respond says; respond gets the request's index.
type dlvReceiver struct {
	srv     *httptest.Server
	respond func(w http.ResponseWriter, r *http.Request, n int)

	mu        sync.Mutex
	reqs      []*dlvRequest
	active    map[string]int
	maxActive int
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func newDlvReceiver(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *dlvReceiver {
	t.Helper()
	rc := &dlvReceiver{respond: respond, active: map[string]int{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // aborted attempts are the point
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *dlvReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &dlvRequest{header: r.Header.Clone(), body: body}
	id := r.Header.Get(webhook.HeaderID)
	rc.mu.Lock()
	n := len(rc.reqs)
	rc.reqs = append(rc.reqs, req)
	rc.active[id]++
	rc.maxActive = max(rc.maxActive, rc.active[id])
	rc.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w}
	if rc.respond != nil {
		rc.respond(sw, r, n)
	}
	rc.mu.Lock()
	rc.active[id]--
	req.status = sw.status
	if req.status == 0 {
		req.status = http.StatusOK
	}
	rc.mu.Unlock()
}

func (rc *dlvReceiver) url(path string) string { return rc.srv.URL + path }

func (rc *dlvReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

// requests returns copies of the requests answered so far.
func (rc *dlvReceiver) requests() []dlvRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]dlvRequest, len(rc.reqs))
	for i, r := range rc.reqs {
		out[i] = *r
	}
	return out
}

// dlvRoots trusts the certificate every httptest TLS server presents.
func dlvRoots(rc *dlvReceiver) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(rc.srv.Certificate())
	return pool
}

// dlvEnv is a Service with a workspace, for delivery tests.
type dlvEnv struct {
	t     *testing.T
	svc   *identity.Service
	st    store.Store // nil when the Service was opened on a file
	ws    *identity.Workspace
	clock *testutil.Clock
}

func dlvServiceOptions(clock *testutil.Clock) *identity.Options {
	opts := &identity.Options{
		AllowPrivateWebhooks: true,
		PasswordHashing:      &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
	}
	if clock != nil {
		opts.Now = clock.Now
	}
	return opts
}

// newDlvEnv builds an env over a memstore; clock nil means real time.
func newDlvEnv(t *testing.T, clock *testutil.Clock) *dlvEnv {
	t.Helper()
	st := memstore.New()
	svc, err := identity.New(st, dlvServiceOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return newDlvEnvOn(t, svc, st, clock, true)
}

// openDlvEnv builds an env over the bbolt file at path, creating the
// workspace when create is set.
func openDlvEnv(t *testing.T, path string, clock *testutil.Clock, create bool) *dlvEnv {
	t.Helper()
	svc, err := identity.Open(path, dlvServiceOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return newDlvEnvOn(t, svc, nil, clock, create)
}

func newDlvEnvOn(t *testing.T, svc *identity.Service, st store.Store, clock *testutil.Clock, create bool) *dlvEnv {
	t.Helper()
	ctx := context.Background()
	var ws *identity.Workspace
	var err error
	if create {
		ws, err = svc.CreateWorkspace(ctx, "acme", nil)
	} else {
		ws, err = svc.GetWorkspace(ctx, "acme")
	}
	if err != nil {
		t.Fatal(err)
	}
	return &dlvEnv{t: t, svc: svc, st: st, ws: ws, clock: clock}
}

func (e *dlvEnv) hook(url string, events ...string) identity.CreatedWebhook {
	e.t.Helper()
	if len(events) == 0 {
		events = []string{string(identity.EventUserCreated)}
	}
	h, err := e.ws.CreateWebhook(context.Background(), identity.NewWebhook{URL: url, Events: events})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *dlvEnv) user(name string) identity.User {
	e.t.Helper()
	u, err := e.ws.CreateUser(context.Background(), identity.NewUser{
		Username: name, Email: name + "@example.com", FullName: "User " + name, Password: "correct horse battery",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// options returns dispatcher options for tests: the receivers' roots, a
// short poll interval, and no log output.
func (e *dlvEnv) options(roots *x509.CertPool) *delivery.Options {
	return &delivery.Options{
		RootCAs:      roots,
		PollInterval: 5 * time.Millisecond,
		Logger:       slog.New(slog.DiscardHandler),
	}
}

// start starts a dispatcher that the test's cleanup stops. The cleanup
// cancels its context first, so that a failed test does not wait for
// attempts a hanging receiver holds.
func (e *dlvEnv) start(opts *delivery.Options) *delivery.Dispatcher {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := delivery.Start(ctx, e.svc, opts)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	e.t.Cleanup(d.Stop)
	e.t.Cleanup(cancel)
	return d
}

func (e *dlvEnv) deliveries(endpointID int64) []identity.Delivery {
	e.t.Helper()
	ds, err := allDeliveries(context.Background(), e.ws, endpointID)
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}

// waitDeliveries waits until the endpoint's deliveries satisfy ok.
func (e *dlvEnv) waitDeliveries(endpointID int64, what string, ok func([]identity.Delivery) bool) []identity.Delivery {
	e.t.Helper()
	var ds []identity.Delivery
	waitFor(e.t, what, func() bool {
		ds = e.deliveries(endpointID)
		return ok(ds)
	})
	return ds
}

// attempted reports whether every delivery has made n attempts or more.
func attempted(n int) func([]identity.Delivery) bool {
	return func(ds []identity.Delivery) bool {
		for _, d := range ds {
			if d.Attempts < n {
				return false
			}
		}
		return len(ds) > 0
	}
}

// settled reports whether no delivery is pending any more.
func settled(ds []identity.Delivery) bool {
	for _, d := range ds {
		if d.Status == identity.DeliveryPending {
			return false
		}
	}
	return len(ds) > 0
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(dlvWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting (%s) for: %s", dlvWait, what)
		}
		time.Sleep(dlvPoll)
	}
}

func failWith(status int) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(status) }
}

// TestDeliveryReachesSubscriberOnceSigned: a created user reaches the
// endpoint subscribed to user.created exactly once, as Standard Webhooks
// describes (verified with the reference library), and nothing reaches an
// endpoint subscribed to another type.
func TestDeliveryReachesSubscriberOnceSigned(t *testing.T) {
	env := newDlvEnv(t, nil)
	sub := newDlvReceiver(t, nil)
	other := newDlvReceiver(t, nil)
	subHook := env.hook(sub.url("/hook"))
	otherHook := env.hook(other.url("/hook"), string(identity.EventLoginFailed))
	d := env.start(env.options(dlvRoots(sub)))

	u := env.user("ada")
	env.waitDeliveries(subHook.Endpoint.ID, "the delivery to succeed", settled)
	d.Stop()

	reqs := sub.requests()
	if len(reqs) != 1 {
		t.Fatalf("subscriber got %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	wh, err := standardwebhooks.NewWebhook(subHook.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(req.body, req.header); err != nil {
		t.Errorf("reference library rejects the request: %v", err)
	}
	if ct := req.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var body struct {
		Type      string        `json:"type"`
		Timestamp time.Time     `json:"timestamp"`
		Data      identity.User `json:"data"`
	}
	if err := json.Unmarshal(req.body, &body); err != nil {
		t.Fatalf("body %s: %v", req.body, err)
	}
	if body.Type != "user.created" || body.Data.ID != u.ID || body.Data.Username != "ada" || body.Timestamp.IsZero() {
		t.Errorf("body = %s", req.body)
	}
	ds := env.deliveries(subHook.Endpoint.ID)
	if len(ds) != 1 || ds[0].Status != identity.DeliverySucceeded || ds[0].Attempts != 1 || ds[0].LastStatus != 200 ||
		ds[0].EventID != req.header.Get(webhook.HeaderID) || !strings.HasPrefix(ds[0].EventID, "msg_") {
		t.Errorf("deliveries = %+v", ds)
	}
	if n := other.count(); n != 0 {
		t.Errorf("endpoint not subscribed to user.created got %d requests", n)
	}
	if ds := env.deliveries(otherHook.Endpoint.ID); len(ds) != 0 {
		t.Errorf("endpoint not subscribed has deliveries %+v", ds)
	}
}

// TestDeliveryRetriesFollowSchedule: two failures then a success make
// three attempts with one webhook-id, spaced as the schedule says (±20%),
// each signed with its own timestamp.
func TestDeliveryRetriesFollowSchedule(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	rc := newDlvReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n < 2 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	hook := env.hook(rc.url("/hook"))
	env.start(env.options(dlvRoots(rc)))
	env.user("ada")

	schedule := identity.DefaultRetryDelays()
	for attempt := 1; attempt <= 2; attempt++ {
		ds := env.waitDeliveries(hook.Endpoint.ID, fmt.Sprintf("attempt %d", attempt), attempted(attempt))
		dl := ds[0]
		if dl.Status != identity.DeliveryPending || dl.Attempts != attempt || dl.LastStatus != 500 || dl.LastError == "" {
			t.Fatalf("after attempt %d: %+v", attempt, dl)
		}
		if !dl.LastAttemptAt.Equal(clock.Now()) {
			t.Errorf("LastAttemptAt = %v, want the clock's %v", dl.LastAttemptAt, clock.Now())
		}
		wait, want := dl.NextAttemptAt.Sub(dl.LastAttemptAt), schedule[attempt-1]
		if wait < want*8/10 || wait > want*12/10 {
			t.Errorf("wait after attempt %d = %v, want %v ±20%%", attempt, wait, want)
		}
		clock.Set(dl.NextAttemptAt)
	}
	ds := env.waitDeliveries(hook.Endpoint.ID, "the third attempt to succeed", settled)
	if ds[0].Status != identity.DeliverySucceeded || ds[0].Attempts != 3 || ds[0].LastError != "" {
		t.Errorf("after the third attempt: %+v", ds[0])
	}

	reqs := rc.requests()
	if len(reqs) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(reqs))
	}
	wh, _ := standardwebhooks.NewWebhook(hook.Secret)
	var stamps []string
	for i, r := range reqs {
		if got := r.header.Get(webhook.HeaderID); got != ds[0].EventID {
			t.Errorf("request %d webhook-id = %q, want %q", i, got, ds[0].EventID)
		}
		// The fake clock is minutes away from real time by now, past the
		// library's tolerance, so the timestamp check is left out.
		if err := wh.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		if i > 0 && !bytes.Equal(r.body, reqs[0].body) {
			t.Errorf("request %d body differs from the first", i)
		}
		stamps = append(stamps, r.header.Get(webhook.HeaderTimestamp))
	}
	if stamps[0] == stamps[1] || stamps[1] == stamps[2] {
		t.Errorf("webhook-timestamp should be each attempt's own: %v", stamps)
	}
}

// TestDeliveryNothingAfterDelete: once DeleteWebhook returns, the
// endpoint's pending deliveries are never attempted again.
func TestDeliveryNothingAfterDelete(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	doomed := newDlvReceiver(t, failWith(http.StatusInternalServerError))
	sentinel := newDlvReceiver(t, nil)
	hook := env.hook(doomed.url("/hook"))
	env.start(env.options(dlvRoots(doomed)))
	env.user("ada")
	env.user("bob")
	env.waitDeliveries(hook.Endpoint.ID, "first attempts", attempted(1))

	ctx := context.Background()
	if err := env.ws.DeleteWebhook(ctx, hook.Endpoint.ID); err != nil {
		t.Fatal(err)
	}
	before := doomed.count()

	// Every retry of the deleted endpoint would now be due. A delivery to
	// another endpoint, enqueued after them, shows the dispatcher has gone
	// past them.
	clock.Advance(48 * time.Hour)
	sHook := env.hook(sentinel.url("/sentinel"))
	env.user("cyd")
	env.waitDeliveries(sHook.Endpoint.ID, "the sentinel delivery", settled)
	if after := doomed.count(); after != before || before != 2 {
		t.Errorf("deleted endpoint got %d requests before the delete and %d after, want 2 and 2", before, after)
	}
	if _, err := listItems(env.ws.ListDeliveries(ctx, hook.Endpoint.ID, nil)); !errors.Is(err, identity.ErrNotFound) {
		t.Errorf("Deliveries of the deleted endpoint: %v, want not found", err)
	}
}

// TestDeliveryDeleteAbortsAttemptInFlight: an attempt in flight when its
// endpoint is deleted is cancelled before DeleteWebhook returns, and
// nothing follows it.
func TestDeliveryDeleteAbortsAttemptInFlight(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	aborted := make(chan struct{})
	rc := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		<-r.Context().Done() // hang until the client goes away
		close(aborted)
	})
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	opts.AttemptTimeout = 10 * time.Minute // only the deletion may end it
	d := env.start(opts)
	env.user("ada")
	waitFor(t, "the attempt to reach the receiver", func() bool { return rc.count() == 1 })

	if err := env.ws.DeleteWebhook(context.Background(), hook.Endpoint.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-aborted:
	case <-time.After(dlvWait):
		t.Fatal("the attempt in flight was not cancelled")
	}
	st, err := d.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dropped result", func() bool {
		st, _ = d.Stats(context.Background())
		return st.Dropped == 1 && st.InFlight == 0
	})
	clock.Advance(48 * time.Hour)
	d.Stop()
	if n := rc.count(); n != 1 || st.Pending != 0 {
		t.Errorf("receiver got %d requests, pending %d; want 1 and 0", n, st.Pending)
	}
}

// TestDeliverySurvivesKilledDispatcher: a dispatcher killed mid-attempt
// leaves its lease; after a restart on the same bbolt file the delivery is
// attempted again once the lease ends, with the same webhook-id.
func TestDeliverySurvivesKilledDispatcher(t *testing.T) {
	clock := newDlvClock()
	path := filepath.Join(t.TempDir(), "id.db")
	rc := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			<-r.Context().Done() // the first attempt never gets an answer
		}
	})
	env := openDlvEnv(t, path, clock, true)
	hook := env.hook(rc.url("/hook"))
	ctx, kill := context.WithCancel(context.Background())
	opts := env.options(dlvRoots(rc))
	opts.AttemptTimeout = 10 * time.Minute
	d, err := delivery.Start(ctx, env.svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	env.user("ada")
	waitFor(t, "the first attempt", func() bool { return rc.count() == 1 })
	kill()
	d.Stop() // returns at once: the attempt was abandoned, not recorded
	if err := env.svc.Close(); err != nil {
		t.Fatal(err)
	}

	env = openDlvEnv(t, path, clock, false)
	ds := env.deliveries(hook.Endpoint.ID)
	if len(ds) != 1 || ds[0].Status != identity.DeliveryPending || ds[0].Attempts != 0 {
		t.Fatalf("after the crash: %+v", ds)
	}
	env.start(opts)
	clock.Advance(opts.AttemptTimeout*2 + time.Second) // past the default lease
	ds = env.waitDeliveries(hook.Endpoint.ID, "the retry after the lease", settled)
	reqs := rc.requests()
	if ds[0].Status != identity.DeliverySucceeded || ds[0].Attempts != 1 || len(reqs) != 2 {
		t.Fatalf("after the restart: %+v, %d requests", ds[0], len(reqs))
	}
	if a, b := reqs[0].header.Get(webhook.HeaderID), reqs[1].header.Get(webhook.HeaderID); a != b || a != ds[0].EventID {
		t.Errorf("webhook-ids %q and %q, want both %q", a, b, ds[0].EventID)
	}
}

// flakyReceiver fails a share of requests at random and records which
// webhook-ids it answered 2xx. A non-nil gate holds requests until it
// opens.
func flakyReceiver(t *testing.T, failShare float64, delay time.Duration, g *gate) *dlvReceiver {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	return newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if g != nil && !g.pass(r) {
			w.WriteHeader(http.StatusServiceUnavailable) // the sender gave up
			return
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		mu.Lock()
		fail := rng.Float64() < failShare
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
}

// gate holds the requests that reach a receiver until n of them are held
// at once; then it opens, for good. A dispatcher sends at most
// MaxPerEndpoint requests to one endpoint at once, so with n above that,
// the gate opens only when several dispatchers send at the same time: the
// work cannot be done by one alone.
type gate struct {
	n      int
	mu     sync.Mutex
	held   int
	opened chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, opened: make(chan struct{})} }

// pass waits until the gate is open, and reports false if the request
// was abandoned first.
func (g *gate) pass(r *http.Request) bool {
	g.mu.Lock()
	select {
	case <-g.opened:
		g.mu.Unlock()
		return true
	default:
	}
	if g.held++; g.held == g.n {
		close(g.opened)
	}
	g.mu.Unlock()
	select {
	case <-g.opened:
		return true
	case <-r.Context().Done():
		g.mu.Lock()
		g.held--
		g.mu.Unlock()
		return false
	}
}

// isOpen reports whether the gate has opened.
func (g *gate) isOpen() bool {
	select {
	case <-g.opened:
		return true
	default:
		return false
	}
}

// checkAtLeastOnce checks that every one of want events (by username) got
// exactly one 2xx, and that requests repeated for one webhook-id carry the
// same body: duplicates are only retries.
func checkAtLeastOnce(t *testing.T, reqs []dlvRequest, want int) map[string]int {
	t.Helper()
	bodies := map[string][]byte{}
	ok := map[string]int{}
	perID := map[string]int{}
	users := map[string]bool{}
	for _, r := range reqs {
		id := r.header.Get(webhook.HeaderID)
		perID[id]++
		if b, seen := bodies[id]; seen && !bytes.Equal(b, r.body) {
			t.Fatalf("webhook-id %s came with two bodies", id)
		}
		bodies[id] = r.body
		if r.status/100 == 2 {
			ok[id]++
			var body struct {
				Data identity.User `json:"data"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatal(err)
			}
			users[body.Data.Username] = true
		}
	}
	for id, n := range ok {
		if n != 1 {
			t.Errorf("webhook-id %s answered 2xx %d times", id, n)
		}
	}
	if len(ok) != want || len(users) != want || len(bodies) != want {
		t.Errorf("%d events with a 2xx, %d users, %d ids; want %d", len(ok), len(users), len(bodies), want)
	}
	return perID
}

// createUsers creates n users from 8 goroutines.
func (e *dlvEnv) createUsers(n int) {
	e.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				name := fmt.Sprintf("user%04d", i)
				_, err := e.ws.CreateUser(context.Background(), identity.NewUser{
					Username: name, Email: name + "@example.com", FullName: name, Password: "correct horse battery",
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
}

func shortRetries(n int) []time.Duration {
	r := make([]time.Duration, n)
	for i := range r {
		r[i] = time.Millisecond
	}
	return r
}

// TestDeliveryManyEventsFlakyReceiver: 300 events through a receiver
// failing 30% of requests at random, over a bbolt file (an fsynced write
// per attempt): every event gets through, and the only duplicates are
// retries of one webhook-id. The work is kept small and the wait bounded
// generously, so that a slow or loaded machine only makes it take longer.
func TestDeliveryManyEventsFlakyReceiver(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 100
	}
	env := openDlvEnv(t, filepath.Join(t.TempDir(), "id.db"), nil, true)
	rc := flakyReceiver(t, 0.3, 0, nil)
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	// Thirty quick retries: at 30% failures, all failing has odds 2e-16.
	opts.Retries = shortRetries(30)
	d := env.start(opts)
	env.createUsers(n)
	env.waitDeliveries(hook.Endpoint.ID, "every delivery to succeed", func(ds []identity.Delivery) bool {
		return len(ds) == n && settled(ds)
	})
	d.Stop()

	perID := checkAtLeastOnce(t, rc.requests(), n)
	for _, dl := range env.deliveries(hook.Endpoint.ID) {
		if dl.Status != identity.DeliverySucceeded || dl.Attempts != perID[dl.EventID] {
			t.Errorf("delivery %+v, receiver saw %d requests", dl, perID[dl.EventID])
		}
	}
	st, err := d.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Successes != uint64(n) || st.Attempts != st.Successes+st.Failures || st.Pending != 0 || st.Failures == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestTwoDispatchersNeverOverlap: two Services over one store, each with
// its own dispatcher, as two processes would be: no webhook-id is ever
// being sent twice at the same moment, and each event succeeds once. The
// receiver holds the first requests until more are in flight than one
// dispatcher may send (a gate), so both must take part.
func TestTwoDispatchersNeverOverlap(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 100
	}
	env := newDlvEnv(t, nil)
	second, err := identity.New(env.st, dlvServiceOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	const perEndpoint = 4
	g := newGate(perEndpoint + 1)
	rc := flakyReceiver(t, 0.3, time.Millisecond, g)
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	opts.Retries = shortRetries(30)
	opts.MaxPerEndpoint = perEndpoint
	opts.AttemptTimeout = 10 * time.Minute // only the gate holds requests
	d1 := env.start(opts)
	d2, err := delivery.Start(context.Background(), second, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Stop()
	env.createUsers(n)
	checkSharedWork(t, env, hook.Endpoint.ID, rc, g, []*delivery.Dispatcher{d1, d2}, n)
}

// checkSharedWork waits until the n deliveries of the endpoint have
// succeeded, stops the dispatchers, and checks that each event succeeded
// once, that no webhook-id was ever in flight twice at once, that the gate
// opened, and that every dispatcher made attempts: several dispatchers
// over one store shared the work without overlapping.
func checkSharedWork(t *testing.T, env *dlvEnv, endpointID int64, rc *dlvReceiver, g *gate, ds []*delivery.Dispatcher, n int) {
	t.Helper()
	env.waitDeliveries(endpointID, "every delivery to succeed (the gate opens only when the dispatchers send at the same time)", func(got []identity.Delivery) bool {
		return len(got) == n && settled(got)
	})
	for _, d := range ds {
		d.Stop()
	}
	checkAtLeastOnce(t, rc.requests(), n)
	rc.mu.Lock()
	maxActive := rc.maxActive
	rc.mu.Unlock()
	if maxActive != 1 {
		t.Errorf("a webhook-id was in flight %d times at once", maxActive)
	}
	if !g.isOpen() {
		t.Error("the gate never opened")
	}
	var successes uint64
	for i, d := range ds {
		st, err := d.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Attempts == 0 {
			t.Errorf("dispatcher %d made no attempt: %+v", i, st)
		}
		if st.Pending != 0 {
			t.Errorf("stats %+v: deliveries still pending", st)
		}
		successes += st.Successes
		t.Logf("dispatcher %d: %d attempts", i, st.Attempts)
	}
	if successes != uint64(n) {
		t.Errorf("%d successes in all, want %d", successes, n)
	}
}

// TestDeliveryFailuresCounted: a redirect and a 5xx each count as a
// failed attempt with its reason, while another endpoint is served; then,
// under a dispatcher with a short attempt timeout, so do an answer that
// never comes and a response body that never ends.
//
// The two phases have dispatchers of their own so that no answer has to
// come within the short timeout: in the first the timeout is long, and in
// the second the receivers never finish. Their endpoints subscribe to
// different events, so each phase's event reaches only its own.
func TestDeliveryFailuresCounted(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	good := newDlvReceiver(t, nil)
	redirect := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, good.url("/redirected"), http.StatusFound)
	})
	broken := newDlvReceiver(t, failWith(http.StatusBadGateway))
	hang := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() })
	trickle := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			w.Write([]byte(" "))
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	})
	hooks := map[string]int64{}
	for name, rc := range map[string]*dlvReceiver{"good": good, "redirect": redirect, "broken": broken} {
		hooks[name] = env.hook(rc.url("/hook")).Endpoint.ID
	}
	for name, rc := range map[string]*dlvReceiver{"hang": hang, "trickle": trickle} {
		hooks[name] = env.hook(rc.url("/hook"), string(identity.EventUserDisabled)).Endpoint.ID
	}
	ctx := context.Background()

	// Phase 1: answers that come, with all the time they need.
	opts := env.options(dlvRoots(good))
	opts.AttemptTimeout = 10 * time.Minute
	d := env.start(opts)
	ada := env.user("ada")
	for _, name := range []string{"good", "redirect", "broken"} {
		env.waitDeliveries(hooks[name], name+": one attempt", attempted(1))
	}
	d.Stop()
	check := func(name string, attempts, status int, errPart string) {
		t.Helper()
		ds := env.deliveries(hooks[name])
		dl := ds[0]
		wantStatus := identity.DeliveryPending
		if errPart == "" {
			wantStatus = identity.DeliverySucceeded
		}
		if len(ds) != 1 || dl.Attempts < attempts || dl.Status != wantStatus || dl.LastStatus != status ||
			!strings.Contains(dl.LastError, errPart) {
			t.Errorf("%s: %+v, want status %d and an error containing %q", name, dl, status, errPart)
		}
	}
	check("good", 1, 200, "")
	check("redirect", 1, 302, "HTTP status 302")
	check("broken", 1, 502, "HTTP status 502")
	if n := good.count(); n != 1 {
		t.Errorf("good endpoint got %d requests, want 1 (redirects are not followed)", n)
	}
	if st, _ := d.Stats(ctx); st.Attempts != 3 || st.Successes != 1 || st.Failures != 2 {
		t.Errorf("first dispatcher's stats %+v; want 3 attempts, 1 success, 2 failures", st)
	}

	// Phase 2: answers that never end, under a short timeout. The hanging
	// receiver's attempts time out with no status whenever the timeout
	// comes. The trickling one's status arrives with its headers, which a
	// loaded machine may not deliver within the timeout: its delivery is
	// retried until an attempt got them and then timed out reading the body.
	opts = env.options(dlvRoots(good))
	opts.AttemptTimeout = time.Second
	opts.Retries = shortRetries(1000)
	d = env.start(opts)
	if err := env.ws.DisableUser(ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	env.waitDeliveries(hooks["hang"], "hang: one attempt", attempted(1))
	check("hang", 1, 0, "timed out after 1s")
	env.waitDeliveries(hooks["trickle"], "trickle: an attempt that got the headers", func(ds []identity.Delivery) bool {
		return len(ds) == 1 && ds[0].LastStatus == 200
	})
	check("trickle", 1, 200, "reading the response: timed out after 1s")
	d.Stop()
	if st, _ := d.Stats(ctx); st.Attempts < 2 || st.Successes != 0 || st.Failures != st.Attempts {
		t.Errorf("second dispatcher's stats %+v; want only failures", st)
	}
}

// TestDeliveryRefusesPrivateAddressAfterResolution: with the SSRF guard
// on, an endpoint whose host name resolves to loopback (planted in the
// store, since creation refuses "localhost") gets nothing, and the attempt
// counts as failed with the guard's reason.
func TestDeliveryRefusesPrivateAddressAfterResolution(t *testing.T) {
	st := memstore.New()
	opts := dlvServiceOptions(nil)
	opts.AllowPrivateWebhooks = false
	svc, err := identity.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	env := newDlvEnvOn(t, svc, st, nil, true)
	rc := newDlvReceiver(t, nil)
	port := rc.srv.Listener.Addr().String()
	port = port[strings.LastIndex(port, ":"):]
	ctx := context.Background()
	var id int64
	err = st.Update(ctx, func(tx store.Tx) (err error) {
		if id, err = tx.NextID("acme", store.SeqWebhooks); err != nil {
			return err
		}
		return tx.PutWebhook("acme", store.Webhook{
			ID: id, URL: "https://localhost" + port + "/hook", Events: []string{"user.created"},
			Enabled: true, CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
			Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	dopts := env.options(dlvRoots(rc))
	dopts.Retries = []time.Duration{}
	env.start(dopts)
	env.user("ada")
	ds := env.waitDeliveries(id, "the refused attempt", settled)
	if ds[0].Status != identity.DeliveryFailed || ds[0].LastStatus != 0 || !strings.Contains(ds[0].LastError, "not a public address") {
		t.Errorf("delivery %+v, want failed by the guard", ds[0])
	}
	if n := rc.count(); n != 0 {
		t.Errorf("the loopback receiver got %d requests", n)
	}
}

// TestDeliverySlowEndpointDoesNotBlockOthers: an endpoint whose receiver
// hangs holds at most MaxPerEndpoint workers, and another endpoint's
// deliveries, queued behind a backlog of the slow one's larger than the
// scan window, are all delivered while it hangs.
func TestDeliverySlowEndpointDoesNotBlockOthers(t *testing.T) {
	env := newDlvEnv(t, nil)
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	slow := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	fast := newDlvReceiver(t, nil)
	slowHook := env.hook(slow.url("/hook"))
	env.createUsers(50) // the slow endpoint's backlog, ahead in due order
	fastHook := env.hook(fast.url("/hook"))
	for i := range 5 {
		env.user(fmt.Sprintf("late%d", i))
	}
	opts := env.options(dlvRoots(slow))
	opts.Workers, opts.MaxPerEndpoint = 4, 2 // a scan window of 40
	opts.AttemptTimeout = 10 * time.Minute
	env.start(opts)
	t.Cleanup(unblock)

	env.waitDeliveries(fastHook.Endpoint.ID, "the fast endpoint's deliveries", func(ds []identity.Delivery) bool {
		return len(ds) == 5 && settled(ds)
	})
	slow.mu.Lock()
	inSlow := len(slow.reqs)
	slow.mu.Unlock()
	if inSlow > 2 {
		t.Errorf("the slow endpoint holds %d attempts, want at most 2", inSlow)
	}
	unblock()
	env.waitDeliveries(slowHook.Endpoint.ID, "the slow endpoint's backlog", func(ds []identity.Delivery) bool {
		return len(ds) == 55 && settled(ds)
	})
}

// TestDelivery410DisablesEndpoint: 410 Gone disables the endpoint at once;
// its other pending deliveries fail without an attempt, and new events no
// longer reach it.
func TestDelivery410DisablesEndpoint(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	rc := newDlvReceiver(t, failWith(http.StatusGone))
	hook := env.hook(rc.url("/hook"))
	env.user("ada")
	env.user("bob")
	opts := env.options(dlvRoots(rc))
	opts.MaxPerEndpoint = 1
	d := env.start(opts)
	ds := env.waitDeliveries(hook.Endpoint.ID, "both deliveries to settle", settled)

	ctx := context.Background()
	ep, err := env.ws.GetWebhook(ctx, hook.Endpoint.ID)
	if err != nil || ep.Enabled {
		t.Fatalf("endpoint %+v, %v; want disabled", ep, err)
	}
	gone, skipped := ds[0], ds[1]
	if gone.Attempts == 0 {
		gone, skipped = skipped, gone
	}
	if gone.Status != identity.DeliveryFailed || gone.Attempts != 1 || gone.LastStatus != 410 {
		t.Errorf("answered delivery %+v", gone)
	}
	if skipped.Status != identity.DeliveryFailed || skipped.Attempts != 0 || skipped.LastError != "endpoint disabled" {
		t.Errorf("other delivery %+v", skipped)
	}
	env.user("cyd")
	if ds := env.deliveries(hook.Endpoint.ID); len(ds) != 2 {
		t.Errorf("a disabled endpoint got a new delivery: %+v", ds)
	}
	if err := env.ws.RetryDelivery(ctx, skipped.ID); !errors.Is(err, identity.ErrConflict) {
		t.Errorf("RetryDelivery to a disabled endpoint: %v, want conflict", err)
	}
	clock.Advance(48 * time.Hour)
	d.Stop()
	st, _ := d.Stats(ctx)
	if n := rc.count(); n != 1 || st.EndpointsDisabled != 1 || st.Exhausted != 2 {
		t.Errorf("receiver got %d requests (want 1); stats %+v", n, st)
	}
}

// TestDeliveryRetryAfter: a Retry-After on 429 and 503, in seconds or as
// an HTTP date, lengthens the wait to at least its value, but to at most
// twice the scheduled wait; on other statuses it is ignored.
func TestDeliveryRetryAfter(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	cases := []struct {
		name     string
		status   int
		value    string
		min, max time.Duration
	}{
		{"503 seconds", 503, "7", 7 * time.Second, 7 * time.Second},
		{"429 seconds", 429, "7", 7 * time.Second, 7 * time.Second},
		{"503 date", 503, clock.Now().Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, 7 * time.Second},
		{"503 clamped", 503, "3600", 8 * time.Second, 12 * time.Second},
		{"503 shorter", 503, "1", 4 * time.Second, 6 * time.Second},
		{"500 ignored", 500, "3600", 4 * time.Second, 6 * time.Second},
	}
	ids := make([]int64, len(cases))
	var roots *x509.CertPool
	for i, c := range cases {
		rc := newDlvReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Retry-After", c.value)
			w.WriteHeader(c.status)
		})
		roots = dlvRoots(rc)
		ids[i] = env.hook(rc.url("/hook")).Endpoint.ID
	}
	env.start(env.options(roots))
	env.user("ada")
	for i, c := range cases {
		dl := env.waitDeliveries(ids[i], c.name, attempted(1))[0]
		if wait := dl.NextAttemptAt.Sub(dl.LastAttemptAt); dl.LastStatus != c.status || wait < c.min || wait > c.max {
			t.Errorf("%s: status %d, wait %v; want %d and %v-%v", c.name, dl.LastStatus, wait, c.status, c.min, c.max)
		}
	}
}

// TestDeliveryDisablesEndpointFailingFiveDays: an endpoint whose
// deliveries have failed for five days without a success is disabled; a
// success in between starts the count again.
func TestDeliveryDisablesEndpointFailingFiveDays(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	var succeed atomic.Bool
	rc := newDlvReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		if !succeed.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	hook := env.hook(rc.url("/hook"))
	id := hook.Endpoint.ID
	env.start(env.options(dlvRoots(rc)))
	t0 := clock.Now()
	ctx := context.Background()
	enabled := func() bool {
		ep, err := env.ws.GetWebhook(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ep.Enabled
	}

	env.user("ada") // fails at t0
	env.waitDeliveries(id, "the first failure", attempted(1))
	succeed.Store(true)
	clock.Advance(10 * time.Second) // the retry succeeds: failing no more
	env.waitDeliveries(id, "the success", settled)
	succeed.Store(false)

	clock.Set(t0.Add(4 * 24 * time.Hour))
	env.user("bob") // fails: failing since t0 + 4 days
	env.waitDeliveries(id, "bob's first failure", attempted(1))
	clock.Set(t0.Add(6 * 24 * time.Hour)) // bob's retry fails, 2 days in
	env.waitDeliveries(id, "bob's second failure", attempted(2))
	if !enabled() {
		t.Fatal("disabled although a success came 2 days ago")
	}

	clock.Set(t0.Add(9*24*time.Hour + time.Minute)) // 5 days since bob's first failure
	ds := env.waitDeliveries(id, "bob's delivery to fail", settled)
	if enabled() {
		t.Fatal("still enabled after failing for 5 days")
	}
	bob := ds[1]
	if bob.Status != identity.DeliveryFailed || bob.Attempts != 3 {
		t.Errorf("bob's delivery %+v", bob)
	}
}

// TestDeliveryLogsNoSecrets: each attempt logs one line with its ids,
// status and duration, and never the secret or the body.
func TestDeliveryLogsNoSecrets(t *testing.T) {
	env := newDlvEnv(t, nil)
	rc := newDlvReceiver(t, nil)
	hook := env.hook(rc.url("/hook"))
	var buf bytes.Buffer
	var mu sync.Mutex
	opts := env.options(dlvRoots(rc))
	opts.Logger = slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	d := env.start(opts)
	env.user("ada")
	env.waitDeliveries(hook.Endpoint.ID, "the delivery", settled)
	d.Stop()
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	secretKey := strings.TrimPrefix(hook.Secret, "whsec_")
	if strings.Count(out, "\n") != 1 || strings.Contains(out, secretKey) || strings.Contains(out, "ada@example.com") {
		t.Errorf("log:\n%s", out)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"endpoint", "delivery", "status", "duration", "outcome"} {
		if _, ok := line[k]; !ok {
			t.Errorf("log line lacks %q: %s", k, out)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestDispatcherStopWaitsForAttempts: Stop stops claiming jobs at once,
// lets the attempt in flight finish and records it; the queue depth
// counts it until then.
func TestDispatcherStopWaitsForAttempts(t *testing.T) {
	env := newDlvEnv(t, nil)
	entered, release, abandoned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	rc := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n > 0 {
			return
		}
		close(entered)
		select {
		case <-release:
		case <-r.Context().Done():
			close(abandoned) // the sender gave up on the attempt
		}
	})
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	opts.AttemptTimeout = 10 * time.Minute
	d := env.start(opts)
	env.user("ada")
	<-entered
	ctx := context.Background()
	st, err := d.Stats(ctx)
	if err != nil || st.Pending != 1 || st.InFlight != 1 || st.Attempts != 1 {
		t.Errorf("stats in flight %+v, %v", st, err)
	}
	stopped := make(chan struct{})
	go func() {
		d.Stop()
		close(stopped)
	}()
	// Stop has begun once the loop has ended.
	select {
	case <-delivery.LoopDone(d):
	case <-time.After(dlvWait):
		t.Fatal("Stop did not end the dispatcher's loop")
	}
	// A job queued now is never claimed.
	env.user("bob")
	// Stop now waits for the attempt, which the receiver holds. A Stop
	// that did not wait would return, or cancel the attempt, at once: it
	// gets stopGrace to show it. (On a slow machine such a Stop may not
	// be caught; a correct one is never failed.)
	select {
	case <-stopped:
		t.Fatal("Stop returned while an attempt was in flight")
	case <-abandoned:
		t.Fatal("Stop cancelled the attempt in flight")
	case <-time.After(stopGrace):
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(dlvWait):
		t.Fatal("Stop did not return")
	}
	ds := env.deliveries(hook.Endpoint.ID)
	if len(ds) != 2 || ds[0].Status != identity.DeliverySucceeded || ds[1].Status != identity.DeliveryPending || ds[1].Attempts != 0 {
		t.Errorf("deliveries after Stop: %+v; want ada's succeeded, bob's never attempted", ds)
	}
	if st, _ := d.Stats(ctx); st.Pending != 1 || st.InFlight != 0 || st.Successes != 1 || st.Attempts != 1 {
		t.Errorf("stats after Stop %+v", st)
	}
	if n := rc.count(); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
}

// stopGrace is how long TestDispatcherStopWaitsForAttempts gives a Stop
// that does not wait to return. It bounds nothing that must happen.
const stopGrace = 200 * time.Millisecond

// TestStartRejectsBadOptions: options that cannot work are a
// CodeInvalid error.
func TestStartRejectsBadOptions(t *testing.T) {
	env := newDlvEnv(t, nil)
	for _, o := range []delivery.Options{
		{Workers: -1},
		{AttemptTimeout: time.Minute, LeaseDuration: time.Minute},
		{PollInterval: -time.Second},
		{Retries: []time.Duration{time.Second, -time.Second}},
	} {
		if _, err := delivery.Start(context.Background(), env.svc, &o); !errors.Is(err, identity.ErrInvalid) {
			t.Errorf("Start(%+v): %v, want invalid", o, err)
		}
	}
	d, err := delivery.Start(context.Background(), env.svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Stop()
	d.Stop() // again: no effect
}

// dlvBench is a Service over a bbolt file with one workspace whose 10
// endpoints, all subscribed to user.created, point at one fast loopback
// receiver that counts its requests.
type dlvBench struct {
	svc   *identity.Service
	ws    *identity.Workspace
	roots *x509.CertPool
	ok    atomic.Int64
}

const dlvBenchEndpoints = 10

func newDlvBench(b *testing.B) *dlvBench {
	ctx := context.Background()
	bench := &dlvBench{}
	svc, err := identity.Open(filepath.Join(b.TempDir(), "id.db"), dlvServiceOptions(nil))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	bench.svc = svc
	if bench.ws, err = svc.CreateWorkspace(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		bench.ok.Add(1)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // connections closed at the end
	srv.StartTLS()
	b.Cleanup(srv.Close)
	bench.roots = x509.NewCertPool()
	bench.roots.AddCert(srv.Certificate())
	for i := range dlvBenchEndpoints {
		if _, err := bench.ws.CreateWebhook(ctx, identity.NewWebhook{URL: fmt.Sprintf("%s/hook%d", srv.URL, i), Events: []string{"user.created"}}); err != nil {
			b.Fatal(err)
		}
	}
	return bench
}

func (bench *dlvBench) user(b *testing.B, i int) {
	name := fmt.Sprintf("user%07d", i)
	_, err := bench.ws.CreateUser(context.Background(), identity.NewUser{Username: name, Email: name + "@example.com", FullName: name, Password: "correct horse battery"})
	if err != nil {
		b.Fatal(err)
	}
}

func (bench *dlvBench) start(b *testing.B) *delivery.Dispatcher {
	d, err := delivery.Start(context.Background(), bench.svc, &delivery.Options{RootCAs: bench.roots, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func (bench *dlvBench) waitOK(n int) {
	for bench.ok.Load() < int64(n) {
		time.Sleep(50 * time.Microsecond)
	}
}

// BenchmarkDeliveryThroughput measures events per second from commit to
// 2xx: b.N events are committed, each fanning out to 10 endpoints, then a
// dispatcher with the default options drains them.
//
//	go test -run '^$' -bench DeliveryThroughput -benchtime 2000x .
func BenchmarkDeliveryThroughput(b *testing.B) {
	bench := newDlvBench(b)
	for i := range b.N {
		bench.user(b, i)
	}
	b.ResetTimer()
	start := time.Now()
	d := bench.start(b)
	bench.waitOK(b.N * dlvBenchEndpoints)
	elapsed := time.Since(start)
	b.StopTimer()
	d.Stop()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N*dlvBenchEndpoints)/elapsed.Seconds(), "deliveries/s")
}

// BenchmarkDeliveryLatency measures, one event at a time, the time from
// the commit of an event to the last of its 10 endpoints answering 2xx,
// with a running dispatcher (woken by the commit, not by its poll).
//
//	go test -run '^$' -bench DeliveryLatency -benchtime 300x .
func BenchmarkDeliveryLatency(b *testing.B) {
	bench := newDlvBench(b)
	d := bench.start(b)
	defer d.Stop()
	var total time.Duration
	for i := range b.N {
		bench.user(b, i) // returns once committed
		start := time.Now()
		bench.waitOK((i + 1) * dlvBenchEndpoints)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/event")
}
