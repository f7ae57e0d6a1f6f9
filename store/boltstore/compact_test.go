package boltstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// TestCompact: a file that held many records and lost most of them gets
// smaller, and keeps every record it still has.
func TestCompact(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "id.db")
	st, err := boltstore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Update(ctx, func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: time.Unix(0, 0).UTC()})
	}))
	value := strings.Repeat("v", 1000)
	for batch := range 20 {
		must(st.Update(ctx, func(tx store.Tx) error {
			for i := range 200 {
				id := int64(batch*200 + i + 1)
				if err := tx.PutUser("acme", store.User{ID: id, Username: fmt.Sprintf("u%d", id), Email: fmt.Sprintf("u%d@example.com", id), FullName: "U"}); err != nil {
					return err
				}
				if err := tx.PutUserAttribute("acme", id, "big", value); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	must(st.Update(ctx, func(tx store.Tx) error {
		for id := int64(2); id <= 4000; id++ {
			if err := tx.DeleteUserAttribute("acme", id, "big"); err != nil {
				return err
			}
		}
		return nil
	}))
	must(st.Close())

	res, err := boltstore.Compact(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.After != info.Size() || res.After*2 > res.Before {
		t.Errorf("Compact = %+v (file now %d bytes); want it at most half the size", res, info.Size())
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Errorf("the temporary copy is left: %v", err)
	}
	st, err = boltstore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	must(st.View(ctx, func(tx store.Tx) error {
		attrs, err := tx.UserAttributes("acme", 1)
		if err != nil || attrs["big"] != value {
			return fmt.Errorf("user 1's attribute after compaction: %d bytes, %v", len(attrs["big"]), err)
		}
		_, total, err := tx.Users("acme", store.UserQuery{Limit: 1})
		if err != nil || total != 4000 {
			return fmt.Errorf("users after compaction: %d, %v", total, err)
		}
		id, err := tx.UserIDByEmail("acme", "U4000@example.com")
		if err != nil || id != 4000 {
			return fmt.Errorf("the email index after compaction: %d, %v", id, err)
		}
		return nil
	}))
}

// TestCompactLocked: a file a Store holds is not compacted, and is left
// as it was.
func TestCompactLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "id.db")
	st, err := boltstore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = boltstore.Compact(path, &boltstore.Options{Timeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another Store or process") {
		t.Errorf("Compact of a held file = %v, want the lock error", err)
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Errorf("a temporary copy was made: %v", err)
	}
	_, err = boltstore.Compact(filepath.Join(t.TempDir(), "none.db"), nil)
	if err == nil {
		t.Error("Compact of a missing file succeeded")
	}
}
