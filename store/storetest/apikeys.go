package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// apiKey returns a key record with every field set.
func apiKey(id, slug string) store.APIKey {
	return store.APIKey{
		ID:         id,
		Workspace:  slug,
		Name:       "key " + id,
		Scopes:     []string{"users:read", "users:write"},
		SecretHash: []byte("hash-of-" + id + "\x00\xff"),
		CreatedAt:  at(len(id)),
	}
}

// testAPIKeys checks PutAPIKey, APIKey, APIKeys and DeleteAPIKey.
func testAPIKeys(t *testing.T, newStore func(t *testing.T) store.Store) {
	const slugC = "initech"
	keys := func(t *testing.T, s store.Store, slug string) []store.APIKey {
		t.Helper()
		var got []store.APIKey
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.APIKeys(slug)
			return err
		})
		return got
	}
	checkKeys := func(t *testing.T, s store.Store, slug string, want []store.APIKey) {
		t.Helper()
		if diff := cmp.Diff(want, keys(t, s, slug), equateEmpty); diff != "" {
			t.Errorf("APIKeys(%q) mismatch (-want +got):\n%s", slug, diff)
		}
	}
	checkKey := func(t *testing.T, s store.Store, want store.APIKey) {
		t.Helper()
		view(t, s, func(tx store.Tx) error {
			got, err := tx.APIKey(want.ID)
			if err != nil {
				t.Errorf("APIKey(%q): %v", want.ID, err)
				return nil
			}
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
				t.Errorf("APIKey(%q) mismatch (-want +got):\n%s", want.ID, diff)
			}
			return nil
		})
	}
	checkMissing := func(t *testing.T, s store.Store, id string) {
		t.Helper()
		view(t, s, func(tx store.Tx) error {
			_, err := tx.APIKey(id)
			checkErr(t, fmt.Sprintf("APIKey(%q)", id), err, store.ErrNotFound)
			return nil
		})
	}
	// setup creates keys k3 and k1 in slugA, k2 in slugB, none in slugC.
	setup := func(t *testing.T) store.Store {
		t.Helper()
		s := newStoreWith(t, newStore, slugA, slugB, slugC)
		update(t, s, func(tx store.Tx) error {
			for _, k := range []store.APIKey{apiKey("k3", slugA), apiKey("k2", slugB), apiKey("k1", slugA)} {
				if err := tx.PutAPIKey(k); err != nil {
					return err
				}
			}
			return nil
		})
		return s
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := setup(t)
		bare := store.APIKey{ID: "k0", Workspace: slugC} // nil slices, zero time
		update(t, s, func(tx store.Tx) error { return tx.PutAPIKey(bare) })
		for _, k := range []store.APIKey{apiKey("k1", slugA), apiKey("k2", slugB), apiKey("k3", slugA), bare} {
			checkKey(t, s, k)
		}
		checkKeys(t, s, slugA, []store.APIKey{apiKey("k1", slugA), apiKey("k3", slugA)})
		checkKeys(t, s, slugB, []store.APIKey{apiKey("k2", slugB)})
		checkKeys(t, s, slugC, []store.APIKey{bare})
	})

	t.Run("EmptyWorkspace", func(t *testing.T) {
		s := setup(t)
		checkKeys(t, s, slugC, nil)
	})

	t.Run("NotFound", func(t *testing.T) {
		s := setup(t)
		for _, id := range []string{"k4", "K1", "", "k"} {
			checkMissing(t, s, id)
		}
	})

	t.Run("Replace", func(t *testing.T) {
		s := setup(t)
		changed := store.APIKey{
			ID:         "k1",
			Workspace:  slugA,
			Name:       "renamed",
			Scopes:     []string{"admin"},
			SecretHash: []byte("rotated"),
			CreatedAt:  at(50),
		}
		update(t, s, func(tx store.Tx) error { return tx.PutAPIKey(changed) })
		checkKey(t, s, changed)
		checkKeys(t, s, slugA, []store.APIKey{changed, apiKey("k3", slugA)})
	})

	t.Run("ReplaceMovesBetweenWorkspaces", func(t *testing.T) {
		// A key record is identified by its id alone.
		s := setup(t)
		moved := apiKey("k1", slugC)
		update(t, s, func(tx store.Tx) error { return tx.PutAPIKey(moved) })
		checkKey(t, s, moved)
		checkKeys(t, s, slugA, []store.APIKey{apiKey("k3", slugA)})
		checkKeys(t, s, slugC, []store.APIKey{moved})
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := setup(t)
		for _, k := range []store.APIKey{apiKey("k9", slugMissing), apiKey("k1", slugMissing), apiKey("k8", "")} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.PutAPIKey(k)
				return nil // commit: the refused PutAPIKey must have written nothing
			})
			checkErr(t, fmt.Sprintf("PutAPIKey(%q in %q)", k.ID, k.Workspace), err, store.ErrNotFound)
		}
		checkMissing(t, s, "k9")
		checkMissing(t, s, "k8")
		checkKey(t, s, apiKey("k1", slugA))
		checkKeys(t, s, slugA, []store.APIKey{apiKey("k1", slugA), apiKey("k3", slugA)})
	})

	t.Run("Delete", func(t *testing.T) {
		s := setup(t)
		update(t, s, func(tx store.Tx) error { return tx.DeleteAPIKey("k1") })
		checkMissing(t, s, "k1")
		checkKeys(t, s, slugA, []store.APIKey{apiKey("k3", slugA)})
		checkKeys(t, s, slugB, []store.APIKey{apiKey("k2", slugB)})
		for _, id := range []string{"k1", "k4"} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.DeleteAPIKey(id)
				return nil
			})
			checkErr(t, fmt.Sprintf("DeleteAPIKey(%q)", id), err, store.ErrNotFound)
		}
		// A deleted id may be put again.
		update(t, s, func(tx store.Tx) error { return tx.PutAPIKey(apiKey("k1", slugB)) })
		checkKeys(t, s, slugA, []store.APIKey{apiKey("k3", slugA)})
		checkKeys(t, s, slugB, []store.APIKey{apiKey("k1", slugB), apiKey("k2", slugB)})
	})

	t.Run("Copies", func(t *testing.T) {
		s := setup(t)
		k := apiKey("k5", slugA)
		update(t, s, func(tx store.Tx) error { return tx.PutAPIKey(k) })
		k.Scopes[0] = "changed"
		k.SecretHash[0] = 'X'
		var got store.APIKey
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.APIKey("k5")
			return err
		})
		if diff := cmp.Diff(apiKey("k5", slugA), got); diff != "" {
			t.Fatalf("APIKey after the caller changed its slices (-want +got):\n%s", diff)
		}
		got.Scopes[0] = "changed"
		got.SecretHash[0] = 'Y'
		list := keys(t, s, slugA)
		for i := range list {
			list[i].Scopes[1] = "changed"
			list[i].SecretHash[1] = 'Z'
		}
		checkKey(t, s, apiKey("k5", slugA))
		checkKeys(t, s, slugA, []store.APIKey{apiKey("k1", slugA), apiKey("k3", slugA), apiKey("k5", slugA)})
	})
}
