// Package delivery runs the queue of an identity.Service: a Dispatcher
// sends the webhook deliveries (package webhook) and verification emails
// (package smtpmail) that the Service's changes queued, until it is
// stopped.
//
// The rules of the queue live in package identity (identity.Queue): what a
// lease is, what an attempt's result means, the retry schedule and
// Retry-After, the disabling of endpoints, and what a verification email
// holds. A Dispatcher decides only how the work is spread: its wake-up and
// poll loop, its workers, the cap on attempts in flight per endpoint, and
// the length of its leases. It never opens a store transaction itself.
//
// A program that embeds the library and wants its webhooks and emails sent
// starts one dispatcher per process:
//
//	d, err := delivery.Start(ctx, svc, nil)
//	defer d.Stop()
package delivery

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/smtpmail"
	"github.com/identitylib/identity/webhook"
)

// Defaults of Options.
const (
	DefaultWorkers        = 8
	DefaultMaxPerEndpoint = 2
	DefaultAttemptTimeout = 15 * time.Second
	DefaultPollInterval   = time.Second
)

// scanFactor sizes the window of due jobs one round looks at: ten times
// the free workers, so that jobs of other endpoints are found even when
// the first ones in due order belong to endpoints at their cap. While
// that is not enough the window doubles, up to maxScanGrowth times.
const (
	scanFactor    = 10
	maxScanGrowth = 64
)

// Options configure a Dispatcher. A nil *Options, and any zero field,
// means the default.
type Options struct {
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
	// LeaseDuration is how long a claimed job stays reserved for this
	// dispatcher. If the process dies mid-attempt, the job is retried when
	// the lease ends. It must exceed AttemptTimeout. Default twice
	// AttemptTimeout.
	LeaseDuration time.Duration
	// PollInterval is the longest the dispatcher sleeps before looking for
	// due jobs again (it wakes sooner for a job it knows is due, when a
	// worker frees up, and when the Service queues a job). It is what lets
	// another process's jobs or an advanced fake clock be noticed.
	// Default 1 s.
	PollInterval time.Duration
	// Retries are the waits before the second, third, ... attempt; the
	// first attempt is immediate. After the last retry fails the job is
	// marked failed and kept for inspection. nil means
	// identity.DefaultRetryDelays; an empty non-nil slice means a single
	// attempt.
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
	// Observer, when set, is told of every attempt and its outcome
	// (package metrics implements it). Default: none.
	Observer Observer
}

// config is Options with the defaults applied.
type config struct {
	workers, maxPerEndpoint     int
	attemptTimeout, lease, poll time.Duration
	policy                      identity.RetryPolicy
	roots                       *x509.CertPool
	allowPrivate                bool
	log                         *slog.Logger
	observer                    Observer
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func (o *Options) resolve(svc *identity.Service) (config, error) {
	if o == nil {
		o = &Options{}
	}
	cfg := config{
		workers:        orDefault(o.Workers, DefaultWorkers),
		maxPerEndpoint: orDefault(o.MaxPerEndpoint, DefaultMaxPerEndpoint),
		attemptTimeout: orDefault(o.AttemptTimeout, DefaultAttemptTimeout),
		poll:           orDefault(o.PollInterval, DefaultPollInterval),
		policy:         identity.RetryPolicy{Retries: o.Retries, DisableAfter: o.DisableAfter},
		roots:          o.RootCAs,
		allowPrivate:   svc.AllowsPrivateWebhooks(),
		log:            o.Logger,
		observer:       o.Observer,
	}
	cfg.lease = orDefault(o.LeaseDuration, 2*cfg.attemptTimeout)
	if cfg.log == nil {
		cfg.log = slog.Default()
	}
	return cfg, o.check(cfg)
}

func (o *Options) check(cfg config) error {
	var fields []identity.FieldError
	for _, f := range []struct {
		name     string
		negative bool
	}{
		{"Workers", o.Workers < 0}, {"MaxPerEndpoint", o.MaxPerEndpoint < 0},
		{"AttemptTimeout", o.AttemptTimeout < 0}, {"LeaseDuration", o.LeaseDuration < 0},
		{"PollInterval", o.PollInterval < 0},
	} {
		if f.negative {
			fields = append(fields, identity.FieldError{Field: f.name, Rule: identity.RuleRange, Message: "must not be negative"})
		}
	}
	if cfg.lease <= cfg.attemptTimeout {
		fields = append(fields, identity.FieldError{Field: "LeaseDuration", Rule: identity.RuleRange, Message: "must exceed AttemptTimeout"})
	}
	if len(fields) == 0 {
		return nil
	}
	return &identity.Error{Code: identity.CodeInvalid, Message: "invalid delivery options", Fields: fields}
}

// Dispatcher sends the jobs queued in a Service's store, per the Standard
// Webhooks specification for webhooks and over SMTP for emails, until it
// is stopped. Start one with Start.
//
// Jobs are leased before they are attempted, and the result of an attempt
// is written in one transaction together with the next attempt's time, so
// a job is never lost: if the process dies mid-attempt, the job is
// attempted again when its lease ends (at least once delivery; receivers
// discard duplicates by webhook-id). Several dispatchers, in one process
// or several over one store, never make the same attempt at the same time.
//
// A webhook attempt is an HTTPS POST of the stored payload with the
// Standard Webhooks headers (see webhook.Sign). It succeeds on a 2xx
// response whose body (read up to 20 kB) ends within AttemptTimeout;
// anything else fails: another status, a redirect (never followed), a
// timeout, a refused address (see identity.IsPublicAddress; the guard
// checks every address dialed, after name resolution). A failed attempt
// is retried per Retries; a 429 or 503 with Retry-After waits at least
// that long, at most twice the scheduled wait. After the last retry the
// delivery is marked failed and kept, for Workspace.ListDeliveries and
// Workspace.RetryDelivery.
//
// An endpoint is disabled (Enabled false) when it answers 410 Gone, or
// when its attempts have failed for DisableAfter without a success. Its
// pending deliveries are then marked failed with the error "endpoint
// disabled" (none is attempted again, and a disabled endpoint's backlog
// does not occupy the queue), and new events no longer reach it.
//
// Once Workspace.DeleteWebhook returns, no attempt to the deleted endpoint
// is started or still running by a dispatcher of the same Service; a
// dispatcher in another process finds the deliveries gone before its next
// attempt, but may finish one it had already begun.
//
// The same queue holds the workspaces' verification emails (see
// identity.Workspace.ConfirmEmail), with the same leases, Retries and
// counters; they have no endpoint, so nothing about endpoints (failing,
// disabling) applies. An attempt makes a fresh single-use token, stores
// its hash, and sends the email through the workspace's SMTP server as
// its settings say at that moment, within AttemptTimeout. A job whose
// workspace has no SMTP settings any more, whose user's email has changed
// or been verified since it was queued, or whose recipient the server
// refuses with a 5xx reply, fails at once without retries.
//
// A panic in an attempt or in a round of claiming jobs (a bug, in the
// store or a client) does not end the dispatcher or the process: it is
// logged at level Error with its stack, and the dispatcher goes on with
// the next job and the next round. The attempt's job is not recorded; it
// is attempted again when its lease ends.
//
// To publish the counters with expvar:
//
//	expvar.Publish("webhooks", expvar.Func(func() any { st, _ := d.Stats(ctx); return st }))
type Dispatcher struct {
	queue *identity.Queue
	id    string
	cfg   config
	hooks *webhook.Client
	mail  *smtpmail.Sender

	// ctx ends the dispatcher at once (attempts in flight are abandoned
	// and retried after their leases); stopping ends it gracefully.
	ctx      context.Context
	cancel   context.CancelFunc
	stopping chan struct{}
	stopOnce sync.Once
	loopDone chan struct{}
	workers  sync.WaitGroup
	jobs     chan identity.Job
	wake     chan struct{}
	unwatch  func()
	// growth multiplies the scan window while rounds are starved; only
	// the loop goroutine uses it.
	growth int

	mu       sync.Mutex
	busy     int
	inflight map[identity.Lane]int

	live liveAttempts

	counts struct {
		attempts, successes, failures, exhausted, disabled, dropped atomic.Uint64
	}
}

// Start starts a dispatcher over the Service's queue, with opts (nil for
// the defaults). Cancelling ctx stops it abruptly: attempts in flight are
// abandoned and retried when their leases end. Stop stops it gracefully.
// Invalid options are an identity.CodeInvalid error.
func Start(ctx context.Context, svc *identity.Service, opts *Options) (*Dispatcher, error) {
	cfg, err := opts.resolve(svc)
	if err != nil {
		return nil, err
	}
	queue, err := svc.Queue(&cfg.policy)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id, err := newDispatcherID()
	if err != nil {
		return nil, &identity.Error{Code: identity.CodeInternal, Message: "internal error", Err: err}
	}
	d := &Dispatcher{
		queue: queue, id: id, cfg: cfg,
		hooks: webhook.NewClient(&webhook.Options{
			AllowPrivate: cfg.allowPrivate, RootCAs: cfg.roots, MaxIdleConnsPerHost: cfg.workers,
		}),
		mail:     smtpmail.NewSender(cfg.roots),
		stopping: make(chan struct{}),
		loopDone: make(chan struct{}),
		jobs:     make(chan identity.Job, cfg.workers),
		wake:     make(chan struct{}, 1),
		growth:   1,
		inflight: map[identity.Lane]int{},
	}
	d.ctx, d.cancel = context.WithCancel(ctx)
	d.unwatch = svc.WatchQueue(d) // before the loop, which ends the watch
	d.workers.Add(cfg.workers)
	for range cfg.workers {
		go d.work()
	}
	go d.loop()
	return d, nil
}

// newDispatcherID returns the random id a dispatcher leases jobs under.
func newDispatcherID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "dsp_" + hex.EncodeToString(b), nil
}

// Stop stops claiming jobs and waits for the attempts in flight to end and
// be recorded, which the attempt timeout bounds. It may be called more
// than once, and after the context given to Start ended.
func (d *Dispatcher) Stop() {
	d.stopOnce.Do(func() { close(d.stopping) })
	<-d.loopDone
	d.workers.Wait()
	d.hooks.CloseIdleConnections()
	d.cancel()
}

// JobsQueued wakes the loop (identity.QueueWatcher); it never blocks,
// since one pending wake-up is as good as many.
func (d *Dispatcher) JobsQueued() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// loop claims due jobs for the workers until the dispatcher stops. It
// alone sends on jobs, so it closes it, which ends the workers once they
// have finished what they hold.
func (d *Dispatcher) loop() {
	defer close(d.loopDone)
	defer close(d.jobs)
	defer d.unwatch() // nothing to wake any more
	for {
		if !d.sleep(d.safeRound()) {
			return
		}
	}
}

// safeRound runs a round. A panic in it (in the store, say) is logged,
// and the next round comes after the poll interval: the loop, and with it
// the dispatcher, keeps going. A round panics, if at all, before it
// reserves workers for the jobs it leased, so nothing is held: leased
// jobs are attempted when their leases end.
func (d *Dispatcher) safeRound() (wait time.Duration) {
	wait = d.cfg.poll
	defer d.recovered("delivery: a round of claiming due jobs panicked")
	return d.round()
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

// work runs attempts until the loop closes jobs.
func (d *Dispatcher) work() {
	defer d.workers.Done()
	for job := range d.jobs {
		d.handle(job)
	}
}

// Stats are a dispatcher's counters since it started, and the depth of
// the queue.
type Stats struct {
	// Attempts counts the requests sent, and the emails handed to SMTP
	// servers.
	Attempts uint64 `json:"attempts"`
	// Successes and Failures count the attempts recorded as such.
	Successes uint64 `json:"successes"`
	Failures  uint64 `json:"failures"`
	// Exhausted counts jobs marked failed: after their last attempt, or
	// because their endpoint was disabled.
	Exhausted uint64 `json:"exhausted"`
	// EndpointsDisabled counts endpoints disabled for answering 410 Gone
	// or failing for DisableAfter.
	EndpointsDisabled uint64 `json:"endpointsDisabled"`
	// Dropped counts claimed jobs that were not sent, and attempts whose
	// result was not recorded, because the job was deleted (or failed by
	// its endpoint's disabling) or its lease had passed to another
	// dispatcher.
	Dropped uint64 `json:"dropped"`
	// InFlight is the number of attempts under way.
	InFlight int `json:"inFlight"`
	// Pending is the queue depth: pending jobs of every workspace in the
	// store, whichever dispatcher will send them.
	Pending int `json:"pending"`
}

// Stats returns the dispatcher's counters and the queue depth, which it
// reads from the store.
func (d *Dispatcher) Stats(ctx context.Context) (Stats, error) {
	st := Stats{
		Attempts: d.counts.attempts.Load(), Successes: d.counts.successes.Load(),
		Failures: d.counts.failures.Load(), Exhausted: d.counts.exhausted.Load(),
		EndpointsDisabled: d.counts.disabled.Load(), Dropped: d.counts.dropped.Load(),
	}
	d.mu.Lock()
	st.InFlight = d.busy
	d.mu.Unlock()
	var err error
	st.Pending, err = d.queue.CountPending(ctx)
	return st, err
}
