package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
	"github.com/identitylib/identity/store/storetest"
)

// benchStore is a Store on a schema of its own that settles after a bulk
// load and counts its retries, for storetest.RunBenchmarks.
type benchStore struct {
	*pgstore.Store
	url string
}

// Settle implements storetest.Settler: it vacuums and analyzes the
// schema's tables, as autovacuum would soon after a bulk load.
func (s benchStore) Settle(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "VACUUM ANALYZE")
	return err
}

// Counters implements storetest.Counter: retries/op counts the attempts
// run again after a serialization failure, alone/op those that ran alone.
func (s benchStore) Counters() map[string]uint64 {
	st := s.Stats()
	return map[string]uint64{"retries": st.Retries, "alone": st.Alone}
}

// BenchmarkStore runs the benchmarks every store runs, each on a schema
// of its own, with a pool of 16 connections, so that the stores compare
// side by side:
//
//	go test -run '^$' -bench Store ./store/pgstore/ -args -storetest.users=1000000
func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, func(b *testing.B) store.Store {
		url := pgtest.URL(b)
		s, err := pgstore.Open(context.Background(), url, &pgstore.Options{MaxConns: 16})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return benchStore{Store: s, url: url}
	})
}
