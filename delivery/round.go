package delivery

import (
	"time"

	"github.com/identitylib/identity"
)

// roundPlan is one round's choice of jobs to lease, made from a read of
// the due jobs and confirmed by identity.Queue.Lease.
type roundPlan struct {
	// chosen are due jobs picked for the free workers, at most
	// MaxPerEndpoint per lane counting those in flight, plus those of
	// closed lanes (gone or disabled endpoints), which Lease fails.
	chosen []identity.DueJob
	// starved reports that the window was full and some due jobs were
	// passed over for their lane's cap while workers stayed free: a wider
	// window may find other lanes' jobs.
	starved bool
	leased  identity.Leased
}

// round leases what the free workers can take and hands it to them. It
// returns how long to sleep before the next round.
func (d *Dispatcher) round() time.Duration {
	free, taken := d.capacity()
	if free == 0 {
		return d.cfg.poll // a worker that finishes wakes the loop sooner
	}
	now := d.queue.Now()
	plan, err := d.plan(now, free, taken)
	if err == nil {
		plan.leased, err = d.queue.Lease(d.ctx, d.id, now, d.cfg.lease, plan.chosen)
	}
	if err != nil {
		if d.ctx.Err() == nil {
			d.cfg.log.Error("delivery: claiming due jobs failed", "error", causeOf(err))
		}
		return d.cfg.poll
	}
	d.reserve(plan.leased.Jobs)
	for _, job := range plan.leased.Jobs {
		d.jobs <- job // never blocks: at most free jobs, and free workers
	}
	return d.nextWait(now, plan)
}

// plan reads a window of due jobs, in due order, and picks for each lane
// as many as its cap allows until the free workers are spoken for.
func (d *Dispatcher) plan(now time.Time, free int, taken map[identity.Lane]int) (roundPlan, error) {
	window := scanFactor * free * d.growth
	due, err := d.queue.ListDue(d.ctx, now, window)
	if err != nil {
		return roundPlan{}, err
	}
	var plan roundPlan
	chosen, capped := 0, false
	for _, job := range due {
		switch {
		case !job.Open:
			plan.chosen = append(plan.chosen, job) // Lease fails it
		case chosen == free:
			// Workers are spoken for; keep scanning only for jobs of
			// closed lanes, which would clog the window.
		case taken[job.Lane] >= d.cfg.maxPerEndpoint:
			capped = true
		default:
			plan.chosen = append(plan.chosen, job)
			taken[job.Lane]++
			chosen++
		}
	}
	plan.starved = capped && chosen < free && len(due) == window
	return plan, nil
}

// nextWait is the sleep after a round: none when a wider scan may find
// more to do, else until the next known due time, at most the poll
// interval. A job due now that could not be leased waits for a worker or
// a lane slot, whose release wakes the loop.
func (d *Dispatcher) nextWait(now time.Time, plan roundPlan) time.Duration {
	if plan.starved && d.growth < maxScanGrowth {
		d.growth *= 2
		return 0
	}
	if !plan.starved {
		d.growth = 1
	}
	if !plan.leased.HasNext {
		return d.cfg.poll
	}
	until := plan.leased.NextDue.Sub(now)
	if until <= 0 && plan.leased.Lost > 0 {
		return 0 // another dispatcher won these; others may be due
	}
	if until <= 0 {
		return d.cfg.poll
	}
	return min(until, d.cfg.poll)
}

// capacity returns how many workers are free and a copy of the attempts
// in flight per lane.
func (d *Dispatcher) capacity() (int, map[identity.Lane]int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	taken := make(map[identity.Lane]int, len(d.inflight))
	for k, n := range d.inflight {
		taken[k] = n
	}
	return d.cfg.workers - d.busy, taken
}

func (d *Dispatcher) reserve(jobs []identity.Job) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, j := range jobs {
		d.busy++
		d.inflight[j.Lane()]++
	}
}

func (d *Dispatcher) release(lane identity.Lane) {
	d.mu.Lock()
	d.busy--
	if d.inflight[lane]--; d.inflight[lane] <= 0 {
		delete(d.inflight, lane)
	}
	d.mu.Unlock()
	d.JobsQueued()
}
