package identity

import (
	"time"

	"github.com/identitylib/identity/store"
)

// claimPlan is one round's choice of deliveries to claim, made in a read
// transaction and confirmed by claim in a write transaction.
type claimPlan struct {
	// candidates are due deliveries chosen for the free workers, at most
	// MaxPerEndpoint per endpoint counting those in flight, plus those of
	// disabled endpoints, which claim marks failed.
	candidates []store.QueuedDelivery
	// starved reports that the window was full and some due deliveries
	// were passed over for their endpoint's cap while workers stayed
	// free: a wider window may find other endpoints' deliveries.
	starved bool

	// Set by claim.
	jobs    []deliveryJob
	failed  int
	lost    int // candidates another dispatcher (or a change) took first
	next    time.Time
	hasNext bool
}

// plan reads a window of due deliveries, in due order, and picks for
// each endpoint as many as its cap allows until the free workers are
// spoken for. Reading in a View keeps this scan from holding up writers.
func (d *Dispatcher) plan(now time.Time, free int, taken map[endpointKey]int) (claimPlan, error) {
	var plan claimPlan
	err := d.svc.store.View(d.ctx, func(tx store.Tx) error {
		window := scanFactor * free * d.growth
		due, err := tx.DueDeliveries(now, window)
		if err != nil {
			return err
		}
		enabled := map[endpointKey]bool{}
		chosen, capped := 0, false
		for _, q := range due {
			key := endpointKey{q.Workspace, q.EndpointID}
			on, known := enabled[key]
			if !known {
				hook, err := endpointFor(tx, q.Workspace, q.EndpointID)
				if err != nil && !isNotFound(err) {
					return err
				}
				on = err == nil && hook.Enabled
				enabled[key] = on
			}
			switch {
			case !on:
				plan.candidates = append(plan.candidates, q) // claim fails it
			case chosen == free:
				// Workers are spoken for; keep scanning only for deliveries
				// of disabled endpoints, which would clog the window.
			case taken[key] >= d.cfg.maxPerEndpoint:
				capped = true
			default:
				plan.candidates = append(plan.candidates, q)
				taken[key]++
				chosen++
			}
		}
		plan.starved = capped && chosen < free && len(due) == window
		return nil
	})
	return plan, err
}

// claim leases the planned deliveries in one transaction. It reads each
// again, since the plan's snapshot may be stale: another dispatcher may
// have leased it, an attempt recorded, or the endpoint been deleted or
// disabled. A delivery still pending and due whose endpoint is enabled
// gets LeaseUntil = now + lease and LeaseOwner = this dispatcher; one
// whose endpoint is disabled is marked failed.
func (d *Dispatcher) claim(now time.Time, plan *claimPlan) error {
	return d.svc.store.Update(d.ctx, func(tx store.Tx) error {
		// The store may run this function more than once: start afresh.
		plan.jobs, plan.failed, plan.lost = nil, 0, 0
		for _, q := range plan.candidates {
			if err := d.claimOne(tx, now, q, plan); err != nil {
				return err
			}
		}
		var err error
		plan.next, plan.hasNext, err = tx.NextDueAt()
		return err
	})
}

func (d *Dispatcher) claimOne(tx store.Tx, now time.Time, q store.QueuedDelivery, plan *claimPlan) error {
	// ClaimDelivery skips a delivery that another dispatcher's claim holds
	// (SELECT ... FOR UPDATE SKIP LOCKED in pgstore) instead of waiting.
	cur, ok, err := tx.ClaimDelivery(q.Workspace, q.ID)
	if isNotFound(err) || err == nil && !ok {
		plan.lost++
		return nil
	} else if err != nil {
		return err
	}
	if cur.Status != store.DeliveryPending || cur.DueAt().After(now) {
		plan.lost++
		return nil
	}
	hook, err := endpointFor(tx, q.Workspace, cur.EndpointID)
	if isNotFound(err) {
		plan.lost++ // the store deletes an endpoint's deliveries with it
		return nil
	} else if err != nil {
		return err
	}
	if !hook.Enabled {
		plan.failed++
		return failDelivery(tx, q.Workspace, cur, errEndpointDisabled)
	}
	cur.LeaseUntil = now.Add(d.cfg.lease)
	cur.LeaseOwner = d.id
	if err := tx.PutDelivery(q.Workspace, cur); err != nil {
		return err
	}
	plan.jobs = append(plan.jobs, deliveryJob{slug: q.Workspace, delivery: cur, url: hook.URL, secret: hook.Secret})
	return nil
}
