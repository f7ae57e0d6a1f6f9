package delivery

import (
	"time"

	"github.com/identitylib/identity"
)

// Observer is told of each attempt a Dispatcher makes, for metrics:
// package metrics implements it. Set it in Options.Observer.
//
// AttemptDone is called once per attempt, from the worker that made it,
// after its result was recorded (or dropped): it must be safe for
// concurrent use and return quickly. kind is the job's kind; d is how long
// the attempt took, from its start to its result written, and zero for a
// job dropped before anything was sent. An attempt cut short by a panic
// is not reported (the job is attempted again when its lease ends).
type Observer interface {
	AttemptDone(kind identity.JobKind, outcome AttemptOutcome, d time.Duration)
}

// AttemptOutcome is how an attempt ended, as Observer.AttemptDone reports
// it.
type AttemptOutcome string

// The outcomes of an attempt.
const (
	// AttemptSucceeded: the receiver answered 2xx, or the SMTP server
	// accepted the email.
	AttemptSucceeded AttemptOutcome = "succeeded"
	// AttemptFailedRetry: the attempt failed and another one is scheduled.
	AttemptFailedRetry AttemptOutcome = "failed_retry"
	// AttemptFailedPermanent: the attempt failed and none follows: it was
	// the last retry, the failure was permanent (a 5xx reply to an email,
	// a job that cannot be sent any more), or the endpoint was disabled.
	AttemptFailedPermanent AttemptOutcome = "failed_permanent"
	// AttemptDropped: the job was deleted, or its lease passed to another
	// dispatcher, before the attempt or before its result was recorded;
	// nothing was recorded.
	AttemptDropped AttemptOutcome = "dropped"
	// AttemptUnrecorded: the attempt was made but writing its result
	// failed (the store); the job keeps its lease and is attempted again
	// when the lease ends.
	AttemptUnrecorded AttemptOutcome = "unrecorded"
)

// AttemptOutcomes returns every AttemptOutcome in a stable order.
func AttemptOutcomes() []AttemptOutcome {
	return []AttemptOutcome{AttemptSucceeded, AttemptFailedRetry, AttemptFailedPermanent, AttemptDropped, AttemptUnrecorded}
}

// observe tells the observer, if any, of an attempt of job.
func (d *Dispatcher) observe(job identity.Job, outcome AttemptOutcome, took time.Duration) {
	if d.cfg.observer != nil {
		d.cfg.observer.AttemptDone(job.Kind, outcome, took)
	}
}

// outcomeOf returns the outcome of an attempt whose result res was
// recorded as out.
func outcomeOf(res identity.Result, out identity.Outcome) AttemptOutcome {
	switch {
	case out.Dropped:
		return AttemptDropped
	case res.Err == nil:
		return AttemptSucceeded
	case out.Status == identity.DeliveryPending:
		return AttemptFailedRetry
	default:
		return AttemptFailedPermanent
	}
}
