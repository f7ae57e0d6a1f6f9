// Package metrics publishes the identity library's metrics in the
// Prometheus exposition format, with github.com/prometheus/client_golang.
//
// A *Metrics implements the observers that the library's packages
// declare, and keeps what they report on a prometheus.Registry of its own
// (never the global default registry), which Handler serves:
//
//	m := metrics.New(nil)
//	svc, err := identity.New(st, &identity.Options{Observer: m})
//	m.CollectQueue(svc)
//	api := httpapi.New(svc, &httpapi.Options{Observer: m})
//	d, err := delivery.Start(ctx, svc, &delivery.Options{Observer: m})
//	http.Handle("/metrics", m.Handler())
//
// # The metrics
//
// Durations are in seconds; every name starts with identity_.
//
//   - identity_http_requests_total{method,route,status}: counter of the
//     REST API's requests (httpapi.Options.Observer) and of the requests
//     of the handlers wrapped by Instrument. route is the route's pattern,
//     such as /t/:slug/api/v1/users/:userId (never the path, which holds
//     ids), "unmatched" for a path no route matches (a 404, or a 405 for
//     a known path), or the fixed name given to Instrument; method is
//     GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS, or "other"; status is
//     the HTTP status code sent.
//   - identity_http_request_duration_seconds{method,route}: histogram of
//     the same requests' durations.
//   - identity_store_transaction_duration_seconds{kind,result}: histogram
//     of the store transactions' durations (identity.Options.Observer),
//     each whole View or Update call with the store's retries: kind is
//     "view" or "update"; result is "ok", or "error" when the transaction
//     returned an error (a refusal by a rule, a not-found, or a failure
//     of the store) and so committed nothing.
//   - identity_sign_ins_total{outcome}: counter of sign-in outcomes:
//     "succeeded" (Authenticate, or VerifySecondFactor after it, signed a
//     user in), "mfa_required" and "mfa_enrollment_required" (a right
//     password that asks for the second factor), and the reasons of
//     login.failed: "unknown_user", "wrong_password", "no_password",
//     "disabled", "locked", "wrong_code" (see identity.SignInOutcome).
//   - identity_account_locks_total: counter of accounts locked by failed
//     attempts (the event user.locked).
//   - identity_password_hash_wait_seconds: histogram of how long each
//     password hash or verification waited for room in the hashing budget
//     (identity.Options.PasswordHashingBudget).
//   - identity_delivery_attempts_total{kind,outcome}: counter of the
//     dispatcher's attempts (delivery.Options.Observer): kind is "webhook"
//     or "mail"; outcome is "succeeded", "failed_retry", "failed_permanent",
//     "dropped" or "unrecorded" (see delivery.AttemptOutcome).
//   - identity_delivery_attempt_duration_seconds{kind}: histogram of the
//     durations of the attempts that were sent.
//   - identity_delivery_queue_depth: gauge of the pending jobs of every
//     workspace in the store, read at each scrape (CollectQueue).
//   - identity_delivery_queue_oldest_due_age_seconds: gauge of how long
//     the earliest due job has waited for an attempt, read at each
//     scrape: near zero while the queue is worked, growing when jobs wait
//     for a dispatcher that does not come.
//
// The registry also holds the Go runtime's and the process's standard
// collectors (go_* and process_*).
package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
)

// DefaultQueueTimeout is the default of Options.QueueTimeout.
const DefaultQueueTimeout = 5 * time.Second

// Options configure Metrics. A nil *Options means every default.
type Options struct {
	// QueueTimeout bounds the read of the queue's depth at each scrape
	// (see CollectQueue). Default: DefaultQueueTimeout (5 s).
	QueueTimeout time.Duration
	// Logger receives the errors of a scrape (a failed read of the
	// queue, whose gauges are then left out). Default: slog.Default().
	Logger *slog.Logger
}

// Metrics is the library's metrics on a registry of its own. It
// implements identity.Observer, httpapi.Observer and delivery.Observer.
// It is safe for concurrent use.
type Metrics struct {
	reg          *prometheus.Registry
	queueTimeout time.Duration
	logger       *slog.Logger

	httpRequests     *prometheus.CounterVec
	httpDurations    *prometheus.HistogramVec
	txDurations      *prometheus.HistogramVec
	signIns          *prometheus.CounterVec
	locks            prometheus.Counter
	audits           *prometheus.CounterVec
	hashWaits        prometheus.Histogram
	attempts         *prometheus.CounterVec
	attemptDurations *prometheus.HistogramVec

	// txChildren are txDurations' children of every known kind, resolved
	// once in New: TransactionDone runs on every store transaction, and
	// WithLabelValues would hash the labels and take the vector's lock
	// each time.
	txChildren []txChildren

	// requests caches the children of httpRequests and httpDurations by
	// label set (see requestChildren), for the same reason, and to spare
	// the status's strconv.Itoa. Readers load the map without a lock;
	// requestsMu serializes the writers, which copy it (see
	// requestChildren for the bound).
	requests   atomic.Pointer[map[requestKey]requestEntry]
	requestsMu sync.Mutex
}

// txKinds are the kinds of store transaction whose children New resolves:
// every identity.TxKind. A kind added to identity without being added here
// is still counted right, through WithLabelValues, only more slowly.
var txKinds = []identity.TxKind{identity.TxView, identity.TxUpdate}

// txResults are the values of the result label of
// identity_store_transaction_duration_seconds, indexed by txResult.
var txResults = [2]string{"ok", "error"}

// txChildren are the children of txDurations of one kind, indexed by
// txResult.
type txChildren struct {
	kind     identity.TxKind
	children [2]prometheus.Observer
}

// txResult is the index in txResults of a transaction's result.
func txResult(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

// requestKey is a label set of identity_http_requests_total: the key of
// the cache of children, comparable so that a lookup allocates nothing.
type requestKey struct {
	method, route string
	status        int
}

// requestEntry holds the resolved children of one requestKey: its counter
// and the histogram of its method and route (shared by the keys that
// differ only in status, as the vector shares it).
type requestEntry struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// maxRequestEntries bounds the cache of request children. The REST API's
// label sets are its routes (two dozen) times the statuses each answers (a
// dozen at most), plus "unmatched" and the few Instrument names times
// eight method labels and their statuses: a few hundred. Past the bound
// a new label set is still counted, through WithLabelValues, and not
// cached, so a caller that passes unbounded routes grows the vectors (as
// it did before the cache) but never the cache.
const maxRequestEntries = 1024

// Buckets of the histograms, in seconds.
var (
	// httpBuckets: from a cached read to a password hash under load.
	httpBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// txBuckets: from an in-memory read to a commit waiting for a disk.
	txBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	// hashWaitBuckets: no wait at all, up to a queue of many hashes.
	hashWaitBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// attemptBuckets: up to the default attempt timeout (15 s) and more.
	attemptBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30}
)

// New returns Metrics with every metric registered, at zero.
func New(opts *Options) *Metrics {
	if opts == nil {
		opts = &Options{}
	}
	m := &Metrics{
		reg:          prometheus.NewRegistry(),
		queueTimeout: opts.QueueTimeout,
		logger:       opts.Logger,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "identity_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		httpDurations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "identity_http_request_duration_seconds",
			Help:    "Durations of the HTTP requests answered, by method and route pattern.",
			Buckets: httpBuckets,
		}, []string{"method", "route"}),
		txDurations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "identity_store_transaction_duration_seconds",
			Help:    "Durations of the store transactions (whole View or Update calls), by kind (view, update) and result (ok, error).",
			Buckets: txBuckets,
		}, []string{"kind", "result"}),
		signIns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "identity_sign_ins_total",
			Help: "Sign-in outcomes: succeeded, mfa_required, mfa_enrollment_required, and the reasons of login.failed.",
		}, []string{"outcome"}),
		locks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "identity_account_locks_total",
			Help: "Accounts locked by failed attempts (user.locked).",
		}),
		audits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "identity_audit_records_total",
			Help: "Audit records committed, by action (the audit catalogue).",
		}, []string{"action"}),
		hashWaits: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "identity_password_hash_wait_seconds",
			Help:    "Time each password hash or verification waited for room in the hashing budget.",
			Buckets: hashWaitBuckets,
		}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "identity_delivery_attempts_total",
			Help: "Delivery attempts (webhooks and emails), by kind and outcome.",
		}, []string{"kind", "outcome"}),
		attemptDurations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "identity_delivery_attempt_duration_seconds",
			Help:    "Durations of the delivery attempts that were sent, by kind.",
			Buckets: attemptBuckets,
		}, []string{"kind"}),
	}
	if m.queueTimeout <= 0 {
		m.queueTimeout = DefaultQueueTimeout
	}
	if m.logger == nil {
		m.logger = slog.Default()
	}
	// Every known series starts at zero, so that rates and absences are
	// right from the first scrape.
	for _, kind := range txKinds {
		c := txChildren{kind: kind}
		for i, result := range txResults {
			c.children[i] = m.txDurations.WithLabelValues(string(kind), result)
		}
		m.txChildren = append(m.txChildren, c)
	}
	m.requests.Store(&map[requestKey]requestEntry{})
	for _, o := range identity.SignInOutcomes() {
		m.signIns.WithLabelValues(string(o))
	}
	for _, a := range identity.AuditActions() {
		m.audits.WithLabelValues(string(a))
	}
	for _, kind := range []identity.JobKind{identity.WebhookJob, identity.MailJob} {
		for _, o := range delivery.AttemptOutcomes() {
			m.attempts.WithLabelValues(string(kind), string(o))
		}
		m.attemptDurations.WithLabelValues(string(kind))
	}
	m.reg.MustRegister(
		m.httpRequests, m.httpDurations, m.txDurations, m.signIns, m.locks,
		m.audits, m.hashWaits, m.attempts, m.attemptDurations,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the registry the metrics are kept on, for a program
// that adds collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the exposition format the scraper asks
// for (text by default). A metric that cannot be read (the queue's, when
// the store fails) is logged and left out; the others are served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// WriteText writes the metrics to w in the Prometheus text format, as
// Handler serves them to a scraper that asks for text: for a program that
// serves them elsewhere than over HTTP (identityd's admin socket). A
// metric that cannot be read is left out, and its error returned after
// the others are written.
func (m *Metrics) WriteText(w io.Writer) error {
	families, gatherErr := m.reg.Gather()
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return gatherErr
}

// TransactionDone observes a store transaction (identity.Observer).
func (m *Metrics) TransactionDone(kind identity.TxKind, d time.Duration, err error) {
	r := txResult(err)
	for i := range m.txChildren {
		if c := &m.txChildren[i]; c.kind == kind {
			c.children[r].Observe(d.Seconds())
			return
		}
	}
	// A kind New does not know: counted all the same, at the vector's
	// cost.
	m.txDurations.WithLabelValues(string(kind), txResults[r]).Observe(d.Seconds())
}

// SignIn counts a sign-in's outcome (identity.Observer).
func (m *Metrics) SignIn(outcome identity.SignInOutcome) {
	m.signIns.WithLabelValues(string(outcome)).Inc()
}

// Locked counts a lock (identity.Observer).
func (m *Metrics) Locked() { m.locks.Inc() }

// Audited counts an audit record by its action (identity.Observer).
func (m *Metrics) Audited(rec identity.AuditRecord) {
	m.audits.WithLabelValues(string(rec.Action)).Inc()
}

// HashWait observes a wait for the hashing budget (identity.Observer).
func (m *Metrics) HashWait(d time.Duration) { m.hashWaits.Observe(d.Seconds()) }

// AttemptDone counts a delivery attempt and observes its duration when it
// was sent (delivery.Observer).
func (m *Metrics) AttemptDone(kind identity.JobKind, outcome delivery.AttemptOutcome, d time.Duration) {
	m.attempts.WithLabelValues(string(kind), string(outcome)).Inc()
	if d > 0 {
		m.attemptDurations.WithLabelValues(string(kind)).Observe(d.Seconds())
	}
}

// RequestDone counts a request of the REST API and observes its duration
// (httpapi.Observer). A request no route matched is counted under the
// route "unmatched".
func (m *Metrics) RequestDone(method, route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	e := m.requestChildren(requestKey{method: methodLabel(method), route: route, status: status})
	e.requests.Inc()
	e.duration.Observe(d.Seconds())
}

// requestChildren returns the children of k's label set, from the cache
// when it holds them: a lookup in a map read without a lock, which
// allocates nothing. On a miss it resolves them with WithLabelValues and
// caches them, unless k's status is not an HTTP status (outside
// 100-599: net/http accepts up to 999, and such a caller is not worth a
// place) or the cache holds maxRequestEntries already; a miss past the
// bound takes no lock of ours. The map is copied on each insertion so
// that readers never lock: the label sets are few and found early in a
// server's life, then only read (filling the cache to the bound copies
// half a million entries in all, once).
func (m *Metrics) requestChildren(k requestKey) requestEntry {
	cache := *m.requests.Load()
	if e, ok := cache[k]; ok {
		return e
	}
	cacheable := k.status >= 100 && k.status <= 599 && len(cache) < maxRequestEntries
	if cacheable {
		// The route is kept as long as m: a copy, so as not to keep
		// whatever larger string the caller's may be a part of.
		k.route = strings.Clone(k.route)
	}
	e := requestEntry{
		requests: m.httpRequests.WithLabelValues(k.method, k.route, strconv.Itoa(k.status)),
		duration: m.httpDurations.WithLabelValues(k.method, k.route),
	}
	if !cacheable {
		return e
	}
	m.requestsMu.Lock()
	defer m.requestsMu.Unlock()
	old := *m.requests.Load()
	if _, ok := old[k]; ok || len(old) >= maxRequestEntries {
		return e // another goroutine cached the same children, or full
	}
	next := maps.Clone(old)
	next[k] = e
	m.requests.Store(&next)
	return e
}

// methodLabel bounds the methods kept apart: a client may send any.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return method
	}
	return "other"
}

// Interface checks. That Metrics is an httpapi.Observer too is checked by
// the tests: importing httpapi here would link its router into every
// program that records metrics.
var (
	_ identity.Observer = (*Metrics)(nil)
	_ delivery.Observer = (*Metrics)(nil)
)

// Queue is what the queue's gauges read at each scrape: identity.Service
// implements it.
type Queue interface {
	GetQueueStats(ctx context.Context) (identity.QueueStats, error)
	Now() time.Time
}

// CollectQueue adds the gauges of q's queue, identity_delivery_queue_depth
// and identity_delivery_queue_oldest_due_age_seconds, read in one read
// transaction at each scrape (bounded by Options.QueueTimeout). It may be
// called once.
func (m *Metrics) CollectQueue(q Queue) error {
	return m.reg.Register(&queueCollector{q: q, timeout: m.queueTimeout})
}

var (
	queueDepthDesc = prometheus.NewDesc("identity_delivery_queue_depth",
		"Pending delivery jobs (webhooks and emails) of every workspace in the store.", nil, nil)
	queueAgeDesc = prometheus.NewDesc("identity_delivery_queue_oldest_due_age_seconds",
		"How long the earliest due delivery job has waited for an attempt; 0 when none is due.", nil, nil)
)

// queueCollector reads the queue's gauges at each scrape.
type queueCollector struct {
	q       Queue
	timeout time.Duration
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- queueAgeDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.q.GetQueueStats(ctx)
	if err != nil {
		err = fmt.Errorf("reading the delivery queue: %w", err)
		ch <- prometheus.NewInvalidMetric(queueDepthDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, st.OldestDueAge(c.q.Now()).Seconds())
}
