package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// checkPrefixCounts checks, against counts made here from the users
// themselves, every prefix of every field of every user: a prefix that
// user_prefixes counts has its exact count; one it does not count has a
// counted ancestor with at most expandAt users (so that its walk is
// bounded); and a counted prefix of countedRunes runes or more with more
// than expandAt users is expanded.
func checkPrefixCounts(t *testing.T, s *Store, slug string) {
	t.Helper()
	err := s.db.View(func(btx *bbolt.Tx) error {
		sp := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte(slug))}
		var users []userFolds
		if err := sp.eachUserFolds(func(f userFolds) error { users = append(users, f); return nil }); err != nil {
			return err
		}
		// The number of users that have each prefix, each user once.
		brute := make(map[string]int)
		for _, f := range users {
			mine := make(map[string]bool)
			for _, field := range [...]string{f.username, f.email, f.name} {
				for runes := 1; runes <= utf8.RuneCountInString(field); runes++ {
					mine[runePrefix(field, runes)] = true
				}
			}
			for p := range mine {
				brute[p]++
			}
		}
		have := func(p string) int { return brute[p] }
		seen := make(map[string]bool)
		counts := sp.bucket(bucketUserPrefixes)
		for _, f := range users {
			for _, field := range [...]string{f.username, f.email, f.name} {
				for runes := 1; runes <= utf8.RuneCountInString(field); runes++ {
					p := runePrefix(field, runes)
					if seen[p] {
						continue
					}
					seen[p] = true
					want := have(p)
					total, counted := sp.prefixTotal(p)
					c, expanded := prefixEntry(counts.Get([]byte(p)))
					switch {
					case counted && total != want:
						t.Errorf("prefix %q: count %d, want %d", p, total, want)
					case counted && runes >= countedRunes && want > expandAt && !expanded:
						t.Errorf("prefix %q: %d users, not expanded", p, want)
					case !counted && have(runePrefix(p, runes-1)) > expandAt:
						// The parent is not expanded (or p would be
						// counted): it must not have more than expandAt.
						t.Errorf("prefix %q is not counted, and its parent has %d users", p, have(runePrefix(p, runes-1)))
					case !counted && c != 0:
						t.Errorf("prefix %q is not counted but has the entry %d", p, c)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPrefixExpansion writes users whose fields share long prefixes past
// expandAt, in several transactions, then changes and deletes some, and
// checks every prefix after each step; then removes the counts, as in a
// file written before them, and checks the counts built on opening.
func TestPrefixExpansion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	update := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "ws"}) })
	// 6,000 users: usernames emp00001-emp06000 (so "emp" and "emp0" pass
	// expandAt, and "emp00" to "emp06" do not), emails by team: every
	// fourth user's is the username at dev.example (the same user under
	// "emp0" twice), the others' (4,500) "ops.team.N@"; full names all
	// "Pat Lee".
	person := func(i int) store.User {
		email := fmt.Sprintf("emp%05d@dev.example", i)
		if i%4 != 0 {
			email = fmt.Sprintf("ops.team.%d@example.com", i)
		}
		return store.User{ID: int64(i), Username: fmt.Sprintf("emp%05d", i), Email: email, FullName: "Pat Lee"}
	}
	// The first batch ends with the user that takes "emp", "emp0", "pat"
	// and "pat lee" past expandAt: their expansion must not wait for a
	// later write.
	for _, batch := range [][2]int{{1, expandAt + 1}, {expandAt + 2, 6000}} {
		update(func(tx store.Tx) error {
			for i := batch[0]; i <= batch[1]; i++ {
				if err := tx.PutUser("ws", person(i)); err != nil {
					return err
				}
			}
			return nil
		})
		checkPrefixCounts(t, s, "ws")
	}
	for _, c := range []struct {
		prefix string
		total  int
	}{
		{"emp0", 6000}, {"emp00", 999}, {"emp05", 1000}, {"emp06", 1}, {"ops.team.", 4500},
		{"ops.team.1", 834}, {"pat lee", 6000}, {"pat lee ", 0}, {"emp05000@", 1},
	} {
		err := s.View(ctx, func(tx store.Tx) error {
			_, total, err := tx.Users("ws", store.UserQuery{Prefix: c.prefix, Limit: 1})
			if total != c.total {
				t.Errorf("Users(%q) total = %d, want %d", c.prefix, total, c.total)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Move 2,000 users off "ops.team." (below expandAt again), rename
	// some, delete some.
	update(func(tx store.Tx) error {
		for i := 1; i <= 2000; i++ {
			u := person(i)
			u.Email = fmt.Sprintf("moved.%d@example.com", i)
			if i%100 == 0 {
				u.FullName, u.Username = "Kim Roe", fmt.Sprintf("kim%d", i)
			}
			if err := tx.PutUser("ws", u); err != nil {
				return err
			}
		}
		for i := 5990; i <= 6000; i++ {
			if err := tx.DeleteUser("ws", int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	checkPrefixCounts(t, s, "ws")

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	DropBuckets(t, path, "ws", string(nestedNames[bucketUserPrefixes]), string(nestedNames[bucketUserPrefixChunks]))
	if s, err = Open(path, nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkPrefixCounts(t, s, "ws")
}
