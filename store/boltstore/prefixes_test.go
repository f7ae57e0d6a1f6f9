package boltstore_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// TestPrefixCountsBuiltForOlderFile checks that a file written before the
// prefix counts existed gets them built from its users when it is opened:
// totals and pages of searches by short prefixes are right at once, and
// later writes keep them right.
func TestPrefixCountsBuiltForOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error {
		steps := []error{tx.PutWorkspace(store.Workspace{Slug: testSlug})}
		for i := range 3000 {
			// Ids 3 apart: the users span nine chunks of 1024 ids.
			name := fmt.Sprintf("user%04d", i)
			full := "Zoe"
			if i%3 == 0 {
				full = "Ada"
			}
			steps = append(steps, tx.PutUser(testSlug, store.User{
				ID: int64(i*3 + 1), Username: name, Email: name + "@example.com", FullName: full}))
		}
		return errors.Join(steps...)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	boltstore.DropBuckets(t, path, testSlug, "user_prefixes", "user_prefix_chunks")

	s = openStore(t, path, nil)
	type result struct {
		Total int
		IDs   []int64
	}
	search := func(prefix string, offset, limit int) result {
		var r result
		mustView(t, s, func(tx store.Tx) error {
			users, total, err := tx.Users(testSlug, store.UserQuery{Prefix: prefix, Offset: offset, Limit: limit})
			r.Total = total
			for _, u := range users {
				r.IDs = append(r.IDs, u.ID)
			}
			return err
		})
		return r
	}
	for _, c := range []struct {
		prefix        string
		offset, limit int
		want          result
	}{
		{"a", 0, 3, result{1000, []int64{1, 10, 19}}},
		{"a", 999, 3, result{1000, []int64{8992}}},
		{"z", 1998, 5, result{2000, []int64{8995, 8998}}},
		{"u", 2500, 2, result{3000, []int64{7501, 7504}}},
		{"us", 0, 1, result{3000, []int64{1}}},
		{"use", 2999, 1, result{3000, []int64{8998}}},
		{"user2", 0, 2, result{1000, []int64{6001, 6004}}},
		{"user29", 99, 5, result{100, []int64{8998}}},
		{"x", 0, 5, result{0, nil}},
	} {
		if diff := cmp.Diff(c.want, search(c.prefix, c.offset, c.limit)); diff != "" {
			t.Errorf("Users(%q, offset %d, limit %d) mismatch (-want +got):\n%s", c.prefix, c.offset, c.limit, diff)
		}
	}
	// Writes after the build keep the built counts.
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutUser(testSlug, store.User{ID: 1, Username: "user0000", Email: "user0000@example.com", FullName: "Zed"}),
			tx.DeleteUser(testSlug, 4))
	})
	for _, c := range []struct {
		prefix string
		want   int
	}{{"a", 999}, {"z", 2000}, {"u", 2999}, {"ze", 1}, {"zo", 1999}} {
		if got := search(c.prefix, 0, 1).Total; got != c.want {
			t.Errorf("after writes, Users(%q) total = %d, want %d", c.prefix, got, c.want)
		}
	}
}
