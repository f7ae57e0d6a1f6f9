package boltstore_test

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/identitylib/identity/store"
)

// benchMembers are the sizes of the large group of BenchmarkAccess.
var benchMembers = flag.String("boltstore.members", "100000", "comma-separated sizes of the large group of BenchmarkAccess")

// The roles and groups of BenchmarkAccess: the large group carries
// accessRoles roles, and user 1 is a member of it and of
// accessSmallGroups others.
const (
	accessRoles       = 2
	accessSmallGroups = 10
	accessBatch       = 50_000 // members added per transaction of the setup
)

// BenchmarkAccess measures the reads and writes of roles and groups
// beside a group of -boltstore.members members that carries two roles,
// one of them also assigned directly to every hundredth member:
//
//	go test -run '^$' -bench Access ./store/boltstore/ -args -boltstore.members=100000,1000000
//
// The members are ids without user records (the store checks no
// reference), which costs the indexes the same. GroupMembers and
// RoleHolders read the first page of 50 with the total, and a page at
// half the group, whose offset is a walk of the keys before it;
// UserGroups reads user 1's eleven groups; AddGroupMember adds a new
// member to the large group, a durable commit that moves its two
// holdings; AddGroupRole gives the large group one more role, a holding
// for every member in one transaction.
func BenchmarkAccess(b *testing.B) {
	for _, field := range strings.Split(*benchMembers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 2 {
			b.Fatalf("-boltstore.members: %q is not a size of at least 2", field)
		}
		b.Run(fmt.Sprint("members=", n), func(b *testing.B) { benchAccess(b, int64(n)) })
	}
}

func benchAccess(b *testing.B, n int64) {
	s := openStore(b, filepath.Join(b.TempDir(), "db"), nil)
	mustUpdate(b, s, func(tx store.Tx) error {
		steps := []error{tx.PutWorkspace(store.Workspace{Slug: testSlug})}
		for id := int64(1); id <= accessRoles; id++ {
			steps = append(steps, tx.PutRole(testSlug, store.Role{ID: id, Name: fmt.Sprint("role-", id)}), tx.AddGroupRole(testSlug, 1, id))
		}
		for id := int64(1); id <= 1+accessSmallGroups; id++ {
			steps = append(steps, tx.PutGroup(testSlug, store.Group{ID: id, Name: fmt.Sprint("group-", id)}), tx.AddGroupMember(testSlug, id, 1))
		}
		return errors.Join(steps...)
	})
	for first := int64(2); first <= n; first += accessBatch {
		mustUpdate(b, s, func(tx store.Tx) error {
			for id := first; id < first+accessBatch && id <= n; id++ {
				if err := tx.AddGroupMember(testSlug, 1, id); err != nil {
					return err
				}
				if id%100 == 0 {
					if err := tx.AddUserRole(testSlug, id, 1); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}

	page := func(name string, read func(tx store.Tx, offset int) ([]int64, int, error), offset int) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				mustView(b, s, func(tx store.Tx) error {
					ids, total, err := read(tx, offset)
					if err != nil {
						return err
					}
					if total != int(n) || len(ids) != min(50, int(n)-offset) {
						b.Fatalf("%d ids of %d, want %d of %d", len(ids), total, min(50, int(n)-offset), n)
					}
					return nil
				})
			}
		})
	}
	members := func(tx store.Tx, offset int) ([]int64, int, error) { return tx.GroupMembers(testSlug, 1, offset, 50) }
	holders := func(tx store.Tx, offset int) ([]int64, int, error) { return tx.RoleHolders(testSlug, 1, offset, 50) }
	page("GroupMembers/first", members, 0)
	page("GroupMembers/middle", members, int(n/2))
	page("RoleHolders/first", holders, 0)
	page("RoleHolders/middle", holders, int(n/2))
	b.Run("UserGroups", func(b *testing.B) {
		for b.Loop() {
			mustView(b, s, func(tx store.Tx) error {
				groups, err := tx.UserGroups(testSlug, 1)
				if err == nil && len(groups) != 1+accessSmallGroups {
					b.Fatalf("UserGroups(1) = %v", groups)
				}
				return err
			})
		}
	})
	next := n
	b.Run("AddGroupMember", func(b *testing.B) {
		for b.Loop() {
			next++
			mustUpdate(b, s, func(tx store.Tx) error { return tx.AddGroupMember(testSlug, 1, next) })
		}
	})
	role := int64(accessRoles)
	b.Run("AddGroupRole", func(b *testing.B) {
		for b.Loop() {
			role++
			mustUpdate(b, s, func(tx store.Tx) error { return tx.AddGroupRole(testSlug, 1, role) })
		}
	})
}
