package boltstore_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// idsWithGaps returns ascending ids that leave gaps, straddle chunk
// boundaries (a chunk is 1024 consecutive keys), leave some chunks empty
// and include the extremes of int64.
func idsWithGaps() []int64 {
	ids := []int64{math.MinInt64, -5000, -1025, -1024, -1, 0, 1, 2, 3, 1023, 1024, 1025, 2047, 2048}
	for id := int64(3000); id < 9000; id += 7 {
		ids = append(ids, id)
	}
	for id := int64(20_000); id < 20_300; id++ {
		ids = append(ids, id)
	}
	ids = append(ids, 1<<40, 1<<40+1, math.MaxInt64-1, math.MaxInt64)
	slices.Sort(ids)
	return ids
}

// putUsers writes a user per id, in a shuffled order over several
// transactions, then writes some of them again: replacing a user must not
// count it twice.
func putUsers(t *testing.T, s store.Store, ids []int64) {
	t.Helper()
	shuffled := slices.Clone(ids)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	shuffled = append(shuffled, ids[:len(ids)/3]...)
	for batch := range slices.Chunk(shuffled, 200) {
		mustUpdate(t, s, func(tx store.Tx) error {
			for _, id := range batch {
				if err := tx.PutUser(testSlug, userWithID(id)); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// userWithID returns a user whose unique fields derive from the id.
func userWithID(id int64) store.User {
	return store.User{
		ID:        id,
		Username:  fmt.Sprintf("user%d", id),
		Email:     fmt.Sprintf("user%d@example.com", id),
		FullName:  "Test User",
		Enabled:   true,
		CreatedAt: testTime,
		UpdatedAt: testTime,
	}
}

// TestUsersPagesMatchNaivePaging checks the chunk-count navigation against
// slicing the sorted ids, for every offset and several limits.
func TestUsersPagesMatchNaivePaging(t *testing.T) {
	s := newStore(t)
	ids := idsWithGaps()
	putUsers(t, s, ids)

	limits := []int{-1, 0, 1, 3, 100, 1024, len(ids) + 5}
	for offset := -2; offset <= len(ids)+2; offset++ {
		for _, limit := range limits {
			lo := min(max(offset, 0), len(ids))
			hi := lo
			if limit > 0 {
				hi = min(lo+limit, len(ids))
			}
			want := page{IDs: ids[lo:hi], Total: len(ids)}
			got := listIDs(t, s, store.UserQuery{Offset: offset, Limit: limit})
			if diff := cmp.Diff(want, got, cmp.Comparer(sameIDs)); diff != "" {
				t.Fatalf("Users(offset %d, limit %d) mismatch (-want +got):\n%s", offset, limit, diff)
			}
		}
	}
}

// page is the ids of one page of Users and the total it reported.
type page struct {
	IDs   []int64
	Total int
}

// sameIDs compares id lists, treating nil and empty as equal.
func sameIDs(a, b []int64) bool { return slices.Equal(a, b) }

// listIDs runs one Users query and returns the ids of the page.
func listIDs(t *testing.T, s store.Store, q store.UserQuery) page {
	t.Helper()
	var p page
	mustView(t, s, func(tx store.Tx) error {
		users, total, err := tx.Users(testSlug, q)
		for _, u := range users {
			p.IDs = append(p.IDs, u.ID)
		}
		p.Total = total
		return err
	})
	return p
}

func TestUsersPrefixSearch(t *testing.T) {
	s := newStore(t)
	users := []store.User{
		{ID: 1, Username: "Alice", Email: "alice@example.com", FullName: "Alice Liddell"},
		{ID: 2, Username: "bob", Email: "ALIbaba@example.com", FullName: "Robert"},
		{ID: 3, Username: "carol", Email: "carol@example.com", FullName: "Alicia Keys"},
		{ID: 4, Username: "a_b", Email: "a_b@example.com", FullName: "Ab Normal"},
		{ID: 5, Username: "abc", Email: "abc@example.com", FullName: "Zed"},
		{ID: 6, Username: "%", Email: "percent@example.com", FullName: "Per Cent"},
		{ID: 7, Username: "Émile", Email: "emile@example.com", FullName: "Émile Zola"},
		// The key of id -1 in the name index is "x" followed by 0x7F 0xFF...,
		// so a prefix "x\x7f" matches the key but not the name.
		{ID: -1, Username: "neg", Email: "neg@example.com", FullName: "x"},
	}
	mustUpdate(t, s, func(tx store.Tx) error {
		for _, u := range users {
			if err := tx.PutUser(testSlug, u); err != nil {
				return err
			}
		}
		return nil
	})
	tests := []struct {
		name string
		q    store.UserQuery
		want page
	}{
		{"matches on three fields counted once", store.UserQuery{Prefix: "alice", Limit: 10}, page{[]int64{1}, 1}},
		{"matches across fields", store.UserQuery{Prefix: "ali", Limit: 10}, page{[]int64{1, 2, 3}, 3}},
		{"case-insensitive", store.UserQuery{Prefix: "ALI", Limit: 10}, page{[]int64{1, 2, 3}, 3}},
		{"underscore is literal", store.UserQuery{Prefix: "a_", Limit: 10}, page{[]int64{4}, 1}},
		{"no wildcard match", store.UserQuery{Prefix: "ab", Limit: 10}, page{[]int64{4, 5}, 2}},
		{"percent is literal", store.UserQuery{Prefix: "%", Limit: 10}, page{[]int64{6}, 1}},
		{"non-ASCII folded", store.UserQuery{Prefix: "éMI", Limit: 10}, page{[]int64{7}, 1}},
		{"unaccented matches email only", store.UserQuery{Prefix: "emi", Limit: 10}, page{[]int64{7}, 1}},
		{"prefix spans a space", store.UserQuery{Prefix: "alice l", Limit: 10}, page{[]int64{1}, 1}},
		{"longer than the value", store.UserQuery{Prefix: "alice liddellx", Limit: 10}, page{nil, 0}},
		{"no match", store.UserQuery{Prefix: "zzz", Limit: 10}, page{nil, 0}},
		{"short name", store.UserQuery{Prefix: "x", Limit: 10}, page{[]int64{-1}, 1}},
		{"id bytes are not part of the name", store.UserQuery{Prefix: "x\x7f", Limit: 10}, page{nil, 0}},
		{"offset and limit", store.UserQuery{Prefix: "ali", Offset: 1, Limit: 1}, page{[]int64{2}, 3}},
		{"offset past the end", store.UserQuery{Prefix: "ali", Offset: 5, Limit: 10}, page{nil, 3}},
		{"limit zero", store.UserQuery{Prefix: "ali", Limit: 0}, page{nil, 3}},
		{"negative offset", store.UserQuery{Prefix: "ali", Offset: -4, Limit: 2}, page{[]int64{1, 2}, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := listIDs(t, s, tt.q)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(sameIDs)); diff != "" {
				t.Errorf("Users(%+v) mismatch (-want +got):\n%s", tt.q, diff)
			}
		})
	}
}

// TestPutUserMovesIndexEntries checks that replacing a user frees its old
// username, email and name and that a conflicting write changes nothing.
func TestPutUserMovesIndexEntries(t *testing.T) {
	s := newStore(t)
	alice := store.User{ID: 1, Username: "alice", Email: "alice@example.com", FullName: "Alice"}
	bob := store.User{ID: 2, Username: "bob", Email: "bob@example.com", FullName: "Bob"}
	renamed := alice
	renamed.Username, renamed.Email, renamed.FullName = "Alicia", "alicia@example.com", "Alicia"
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(tx.PutUser(testSlug, alice), tx.PutUser(testSlug, bob), tx.PutUser(testSlug, renamed))
	})

	conflicts := []struct {
		name string
		user store.User
	}{
		{"username of another user, other case", store.User{ID: 2, Username: "ALICIA", Email: "bob@example.com"}},
		{"email of another user", store.User{ID: 3, Username: "carol", Email: "Bob@Example.com"}},
	}
	for _, c := range conflicts {
		t.Run(c.name, func(t *testing.T) {
			err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutUser(testSlug, c.user) })
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("PutUser: got error %v, want store.ErrConflict", err)
			}
		})
	}

	type lookups struct {
		ByOldUsername, ByOldEmail, ByNewUsername, ByNewEmail, ByBob int64
		OldName, NewName                                            page
	}
	want := lookups{ByOldUsername: 0, ByOldEmail: 0, ByNewUsername: 1, ByNewEmail: 1, ByBob: 2,
		OldName: page{nil, 0}, // "alice" is no prefix of "alicia"
		NewName: page{[]int64{1}, 1}}
	var got lookups
	mustView(t, s, func(tx store.Tx) error {
		got.ByOldUsername, _ = tx.UserIDByUsername(testSlug, "alice")
		got.ByOldEmail, _ = tx.UserIDByEmail(testSlug, "alice@example.com")
		got.ByNewUsername, _ = tx.UserIDByUsername(testSlug, "ALICIA")
		got.ByNewEmail, _ = tx.UserIDByEmail(testSlug, "Alicia@Example.com")
		got.ByBob, _ = tx.UserIDByUsername(testSlug, "bob")
		return nil
	})
	got.OldName = listIDs(t, s, store.UserQuery{Prefix: "alice", Limit: 10})
	got.NewName = listIDs(t, s, store.UserQuery{Prefix: "alicia", Limit: 10})
	if diff := cmp.Diff(want, got, cmp.Comparer(sameIDs)); diff != "" {
		t.Errorf("lookups mismatch (-want +got):\n%s", diff)
	}
	if got := listIDs(t, s, store.UserQuery{Limit: 10}); got.Total != 2 {
		t.Errorf("Users total = %d after replacing a user and two conflicts, want 2", got.Total)
	}
}

// TestEmptyValuesAreIndexed checks that an empty username or email, which
// bbolt cannot store as a key, is still a value of the unique indexes.
func TestEmptyValuesAreIndexed(t *testing.T) {
	s := newStore(t)
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutUser(testSlug, store.User{ID: 9, Username: "nomail"}) })
	var gotID int64
	mustView(t, s, func(tx store.Tx) (err error) {
		gotID, err = tx.UserIDByEmail(testSlug, "")
		return err
	})
	if gotID != 9 {
		t.Errorf("UserIDByEmail(\"\") = %d, want 9", gotID)
	}
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutUser(testSlug, store.User{ID: 10, Username: "other"})
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("second user with an empty email: got error %v, want store.ErrConflict", err)
	}
}
