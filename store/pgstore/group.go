package pgstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/identitylib/identity/store"
)

// Group commit. The attempt that takes the writer queue takes with it
// the attempts waiting in the queue at that moment (up to
// Options.MaxGroupSize in all) and runs their functions one after the
// other in one transaction, each in a savepoint of its own, and commits
// them together: one BEGIN, one COMMIT and one WAL flush for the group.
// Each function runs on the goroutine of its own Update call, which the
// group hands the transaction in turn, so that a panic or runtime.Goexit
// stays in the goroutine that caused it.
//
// A function that fails (returns an error, leaves a failed statement
// behind, panics) is rolled back to its savepoint and the others go on;
// its error is its Update's once the group has committed, for it decided
// on the group's snapshot and the writes of the functions before it,
// which then stand. If the transaction fails to serialize, every function
// of the group is run again, in a later attempt, as store.Store allows.
// Only attempts already waiting when the group takes the queue join it,
// so that every one of them began before the group's snapshot was taken:
// an Update never misses what committed before it was called.

// The states of a member: waiting for its turn, running (given the turn
// by the group), answered (without a turn, when the group failed first)
// or withdrawn (its context ended while it waited).
const (
	memberWaiting int32 = iota
	memberRunning
	memberAnswered
	memberWithdrawn
)

// member is one Update attempt in a group.
type member struct {
	fn    func(store.Tx) error
	state atomic.Int32
	// turn hands the member the group's transaction, done hands it back
	// with fn's end, and result brings the member the group's outcome.
	// Each is buffered, so that no side waits for the other to read.
	turn   chan *tx
	done   chan memberEnd
	result chan memberResult
}

// memberEnd is how a member's fn ended: with err, or with a panic or
// runtime.Goexit (aborted).
type memberEnd struct {
	err     error
	aborted bool
}

// memberResult is a member's outcome, as attempt returns it.
type memberResult struct {
	err   error
	again bool
}

// newMember returns the member of an attempt that runs fn.
func newMember(fn func(store.Tx) error) *member {
	return &member{fn: fn, turn: make(chan *tx, 1), done: make(chan memberEnd, 1), result: make(chan memberResult, 1)}
}

// await waits for the member's turn, runs fn when it comes and returns the
// group's outcome for it. If ctx ends before the turn, the member leaves
// the group and await returns ctx.Err(), unless the group took it first.
func (m *member) await(ctx context.Context) (err error, again bool) {
	ctxDone := ctx.Done()
	for {
		select {
		case t := <-m.turn:
			m.run(t)
			r := <-m.result
			return r.err, r.again
		case r := <-m.result:
			return r.err, r.again
		case <-ctxDone:
			if m.state.CompareAndSwap(memberWaiting, memberWithdrawn) {
				return ctx.Err(), false
			}
			ctxDone = nil // the turn or the result is on its way
		}
	}
}

// run runs fn in t and hands t back. On a panic or runtime.Goexit it
// hands t back as it unwinds.
func (m *member) run(t *tx) {
	ended := false
	defer func() {
		if !ended {
			m.done <- memberEnd{aborted: true}
		}
	}()
	err := store.RunUpdate(t, m.fn)
	ended = true
	m.done <- memberEnd{err: err}
}

// runGroup runs the functions of ms, the holder of the writer queue
// first, in one transaction and answers each member. It holds the queue
// until the group's last write is done.
func (s *Store) runGroup(ms []*member) {
	queued := true
	leave := func() {
		if queued {
			queued = false
			s.queue.leave()
		}
	}
	defer leave()
	// No caller's context bounds the group: each member's bounds its own
	// wait for its turn.
	ctx := context.Background()
	results := make([]memberResult, len(ms))
	answered := make([]bool, len(ms)) // aborted, withdrawn, or given a result
	// finish answers the members not answered yet with r, or with their
	// own results if r is nil.
	finish := func(r *memberResult) {
		for i, m := range ms {
			switch {
			case answered[i]:
			case m.state.Load() == memberRunning:
				if r != nil {
					m.result <- *r
				} else {
					m.result <- results[i]
				}
			case m.state.CompareAndSwap(memberWaiting, memberAnswered):
				if r == nil {
					// A member that never got its turn: the group ended
					// without running it; let its Update try again.
					r = &memberResult{again: true}
				}
				m.result <- *r
			}
			answered[i] = true
		}
	}

	conn, open, err := s.acquire(ctx)
	if err != nil {
		finish(&memberResult{err: s.connError(ctx, "begin", err)})
		return
	}
	begin := beginSharedFresh
	if open {
		begin = beginSharedAfter
	}
	t := newTx(ctx, conn.Conn(), begin...)
	t.shard = s.nextShard()
	var lost error // the transaction failed as a whole
	for i, m := range ms {
		if !m.state.CompareAndSwap(memberWaiting, memberRunning) {
			answered[i] = true // withdrawn
			continue
		}
		mark := t.mark()
		m.turn <- t
		end := <-m.done
		if t.retry || t.lost {
			lost = t.failed
			break
		}
		if end.aborted || end.err != nil || t.failed != nil {
			failed := t.failed
			if err := t.rollbackTo(mark); err != nil {
				lost = fmt.Errorf("pgstore: rollback of a grouped update: %w", err)
				break
			}
			switch {
			case end.aborted:
				answered[i] = true // its goroutine is unwinding
			case end.err != nil:
				results[i].err = end.err
			default:
				results[i].err = fmt.Errorf("pgstore: not committed: a statement of the transaction failed: %w", failed)
			}
			continue
		}
		t.keep(mark)
	}

	switch {
	case lost != nil:
		leave()
		endUpdate(conn)
		finish(&memberResult{err: lost, again: retryable(lost)})
		return
	case !t.begun:
		leave()
		s.endView(conn)
		finish(nil)
		return
	}
	err = t.commit(leave)
	endUpdate(conn)
	if err != nil {
		finish(&memberResult{err: fmt.Errorf("pgstore: commit: %w", err), again: retryable(err)})
		return
	}
	for i, r := range results {
		if !answered[i] && r.err == nil {
			s.grouped.Add(1)
		}
	}
	finish(nil)
}

// groupSavepoint is the savepoint each function of a group runs in.
const groupSavepoint = "grouped"

// txMark is what a transaction kept in memory before a function of a
// group ran, and where its statements and pending ones stood, for
// rollbackTo.
type txMark struct {
	sent, pending int
	seqs          map[seqKey]seqDraw
	newUsers      map[string]map[int64]int64
	spaces        map[string]bool
	users         map[userRef]bool
}

// mark queues a savepoint to go with the next statement and returns the
// state to go back to if the function about to run fails. What is
// pending before the savepoint (the BEGIN, or the deferred writes of the
// functions before) is carried: it goes with this function's first
// statement, but a failure in it is not this function's.
func (t *tx) mark() txMark {
	m := txMark{sent: t.sent, pending: len(t.pending), spaces: maps.Clone(t.spaces), users: maps.Clone(t.users)}
	t.carried = len(t.pending)
	if t.seqs != nil {
		m.seqs = make(map[seqKey]seqDraw, len(t.seqs))
		for k, d := range t.seqs {
			m.seqs[k] = *d
		}
	}
	if t.newUsers != nil {
		m.newUsers = make(map[string]map[int64]int64, len(t.newUsers))
		for slug, chunks := range t.newUsers {
			m.newUsers[slug] = maps.Clone(chunks)
		}
	}
	t.pending = append(slices.Clip(t.pending), queued{sql: "SAVEPOINT " + groupSavepoint})
	return m
}

// keep keeps what the function since m did. A savepoint it never sent is
// dropped; its deferred writes stay pending.
func (t *tx) keep(m txMark) {
	if t.sent == m.sent {
		t.pending = slices.Delete(t.pending, m.pending, m.pending+1)
	}
}

// rollbackTo undoes what the function since m did: on the server, if it
// sent a statement, and in memory, its deferred writes included. The
// transaction is then as it was before, failure included: a failed
// statement is rolled back with the rest.
func (t *tx) rollbackTo(m txMark) error {
	if t.sent == m.sent {
		t.pending = t.pending[:m.pending]
	} else {
		// The savepoint went with the function's first statement: what
		// is pending now is the function's deferred writes.
		t.pending = nil
		if _, err := t.conn.Exec(t.ctx, "ROLLBACK TO SAVEPOINT "+groupSavepoint); err != nil {
			return err
		}
	}
	t.seqs = nil
	if m.seqs != nil {
		t.seqs = make(map[seqKey]*seqDraw, len(m.seqs))
		for k, d := range m.seqs {
			t.seqs[k] = &d
		}
	}
	t.newUsers = m.newUsers
	t.spaces = m.spaces
	t.users = m.users
	t.failed, t.retry, t.lost = nil, false, false
	return nil
}
