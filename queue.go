package identity

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/identitylib/identity/store"
)

// The queue. Every change that calls for work outside the store (an event
// for a webhook endpoint, a verification email) records a job in its own
// transaction (the outbox, see emit and queueVerificationEmail). A
// dispatcher (package delivery) works the queue through a Queue: it asks
// which jobs are due (Due), leases some (Lease), asks what an attempt must
// send (Begin), sends it with its own clients, and records the result
// (Record). Every rule of the queue is here: what a lease is, which jobs
// are gone, what a result means, the retry schedule, Retry-After, and the
// disabling of endpoints. The dispatcher decides only how many attempts to
// run at once and to which endpoints, and it never opens a transaction
// itself.

// JobKind is what a job of the queue does when it is attempted.
type JobKind string

// The kinds of job.
const (
	// WebhookJob is an event for one webhook endpoint: a signed HTTP POST.
	WebhookJob JobKind = "webhook"
	// MailJob is a verification email sent through the workspace's SMTP
	// server.
	MailJob JobKind = "mail"
)

// Lane is the unit a dispatcher caps (delivery.Options.MaxPerEndpoint in
// package delivery): one webhook endpoint, or the mail of one workspace
// (EndpointID 0).
type Lane struct {
	Workspace  string
	EndpointID int64
}

// QueueWatcher is told what a dispatcher must react to at once. Package
// delivery's Dispatcher implements it; Service.WatchQueue registers one.
type QueueWatcher interface {
	// JobsQueued is called after a transaction that may have queued jobs
	// has committed, so that they are claimed without waiting for the
	// next poll. It must not block.
	JobsQueued()
	// EndpointDeleted is called after the transaction that deleted a
	// webhook endpoint has committed. It returns once the watcher has no
	// attempt to the endpoint in flight (within a bound of its own), and
	// starts none after: a watcher registers an attempt before Begin
	// looks for its job, so either Begin finds the job gone or the
	// attempt was registered in time to be cancelled here.
	// DeleteWorkspace calls it for each endpoint of the workspace and for
	// the workspace's mail lane, endpointID 0.
	EndpointDeleted(workspace string, endpointID int64)
}

// watchers are the QueueWatchers of a Service. The zero value is ready.
type watchers struct {
	mu  sync.Mutex
	set map[*QueueWatcher]struct{}
}

// WatchQueue registers w until the returned function is called. A Service
// tells its watchers of the changes made through it; a dispatcher in
// another process over the same store learns of them when it polls.
func (s *Service) WatchQueue(w QueueWatcher) (stop func()) {
	key := &w
	s.watchers.mu.Lock()
	if s.watchers.set == nil {
		s.watchers.set = map[*QueueWatcher]struct{}{}
	}
	s.watchers.set[key] = struct{}{}
	s.watchers.mu.Unlock()
	return func() {
		s.watchers.mu.Lock()
		delete(s.watchers.set, key)
		s.watchers.mu.Unlock()
	}
}

// each calls fn for every watcher, outside the lock, since a watcher may
// take its time (EndpointDeleted waits for attempts); it copies the set,
// which only the rare deletion of an endpoint pays.
func (ws *watchers) each(fn func(QueueWatcher)) {
	ws.mu.Lock()
	list := make([]QueueWatcher, 0, len(ws.set))
	for w := range ws.set {
		list = append(list, *w)
	}
	ws.mu.Unlock()
	for _, w := range list {
		fn(w)
	}
}

// jobsQueued wakes the watchers after a commit that may have queued jobs.
// It runs after every write, so it calls them under the lock, without
// copying the set: JobsQueued must not block.
func (s *Service) jobsQueued() {
	s.watchers.mu.Lock()
	defer s.watchers.mu.Unlock()
	for w := range s.watchers.set {
		(*w).JobsQueued()
	}
}

// endpointDeleted tells the watchers after a commit that deleted an
// endpoint, and returns when none has an attempt to it in flight.
func (s *Service) endpointDeleted(slug string, endpointID int64) {
	s.watchers.each(func(w QueueWatcher) { w.EndpointDeleted(slug, endpointID) })
}

// ErrLeaseLost reports that a job is gone, no longer pending, or leased to
// another owner: the caller must not send it, and its result is not
// recorded.
var ErrLeaseLost = errors.New("identity: the job is no longer leased to this owner")

// DefaultDisableAfter is how long an endpoint's deliveries may fail without
// a success before the endpoint is disabled.
const DefaultDisableAfter = 5 * 24 * time.Hour

// DefaultRetryDelays returns the default waits between attempts: the first
// attempt is immediate, then retries follow after 5 s, 5 min, 30 min, 2 h,
// 5 h, 10 h and 10 h (eight attempts over about 27.6 hours). Each wait is
// jittered by ±20% when it is applied.
func DefaultRetryDelays() []time.Duration {
	return []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
}

// RetryPolicy says what a failed attempt leads to. A nil *RetryPolicy, and
// a zero DisableAfter, mean the defaults.
type RetryPolicy struct {
	// Retries are the waits before the second, third, ... attempt; the
	// first attempt is immediate. After the last retry fails the job is
	// marked failed and kept for inspection. nil means
	// DefaultRetryDelays; an empty non-nil slice means a single attempt.
	Retries []time.Duration
	// DisableAfter disables an endpoint whose deliveries have failed,
	// without a success in between, for this long. Default
	// DefaultDisableAfter (5 days).
	DisableAfter time.Duration
}

// Queue is the Service's queue of jobs as a dispatcher works it. Get one
// with Service.Queue. Programs that only embed the library never call it;
// package delivery does. It is safe for concurrent use.
type Queue struct {
	svc          *Service
	retries      []time.Duration
	disableAfter time.Duration
}

// Queue returns the Service's queue under the retry policy p (nil for the
// defaults). Negative waits are a CodeInvalid error.
func (s *Service) Queue(p *RetryPolicy) (*Queue, error) {
	if p == nil {
		p = &RetryPolicy{}
	}
	q := &Queue{svc: s, retries: DefaultRetryDelays(), disableAfter: p.DisableAfter}
	if p.Retries != nil {
		q.retries = append([]time.Duration{}, p.Retries...)
	}
	if q.disableAfter == 0 {
		q.disableAfter = DefaultDisableAfter
	}
	var problems problems
	if p.DisableAfter < 0 {
		problems.add("DisableAfter", RuleRange, "must not be negative")
	}
	for _, r := range q.retries {
		if r < 0 {
			problems.add("Retries", RuleRange, "waits must not be negative")
			break
		}
	}
	if err := problems.err("invalid retry policy"); err != nil {
		return nil, err
	}
	return q, nil
}

// Now returns the Service's clock as the store keeps times (UTC,
// microseconds): the time a dispatcher passes to Due and Lease.
func (q *Queue) Now() time.Time { return q.svc.timestamp() }

// CountPending counts the pending jobs of every workspace in the store,
// whichever dispatcher will attempt them: the depth of the queue.
func (q *Queue) CountPending(ctx context.Context) (int, error) {
	var n int
	err := q.svc.store.View(ctx, func(tx store.Tx) (err error) {
		n, err = tx.PendingDeliveries()
		return err
	})
	return n, fromStore(err, "delivery queue")
}

// DueJob is a job that was due when Due looked.
type DueJob struct {
	Workspace string
	ID        int64
	Lane      Lane
	// Open is false when the job's endpoint is gone or disabled: nothing
	// will be sent, and Lease marks the job failed (or finds it gone). A
	// dispatcher hands such jobs to Lease whatever its caps, so that they
	// leave the queue instead of clogging its window.
	Open bool
}

// ListDue returns up to limit jobs of every workspace due at now, in due
// order, with their lanes. It only reads, in one read transaction, so
// that a dispatcher's scan never holds up writers; Lease confirms the
// choice.
func (q *Queue) ListDue(ctx context.Context, now time.Time, limit int) ([]DueJob, error) {
	var out []DueJob
	err := q.svc.store.View(ctx, func(tx store.Tx) error {
		due, err := tx.DueDeliveries(now, limit)
		if err != nil {
			return err
		}
		open := map[Lane]bool{}
		out = make([]DueJob, 0, len(due))
		for _, d := range due {
			lane := laneOf(d.Workspace, d.Delivery)
			on, known := open[lane]
			if !known {
				hook, err := laneEndpoint(tx, lane)
				if err != nil && !isNotFound(err) {
					return err
				}
				on = err == nil && hook.Enabled
				open[lane] = on
			}
			out = append(out, DueJob{Workspace: d.Workspace, ID: d.ID, Lane: lane, Open: on})
		}
		return nil
	})
	return out, fromStore(err, "delivery queue")
}

func laneOf(slug string, d store.Delivery) Lane {
	if d.Kind == store.JobMail {
		return Lane{Workspace: slug}
	}
	return Lane{Workspace: slug, EndpointID: d.EndpointID}
}

// laneEndpoint returns the endpoint of a lane. A workspace's mail lane has
// none: it is always open, never failing and never disabled, so it gets an
// enabled endpoint without URL or secret.
func laneEndpoint(tx store.Tx, lane Lane) (store.Webhook, error) {
	if lane.EndpointID == 0 {
		return store.Webhook{Enabled: true}, nil
	}
	return tx.Webhook(lane.Workspace, lane.EndpointID)
}

// Job is a job leased for an attempt. Its unexported fields carry what the
// attempt needs from the lease to Begin.
type Job struct {
	Workspace  string
	ID         int64
	Kind       JobKind
	EndpointID int64
	// EventType is the event of a webhook job, EmailVerificationJob for a
	// mail job.
	EventType EventType
	// Attempts is how many attempts were made before this one.
	Attempts int

	eventID string
	payload []byte
	url     string
	secret  string
}

// Lane returns the job's lane.
func (j Job) Lane() Lane {
	if j.Kind == MailJob {
		return Lane{Workspace: j.Workspace}
	}
	return Lane{Workspace: j.Workspace, EndpointID: j.EndpointID}
}

// Leased is what Lease did.
type Leased struct {
	// Jobs are leased to the owner until now plus the lease duration.
	Jobs []Job
	// Failed counts jobs marked failed because their endpoint is
	// disabled; Lost counts jobs another owner leased first, or that were
	// no longer pending, due, or there.
	Failed, Lost int
	// NextDue is the earliest due time of any pending job after the
	// lease; HasNext is false when the queue is empty.
	NextDue time.Time
	HasNext bool
}

// Lease leases the chosen jobs to owner in one transaction, until now +
// lease. It reads each again, since the snapshot Due read may be stale:
// another owner may have leased it, an attempt been recorded, or the
// endpoint been deleted or disabled. A job still pending and due whose
// endpoint is enabled is leased (LeaseUntil, LeaseOwner); one whose
// endpoint is disabled is marked failed with the error "endpoint
// disabled". While the lease lasts no other owner leases the job; if the
// owner never records a result, the job is due again when the lease ends.
func (q *Queue) Lease(ctx context.Context, owner string, now time.Time, lease time.Duration, chosen []DueJob) (Leased, error) {
	var out Leased
	err := q.svc.store.Update(ctx, func(tx store.Tx) error {
		// The store may run this function more than once: start afresh.
		out = Leased{}
		for _, c := range chosen {
			if err := leaseOne(tx, owner, now, lease, c, &out); err != nil {
				return err
			}
		}
		var err error
		out.NextDue, out.HasNext, err = tx.NextDueAt()
		return err
	})
	return out, fromStore(err, "delivery queue")
}

func leaseOne(tx store.Tx, owner string, now time.Time, lease time.Duration, c DueJob, out *Leased) error {
	// ClaimDelivery skips a job that another owner's lease transaction
	// holds (SELECT ... FOR UPDATE SKIP LOCKED in pgstore) instead of
	// waiting.
	cur, ok, err := tx.ClaimDelivery(c.Workspace, c.ID)
	if isNotFound(err) || err == nil && !ok {
		out.Lost++
		return nil
	} else if err != nil {
		return err
	}
	if cur.Status != store.DeliveryPending || cur.DueAt().After(now) {
		out.Lost++
		return nil
	}
	hook, err := laneEndpoint(tx, laneOf(c.Workspace, cur))
	if isNotFound(err) {
		out.Lost++ // the store deletes an endpoint's deliveries with it
		return nil
	} else if err != nil {
		return err
	}
	if !hook.Enabled {
		out.Failed++
		return failDelivery(tx, c.Workspace, cur, errEndpointDisabled)
	}
	cur.LeaseUntil, cur.LeaseOwner = now.Add(lease), owner
	if err := tx.PutDelivery(c.Workspace, cur); err != nil {
		return err
	}
	out.Jobs = append(out.Jobs, jobFromRecord(c.Workspace, cur, hook))
	return nil
}

func jobFromRecord(slug string, d store.Delivery, hook store.Webhook) Job {
	kind := WebhookJob
	if d.Kind == store.JobMail {
		kind = MailJob
	}
	return Job{
		Workspace: slug, ID: d.ID, Kind: kind, EndpointID: d.EndpointID,
		EventType: EventType(d.EventType), Attempts: d.Attempts,
		eventID: d.EventID, payload: d.Payload, url: hook.URL, secret: hook.Secret,
	}
}

// errEndpointDisabled is the LastError of deliveries failed because their
// endpoint was disabled before they could be delivered.
var errEndpointDisabled = errors.New("endpoint disabled")

func failDelivery(tx store.Tx, slug string, dl store.Delivery, reason error) error {
	dl.Status, dl.NextAttemptAt = store.DeliveryFailed, time.Time{}
	dl.LeaseUntil, dl.LeaseOwner = time.Time{}, ""
	dl.LastError = reason.Error()
	return tx.PutDelivery(slug, dl)
}
