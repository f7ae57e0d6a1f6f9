package pgstore

import (
	"context"
	"sync/atomic"
	"time"
)

// writerQueue lines up the Update attempts of one Store: one at a time
// runs its statements, from before its first until its last write is
// done, in the order they came; the commits (and their WAL flushes)
// overlap with the next attempt's statements. See the package
// documentation for why.
//
// The queue only spares attempts conflicts that they would otherwise
// retry: it is no lock that anything depends on. So an attempt that has
// held it for wait no longer keeps the others waiting (a bulk import,
// an Update that waits inside its function for another), and a waiter
// whose context ends leaves the queue.
type writerQueue struct {
	// slot holds a token while an attempt holds the queue. Waiters block
	// on sending to it, and Go wakes them in the order they came.
	slot chan struct{}
	// join takes the waiters that offer to run in the group of the
	// attempt that takes the queue next (see group.go).
	join chan *member
	// since is when the holder took the slot, in Unix nanoseconds; 0
	// while the slot is free, or a new holder has yet to say.
	since atomic.Int64
	wait  time.Duration
}

// newWriterQueue returns a queue whose waiters wait for a holder until it
// has held the queue for wait.
func newWriterQueue(wait time.Duration) *writerQueue {
	return &writerQueue{slot: make(chan struct{}, 1), join: make(chan *member), wait: wait}
}

// enter waits for the attempts before it. It reports whether it holds the
// queue (held), which leave must then release, or, if m is not nil,
// whether m joined the group of the attempt that took the queue
// (joined); it returns with neither once the holder has held the queue
// for q.wait. A nil queue is never held. It returns ctx.Err() if ctx ends
// first.
func (q *writerQueue) enter(ctx context.Context, m *member) (held, joined bool, err error) {
	if q == nil {
		return false, false, nil
	}
	select {
	case q.slot <- struct{}{}:
		q.since.Store(time.Now().UnixNano())
		return true, false, nil
	default:
	}
	var join chan *member // nil, which never sends, unless m may join
	if m != nil {
		join = q.join
	}

	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		d := q.wait
		if since := q.since.Load(); since != 0 {
			if d = time.Until(time.Unix(0, since).Add(q.wait)); d <= 0 {
				return false, false, nil
			}
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case q.slot <- struct{}{}:
			q.since.Store(time.Now().UnixNano())
			return true, false, nil
		case join <- m:
			return false, true, nil
		case <-timer.C:
			// Look again: the holder may be another by now.
		case <-ctx.Done():
			return false, false, ctx.Err()
		}
	}
}

// collect takes up to n of the attempts waiting in the queue that offer
// to join a group, without waiting for more.
func (q *writerQueue) collect(n int) []*member {
	var ms []*member
	for len(ms) < n {
		select {
		case m := <-q.join:
			ms = append(ms, m)
		default:
			return ms
		}
	}
	return ms
}

// leave releases the queue that enter took.
func (q *writerQueue) leave() {
	q.since.Store(0)
	<-q.slot
}
