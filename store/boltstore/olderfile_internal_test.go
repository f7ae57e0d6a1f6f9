package boltstore

import (
	"errors"
	"testing"

	"go.etcd.io/bbolt"
)

// DropBuckets makes the closed file at path one of a release before the
// workspace's nested buckets names existed: it deletes them, so that the
// next Open creates and builds them. (Exported for the package's external
// tests.)
func DropBuckets(t testing.TB, path, slug string, names ...string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		space := btx.Bucket(bucketSpaces).Bucket([]byte(slug))
		var errs []error
		for _, name := range names {
			errs = append(errs, space.DeleteBucket([]byte(name)))
		}
		return errors.Join(errs...)
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
}
