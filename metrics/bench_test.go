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
	b.Run("serial", func(b *testing.B) {
		m := metrics.New(nil)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r := benchRequests[i%len(benchRequests)]
			m.RequestDone(r.method, r.route, r.status, 3*time.Millisecond)
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		m := metrics.New(nil)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				r := benchRequests[i%len(benchRequests)]
				m.RequestDone(r.method, r.route, r.status, 3*time.Millisecond)
				i++
			}
		})
	})
}

// BenchmarkTransactionDone measures the observer's cost per store
// transaction, views and updates, committed and failed, in turn.
func BenchmarkTransactionDone(b *testing.B) {
	failed := errors.New("refused")
	kinds := []identity.TxKind{identity.TxView, identity.TxView, identity.TxUpdate, identity.TxView}
	errs := []error{nil, nil, nil, failed}
	b.Run("serial", func(b *testing.B) {
		m := metrics.New(nil)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m.TransactionDone(kinds[i%len(kinds)], 200*time.Microsecond, errs[i%len(errs)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		m := metrics.New(nil)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				m.TransactionDone(kinds[i%len(kinds)], 200*time.Microsecond, errs[i%len(errs)])
				i++
			}
		})
	})
}
