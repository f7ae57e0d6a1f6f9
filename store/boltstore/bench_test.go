package boltstore_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// benchUsers is the number of users BenchmarkReads populates; raise it with
// go test -bench Reads -args -boltstore.users=1000000
var benchUsers = flag.Int("boltstore.users", 100_000, "users in the BenchmarkReads store")

var firstNames = []string{"Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy"}

// benchUser returns the i-th user of the benchmark population, ids from 1.
func benchUser(i int) store.User {
	return store.User{
		ID:           int64(i),
		Username:     fmt.Sprintf("user%07d", i),
		Email:        fmt.Sprintf("user%07d@example.com", i),
		FullName:     fmt.Sprintf("%s Number%d", firstNames[i%len(firstNames)], i),
		Enabled:      true,
		PasswordHash: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo",
		CreatedAt:    testTime,
		UpdatedAt:    testTime,
	}
}

// populate opens a store holding n benchmark users, written in
// transactions of 50,000.
func populate(b *testing.B, n int) *boltstore.Store {
	b.Helper()
	s := newStore(b)
	const perTx = 50_000
	for first := 1; first <= n; first += perTx {
		mustUpdate(b, s, func(tx store.Tx) error {
			for i := first; i < first+perTx && i <= n; i++ {
				if err := tx.PutUser(testSlug, benchUser(i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return s
}

// BenchmarkReads measures one read per View on a store of -boltstore.users
// users, View overhead included.
func BenchmarkReads(b *testing.B) {
	n := *benchUsers
	s := populate(b, n)
	ctx := context.Background()
	run := func(name string, fn func(tx store.Tx, i int) error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := s.View(ctx, func(tx store.Tx) error { return fn(tx, i) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("User", func(tx store.Tx, i int) error {
		_, err := tx.User(testSlug, int64(1+i*7919%n))
		return err
	})
	b.Run("UserInOneView", func(b *testing.B) {
		// The raw cost of a lookup, without beginning a transaction each time.
		b.ReportAllocs()
		err := s.View(ctx, func(tx store.Tx) error {
			i := 0
			for b.Loop() {
				i++
				if _, err := tx.User(testSlug, int64(1+i*7919%n)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
	run("UserIDByUsername", func(tx store.Tx, i int) error {
		_, err := tx.UserIDByUsername(testSlug, benchUser(1+i*7919%n).Username)
		return err
	})
	users := func(q store.UserQuery) func(tx store.Tx, i int) error {
		return func(tx store.Tx, i int) error {
			_, _, err := tx.Users(testSlug, q)
			return err
		}
	}
	run("Users/FirstPage50", users(store.UserQuery{Limit: 50}))
	run("Users/Offset90pct50", users(store.UserQuery{Offset: n * 9 / 10, Limit: 50}))
	run("Users/TotalOnly", users(store.UserQuery{Limit: 0}))
	// "user00012" matches 100 usernames and the same 100 emails.
	run("Users/Prefix100Matches", users(store.UserQuery{Prefix: "user00012", Limit: 50}))
	// "alice" matches a tenth of the full names.
	run("Users/Prefix10pctMatches", users(store.UserQuery{Prefix: "alice", Limit: 50}))
	run("Users/PrefixNoMatch", users(store.UserQuery{Prefix: "zz", Limit: 50}))
}

// BenchmarkUpdateParallel measures concurrent small Updates, each a durable
// commit unless grouped, with group commit on and off.
func BenchmarkUpdateParallel(b *testing.B) {
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

// benchDeliveries is the number of pending deliveries BenchmarkDeliveries
// queues, of which benchDue are due.
const benchDeliveries, benchDue = 100_000, 100

// benchDelivery returns the i-th delivery of the benchmark queue, ids from
// 1: the first benchDue are due at testTime, the others an hour later and
// on.
func benchDelivery(i int) store.Delivery {
	due := testTime
	if i > benchDue {
		due = testTime.Add(time.Hour + time.Duration(i)*time.Second)
	}
	return store.Delivery{
		ID: int64(i), Kind: store.JobWebhook, EndpointID: 1, EventID: fmt.Sprintf("msg_%022d", i), EventType: "user.created",
		Payload:   []byte(fmt.Sprintf(`{"type":"user.created","timestamp":"2024-05-06T07:08:09Z","data":{"id":%d}}`, i)),
		CreatedAt: testTime, Status: store.DeliveryPending, NextAttemptAt: due,
	}
}

// populateDeliveries opens a store with one endpoint and the benchmark
// queue, written in transactions of 50,000.
func populateDeliveries(b *testing.B) *boltstore.Store {
	b.Helper()
	s := newStore(b)
	mustUpdate(b, s, func(tx store.Tx) error {
		return tx.PutWebhook(testSlug, store.Webhook{ID: 1, URL: "https://example.com/hook", CreatedAt: testTime})
	})
	const perTx = 50_000
	for first := 1; first <= benchDeliveries; first += perTx {
		mustUpdate(b, s, func(tx store.Tx) error {
			for i := first; i < first+perTx && i <= benchDeliveries; i++ {
				if err := tx.PutDelivery(testSlug, benchDelivery(i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return s
}

// BenchmarkDeliveries measures the due index with benchDeliveries pending
// deliveries of which benchDue are due: reads cost in proportion to the
// due ones, not the pending ones.
func BenchmarkDeliveries(b *testing.B) {
	s := populateDeliveries(b)
	ctx := context.Background()
	now := testTime.Add(time.Minute)
	read := func(name string, want int, fn func(tx store.Tx) (int, error)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var n int
				err := s.View(ctx, func(tx store.Tx) (err error) { n, err = fn(tx); return err })
				if err != nil || n != want {
					b.Fatalf("got %d, %v; want %d", n, err, want)
				}
			}
		})
	}
	dueCount := func(limit int) func(tx store.Tx) (int, error) {
		return func(tx store.Tx) (int, error) {
			ds, err := tx.DueDeliveries(now, limit)
			return len(ds), err
		}
	}
	read("DueDeliveries/All100Due", benchDue, dueCount(1000))
	read("DueDeliveries/Limit10", 10, dueCount(10))
	read("DueDeliveries/NoneDue", 0, func(tx store.Tx) (int, error) {
		ds, err := tx.DueDeliveries(testTime.Add(-time.Second), 1000)
		return len(ds), err
	})
	read("NextDueAt", 1, func(tx store.Tx) (int, error) {
		_, ok, err := tx.NextDueAt()
		if !ok {
			return 0, err
		}
		return 1, err
	})
	read("PendingDeliveries", benchDeliveries, func(tx store.Tx) (int, error) { return tx.PendingDeliveries() })
	benchTransitions(b, s)
}

// benchTransitions measures PutDelivery moving deliveries of the queue
// through the transitions a dispatcher makes: claim (lease), retry
// (reschedule), succeed and back to pending.
func benchTransitions(b *testing.B, s *boltstore.Store) {
	transition := func(i int) store.Delivery {
		d := benchDelivery(benchDue + 1 + i*7919%(benchDeliveries-benchDue))
		switch i % 4 {
		case 0: // claimed
			d.LeaseUntil, d.LeaseOwner = testTime.Add(2*time.Hour), "bench"
		case 1: // failed attempt, retry later
			d.Attempts, d.LastStatus, d.LastError = 1, 503, "unavailable"
			d.LastAttemptAt, d.NextAttemptAt = testTime, testTime.Add(3*time.Hour)
		case 2: // succeeded
			d.Status, d.Attempts, d.LastStatus, d.LastAttemptAt = store.DeliverySucceeded, 1, 204, testTime
		}
		return d // case 3: back to pending as queued
	}
	b.Run("PutDelivery/OnePerUpdate", func(b *testing.B) {
		// Each is a durable commit: the fsync dominates.
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			d := transition(i)
			i++
			mustUpdate(b, s, func(tx store.Tx) error { return tx.PutDelivery(testSlug, d) })
		}
	})
	b.Run("PutDelivery/1000PerUpdate", func(b *testing.B) {
		// The cost of the transition itself; ns/op is per 1000.
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			mustUpdate(b, s, func(tx store.Tx) error {
				for j := range 1000 {
					if err := tx.PutDelivery(testSlug, transition(i+j)); err != nil {
						return err
					}
				}
				return nil
			})
			i += 1000
		}
	})
}
