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
	// a group (see group.go), and deferred writes (see deferWrite) until
	// the next statement or the COMMIT. A transaction whose function
	// sends no statement never begins on the server. begun reports that
	// the BEGIN was sent, and sent counts the statements sent.
	pending []queued
	begun   bool
	sent    int
	// carried counts the statements at the head of pending that an
	// earlier function of a group left there: its deferred writes. A
	// failure among them belongs to that function, which has ended as
	// kept, so it fails the group as a whole (lost).
	carried int
	// failed is the error that aborted the transaction, and retry
	// reports that it is a serialization failure or a deadlock. lost
	// reports that it failed in a statement of an earlier function of a
	// group.
	failed error
	retry  bool
	lost   bool
	// spaces holds the workspaces known to exist in this transaction.
	// Once seen, one stays until DeleteWorkspace deletes it. users holds
	// the users an Update read, which exist until DeleteUser or
	// DeleteWorkspace deletes them; a View, which writes nothing, keeps
	// none (view).
	spaces map[string]bool
	users  map[userRef]bool
	view   bool
	// shard is the shard of role_counts and group_counts to which a
	// write transaction adds what it changes (see access.go): the Store
	// gives its write transactions the shards in turn.
	shard int16

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

// queued is a statement waiting in tx.pending.
type queued struct {
	sql  string
	args []any
}

// userRef names one user of one workspace.
type userRef struct {
	slug string
	id   int64
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
	t := &tx{ctx: context.WithoutCancel(ctx), conn: conn, begun: len(begin) == 0}
	for _, sql := range begin {
		t.pending = append(t.pending, queued{sql: sql})
	}
	return t
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

// pendingSent is what became of the pending statements sent in a batch:
// how many of them there were, and how many succeeded.
type pendingSent struct {
	n, ok int
}

// queuePending queues the pending statements to b, each counting itself
// in the returned pendingSent when it succeeds.
func (t *tx) queuePending(b *pgx.Batch) *pendingSent {
	p := &pendingSent{n: len(t.pending)}
	count := func(pgconn.CommandTag) error { p.ok++; return nil }
	for _, q := range t.pending {
		b.Queue(q.sql, q.args...).Exec(count)
	}
	t.pending, t.begun = nil, true
	return p
}

// pendingFailed takes err, the error of a batch that began with the
// pending statements p: if the server refused one of them, it records the
// failure as the transaction's and returns it wrapped in errAborted, for
// the statement the batch was sent for never ran; a failure among the
// carried statements loses the group. Otherwise (no statement refused, or
// the connection failed) it returns err as it is.
func (t *tx) pendingFailed(p *pendingSent, err error) error {
	carried := t.carried
	t.carried = 0
	var pgErr *pgconn.PgError
	if err == nil || p.ok >= p.n || !errors.As(err, &pgErr) {
		return err
	}
	if t.failed == nil {
		t.failed, t.retry = err, retryable(err)
	}
	if p.ok < carried {
		t.lost = true
	}
	return t.aborted()
}

// sendFirst sends the pending statements and then sql in one round trip;
// read sets how the result of sql is read. It returns the first error.
func (t *tx) sendFirst(sql string, args []any, read func(*pgx.QueuedQuery)) error {
	b := &pgx.Batch{}
	p := t.queuePending(b)
	read(b.Queue(sql, args...))
	t.sent++
	return t.pendingFailed(p, t.conn.SendBatch(t.ctx, b).Close())
}

// sendBatch sends the statements of b in one round trip, after the
// pending ones, and runs the functions queued with them on their
// results. The functions must not fail for a row that is not there: pgx
// forgets the prepared statements of a batch that fails.
func (t *tx) sendBatch(b *pgx.Batch) error {
	if err := t.aborted(); err != nil {
		return err
	}
	p := &pendingSent{}
	if t.pending != nil {
		first := &pgx.Batch{}
		p = t.queuePending(first)
		b.QueuedQueries = append(first.QueuedQueries, b.QueuedQueries...)
	}
	t.sent += b.Len()
	if err := t.pendingFailed(p, t.conn.SendBatch(t.ctx, b).Close()); err != nil {
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
	p := t.queuePending(b)
	t.sent += b.Len()
	if err := t.pendingFailed(p, t.conn.SendBatch(t.ctx, b).Close()); err != nil {
		return t.fail(err)
	}
	return nil
}

// deferWrite queues a write whose result the transaction need not wait
// for, to go with the next statement or the COMMIT, in their round trip.
// Only a write that cannot fail but with the transaction may wait so (a
// serialization failure, a lost connection): its caller reports nothing
// of its result, so the transaction's failure is where its failure
// shows. Before the transaction has begun, it is sent at once.
func (t *tx) deferWrite(sql string, args ...any) error {
	if err := t.aborted(); err != nil {
		return err
	}
	if !t.begun {
		_, err := t.exec(sql, args...)
		return err
	}
	t.pending = append(t.pending, queued{sql: sql, args: args})
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

// listRows runs a query for the records of the workspace slug and scans
// each row with scan. Finding none is no error, unless the workspace does
// not exist (store.ErrNotFound).
func listRows[T any](t *tx, slug, sql string, args []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	out, err := collect(t, sql, args, func(r pgx.Rows) (T, error) { return scan(r) })
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, t.emptyResult(slug)
	}
	return out, nil
}

// getRow scans row, the result of a query for one record of the
// workspace slug, with scan. With no row it returns the error of missing,
// which names the record as format and args do.
func getRow[T any](t *tx, slug string, row pgx.Row, scan func(pgx.Row) (T, error), format string, args ...any) (T, error) {
	r, err := scan(row)
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, pgx.ErrNoRows):
		var zero T
		return zero, t.missing(slug, format, args...)
	default:
		var zero T
		return zero, t.fail(err)
	}
}

// flushWrites appends to w the writes of what the transaction kept in
// memory (see seqs and newUsers).
func (t *tx) flushWrites(w []queued) []queued {
	for k, d := range t.seqs {
		if !d.written {
			w = append(w, queued{"UPDATE sequences SET value = $3 WHERE workspace = $1 AND name = $2",
				[]any{k.slug, string(k.seq), d.last}})
		}
	}
	for slug, chunks := range t.newUsers {
		for chunk, n := range chunks {
			switch {
			case n > 0:
				w = append(w, queued{`INSERT INTO user_chunks AS c (workspace, chunk, n) VALUES ($1, $2, $3)
					ON CONFLICT (workspace, chunk) DO UPDATE SET n = c.n + excluded.n`, []any{slug, chunk, n}})
			case n < 0:
				// The chunk's row counts the users deleted: it exists.
				w = append(w,
					queued{"UPDATE user_chunks SET n = n + $3 WHERE workspace = $1 AND chunk = $2", []any{slug, chunk, n}},
					queued{"DELETE FROM user_chunks WHERE workspace = $1 AND chunk = $2 AND n = 0", []any{slug, chunk}})
			}
		}
	}
	return w
}

// errRolledBack is the error of a COMMIT that PostgreSQL answered with a
// rollback.
var errRolledBack = errors.New("the server rolled the transaction back")

// commit sends the deferred writes and the writes of what the
// transaction kept in memory, and commits it, in one round trip. It calls
// written once the writes are done, before it waits for the COMMIT (and
// its WAL flush): a flush request between them has the server send their
// results at once, which it would otherwise hold until the end of the
// round trip. A failed write is recorded as the transaction's failure;
// the error of the COMMIT is returned as is.
func (t *tx) commit(written func()) error {
	writes := t.flushWrites(t.pending)
	t.pending, t.carried = nil, 0
	bound, err := t.bind(writes)
	if err != nil {
		written()
		return t.fail(err)
	}
	p := t.conn.PgConn().StartPipeline(t.ctx)
	for _, b := range bound {
		p.SendQueryStatement(b.sd, b.values, b.formats, nil)
	}
	p.SendFlushRequest()
	p.SendQueryParams("COMMIT", nil, nil, nil, nil)
	if err := p.Sync(); err != nil {
		written()
		return t.fail(err)
	}
	for range bound {
		if _, err := pipelineResult(p); err != nil {
			_ = p.Close()
			written()
			return t.fail(err)
		}
	}
	written()
	tag, err := pipelineResult(p)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		err = errRolledBack
	}
	return err
}

// pipelineResult reads the result of the next statement of p.
func pipelineResult(p *pgconn.Pipeline) (pgconn.CommandTag, error) {
	res, err := p.GetResults()
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return pgconn.CommandTag{}, fmt.Errorf("pgstore: a statement's result is %T", res)
	}
	return rr.Close()
}

// boundStatement is a statement prepared on the connection and its
// arguments, encoded.
type boundStatement struct {
	sd      *pgconn.StatementDescription
	values  [][]byte
	formats []int16
}

// bind prepares the statements of qs on the connection (once: pgx keeps
// them by their SQL) and encodes their arguments, for a pipeline.
func (t *tx) bind(qs []queued) ([]boundStatement, error) {
	types := t.conn.TypeMap()
	bound := make([]boundStatement, len(qs))
	for i, q := range qs {
		sd, err := t.conn.Prepare(t.ctx, q.sql, q.sql)
		if err != nil {
			return nil, err
		}
		if len(sd.ParamOIDs) != len(q.args) {
			return nil, fmt.Errorf("pgstore: %d arguments for the %d parameters of %q", len(q.args), len(sd.ParamOIDs), q.sql)
		}
		b := boundStatement{sd: sd, values: make([][]byte, len(q.args)), formats: make([]int16, len(q.args))}
		// Encode appends to buf and returns nil for NULL; an empty value
		// is an empty slice, not nil, which would be NULL.
		buf := make([]byte, 0, 64)
		for j, arg := range q.args {
			oid := sd.ParamOIDs[j]
			b.formats[j] = types.FormatCodeForOID(oid)
			start := len(buf)
			out, err := types.Encode(oid, b.formats[j], arg, buf)
			if err != nil {
				return nil, fmt.Errorf("pgstore: argument %d of %q: %w", j+1, q.sql, err)
			}
			if out != nil {
				buf = out
				b.values[j] = buf[start:len(buf):len(buf)]
			}
		}
		bound[i] = b
	}
	return bound, nil
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

// knowUser records that the user exists, for deferWrite.
func (t *tx) knowUser(slug string, id int64) {
	if t.view {
		return
	}
	if t.users == nil {
		t.users = make(map[userRef]bool)
	}
	t.users[userRef{slug, id}] = true
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

// noneAsNil returns s, or nil for none, for the text[] columns of lists
// that most records leave empty (an OAuth client's claims, the sign-in
// methods of a session, a request or a grant): a column reads back none
// as an empty slice, and the identity package and the other stores give
// nil.
func noneAsNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
