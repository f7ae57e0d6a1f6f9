package identity

import (
	"context"
	"time"

	"github.com/identitylib/identity/store"
)

// QueueStatsWalkMax is how many of the queue's earliest due jobs, of
// every workspace, Workspace.GetQueueStats looks at: past it, a
// workspace's count is a floor ("10,000+").
const QueueStatsWalkMax = 10_000

// QueueStats describe the queue of jobs (webhook deliveries and emails)
// of every workspace in the store, or of one workspace, whichever
// dispatcher will attempt them.
type QueueStats struct {
	// Pending counts the pending jobs: the depth of the queue, or a floor
	// of it when Capped.
	Pending int
	// NextDue is the earliest time a pending job is due (for a job leased
	// to a dispatcher, when its lease ends); zero when none is pending,
	// or when Capped, when none of those counted is.
	NextDue time.Time
	// Capped reports that the count stopped short of the queue's end
	// (Workspace.GetQueueStats, past QueueStatsWalkMax jobs of every
	// workspace): Pending is a floor, shown as "12+", and a zero NextDue
	// says only that the workspace's earliest job is later than the
	// QueueStatsWalkMax earliest of the queue. Service.GetQueueStats never
	// sets it.
	Capped bool
}

// OldestDueAge returns how long the earliest due job has waited at now:
// now minus NextDue when that is past, zero when no job is due yet. A
// queue that is worked keeps it near zero; a growing age means that jobs
// wait for a dispatcher (none runs, or it cannot keep up).
func (q QueueStats) OldestDueAge(now time.Time) time.Duration {
	if q.NextDue.IsZero() || !now.After(q.NextDue) {
		return 0
	}
	return now.Sub(q.NextDue)
}

// GetQueueStats reads the depth of the queue and the earliest due time of
// its jobs, in one read transaction, for monitoring (package metrics reads
// it at each scrape). Compare NextDue with Service.Now.
func (s *Service) GetQueueStats(ctx context.Context) (QueueStats, error) {
	var out QueueStats
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := tx.PendingDeliveries()
		if err != nil {
			return err
		}
		next, ok, err := tx.NextDueAt()
		if err != nil {
			return err
		}
		out = QueueStats{Pending: n}
		if ok {
			out.NextDue = next
		}
		return nil
	})
	if err != nil {
		return QueueStats{}, fromStore(err, "delivery queue")
	}
	return out, nil
}

// GetQueueStats reads the depth of the workspace's own share of the queue
// (its pending webhook deliveries and emails) and the earliest due time
// among them, in one read transaction, off the due index the dispatcher
// reads: no store keeps an index or a count per workspace, so nothing on
// the enqueue path pays for this. It walks the index from its start over
// at most QueueStatsWalkMax jobs of every workspace, so that it costs the
// same however long the queue grows; when the queue is longer, the
// workspace's jobs among those are a floor of its depth (Capped).
// Service.GetQueueStats reads the same of every workspace, exactly.
func (w *Workspace) GetQueueStats(ctx context.Context) (QueueStats, error) {
	var q store.WorkspaceQueue
	err := w.view(ctx, func(tx store.Tx) (err error) {
		q, err = tx.WorkspaceQueue(w.slug, QueueStatsWalkMax)
		return err
	})
	if err != nil {
		return QueueStats{}, fromStore(err, "workspace")
	}
	return QueueStats{Pending: q.Pending, NextDue: q.NextDue, Capped: !q.Complete}, nil
}
