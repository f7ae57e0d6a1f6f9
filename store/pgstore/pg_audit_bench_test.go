package pgstore_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// auditRecords is the size of the trail of BenchmarkPGAudit.
var auditRecords = flag.Int("pgaudit.records", 1000000, "records of the trail of BenchmarkPGAudit")

// BenchmarkPGAudit appends to and reads a workspace's audit trail of
// *auditRecords records (1,000,000 by default; see auditFillSQL for who
// did what), at the level of the store:
//
//	go test -run '^$' -bench PGAudit -benchtime 2s ./store/pgstore/
//
// Append is an Update that writes one record and nothing else (the
// record of a refused sign-in), Append100 one that writes 100 (deferred
// to its COMMIT: the server's work for a record, without a WAL flush
// each); Write is an Update that reads the
// workspace and writes an asset, without a record and with one, which
// goes with the COMMIT: the difference is what the trail adds to a
// change. AppendParallel appends from 8 goroutines of one Store and
// reports the retries. Page reads a page of 21 records (the identity
// package's default page and one more) by each filter, in a View.
// Sweep removes the oldest 500 records (one batch of a retention sweep)
// of those written before the benchmark.
func BenchmarkPGAudit(b *testing.B) {
	ctx := context.Background()
	url := pgtest.URL(b)
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if err := s.Update(ctx, func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{Slug: "bench", CreatedAt: t0})
	}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	fillAudit(b, conn, map[string]int{"bench": *auditRecords})
	conn.Close(ctx)
	if err := settle(ctx, url); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d records written and settled in %v", *auditRecords, time.Since(start).Round(time.Millisecond))

	var next atomic.Int64
	next.Store(int64(*auditRecords))
	record := func() store.AuditRecord {
		n := int(next.Add(1))
		return store.AuditRecord{
			ID: auditID(n), Time: time.Now(), ActorKind: "api_key", ActorID: "k3Jd8aQ2", ActorDisplay: "provisioning",
			Action: "user.updated", TargetKind: "user", TargetID: strconv.Itoa(n % 10000),
			TargetDisplay: fmt.Sprintf("user%d", n%10000), Outcome: "success", Address: "192.0.2.10",
			UserAgent: "provisioner/1.4 (+https://example.com)", RequestID: "01HZX3D6W5Q2V7N8",
			Changes: []byte(`{"email":{"before":"old@example.com","after":"new@example.com"}}`),
		}
	}
	update := func(b *testing.B, fn func(tx store.Tx) error) {
		if err := s.Update(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
	logo := store.Asset{Name: "logo", ContentType: "image/png", Data: []byte("\x89PNG"), UpdatedAt: t0}

	b.Run("Append", func(b *testing.B) {
		for b.Loop() {
			update(b, func(tx store.Tx) error { return tx.PutAuditRecord("bench", record()) })
		}
	})
	b.Run("Append100", func(b *testing.B) {
		for b.Loop() {
			recs := make([]store.AuditRecord, 100)
			for i := range recs {
				recs[i] = record()
			}
			update(b, func(tx store.Tx) error {
				if _, err := tx.Workspace("bench"); err != nil {
					return err
				}
				for _, r := range recs {
					if err := tx.PutAuditRecord("bench", r); err != nil {
						return err
					}
				}
				return nil
			})
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(100*b.N), "µs/record")
	})
	for _, audited := range []bool{false, true} {
		b.Run(fmt.Sprintf("Write/audited=%t", audited), func(b *testing.B) {
			for b.Loop() {
				r := record()
				update(b, func(tx store.Tx) error {
					if _, err := tx.Workspace("bench"); err != nil {
						return err
					}
					if err := tx.PutAsset("bench", logo); err != nil || !audited {
						return err
					}
					return tx.PutAuditRecord("bench", r)
				})
			}
		})
	}
	b.Run("AppendParallel", func(b *testing.B) {
		before := s.Stats()
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r := record()
				if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutAuditRecord("bench", r) }); err != nil {
					b.Error(err)
					return
				}
			}
		})
		after := s.Stats()
		b.ReportMetric(float64(after.Retries-before.Retries)/float64(b.N), "retries/op")
	})

	mid, filled := auditID(*auditRecords/2), auditID(*auditRecords+1)
	for _, c := range []struct {
		name string
		q    store.AuditQuery
	}{
		{"newest", store.AuditQuery{}},
		{"middle", store.AuditQuery{Before: mid}},
		{"actor", store.AuditQuery{ActorKind: "user", ActorID: "42"}},
		{"actor,middle", store.AuditQuery{ActorKind: "user", ActorID: "42", Before: mid}},
		{"target", store.AuditQuery{TargetKind: "user", TargetID: "42"}},
		{"action", store.AuditQuery{Actions: []string{"action.3"}}},
		{"rare action", store.AuditQuery{Actions: []string{"rare"}}},
		{"12 actions", store.AuditQuery{Actions: []string{"action.0", "action.1", "action.2", "action.3", "action.4",
			"action.5", "action.6", "action.7", "action.8", "action.9", "action.10", "action.11"}}},
		{"outcome", store.AuditQuery{Outcome: "failure"}},
		{"outcome,oldest", store.AuditQuery{Outcome: "failure", Ascending: true}},
	} {
		c.q.Limit = 21
		b.Run("Page/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if err := s.View(ctx, func(tx store.Tx) error {
					recs, err := tx.AuditRecords("bench", c.q)
					if err == nil && len(recs) == 0 {
						err = fmt.Errorf("%s: no records", c.name)
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}

	b.Run("Sweep", func(b *testing.B) {
		for b.Loop() {
			var n int
			update(b, func(tx store.Tx) (err error) { n, err = tx.DeleteAuditRecords("bench", filled, 500); return err })
			if n != 500 {
				b.Fatalf("DeleteAuditRecords removed %d, want 500", n)
			}
		}
	})
}
