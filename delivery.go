package identity

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/identitylib/identity/store"
)

// Defaults of DeliveryOptions.
const (
	DefaultDeliveryWorkers = 8
	DefaultMaxPerEndpoint  = 2
	DefaultAttemptTimeout  = 15 * time.Second
	DefaultPollInterval    = time.Second
	DefaultDisableAfter    = 5 * 24 * time.Hour
)

// scanFactor sizes the window of due deliveries one round looks at: ten
// times the free workers, so that deliveries of other endpoints are found
// even when the first ones in due order belong to endpoints at their cap.
// While that is not enough the window doubles, up to maxScanGrowth times.
const (
	scanFactor    = 10
	maxScanGrowth = 64
)

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

// DeliveryOptions configure a Dispatcher. A nil *DeliveryOptions, and any
// zero field, means the default.
type DeliveryOptions struct {
	// Workers is how many attempts may be in flight at once. Default 8.
	Workers int
	// MaxPerEndpoint is how many attempts to one endpoint may be in flight
	// at once, so that a slow or hanging endpoint holds at most this many
	// workers and the others keep being served. A workspace's verification
	// emails count as one endpoint. Default 2.
	MaxPerEndpoint int
	// AttemptTimeout bounds one attempt, from dialing to the end of the
	// response (for an email, to the SMTP server's acceptance of the
	// message). Default 15 s.
	AttemptTimeout time.Duration
	// LeaseDuration is how long a claimed delivery stays reserved for this
	// dispatcher. If the process dies mid-attempt, the delivery is retried
	// when the lease ends. It must exceed AttemptTimeout. Default twice
	// AttemptTimeout.
	LeaseDuration time.Duration
	// PollInterval is the longest the dispatcher sleeps before looking for
	// due deliveries again (it wakes sooner for a delivery it knows is due,
	// and when a worker frees up). It is what lets a new event or an
	// advanced fake clock be noticed. Default 1 s.
	PollInterval time.Duration
	// Retries are the waits before the second, third, ... attempt; the
	// first attempt is immediate. After the last retry fails the delivery
	// is marked failed and kept for inspection. nil means
	// DefaultRetryDelays; an empty non-nil slice means a single attempt.
	Retries []time.Duration
	// DisableAfter disables an endpoint whose deliveries have failed,
	// without a success in between, for this long. Default 5 days.
	DisableAfter time.Duration
	// RootCAs are the certificate authorities trusted for receivers and
	// SMTP servers. nil means the system roots (SSL_CERT_FILE and
	// SSL_CERT_DIR work as usual). Certificates are always verified.
	RootCAs *x509.CertPool
	// Logger receives one line per attempt. Default slog.Default().
	Logger *slog.Logger
}

// deliveryConfig is DeliveryOptions with the defaults applied.
type deliveryConfig struct {
	workers, maxPerEndpoint                   int
	attemptTimeout, lease, poll, disableAfter time.Duration
	retries                                   []time.Duration
	roots                                     *x509.CertPool
	log                                       *slog.Logger
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func (o *DeliveryOptions) resolve() (deliveryConfig, error) {
	if o == nil {
		o = &DeliveryOptions{}
	}
	cfg := deliveryConfig{
		workers:        orDefault(o.Workers, DefaultDeliveryWorkers),
		maxPerEndpoint: orDefault(o.MaxPerEndpoint, DefaultMaxPerEndpoint),
		attemptTimeout: orDefault(o.AttemptTimeout, DefaultAttemptTimeout),
		poll:           orDefault(o.PollInterval, DefaultPollInterval),
		disableAfter:   orDefault(o.DisableAfter, DefaultDisableAfter),
		retries:        DefaultRetryDelays(),
		roots:          o.RootCAs,
		log:            o.Logger,
	}
	cfg.lease = orDefault(o.LeaseDuration, 2*cfg.attemptTimeout)
	if o.Retries != nil {
		cfg.retries = append([]time.Duration{}, o.Retries...)
	}
	if cfg.log == nil {
		cfg.log = slog.Default()
	}
	return cfg, o.check(cfg)
}

func (o *DeliveryOptions) check(cfg deliveryConfig) error {
	var p problems
	for _, f := range []struct {
		name     string
		negative bool
	}{
		{"Workers", o.Workers < 0}, {"MaxPerEndpoint", o.MaxPerEndpoint < 0},
		{"AttemptTimeout", o.AttemptTimeout < 0}, {"LeaseDuration", o.LeaseDuration < 0},
		{"PollInterval", o.PollInterval < 0}, {"DisableAfter", o.DisableAfter < 0},
	} {
		if f.negative {
			p.add(f.name, RuleRange, "must not be negative")
		}
	}
	if cfg.lease <= cfg.attemptTimeout {
		p.add("LeaseDuration", RuleRange, "must exceed AttemptTimeout")
	}
	for _, r := range cfg.retries {
		if r < 0 {
			p.add("Retries", RuleRange, "waits must not be negative")
			break
		}
	}
	return p.err("invalid delivery options")
}

// endpointKey names an endpoint across workspaces.
type endpointKey struct {
	slug string
	id   int64
}

// deliveryJob is a leased delivery on its way to a worker, with what the
// attempt needs of its endpoint.
type deliveryJob struct {
	slug     string
	delivery store.Delivery
	url      string
	secret   string
}

func (j deliveryJob) key() endpointKey { return endpointKey{j.slug, j.delivery.EndpointID} }

// Dispatcher sends the deliveries queued in the Service's store to their
// endpoints, per the Standard Webhooks specification, until it is stopped.
// Start one with Service.StartDelivery.
//
// Deliveries are claimed with a lease before they are attempted, and the
// result of an attempt is written in one transaction together with the
// next attempt's time, so a delivery is never lost: if the process dies
// mid-attempt, the delivery is attempted again when its lease ends (at
// least once delivery; receivers discard duplicates by webhook-id). Several
// dispatchers, in one process or several over one store, never make the
// same attempt at the same time.
//
// An attempt is an HTTPS POST of the stored payload with the Standard
// Webhooks headers (see SignWebhook). It succeeds on a 2xx response whose
// body (read up to 20 kB) ends within AttemptTimeout; anything else fails:
// another status, a redirect (never followed), a timeout, a refused
// address (see IsPublicAddress; the guard checks every address dialed,
// after name resolution). A failed attempt is retried per Retries; a 429
// or 503 with Retry-After waits at least that long, at most twice the
// scheduled wait. After the last retry the delivery is marked failed and
// kept, for Workspace.Deliveries and Workspace.RetryDelivery.
//
// An endpoint is disabled (Enabled false) when it answers 410 Gone, or
// when its attempts have failed for DisableAfter without a success. Its
// pending deliveries are then marked failed with the error "endpoint
// disabled" (none is attempted again, and a disabled endpoint's backlog
// does not occupy the queue), and new events no longer reach it.
//
// Once DeleteWebhook returns, no attempt to the deleted endpoint is started
// or still running by a dispatcher of the same Service; a dispatcher in
// another process finds the deliveries gone before its next attempt, but
// may finish one it had already begun.
//
// The same queue holds the workspaces' verification emails (see
// ConfirmEmail), with the same leases, Retries and counters; they have no
// endpoint, so nothing about endpoints (failing, disabling) applies. An
// attempt makes a fresh single-use token, stores its hash, and sends the
// email through the workspace's SMTP server as its settings say at that
// moment, within AttemptTimeout. A job whose workspace has no SMTP
// settings any more, whose user's email has changed or been verified
// since it was queued, or whose recipient the server refuses with a 5xx
// reply, fails at once without retries.
//
// To publish the counters with expvar:
//
//	expvar.Publish("webhooks", expvar.Func(func() any { st, _ := d.Stats(ctx); return st }))
type Dispatcher struct {
	svc    *Service
	id     string
	cfg    deliveryConfig
	client *http.Client

	// ctx ends the dispatcher at once (attempts in flight are abandoned
	// and retried after their leases); stopping ends it gracefully.
	ctx      context.Context
	cancel   context.CancelFunc
	stopping chan struct{}
	stopOnce sync.Once
	loopDone chan struct{}
	workers  sync.WaitGroup
	jobs     chan deliveryJob
	wake     chan struct{}
	// growth multiplies the scan window while rounds are starved; only
	// the loop goroutine uses it.
	growth int

	mu       sync.Mutex
	busy     int
	inflight map[endpointKey]int

	counts struct {
		attempts, successes, failures, exhausted, disabled, dropped atomic.Uint64
	}
}

// StartDelivery starts a dispatcher over the Service's store, with opts
// (nil for the defaults). Cancelling ctx stops it abruptly: attempts in
// flight are abandoned and retried when their leases end. Stop stops it
// gracefully. Invalid options are a CodeInvalid error.
func (s *Service) StartDelivery(ctx context.Context, opts *DeliveryOptions) (*Dispatcher, error) {
	cfg, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id, err := newDispatcherID()
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	d := &Dispatcher{
		svc: s, id: id, cfg: cfg,
		client:   newDeliveryClient(s.allowPrivateWebhooks, cfg.roots, cfg.workers),
		stopping: make(chan struct{}),
		loopDone: make(chan struct{}),
		jobs:     make(chan deliveryJob, cfg.workers),
		wake:     make(chan struct{}, 1),
		growth:   1,
		inflight: map[endpointKey]int{},
	}
	d.ctx, d.cancel = context.WithCancel(ctx)
	s.deliveries.addDispatcher(d) // before the loop, which removes it
	d.workers.Add(cfg.workers)
	for range cfg.workers {
		go d.work()
	}
	go d.loop()
	return d, nil
}

// newDispatcherID returns the random id a dispatcher writes as LeaseOwner.
func newDispatcherID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "dsp_" + hex.EncodeToString(b), nil
}

// Stop stops claiming deliveries and waits for the attempts in flight to
// end and be recorded, which the attempt timeout bounds. It may be called
// more than once, and after the context given to StartDelivery ended.
func (d *Dispatcher) Stop() {
	d.stopOnce.Do(func() { close(d.stopping) })
	<-d.loopDone
	d.workers.Wait()
	d.client.CloseIdleConnections()
	d.cancel()
}

// notify wakes the loop; it never blocks, since one pending wake-up is as
// good as many.
func (d *Dispatcher) notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// loop claims due deliveries for the workers until the dispatcher stops.
// It alone sends on jobs, so it closes it, which ends the workers once
// they have finished what they hold.
func (d *Dispatcher) loop() {
	defer close(d.loopDone)
	defer close(d.jobs)
	defer d.svc.deliveries.removeDispatcher(d) // nothing to wake any more
	for {
		if !d.sleep(d.round()) {
			return
		}
	}
}

// sleep waits for wait, a wake-up or the end; it reports whether to go on.
func (d *Dispatcher) sleep(wait time.Duration) bool {
	if wait <= 0 {
		wait = time.Nanosecond // still give stop and cancel a chance
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-d.wake:
	case <-d.stopping:
		return false
	case <-d.ctx.Done():
		return false
	}
	return true
}

// round claims what the free workers can take and hands it to them. It
// returns how long to sleep before the next round.
func (d *Dispatcher) round() time.Duration {
	free, taken := d.capacity()
	if free == 0 {
		return d.cfg.poll // a worker that finishes wakes the loop sooner
	}
	now := d.svc.timestamp()
	plan, err := d.plan(now, free, taken)
	if err == nil {
		err = d.claim(now, &plan)
	}
	if err != nil {
		if d.ctx.Err() == nil {
			d.cfg.log.Error("webhook delivery: claiming due deliveries failed", "error", err)
		}
		return d.cfg.poll
	}
	d.reserve(plan.jobs)
	for _, job := range plan.jobs {
		d.jobs <- job // never blocks: at most free jobs, and free workers
	}
	return d.nextWait(now, plan)
}

// nextWait is the sleep after a round: none when a wider scan may find
// more to do, else until the next known due time, at most the poll
// interval. A delivery due now that could not be claimed waits for a
// worker or an endpoint slot, whose release wakes the loop.
func (d *Dispatcher) nextWait(now time.Time, plan claimPlan) time.Duration {
	if plan.starved && d.growth < maxScanGrowth {
		d.growth *= 2
		return 0
	}
	if !plan.starved {
		d.growth = 1
	}
	if !plan.hasNext {
		return d.cfg.poll
	}
	until := plan.next.Sub(now)
	if until <= 0 && plan.lost > 0 {
		return 0 // another dispatcher won these; others may be due
	}
	if until <= 0 {
		return d.cfg.poll
	}
	return min(until, d.cfg.poll)
}

// capacity returns how many workers are free and a copy of the attempts
// in flight per endpoint.
func (d *Dispatcher) capacity() (int, map[endpointKey]int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	taken := make(map[endpointKey]int, len(d.inflight))
	for k, n := range d.inflight {
		taken[k] = n
	}
	return d.cfg.workers - d.busy, taken
}

func (d *Dispatcher) reserve(jobs []deliveryJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, j := range jobs {
		d.busy++
		d.inflight[j.key()]++
	}
}

func (d *Dispatcher) release(key endpointKey) {
	d.mu.Lock()
	d.busy--
	if d.inflight[key]--; d.inflight[key] <= 0 {
		delete(d.inflight, key)
	}
	d.mu.Unlock()
	d.notify()
}

// work runs attempts until the loop closes jobs.
func (d *Dispatcher) work() {
	defer d.workers.Done()
	for job := range d.jobs {
		d.handle(job)
	}
}

// handle makes one attempt and records it.
func (d *Dispatcher) handle(job deliveryJob) {
	defer d.release(job.key())
	res, sent := d.attempt(job)
	if !sent {
		return
	}
	d.record(job, res)
}

// DeliveryStats are a dispatcher's counters since it started, and the
// depth of the queue.
type DeliveryStats struct {
	// Attempts counts the requests sent, and the emails handed to SMTP
	// servers.
	Attempts uint64 `json:"attempts"`
	// Successes and Failures count the attempts recorded as such.
	Successes uint64 `json:"successes"`
	Failures  uint64 `json:"failures"`
	// Exhausted counts deliveries marked failed: after their last attempt,
	// or because their endpoint was disabled.
	Exhausted uint64 `json:"exhausted"`
	// EndpointsDisabled counts endpoints disabled for answering 410 Gone
	// or failing for DisableAfter.
	EndpointsDisabled uint64 `json:"endpointsDisabled"`
	// Dropped counts claimed deliveries that were not sent, and attempts
	// whose result was not recorded, because the delivery was deleted (or
	// failed by its endpoint's disabling) or its lease had passed to
	// another dispatcher.
	Dropped uint64 `json:"dropped"`
	// InFlight is the number of attempts under way.
	InFlight int `json:"inFlight"`
	// Pending is the queue depth: pending deliveries of every workspace
	// in the store, whichever dispatcher will send them.
	Pending int `json:"pending"`
}

// Stats returns the dispatcher's counters and the queue depth, which it
// reads from the store.
func (d *Dispatcher) Stats(ctx context.Context) (DeliveryStats, error) {
	st := DeliveryStats{
		Attempts: d.counts.attempts.Load(), Successes: d.counts.successes.Load(),
		Failures: d.counts.failures.Load(), Exhausted: d.counts.exhausted.Load(),
		EndpointsDisabled: d.counts.disabled.Load(), Dropped: d.counts.dropped.Load(),
	}
	d.mu.Lock()
	st.InFlight = d.busy
	d.mu.Unlock()
	err := d.svc.store.View(ctx, func(tx store.Tx) (err error) {
		st.Pending, err = tx.PendingDeliveries()
		return err
	})
	return st, fromStore(err, "delivery queue")
}
