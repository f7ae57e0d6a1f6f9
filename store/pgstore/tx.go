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
// goes through exec, queryRow, row or collect, which return it without
// asking the server. Methods whose contract
// reports a refusal and lets the transaction go on (PutUser's
// ErrConflict, a missing workspace's ErrNotFound) find out with
// statements that cannot fail for that reason: they read first, or write
// with INSERT ... SELECT ... WHERE and count the rows.
type tx struct {
	// ctx is the caller's context without its cancellation: a
	// transaction that has begun runs to its end.
	ctx context.Context
	pg  pgx.Tx
	// failed is the error that aborted the transaction, and retry
	// reports that it is a serialization failure or a deadlock.
	failed error
	retry  bool
	// spaces holds the workspaces known to exist in this transaction.
	// Once seen, one stays until DeleteWorkspace deletes it.
	spaces map[string]bool

	// Writes that flush makes once, before the commit, however often the
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

func newTx(ctx context.Context, pg pgx.Tx) *tx {
	return &tx{ctx: context.WithoutCancel(ctx), pg: pg}
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

// exec runs a statement that returns no rows.
func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.aborted(); err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := t.pg.Exec(t.ctx, sql, args...)
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

// row runs a query for one row, which the caller scans, as pgx.Tx's
// QueryRow does.
func (t *tx) row(sql string, args ...any) pgx.Row {
	if err := t.aborted(); err != nil {
		return errRow{err}
	}
	return t.pg.QueryRow(t.ctx, sql, args...)
}

// errRow is a pgx.Row whose Scan returns err.
type errRow struct{ err error }

// Scan implements pgx.Row.
func (r errRow) Scan(...any) error { return r.err }

// collect runs a query and scans each row with scan, which receives the
// row and returns the record it read.
func collect[T any](t *tx, sql string, args []any, scan func(pgx.Rows) (T, error)) ([]T, error) {
	if err := t.aborted(); err != nil {
		return nil, err
	}
	rows, err := t.pg.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			rows.Close()
			return nil, t.fail(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

// flush writes what the transaction kept in memory (see seqs and newUsers),
// in one round trip.
func (t *tx) flush() error {
	b := &pgx.Batch{}
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
	if b.Len() == 0 {
		return nil
	}
	if err := t.pg.SendBatch(t.ctx, b).Close(); err != nil {
		return t.fail(err)
	}
	return nil
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
