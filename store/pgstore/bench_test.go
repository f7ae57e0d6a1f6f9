package pgstore_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// The benchmarks mirror those of boltstore (same populations, same
// names), so that the two stores compare side by side:
//
//	go test -run '^$' -bench . ./store/pgstore/ -args -pgstore.users=1000000

// benchUsers is the number of users BenchmarkReads populates.
var benchUsers = flag.Int("pgstore.users", 100_000, "users in the BenchmarkReads store")

const benchSlug = "acme"

var benchTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

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
		CreatedAt:    benchTime,
		UpdatedAt:    benchTime,
	}
}

// benchStore opens a store on a fresh schema with the workspace, and
// returns it with the schema's URL.
func benchStore(b *testing.B, opts *pgstore.Options) (*pgstore.Store, string) {
	b.Helper()
	url := pgtest.URL(b)
	s, err := pgstore.Open(context.Background(), url, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	mustUpdate(b, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: benchSlug}) })
	return s, url
}

func mustUpdate(b *testing.B, s store.Store, fn func(tx store.Tx) error) {
	b.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		b.Fatal(err)
	}
}

// populate opens a store holding n benchmark users, written in
// transactions of 10,000, and analyzed.
func populate(b *testing.B, n int) *pgstore.Store {
	b.Helper()
	s, url := benchStore(b, nil)
	const perTx = 10_000
	start := time.Now()
	for first := 1; first <= n; first += perTx {
		mustUpdate(b, s, func(tx store.Tx) error {
			for i := first; i < first+perTx && i <= n; i++ {
				if _, err := tx.NextID(benchSlug, store.SeqUsers); err != nil {
					return err
				}
				if err := tx.PutUser(benchSlug, benchUser(i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	b.Logf("populated %d users in %v (%.0f users/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	analyze(b, url, "users")
	return s
}

// analyze vacuums and analyzes the table of the schema at url, as
// autovacuum would soon after a bulk load.
func analyze(b *testing.B, url, table string) {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "VACUUM ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReads measures one read per View on a store of -pgstore.users
// users, View overhead (BEGIN, ROLLBACK) included.
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
		_, err := tx.User(benchSlug, int64(1+i*7919%n))
		return err
	})
	b.Run("UserInOneView", func(b *testing.B) {
		// The cost of a lookup, one round trip, without a transaction each.
		b.ReportAllocs()
		err := s.View(ctx, func(tx store.Tx) error {
			i := 0
			for b.Loop() {
				i++
				if _, err := tx.User(benchSlug, int64(1+i*7919%n)); err != nil {
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
		_, err := tx.UserIDByUsername(benchSlug, benchUser(1+i*7919%n).Username)
		return err
	})
	users := func(q store.UserQuery) func(tx store.Tx, i int) error {
		return func(tx store.Tx, i int) error {
			_, _, err := tx.Users(benchSlug, q)
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

// BenchmarkUpdateParallel measures concurrent read-modify-write Updates,
// each its own serializable transaction and durable commit, on distinct
// rows of a table of 10,000 (conflicts are rare) and on one row (every
// pair conflicts, and Update retries).
func BenchmarkUpdateParallel(b *testing.B) {
	for _, c := range []struct {
		name    string
		sameRow bool
	}{{"DistinctRows", false}, {"OneRow", true}} {
		b.Run(c.name, func(b *testing.B) {
			s, url := benchStore(b, &pgstore.Options{MaxConns: 16})
			mustUpdate(b, s, func(tx store.Tx) error {
				for i := 1; i <= 10_000; i++ {
					if err := tx.PutUser(benchSlug, benchUser(i)); err != nil {
						return err
					}
					if err := tx.PutUserAttribute(benchSlug, int64(i), "n", "0"); err != nil {
						return err
					}
				}
				return nil
			})
			analyze(b, url, "user_attributes")
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := next.Add(1)
					user := 1 + id%10_000
					if c.sameRow {
						user = 1
					}
					err := s.Update(context.Background(), func(tx store.Tx) error {
						attrs, err := tx.UserAttributes(benchSlug, user)
						if err != nil {
							return err
						}
						n, _ := strconv.Atoi(attrs["n"])
						return tx.PutUserAttribute(benchSlug, user, "n", strconv.Itoa(n+1))
					})
					if err != nil {
						b.Error(err)
					}
				}
			})
			st := s.Stats()
			b.ReportMetric(float64(st.Retries)/float64(b.N), "retries/op")
			b.ReportMetric(float64(st.Alone)/float64(b.N), "alone/op")
		})
	}
}

// benchDeliveries is the number of pending deliveries BenchmarkDeliveries
// queues, of which benchDue are due.
const benchDeliveries, benchDue = 100_000, 100

// benchDelivery returns the i-th delivery of the benchmark queue, ids from
// 1: the first benchDue are due at benchTime, the others an hour later and
// on.
func benchDelivery(i int) store.Delivery {
	due := benchTime
	if i > benchDue {
		due = benchTime.Add(time.Hour + time.Duration(i)*time.Second)
	}
	return store.Delivery{
		ID: int64(i), Kind: store.JobWebhook, EndpointID: 1, EventID: fmt.Sprintf("msg_%022d", i), EventType: "user.created",
		Payload:   []byte(fmt.Sprintf(`{"type":"user.created","timestamp":"2024-05-06T07:08:09Z","data":{"id":%d}}`, i)),
		CreatedAt: benchTime, Status: store.DeliveryPending, NextAttemptAt: due,
	}
}

// BenchmarkDeliveries measures the due index with benchDeliveries pending
// deliveries of which benchDue are due, and claims by concurrent
// dispatchers.
func BenchmarkDeliveries(b *testing.B) {
	s, url := benchStore(b, &pgstore.Options{MaxConns: 16})
	mustUpdate(b, s, func(tx store.Tx) error {
		return tx.PutWebhook(benchSlug, store.Webhook{ID: 1, URL: "https://example.com/hook", CreatedAt: benchTime})
	})
	const perTx = 10_000
	for first := 1; first <= benchDeliveries; first += perTx {
		mustUpdate(b, s, func(tx store.Tx) error {
			for i := first; i < first+perTx && i <= benchDeliveries; i++ {
				if err := tx.PutDelivery(benchSlug, benchDelivery(i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	analyze(b, url, "deliveries")
	ctx := context.Background()
	now := benchTime.Add(time.Minute)
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
	read("NextDueAt", 1, func(tx store.Tx) (int, error) {
		_, ok, err := tx.NextDueAt()
		if !ok {
			return 0, err
		}
		return 1, err
	})
	read("PendingDeliveries", benchDeliveries, func(tx store.Tx) (int, error) { return tx.PendingDeliveries() })

	b.Run("ClaimParallel", func(b *testing.B) {
		// Dispatchers plan the 10 earliest due deliveries in a View and
		// lease them with ClaimDelivery in an Update, as the identity
		// package's dispatcher does. The clock moves a millisecond per
		// round and a lease lasts 10, so the 100 due deliveries come due
		// again as fast as they are claimed. ns/op is per round.
		before := s.Stats()
		var claimed, taken atomic.Int64
		var clock atomic.Int64
		b.SetParallelism(2)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				at := now.Add(time.Duration(clock.Add(1)) * time.Millisecond)
				var plan []store.QueuedDelivery
				if err := s.View(ctx, func(tx store.Tx) (err error) {
					plan, err = tx.DueDeliveries(at, 10)
					return err
				}); err != nil {
					b.Error(err)
					return
				}
				var got, lost int64
				err := s.Update(ctx, func(tx store.Tx) error {
					got, lost = 0, 0
					for _, q := range plan {
						cur, ok, err := tx.ClaimDelivery(q.Workspace, q.ID)
						if err != nil {
							return err
						}
						if !ok || cur.DueAt().After(at) {
							lost++
							continue
						}
						cur.LeaseUntil, cur.LeaseOwner = at.Add(10*time.Millisecond), "bench"
						if err := tx.PutDelivery(q.Workspace, cur); err != nil {
							return err
						}
						got++
					}
					return nil
				})
				if err != nil {
					b.Error(err)
					return
				}
				claimed.Add(got)
				taken.Add(lost)
			}
		})
		st := s.Stats()
		b.ReportMetric(float64(claimed.Load())/float64(b.N), "claimed/op")
		b.ReportMetric(float64(taken.Load())/float64(b.N), "taken/op")
		b.ReportMetric(float64(st.Retries-before.Retries)/float64(b.N), "retries/op")
	})
}
