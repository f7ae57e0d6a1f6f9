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
//
// A backup taken is recorded in the audit trail of every workspace it
// holds (backup, with the bytes written), after the snapshot, so the
// records are not in it: a backup holds every workspace's users and the
// hashes of their secrets, and each workspace's trail says when one
// left.
func (s *Service) Backup(ctx context.Context, w io.Writer) (int64, error) {
	b, ok := storeAs[store.Backuper](s.store)
	if !ok {
		return 0, errorf(CodeInvalid, "this store cannot take a backup of itself while it runs (back up a PostgreSQL database with pg_dump)")
	}
	// The workspaces listed before the snapshot are in it (unless deleted
	// meanwhile): those are the ones the backup took.
	var recs []store.Workspace
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.Workspaces()
		return err
	})
	if err != nil {
		return 0, fromStore(err, "workspace")
	}
	n, err := b.Backup(ctx, w)
	switch {
	case err == nil:
		return n, s.auditBackup(ctx, recs, n)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return n, err
	}
	return n, &Error{Code: CodeInternal, Message: "backup failed", Err: err}
}

// auditBackup records a backup of n bytes in every workspace of recs;
// one deleted meanwhile is skipped.
func (s *Service) auditBackup(ctx context.Context, recs []store.Workspace, n int64) error {
	for _, rec := range recs {
		w := &Workspace{svc: s, slug: rec.Slug, createdAt: rec.CreatedAt}
		err := w.auditAlone(ctx, auditEntry{action: AuditBackup, target: w.asTarget(), changes: auditChanges{}.set("bytes", nil, n)})
		if err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
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
