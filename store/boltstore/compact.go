package boltstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// compactTxSize bounds the writes of one transaction of Compact, so that
// copying a large file never holds gigabytes of dirty pages.
const compactTxSize = 64 << 20

// CompactResult is what Compact did: the file's size before and after.
type CompactResult struct {
	Before, After int64
}

// Compact rewrites the bbolt file at path with only the pages its records
// use, giving the space of deleted records back to the file system
// (bbolt reuses freed pages but never shrinks a file). It works offline:
// no Store, in this process or another, may have the file open; a file
// that is locked is an error after opts' Timeout. The records are copied
// into path + ".compact", which is synced and then renamed over path, so
// that a failure at any point leaves the original file as it was.
func Compact(path string, opts *Options) (CompactResult, error) {
	o := opts.withDefaults()
	before, err := os.Stat(path)
	if err != nil {
		return CompactResult{}, fmt.Errorf("boltstore: compact: %w", err)
	}
	// The source is opened for writing, which takes bbolt's exclusive
	// lock, though nothing is written to it: held until the copy has
	// replaced it, the lock keeps a server from opening the file and
	// writing what the rename would then throw away.
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: o.Timeout, FreelistType: bbolt.FreelistMapType, NoFreelistSync: true})
	if errors.Is(err, berrors.ErrTimeout) {
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: the file is locked by another Store or process (waited %v): %w", path, o.Timeout, err)
	}
	if err != nil {
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: %w", path, err)
	}
	defer src.Close()
	tmp := path + ".compact"
	_ = os.Remove(tmp) // a leftover of an interrupted compaction
	dst, err := bbolt.Open(tmp, before.Mode().Perm(), &bbolt.Options{Timeout: o.Timeout, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: %w", path, err)
	}
	if err := bbolt.Compact(dst, src, compactTxSize); err != nil {
		dst.Close()
		os.Remove(tmp)
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: %w", path, err)
	}
	// bbolt syncs every commit; closing leaves a complete file.
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return CompactResult{}, fmt.Errorf("boltstore: compact %s: %w", path, err)
	}
	after, err := os.Stat(path)
	if err != nil {
		return CompactResult{}, fmt.Errorf("boltstore: compact: %w", err)
	}
	return CompactResult{Before: before.Size(), After: after.Size()}, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
