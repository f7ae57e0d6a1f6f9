package pgstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// defaultEndDelay is how long a View's transaction may stay open on its
// connection after the View returned (Store.endDelay), for its ROLLBACK
// to go to the server with the next transaction's first statement rather
// than in a round trip of its own (see the package documentation).
const defaultEndDelay = 2 * time.Millisecond

// unended holds the connections whose View transaction has not been
// ended yet, in the order they were put there; the last one put is the
// first taken again. One timer ends the transactions that have waited
// Store.endDelay: armed when a connection is put there and the timer is
// not, and again, when it fires, for those that have not waited long
// enough. Whoever removes a connection from conns owns it.
//
// One timer for all, armed at most once per endDelay, rather than one per
// View, because arming a timer that fires before every other of the
// process wakes the runtime's poller: a system call and a thread's
// wake-up, which cost a loaded machine as much as the View.
type unended struct {
	mu    sync.Mutex
	conns []unendedConn
	timer *time.Timer
	armed bool // the timer will fire
}

// unendedConn is a connection of unended and when it was put there.
type unendedConn struct {
	conn  *pgxpool.Conn
	since time.Time
}

// acquire returns a connection for a transaction and whether a
// transaction is still open on it, which the new one must roll back
// first: one that ended a View is taken before one from the pool.
func (s *Store) acquire(ctx context.Context) (conn *pgxpool.Conn, open bool, err error) {
	s.unended.mu.Lock()
	if n := len(s.unended.conns); n > 0 {
		u := s.unended.conns[n-1]
		s.unended.conns = s.unended.conns[:n-1]
		s.unended.mu.Unlock()
		return u.conn, true, nil
	}
	s.unended.mu.Unlock()
	conn, err = s.pool.Acquire(ctx)
	return conn, false, err
}

// endView ends a View on conn. A transaction still open on it (the
// View's, or an earlier one that the View did not touch) stays open for
// up to s.endDelay, to be rolled back with the first statement of the
// transaction that takes the connection next, or else by the timer, off
// the caller's path. A closed connection goes back to the pool, which
// discards it.
func (s *Store) endView(conn *pgxpool.Conn) {
	if conn.Conn().IsClosed() || conn.Conn().PgConn().TxStatus() == 'I' {
		conn.Release()
		return
	}
	u := &s.unended
	u.mu.Lock()
	if s.closed.Load() {
		u.mu.Unlock()
		rollBack(conn)
		return
	}
	u.conns = append(u.conns, unendedConn{conn: conn, since: time.Now()})
	if !u.armed {
		u.armed = true
		if u.timer == nil {
			u.timer = time.AfterFunc(s.endDelay, s.endWaited)
		} else {
			u.timer.Reset(s.endDelay)
		}
	}
	u.mu.Unlock()
}

// endWaited rolls back the transactions that have waited s.endDelay and
// releases their connections, and arms the timer again for the others.
func (s *Store) endWaited() {
	u := &s.unended
	u.mu.Lock()
	now := time.Now()
	n := 0
	for n < len(u.conns) && now.Sub(u.conns[n].since) >= s.endDelay {
		n++
	}
	waited := slices.Clone(u.conns[:n])
	u.conns = slices.Delete(u.conns, 0, n)
	u.armed = len(u.conns) > 0
	if u.armed {
		u.timer.Reset(s.endDelay - now.Sub(u.conns[0].since))
	}
	u.mu.Unlock()
	for _, c := range waited {
		rollBack(c.conn)
	}
}

// endAll rolls back every transaction left open and releases its
// connection, for Close. Views that end later roll back at once, since
// the Store is closed.
func (s *Store) endAll() {
	u := &s.unended
	u.mu.Lock()
	conns := u.conns
	u.conns = nil
	if u.timer != nil {
		u.timer.Stop()
	}
	u.armed = false
	u.mu.Unlock()
	for _, c := range conns {
		rollBack(c.conn)
	}
}

// endUpdate ends an Update attempt on conn: a transaction that did not
// commit is rolled back before the connection goes back to the pool, so
// that its locks go at once.
func endUpdate(conn *pgxpool.Conn) {
	if conn.Conn().IsClosed() || conn.Conn().PgConn().TxStatus() == 'I' {
		conn.Release()
		return
	}
	rollBack(conn)
}

// rollBack rolls back the transaction open on conn and releases it. A
// connection whose rollback failed is not idle, and the pool discards it.
func rollBack(conn *pgxpool.Conn) {
	_, _ = conn.Exec(context.Background(), "ROLLBACK")
	conn.Release()
}
