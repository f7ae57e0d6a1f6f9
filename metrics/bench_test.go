package metrics_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/metrics"
)

// benchRequests are the requests the benchmarks report, in turn: a few
// label sets, as a server under load reports, so that a lookup is not
// always of the same child.
var benchRequests = []struct {
	method, route string
	status        int
}{
	{http.MethodGet, "/t/:slug/api/v1/users/:userId", http.StatusOK},
	{http.MethodGet, "/t/:slug/api/v1/users/:userId", http.StatusNotFound},
	{http.MethodPost, "/t/:slug/api/v1/users", http.StatusCreated},
	{http.MethodGet, "", http.StatusNotFound},
}

// BenchmarkRequestDone measures the observer's cost per request of the
// REST API, from one goroutine and from GOMAXPROCS at once.
func BenchmarkRequestDone(b *testing.B) {
	benchObserver(b, func(m *metrics.Metrics, i int) {
		r := benchRequests[i%len(benchRequests)]
		m.RequestDone(r.method, r.route, r.status, 3*time.Millisecond)
	})
}

// BenchmarkTransactionDone measures the observer's cost per store
// transaction, views and updates, committed and failed, in turn.
func BenchmarkTransactionDone(b *testing.B) {
	failed := errors.New("refused")
	kinds := []identity.TxKind{identity.TxView, identity.TxView, identity.TxUpdate, identity.TxView}
	errs := []error{nil, nil, nil, failed}
	benchObserver(b, func(m *metrics.Metrics, i int) {
		m.TransactionDone(kinds[i%len(kinds)], 200*time.Microsecond, errs[i%len(errs)])
	})
}

// benchObserver runs observe(m, i), i counting the calls, on a new
// Metrics from one goroutine (serial) and from GOMAXPROCS at once
// (parallel, i counting per goroutine).
func benchObserver(b *testing.B, observe func(m *metrics.Metrics, i int)) {
	b.Run("serial", func(b *testing.B) {
		m := metrics.New(nil)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			observe(m, i)
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		m := metrics.New(nil)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				observe(m, i)
			}
		})
	})
}
