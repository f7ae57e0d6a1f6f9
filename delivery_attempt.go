package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/identitylib/identity/store"
)

// errEndpointDisabled is the LastError of deliveries failed because their
// endpoint was disabled before they could be delivered.
var errEndpointDisabled = errors.New("endpoint disabled")

// attemptResult is the outcome of one attempt.
type attemptResult struct {
	// at is the Service-clock time of the attempt, its webhook-timestamp.
	at       time.Time
	resp     webhookResponse
	err      error // nil for a 2xx response
	duration time.Duration
	// permanent marks a failure that no retry can cure (email jobs only).
	permanent bool
}

// attempt sends one leased delivery unless it is gone. It reports false
// when nothing was sent.
//
// The attempt is registered, with the cancel function of its context,
// before the store is asked whether the delivery still exists, and
// endpointDeleted cancels registered attempts only after the deleting
// transaction committed. So either this read sees the deletion and nothing
// is sent, or the attempt was registered in time to be cancelled: nothing
// starts after DeleteWebhook returns.
func (d *Dispatcher) attempt(job deliveryJob) (attemptResult, bool) {
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.attemptTimeout)
	defer cancel()
	live := d.svc.deliveries.addAttempt(job.key(), cancel)
	defer d.svc.deliveries.removeAttempt(live)
	if !d.stillLeased(ctx, job) {
		d.counts.dropped.Add(1)
		return attemptResult{}, false
	}
	if job.isEmail() {
		return d.attemptMail(ctx, job)
	}
	res := attemptResult{at: d.svc.timestamp()}
	started := time.Now()
	d.counts.attempts.Add(1)
	res.resp, res.err = postWebhook(ctx, d.client, webhookRequest{
		url: job.url, secret: job.secret, msgID: job.delivery.EventID,
		timestamp: res.at, body: job.delivery.Payload,
	})
	res.duration = time.Since(started)
	if errors.Is(res.err, errAttemptTimedOut) {
		res.err = fmt.Errorf("%w after %s", res.err, d.cfg.attemptTimeout)
	}
	return res, true
}

// stillLeased reports whether the delivery still exists and is still
// leased to this dispatcher.
func (d *Dispatcher) stillLeased(ctx context.Context, job deliveryJob) bool {
	var cur store.Delivery
	err := d.svc.store.View(ctx, func(tx store.Tx) (err error) {
		cur, err = tx.Delivery(job.slug, job.delivery.ID)
		return err
	})
	return err == nil && ctx.Err() == nil && cur.Status == store.DeliveryPending && cur.LeaseOwner == d.id
}

// recordOutcome is what recording an attempt did.
type recordOutcome struct {
	dropped   bool
	status    store.DeliveryStatus
	next      time.Time
	exhausted int  // deliveries marked failed
	disabled  bool // the endpoint was disabled
}

// record writes the result of an attempt in one transaction: the attempt
// (Attempts, LastAttemptAt, LastStatus, LastError), what comes next
// (succeeded, failed, or pending with the next attempt's time), the lease
// released, and the endpoint's failing state. The next attempt is thus in
// the store before this one is forgotten. A result is dropped when the
// delivery is gone or its lease passed to another dispatcher.
func (d *Dispatcher) record(job deliveryJob, res attemptResult) {
	var out recordOutcome
	err := d.svc.store.Update(d.ctx, func(tx store.Tx) (err error) {
		out, err = d.applyResult(tx, job, res, d.svc.timestamp())
		return err
	})
	if err != nil {
		// The lease stays; the delivery is attempted again when it ends.
		if d.ctx.Err() == nil {
			d.cfg.log.Error("webhook delivery: recording an attempt failed", "workspace", job.slug,
				"endpoint", job.delivery.EndpointID, "delivery", job.delivery.ID, "error", err)
		}
		return
	}
	d.count(res, out)
	d.logAttempt(job, res, out)
}

func (d *Dispatcher) count(res attemptResult, out recordOutcome) {
	switch {
	case out.dropped:
		d.counts.dropped.Add(1)
		return
	case res.err == nil:
		d.counts.successes.Add(1)
	default:
		d.counts.failures.Add(1)
	}
	d.counts.exhausted.Add(uint64(out.exhausted))
	if out.disabled {
		d.counts.disabled.Add(1)
	}
}

func (d *Dispatcher) applyResult(tx store.Tx, job deliveryJob, res attemptResult, now time.Time) (recordOutcome, error) {
	cur, err := tx.Delivery(job.slug, job.delivery.ID)
	if isNotFound(err) {
		return recordOutcome{dropped: true}, nil
	} else if err != nil {
		return recordOutcome{}, err
	}
	hook, err := endpointFor(tx, job.slug, cur.EndpointID)
	if isNotFound(err) {
		return recordOutcome{dropped: true}, nil
	} else if err != nil {
		return recordOutcome{}, err
	}
	if cur.Status != store.DeliveryPending || cur.LeaseOwner != d.id {
		return recordOutcome{dropped: true}, nil
	}
	cur.Attempts++
	cur.LastAttemptAt, cur.LastStatus, cur.LastError = res.at, res.resp.status, errorText(res.err)
	cur.LeaseUntil, cur.LeaseOwner = time.Time{}, ""
	if job.isEmail() {
		return d.applyMailResult(tx, job.slug, cur, res, now)
	}
	if res.err == nil {
		return d.applySuccess(tx, job.slug, cur, hook)
	}
	return d.applyFailure(tx, job.slug, cur, hook, res, now)
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (d *Dispatcher) applySuccess(tx store.Tx, slug string, cur store.Delivery, hook store.Webhook) (recordOutcome, error) {
	cur.Status, cur.NextAttemptAt = store.DeliverySucceeded, time.Time{}
	if err := tx.PutDelivery(slug, cur); err != nil {
		return recordOutcome{}, err
	}
	if !hook.FailingSince.IsZero() {
		hook.FailingSince, hook.Version = time.Time{}, newVersion(hook.Version)
		if err := tx.PutWebhook(slug, hook); err != nil {
			return recordOutcome{}, err
		}
	}
	return recordOutcome{status: cur.Status}, nil
}

// applyFailure schedules the next attempt or fails the delivery, and
// disables the endpoint when it answered 410 Gone or has been failing for
// DisableAfter. Disabling fails every pending delivery of the endpoint,
// this one included: no further attempt goes to a disabled endpoint, and
// failed deliveries stay for inspection and RetryDelivery.
func (d *Dispatcher) applyFailure(tx store.Tx, slug string, cur store.Delivery, hook store.Webhook, res attemptResult, now time.Time) (recordOutcome, error) {
	startsFailing := hook.FailingSince.IsZero()
	if startsFailing {
		hook.FailingSince = res.at
	}
	if res.resp.status == http.StatusGone || now.Sub(hook.FailingSince) >= d.cfg.disableAfter {
		return d.disableEndpoint(tx, slug, cur, hook)
	}
	out := recordOutcome{status: store.DeliveryPending}
	if delay, ok := d.nextDelay(cur.Attempts, res, now); ok {
		cur.NextAttemptAt = now.Add(delay).Truncate(time.Microsecond)
		out.next = cur.NextAttemptAt
	} else {
		cur.Status, cur.NextAttemptAt = store.DeliveryFailed, time.Time{}
		out.status, out.exhausted = cur.Status, 1
	}
	if err := tx.PutDelivery(slug, cur); err != nil {
		return recordOutcome{}, err
	}
	if startsFailing {
		hook.Version = newVersion(hook.Version)
		return out, tx.PutWebhook(slug, hook)
	}
	return out, nil
}

func (d *Dispatcher) disableEndpoint(tx store.Tx, slug string, cur store.Delivery, hook store.Webhook) (recordOutcome, error) {
	hook.Enabled, hook.Version = false, newVersion(hook.Version)
	if err := tx.PutWebhook(slug, hook); err != nil {
		return recordOutcome{}, err
	}
	cur.Status, cur.NextAttemptAt = store.DeliveryFailed, time.Time{}
	if err := tx.PutDelivery(slug, cur); err != nil {
		return recordOutcome{}, err
	}
	others, err := failPending(tx, slug, hook.ID)
	return recordOutcome{status: cur.Status, exhausted: 1 + others, disabled: true}, err
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

func failDelivery(tx store.Tx, slug string, dl store.Delivery, reason error) error {
	dl.Status, dl.NextAttemptAt = store.DeliveryFailed, time.Time{}
	dl.LeaseUntil, dl.LeaseOwner = time.Time{}, ""
	dl.LastError = reason.Error()
	return tx.PutDelivery(slug, dl)
}

// nextDelay returns the wait before the next attempt after attempts have
// been made, or false when the schedule is exhausted. The scheduled wait
// is jittered by ±20% so that retries of many deliveries failed together
// (an endpoint's outage) do not arrive together. A Retry-After on a 429
// or 503 lengthens it, at most to twice the scheduled wait, so a receiver
// cannot park its deliveries for days.
func (d *Dispatcher) nextDelay(attempts int, res attemptResult, now time.Time) (time.Duration, bool) {
	if attempts < 1 || attempts > len(d.cfg.retries) {
		return 0, false
	}
	base := d.cfg.retries[attempts-1]
	delay := time.Duration(float64(base) * (0.8 + 0.4*rand.Float64()))
	if wait, ok := parseRetryAfter(res.resp.retryAfter, now); ok && wait > delay {
		delay = min(wait, 2*delay)
	}
	return delay, true
}

// logAttempt writes the one line of an attempt: never the secret or the
// body, only identifiers, the HTTP status, the time taken and the outcome.
func (d *Dispatcher) logAttempt(job deliveryJob, res attemptResult, out recordOutcome) {
	level, outcome := slog.LevelInfo, string(out.status)
	switch {
	case out.dropped:
		outcome = "dropped"
	case res.err != nil && out.status == store.DeliveryPending:
		level, outcome = slog.LevelWarn, "retry"
	case res.err != nil:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("workspace", job.slug),
		slog.Int64("endpoint", job.delivery.EndpointID),
		slog.Int64("delivery", job.delivery.ID),
		slog.String("event", job.delivery.EventType),
		slog.Int("attempt", job.delivery.Attempts+1),
		slog.Int("status", res.resp.status),
		slog.Duration("duration", res.duration),
		slog.String("outcome", outcome),
	}
	if res.err != nil {
		attrs = append(attrs, slog.String("error", res.err.Error()))
	}
	if !out.next.IsZero() {
		attrs = append(attrs, slog.Time("next_attempt", out.next))
	}
	if out.disabled {
		attrs = append(attrs, slog.Bool("endpoint_disabled", true))
	}
	msg := "webhook attempt"
	if job.isEmail() {
		msg = "email attempt" // status is the SMTP reply code
	}
	d.cfg.log.LogAttrs(context.Background(), level, msg, attrs...)
}
