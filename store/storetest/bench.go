package storetest

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
)

// benchUsers is the number of users in the store of RunBenchmarks' Reads.
var benchUsers = flag.Int("storetest.users", 100_000, "users in the store of the Reads benchmarks of storetest.RunBenchmarks")

// Settler is implemented by a store that RunBenchmarks should let settle
// after a bulk load, outside the timings: a PostgreSQL store analyzes its
// tables, as autovacuum would soon after.
type Settler interface {
	Settle(ctx context.Context) error
}

// Counter is implemented by a store with running counters of its own
// (retries, commits, ...). Around a benchmark that writes, RunBenchmarks
// reports the change of each counter per operation, as "name/op".
type Counter interface {
	Counters() map[string]uint64
}

// RunBenchmarks measures the shapes of work every store serves, so that
// stores compare side by side under the same names:
//
//	func BenchmarkStore(b *testing.B) {
//		storetest.RunBenchmarks(b, func(b *testing.B) store.Store { ... })
//	}
//
// Reads looks users up, one View each, in a store of -storetest.users
// users (default 100,000); UpdateParallel runs concurrent read-modify-write
// Updates on distinct rows and on one row; Deliveries reads the due index
// of 100,000 pending deliveries of which 100 are due, claims due ones as
// concurrent dispatchers do, and moves deliveries through a dispatcher's
// transitions; WorkspaceQueue reads one workspace's share of a queue of
// 0, 1,000 and 100,000 pending jobs of two workspaces. Select one with -bench, for example -bench Store/Reads.
//
// newStore must return a fresh, empty, open store and register with
// b.Cleanup whatever releases it. It may implement Settler and Counter.
func RunBenchmarks(b *testing.B, newStore func(b *testing.B) store.Store) {
	b.Run("Reads", func(b *testing.B) { benchReads(b, newStore) })
	b.Run("UpdateParallel", func(b *testing.B) { benchUpdateParallel(b, newStore) })
	b.Run("Deliveries", func(b *testing.B) { benchDeliveries(b, newStore) })
	b.Run("WorkspaceQueue", func(b *testing.B) { benchWorkspaceQueue(b, newStore) })
}

// benchSlug is the workspace of the benchmarks.
const benchSlug = slugA

// benchNames are the first names of the benchmark users: a tenth of them
// are called Alice.
var benchNames = []string{"Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy"}

// benchUser returns the i-th user of the benchmark population, ids from 1.
func benchUser(i int) store.User {
	return store.User{
		ID:           int64(i),
		Username:     fmt.Sprintf("user%07d", i),
		Email:        fmt.Sprintf("user%07d@example.com", i),
		FullName:     fmt.Sprintf("%s Number%d", benchNames[i%len(benchNames)], i),
		Enabled:      true,
		PasswordHash: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo",
		CreatedAt:    t0,
		UpdatedAt:    t0,
	}
}

// benchUpdate runs fn in an Update and fails the benchmark on error.
func benchUpdate(b *testing.B, s store.Store, fn func(tx store.Tx) error) {
	b.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		b.Fatal(err)
	}
}

// benchStore returns a fresh store holding the benchmark workspace.
func benchStore(b *testing.B, newStore func(b *testing.B) store.Store) store.Store {
	b.Helper()
	s := newStore(b)
	benchUpdate(b, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace(benchSlug)) })
	return s
}

// load writes n records with put, in transactions of 10,000, and lets
// the store settle.
func load(b *testing.B, s store.Store, n int, put func(tx store.Tx, i int) error) {
	b.Helper()
	const perTx = 10_000
	start := time.Now()
	for first := 1; first <= n; first += perTx {
		benchUpdate(b, s, func(tx store.Tx) error {
			for i := first; i < first+perTx && i <= n; i++ {
				if err := put(tx, i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	b.Logf("loaded %d records in %v (%.0f/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	if st, ok := s.(Settler); ok {
		if err := st.Settle(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// counting reports, when s is a Counter, the change of its counters
// while fn runs, per operation of b.
func counting(b *testing.B, s store.Store, fn func()) {
	c, ok := s.(Counter)
	if !ok {
		fn()
		return
	}
	before := c.Counters()
	fn()
	after := c.Counters()
	names := make([]string, 0, len(after))
	for name := range after {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.ReportMetric(float64(after[name]-before[name])/float64(b.N), name+"/op")
	}
}

// benchReads measures one read per View on a store of -storetest.users
// users, View overhead included.
func benchReads(b *testing.B, newStore func(b *testing.B) store.Store) {
	n := *benchUsers
	s := benchStore(b, newStore)
	load(b, s, n, func(tx store.Tx, i int) error {
		if _, err := tx.NextID(benchSlug, store.SeqUsers); err != nil {
			return err
		}
		return tx.PutUser(benchSlug, benchUser(i))
	})
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
		// The cost of a lookup, without beginning a transaction each time.
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

// benchUpdateParallel measures concurrent read-modify-write Updates, each
// a durable commit unless the store groups them, on distinct rows of a
// table of 10,000 (conflicts are rare) and on one row (every pair
// conflicts).
func benchUpdateParallel(b *testing.B, newStore func(b *testing.B) store.Store) {
	for _, c := range []struct {
		name    string
		sameRow bool
	}{{"DistinctRows", false}, {"OneRow", true}} {
		b.Run(c.name, func(b *testing.B) {
			s := benchStore(b, newStore)
			load(b, s, 10_000, func(tx store.Tx, i int) error {
				if err := tx.PutUser(benchSlug, benchUser(i)); err != nil {
					return err
				}
				return tx.PutUserAttribute(benchSlug, int64(i), "n", "0")
			})
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			counting(b, s, func() {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						user := 1 + next.Add(1)%10_000
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
			})
		})
	}
}

// The delivery queue of benchDeliveries: queued pending deliveries, of
// which queueDue are due.
const queueLen, queueDue = 100_000, 100

// queued returns the i-th delivery of the benchmark queue, ids from 1:
// the first queueDue are due at t0, the others an hour later and on.
func queued(i int) store.Delivery {
	due := t0
	if i > queueDue {
		due = t0.Add(time.Hour + time.Duration(i)*time.Second)
	}
	return store.Delivery{
		ID: int64(i), Kind: store.JobWebhook, EndpointID: 1, EventID: fmt.Sprintf("msg_%022d", i), EventType: "user.created",
		Payload:   []byte(fmt.Sprintf(`{"type":"user.created","timestamp":"2024-05-06T07:08:09Z","data":{"id":%d}}`, i)),
		CreatedAt: t0, Status: store.DeliveryPending, NextAttemptAt: due,
	}
}

// benchDeliveries measures the due index with queueLen pending deliveries
// of which queueDue are due (reads cost in proportion to the due ones,
// not the pending ones), claims by concurrent dispatchers, and the
// transitions a dispatcher writes.
func benchDeliveries(b *testing.B, newStore func(b *testing.B) store.Store) {
	s := benchStore(b, newStore)
	benchUpdate(b, s, func(tx store.Tx) error {
		return tx.PutWebhook(benchSlug, store.Webhook{ID: 1, URL: "https://example.com/hook", CreatedAt: t0})
	})
	load(b, s, queueLen, func(tx store.Tx, i int) error { return tx.PutDelivery(benchSlug, queued(i)) })
	ctx := context.Background()
	now := t0.Add(time.Minute)
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
	dueCount := func(now time.Time, limit int) func(tx store.Tx) (int, error) {
		return func(tx store.Tx) (int, error) {
			ds, err := tx.DueDeliveries(now, limit)
			return len(ds), err
		}
	}
	read("DueDeliveries/All100Due", queueDue, dueCount(now, 1000))
	read("DueDeliveries/Limit10", 10, dueCount(now, 10))
	read("DueDeliveries/NoneDue", 0, dueCount(t0.Add(-time.Second), 1000))
	read("NextDueAt", 1, func(tx store.Tx) (int, error) {
		_, ok, err := tx.NextDueAt()
		if !ok {
			return 0, err
		}
		return 1, err
	})
	read("PendingDeliveries", queueLen, func(tx store.Tx) (int, error) { return tx.PendingDeliveries() })
	b.Run("ClaimParallel", func(b *testing.B) { benchClaims(b, s, now) })
	benchTransitions(b, s)
}

// benchClaims measures dispatchers that plan the 10 earliest due
// deliveries in a View and lease them with ClaimDelivery in an Update, as
// the identity package's dispatcher does. The clock moves a millisecond
// per round and a lease lasts 10, so the due deliveries come due again as
// fast as they are claimed. ns/op is per round.
func benchClaims(b *testing.B, s store.Store, now time.Time) {
	ctx := context.Background()
	var claimed, taken, clock atomic.Int64
	b.SetParallelism(2)
	b.ResetTimer()
	counting(b, s, func() {
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
	})
	b.ReportMetric(float64(claimed.Load())/float64(b.N), "claimed/op")
	b.ReportMetric(float64(taken.Load())/float64(b.N), "taken/op")
}

// benchTransitions measures PutDelivery moving deliveries of the queue
// that are not due through the transitions a dispatcher makes: claim
// (lease), retry (reschedule), succeed and back to pending.
func benchTransitions(b *testing.B, s store.Store) {
	transition := func(i int) store.Delivery {
		d := queued(queueDue + 1 + i*7919%(queueLen-queueDue))
		switch i % 4 {
		case 0: // claimed
			d.LeaseUntil, d.LeaseOwner = t0.Add(2*time.Hour), "bench"
		case 1: // failed attempt, retry later
			d.Attempts, d.LastStatus, d.LastError = 1, 503, "unavailable"
			d.LastAttemptAt, d.NextAttemptAt = t0, t0.Add(3*time.Hour)
		case 2: // succeeded
			d.Status, d.Attempts, d.LastStatus, d.LastAttemptAt = store.DeliverySucceeded, 1, 204, t0
		}
		return d // case 3: back to pending as queued
	}
	b.Run("PutDelivery/OnePerUpdate", func(b *testing.B) {
		// Each is a durable commit.
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			d := transition(i)
			i++
			benchUpdate(b, s, func(tx store.Tx) error { return tx.PutDelivery(benchSlug, d) })
		}
	})
	b.Run("PutDelivery/1000PerUpdate", func(b *testing.B) {
		// The cost of the transition itself; ns/op is per 1000.
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			benchUpdate(b, s, func(tx store.Tx) error {
				for j := range 1000 {
					if err := tx.PutDelivery(benchSlug, transition(i+j)); err != nil {
						return err
					}
				}
				return nil
			})
			i += 1000
		}
	})
}

// queueWalk is the limit benchWorkspaceQueue passes to WorkspaceQueue:
// the identity package's QueueStatsWalkMax.
const queueWalk = 10_000

// benchWorkspaceQueue measures WorkspaceQueue with the limit queueWalk,
// one View each, on a queue of 0, 1,000 and 100,000 pending jobs shared
// in turn by two workspaces: a walk of the whole index below queueWalk
// jobs, of queueWalk entries above.
func benchWorkspaceQueue(b *testing.B, newStore func(b *testing.B) store.Store) {
	s := benchStore(b, newStore)
	benchUpdate(b, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(workspace(slugB)); err != nil {
			return err
		}
		for _, slug := range []string{benchSlug, slugB} {
			if err := tx.PutWebhook(slug, store.Webhook{ID: 1, URL: "https://example.com/hook", CreatedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	put := func(tx store.Tx, i int) error {
		return tx.PutDelivery([]string{benchSlug, slugB}[i%2], queued(i))
	}
	loaded := 0
	for _, n := range []struct {
		pending int
		want    store.WorkspaceQueue
	}{
		{0, store.WorkspaceQueue{Complete: true}},
		{1_000, store.WorkspaceQueue{Pending: 500, NextDue: t0, Complete: true}},
		{100_000, store.WorkspaceQueue{Pending: queueWalk / 2, NextDue: t0}},
	} {
		from := loaded
		load(b, s, n.pending-loaded, func(tx store.Tx, i int) error { return put(tx, from+i) })
		loaded = n.pending
		b.Run(fmt.Sprintf("pending=%d", n.pending), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var got store.WorkspaceQueue
				err := s.View(context.Background(), func(tx store.Tx) (err error) {
					got, err = tx.WorkspaceQueue(slugB, queueWalk)
					return err
				})
				if err != nil || got.Pending != n.want.Pending || got.Complete != n.want.Complete || !got.NextDue.Equal(n.want.NextDue) {
					b.Fatalf("WorkspaceQueue = %+v, %v; want %+v", got, err, n.want)
				}
			}
		})
	}
}
