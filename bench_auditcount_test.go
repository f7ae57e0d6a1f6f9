package identity_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// BenchmarkCountAuditRecords: the dashboard's count of the last 24
// hours' sign-ins, over a bbolt file whose trail holds 1,000,000
// sign_in.succeeded records in that window (one every 86 ms) and 100,000
// sign_in.failed ones, capped at 10,000 (what a dashboard asks) and at
// 1,000,000 (every record of the window), and the failures by outcome:
//
//	go test -run '^$' -bench CountAuditRecords -benchtime 5x -count 2 .
//
// The file is built once per run (about a minute), 50,000 records a
// transaction.
func BenchmarkCountAuditRecords(b *testing.B) {
	const signIns, failures = 1_000_000, 100_000
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "count.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	svc, err := identity.New(st, &identity.Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(ctx, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	day := now.Add(-24 * time.Hour)
	put := func(action identity.AuditAction, outcome identity.AuditOutcome, n, salt int) {
		step := 24 * time.Hour / time.Duration(n)
		for from := 0; from < n; from += 50_000 {
			err := st.Update(ctx, func(tx store.Tx) error {
				for i := from; i < min(from+50_000, n); i++ {
					at := day.Add(time.Duration(i) * step)
					rec := store.AuditRecord{
						ID: fmt.Sprintf("%016x%016x", at.UnixMicro(), salt+i), Time: at, ActorKind: "user", ActorID: fmt.Sprint(i%100_000 + 1),
						ActorDisplay: fmt.Sprintf("user%d", i%100_000+1), Action: string(action), TargetKind: identity.TargetUser,
						TargetID: fmt.Sprint(i%100_000 + 1), TargetDisplay: fmt.Sprintf("user%d", i%100_000+1), Outcome: string(outcome),
						Address: "203.0.113.7", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
					}
					if err := tx.PutAuditRecord("bench", rec); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	put(identity.AuditSignInSucceeded, identity.OutcomeSuccess, signIns, 0)
	put(identity.AuditSignInFailed, identity.OutcomeFailure, failures, signIns) // ids apart from the sign-ins'
	for _, c := range []struct {
		name   string
		filter identity.AuditFilter
		max    int
		want   identity.AuditCount
	}{
		{"sign_in.succeeded/max=10000", identity.AuditFilter{Action: "sign_in.succeeded", Since: day}, 10_000, identity.AuditCount{Count: 10_000, Capped: true}},
		{"sign_in.succeeded/max=1000000", identity.AuditFilter{Action: "sign_in.succeeded", Since: day}, identity.MaxAuditCount, identity.AuditCount{Count: signIns}},
		{"outcome=failure/max=10000", identity.AuditFilter{Outcome: identity.OutcomeFailure, Since: day}, 10_000, identity.AuditCount{Count: 10_000, Capped: true}},
		{"outcome=failure/max=1000000", identity.AuditFilter{Outcome: identity.OutcomeFailure, Since: day}, identity.MaxAuditCount, identity.AuditCount{Count: failures}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuTime(b)
			for b.Loop() {
				got, err := ws.CountAuditRecords(ctx, &c.filter, c.max)
				if err != nil || got != c.want {
					b.Fatalf("CountAuditRecords = %+v, %v; want %+v", got, err, c.want)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
