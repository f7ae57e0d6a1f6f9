package store

import (
	"context"
	"io"
)

// Backuper is implemented by a Store that can copy itself while it runs.
// A Store need not implement it: the identity package's Service.Backup
// refuses a Store that does not, and a PostgreSQL database (package
// pgstore) is backed up with pg_dump instead.
type Backuper interface {
	// Backup writes a consistent snapshot of every record of the store to
	// w and returns the number of bytes written: every Update that
	// returned nil before Backup was called is in it, and no part of one
	// that began after. Writers are not blocked while it runs: Updates
	// commit meanwhile and are not in the snapshot. The form of the
	// snapshot is the implementation's (boltstore writes a bbolt file,
	// which boltstore.Open opens as it is). Backup returns ctx.Err() if
	// ctx ends before or while it writes, and ErrClosed after Close.
	Backup(ctx context.Context, w io.Writer) (int64, error)
}
