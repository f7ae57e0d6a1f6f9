package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/identitylib/identity/store"
)

// Defaults used for the zero fields of Options.
const (
	// DefaultMaxAttempts is how many times Update runs a transaction that
	// keeps failing with a serialization failure or a deadlock. The
	// attempt after the optimistic ones runs alone (see the package
	// documentation) and so does not fail that way; the rest are a margin
	// for failures that come from outside the store.
	DefaultMaxAttempts = 10
	// DefaultOptimisticAttempts is how many attempts run side by side
	// with other transactions before one runs alone.
	DefaultOptimisticAttempts = 3
	// DefaultQueueWait is how long the Updates waiting in a Store's writer
	// queue wait for the one at its head before they run beside it.
	DefaultQueueWait = 10 * time.Millisecond
	// DefaultMaxGroupSize is the most Update calls that share one
	// transaction (see the package documentation).
	DefaultMaxGroupSize = 16
)

// Options configures Open. A nil *Options, like any zero field, means the
// default.
type Options struct {
	// MaxConns is the most connections the pool holds open to the server,
	// and so the most transactions of this Store that run at once; more
	// wait for a connection. Zero means the URL's pool_max_conns
	// parameter, or else pgxpool's default: the greater of 4 and the
	// number of CPUs.
	MaxConns int32
	// MaxAttempts is how many times Update runs its function while the
	// transaction fails with a serialization failure (SQLSTATE 40001) or
	// a deadlock (40P01). Zero means DefaultMaxAttempts; 1 turns retrying
	// off.
	MaxAttempts int
	// OptimisticAttempts is how many of those attempts run side by side
	// with other transactions; the next ones run alone. Zero means
	// DefaultOptimisticAttempts; a negative value means every attempt
	// runs side by side.
	OptimisticAttempts int
	// QueueWait bounds the writer queue (see the package documentation):
	// the Updates of the Store run their statements one at a time, and
	// those waiting run beside the one at the head once it has run its
	// statements for QueueWait. Zero means DefaultQueueWait; a negative
	// value turns the queue off, so that Updates run side by side from
	// their start, and with it grouping.
	QueueWait time.Duration
	// MaxGroupSize is the most Update calls of the Store whose functions
	// run in one transaction and commit together: the one that takes the
	// writer queue and those waiting in it then. Zero means
	// DefaultMaxGroupSize; 1 turns grouping off, so that every Update
	// runs in a transaction of its own.
	MaxGroupSize int
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.MaxAttempts <= 0 {
		out.MaxAttempts = DefaultMaxAttempts
	}
	if out.OptimisticAttempts == 0 {
		out.OptimisticAttempts = DefaultOptimisticAttempts
	}
	if out.OptimisticAttempts < 0 {
		out.OptimisticAttempts = out.MaxAttempts
	}
	if out.QueueWait == 0 {
		out.QueueWait = DefaultQueueWait
	}
	if out.MaxGroupSize <= 0 {
		out.MaxGroupSize = DefaultMaxGroupSize
	}
	return out
}

// IsURL reports whether s is a PostgreSQL connection URL, one that starts
// with postgres:// or postgresql://. identity.Open and identityd's -db use
// it to tell a database URL from a bbolt file path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Store is a store.Store kept in a PostgreSQL database. It is safe for
// concurrent use, and any number of Stores, in any number of processes,
// may share one database. Create one with Open and release it with Close.
type Store struct {
	pool       *pgxpool.Pool
	attempts   int
	optimistic int
	queue      *writerQueue // nil: off
	maxGroup   int
	unended    unended
	endDelay   time.Duration
	closed     atomic.Bool
	// shards hands out the shards of the counts (see access.go).
	shards atomic.Uint32

	commits, retries, alone, gaveUp, mostAttempts, grouped atomic.Uint64
}

var _ store.Store = (*Store)(nil)

// Stats counts what Update did since Open, for benchmarks and metrics.
type Stats struct {
	// Commits counts the Update calls that committed.
	Commits uint64
	// Retries counts the attempts run again after a serialization failure
	// or a deadlock.
	Retries uint64
	// Alone counts the attempts that ran alone.
	Alone uint64
	// GaveUp counts the Update calls that failed because every attempt hit
	// a serialization failure or a deadlock.
	GaveUp uint64
	// MostAttempts is the most attempts one Update call has made.
	MostAttempts uint64
	// Grouped counts the Update calls that committed in a transaction
	// shared with others (see Options.MaxGroupSize).
	Grouped uint64
}

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as pgx accepts), brings its schema up to date and
// returns a Store over it.
//
// The tables live in the first existing schema of the connection's
// search_path (public, unless the URL sets search_path, for example
// ?search_path=identity). Migrations run while Open holds an advisory lock
// for that schema, so processes that start at once apply each migration
// exactly once, and Open fails on a schema newer than this package knows.
// ctx bounds connecting and migrating; it is not kept.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	return open(ctx, url, opts, nil)
}

// open is Open, with configure (if not nil) called on the pool's
// configuration before the pool is made, for tests.
func open(ctx context.Context, url string, opts *Options, configure func(*pgxpool.Config)) (*Store, error) {
	o := opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if configure != nil {
		configure(cfg)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		// Scan timestamptz in UTC, as store.Store promises, rather than
		// in the local time zone.
		c.TypeMap().RegisterType(&pgtype.Type{
			Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := migrateSchema(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, attempts: o.MaxAttempts, optimistic: o.OptimisticAttempts, maxGroup: o.MaxGroupSize,
		endDelay: defaultEndDelay}
	if o.QueueWait > 0 {
		s.queue = newWriterQueue(o.QueueWait)
	}
	// Stores that start together (processes) start at different shards.
	s.shards.Store(rand.Uint32N(countShards))
	return s, nil
}

// nextShard returns the shard of the counts for a new write transaction:
// each transaction the next one, so that two that follow one another (a
// group commits while the next one runs) never share a count row.
func (s *Store) nextShard() int16 {
	return int16(s.shards.Add(1) % countShards)
}

// migrateSchema applies the embedded migrations on one connection of pool.
func migrateSchema(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Release()
	return migrate(ctx, conn.Conn(), ms)
}

// Stats returns the Store's counters.
func (s *Store) Stats() Stats {
	return Stats{
		Commits: s.commits.Load(), Retries: s.retries.Load(), Alone: s.alone.Load(),
		GaveUp: s.gaveUp.Load(), MostAttempts: s.mostAttempts.Load(), Grouped: s.grouped.Load(),
	}
}

// Close closes every connection. It waits for running transactions to
// end. Later calls to View, Update and Close return store.ErrClosed.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return store.ErrClosed
	}
	s.endAll()
	s.pool.Close()
	return nil
}

// connError maps the error of acquiring a connection or beginning a
// transaction to what store.Store promises for a closed store and a done
// context.
func (s *Store) connError(ctx context.Context, what string, err error) error {
	switch {
	case s.closed.Load():
		return store.ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		return fmt.Errorf("pgstore: %s: %w", what, err)
	}
}

// View runs fn in a REPEATABLE READ READ ONLY transaction: one snapshot of
// the database for all of fn's reads, taken at its first statement. Writes
// inside fn return store.ErrReadOnly. A read-only snapshot transaction
// never fails to serialize, so fn runs exactly once.
//
// The BEGIN goes to the server with fn's first statement, in one round
// trip, and the ROLLBACK with the first statement of the next transaction
// on the connection (or, after a short delay, on its own, off the caller's
// path): a View of one statement costs one round trip (see the package
// documentation). A View whose fn sends no statement sends nothing.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	conn, open, err := s.acquire(ctx)
	if err != nil {
		return s.connError(ctx, "begin", err)
	}
	begin := beginViewFresh
	if open {
		begin = beginViewAfter
	}
	t := newTx(ctx, conn.Conn(), begin...)
	t.view = true
	defer s.endView(conn)
	return store.RunView(t, fn)
}

// The statements that begin a View: on a fresh connection, and on one
// whose previous transaction is still open.
var (
	beginViewFresh = []string{beginView}
	beginViewAfter = []string{"ROLLBACK", beginView}
)

// beginView begins a View's transaction.
const beginView = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

// Update runs fn in a SERIALIZABLE transaction and commits it if fn
// returns nil. A transaction that fails with a serialization failure or a
// deadlock, in any statement or at commit, is rolled back and fn is run
// again in a new one, after a short random wait; the attempts after
// Options.OptimisticAttempts run alone (see the package documentation), up
// to Options.MaxAttempts attempts in all. fn's own error is returned
// unchanged, unless the transaction had failed that way: fn then decided
// on a view that could not commit, so it is run again.
//
// The Updates of one Store run their statements one at a time, in a
// queue, and the ones waiting in it when one takes it run with that one,
// in one transaction, each fn in a savepoint of its own, and commit
// together (Options.QueueWait, Options.MaxGroupSize and the package
// documentation): fn may then run on a snapshot that includes what the
// functions before it in the group wrote, and its error is returned once
// the group committed (or fn is run again, if the group failed to
// serialize).
//
// ctx is checked before each attempt and bounds the waits for a
// connection, for the queue, for fn's turn in a group and, for an attempt
// that runs alone, for the gate. Once fn runs, its statements and the
// COMMIT run to their end even if ctx is cancelled meanwhile, as
// store.Store promises: Update never returns without knowing whether it
// committed.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.closed.Load() {
			return store.ErrClosed
		}
		alone := attempt > s.optimistic
		if alone {
			s.alone.Add(1)
		}
		err, again := s.attempt(ctx, fn, alone)
		for n := uint64(attempt); ; {
			most := s.mostAttempts.Load()
			if n <= most || s.mostAttempts.CompareAndSwap(most, n) {
				break
			}
		}
		if !again {
			if err == nil {
				s.commits.Add(1)
			}
			return err
		}
		if attempt >= s.attempts {
			s.gaveUp.Add(1)
			return fmt.Errorf("pgstore: the transaction failed to serialize %d times: %w", attempt, err)
		}
		s.retries.Add(1)
		if attempt < s.optimistic {
			// Spread the next optimistic attempts of the transactions that
			// just collided: up to 1, 2, 4 ms ...
			if err := sleep(ctx, rand.N(time.Millisecond<<min(attempt-1, 10))); err != nil {
				return err
			}
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The BEGIN of an Update: the transaction, and the gate taken before its
// snapshot, which is taken at the first query; LOCK TABLE is none. A
// transaction lock, the gate goes with the COMMIT or ROLLBACK. A
// transaction that runs alone has no concurrent writer, so REPEATABLE
// READ is serializable for it.
//
// An attempt that runs side by side sends beginShared and lockShared
// with its first statement, in one round trip; one that runs alone sends
// beginAlone first, on its own, so that ctx bounds its wait for the
// running writers.
const (
	beginShared = "BEGIN ISOLATION LEVEL SERIALIZABLE"
	lockShared  = "LOCK TABLE update_gate IN SHARE MODE"
	beginAlone  = "BEGIN ISOLATION LEVEL REPEATABLE READ; LOCK TABLE update_gate IN EXCLUSIVE MODE"
)

// The statements that begin an attempt that runs side by side: on a fresh
// connection, and on one whose previous transaction (a View's) is still
// open.
var (
	beginSharedFresh = []string{beginShared, lockShared}
	beginSharedAfter = []string{"ROLLBACK", beginShared, lockShared}
)

// attempt runs fn once in a serializable transaction. again reports that
// the transaction failed with a serialization failure or a deadlock and
// may succeed if run again.
//
// Every attempt holds the gate, a lock on the table update_gate: in SHARE
// mode while it runs side by side with others, in EXCLUSIVE mode, which
// conflicts with SHARE and itself, when it runs alone. The lock is taken
// in the same round trip as the BEGIN, before the transaction's snapshot,
// so that an attempt that waited for one running alone sees what that
// one committed.
//
// Every attempt also holds the Store's writer queue, if it has one, from
// before its first statement until its last write is done: the next
// attempt's statements run after this one's and while this one commits.
// An attempt that takes the queue while others wait in it runs them with
// it, as a group (see group.go); one that waits may join such a group.
// Attempts that run alone do neither.
func (s *Store) attempt(ctx context.Context, fn func(store.Tx) error, alone bool) (err error, again bool) {
	var m *member
	if !alone && s.maxGroup > 1 {
		m = newMember(fn)
	}
	queued, joined, err := s.queue.enter(ctx, m)
	switch {
	case err != nil:
		return err, false
	case joined:
		return m.await(ctx)
	case queued && m != nil:
		if others := s.queue.collect(s.maxGroup - 1); len(others) > 0 {
			go s.runGroup(append([]*member{m}, others...))
			return m.await(ctx)
		}
	}
	leave := func() {
		if queued {
			queued = false
			s.queue.leave()
		}
	}
	defer leave()
	conn, open, err := s.acquire(ctx)
	if err != nil {
		return s.connError(ctx, "begin", err), false
	}
	var t *tx
	switch {
	case alone:
		begin := beginAlone
		if open {
			begin = "ROLLBACK; " + beginAlone
		}
		if _, err := conn.Exec(ctx, begin); err != nil {
			endUpdate(conn)
			return s.connError(ctx, "begin", err), false
		}
		t = newTx(ctx, conn.Conn())
	case open:
		t = newTx(ctx, conn.Conn(), beginSharedAfter...)
	default:
		t = newTx(ctx, conn.Conn(), beginSharedFresh...)
	}
	t.shard = s.nextShard()
	finished := false
	defer func() {
		// On a panic or runtime.Goexit in fn: roll back, and let the
		// panic go on.
		if !finished {
			leave()
			endUpdate(conn)
		}
	}()
	ferr := store.RunUpdate(t, fn)
	finished = true
	if ferr != nil || t.failed != nil {
		leave()
		endUpdate(conn)
		switch {
		case t.retry:
			return t.failed, true
		case ferr != nil:
			return ferr, false
		default:
			// fn carried on after a statement failed, and PostgreSQL
			// would turn the COMMIT into a ROLLBACK.
			return fmt.Errorf("pgstore: not committed: a statement of the transaction failed: %w", t.failed), false
		}
	}
	if !t.begun {
		// fn sent no statement: there is nothing to commit (but maybe a
		// View's transaction to end).
		leave()
		s.endView(conn)
		return nil, false
	}
	err = t.commit(leave)
	endUpdate(conn)
	if err != nil {
		return fmt.Errorf("pgstore: commit: %w", err), retryable(err)
	}
	return nil, false
}

// SQLSTATE codes the store acts on.
const (
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
)

// retryable reports whether err is a serialization failure or a deadlock:
// a transaction that may succeed if run again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == codeSerializationFailure || pgErr.Code == codeDeadlockDetected)
}
