package boltstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// TestAttrValueCountsOnlyShared checks that attr_value_counts holds the
// values two users or more have, and the totals either way.
func TestAttrValueCountsOnlyShared(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	update := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: "ws"}); err != nil {
			return err
		}
		for id := int64(1); id <= 4; id++ {
			name := "u" + string(rune('0'+id))
			if err := tx.PutUser("ws", store.User{ID: id, Username: name, Email: name + "@example.com"}); err != nil {
				return err
			}
			value := "shared"
			if id == 4 {
				value = "unique"
			}
			if err := tx.PutUserAttribute("ws", id, "team", value); err != nil {
				return err
			}
		}
		return nil
	})
	type state struct {
		Stored map[string]uint64 // attr_value_counts, by value
		Totals map[string]int
	}
	read := func() state {
		st := state{Stored: map[string]uint64{}, Totals: map[string]int{}}
		err := s.db.View(func(btx *bbolt.Tx) error {
			sp := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte("ws"))}
			for _, v := range []string{"shared", "unique", "none"} {
				k := attrValuePrefix("team", v)
				if c := sp.bucket(bucketAttrValueCounts).Get(k); c != nil {
					st.Stored[v] = readCount(c)
				}
				st.Totals[v] = attrTotal(sp.bucket(bucketAttrValueCounts), sp.bucket(bucketAttrValues), k)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	steps := []struct {
		name   string
		change func(tx store.Tx) error
		want   state
	}{
		{"written", nil, state{map[string]uint64{"shared": 3}, map[string]int{"shared": 3, "unique": 1, "none": 0}}},
		{"one shared value changed", func(tx store.Tx) error { return tx.PutUserAttribute("ws", 1, "team", "other") },
			state{map[string]uint64{"shared": 2}, map[string]int{"shared": 2, "unique": 1, "none": 0}}},
		{"down to one", func(tx store.Tx) error { return tx.DeleteUserAttribute("ws", 2, "team") },
			state{map[string]uint64{}, map[string]int{"shared": 1, "unique": 1, "none": 0}}},
		{"shared again", func(tx store.Tx) error { return tx.PutUserAttribute("ws", 4, "team", "shared") },
			state{map[string]uint64{"shared": 2}, map[string]int{"shared": 2, "unique": 0, "none": 0}}},
		{"user deleted", func(tx store.Tx) error { return tx.DeleteUser("ws", 3) },
			state{map[string]uint64{}, map[string]int{"shared": 1, "unique": 0, "none": 0}}},
	}
	for _, step := range steps {
		if step.change != nil {
			update(step.change)
		}
		if diff := cmp.Diff(step.want, read()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.name, diff)
		}
	}
}
