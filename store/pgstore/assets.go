package pgstore

import (
	"errors"

	"github.com/identitylib/identity/store"
)

// The assets of workspaces (migration 0012): one row per workspace and
// name, the bytes bytea, kept as given. The names are text COLLATE "C",
// like ids: the identity package chooses them ("logo", "client/<client
// id>/logo"). The rows go with their workspace's, by the foreign key's
// cascade.

// errEmptyAssetName is returned by PutAsset for an asset without a name,
// which no lookup could find.
var errEmptyAssetName = errors.New("pgstore: the asset name is empty")

// PutAsset implements store.Tx. It refuses the empty name.
func (t *tx) PutAsset(slug string, a store.Asset) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if a.Name == "" {
		return errEmptyAssetName
	}
	if err := checkText("asset name", a.Name, "content type", a.ContentType); err != nil {
		return err
	}
	tag, err := t.exec(`INSERT INTO assets (workspace, name, content_type, data, updated_at)
		SELECT slug, $2::text, $3::text, $4::bytea, $5::timestamptz
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, name) DO UPDATE SET content_type = excluded.content_type, data = excluded.data,
			updated_at = excluded.updated_at`,
		slug, a.Name, a.ContentType, bin(a.Data), ts(a.UpdatedAt))
	return t.written(tag, err, slug)
}

// Asset implements store.Tx.
func (t *tx) Asset(slug, name string) (store.Asset, error) {
	if !storable(slug) {
		return store.Asset{}, notFound("workspace %q", slug)
	}
	if !storable(name) {
		return store.Asset{}, t.missing(slug, "asset %q", name)
	}
	a := store.Asset{Name: name}
	found, err := t.queryRow("SELECT content_type, data, updated_at FROM assets WHERE workspace = $1 AND name = $2",
		[]any{slug, name}, &a.ContentType, &a.Data, &a.UpdatedAt)
	if err != nil {
		return store.Asset{}, err
	}
	if !found {
		return store.Asset{}, t.missing(slug, "asset %q", name)
	}
	return a, nil
}

// DeleteAsset implements store.Tx. In a missing workspace no asset is
// found either: store.ErrNotFound, in one statement.
func (t *tx) DeleteAsset(slug, name string) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if !storable(name) {
		return notFound("asset %q", name)
	}
	tag, err := t.exec("DELETE FROM assets WHERE workspace = $1 AND name = $2", slug, name)
	return deleted(tag, err, "asset %q", name)
}
