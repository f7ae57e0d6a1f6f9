package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// prefixWant is what a search by prefix must return: the ids of its
// matches, all of them (the total is their number).
type prefixWant struct {
	prefix string
	ids    []int64
}

// checkPrefixes runs every search with a limit that takes all matches and
// compares the ids and the total.
func checkPrefixes(t *testing.T, s store.Store, slug, step string, wants []prefixWant) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		for _, w := range wants {
			got, total, err := tx.Users(slug, store.UserQuery{Prefix: w.prefix, Limit: 1000})
			if err != nil {
				return fmt.Errorf("%s: Users(%q): %w", step, w.prefix, err)
			}
			if diff := cmp.Diff(w.ids, userIDs(got), equateEmpty); diff != "" || total != len(w.ids) {
				t.Errorf("%s: Users(%q) total %d, want %d; ids (-want +got):\n%s",
					step, w.prefix, total, len(w.ids), diff)
			}
		}
		return nil
	})
}

// checkTotals compares the totals of searches by prefix with want.
func checkTotals(t *testing.T, s store.Store, slug, step string, want map[string]int) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		for prefix, total := range want {
			_, got, err := tx.Users(slug, store.UserQuery{Prefix: prefix, Limit: 1})
			if err != nil {
				return err
			}
			if got != total {
				t.Errorf("%s: Users(%q) total = %d, want %d", step, prefix, got, total)
			}
		}
		return nil
	})
}

// testPrefixCounts checks searches and their totals while the fields they
// match change: a store may keep counts per prefix, which every write must
// keep exact.
func testPrefixCounts(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Updates", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putUsers(t, s, slugA,
			user(1, "alice", "alice@example.com", "Alice Liddell"),
			user(2, "bob", "bob@example.com", "Bob Builder"),
			user(3, "albert", "bert@example.com", "Albert Einstein"))
		putUsers(t, s, slugB, user(1, "alma", "alma@example.com", "Alma Mahler"))
		steps := []struct {
			name   string
			change func(tx store.Tx) error
			wants  []prefixWant
		}{
			{"created", nil, []prefixWant{
				{"a", []int64{1, 3}}, {"al", []int64{1, 3}}, {"ali", []int64{1}},
				{"alb", []int64{3}}, {"b", []int64{2, 3}}, {"be", []int64{3}},
				{"bo", []int64{2}}, {"bob", []int64{2}}, {"bob@", []int64{2}},
				{"z", nil}, {"alm", nil},
			}},
			{"username changed", func(tx store.Tx) error {
				return tx.PutUser(slugA, user(2, "alfred", "bob@example.com", "Bob Builder"))
			}, []prefixWant{
				{"a", []int64{1, 2, 3}}, {"alf", []int64{2}}, {"alfred", []int64{2}},
				{"b", []int64{2, 3}}, {"bob", []int64{2}},
			}},
			{"email changed", func(tx store.Tx) error {
				return tx.PutUser(slugA, user(1, "alice", "zed@example.com", "Alice Liddell"))
			}, []prefixWant{
				{"z", []int64{1}}, {"ze", []int64{1}}, {"zed", []int64{1}},
				{"a", []int64{1, 2, 3}}, {"ali", []int64{1}}, {"alice@", nil},
			}},
			{"full name changed", func(tx store.Tx) error {
				return tx.PutUser(slugA, user(3, "albert", "bert@example.com", "Zelda Fitz"))
			}, []prefixWant{
				{"z", []int64{1, 3}}, {"ze", []int64{1, 3}}, {"zed", []int64{1}},
				{"zel", []int64{3}}, {"alb", []int64{3}}, {"a", []int64{1, 2, 3}},
			}},
			{"same record again", func(tx store.Tx) error {
				return tx.PutUser(slugA, user(3, "albert", "bert@example.com", "Zelda Fitz"))
			}, []prefixWant{
				{"z", []int64{1, 3}}, {"alb", []int64{3}}, {"b", []int64{2, 3}},
			}},
			{"username away from a shared prefix", func(tx store.Tx) error {
				return tx.PutUser(slugA, user(3, "carl", "bert@example.com", "Zelda Fitz"))
			}, []prefixWant{
				{"a", []int64{1, 2}}, {"al", []int64{1, 2}}, {"alb", nil},
				{"c", []int64{3}}, {"b", []int64{2, 3}},
			}},
			{"every field changed", func(tx store.Tx) error {
				return tx.PutUser(slugA, user(2, "dave", "dave@example.com", "Dave"))
			}, []prefixWant{
				{"b", []int64{3}}, {"bo", nil}, {"bob", nil}, {"d", []int64{2}},
				{"dav", []int64{2}}, {"a", []int64{1}}, {"alf", nil},
			}},
			{"deleted", func(tx store.Tx) error {
				return tx.DeleteUser(slugA, 1)
			}, []prefixWant{
				{"a", nil}, {"ali", nil}, {"z", []int64{3}}, {"ze", []int64{3}},
				{"zed", nil}, {"d", []int64{2}},
			}},
		}
		for _, step := range steps {
			if step.change != nil {
				update(t, s, step.change)
			}
			checkPrefixes(t, s, slugA, step.name, step.wants)
		}
		// The other workspace's counts are its own.
		checkPrefixes(t, s, slugB, "other workspace", []prefixWant{
			{"a", []int64{1}}, {"alm", []int64{1}}, {"b", nil}, {"z", nil},
		})
	})

	t.Run("LongSharedPrefixes", func(t *testing.T) {
		// 4,200 usernames under "emp0": more than a store that counts long
		// prefixes only below some thousands of users may walk.
		s := newStoreWith(t, newStore, slugA)
		person := func(i int) store.User {
			return user(int64(i), fmt.Sprintf("emp%05d", i), fmt.Sprintf("e%05d@x.example", i), "Pat")
		}
		for _, batch := range [][2]int{{1, 4097}, {4098, 4200}} {
			var users []store.User
			for i := batch[0]; i <= batch[1]; i++ {
				users = append(users, person(i))
			}
			putUsers(t, s, slugA, users...)
		}
		checkTotals(t, s, slugA, "created", map[string]int{
			"emp": 4200, "emp0": 4200, "emp00": 999, "emp000": 99, "emp04": 201, "emp041": 100,
			"emp0420": 1, "EMP04200": 1, "emp042000": 0, "e": 4200, "e0": 4200, "pat": 4200, "z": 0,
		})
		update(t, s, func(tx store.Tx) error {
			for i := 1; i <= 300; i++ {
				u := person(i)
				u.Username = fmt.Sprintf("zed%d", i)
				if err := tx.PutUser(slugA, u); err != nil {
					return err
				}
			}
			return nil
		})
		checkTotals(t, s, slugA, "renamed", map[string]int{
			"emp": 3900, "emp0": 3900, "emp00": 699, "emp000": 0, "emp04": 201, "e": 4200, "z": 300, "zed1": 111,
		})
	})

	t.Run("ManyChunks", func(t *testing.T) {
		// Ids far apart, so that the users spread over hundreds of
		// chunks of 1024 ids, and first letters both common and rare.
		s := newStoreWith(t, newStore, slugA)
		const n = 600
		users := make([]store.User, n)
		for i := range n {
			name := fmt.Sprintf("Name %d", i)
			if i%50 == 0 {
				name = fmt.Sprintf("Quinn %d", i)
			}
			email := fmt.Sprintf("b%d@x.example", i)
			if i%3 == 0 {
				email = fmt.Sprintf("a%d@x.example", i)
			}
			users[i] = user(int64(i)*611+1, fmt.Sprintf("u%03d", i), email, name)
		}
		for i := 0; i < n; i += 100 {
			putUsers(t, s, slugA, users[i:i+100]...)
		}
		checkTotals(t, s, slugA, "written", map[string]int{
			"q": 12, "qu": 12, "quinn 5": 3, "n": 588, "na": 588, "a": 200, "b": 400,
			"u": 600, "u0": 100, "u00": 10, "u5": 100, "u55": 10, "u555": 1, "x": 0,
		})
		naive := func(prefix string) []int64 {
			var ids []int64
			for _, u := range users {
				if strings.HasPrefix(store.Fold(u.Username), prefix) ||
					strings.HasPrefix(store.Fold(u.Email), prefix) ||
					strings.HasPrefix(store.Fold(u.FullName), prefix) {
					ids = append(ids, u.ID)
				}
			}
			return ids
		}
		view(t, s, func(tx store.Tx) error {
			for _, prefix := range []string{"q", "n", "a", "b", "u", "u0", "u00", "na", "Q"} {
				want := naive(store.Fold(prefix))
				for _, limit := range []int{1, 20, 100} {
					for _, offset := range []int{0, 1, 11, 12, 99, 199, 200, 399, 587, 599, 600} {
						q := store.UserQuery{Prefix: prefix, Offset: offset, Limit: limit}
						got, _, err := tx.Users(slugA, q)
						if err != nil {
							return err
						}
						page := want[min(offset, len(want)):min(offset+limit, len(want))]
						if diff := cmp.Diff(page, userIDs(got), equateEmpty); diff != "" {
							t.Errorf("Users(%+v) ids (-want +got):\n%s", q, diff)
							return nil
						}
					}
				}
			}
			return nil
		})
	})

	t.Run("ConcurrentWriters", func(t *testing.T) {
		// Eight writers each create twenty users, rename the even ones'
		// full names and delete every fifth, one transaction each.
		s := newStoreWith(t, newStore, slugA)
		const writers, each = 8, 20
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					id := int64(w*100 + i + 1)
					name := fmt.Sprintf("w%dn%02d", w, i)
					err := s.Update(context.Background(), func(tx store.Tx) error {
						return tx.PutUser(slugA, user(id, name, name+"@example.com", fmt.Sprintf("Writer %d", w)))
					})
					if err == nil && i%2 == 0 {
						err = s.Update(context.Background(), func(tx store.Tx) error {
							return tx.PutUser(slugA, user(id, name, name+"@example.com", "Renamed"))
						})
					}
					if err == nil && i%5 == 0 {
						err = s.Update(context.Background(), func(tx store.Tx) error { return tx.DeleteUser(slugA, id) })
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// Each writer keeps 16 users (0, 5, 10 and 15 are gone): 8 even,
		// renamed, and 8 odd, still named after the writer.
		checkTotals(t, s, slugA, "written", map[string]int{
			"w": 128, "w3": 16, "w3n": 16, "w3n1": 8, "w3n05": 0, "r": 64, "re": 64,
			"ren": 64, "wri": 64, "writer 3": 8, "writer": 64, "e": 0,
		})
	})
}
