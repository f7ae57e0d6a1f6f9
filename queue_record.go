package identity

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/identitylib/identity/store"
)

// Result is the outcome of one attempt, as the sender saw it.
type Result struct {
	// At is Attempt.At.
	At time.Time
	// Status is the HTTP status of a webhook attempt, the SMTP reply code
	// of a mail attempt (250 once the server took the email); 0 when no
	// answer came.
	Status int
	// Err is nil for a success (a 2xx response, an email the server
	// took), else a short description kept as the job's LastError: never
	// a secret or a body.
	Err error
	// RetryAfter is the wait a receiver asked for with Retry-After on a
	// 429 or 503; 0 for none.
	RetryAfter time.Duration
	// Permanent marks a failure no retry can cure (a recipient the SMTP
	// server refused with a 5xx reply, a dropped mail job): the job fails
	// at once.
	Permanent bool
}

// statusGone is HTTP's 410 Gone: the receiver says the endpoint is gone
// for good.
const statusGone = 410

// Outcome is what Record did.
type Outcome struct {
	// Dropped reports that nothing was recorded: the job is gone or its
	// lease passed to another owner.
	Dropped bool
	// Status is the job's state after the attempt.
	Status DeliveryStatus
	// Next is when the next attempt is due, zero when there is none.
	Next time.Time
	// Exhausted counts the jobs marked failed: this one after its last
	// attempt, or every pending job of an endpoint the attempt disabled.
	Exhausted int
	// Disabled reports that the endpoint was disabled.
	Disabled bool
}

// Record writes the result of an attempt of a job leased to owner, in one
// transaction: the attempt (Attempts, LastAttemptAt, LastStatus,
// LastError), what comes next (succeeded, failed, or pending with the next
// attempt's time), the lease released, and the endpoint's failing state.
// The next attempt is thus in the store before this one is forgotten. A
// result is dropped (Outcome.Dropped) when the job is gone or its lease
// passed to another owner.
//
// A failed attempt is retried per the RetryPolicy; a RetryAfter longer
// than the scheduled wait lengthens it, at most to twice the scheduled
// wait, so that a receiver cannot park its deliveries for days. An
// endpoint is disabled when it answers 410 Gone, or when its attempts
// have failed for DisableAfter without a success; disabling fails every
// pending delivery of the endpoint, this one included. A success ends the
// endpoint's failing spell. A mail job belongs to no endpoint: nothing
// about endpoints applies to it.
func (q *Queue) Record(ctx context.Context, owner string, job Job, res Result) (Outcome, error) {
	var out Outcome
	err := q.svc.store.Update(ctx, func(tx store.Tx) (err error) {
		out, err = q.apply(tx, owner, job, res, q.svc.timestamp())
		return err
	})
	return out, fromStore(err, "delivery queue")
}

func (q *Queue) apply(tx store.Tx, owner string, job Job, res Result, now time.Time) (Outcome, error) {
	cur, err := tx.Delivery(job.Workspace, job.ID)
	if isNotFound(err) {
		return Outcome{Dropped: true}, nil
	} else if err != nil {
		return Outcome{}, err
	}
	hook, err := laneEndpoint(tx, laneOf(job.Workspace, cur))
	if isNotFound(err) {
		return Outcome{Dropped: true}, nil
	} else if err != nil {
		return Outcome{}, err
	}
	if !leasedTo(cur, owner) {
		return Outcome{Dropped: true}, nil
	}
	cur.Attempts++
	cur.LastAttemptAt, cur.LastStatus, cur.LastError = res.At, res.Status, errorText(res.Err)
	cur.LeaseUntil, cur.LeaseOwner = time.Time{}, ""
	switch {
	case cur.Kind == store.JobMail:
		return q.applyMail(tx, job.Workspace, cur, res, now)
	case res.Err == nil:
		return applySuccess(tx, job.Workspace, cur, hook)
	default:
		return q.applyFailure(tx, job.Workspace, cur, hook, res, now)
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func applySuccess(tx store.Tx, slug string, cur store.Delivery, hook store.Webhook) (Outcome, error) {
	cur.Status, cur.NextAttemptAt = store.DeliverySucceeded, time.Time{}
	if err := tx.PutDelivery(slug, cur); err != nil {
		return Outcome{}, err
	}
	if !hook.FailingSince.IsZero() {
		hook.FailingSince, hook.Version = time.Time{}, newVersion(hook.Version)
		if err := tx.PutWebhook(slug, hook); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{Status: DeliverySucceeded}, nil
}

// applyFailure schedules the next attempt or fails the delivery, and
// disables the endpoint when it answered 410 Gone or has been failing for
// DisableAfter.
func (q *Queue) applyFailure(tx store.Tx, slug string, cur store.Delivery, hook store.Webhook, res Result, now time.Time) (Outcome, error) {
	startsFailing := hook.FailingSince.IsZero()
	if startsFailing {
		hook.FailingSince = res.At
	}
	if res.Status == statusGone || now.Sub(hook.FailingSince) >= q.disableAfter {
		return disableEndpoint(tx, slug, cur, hook)
	}
	out := Outcome{Status: DeliveryPending}
	if delay, ok := q.nextDelay(cur.Attempts, res); ok {
		cur.NextAttemptAt = now.Add(delay).Truncate(time.Microsecond)
		out.Next = cur.NextAttemptAt
	} else {
		cur.Status, cur.NextAttemptAt = store.DeliveryFailed, time.Time{}
		out.Status, out.Exhausted = DeliveryFailed, 1
	}
	if err := tx.PutDelivery(slug, cur); err != nil {
		return Outcome{}, err
	}
	if startsFailing {
		hook.Version = newVersion(hook.Version)
		return out, tx.PutWebhook(slug, hook)
	}
	return out, nil
}

func disableEndpoint(tx store.Tx, slug string, cur store.Delivery, hook store.Webhook) (Outcome, error) {
	hook.Enabled, hook.Version = false, newVersion(hook.Version)
	if err := tx.PutWebhook(slug, hook); err != nil {
		return Outcome{}, err
	}
	cur.Status, cur.NextAttemptAt = store.DeliveryFailed, time.Time{}
	if err := tx.PutDelivery(slug, cur); err != nil {
		return Outcome{}, err
	}
	others, err := failPending(tx, slug, hook.ID)
	return Outcome{Status: DeliveryFailed, Exhausted: 1 + others, Disabled: true}, err
}

// failPending marks every pending delivery of the endpoint failed, leases
// included: an attempt of one in flight elsewhere then has its result
// dropped, and the delivery stays failed.
func failPending(tx store.Tx, slug string, endpointID int64) (int, error) {
	all, err := tx.Deliveries(slug, endpointID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, dl := range all {
		if dl.Status != store.DeliveryPending {
			continue
		}
		if err := failDelivery(tx, slug, dl, errEndpointDisabled); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// applyMail records a mail attempt: succeeded once the server took the
// email; failed at once when the failure is permanent; else retried on
// the schedule, and failed after the last retry.
func (q *Queue) applyMail(tx store.Tx, slug string, cur store.Delivery, res Result, now time.Time) (Outcome, error) {
	var out Outcome
	if res.Err == nil {
		cur.Status, cur.NextAttemptAt = store.DeliverySucceeded, time.Time{}
	} else if delay, retry := q.nextDelay(cur.Attempts, res); retry && !res.Permanent {
		cur.NextAttemptAt = now.Add(delay).Truncate(time.Microsecond)
		out.Next = cur.NextAttemptAt
	} else {
		cur.Status, cur.NextAttemptAt = store.DeliveryFailed, time.Time{}
		out.Exhausted = 1
	}
	out.Status = DeliveryStatus(cur.Status)
	return out, tx.PutDelivery(slug, cur)
}

// nextDelay returns the wait before the next attempt after attempts have
// been made, or false when the schedule is exhausted. The scheduled wait
// is jittered by ±20% so that retries of many deliveries failed together
// (an endpoint's outage) do not arrive together. A Retry-After lengthens
// it, at most to twice the scheduled wait.
func (q *Queue) nextDelay(attempts int, res Result) (time.Duration, bool) {
	if attempts < 1 || attempts > len(q.retries) {
		return 0, false
	}
	base := q.retries[attempts-1]
	delay := time.Duration(float64(base) * (0.8 + 0.4*rand.Float64()))
	if res.RetryAfter > delay {
		delay = min(res.RetryAfter, 2*delay)
	}
	return delay, true
}
