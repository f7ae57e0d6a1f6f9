package boltstore

import (
	"errors"
	"fmt"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// errGoexit is returned by an Update whose fn called runtime.Goexit (most
// likely t.FailNow or t.Fatal in a test). fn runs on the committer's
// goroutine, so Goexit ends that goroutine rather than the caller's.
var errGoexit = errors.New("boltstore: the update function called runtime.Goexit (t.Fatal in an Update function?)")

// updateCall is one Update waiting for its result.
type updateCall struct {
	fn func(store.Tx) error
	// result receives exactly one result. It is buffered so that the
	// committer never waits for a caller.
	result chan updateResult
	// answered is set when the result has been sent. Only the committer
	// reads and writes it.
	answered bool
}

// updateResult is the outcome of one call: fn's error or its panic.
type updateResult struct {
	err        error
	panicked   bool
	panicValue any
}

// answer sends the call its result.
func (c *updateCall) answer(r updateResult) {
	c.answered = true
	c.result <- r
}

// commitStats counts the committer's work, for tests and benchmarks.
type commitStats struct {
	transactions atomic.Int64 // read-write transactions begun
	largestGroup atomic.Int64 // most calls taken as one group
}

// noteGroup records a group of n calls. Only the committer calls it, so a
// plain load and store cannot lose a larger value.
func (st *commitStats) noteGroup(n int) {
	if int64(n) > st.largestGroup.Load() {
		st.largestGroup.Store(int64(n))
	}
}

// committer runs Update calls in groups, one transaction per group. Only
// one committer runs at a time.
type committer struct {
	s *Store
	// group holds the calls taken for the group being run, answered or not,
	// so that the survivors can be handed on if fn calls runtime.Goexit.
	group []*updateCall
	// running is the call whose fn is executing.
	running *updateCall
}

// startCommitter starts a committer that first runs carried, calls that an
// earlier committer took but could not answer.
func (s *Store) startCommitter(carried []*updateCall) {
	c := &committer{s: s}
	go c.loop(carried)
}

// loop takes groups of calls and runs them until the store closes.
func (c *committer) loop(carried []*updateCall) {
	stopped := false
	defer func() {
		if stopped {
			close(c.s.committerDone)
			return
		}
		// Only runtime.Goexit in fn gets here: runFn recovers panics.
		c.handOver()
	}()
	queued := carried
	for {
		if len(queued) == 0 {
			first, ok := c.next()
			if !ok {
				stopped = true
				return
			}
			queued = []*updateCall{first}
		}
		c.group = c.drain(queued)
		queued = nil
		c.s.stats.noteGroup(len(c.group))
		c.runGroup(c.group)
		c.group = nil
	}
}

// foldDue folds the audit trail of every workspace whose tail has reached
// auditFoldEvery records (see foldAudit). runTx calls it after the commit
// that took a tail there and before the group's calls are answered, so
// the writes that leave records to the fold pay for it, one in
// auditFoldEvery, rather than whichever call comes next. A fold that
// fails leaves the count, to be tried again after the next commit; the
// tail stays readable as it is, and the calls' own writes committed.
func (c *committer) foldDue() {
	for slug, n := range c.s.unfolded {
		if n < auditFoldEvery {
			continue
		}
		if foldAudit(c.s.db, []byte(slug)) == nil {
			delete(c.s.unfolded, slug)
		}
	}
}

// next waits for a call. It reports false once the store is closing, and
// checks for that first so that a steady stream of calls cannot delay Close.
func (c *committer) next() (*updateCall, bool) {
	select {
	case <-c.s.closing:
		return nil, false
	default:
	}
	select {
	case call := <-c.s.requests:
		return call, true
	case <-c.s.closing:
		return nil, false
	}
}

// drain adds to group every call already waiting, up to the group size. It
// never waits: a lone writer commits at once.
func (c *committer) drain(group []*updateCall) []*updateCall {
	for len(group) < c.s.maxGroupSize {
		select {
		case call := <-c.s.requests:
			group = append(group, call)
		default:
			return group
		}
	}
	return group
}

// handOver answers the call whose fn called runtime.Goexit and starts a new
// committer that runs the calls of its group not answered yet.
func (c *committer) handOver() {
	var carried []*updateCall
	for _, call := range c.group {
		switch {
		case call == c.running:
			call.answer(updateResult{err: errGoexit})
		case !call.answered:
			carried = append(carried, call)
		}
	}
	c.s.startCommitter(carried)
}

// runGroup runs calls in one transaction and answers each of them.
//
// When a call fails, the transaction is rolled back and the others run
// again without it. A call that failed first in its transaction saw only
// committed state, so that failure is its definitive result. One that failed
// after others had written is run alone after the group, like DB.Batch
// does, so that its result never depends on writes that were rolled back.
// A panic is answered at once: it is a bug, not a result, and fn is not run
// again to panic twice.
func (c *committer) runGroup(calls []*updateCall) {
	var alone []*updateCall
	for len(calls) > 0 {
		failed, res := c.runTx(calls)
		if failed < 0 {
			for _, call := range calls {
				call.answer(res)
			}
			break
		}
		if failed == 0 || res.panicked {
			calls[failed].answer(res)
		} else {
			alone = append(alone, calls[failed])
		}
		calls = without(calls, failed)
	}
	for _, call := range alone {
		_, res := c.runTx([]*updateCall{call})
		call.answer(res)
	}
}

// without returns calls less the one at index i, in a new slice: calls
// shares its array with c.group, which must stay intact.
func without(calls []*updateCall, i int) []*updateCall {
	rest := make([]*updateCall, 0, len(calls)-1)
	rest = append(rest, calls[:i]...)
	return append(rest, calls[i+1:]...)
}

// runTx runs calls in order in one read-write transaction. If one fails or
// panics it rolls back and returns that call's index and result. Otherwise
// it commits and returns -1 with the commit's result, which is every call's.
func (c *committer) runTx(calls []*updateCall) (failed int, res updateResult) {
	c.s.stats.transactions.Add(1)
	btx, err := c.s.db.Begin(true)
	if err != nil {
		return -1, updateResult{err: fmt.Errorf("boltstore: begin: %w", err)}
	}
	// After a commit Rollback only reports that the tx is closed.
	defer func() { _ = btx.Rollback() }()
	unfolded := make(map[string]int)
	for i, call := range calls {
		if res := c.runFn(call, btx, unfolded); res.err != nil || res.panicked {
			return i, res
		}
	}
	if err := btx.Commit(); err != nil {
		return -1, updateResult{err: fmt.Errorf("boltstore: commit: %w", err)}
	}
	for slug, n := range unfolded {
		c.s.unfolded[slug] += n
	}
	c.foldDue()
	return -1, updateResult{}
}

// runFn runs one call's fn, turning a panic into a result. It leaves
// c.running set if fn calls runtime.Goexit, for handOver to find.
func (c *committer) runFn(call *updateCall, btx *bbolt.Tx, unfolded map[string]int) (res updateResult) {
	c.running = call
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			c.running = nil
			res = updateResult{panicked: true, panicValue: v}
		}
		// recover() == nil without a return: runtime.Goexit. Let it go on.
	}()
	// A fresh Tx for every call of fn, even in the same bbolt transaction.
	err := store.RunUpdate(&tx{btx: btx, unfolded: unfolded}, call.fn)
	returned = true
	c.running = nil
	return updateResult{err: err}
}
