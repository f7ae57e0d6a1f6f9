package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// testUsers checks PutUser and User.
func testUsers(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		noPassword := user(2, "bob", "bob@example.com", "")
		noPassword.PasswordHash = ""
		noPassword.UpdatedAt = time.Time{}
		noPassword.Enabled = false
		want := []store.User{
			user(1, "alice", "alice@example.com", "Alice Liddell"),
			noPassword,
			user(3, "Émile", "EMILE@Example.COM", "Émile Zola"),
			user(1<<40, "big", "big@example.com", "Big Id"),
		}
		putUsers(t, s, slugA, want...)
		view(t, s, func(tx store.Tx) error {
			for _, u := range want {
				got, err := tx.User(slugA, u.ID)
				if err != nil {
					t.Errorf("User(%d): %v", u.ID, err)
					continue
				}
				if diff := cmp.Diff(u, got); diff != "" {
					t.Errorf("User(%d) mismatch (-want +got):\n%s", u.ID, diff)
				}
			}
			return nil
		})
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"), user(2, "bob", "bob@example.com", "Bob"))
		changed := store.User{
			ID:            1,
			Username:      "alice",
			Email:         "alice@example.com",
			FullName:      "Alice Pleasance Liddell",
			EmailVerified: true,
			Enabled:       false,
			MFAEnabled:    true,
			PasswordHash:  "$2a$10$changed",
			CreatedAt:     at(1),
			UpdatedAt:     at(100),
		}
		putUsers(t, s, slugA, changed)
		view(t, s, func(tx store.Tx) error {
			got, err := tx.User(slugA, 1)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(changed, got); diff != "" {
				t.Errorf("User(1) mismatch (-want +got):\n%s", diff)
			}
			users, total, err := tx.Users(slugA, store.UserQuery{Limit: 10})
			if err != nil {
				return err
			}
			want := []store.User{changed, user(2, "bob", "bob@example.com", "Bob")}
			if diff := cmp.Diff(want, users); diff != "" || total != 2 {
				t.Errorf("Users total = %d, want 2; mismatch (-want +got):\n%s", total, diff)
			}
			return nil
		})
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"))
		view(t, s, func(tx store.Tx) error {
			for _, id := range []int64{0, 2, -1} {
				_, err := tx.User(slugA, id)
				checkErr(t, fmt.Sprintf("User(%q, %d)", slugA, id), err, store.ErrNotFound)
			}
			_, err := tx.User(slugB, 1)
			checkErr(t, "User of another workspace", err, store.ErrNotFound)
			return nil
		})
	})

	t.Run("WorkspacesAreSeparate", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		ua := user(1, "alice", "alice@example.com", "Alice Acme")
		ub := user(1, "alice", "alice@example.com", "Alice Globex")
		ub.MFAEnabled = !ua.MFAEnabled
		putUsers(t, s, slugA, ua)
		putUsers(t, s, slugB, ub) // same id, username and email: no conflict
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				slug        string
				want, other store.User
			}{{slugA, ua, ub}, {slugB, ub, ua}} {
				got, err := tx.User(c.slug, 1)
				if err != nil {
					return err
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("User(%q, 1) mismatch (-want +got):\n%s", c.slug, diff)
				}
				users, total, err := tx.Users(c.slug, store.UserQuery{Prefix: c.want.FullName, Limit: 10})
				if err != nil {
					return err
				}
				if total != 1 || len(users) != 1 || users[0].FullName != c.want.FullName {
					t.Errorf("Users(%q, full name) = %v, %d; want only %q", c.slug, users, total, c.want.FullName)
				}
				users, total, err = tx.Users(c.slug, store.UserQuery{Prefix: c.other.FullName, Limit: 10})
				if err != nil {
					return err
				}
				if total != 0 || len(users) != 0 {
					t.Errorf("Users(%q, other workspace's full name) = %v, %d; want none", c.slug, users, total)
				}
			}
			return nil
		})
	})
}

// testUserIndexes checks the username and email indexes: lookups,
// conflicts, and maintenance on update.
func testUserIndexes(t *testing.T, newStore func(t *testing.T) store.Store) {
	alice := user(1, "Alice", "Alice@Example.com", "Alice Liddell")
	bob := user(2, "bob", "bob@example.com", "Bob Builder")

	t.Run("Lookup", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		putUsers(t, s, slugA, alice, bob, user(3, "ÉMILE", "émile@example.com", "Émile"))
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				byEmail bool
				key     string
				want    int64 // 0: ErrNotFound
			}{
				{false, "alice", 1},
				{false, "ALICE", 1},
				{false, "Alice", 1},
				{false, "bob", 2},
				{false, "BoB", 2},
				{false, "émile", 3},
				{false, "Émile", 3},
				{false, "alic", 0},
				{false, "alice ", 0},
				{false, "alice@example.com", 0},
				{false, "carol", 0},
				{true, "alice@example.com", 1},
				{true, "ALICE@EXAMPLE.COM", 1},
				{true, "Bob@Example.Com", 2},
				{true, "ÉMILE@EXAMPLE.COM", 3},
				{true, "alice", 0},
				{true, "bob@example.co", 0},
			} {
				var id int64
				var err error
				name := "UserIDByUsername"
				if c.byEmail {
					name = "UserIDByEmail"
					id, err = tx.UserIDByEmail(slugA, c.key)
				} else {
					id, err = tx.UserIDByUsername(slugA, c.key)
				}
				if c.want == 0 {
					checkErr(t, fmt.Sprintf("%s(%q)", name, c.key), err, store.ErrNotFound)
					continue
				}
				if err != nil || id != c.want {
					t.Errorf("%s(%q) = %d, %v; want %d", name, c.key, id, err, c.want)
				}
			}
			_, err := tx.UserIDByUsername(slugB, "alice")
			checkErr(t, "UserIDByUsername in another workspace", err, store.ErrNotFound)
			_, err = tx.UserIDByEmail(slugB, "alice@example.com")
			checkErr(t, "UserIDByEmail in another workspace", err, store.ErrNotFound)
			return nil
		})
	})

	t.Run("Conflict", func(t *testing.T) {
		for _, c := range []struct {
			name string
			u    store.User
		}{
			{"NewUserSameUsername", user(3, "alice", "carol@example.com", "Carol")},
			{"NewUserUsernameOtherCase", user(3, "ALICE", "carol@example.com", "Carol")},
			{"NewUserSameEmail", user(3, "carol", "alice@example.com", "Carol")},
			{"NewUserEmailOtherCase", user(3, "carol", "ALICE@EXAMPLE.COM", "Carol")},
			{"UpdateToTakenUsername", user(2, "aLiCe", "bob2@example.com", "Carol")},
			{"UpdateToTakenEmail", user(2, "carol", "alice@EXAMPLE.com", "Carol")},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := newStoreWith(t, newStore, slugA)
				putUsers(t, s, slugA, alice, bob)
				before := takeSnapshot(t, s, slugA, c.u.Username, c.u.Email, "carol", "carol@example.com", "bob2@example.com")
				var err error
				update(t, s, func(tx store.Tx) error {
					err = tx.PutUser(slugA, c.u)
					return nil // commit: the refused PutUser must have written nothing
				})
				checkErr(t, "PutUser", err, store.ErrConflict)
				after := takeSnapshot(t, s, slugA, c.u.Username, c.u.Email, "carol", "carol@example.com", "bob2@example.com")
				if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
					t.Errorf("refused PutUser changed the store (-before +after):\n%s", diff)
				}
				view(t, s, func(tx store.Tx) error {
					users, total, err := tx.Users(slugA, store.UserQuery{Prefix: "carol", Limit: 10})
					if err != nil || total != 0 || len(users) != 0 {
						t.Errorf("Users(carol) = %v, %d, %v; want none", users, total, err)
					}
					return nil
				})
			})
		}
	})

	t.Run("KeepOwnUsernameAndEmail", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putUsers(t, s, slugA, alice, bob)
		same := alice
		same.FullName = "Alice Again"
		recased := alice
		recased.Username, recased.Email = "ALICE", "alice@example.COM"
		for _, u := range []store.User{alice, same, recased} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.PutUser(slugA, u)
				return nil
			})
			if err != nil {
				t.Errorf("PutUser(%+v) keeping its own username and email: %v", u, err)
			}
		}
		view(t, s, func(tx store.Tx) error {
			got, err := tx.User(slugA, 1)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(recased, got); diff != "" {
				t.Errorf("User(1) mismatch (-want +got):\n%s", diff)
			}
			for _, key := range []string{"alice", "Alice", "ALICE"} {
				if id, err := tx.UserIDByUsername(slugA, key); err != nil || id != 1 {
					t.Errorf("UserIDByUsername(%q) = %d, %v; want 1", key, id, err)
				}
			}
			if id, err := tx.UserIDByEmail(slugA, "Alice@Example.com"); err != nil || id != 1 {
				t.Errorf("UserIDByEmail = %d, %v; want 1", id, err)
			}
			return nil
		})
	})

	t.Run("ChangeUsernameAndEmail", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putUsers(t, s, slugA, alice, bob)
		renamed := alice
		renamed.Username, renamed.Email = "alicia", "alicia@example.org"
		putUsers(t, s, slugA, renamed)
		view(t, s, func(tx store.Tx) error {
			_, err := tx.UserIDByUsername(slugA, "alice")
			checkErr(t, "UserIDByUsername(old)", err, store.ErrNotFound)
			_, err = tx.UserIDByEmail(slugA, "alice@example.com")
			checkErr(t, "UserIDByEmail(old)", err, store.ErrNotFound)
			if id, err := tx.UserIDByUsername(slugA, "ALICIA"); err != nil || id != 1 {
				t.Errorf("UserIDByUsername(new) = %d, %v; want 1", id, err)
			}
			if id, err := tx.UserIDByEmail(slugA, "Alicia@Example.org"); err != nil || id != 1 {
				t.Errorf("UserIDByEmail(new) = %d, %v; want 1", id, err)
			}
			return nil
		})
		// The old username and email are free for another user.
		carol := user(3, "alice", "ALICE@example.com", "Carol")
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutUser(slugA, carol)
			return nil
		})
		if err != nil {
			t.Fatalf("PutUser taking a freed username and email: %v", err)
		}
		view(t, s, func(tx store.Tx) error {
			if id, err := tx.UserIDByUsername(slugA, "alice"); err != nil || id != 3 {
				t.Errorf("UserIDByUsername(freed) = %d, %v; want 3", id, err)
			}
			if id, err := tx.UserIDByEmail(slugA, "alice@example.com"); err != nil || id != 3 {
				t.Errorf("UserIDByEmail(freed) = %d, %v; want 3", id, err)
			}
			if id, err := tx.UserIDByUsername(slugA, "alicia"); err != nil || id != 1 {
				t.Errorf("UserIDByUsername(alicia) = %d, %v; want 1", id, err)
			}
			return nil
		})
		// And the user who gave them up cannot take them back.
		update(t, s, func(tx store.Tx) error {
			err = tx.PutUser(slugA, alice)
			return nil
		})
		checkErr(t, "PutUser taking back a username now owned by another", err, store.ErrConflict)
	})

	t.Run("SwapInOneTransaction", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putUsers(t, s, slugA, alice, bob)
		tmp := alice
		tmp.Username, tmp.Email = "tmp", "tmp@example.com"
		a2 := alice
		a2.Username, a2.Email = bob.Username, bob.Email
		b2 := bob
		b2.Username, b2.Email = alice.Username, alice.Email
		putUsers(t, s, slugA, tmp, b2, a2)
		view(t, s, func(tx store.Tx) error {
			if id, err := tx.UserIDByUsername(slugA, "alice"); err != nil || id != 2 {
				t.Errorf("UserIDByUsername(alice) = %d, %v; want 2", id, err)
			}
			if id, err := tx.UserIDByEmail(slugA, "bob@example.com"); err != nil || id != 1 {
				t.Errorf("UserIDByEmail(bob) = %d, %v; want 1", id, err)
			}
			_, err := tx.UserIDByUsername(slugA, "tmp")
			checkErr(t, "UserIDByUsername(tmp)", err, store.ErrNotFound)
			return nil
		})
	})

	t.Run("FullNameIndexFollowsUpdate", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putUsers(t, s, slugA, alice, bob)
		renamed := bob
		renamed.FullName = "Robert Smith"
		putUsers(t, s, slugA, renamed)
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				prefix string
				want   []int64
			}{
				{"Bob Bu", nil},
				{"builder", nil},
				{"robert", []int64{2}},
				{"ROBERT SM", []int64{2}},
				{"bob", []int64{2}}, // still matches the username
			} {
				users, total, err := tx.Users(slugA, store.UserQuery{Prefix: c.prefix, Limit: 10})
				if err != nil {
					return err
				}
				if diff := cmp.Diff(c.want, userIDs(users), equateEmpty); diff != "" || total != len(c.want) {
					t.Errorf("Users(%q) total %d, want %d; ids (-want +got):\n%s", c.prefix, total, len(c.want), diff)
				}
			}
			return nil
		})
	})
}

// userIDs returns the ids of the users.
func userIDs(users []store.User) []int64 {
	var ids []int64
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	return ids
}

// testUserQueries checks Users: prefix matching, ordering, totals and paging.
func testUserQueries(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Prefix", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		users := []store.User{
			user(30, "alice", "alice@example.com", "Alice Liddell"),
			user(10, "ALBERT", "bert@example.com", "Albert Einstein"),
			user(20, "bob", "bob@example.com", "Bob Builder"),
			user(40, "a_b", "ab@example.com", "Underscore"),
			user(50, "axb", "axb@example.com", "Letter X"),
			user(60, "a%c", "pct@example.com", "Percent"),
			user(70, "abc", "abc@example.com", "Plain"),
			user(80, "a.c", "dot@example.com", "Dot"),
			user(90, "x", "x@example.com", "[brackets] \\ and *stars*"),
			user(100, "émile", "emile@example.com", "Émile Zola"),
			user(110, "carol", "carol@example.com", "John Smith"),
		}
		putUsers(t, s, slugA, users...)
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				prefix string
				want   []int64
			}{
				{"", []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110}},
				{"al", []int64{10, 30}},
				{"AL", []int64{10, 30}},
				{"aLiCe", []int64{30}},
				{"alice liddell", []int64{30}},
				{"alice@", []int64{30}},
				{"bert", []int64{10}},          // email only
				{"einstein", nil},              // not a prefix of the full name
				{"smith", nil},                 // not a prefix of the full name
				{"b", []int64{10, 20}},         // username and email of 20, email of 10
				{"bob", []int64{20}},           // username, email and full name: once
				{"a_", []int64{40}},            // literal underscore
				{"a%", []int64{60}},            // literal percent
				{"a.", []int64{80}},            // literal dot
				{"[b", []int64{90}},            // literal bracket
				{"[brackets] \\", []int64{90}}, // literal backslash
				{"*", nil},                     // not a wildcard
				{"%", nil},                     // not a wildcard
				{"_", nil},                     // not a wildcard
				{".", nil},                     // not a wildcard
				{"a", []int64{10, 30, 40, 50, 60, 70, 80}},
				{"ab", []int64{40, 70}}, // email of 40
				{"ÉMILE", []int64{100}},
				{"émile z", []int64{100}},
				{"emile", []int64{100}}, // email
				{"zzz", nil},
				{"alice liddell and more", nil},
			} {
				got, total, err := tx.Users(slugA, store.UserQuery{Prefix: c.prefix, Limit: 100})
				if err != nil {
					t.Errorf("Users(%q): %v", c.prefix, err)
					continue
				}
				if diff := cmp.Diff(c.want, userIDs(got), equateEmpty); diff != "" {
					t.Errorf("Users(%q) ids mismatch (-want +got):\n%s", c.prefix, diff)
				}
				if total != len(c.want) {
					t.Errorf("Users(%q) total = %d, want %d", c.prefix, total, len(c.want))
				}
			}
			// The records returned are the records written.
			got, _, err := tx.Users(slugA, store.UserQuery{Prefix: "al", Limit: 100})
			if err != nil {
				return err
			}
			if diff := cmp.Diff([]store.User{users[1], users[0]}, got); diff != "" {
				t.Errorf("Users(al) mismatch (-want +got):\n%s", diff)
			}
			return nil
		})
	})

	t.Run("PrefixEdges", func(t *testing.T) {
		// Code points at the edges of Unicode and around the surrogates,
		// where a store that searches a range of an ordered index must
		// compute the range's end with care.
		s := newStoreWith(t, newStore, slugA)
		names := map[int64]string{
			1: "a\U0010FFFF",
			2: "a\U0010FFFFz",
			3: "b",
			4: "a\uD7FFx",
			5: "a\uE000",
			6: "\U0010FFFF\U0010FFFF",
			7: "aÿ",
			8: "aĀ",
		}
		for id, name := range names {
			putUsers(t, s, slugA, user(id, fmt.Sprintf("user%d", id), fmt.Sprintf("user%d@example.com", id), name))
		}
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				prefix string
				want   []int64
			}{
				{"a", []int64{1, 2, 4, 5, 7, 8}},
				{"a\U0010FFFF", []int64{1, 2}},
				{"a\U0010FFFFz", []int64{2}},
				{"\U0010FFFF", []int64{6}},
				{"\U0010FFFF\U0010FFFF", []int64{6}},
				{"\U0010FFFF\U0010FFFF\U0010FFFF", nil},
				{"a\uD7FF", []int64{4}},
				{"a\uE000", []int64{5}},
				{"aÿ", []int64{7}},
				{"aā", []int64{8}}, // folded
				{"b", []int64{3}},
			} {
				got, total, err := tx.Users(slugA, store.UserQuery{Prefix: c.prefix, Limit: 100})
				if err != nil {
					t.Errorf("Users(%q): %v", c.prefix, err)
					continue
				}
				if diff := cmp.Diff(c.want, userIDs(got), equateEmpty); diff != "" || total != len(c.want) {
					t.Errorf("Users(%+q) total %d, want %d; ids (-want +got):\n%s", c.prefix, total, len(c.want), diff)
				}
			}
			return nil
		})
	})

	t.Run("Paging", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var all []store.User
		for _, id := range []int64{9, 3, 7, 1, 5} {
			all = append(all, user(id, fmt.Sprintf("user%d", id), fmt.Sprintf("u%d@example.com", id), "Same Name"))
		}
		putUsers(t, s, slugA, all...)
		putUsers(t, s, slugA, user(4, "other", "other@example.com", "Other"))
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				prefix        string
				offset, limit int
				want          []int64
				total         int
			}{
				{"same", 0, 10, []int64{1, 3, 5, 7, 9}, 5},
				{"same", 0, 2, []int64{1, 3}, 5},
				{"same", 2, 2, []int64{5, 7}, 5},
				{"same", 4, 2, []int64{9}, 5},
				{"same", 5, 2, nil, 5},
				{"same", 50, 2, nil, 5},
				{"same", 1, 1, []int64{3}, 5},
				{"same", 0, 0, nil, 5},
				{"same", 2, 0, nil, 5},
				{"same", 0, -1, nil, 5},
				{"", 0, 3, []int64{1, 3, 4}, 6},
				{"", 3, 3, []int64{5, 7, 9}, 6},
				{"", 6, 3, nil, 6},
				{"", 0, 0, nil, 6},
				{"none", 0, 10, nil, 0},
				{"none", 3, 10, nil, 0},
			} {
				q := store.UserQuery{Prefix: c.prefix, Offset: c.offset, Limit: c.limit}
				got, total, err := tx.Users(slugA, q)
				if err != nil {
					t.Errorf("Users(%+v): %v", q, err)
					continue
				}
				if diff := cmp.Diff(c.want, userIDs(got), equateEmpty); diff != "" {
					t.Errorf("Users(%+v) ids mismatch (-want +got):\n%s", q, diff)
				}
				if total != c.total {
					t.Errorf("Users(%+v) total = %d, want %d", q, total, c.total)
				}
			}
			return nil
		})
	})

	t.Run("DeepOffsets", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		const n = 150
		heads := []string{"al", "Bo", "ca", "al_", "AL%"}
		firsts := []string{"Clara", "dora", "Alma", "Boris", "Cal"}
		var users []store.User
		for i := range n {
			id := int64(i*3 + i%3 + 1) // ascending with gaps
			users = append(users, user(id,
				fmt.Sprintf("%s%03d", heads[i%len(heads)], i),
				fmt.Sprintf("u%d@%s.example", i, []string{"alpha", "beta"}[i%2]),
				fmt.Sprintf("%s %d", firsts[i%len(firsts)], i)))
		}
		shuffled := append([]store.User(nil), users...)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) {
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		})
		// Several transactions, so that ids arrive out of order across commits.
		for i := 0; i < n; i += 40 {
			putUsers(t, s, slugA, shuffled[i:min(i+40, n)]...)
		}

		naive := func(prefix string) []int64 {
			p := store.Fold(prefix)
			var ids []int64
			for _, u := range users { // users is in ascending id order
				if strings.HasPrefix(store.Fold(u.Username), p) ||
					strings.HasPrefix(store.Fold(u.Email), p) ||
					strings.HasPrefix(store.Fold(u.FullName), p) {
					ids = append(ids, u.ID)
				}
			}
			return ids
		}
		view(t, s, func(tx store.Tx) error {
			for _, prefix := range []string{"", "al", "AL_", "al%", "bo", "u1", "U12", "cl", "cal", "dora 1", "ZZ"} {
				want := naive(prefix)
				for _, limit := range []int{1, 7, 50} {
					for offset := 0; offset <= len(want)+2; offset++ {
						q := store.UserQuery{Prefix: prefix, Offset: offset, Limit: limit}
						got, total, err := tx.Users(slugA, q)
						if err != nil {
							return fmt.Errorf("Users(%+v): %w", q, err)
						}
						page := want[min(offset, len(want)):min(offset+limit, len(want))]
						if diff := cmp.Diff(page, userIDs(got), equateEmpty); diff != "" || total != len(want) {
							t.Errorf("Users(%+v) total %d, want %d; ids (-want +got):\n%s", q, total, len(want), diff)
							return nil // one report is enough
						}
					}
				}
			}
			return nil
		})
	})
}
