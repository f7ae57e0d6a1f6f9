package boltstore_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// attrResult is what UsersByAttribute returned: the total and the ids.
type attrResult struct {
	Total int
	IDs   []int64
}

// lookUp runs UsersByAttribute on s.
func lookUp(t *testing.T, s store.Store, key, value string, offset, limit int) attrResult {
	t.Helper()
	var r attrResult
	mustView(t, s, func(tx store.Tx) error {
		users, total, err := tx.UsersByAttribute(testSlug, store.AttributeQuery{Key: key, Value: value, Offset: offset, Limit: limit})
		r.Total = total
		for _, u := range users {
			r.IDs = append(r.IDs, u.ID)
		}
		return err
	})
	return r
}

// attrLookup is one UsersByAttribute call and its result.
type attrLookup struct {
	key, value    string
	offset, limit int
	want          attrResult
}

// checkLookups runs the lookups on s.
func checkLookups(t *testing.T, s store.Store, step string, lookups []attrLookup) {
	t.Helper()
	for _, l := range lookups {
		if diff := cmp.Diff(l.want, lookUp(t, s, l.key, l.value, l.offset, l.limit)); diff != "" {
			t.Errorf("%s: UsersByAttribute(%q, %q, offset %d, limit %d) mismatch (-want +got):\n%s",
				step, l.key, l.value, l.offset, l.limit, diff)
		}
	}
}

// rawAttrKey is the user_attrs key as every release has written it: the
// user's id key, then the attribute key.
func rawAttrKey(userID int64, key string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(userID)^1<<63), key...)
}

// TestAttributeIndexBuiltForPreviousRelease opens a file of the previous
// release (see testdata/README.md) whose user has attributes, written into
// user_attrs as that release wrote them: Open builds attr_values and
// attr_value_counts from them, so that the user is found by its values at
// once, and later writes keep the index.
func TestAttributeIndexBuiltForPreviousRelease(t *testing.T) {
	path := copyFile(t, previousReleaseFile)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		space := btx.Bucket([]byte("ws")).Bucket([]byte(testSlug))
		if space.Bucket([]byte("attr_values")) != nil || space.Bucket([]byte("attr_value_counts")) != nil {
			return errors.New("the previous release's file already has the attribute index")
		}
		attrs := space.Bucket([]byte("user_attrs"))
		return errors.Join(
			attrs.Put(rawAttrKey(1, "dept"), []byte("sales")),
			attrs.Put(rawAttrKey(1, "empty"), []byte{}),
			attrs.Put(rawAttrKey(1, "k\x00"), []byte("\xff\x00")),
		)
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, path, nil)
	checkLookups(t, s, "opened", []attrLookup{
		{"dept", "sales", 0, 10, attrResult{1, []int64{1}}},
		{"empty", "", 0, 10, attrResult{1, []int64{1}}},
		{"k\x00", "\xff\x00", 0, 10, attrResult{1, []int64{1}}},
		{"dept", "sale", 0, 10, attrResult{0, nil}},
	})
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutUserAttribute(testSlug, 1, "dept", "ops") })
	checkLookups(t, s, "value replaced", []attrLookup{
		{"dept", "sales", 0, 10, attrResult{0, nil}},
		{"dept", "ops", 0, 10, attrResult{1, []int64{1}}},
	})
	mustUpdate(t, s, func(tx store.Tx) error { return tx.DeleteUser(testSlug, 1) })
	checkLookups(t, s, "user deleted", []attrLookup{
		{"dept", "ops", 0, 10, attrResult{0, nil}},
		{"empty", "", 0, 10, attrResult{0, nil}},
		{"k\x00", "\xff\x00", 0, 10, attrResult{0, nil}},
	})
}

// TestAttributeIndexBuiltForOlderFile checks the build on a larger file:
// one written with the index, whose index buckets are then removed (as a
// file of the release before has none). Totals and pages are right once
// it is opened again, later writes keep them right, and a file that has
// the buckets is not built again.
func TestAttributeIndexBuiltForOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error {
		steps := []error{tx.PutWorkspace(store.Workspace{Slug: testSlug})}
		for i := 1; i <= 3000; i++ {
			id := int64(i)
			name := fmt.Sprintf("user%04d", i)
			steps = append(steps,
				tx.PutUser(testSlug, store.User{ID: id, Username: name, Email: name + "@example.com"}),
				tx.PutUserAttribute(testSlug, id, "dept", []string{"sales", "ops", "sales-east"}[i%3]),
				tx.PutUserAttribute(testSlug, id, "n", fmt.Sprint(i%10)))
		}
		return errors.Join(steps...)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	dropIndex := func() { boltstore.DropBuckets(t, path, testSlug, "attr_values", "attr_value_counts") }
	dropIndex()

	s = openStore(t, path, nil)
	checkLookups(t, s, "built", []attrLookup{
		{"dept", "ops", 0, 3, attrResult{1000, []int64{1, 4, 7}}},
		{"dept", "ops", 999, 3, attrResult{1000, []int64{2998}}},
		{"dept", "sales", 500, 2, attrResult{1000, []int64{1503, 1506}}},
		{"dept", "sales-east", 0, 2, attrResult{1000, []int64{2, 5}}},
		{"dept", "sales-", 0, 2, attrResult{0, nil}},
		{"n", "7", 299, 5, attrResult{300, []int64{2997}}},
		{"n", "10", 0, 5, attrResult{0, nil}},
	})
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutUserAttribute(testSlug, 1, "dept", "sales"),
			tx.DeleteUserAttribute(testSlug, 4, "dept"),
			tx.DeleteUser(testSlug, 7))
	})
	after := []attrLookup{
		{"dept", "ops", 0, 3, attrResult{997, []int64{10, 13, 16}}},
		{"dept", "sales", 0, 2, attrResult{1001, []int64{1, 3}}},
		{"n", "7", 0, 2, attrResult{299, []int64{17, 27}}},
	}
	checkLookups(t, s, "after writes", after)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, nil)
	checkLookups(t, s, "opened again", after)
}

// BenchmarkUsersByAttribute measures lookups by attribute value among
// 100,000 users, each with a department (one of ten) and an employee
// number of its own: a unique value, the first page of 50 of a value
// 10,000 users share, and a page of it at offset 9,950, each with its
// total.
//
//	go test -run '^$' -bench UsersByAttribute ./store/boltstore/
func BenchmarkUsersByAttribute(b *testing.B) {
	const users = 100_000
	s := openStore(b, filepath.Join(b.TempDir(), "db"), nil)
	mustUpdate(b, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: testSlug}) })
	for start := 1; start <= users; start += 10_000 {
		mustUpdate(b, s, func(tx store.Tx) error {
			for i := start; i < start+10_000; i++ {
				id, name := int64(i), fmt.Sprintf("user%06d", i)
				err := errors.Join(
					tx.PutUser(testSlug, store.User{ID: id, Username: name, Email: name + "@example.com"}),
					tx.PutUserAttribute(testSlug, id, "dept", fmt.Sprintf("dept-%d", i%10)),
					tx.PutUserAttribute(testSlug, id, "employee", fmt.Sprintf("E%06d", i)))
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, c := range []struct {
		name          string
		key, value    string
		offset, limit int
		total         int
	}{
		{"Unique", "employee", "E054321", 0, 50, 1},
		{"10pct/FirstPage", "dept", "dept-3", 0, 50, 10_000},
		{"10pct/Offset9950", "dept", "dept-3", 9_950, 50, 10_000},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := store.AttributeQuery{Key: c.key, Value: c.value, Offset: c.offset, Limit: c.limit}
			for b.Loop() {
				err := s.View(b.Context(), func(tx store.Tx) error {
					_, total, err := tx.UsersByAttribute(testSlug, q)
					if err == nil && total != c.total {
						err = fmt.Errorf("total %d, want %d", total, c.total)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
