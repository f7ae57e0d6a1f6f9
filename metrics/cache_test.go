package metrics_test

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/metrics"
)

// Routes of the REST API, as httpapi reports them.
const (
	usersRoute = "/t/:slug/api/v1/users"
	userRoute  = "/t/:slug/api/v1/users/:userId"
)

// requestSet is one label set of identity_http_requests_total, reported
// n times with duration d. The durations are powers of two of a second,
// so that their sums are exact.
type requestSet struct {
	method, route string
	status        int
	d             time.Duration
	n             int
}

// interleavedSets share methods, routes and statuses two by two, so that
// a cache that mixed up any part of the key would count under another's
// labels.
var interleavedSets = []requestSet{
	{http.MethodGet, userRoute, http.StatusOK, 500 * time.Millisecond, 5},
	{http.MethodGet, userRoute, http.StatusNotFound, 250 * time.Millisecond, 3},
	{http.MethodPost, usersRoute, http.StatusCreated, 125 * time.Millisecond, 2},
	{http.MethodGet, usersRoute, http.StatusOK, 62500 * time.Microsecond, 4},
	{http.MethodDelete, userRoute, http.StatusOK, 31250 * time.Microsecond, 1},
	{"BREW", "", http.StatusMethodNotAllowed, 15625 * time.Microsecond, 4},
	{"PROPFIND", "", http.StatusMethodNotAllowed, 15625 * time.Microsecond, 2},
	{http.MethodGet, "", http.StatusNotFound, 7812500 * time.Nanosecond, 6},
}

// reportInterleaved reports every set of sets n times, round-robin: one
// request of each set that has some left, then again.
func reportInterleaved(m *metrics.Metrics, sets []requestSet) {
	left := make([]int, len(sets))
	for i, s := range sets {
		left[i] = s.n
	}
	for more := true; more; {
		more = false
		for i, s := range sets {
			if left[i] > 0 {
				m.RequestDone(s.method, s.route, s.status, s.d)
				left[i]--
				more = true
			}
		}
	}
}

// TestRequestChildrenInterleaved: label sets that differ in only the
// method, the route or the status, reported in turn, each once to fill
// the cache and then from it, are each counted under their own labels,
// their durations in their own method and route's histogram.
func TestRequestChildrenInterleaved(t *testing.T) {
	m := metrics.New(nil)
	reportInterleaved(m, interleavedSets)
	reportInterleaved(m, interleavedSets) // from the cache, every one
	user := `route="/t/:slug/api/v1/users/:userId"`
	users := `route="/t/:slug/api/v1/users"`
	want(t, scrape(t, m.Handler()), map[string]float64{
		`identity_http_requests_total{method="GET",` + user + `,status="200"}`:        10,
		`identity_http_requests_total{method="GET",` + user + `,status="404"}`:        6,
		`identity_http_requests_total{method="POST",` + users + `,status="201"}`:      4,
		`identity_http_requests_total{method="GET",` + users + `,status="200"}`:       8,
		`identity_http_requests_total{method="DELETE",` + user + `,status="200"}`:     2,
		`identity_http_requests_total{method="other",route="unmatched",status="405"}`: 12, // BREW and PROPFIND
		`identity_http_requests_total{method="GET",route="unmatched",status="404"}`:   12,

		`identity_http_request_duration_seconds_count{method="GET",` + user + `}`:                  16,
		`identity_http_request_duration_seconds_sum{method="GET",` + user + `}`:                    6.5, // 10 × 0.5 + 6 × 0.25
		`identity_http_request_duration_seconds_bucket{le="0.25",method="GET",` + user + `}`:       6,
		`identity_http_request_duration_seconds_bucket{le="0.5",method="GET",` + user + `}`:        16,
		`identity_http_request_duration_seconds_count{method="POST",` + users + `}`:                4,
		`identity_http_request_duration_seconds_sum{method="POST",` + users + `}`:                  0.5,
		`identity_http_request_duration_seconds_count{method="GET",` + users + `}`:                 8,
		`identity_http_request_duration_seconds_sum{method="GET",` + users + `}`:                   0.5,
		`identity_http_request_duration_seconds_count{method="DELETE",` + user + `}`:               2,
		`identity_http_request_duration_seconds_sum{method="DELETE",` + user + `}`:                 0.0625,
		`identity_http_request_duration_seconds_count{method="other",route="unmatched"}`:           12,
		`identity_http_request_duration_seconds_sum{method="other",route="unmatched"}`:             0.1875,
		`identity_http_request_duration_seconds_count{method="GET",route="unmatched"}`:             12,
		`identity_http_request_duration_seconds_sum{method="GET",route="unmatched"}`:               0.09375,
		`identity_http_request_duration_seconds_bucket{le="0.005",method="GET",route="unmatched"}`: 0,
		`identity_http_request_duration_seconds_bucket{le="0.01",method="GET",route="unmatched"}`:  12,
	})
}

// TestRequestOddStatuses: statuses outside 100-599, which are not cached,
// are counted all the same, each under its own label, and beside the
// cached ones of the same method and route.
func TestRequestOddStatuses(t *testing.T) {
	m := metrics.New(nil)
	for range 2 {
		m.RequestDone(http.MethodGet, "healthz", 42, 500*time.Millisecond)
		m.RequestDone(http.MethodGet, "healthz", 200, 500*time.Millisecond)
		m.RequestDone(http.MethodGet, "healthz", 999, 500*time.Millisecond)
		m.RequestDone(http.MethodGet, "healthz", 99, 500*time.Millisecond)
		m.RequestDone(http.MethodGet, "healthz", 600, 500*time.Millisecond)
	}
	want(t, scrape(t, m.Handler()), map[string]float64{
		`identity_http_requests_total{method="GET",route="healthz",status="42"}`:     2,
		`identity_http_requests_total{method="GET",route="healthz",status="99"}`:     2,
		`identity_http_requests_total{method="GET",route="healthz",status="200"}`:    2,
		`identity_http_requests_total{method="GET",route="healthz",status="600"}`:    2,
		`identity_http_requests_total{method="GET",route="healthz",status="999"}`:    2,
		`identity_http_request_duration_seconds_count{method="GET",route="healthz"}`: 10,
		`identity_http_request_duration_seconds_sum{method="GET",route="healthz"}`:   5,
	})
}

// TestTransactionKinds: the known kinds and results are counted apart,
// interleaved, and a kind Metrics does not know is counted under its own
// label through the vector.
func TestTransactionKinds(t *testing.T) {
	m := metrics.New(nil)
	failed := errors.New("refused")
	for range 3 {
		m.TransactionDone(identity.TxView, 500*time.Millisecond, nil)
		m.TransactionDone("bulk", 250*time.Millisecond, nil)
		m.TransactionDone(identity.TxUpdate, 125*time.Millisecond, failed)
		m.TransactionDone(identity.TxView, 62500*time.Microsecond, failed)
		m.TransactionDone("bulk", 31250*time.Microsecond, failed)
		m.TransactionDone(identity.TxView, 500*time.Millisecond, nil)
	}
	m.TransactionDone(identity.TxUpdate, 15625*time.Microsecond, nil)
	want(t, scrape(t, m.Handler()), map[string]float64{
		`identity_store_transaction_duration_seconds_count{kind="view",result="ok"}`:            6,
		`identity_store_transaction_duration_seconds_sum{kind="view",result="ok"}`:              3,
		`identity_store_transaction_duration_seconds_count{kind="view",result="error"}`:         3,
		`identity_store_transaction_duration_seconds_sum{kind="view",result="error"}`:           0.1875,
		`identity_store_transaction_duration_seconds_count{kind="update",result="ok"}`:          1,
		`identity_store_transaction_duration_seconds_sum{kind="update",result="ok"}`:            0.015625,
		`identity_store_transaction_duration_seconds_count{kind="update",result="error"}`:       3,
		`identity_store_transaction_duration_seconds_sum{kind="update",result="error"}`:         0.375,
		`identity_store_transaction_duration_seconds_count{kind="bulk",result="ok"}`:            3,
		`identity_store_transaction_duration_seconds_sum{kind="bulk",result="ok"}`:              0.75,
		`identity_store_transaction_duration_seconds_count{kind="bulk",result="error"}`:         3,
		`identity_store_transaction_duration_seconds_sum{kind="bulk",result="error"}`:           0.09375,
		`identity_store_transaction_duration_seconds_bucket{kind="view",le="0.25",result="ok"}`: 0,
		`identity_store_transaction_duration_seconds_bucket{kind="view",le="0.5",result="ok"}`:  6,
	})
}

// TestObserversDoNotAllocate: once a label set is cached, reporting it
// allocates nothing; nor does a transaction of a known kind.
func TestObserversDoNotAllocate(t *testing.T) {
	m := metrics.New(nil)
	m.RequestDone(http.MethodGet, userRoute, http.StatusOK, time.Millisecond) // fills the cache
	if n := testing.AllocsPerRun(100, func() {
		m.RequestDone(http.MethodGet, userRoute, http.StatusOK, time.Millisecond)
	}); n != 0 {
		t.Errorf("RequestDone from the cache: %v allocations, want 0", n)
	}
	failed := errors.New("refused")
	if n := testing.AllocsPerRun(100, func() {
		m.TransactionDone(identity.TxView, time.Millisecond, nil)
		m.TransactionDone(identity.TxUpdate, time.Millisecond, failed)
	}); n != 0 {
		t.Errorf("TransactionDone: %v allocations, want 0", n)
	}
}

// TestConcurrentObservers: goroutines that report the same label sets at
// once, from the first (when they race to fill the cache), while others
// scrape, lose no count. Run it with -race.
func TestConcurrentObservers(t *testing.T) {
	m := metrics.New(nil)
	const goroutines, rounds = 8, 25
	sets := []requestSet{ // n is per round
		{http.MethodGet, userRoute, http.StatusOK, 500 * time.Millisecond, 2},
		{http.MethodGet, userRoute, http.StatusNotFound, 250 * time.Millisecond, 1},
		{http.MethodPost, usersRoute, http.StatusCreated, 125 * time.Millisecond, 1},
		{"BREW", "", http.StatusMethodNotAllowed, 62500 * time.Microsecond, 1},
		{http.MethodGet, "oidc", 700, 500 * time.Millisecond, 1}, // never cached
	}
	failed := errors.New("refused")
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			<-start
			for range rounds {
				reportInterleaved(m, sets)
				m.TransactionDone(identity.TxView, 500*time.Millisecond, nil)
				m.TransactionDone(identity.TxUpdate, 250*time.Millisecond, failed)
				m.TransactionDone("bulk", 125*time.Millisecond, nil)
			}
		})
	}
	stop := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			var buf bytes.Buffer
			if err := m.WriteText(&buf); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	close(start)
	wg.Wait()
	close(stop)
	<-scraped

	user := `route="/t/:slug/api/v1/users/:userId"`
	want(t, scrape(t, m.Handler()), map[string]float64{ // 8 goroutines × 25 rounds × n
		`identity_http_requests_total{method="GET",` + user + `,status="200"}`:                      400,
		`identity_http_requests_total{method="GET",` + user + `,status="404"}`:                      200,
		`identity_http_requests_total{method="POST",route="/t/:slug/api/v1/users",status="201"}`:    200,
		`identity_http_requests_total{method="other",route="unmatched",status="405"}`:               200,
		`identity_http_requests_total{method="GET",route="oidc",status="700"}`:                      200,
		`identity_http_request_duration_seconds_count{method="GET",` + user + `}`:                   600,
		`identity_http_request_duration_seconds_sum{method="GET",` + user + `}`:                     250,
		`identity_http_request_duration_seconds_count{method="POST",route="/t/:slug/api/v1/users"}`: 200,
		`identity_http_request_duration_seconds_count{method="other",route="unmatched"}`:            200,
		`identity_http_request_duration_seconds_count{method="GET",route="oidc"}`:                   200,
		`identity_store_transaction_duration_seconds_count{kind="view",result="ok"}`:                200,
		`identity_store_transaction_duration_seconds_sum{kind="view",result="ok"}`:                  100,
		`identity_store_transaction_duration_seconds_count{kind="update",result="error"}`:           200,
		`identity_store_transaction_duration_seconds_count{kind="update",result="ok"}`:              0,
		`identity_store_transaction_duration_seconds_count{kind="bulk",result="ok"}`:                200,
	})
}
