package identity_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// openBoltService opens a Service over a fresh bbolt file on a fake
// clock, with workspace "acme" and webhook endpoint 1 written straight
// into the store.
func openBoltService(b *testing.B) (svc *identity.Service, st *boltstore.Store, path string, now func() time.Time, advance func(time.Duration)) {
	b.Helper()
	path = filepath.Join(b.TempDir(), "identity.db")
	st, err := boltstore.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	clock := newFakeClock()
	svc, err = identity.New(st, &identity.Options{Now: clock.Now, PasswordHashing: &cheapArgon2})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(b.Context(), "acme", nil); err != nil {
		b.Fatal(err)
	}
	err = st.Update(b.Context(), func(tx store.Tx) error {
		return tx.PutWebhook("acme", store.Webhook{ID: 1, URL: "https://hooks.example.com/a", Events: []string{"user.created"}, Enabled: true, CreatedAt: clock.Now()})
	})
	if err != nil {
		b.Fatal(err)
	}
	return svc, st, path, clock.Now, clock.Advance
}

// putSucceeded writes n webhook deliveries that succeeded at at, ids from
// next on, in one transaction, and returns the next id.
func putSucceeded(b *testing.B, st store.Store, next int64, n int, at time.Time) int64 {
	b.Helper()
	payload := make([]byte, 400)
	err := st.Update(b.Context(), func(tx store.Tx) error {
		for i := range int64(n) {
			err := tx.PutDelivery("acme", store.Delivery{
				ID: next + i, Kind: store.JobWebhook, EndpointID: 1, EventID: "msg_x", EventType: "user.created",
				Payload: payload, CreatedAt: at, Status: store.DeliverySucceeded, Attempts: 1, LastAttemptAt: at, LastStatus: 204,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return next + int64(n)
}

// BenchmarkSweep measures a Sweep on bbolt that removes 10,000 succeeded
// webhook deliveries (20 batches of 500), reported per record removed.
func BenchmarkSweep(b *testing.B) {
	svc, st, _, now, _ := openBoltService(b)
	next := int64(1)
	const n = 10000
	old := now().Add(-8 * 24 * time.Hour)
	for b.Loop() {
		b.StopTimer()
		for range n / 1000 {
			next = putSucceeded(b, st, next, 1000, old)
		}
		b.StartTimer()
		res, err := svc.Sweep(b.Context(), now())
		if err != nil || res.Deliveries != n {
			b.Fatalf("Sweep = %+v, %v; want %d deliveries", res, err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}

// BenchmarkSteadyStateFile runs a fake month on bbolt: every fake hour
// 1,000 webhook deliveries succeed and the sweeper runs. It reports the
// file's size after each week: once the first
// week's deliveries are past their 7 days, the file stops growing.
func BenchmarkSteadyStateFile(b *testing.B) {
	for b.Loop() {
		svc, st, path, now, advance := openBoltService(b)
		next := int64(1)
		for hour := 1; hour <= 28*24; hour++ {
			advance(time.Hour)
			next = putSucceeded(b, st, next, 1000, now())
			if _, err := svc.Sweep(b.Context(), now()); err != nil {
				b.Fatal(err)
			}
			if hour%(7*24) == 0 {
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("week %d: %d deliveries written, file %d MiB", hour/(7*24), next-1, fi.Size()>>20)
				b.ReportMetric(float64(fi.Size()>>20), "MiB-week"+string(rune('0'+hour/(7*24))))
			}
		}
	}
}
