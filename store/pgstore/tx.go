package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/identitylib/identity/store"
)

// errAborted is wrapped by the error of every statement that tx refuses
// to send because an earlier one failed.
var errAborted = errors.New("an earlier statement of the transaction failed")

// tx is the store.Tx of one View or one Update attempt. View and Update
// pass it to the function through store.RunView and store.RunUpdate,
// which refuse writes in a View and any use after the function returned.
//
// Once a statement fails, PostgreSQL refuses every later statement of the
// transaction, so tx remembers the first failure, and every statement
// goes through exec, queryRow, row, collect, sendBatch or copy, which
// return it without asking the server. Methods whose contract reports a
// refusal and lets the transaction go on (PutUser's ErrConflict, a
// missing workspace's ErrNotFound) find out with statements that cannot
// fail for that reason: they read first, or write with INSERT ... SELECT
// ... WHERE and count the rows.
type tx struct {
	// ctx is the caller's context without its cancellation: a
	// transaction that has begun runs to its end.
	ctx  context.Context
	conn *pgx.Conn
	// pending holds statements to send with the next one, in the same
	// round trip: the BEGIN (and the gate) until the transaction's first
	// statement, a SAVEPOINT until the first statement of a function of
	// a group (see group.go). A transaction whose function sends no
	// statement never begins on the server. begun reports that the
	// BEGIN was sent, and sent counts the statements sent.
	pending []string
	begun   bool
	sent    int
	// failed is the error that aborted the transaction, and retry
	// reports that it is a serialization failure or a deadlock.
	failed error
	retry  bool
	// spaces holds the workspaces known to exist in this transaction.
	// Once seen, one stays until DeleteWorkspace deletes it.
	spaces map[string]bool

	// Writes that commit makes once, with the COMMIT, however often the
	// transaction asked for them: one row updated again and again in a
	// transaction leaves a version of itself behind each time, and every
	// later update wades through them.
	//
	// seqs holds the sequences NextID drew from: the first draw updated
	// (and so locked) the counter row, later draws count on here.
	seqs map[seqKey]*seqDraw
	// newUsers counts the users PutUser inserted less those DeleteUser
	// deleted, per workspace and chunk, for user_chunks.
	newUsers map[string]map[int64]int64
}

// seqKey names one sequence of one workspace.
type seqKey struct {
	slug string
	seq  store.Sequence
}

// seqDraw is the state of a sequence in a transaction.
type seqDraw struct {
	last    int64 // the last id handed out
	written bool  // the counter row holds last
}

var _ store.Tx = (*tx)(nil)

// newTx returns the transaction of one View or Update attempt on conn,
// which the statements of begin will begin with its first statement. With
// no statements, the caller has begun it already.
func newTx(ctx context.Context, conn *pgx.Conn, begin ...string) *tx {
	return &tx{ctx: context.WithoutCancel(ctx), conn: conn, pending: begin, begun: len(begin) == 0}
}

// aborted returns the error of a statement after an earlier one failed,
// or nil.
func (t *tx) aborted() error {
	if t.failed == nil {
		return nil
	}
	return fmt.Errorf("pgstore: %w: %w", errAborted, t.failed)
}

// fail records err, which a statement returned, as the transaction's
// failure and returns it wrapped: a unique violation as store.ErrConflict,
// a foreign key violation as store.ErrNotFound.
func (t *tx) fail(err error) error {
	if errors.Is(err, errAborted) {
		return err
	}
	if t.failed == nil {
		t.failed = err
		t.retry = retryable(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeUniqueViolation:
			return fmt.Errorf("pgstore: %w: %w", store.ErrConflict, err)
		case codeForeignKeyViolation:
			return fmt.Errorf("pgstore: %w: %w", store.ErrNotFound, err)
		}
	}
	return fmt.Errorf("pgstore: %w", err)
}

// queuePending queues the pending statements to b, and counts them sent.
func (t *tx) queuePending(b *pgx.Batch) {
	for _, s := range t.pending {
		b.Queue(s)
	}
	t.pending, t.begun = nil, true
}

// sendFirst sends the pending statements and then sql in one round trip;
// read sets how the result of sql is read. It returns the first error.
func (t *tx) sendFirst(sql string, args []any, read func(*pgx.QueuedQuery)) error {
	b := &pgx.Batch{}
	t.queuePending(b)
	read(b.Queue(sql, args...))
	t.sent++
	return t.conn.SendBatch(t.ctx, b).Close()
}

// sendBatch sends the statements of b in one round trip, after the
// pending ones, and runs the functions queued with them on their
// results. The functions must not fail for a row that is not there: pgx
// forgets the prepared statements of a batch that fails.
func (t *tx) sendBatch(b *pgx.Batch) error {
	if err := t.aborted(); err != nil {
		return err
	}
	if t.pending != nil {
		first := &pgx.Batch{}
		t.queuePending(first)
		b.QueuedQueries = append(first.QueuedQueries, b.QueuedQueries...)
	}
	t.sent += b.Len()
	if err := t.conn.SendBatch(t.ctx, b).Close(); err != nil {
		return t.fail(err)
	}
	return nil
}

// sendPending sends the pending statements on their own, before a
// statement that cannot go in one round trip with them (COPY).
func (t *tx) sendPending() error {
	if err := t.aborted(); err != nil {
		return err
	}
	if t.pending == nil {
		return nil
	}
	b := &pgx.Batch{}
	t.queuePending(b)
	t.sent += b.Len()
	if err := t.conn.SendBatch(t.ctx, b).Close(); err != nil {
		return t.fail(err)
	}
	return nil
}

// exec runs a statement that returns no rows.
func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.aborted(); err != nil {
		return pgconn.CommandTag{}, err
	}
	var tag pgconn.CommandTag
	var err error
	if t.pending != nil {
		err = t.sendFirst(sql, args, func(q *pgx.QueuedQuery) {
			q.Exec(func(ct pgconn.CommandTag) error { tag = ct; return nil })
		})
	} else {
		t.sent++
		tag, err = t.conn.Exec(t.ctx, sql, args...)
	}
	if err != nil {
		return tag, t.fail(err)
	}
	return tag, nil
}

// queryRow runs a query for one row and scans it into dest. It returns
// found false, and no error, when there is no row.
func (t *tx) queryRow(sql string, args []any, dest ...any) (found bool, err error) {
	err = t.row(sql, args...).Scan(dest...)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	default:
		return false, t.fail(err)
	}
}

// row runs a query for one row, which the caller scans, as pgx.Conn's
// QueryRow does.
func (t *tx) row(sql string, args ...any) pgx.Row {
	if err := t.aborted(); err != nil {
		return errRow{err}
	}
	if t.pending != nil {
		return firstRow{t: t, sql: sql, args: args}
	}
	t.sent++
	return t.conn.QueryRow(t.ctx, sql, args...)
}

// errRow is a pgx.Row whose Scan returns err.
type errRow struct{ err error }

// Scan implements pgx.Row.
func (r errRow) Scan(...any) error { return r.err }

// firstRow is the pgx.Row of a statement that goes with the pending
// ones: Scan sends them all.
type firstRow struct {
	t    *tx
	sql  string
	args []any
}

// Scan implements pgx.Row. The row's error (pgx.ErrNoRows for none) is
// Scan's, not the batch's: pgx forgets the prepared statements of a batch
// that fails, and a row that is not there is no failure.
func (r firstRow) Scan(dest ...any) error {
	var scanned error
	err := r.t.sendFirst(r.sql, r.args, func(q *pgx.QueuedQuery) {
		q.QueryRow(func(row pgx.Row) error { scanned = row.Scan(dest...); return nil })
	})
	if scanned != nil {
		return scanned
	}
	return err
}

// collect runs a query and scans each row with scan, which receives the
// row and returns the record it read.
func collect[T any](t *tx, sql string, args []any, scan func(pgx.Rows) (T, error)) ([]T, error) {
	if err := t.aborted(); err != nil {
		return nil, err
	}
	var out []T
	read := func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	}
	var err error
	if t.pending != nil {
		err = t.sendFirst(sql, args, func(q *pgx.QueuedQuery) { q.Query(read) })
	} else {
		t.sent++
		var rows pgx.Rows
		if rows, err = t.conn.Query(t.ctx, sql, args...); err == nil {
			err = read(rows)
		}
	}
	if err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

// queueFlush queues the writes of what the transaction kept in memory
// (see seqs and newUsers) to b.
func (t *tx) queueFlush(b *pgx.Batch) {
	for k, d := range t.seqs {
		if !d.written {
			b.Queue("UPDATE sequences SET value = $3 WHERE workspace = $1 AND name = $2", k.slug, string(k.seq), d.last)
		}
	}
	for slug, chunks := range t.newUsers {
		for chunk, n := range chunks {
			switch {
			case n > 0:
				b.Queue(`INSERT INTO user_chunks AS c (workspace, chunk, n) VALUES ($1, $2, $3)
					ON CONFLICT (workspace, chunk) DO UPDATE SET n = c.n + excluded.n`, slug, chunk, n)
			case n < 0:
				// The chunk's row counts the users deleted: it exists.
				b.Queue("UPDATE user_chunks SET n = n + $3 WHERE workspace = $1 AND chunk = $2", slug, chunk, n)
				b.Queue("DELETE FROM user_chunks WHERE workspace = $1 AND chunk = $2 AND n = 0", slug, chunk)
			}
		}
	}
}

// errRolledBack is the error of a COMMIT that PostgreSQL answered with a
// rollback.
var errRolledBack = errors.New("the server rolled the transaction back")

// commit writes what the transaction kept in memory and commits it, in
// one round trip. It calls written once the writes are done, before it
// waits for the COMMIT (and its WAL flush). A failed write is recorded as
// the transaction's failure; the error of the COMMIT is returned as is.
func (t *tx) commit(written func()) error {
	b := &pgx.Batch{}
	t.queueFlush(b)
	writes := b.Len()
	b.Queue("COMMIT")
	br := t.conn.SendBatch(t.ctx, b)
	for range writes {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			written()
			return t.fail(err)
		}
	}
	written()
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		err = errRolledBack
	}
	return err
}

// Workspace existence. Methods that find nothing must tell a missing
// workspace (store.ErrNotFound) from an empty result; they ask only then,
// and at most once per workspace and transaction.

// workspaceExists reports whether the workspace exists.
func (t *tx) workspaceExists(slug string) (bool, error) {
	if t.spaces[slug] {
		return true, nil
	}
	if !storable(slug) {
		return false, nil
	}
	var exists bool
	if _, err := t.queryRow("SELECT EXISTS (SELECT 1 FROM workspaces WHERE slug = $1)", []any{slug}, &exists); err != nil {
		return false, err
	}
	if exists {
		t.knowSpace(slug)
	}
	return exists, nil
}

// knowSpace records that the workspace exists.
func (t *tx) knowSpace(slug string) {
	if t.spaces == nil {
		t.spaces = make(map[string]bool)
	}
	t.spaces[slug] = true
}

// requireWorkspace returns store.ErrNotFound unless the workspace exists.
func (t *tx) requireWorkspace(slug string) error {
	exists, err := t.workspaceExists(slug)
	if err != nil {
		return err
	}
	if !exists {
		return notFound("workspace %q", slug)
	}
	return nil
}

// notFound returns store.ErrNotFound wrapped with what was not found.
func notFound(format string, args ...any) error {
	return fmt.Errorf("pgstore: "+format+": %w", append(args, store.ErrNotFound)...)
}

// missing returns the error of a lookup in the workspace that found
// nothing: store.ErrNotFound for the workspace if it does not exist, else
// for what, or the error of asking.
func (t *tx) missing(slug, format string, args ...any) error {
	if err := t.requireWorkspace(slug); err != nil {
		return err
	}
	return notFound(format, args...)
}

// emptyResult returns the error of a listing in the workspace that found
// nothing: store.ErrNotFound if the workspace does not exist, else nil.
func (t *tx) emptyResult(slug string) error {
	return t.requireWorkspace(slug)
}

// Values PostgreSQL text cannot hold.

// storable reports whether a text column can hold s: PostgreSQL text is
// valid UTF-8 without NUL.
func storable(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// errNotText is returned by writes of a string a text column cannot hold.
var errNotText = errors.New("PostgreSQL text cannot hold NUL bytes or invalid UTF-8")

// checkText returns an error naming the first field whose value a text
// column cannot hold. fields alternate names and values.
func checkText(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if !storable(fields[i+1]) {
			return fmt.Errorf("pgstore: %s %q: %w", fields[i], fields[i+1], errNotText)
		}
	}
	return nil
}

// checkTexts is checkText for the elements of a text[] column.
func checkTexts(field string, values []string) error {
	for _, v := range values {
		if err := checkText(field, v); err != nil {
			return err
		}
	}
	return nil
}

// Conversions.

// ts returns t as the store keeps times: microseconds, UTC. Go's zero
// time is kept as itself, 0001-01-01 UTC, which timestamptz can hold.
func ts(t time.Time) time.Time { return t.Round(0).Truncate(time.Microsecond).UTC() }

// bin returns b, or an empty slice for nil: the bytea columns are NOT
// NULL, and pgx sends a nil slice as NULL.
func bin(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// texts returns s, or an empty slice for nil, for the NOT NULL text[]
// columns.
func texts(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
