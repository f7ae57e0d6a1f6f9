package boltstore_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/storetest"
)

// benchStore is a Store that counts the committer's read-write
// transactions, which storetest.RunBenchmarks reports as tx/op: how well
// group commit shares them.
type benchStore struct{ *boltstore.Store }

// Counters implements storetest.Counter.
func (s benchStore) Counters() map[string]uint64 {
	transactions, _ := boltstore.CommitStats(s.Store)
	return map[string]uint64{"tx": uint64(transactions)}
}

// BenchmarkStore runs the benchmarks every store runs, on a fresh file
// each:
//
//	go test -run '^$' -bench Store ./store/boltstore/ -args -storetest.users=1000000
func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, func(b *testing.B) store.Store {
		return benchStore{openStore(b, filepath.Join(b.TempDir(), "db"), nil)}
	})
}

// BenchmarkGroupCommit measures concurrent small Updates, each a durable
// commit unless grouped, with group commit on and off.
func BenchmarkGroupCommit(b *testing.B) {
	for _, tc := range []struct {
		name     string
		maxGroup int
	}{{"grouped", 0}, {"ungrouped", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			s := openStore(b, filepath.Join(b.TempDir(), "db"), &boltstore.Options{MaxGroupSize: tc.maxGroup})
			mustUpdate(b, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: testSlug}) })
			var next atomic.Int64
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := next.Add(1)
					err := s.Update(context.Background(), func(tx store.Tx) error {
						return tx.PutUserAttribute(testSlug, id, "k", strconv.FormatInt(id, 10))
					})
					if err != nil {
						b.Error(err)
					}
				}
			})
			transactions, _ := boltstore.CommitStats(s)
			b.ReportMetric(float64(b.N)/float64(transactions), "calls/tx")
		})
	}
}
