package pgstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// The benchmarks of the PostgreSQL bulk paths: the library over pgstore,
// each on a schema of its own with the default Options (a pool of 4
// connections on a 2-core machine), through the identity package's API:
//
//	go test -run '^$' -bench 'PG' -benchtime 2s ./store/pgstore/

// benchPGWorkspace returns workspace "bench" of a new Store on a schema of
// its own, and the Store.
func benchPGWorkspace(b *testing.B, opts *pgstore.Options) (*identity.Workspace, *pgstore.Store) {
	b.Helper()
	s := pgtest.Open(b, opts)
	svc, err := identity.New(s, nil)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(context.Background(), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	return ws, s
}

// benchPGHash is an argon2id PHC string at the default parameters, as a
// migration would bring in: the users share it, so that no benchmark
// pays for hashing.
const benchPGHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"

// benchPGBatch returns users first+1 to first+n: username userNNNNNNN,
// the shared hash and, with attrs, three attributes as the root's
// benchmarks give them.
func benchPGBatch(first, n int, attrs bool) []identity.ImportedUser {
	batch := make([]identity.ImportedUser, n)
	for i := range batch {
		k := first + i + 1
		name := fmt.Sprintf("user%07d", k)
		batch[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "Person " + strconv.Itoa(k),
			PasswordHash: benchPGHash}
		if attrs {
			batch[i].Attributes = map[string]string{"department": "dept" + strconv.Itoa(k%50), "tier": "gold", "employee_id": strconv.Itoa(k)}
		}
	}
	return batch
}

// BenchmarkPGImportUsers imports batches of MaxImportBatch (10,000)
// users into one workspace, without attributes and with three each.
func BenchmarkPGImportUsers(b *testing.B) {
	for _, attrs := range []bool{false, true} {
		b.Run(fmt.Sprintf("attributes=%t", attrs), func(b *testing.B) {
			ctx := context.Background()
			ws, _ := benchPGWorkspace(b, nil)
			next := 0
			for b.Loop() {
				batch := benchPGBatch(next, identity.MaxImportBatch, attrs)
				next += len(batch)
				if _, err := ws.ImportUsers(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(next)/b.Elapsed().Seconds(), "users/s")
		})
	}
}

// readWorkspace returns workspace "bench" of a new Store on a schema of
// its own, with 10,000 users of three attributes each and five claim
// mappers, as the root's benchmarks have.
func readWorkspace(b *testing.B) *identity.Workspace {
	b.Helper()
	ctx := context.Background()
	ws, _ := benchPGWorkspace(b, nil)
	if _, err := ws.ImportUsers(ctx, benchPGBatch(0, 10000, true)); err != nil {
		b.Fatal(err)
	}
	for i, key := range []string{"department", "tier", "employee_id", "absent1", "absent2"} {
		id := i%2 == 0
		if _, err := ws.SetClaimMapper(ctx, key, identity.ClaimMapperSpec{ClaimName: "c_" + key, IncludeInID: &id}); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkPGRead reads from one workspace of 10,000 users (see
// readWorkspace), one View a call: GetUser reads users by id, Claims the
// access token claims of users by id (the user, its attributes and the
// workspace's mappers).
func BenchmarkPGRead(b *testing.B) {
	ws := readWorkspace(b)
	ctx := context.Background()
	b.Run("GetUser", func(b *testing.B) {
		i := int64(0)
		for b.Loop() {
			i = i*7919%10000 + 1
			if _, err := ws.GetUser(ctx, i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Claims", func(b *testing.B) {
		i := int64(0)
		for b.Loop() {
			i = i*7919%10000 + 1
			if claims, err := ws.GetClaims(ctx, i, identity.AccessToken); err != nil || len(claims) != 3 {
				b.Fatal(claims, err)
			}
		}
	})
}

// BenchmarkPGSetAttribute sets an attribute of users with 1 and 8
// concurrent writers, each writer its own users (writer w writes users w,
// w+8, w+16, ...: different users, next to each other in every index).
// Every write is a durable commit. The users have the attribute before,
// so that every write replaces a value: one new entry in each index of
// user_attributes (its primary key and the value index of migration
// 0010), as a new key would add.
func BenchmarkPGSetAttribute(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			ctx := context.Background()
			ws, s := benchPGWorkspace(b, nil)
			const users = 1000
			batch := benchPGBatch(0, users, false)
			for i := range batch {
				batch[i].Attributes = map[string]string{"counter": "0"}
			}
			if _, err := ws.ImportUsers(ctx, batch); err != nil {
				b.Fatal(err)
			}
			before := s.Stats()
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for k := 0; ; k++ {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						user := int64(w+writers*(k%(users/writers))) + 1
						if _, err := ws.SetAttribute(ctx, user, "counter", strconv.FormatInt(i, 10), nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			after := s.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(after.Retries-before.Retries)/float64(b.N), "retries/op")
			b.ReportMetric(float64(after.Alone-before.Alone)/float64(b.N), "alone/op")
			b.ReportMetric(float64(after.Grouped-before.Grouped)/float64(b.N), "grouped/op")
		})
	}
}
