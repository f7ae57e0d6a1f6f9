package pgstore_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// accessMembers is the size of the large group of BenchmarkPGAccess.
var accessMembers = flag.Int("pgaccess.members", 100000, "members of the large group of BenchmarkPGAccess")

// The roles and groups of the workspace of BenchmarkPGAccess.
const (
	accessRoleLarge  = 1 // carried by the large group
	accessRoleDirect = 2 // assigned directly to every tenth user
	accessRoleExtra  = 3 // carried by the group the writers add to
	accessGroupLarge = 1 // every user
	accessGroupFirst = 2 // groups 2 to 9: each user is in one of them
	accessGroupExtra = 10
)

// accessBenchStore returns a Store on a schema of its own holding
// workspace "bench" with *accessMembers users, all members of the large
// group, each also a member of one of eight small groups, and every tenth
// one holding a role directly, written with InsertUsers in batches of
// 10,000 and settled with VACUUM ANALYZE; and the schema's URL.
func accessBenchStore(b *testing.B) (*pgstore.Store, string) {
	b.Helper()
	url := pgtest.URL(b)
	s, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	start := time.Now()
	fillAccess(b, s, url, *accessMembers)
	b.Logf("%d members written and settled in %v", *accessMembers, time.Since(start).Round(time.Millisecond))
	return s, url
}

// fillAccess writes the workspace of accessBenchStore, with members users,
// to s, whose schema's URL is url.
func fillAccess(tb testing.TB, s *pgstore.Store, url string, members int) {
	tb.Helper()
	ctx := context.Background()
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: "bench", CreatedAt: t0}); err != nil {
			return err
		}
		for id, name := range map[int64]string{accessRoleLarge: "staff", accessRoleDirect: "auditor", accessRoleExtra: "on-call"} {
			if err := tx.PutRole("bench", store.Role{ID: id, Name: name, CreatedAt: t0, UpdatedAt: t0, Version: 1}); err != nil {
				return err
			}
		}
		for id := int64(accessGroupLarge); id <= accessGroupExtra; id++ {
			if err := tx.PutGroup("bench", store.Group{ID: id, Name: fmt.Sprintf("group%d", id), CreatedAt: t0, UpdatedAt: t0, Version: 1}); err != nil {
				return err
			}
		}
		if err := tx.AddGroupRole("bench", accessGroupLarge, accessRoleLarge); err != nil {
			return err
		}
		return tx.AddGroupRole("bench", accessGroupExtra, accessRoleExtra)
	})
	if err != nil {
		tb.Fatal(err)
	}
	const batch = 10000
	for first := 1; first <= members; first += batch {
		users := make([]store.UserInsert, min(batch, members-first+1))
		for i := range users {
			id := int64(first + i)
			name := fmt.Sprintf("user%08d", id)
			users[i] = store.UserInsert{
				User:   store.User{ID: id, Username: name, Email: name + "@example.com", FullName: "Person", Enabled: true, CreatedAt: t0, UpdatedAt: t0},
				Groups: []int64{accessGroupLarge, accessGroupFirst + id%8},
			}
			if id%10 == 0 {
				users[i].Roles = []int64{accessRoleDirect}
			}
		}
		if err := s.Update(ctx, func(tx store.Tx) error { return tx.(store.Bulk).InsertUsers("bench", users) }); err != nil {
			tb.Fatal(err)
		}
	}
	if err := settle(ctx, url); err != nil {
		tb.Fatal(err)
	}
}

// settle vacuums and analyzes the schema's tables, as autovacuum would
// soon after a bulk load, so that the pages of ids are index-only scans.
func settle(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "VACUUM ANALYZE")
	return err
}

// BenchmarkPGAccess reads and writes the roles and groups of a workspace
// whose large group has *accessMembers members (100,000 by default), one
// transaction a call, at the level of the store:
//
//	go test -run '^$' -bench PGAccess ./store/pgstore/ -args -pgaccess.members=1000000
//
// GroupMembers and RoleHolders read the first page (20) with the total,
// of the large group and of the role it carries; UserGroups reads the
// groups of users by id. AddGroupMember adds the users, one by one, to a
// group that carries a role, so that every write adds a member, a holder
// and both counts, with 1 and 8 writers of one Store and with 8 writers
// spread over 2 Stores, as two processes would be.
func BenchmarkPGAccess(b *testing.B) {
	s, url := accessBenchStore(b)
	ctx := context.Background()
	n := int64(*accessMembers)
	view := func(b *testing.B, fn func(tx store.Tx) error) {
		b.Helper()
		if err := s.View(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("GroupMembers", func(b *testing.B) {
		for b.Loop() {
			view(b, func(tx store.Tx) error {
				ids, total, err := tx.GroupMembers("bench", accessGroupLarge, 0, 20)
				if err == nil && (len(ids) != 20 || int64(total) != n) {
					err = fmt.Errorf("GroupMembers: %d ids, total %d", len(ids), total)
				}
				return err
			})
		}
	})
	b.Run("UserGroups", func(b *testing.B) {
		i := int64(0)
		for b.Loop() {
			i = i*7919%n + 1
			view(b, func(tx store.Tx) error {
				ids, err := tx.UserGroups("bench", i)
				if err == nil && len(ids) != 2 {
					err = fmt.Errorf("UserGroups(%d) = %v", i, ids)
				}
				return err
			})
		}
	})
	b.Run("RoleHolders", func(b *testing.B) {
		for b.Loop() {
			view(b, func(tx store.Tx) error {
				ids, total, err := tx.RoleHolders("bench", accessRoleLarge, 0, 20)
				if err == nil && (len(ids) != 20 || int64(total) != n) {
					err = fmt.Errorf("RoleHolders: %d ids, total %d", len(ids), total)
				}
				return err
			})
		}
	})

	// The writers take the users in turn; past the last one, an add finds
	// the member there and writes nothing, so b.N stays below it.
	var next atomic.Int64
	for _, c := range []struct{ writers, stores int }{{1, 1}, {8, 1}, {8, 2}} {
		b.Run(fmt.Sprintf("AddGroupMember/writers=%d/stores=%d", c.writers, c.stores), func(b *testing.B) {
			stores := []*pgstore.Store{s}
			for range c.stores - 1 {
				other, err := pgstore.Open(ctx, url, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = other.Close() })
				stores = append(stores, other)
			}
			var before []pgstore.Stats
			for _, st := range stores {
				before = append(before, st.Stats())
			}
			var ops atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range c.writers {
				st := stores[w%len(stores)]
				wg.Go(func() {
					for ops.Add(1) <= int64(b.N) {
						user := next.Add(1)%n + 1
						if err := st.Update(ctx, func(tx store.Tx) error {
							return tx.AddGroupMember("bench", accessGroupExtra, user)
						}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			var retries, alone, grouped uint64
			for i, st := range stores {
				after := st.Stats()
				retries += after.Retries - before[i].Retries
				alone += after.Alone - before[i].Alone
				grouped += after.Grouped - before[i].Grouped
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
			b.ReportMetric(float64(alone)/float64(b.N), "alone/op")
			b.ReportMetric(float64(grouped)/float64(b.N), "grouped/op")
		})
	}
}
