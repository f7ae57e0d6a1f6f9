package boltstore

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

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

// WriteLegacySpaceDue makes the closed file at path one of the release
// before WorkspaceQueue walked delivery_due: it gives the workspace the
// due index of its own that that release kept (legacySpaceDue: due time
// + job id -> empty, one entry per pending job) and their number under
// keyPendingDeliveries in its meta bucket, as that release wrote them.
// (Exported for the package's external tests.)
func WriteLegacySpaceDue(t testing.TB, path, slug string, due map[int64]time.Time) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		space := btx.Bucket(bucketSpaces).Bucket([]byte(slug))
		b, err := space.CreateBucket(legacySpaceDue)
		if err != nil {
			return err
		}
		for id, at := range due {
			if err := b.Put(appendID(appendTime(nil, at), id), nil); err != nil {
				return err
			}
		}
		return space.Bucket(nestedNames[bucketMeta]).Put(keyPendingDeliveries, binary.BigEndian.AppendUint64(nil, uint64(len(due))))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
}

// LegacySpaceDue reports what the closed file at path holds, in the
// workspace's bucket, of what WriteLegacySpaceDue writes: the bucket's
// number of entries (-1 without the bucket) and the meta count (-1
// without it).
func LegacySpaceDue(t testing.TB, path, slug string) (entries, count int) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	entries, count = -1, -1
	err = db.View(func(btx *bbolt.Tx) error {
		space := btx.Bucket(bucketSpaces).Bucket([]byte(slug))
		if b := space.Bucket(legacySpaceDue); b != nil {
			entries = b.Stats().KeyN
		}
		if v := space.Bucket(nestedNames[bucketMeta]).Get(keyPendingDeliveries); v != nil {
			count = int(readCount(v))
		}
		return nil
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	return entries, count
}
