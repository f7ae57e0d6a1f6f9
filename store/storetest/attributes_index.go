package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// attrPage is what one UsersByAttribute call returned: the ids of the
// page and the total.
type attrPage struct {
	IDs   []int64
	Total int
}

// attrWant is one lookup and what it must return.
type attrWant struct {
	key, value    string
	offset, limit int
	want          attrPage
}

// all is a limit that takes every match of the suite's lookups.
const all = 1000

// lookUpAttribute runs UsersByAttribute in tx and returns the ids and the
// total.
func lookUpAttribute(tx store.Tx, slug, key, value string, offset, limit int) (attrPage, error) {
	users, total, err := tx.UsersByAttribute(slug, store.AttributeQuery{Key: key, Value: value, Offset: offset, Limit: limit})
	if err != nil {
		return attrPage{}, fmt.Errorf("UsersByAttribute(%q, %q, %q, offset %d, limit %d): %w", slug, key, value, offset, limit, err)
	}
	return attrPage{IDs: userIDs(users), Total: total}, nil
}

// checkAttrLookups runs every lookup in one View and compares it.
func checkAttrLookups(t *testing.T, s store.Store, slug, step string, wants []attrWant) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		for _, w := range wants {
			got, err := lookUpAttribute(tx, slug, w.key, w.value, w.offset, w.limit)
			if err != nil {
				return fmt.Errorf("%s: %w", step, err)
			}
			if diff := cmp.Diff(w.want, got, equateEmpty); diff != "" {
				t.Errorf("%s: UsersByAttribute(%q, %q, %q, offset %d, limit %d) mismatch (-want +got):\n%s",
					step, slug, w.key, w.value, w.offset, w.limit, diff)
			}
		}
		return nil
	})
}

// setAttrs sets the attributes in one transaction: user id -> key -> value.
func setAttrs(t *testing.T, s store.Store, slug string, attrs map[int64]map[string]string) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for id, kv := range attrs {
			for k, v := range kv {
				if err := tx.PutUserAttribute(slug, id, k, v); err != nil {
					return fmt.Errorf("PutUserAttribute(%q, %d, %q): %w", slug, id, k, err)
				}
			}
		}
		return nil
	})
}

// testAttributeIndex checks UsersByAttribute: exact matches on key and
// value (byte for byte: case, prefixes of each other, NUL and 0xFF
// bytes), pages and totals, per workspace, while the attributes change
// (replaced values, deleted attributes, deleted users), in rolled back
// and in concurrent transactions.
func testAttributeIndex(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Lookups", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		var users []store.User
		for id := int64(1); id <= 12; id++ {
			users = append(users, user(id, "user"+strconv.FormatInt(id, 10), "user"+strconv.FormatInt(id, 10)+"@example.com", "User"))
		}
		putUsers(t, s, slugA, users...)
		putUsers(t, s, slugB, user(1, "alice", "alice@example.com", "Alice"), user(2, "bob", "bob@example.com", "Bob"))
		setAttrs(t, s, slugA, map[int64]map[string]string{
			1:  {"dept": "sales-east", "k\x00": "\xff\x00v", "k": "\x00"},
			2:  {"dept": "sales", "floor": "3"},
			3:  {"dept": "sales", "floor": "sales"},
			4:  {"dept": "sale"},
			5:  {"dept": "sales"},
			6:  {"dept": "Sales", "k": "\x00\x00"},
			7:  {"dept": "sales"},
			8:  {"dep": "tsales", "dept": ""},
			9:  {"Dept": "sales", "k\x00": "\xff"},
			10: {"dept": "sales ", "k": "\xff\xff"},
			11: {"dept": "sales"},
			12: {"k\x00": "\xff\x00v", "k": "\xff"},
		})
		setAttrs(t, s, slugB, map[int64]map[string]string{1: {"dept": "sales"}, 2: {"dept": "ops"}})

		sales := []int64{2, 3, 5, 7, 11}
		checkAttrLookups(t, s, slugA, "created", []attrWant{
			{"dept", "sales", 0, all, attrPage{sales, 5}},
			// Pages.
			{"dept", "sales", 0, 2, attrPage{[]int64{2, 3}, 5}},
			{"dept", "sales", 2, 2, attrPage{[]int64{5, 7}, 5}},
			{"dept", "sales", 4, 2, attrPage{[]int64{11}, 5}},
			{"dept", "sales", 5, 2, attrPage{nil, 5}},
			{"dept", "sales", 99, 2, attrPage{nil, 5}},
			{"dept", "sales", 1, 0, attrPage{nil, 5}},
			{"dept", "sales", 3, 1, attrPage{[]int64{7}, 5}},
			// Values that are prefixes of each other, case and spaces.
			{"dept", "sale", 0, all, attrPage{[]int64{4}, 1}},
			{"dept", "sales-east", 0, all, attrPage{[]int64{1}, 1}},
			{"dept", "sales ", 0, all, attrPage{[]int64{10}, 1}},
			{"dept", "Sales", 0, all, attrPage{[]int64{6}, 1}},
			{"dept", "SALES", 0, all, attrPage{nil, 0}},
			{"dept", "s", 0, all, attrPage{nil, 0}},
			{"Dept", "sales", 0, all, attrPage{[]int64{9}, 1}},
			{"DEPT", "sales", 0, all, attrPage{nil, 0}},
			{"dep", "sales", 0, all, attrPage{nil, 0}},
			// A key and value that concatenate to another pair's.
			{"dep", "tsales", 0, all, attrPage{[]int64{8}, 1}},
			{"de", "ptsales", 0, all, attrPage{nil, 0}},
			// The empty value is a value.
			{"dept", "", 0, all, attrPage{[]int64{8}, 1}},
			{"floor", "", 0, all, attrPage{nil, 0}},
			// The same value under another key.
			{"floor", "sales", 0, all, attrPage{[]int64{3}, 1}},
			{"floor", "3", 0, all, attrPage{[]int64{2}, 1}},
			// Bytes 0x00 and 0xFF in keys and values.
			{"k\x00", "\xff\x00v", 0, all, attrPage{[]int64{1, 12}, 2}},
			{"k\x00", "\xff\x00v", 1, all, attrPage{[]int64{12}, 2}},
			{"k\x00", "\xff", 0, all, attrPage{[]int64{9}, 1}},
			{"k\x00", "\xff\x00", 0, all, attrPage{nil, 0}},
			{"k", "\x00", 0, all, attrPage{[]int64{1}, 1}},
			{"k", "\x00\x00", 0, all, attrPage{[]int64{6}, 1}},
			{"k", "\xff", 0, all, attrPage{[]int64{12}, 1}},
			{"k", "\xff\xff", 0, all, attrPage{[]int64{10}, 1}},
			{"k", "", 0, all, attrPage{nil, 0}},
			{"k\x00", "\xff\x00v\x00", 0, all, attrPage{nil, 0}},
			{"", "", 0, all, attrPage{nil, 0}},
			{"nope", "sales", 0, all, attrPage{nil, 0}},
		})
		// Another workspace holds its own.
		checkAttrLookups(t, s, slugB, "created", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{1}, 1}},
			{"dept", "ops", 0, all, attrPage{[]int64{2}, 1}},
			{"dept", "sale", 0, all, attrPage{nil, 0}},
		})

		// The records are the users', whole, and follow their changes.
		renamed := user(5, "user5", "user5@example.com", "Renamed")
		putUsers(t, s, slugA, renamed)
		view(t, s, func(tx store.Tx) error {
			got, total, err := tx.UsersByAttribute(slugA, store.AttributeQuery{Key: "dept", Value: "sales", Offset: 1, Limit: 3})
			if err != nil {
				return err
			}
			want := []store.User{users[2], renamed, users[6]}
			if diff := cmp.Diff(want, got); diff != "" || total != 5 {
				t.Errorf("UsersByAttribute(dept=sales, offset 1, limit 3): total %d, want 5; users (-want +got):\n%s", total, diff)
			}
			_, _, err = tx.UsersByAttribute(slugMissing, store.AttributeQuery{Key: "dept", Value: "sales", Limit: 10})
			checkErr(t, "UsersByAttribute in a missing workspace", err, store.ErrNotFound)
			return nil
		})

		setAttrs(t, s, slugA, map[int64]map[string]string{
			3:  {"dept": "support"},    // replaced
			2:  {"dept": "sales"},      // replaced by the same value
			4:  {"dept": "sales"},      // the prefix becomes the value
			6:  {"dept": "sales-east"}, // another case becomes a longer value
			12: {"k": "\xff\xff"},      // 0xFF becomes 0xFF 0xFF
		})
		checkAttrLookups(t, s, slugA, "values replaced", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{2, 4, 5, 7, 11}, 5}},
			{"dept", "sales", 1, 2, attrPage{[]int64{4, 5}, 5}},
			{"dept", "support", 0, all, attrPage{[]int64{3}, 1}},
			{"dept", "sale", 0, all, attrPage{nil, 0}},
			{"dept", "Sales", 0, all, attrPage{nil, 0}},
			{"dept", "sales-east", 0, all, attrPage{[]int64{1, 6}, 2}},
			{"k", "\xff", 0, all, attrPage{nil, 0}},
			{"k", "\xff\xff", 0, all, attrPage{[]int64{10, 12}, 2}},
			{"floor", "sales", 0, all, attrPage{[]int64{3}, 1}},
		})

		update(t, s, func(tx store.Tx) error {
			return errors.Join(
				tx.DeleteUserAttribute(slugA, 5, "dept"),
				tx.DeleteUserAttribute(slugA, 8, "dept"),
				tx.DeleteUserAttribute(slugA, 1, "k\x00"),
			)
		})
		checkAttrLookups(t, s, slugA, "attributes deleted", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{2, 4, 7, 11}, 4}},
			{"dept", "", 0, all, attrPage{nil, 0}},
			{"dep", "tsales", 0, all, attrPage{[]int64{8}, 1}},
			{"k\x00", "\xff\x00v", 0, all, attrPage{[]int64{12}, 1}},
		})

		for _, id := range []int64{7, 12} {
			if err := deleteUser(t, s, slugA, id); err != nil {
				t.Fatalf("DeleteUser(%d): %v", id, err)
			}
		}
		checkAttrLookups(t, s, slugA, "users deleted", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{2, 4, 11}, 3}},
			{"dept", "sales", 2, 5, attrPage{[]int64{11}, 3}},
			{"k\x00", "\xff\x00v", 0, all, attrPage{nil, 0}},
			{"k", "\xff\xff", 0, all, attrPage{[]int64{10}, 1}},
		})
		checkAttrLookups(t, s, slugB, "the other workspace after deletions in acme", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{1}, 1}},
		})

		// A user created again with a deleted user's id starts without
		// the attributes.
		putUsers(t, s, slugA, users[6])
		checkAttrLookups(t, s, slugA, "deleted user's id reused", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{2, 4, 11}, 3}},
		})
	})

	t.Run("OwnWritesAndRollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"), user(2, "bob", "bob@example.com", "Bob"))
		setAttrs(t, s, slugA, map[int64]map[string]string{1: {"dept": "sales"}, 2: {"dept": "sales"}})
		var inside attrPage
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutUserAttribute(slugA, 1, "dept", "ops"); err != nil {
				return err
			}
			if err := tx.DeleteUser(slugA, 2); err != nil {
				return err
			}
			var err error
			if inside, err = lookUpAttribute(tx, slugA, "dept", "ops", 0, all); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "the failing Update", err, errBoom)
		if diff := cmp.Diff(attrPage{[]int64{1}, 1}, inside); diff != "" {
			t.Errorf("UsersByAttribute(dept=ops) inside the Update that set it (-want +got):\n%s", diff)
		}
		checkAttrLookups(t, s, slugA, "rolled back", []attrWant{
			{"dept", "sales", 0, all, attrPage{[]int64{1, 2}, 2}},
			{"dept", "ops", 0, all, attrPage{nil, 0}},
		})
	})

	t.Run("ConcurrentWriters", func(t *testing.T) {
		// Writers move users between values at once; the totals and pages
		// then agree with the attributes the users hold.
		const users, writers, rounds = 20, 8, 10
		s := newStoreWith(t, newStore, slugA)
		var recs []store.User
		for id := int64(1); id <= users; id++ {
			name := "u" + strconv.FormatInt(id, 10)
			recs = append(recs, user(id, name, name+"@example.com", "U"))
		}
		putUsers(t, s, slugA, recs...)
		values := []string{"red", "green", "blue"}
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for r := range rounds {
					id := int64((w*rounds+r)%users + 1)
					value := values[(w+r)%len(values)]
					err := s.Update(context.Background(), func(tx store.Tx) error {
						if r%4 == 3 {
							err := tx.DeleteUserAttribute(slugA, id, "color")
							if errors.Is(err, store.ErrNotFound) {
								return nil
							}
							return err
						}
						return tx.PutUserAttribute(slugA, id, "color", value)
					})
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent writer: %v", err)
			}
		}
		want := map[string][]int64{}
		view(t, s, func(tx store.Tx) error {
			for id := int64(1); id <= users; id++ {
				attrs, err := tx.UserAttributes(slugA, id)
				if err != nil {
					return err
				}
				if v, ok := attrs["color"]; ok {
					want[v] = append(want[v], id)
				}
			}
			return nil
		})
		var wants []attrWant
		for _, v := range values {
			wants = append(wants, attrWant{"color", v, 0, all, attrPage{want[v], len(want[v])}})
		}
		checkAttrLookups(t, s, slugA, "after concurrent writers", wants)
	})
}
