package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/identitylib/identity/store"
)

var _ store.Backuper = (*Store)(nil)

// Backup writes a copy of the whole bbolt file to w, as of one read-only
// transaction: every Update that returned before Backup was called is in
// it, and Updates go on committing while it runs (bbolt's Tx.WriteTo).
// The copy is a bbolt file that Open opens as it is; Backup returns the
// number of bytes written.
//
// Two costs of a long backup fall on the writers: pages freed while it
// runs are not reused until it ends, so the file may grow meanwhile, and
// a commit that must grow the memory map beyond Options.InitialMmapSize
// waits for it to end. ctx is checked before the copy begins and before
// each write to w.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.isClosed() {
		return 0, store.ErrClosed
	}
	btx, err := s.db.Begin(false)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return 0, store.ErrClosed // Close won the race after isClosed
	}
	if err != nil {
		return 0, fmt.Errorf("boltstore: begin backup: %w", err)
	}
	defer func() { _ = btx.Rollback() }()
	n, err := btx.WriteTo(ctxWriter{ctx: ctx, w: w})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return n, cerr
		}
		return n, fmt.Errorf("boltstore: backup: %w", err)
	}
	return n, nil
}

// ctxWriter is w that fails once ctx has ended, so that a backup to a
// slow writer can be stopped.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
