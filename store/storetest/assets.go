package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// asset returns an asset record whose bytes cover every byte value, so
// that a store that treats them as text fails.
func asset(name, contentType string, updated int) store.Asset {
	data := make([]byte, 0, 512)
	for i := range 512 {
		data = append(data, byte(i*7+updated))
	}
	return store.Asset{Name: name, ContentType: contentType, Data: data, UpdatedAt: at(updated)}
}

// readAsset returns Asset's answer in a View of its own.
func readAsset(t *testing.T, s store.Store, slug, name string) (store.Asset, error) {
	t.Helper()
	var got store.Asset
	var lookupErr error
	view(t, s, func(tx store.Tx) error {
		got, lookupErr = tx.Asset(slug, name)
		return nil
	})
	return got, lookupErr
}

// checkAsset checks that Asset returns want.
func checkAsset(t *testing.T, s store.Store, slug string, want store.Asset) {
	t.Helper()
	got, err := readAsset(t, s, slug, want.Name)
	if err != nil {
		t.Fatalf("Asset(%q, %q): %v", slug, want.Name, err)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("Asset(%q, %q) mismatch (-want +got):\n%s", slug, want.Name, diff)
	}
}

// failUpdate runs fn, which fails with errBoom, in s.Update and fails the
// test unless Update returns errBoom.
func failUpdate(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	checkErr(t, "Update failing with errBoom", s.Update(t.Context(), fn), errBoom)
}

// testAssets checks PutAsset, Asset and DeleteAsset.
func testAssets(t *testing.T, newStore func(t *testing.T) store.Store) {
	logo, svg := asset("logo", "image/png", 10), asset("client/app-1/logo", "image/svg+xml", 20)
	other := asset("logo", "image/png", 30)

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error {
			for _, p := range []struct {
				slug string
				a    store.Asset
			}{{slugA, logo}, {slugA, svg}, {slugB, other}} {
				if err := tx.PutAsset(p.slug, p.a); err != nil {
					return err
				}
			}
			return nil
		})
		checkAsset(t, s, slugA, logo)
		checkAsset(t, s, slugA, svg)
		checkAsset(t, s, slugB, other) // the same name in another workspace is another asset
		_, err := readAsset(t, s, slugA, "missing")
		checkErr(t, "Asset of a missing name", err, store.ErrNotFound)
		_, err = readAsset(t, s, slugMissing, "logo")
		checkErr(t, "Asset in a missing workspace", err, store.ErrNotFound)
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return tx.PutAsset(slugA, logo) })
		smaller := store.Asset{Name: "logo", ContentType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}, UpdatedAt: at(40)}
		update(t, s, func(tx store.Tx) error { return tx.PutAsset(slugA, smaller) })
		checkAsset(t, s, slugA, smaller)
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutAsset(slugA, logo); err != nil {
				return err
			}
			return tx.PutAsset(slugB, other)
		})
		update(t, s, func(tx store.Tx) error { return tx.DeleteAsset(slugA, "logo") })
		_, err := readAsset(t, s, slugA, "logo")
		checkErr(t, "Asset after DeleteAsset", err, store.ErrNotFound)
		checkAsset(t, s, slugB, other)
		var deleteErr error
		update(t, s, func(tx store.Tx) error { deleteErr = tx.DeleteAsset(slugA, "logo"); return nil })
		checkErr(t, "DeleteAsset of a deleted asset", deleteErr, store.ErrNotFound)
		update(t, s, func(tx store.Tx) error { deleteErr = tx.DeleteAsset(slugMissing, "logo"); return nil })
		checkErr(t, "DeleteAsset in a missing workspace", deleteErr, store.ErrNotFound)
	})

	t.Run("Rollback", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return tx.PutAsset(slugA, logo) })
		failUpdate(t, s, func(tx store.Tx) error {
			if err := tx.PutAsset(slugA, store.Asset{Name: "logo", ContentType: "image/png", Data: []byte("x"), UpdatedAt: at(50)}); err != nil {
				return err
			}
			if err := tx.PutAsset(slugA, svg); err != nil {
				return err
			}
			return errBoom
		})
		checkAsset(t, s, slugA, logo)
		_, err := readAsset(t, s, slugA, svg.Name)
		checkErr(t, "Asset written by a failed Update", err, store.ErrNotFound)
		failUpdate(t, s, func(tx store.Tx) error {
			if err := tx.DeleteAsset(slugA, "logo"); err != nil {
				return err
			}
			return errBoom
		})
		checkAsset(t, s, slugA, logo)
	})
}
