package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// The tests in this file run two identityd processes on one PostgreSQL
// database, as a deployment behind a load balancer does, and check that
// the rules and the webhook queue hold across processes. They need a
// server (see package pgtest): they skip without one, and fail without
// one when CI=true. -short skips them too, except with CI=true (see
// skipShort).

// pgDB returns the URL of a fresh PostgreSQL schema with the workspace
// acme and a key carrying every scope.
func pgDB(t *testing.T) (url, key string) {
	t.Helper()
	skipShort(t)
	url = pgtest.URL(t)
	mustRun(t, "-db", url, "workspace", "create", "acme")
	out := mustRun(t, "-db", url, "key", "create", "-workspace", "acme", "-scopes", allScopes())
	return url, strings.TrimSpace(out.stdout)
}

// hookReceiver is an HTTPS webhook receiver on loopback whose certificate
// the identityd processes trust through SSL_CERT_FILE. hold, when set,
// decides per request whether to keep it open until the client goes away.
type hookReceiver struct {
	srv      *httptest.Server
	certFile string

	mu   sync.Mutex
	hold func(n int) bool
	reqs []received
	got  chan received
}

func newHookReceiver(t *testing.T, hold func(n int) bool) *hookReceiver {
	t.Helper()
	h := &hookReceiver{hold: hold, got: make(chan received, 1024)}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := received{header: r.Header.Clone(), body: body}
		h.mu.Lock()
		h.reqs = append(h.reqs, rec)
		n := len(h.reqs)
		h.mu.Unlock()
		h.got <- rec
		if h.hold != nil && h.hold(n) {
			<-r.Context().Done() // until the sender goes away
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	h.certFile = filepath.Join(t.TempDir(), "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	if err := os.WriteFile(h.certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// env is the environment of an identityd process that trusts the receiver.
func (h *hookReceiver) env() []string { return []string{"SSL_CERT_FILE=" + h.certFile} }

// next returns the next request the receiver got, failing after timeout.
func (h *hookReceiver) next(t *testing.T, timeout time.Duration, logs ...*process) received {
	t.Helper()
	select {
	case r := <-h.got:
		return r
	case <-time.After(timeout):
		var b strings.Builder
		for i, p := range logs {
			fmt.Fprintf(&b, "\nlog of process %d:\n%s", i+1, p.log)
		}
		t.Fatalf("no webhook request within %v%s", timeout, b.String())
		return received{}
	}
}

// subscribe creates an endpoint of the receiver for user.created through
// p and returns its id.
func subscribe(t *testing.T, p *process, key, url string) int64 {
	t.Helper()
	status, body := call(t, http.MethodPost, p.base+"/t/acme/api/v1/webhooks", key, map[string]any{
		"url": url, "events": []string{"user.created"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", status, body)
	}
	var created struct{ Endpoint struct{ ID int64 } }
	if err := json.Unmarshal(body, &created); err != nil || created.Endpoint.ID <= 0 {
		t.Fatalf("create webhook: body %s (%v)", body, err)
	}
	return created.Endpoint.ID
}

// fanOut sends n requests at once, the i-th through procs[i%len(procs)],
// and returns the statuses in request order.
func fanOut(t *testing.T, procs []*process, n int, req func(i int, p *process) (int, []byte, error)) []int {
	t.Helper()
	statuses := make([]int, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			statuses[i], _, errs[i] = req(i, procs[i%len(procs)])
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return statuses
}

// count returns how many of statuses equal status.
func count(statuses []int, status int) int {
	n := 0
	for _, s := range statuses {
		if s == status {
			n++
		}
	}
	return n
}

func TestPostgresTwoProcesses(t *testing.T) {
	url, key := pgDB(t)
	recv := newHookReceiver(t, nil)
	a := startServeWith(t, url, recv.env(), "-allow-private-webhooks", "-access-log=false")
	b := startServeWith(t, url, recv.env(), "-allow-private-webhooks", "-access-log=false")
	procs := []*process{a, b}
	endpoint := subscribe(t, a, key, recv.srv.URL+"/hook")
	created := 0 // users created so far, each a user.created event

	t.Run("ReadsSeeWritesOfTheOtherProcess", func(t *testing.T) {
		for i, pair := range [][2]*process{{a, b}, {b, a}} {
			id := createUser(t, pair[0].base, key, fmt.Sprintf("seen%d", i))
			created++
			status, body := call(t, http.MethodGet, userURL(pair[1].base, id), key, nil)
			if status != http.StatusOK || !strings.Contains(string(body), fmt.Sprintf(`"username":"seen%d"`, i)) {
				t.Errorf("GET user %d through the other process: %d %s", id, status, body)
			}
		}
	})

	t.Run("OneUsernameOnce", func(t *testing.T) {
		const n = 16
		statuses := fanOut(t, procs, n, func(i int, p *process) (int, []byte, error) {
			return send(http.MethodPost, p.base+"/t/acme/api/v1/users", key, newUser("contested"))
		})
		created += count(statuses, http.StatusCreated)
		if count(statuses, http.StatusCreated) != 1 || count(statuses, http.StatusConflict) != n-1 {
			t.Errorf("statuses %v: want one 201 and %d 409", statuses, n-1)
		}
		status, body := call(t, http.MethodGet, b.base+"/t/acme/api/v1/users?search=contested", key, nil)
		var list struct{ Meta struct{ Total int } }
		if err := json.Unmarshal(body, &list); err != nil || status != http.StatusOK || list.Meta.Total != 1 {
			t.Errorf("search after the race: %d %s", status, body)
		}
	})

	t.Run("TwentyMappers", func(t *testing.T) {
		// 19 exist; then 12 different ones race for the last place.
		for i := range identity.MaxClaimMappers - 1 {
			status, body := call(t, http.MethodPut, fmt.Sprintf("%s/t/acme/api/v1/claim-mappers/pre%02d", a.base, i), key,
				map[string]any{"claimName": fmt.Sprintf("pre%02d", i)})
			if status != http.StatusNoContent {
				t.Fatalf("PUT mapper %d: %d %s", i, status, body)
			}
		}
		const n = 12
		statuses := fanOut(t, procs, n, func(i int, p *process) (int, []byte, error) {
			return send(http.MethodPut, fmt.Sprintf("%s/t/acme/api/v1/claim-mappers/last%02d", p.base, i), key,
				map[string]any{"claimName": fmt.Sprintf("last%02d", i)})
		})
		if count(statuses, http.StatusNoContent) != 1 || count(statuses, http.StatusConflict) != n-1 {
			t.Errorf("statuses %v: want one 204 and %d 409", statuses, n-1)
		}
		for _, p := range procs {
			status, body := call(t, http.MethodGet, p.base+"/t/acme/api/v1/claim-mappers", key, nil)
			var list struct{ Mappers []json.RawMessage }
			if err := json.Unmarshal(body, &list); err != nil || status != http.StatusOK || len(list.Mappers) != identity.MaxClaimMappers {
				t.Errorf("mappers after the race: %d, %d mappers (%v)", status, len(list.Mappers), err)
			}
		}
	})

	t.Run("EachEventDeliveredOnce", func(t *testing.T) {
		// More events, produced through both processes at once.
		const n = 24
		statuses := fanOut(t, procs, n, func(i int, p *process) (int, []byte, error) {
			return send(http.MethodPost, p.base+"/t/acme/api/v1/users", key, newUser(fmt.Sprintf("evt%02d", i)))
		})
		if got := count(statuses, http.StatusCreated); got != n {
			t.Fatalf("statuses %v: want %d 201", statuses, n)
		}
		created += n
		// Every event arrives; duplicates are looked for once the run is
		// over (below).
		seen := map[string]bool{}
		for len(seen) < created {
			r := recv.next(t, procWait, a, b)
			seen[r.header.Get("webhook-id")] = true
		}
		// Which dispatcher sent what varies; the log shows the split.
		for i, p := range procs {
			t.Logf("process %d made %d attempts", i+1, strings.Count(p.log.String(), `msg="webhook attempt"`))
		}
	})

	// The receiver has watched the whole run. Once both processes have
	// stopped, nothing more can come: then no event may have been sent
	// more often than its delivery recorded attempts. A send by a second
	// dispatcher while the first held the lease is a request whose result
	// was dropped, so it would show as one request too many. (Normally each
	// event is sent once; a retry after an attempt that failed, as a loaded
	// machine may cause, is recorded and allowed.)
	for _, p := range procs {
		p.signal(t, syscall.SIGTERM)
	}
	for i, p := range procs {
		if code := p.wait(t, procWait); code != exitOK {
			t.Errorf("process %d: exit %d after SIGTERM", i+1, code)
		}
	}
	requests := map[string]int{}
	recv.mu.Lock()
	for _, r := range recv.reqs {
		requests[r.header.Get("webhook-id")]++
	}
	recv.mu.Unlock()
	ds := deliveriesOf(t, url, endpoint)
	if len(ds) != created || len(requests) != created {
		t.Errorf("%d deliveries, %d events received; want %d", len(ds), len(requests), created)
	}
	for _, d := range ds {
		if n := requests[d.EventID]; d.Status != identity.DeliverySucceeded || n == 0 || n > d.Attempts {
			t.Errorf("delivery %+v: the receiver got %d requests; want it succeeded, with at most one request per attempt", d, n)
		} else if n > 1 {
			t.Logf("event %s sent %d times, in %d recorded attempts", d.EventID, n, d.Attempts)
		}
	}
}

// deliveriesOf returns the deliveries of the endpoint of acme in the
// database at url.
func deliveriesOf(t *testing.T, url string, endpoint int64) []identity.Delivery {
	t.Helper()
	var ds []identity.Delivery
	inAcme(t, url, func(ctx context.Context, ws *identity.Workspace) {
		var err error
		if ds, err = allDeliveries(ctx, ws, endpoint); err != nil {
			t.Fatal(err)
		}
	})
	return ds
}

// TestPostgresLeaseTakeover kills the process that is in the middle of
// an attempt: the other process sends the delivery once its lease ends,
// and the attempt that died is never recorded.
func TestPostgresLeaseTakeover(t *testing.T) {
	url, key := pgDB(t)
	recv := newHookReceiver(t, func(n int) bool { return n == 1 }) // the first attempt hangs
	// An attempt may take 2 s, so a lease lasts 4 s.
	flags := []string{"-allow-private-webhooks", "-access-log=false", "-attempt-timeout", "2s"}
	a := startServeWith(t, url, recv.env(), flags...)
	endpoint := subscribe(t, a, key, recv.srv.URL+"/hook")
	createUser(t, a.base, key, "ada")
	first := recv.next(t, procWait, a)

	// Only a had a dispatcher when the attempt began, so it holds the
	// lease. b starts, a dies mid-attempt.
	b := startServeWith(t, url, recv.env(), flags...)
	a.signal(t, syscall.SIGKILL)
	a.wait(t, procWait)
	second := recv.next(t, procWait, b)
	if first.header.Get("webhook-id") != second.header.Get("webhook-id") || string(first.body) != string(second.body) {
		t.Errorf("the retry is another message: %q then %q", first.header.Get("webhook-id"), second.header.Get("webhook-id"))
	}

	// b's attempt succeeds. (On a loaded machine it may time out first,
	// and be retried: every attempt of b's is recorded.) The attempt that
	// died never is, so the receiver got one request more than the
	// delivery records attempts.
	deadline := time.Now().Add(procWait)
	for {
		ds := deliveriesOf(t, url, endpoint)
		if len(ds) == 1 && ds[0].Status == identity.DeliverySucceeded {
			recv.mu.Lock()
			n := len(recv.reqs)
			recv.mu.Unlock()
			if ds[0].Attempts != n-1 {
				t.Errorf("attempts = %d after %d requests, want %d (the killed attempt never reported)", ds[0].Attempts, n, n-1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v; want one succeeded; log of b:\n%s", ds, b.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
