package identity_test

import (
	"context"
	"testing"

	"github.com/identitylib/identity"
)

// The benchmarks of roles and groups at every -bench.users size: a group
// of a tenth of the users ("everyone-10", 1,000,000 members at 10,000,000
// users) that carries "reader", which a hundredth of the users also hold
// directly; user 1 in ten other groups (see benchUser).
//
//	go test -run '^$' -bench BenchmarkAccess -bench.users 10000,1000000 .

// benchAccess returns the ids of the big group and its role.
func benchAccess(b *testing.B, db *benchDB) (group, role int64) {
	b.Helper()
	ctx := context.Background()
	g, err := db.ws.GetGroupByName(ctx, benchBigGroup)
	if err != nil {
		b.Fatal(err)
	}
	r, err := db.ws.GetRoleByName(ctx, benchBigRole)
	if err != nil {
		b.Fatal(err)
	}
	return g.ID, r.ID
}

// BenchmarkAccessMembers reads the first page of 20 of the big group's
// members, with the total.
func BenchmarkAccessMembers(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		group, _ := benchAccess(b, db)
		ctx := context.Background()
		for b.Loop() {
			l, err := db.ws.ListGroupMembers(ctx, group, &identity.Page{Limit: 20})
			if err != nil || l.Total != db.n/10 || len(l.Items) != 20 {
				b.Fatal(l.Total, err)
			}
		}
	})
}

// BenchmarkAccessHolders reads the first page of 20 of the holders of the
// big group's role, with the total: the members, and the hundredth of the
// users who hold it directly (all of them members too).
func BenchmarkAccessHolders(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		_, role := benchAccess(b, db)
		ctx := context.Background()
		for b.Loop() {
			l, err := db.ws.ListRoleHolders(ctx, role, &identity.Page{Limit: 20})
			if err != nil || l.Total != db.n/10 || len(l.Items) != 20 {
				b.Fatal(l.Total, err)
			}
		}
	})
}

// BenchmarkAccessUserGroups reads user 1's ten groups.
func BenchmarkAccessUserGroups(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		for b.Loop() {
			if groups, err := db.ws.ListUserGroups(ctx, 1); err != nil || len(groups) != benchTeams {
				b.Fatal(len(groups), err)
			}
		}
	})
}

// BenchmarkAccessUserRoles reads what user 100 holds (reader, directly
// and through the big group) and what user 1 holds (the roles of its ten
// teams): effective roles with their sources.
func BenchmarkAccessUserRoles(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		ctx := context.Background()
		for b.Loop() {
			if roles, err := db.ws.ListUserRoles(ctx, 100); err != nil || len(roles) != 1 || !roles[0].Direct {
				b.Fatal(roles, err)
			}
			if roles, err := db.ws.ListUserRoles(ctx, 1); err != nil || len(roles) != benchTeams {
				b.Fatal(len(roles), err)
			}
		}
	})
}

// BenchmarkAccessAddMember adds a user to the big group and removes it
// again: two durable writes, each keeping the holders of the group's role
// in step.
func BenchmarkAccessAddMember(b *testing.B) {
	runPerSize(b, func(b *testing.B, db *benchDB) {
		group, _ := benchAccess(b, db)
		ctx := context.Background()
		for b.Loop() {
			if err := db.ws.AddGroupMember(ctx, group, 3); err != nil {
				b.Fatal(err)
			}
			if err := db.ws.RemoveGroupMember(ctx, group, 3); err != nil {
				b.Fatal(err)
			}
		}
	})
}
