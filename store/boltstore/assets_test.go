package boltstore_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// TestPutAssetRefusesEmptyName: bbolt cannot store an empty key, and the
// store front lets an empty name through, so PutAsset refuses it itself,
// with an error that is not ErrNotFound, and stores nothing.
func TestPutAssetRefusesEmptyName(t *testing.T) {
	s := newStore(t)
	var putErr error
	mustUpdate(t, s, func(tx store.Tx) error {
		putErr = tx.PutAsset(testSlug, store.Asset{ContentType: "image/png", Data: []byte("png"), UpdatedAt: testTime})
		return nil
	})
	if putErr == nil || errors.Is(putErr, store.ErrNotFound) {
		t.Errorf("PutAsset without a name: error = %v, want an error that is not ErrNotFound", putErr)
	}
	mustView(t, s, func(tx store.Tx) error {
		if _, err := tx.Asset(testSlug, ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Asset(%q) = %v, want ErrNotFound", "", err)
		}
		return nil
	})
}

// TestAssetsInOlderFiles: a file written before assets existed (the
// previous release's, and one whose workspace lacks the bucket) opens,
// its workspace has no assets, and an asset written then is kept across
// a reopening with the rest of the workspace.
func TestAssetsInOlderFiles(t *testing.T) {
	withoutBucket := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "db")
		s := openStore(t, path, nil)
		mustUpdate(t, s, func(tx store.Tx) error {
			return errors.Join(
				tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}),
				tx.PutUser(testSlug, store.User{ID: 1, Username: "alice", Email: "alice@acme.example", CreatedAt: testTime}),
			)
		})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		boltstore.DropBuckets(t, path, testSlug, "assets")
		return path
	}
	tests := []struct {
		name string
		file func(t *testing.T) string
	}{
		{"previous release", func(t *testing.T) string { return copyFile(t, previousReleaseFile) }},
		{"before roles", func(t *testing.T) string { return copyFile(t, beforeRolesFile) }},
		{"without the bucket", withoutBucket},
	}
	logo := store.Asset{Name: "logo", ContentType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n\x00\xff"), UpdatedAt: testTime}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file(t)
			s := openStore(t, path, nil)
			mustView(t, s, func(tx store.Tx) error {
				if _, err := tx.Asset(testSlug, logo.Name); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Asset(%q) before any write: error = %v, want ErrNotFound", logo.Name, err)
				}
				return nil
			})
			mustUpdate(t, s, func(tx store.Tx) error { return tx.PutAsset(testSlug, logo) })
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, path, nil)
			mustView(t, s, func(tx store.Tx) error {
				got, err := tx.Asset(testSlug, logo.Name)
				if diff := cmp.Diff(logo, got); err != nil || diff != "" {
					t.Errorf("Asset(%q) after reopening = %v (-want +got):\n%s", logo.Name, err, diff)
				}
				u, err := tx.User(testSlug, 1)
				if err != nil || u.ID != 1 {
					t.Errorf("User(1) after reopening = %+v, %v; want the file's user 1", u, err)
				}
				return nil
			})
		})
	}
}
