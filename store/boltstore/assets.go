package boltstore

import (
	"errors"

	"github.com/identitylib/identity/store"
)

// The assets of each workspace live in its assets bucket under their
// names, in the binary record of encodeAsset. No index follows them and
// no sweep removes them: they go when they are deleted, or with their
// workspace's bucket (DeleteWorkspace).

// errEmptyAssetName is returned by PutAsset for an asset without a name:
// bbolt cannot store an empty key.
var errEmptyAssetName = errors.New("boltstore: the asset name is empty")

// PutAsset implements store.Tx. It refuses the empty name.
func (t *tx) PutAsset(slug string, a store.Asset) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if a.Name == "" {
		return errEmptyAssetName
	}
	return putRecord(sp.bucket(bucketAssets), []byte(a.Name), a, encodeAsset)
}

// Asset implements store.Tx.
func (t *tx) Asset(slug, name string) (store.Asset, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Asset{}, err
	}
	return getRecord(sp.bucket(bucketAssets), []byte(name), decodeAsset, "asset %q", name)
}

// DeleteAsset implements store.Tx.
func (t *tx) DeleteAsset(slug, name string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return deleteRecord(sp.bucket(bucketAssets), []byte(name), "asset %q", name)
}
