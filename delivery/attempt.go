package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/smtpmail"
	"github.com/identitylib/identity/webhook"
)

// handle makes one attempt of a leased job and records it. A panic on the
// way (in the client, the store, the mail sender) is logged and ends the
// attempt unrecorded, and the worker goes on with the next job: the job
// keeps its lease, and is attempted again when the lease ends, as if the
// process had died mid-attempt.
func (d *Dispatcher) handle(job identity.Job) {
	defer d.release(job.Lane())
	defer d.recovered("delivery: an attempt panicked; the job is retried when its lease ends",
		"workspace", job.Workspace, "endpoint", job.EndpointID, "delivery", job.ID)
	started := time.Now()
	res, sent := d.attempt(job)
	if !sent {
		return
	}
	d.record(job, res, time.Since(started))
}

// attempt makes one attempt of a leased job unless it is gone. It reports
// false when nothing is to be recorded.
//
// The attempt is registered, with the cancel function of its context,
// before Begin asks the store whether the job still exists, and
// EndpointDeleted cancels registered attempts only after the deleting
// transaction committed. So either Begin sees the deletion and nothing is
// sent, or the attempt was registered in time to be cancelled: nothing
// starts after DeleteWebhook returns.
func (d *Dispatcher) attempt(job identity.Job) (identity.Result, bool) {
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.attemptTimeout)
	defer cancel()
	live := d.live.add(job.Lane(), cancel)
	defer d.live.remove(live)
	att, err := d.queue.Begin(ctx, d.id, job)
	switch {
	case errors.Is(err, identity.ErrLeaseLost), err != nil && job.Kind == identity.WebhookJob:
		d.counts.dropped.Add(1)
		d.observe(job, AttemptDropped, 0)
		return identity.Result{}, false
	case err != nil:
		// Preparing an email failed (the store, the clock of the token):
		// an attempt that failed, retried on the schedule.
		return identity.Result{At: d.queue.Now(), Err: fmt.Errorf("preparing the email: %w", err)}, true
	case att.Drop != nil:
		return identity.Result{At: att.At, Err: att.Drop, Permanent: true}, true
	}
	res := identity.Result{At: att.At}
	d.counts.attempts.Add(1)
	if att.Mail != nil {
		var sent smtpmail.Result
		sent, res.Err = d.mail.SendVerification(ctx, *att.Mail)
		res.Status, res.Permanent = sent.Code, sent.Permanent
	} else {
		var resp webhook.Response
		resp, res.Err = d.hooks.Send(ctx, *att.Webhook)
		res.Status = resp.Status
		res.RetryAfter, _ = webhook.ParseRetryAfter(resp.RetryAfter, att.At)
	}
	if errors.Is(res.Err, webhook.ErrTimedOut) || errors.Is(res.Err, smtpmail.ErrTimedOut) {
		res.Err = fmt.Errorf("%w after %s", res.Err, d.cfg.attemptTimeout)
	}
	return res, true
}

// record writes the result of an attempt (identity.Queue.Record). If that
// fails the lease stays, and the job is attempted again when it ends.
func (d *Dispatcher) record(job identity.Job, res identity.Result, took time.Duration) {
	out, err := d.queue.Record(d.ctx, d.id, job, res)
	if err != nil {
		if d.ctx.Err() == nil {
			d.cfg.log.Error("delivery: recording an attempt failed", "workspace", job.Workspace,
				"endpoint", job.EndpointID, "delivery", job.ID, "error", causeOf(err))
		}
		d.observe(job, AttemptUnrecorded, took)
		return
	}
	d.count(res, out)
	d.observe(job, outcomeOf(res, out), took)
	d.logAttempt(job, res, out, took)
}

func (d *Dispatcher) count(res identity.Result, out identity.Outcome) {
	switch {
	case out.Dropped:
		d.counts.dropped.Add(1)
		return
	case res.Err == nil:
		d.counts.successes.Add(1)
	default:
		d.counts.failures.Add(1)
	}
	d.counts.exhausted.Add(uint64(out.Exhausted))
	if out.Disabled {
		d.counts.disabled.Add(1)
	}
}

// logAttempt writes the one line of an attempt: never the secret or the
// body, only identifiers, the status, the time taken and the outcome.
func (d *Dispatcher) logAttempt(job identity.Job, res identity.Result, out identity.Outcome, took time.Duration) {
	level, outcome := slog.LevelInfo, string(out.Status)
	switch {
	case out.Dropped:
		outcome = "dropped"
	case res.Err != nil && out.Status == identity.DeliveryPending:
		level, outcome = slog.LevelWarn, "retry"
	case res.Err != nil:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("workspace", job.Workspace),
		slog.Int64("endpoint", job.EndpointID),
		slog.Int64("delivery", job.ID),
		slog.String("event", string(job.EventType)),
		slog.Int("attempt", job.Attempts+1),
		slog.Int("status", res.Status),
		slog.Duration("duration", took),
		slog.String("outcome", outcome),
	}
	if res.Err != nil {
		attrs = append(attrs, slog.String("error", causeOf(res.Err)))
	}
	if !out.Next.IsZero() {
		attrs = append(attrs, slog.Time("next_attempt", out.Next))
	}
	if out.Disabled {
		attrs = append(attrs, slog.Bool("endpoint_disabled", true))
	}
	msg := "webhook attempt"
	if job.Kind == identity.MailJob {
		msg = "email attempt" // status is the SMTP reply code
	}
	d.cfg.log.LogAttrs(context.Background(), level, msg, attrs...)
}

// recovered, deferred, stops a panic of the goroutine's work and logs it
// as msg with args, the panic's value and its stack; it does nothing when
// there is none. It must be the deferred function itself, as recover
// works only there.
func (d *Dispatcher) recovered(msg string, args ...any) {
	v := recover()
	if v == nil {
		return
	}
	d.cfg.log.Error(msg, append(args, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))...)
}

// causeOf describes err for the log, with the cause an *identity.Error
// keeps out of its message ("identity: internal error" alone tells an
// operator nothing).
func causeOf(err error) string {
	msg := err.Error()
	if e, ok := errors.AsType[*identity.Error](err); ok && e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// endpointAbortWait bounds how long EndpointDeleted waits for a cancelled
// attempt to return. Cancelling closes the connection, so an attempt
// returns at once; the bound only guards against a wedged worker.
const endpointAbortWait = 5 * time.Second

// EndpointDeleted cancels this dispatcher's attempts to the endpoint and
// waits for them to return (identity.QueueWatcher).
func (d *Dispatcher) EndpointDeleted(workspace string, endpointID int64) {
	cancelled := d.live.cancel(identity.Lane{Workspace: workspace, EndpointID: endpointID})
	if len(cancelled) == 0 {
		return
	}
	timer := time.NewTimer(endpointAbortWait)
	defer timer.Stop()
	for _, a := range cancelled {
		select {
		case <-a.done:
		case <-timer.C:
			return
		}
	}
}

// liveAttempts are a dispatcher's attempts in flight per lane, so that a
// deletion can cancel them. The zero value is ready to use.
type liveAttempts struct {
	mu     sync.Mutex
	byLane map[identity.Lane]map[*liveAttempt]struct{}
}

// liveAttempt is an attempt in flight: cancel stops it, done is closed
// when it has returned.
type liveAttempt struct {
	lane   identity.Lane
	cancel context.CancelFunc
	done   chan struct{}
}

func (l *liveAttempts) add(lane identity.Lane, cancel context.CancelFunc) *liveAttempt {
	a := &liveAttempt{lane: lane, cancel: cancel, done: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byLane == nil {
		l.byLane = map[identity.Lane]map[*liveAttempt]struct{}{}
	}
	set := l.byLane[lane]
	if set == nil {
		set = map[*liveAttempt]struct{}{}
		l.byLane[lane] = set
	}
	set[a] = struct{}{}
	return a
}

func (l *liveAttempts) remove(a *liveAttempt) {
	l.mu.Lock()
	if set := l.byLane[a.lane]; set != nil {
		delete(set, a)
		if len(set) == 0 {
			delete(l.byLane, a.lane)
		}
	}
	l.mu.Unlock()
	close(a.done)
}

// cancel cancels the lane's attempts in flight and returns them.
func (l *liveAttempts) cancel(lane identity.Lane) []*liveAttempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	var cancelled []*liveAttempt
	for a := range l.byLane[lane] {
		a.cancel()
		cancelled = append(cancelled, a)
	}
	return cancelled
}
