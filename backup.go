package identity

import (
	"context"
	"errors"
	"io"

	"github.com/identitylib/identity/store"
)

// Backup writes a consistent snapshot of the whole database, every
// workspace, to w while the Service keeps serving, and returns the number
// of bytes written. Every change that returned before Backup was called
// is in the snapshot; changes made while it runs are not blocked, and not
// in it. It needs a Store that implements store.Backuper: a bbolt file
// (Open, package boltstore) does, and the snapshot is a bbolt file that
// Open opens as it is; restore it by putting it in place of the database
// file while no process holds that.
//
// A Store that cannot, such as PostgreSQL's (back it up with pg_dump) or
// the in-memory one, gets an Error with CodeInvalid: the request does not
// fit this Service. A failure of the store or of w is CodeInternal, with
// the cause in Err, and an ended ctx returns ctx.Err().
func (s *Service) Backup(ctx context.Context, w io.Writer) (int64, error) {
	b, ok := storeAs[store.Backuper](s.store)
	if !ok {
		return 0, errorf(CodeInvalid, "this store cannot take a backup of itself while it runs (back up a PostgreSQL database with pg_dump)")
	}
	n, err := b.Backup(ctx, w)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return n, err
	}
	return n, &Error{Code: CodeInternal, Message: "backup failed", Err: err}
}

// storeAs returns st as a T, one of the optional interfaces of a Store
// (store.Backuper, store.Exclusive), looking through the wrappers the
// Service puts around its store (see observed) and those a program puts
// around its own, which have an Unwrap method returning the store they
// wrap.
func storeAs[T any](st store.Store) (T, bool) {
	for {
		if t, ok := st.(T); ok {
			return t, true
		}
		w, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			var zero T
			return zero, false
		}
		st = w.Unwrap()
	}
}
