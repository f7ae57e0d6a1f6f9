package identity_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/identitylib/identity"
)

// The library calls of the admin console's pages, over the benchmark
// databases of bench_test.go (every user enabled, unverified, without a
// second factor; five mappers, three of whose attributes each user has;
// every tenth user in a group that carries a role):
//
//	go test -run '^$' -bench 'ListUsersFiltered|GetClaimsPreview|GetOverview' -benchtime 2s -count 2 . -bench.users 10000,10000000 -bench.dir DIR

// BenchmarkListUsersFiltered: one call of the paged scan at 90% of the
// users, for a state no user is in (disabled: the call examines its
// whole batch of 1,000 and finds none, its worst case) and for a state
// every user is in (unverified: the page of 20 fills at once).
func BenchmarkListUsersFiltered(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		cursor := identity.ScanOptions{Cursor: strconv.Itoa(db.n / 10 * 9), Limit: 20}
		for _, c := range []struct {
			name     string
			filter   identity.UserFilter
			examined int
			found    int
		}{
			{"none-match", identity.UserFilter{Disabled: true}, identity.UserScanBatch, 0},
			{"all-match", identity.UserFilter{EmailUnverified: true}, 20, 20},
			{"locked-none", identity.UserFilter{Locked: true}, identity.UserScanBatch, 0},
		} {
			b.Run(c.name, func(b *testing.B) {
				cpu := cpuTime(b)
				for b.Loop() {
					got, err := db.ws.ListUsersFiltered(ctx, c.filter, &cursor)
					if err != nil || got.Examined != c.examined || len(got.Items) != c.found {
						b.Fatal(got.Examined, len(got.Items), err)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	})
}

// BenchmarkGetClaimsPreview: the claims preview of a user's tokens for no
// client, with the default scopes and with groups and roles asked for.
func BenchmarkGetClaimsPreview(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		for _, c := range []struct {
			name   string
			scopes []string
		}{
			{"default-scopes", nil},
			{"groups-roles", []string{"openid", "profile", "email", "groups", "roles"}},
		} {
			b.Run(c.name, func(b *testing.B) {
				i := int64(0)
				cpu := cpuTime(b)
				for b.Loop() {
					i = i*7919%int64(db.n) + 1
					p, err := db.ws.GetClaimsPreview(ctx, identity.ClaimsPreviewRequest{UserID: i, Scopes: c.scopes})
					if err != nil || len(p.Access) == 0 || len(p.ID) == 0 {
						b.Fatal(p, err)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	})
}

// BenchmarkGetOverview: the dashboard's figures (no sign-in, lock or
// delivery in the benchmark databases: the cost of reading each figure
// where it is kept).
func BenchmarkGetOverview(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		cpu := cpuTime(b)
		for b.Loop() {
			o, err := db.ws.GetOverview(ctx)
			if err != nil || o.Users != db.n {
				b.Fatal(o.Users, err)
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	})
}
