package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/metrics"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/webauthn"
)

// Server limits. Request bodies are at most 1 MiB (the API's own limit),
// so a generous read timeout still bounds a slow client; the write timeout
// leaves room for argon2id hashing on a busy machine.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	// shutdownTimeout is how long in-flight requests may run after a
	// signal: short enough to exit well within the 10 s that service
	// managers commonly wait before SIGKILL.
	shutdownTimeout = 5 * time.Second
	// memoryHeadroom is what serve's soft memory limit allows beyond
	// -hash-memory-budget for everything else the process keeps on its
	// heap (see serve).
	memoryHeadroom = 64 << 20
	// deliveryGrace is how long webhook attempts in flight may run after
	// the API has shut down; with shutdownTimeout it keeps the exit within
	// 10 s of a signal.
	deliveryGrace = 3 * time.Second
	// sweepInterval is how often serve deletes idempotency records whose
	// lifetime has ended (they already count as absent; this reclaims the
	// space).
	sweepInterval = identity.DefaultSweepInterval
)

// serve runs the REST API until ctx ends:
// identityd serve [-addr HOST:PORT] [-issuer-base URL] [-allow-private-webhooks]
// [-access-log=false] [-attempt-timeout D] [-hash-memory-budget BYTES]
// [-metrics-addr HOST:PORT] [-key-cache-ttl D] [-admin-socket PATH|off]
// [-trusted-proxies CIDR[,CIDR...]] [-refresh-reuse D] [-audit-log FILE|-]
// [-console=false].
func serve(ctx context.Context, e *env, fs *flag.FlagSet, args []string) (err error) {
	addr := fs.String("addr", "127.0.0.1:8080", "the `HOST:PORT` to listen on; port 0 picks a free port")
	allowPrivate := fs.Bool("allow-private-webhooks", false, "allow webhook URLs on localhost and private networks (local testing only)")
	accessLog := fs.Bool("access-log", true, "log one line per request (server errors are logged regardless)")
	attemptTimeout := fs.Duration("attempt-timeout", delivery.DefaultAttemptTimeout,
		"bound one webhook or email attempt by `D`; a delivery whose process died mid-attempt is retried 2*D after it was claimed")
	hashBudget := fs.Int64("hash-memory-budget", identity.DefaultPasswordHashingBudget,
		"bound the memory of the password hashes computed at once to `BYTES`; the others wait (argon2id at m=19 MiB takes 19 MiB)")
	metricsAddr := fs.String("metrics-addr", "", "serve the Prometheus metrics at /metrics on `HOST:PORT` (default: off; port 0 picks a free port)")
	issuerBase := fs.String("issuer-base", "", "the base `URL` of the workspaces' OpenID Providers, whose issuers are URL/t/SLUG:\nhttps, or http on localhost or a loopback address (default http:// and the address bound)")
	keyCacheTTL := fs.Duration("key-cache-ttl", 0, "trust a verified API key this `long` before reading it again; a key revoked by another process\n"+
		"(PostgreSQL) may be accepted that long (default: until revoked over a bbolt file, not cached over PostgreSQL; negative: off)")
	adminSocket := fs.String("admin-socket", e.adminSocket, "listen for admin commands on the Unix socket `PATH` (mode 0600); off: no socket\n"+
		"(default FILE.sock beside a bbolt -db FILE, none for PostgreSQL)")
	proxies := fs.String("trusted-proxies", "", "comma-separated `CIDRs` of the reverse proxies in front of serve, such as 10.0.0.0/8,::1/128: a request\n"+
		"from one comes from the address it forwarded (Forwarded or X-Forwarded-For), which throttling counts and\n"+
		"sessions show (default none: every request comes from its connection's peer)")
	refreshReuse := fs.Duration("refresh-reuse", 0, fmt.Sprintf("let a client exchange a used refresh token again within `D` of its use, for an answer it lost\n"+
		"(at most %s; default 0: off, presenting a used refresh token revokes its grant)", identity.MaxRefreshReuse))
	auditLog := fs.String("audit-log", "", "write every audit record, once committed, as one JSON line to `FILE` (appended to; - is standard output);\n"+
		"a record the file cannot take in time is dropped and counted, never waited for (default: none)")
	withConsole := fs.Bool("console", true, "serve the operator console at /console/ (its operators sign in through the workspace \"operators\"); false: none")
	if _, err := parseCommand(fs, args, nil); err != nil {
		return err
	}
	if *hashBudget <= 0 {
		return usagef(fs, "-hash-memory-budget must be positive")
	}
	trusted, err := parsePrefixes(*proxies)
	if err != nil {
		return usagef(fs, "-trusted-proxies: %v", err)
	}
	if *refreshReuse < 0 || *refreshReuse > identity.MaxRefreshReuse {
		return usagef(fs, "-refresh-reuse must be between 0 and %s", identity.MaxRefreshReuse)
	}
	// The budget bounds the memory of the hashes running at once, but a
	// finished hash's memory is garbage until the collector runs, which by
	// default lets the heap grow to twice what was live at its last run:
	// 200 hashes at once under a 64 MiB budget then peak near 2.5 times
	// the budget. A soft memory limit of the budget plus headroom makes
	// the collector run sooner, so the process stays within about its
	// baseline + the budget. $GOMEMLIMIT, when set, is left to rule.
	// (The previous limit is restored on return, for the tests that run
	// serve in their own process.)
	memoryLimit := int64(-1) // unchanged
	if os.Getenv("GOMEMLIMIT") == "" {
		memoryLimit = *hashBudget + min(memoryHeadroom, math.MaxInt64-*hashBudget)
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	accessLines, flushAccessLines := newBatchedLog(e.stderr)
	defer flushAccessLines()
	logger := slog.New(slog.NewTextHandler(accessLines.Now(), nil))
	// The OpenID Provider's protocol library logs through slog's default
	// logger: send that to the same place, in the same format.
	slog.SetDefault(logger)
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", *addr)
	if err != nil {
		return err
	}
	// The metrics are kept whether or not -metrics-addr serves them (the
	// admin socket does too): counting costs little.
	m := metrics.New(&metrics.Options{Logger: logger})
	var metricsLn net.Listener
	if *metricsAddr != "" {
		if metricsLn, err = new(net.ListenConfig).Listen(ctx, "tcp", *metricsAddr); err != nil {
			ln.Close()
			return err
		}
	}
	if *issuerBase == "" {
		*issuerBase = "http://" + ln.Addr().String()
	}
	opts := &identity.Options{AllowPrivateWebhooks: *allowPrivate, IssuerBase: *issuerBase, PasswordHashingBudget: *hashBudget,
		KeyCacheTTL: *keyCacheTTL, Observer: m, TrustedProxies: trusted, TokenLifetimes: &identity.TokenLifetimes{RefreshReuse: *refreshReuse},
		PasskeyCeremony: webauthn.New()}
	if *auditLog != "" {
		sink, err := openAuditSink(*auditLog, e.stdout, e.dbPath, logger)
		if err != nil {
			ln.Close()
			closeListener(metricsLn)
			return err
		}
		// After the Service has closed (deferred below, so run before
		// this), no record comes: the sink writes what waits and stops.
		defer func() {
			if err := sink.close(shutdownTimeout); err != nil {
				logger.Error("closing the audit log", "err", err)
			}
		}()
		opts.AuditSink = sink
	}
	svc, st, svcOpts, err := e.openStore(false, opts)
	if err != nil {
		ln.Close()
		closeListener(metricsLn)
		return err
	}
	defer closeService(svc, &err) // last: after every request and attempt has finished
	if err := m.CollectQueue(svc); err != nil {
		ln.Close()
		closeListener(metricsLn)
		return err
	}
	if metricsLn != nil {
		defer serveMetrics(metricsLn, m, logger)()
	}
	// Webhook deliveries and verification emails run beside the API: the
	// queue is in the database, so deliveries committed before a restart
	// are sent after it.
	dctx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	dispatcher, err := delivery.Start(dctx, svc, &delivery.Options{AttemptTimeout: *attemptTimeout, Logger: logger, Observer: m})
	if err != nil {
		abandon()
		ln.Close()
		return err
	}
	defer stopDelivery(dispatcher, abandon, deliveryGrace)
	defer startSweeper(ctx, svc, logger, sweepInterval)()
	var con *console.Handler
	if *withConsole {
		if con, err = startConsole(ctx, svc, logger); err != nil {
			ln.Close()
			return err
		}
	}
	// The other commands run in this process while it holds the database
	// (see adminsocket.go), and end before the database is closed.
	stopAdmin, err := startAdminSocket(ctx, adminSocketPath(*adminSocket, e.dbPath), *adminSocket != "", e.dbPath, svc, st, svcOpts, m.WriteText, logger, con)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopAdmin()
	h, err := newHandler(svc, requestLogger(logger, accessLines, *accessLog), m, con)
	if err != nil {
		return err
	}
	srv := newServer(h, logger)
	logger.Info("listening", "addr", ln.Addr().String(), "db", e.dbName(), "issuer_base", *issuerBase, "allow_private_webhooks", *allowPrivate,
		"hash_memory_budget", *hashBudget, "memory_limit", debug.SetMemoryLimit(memoryLimit))
	logFirstStep(ctx, svc, logger, e.dbName(), con)
	err = serveUntilDone(ctx, srv, ln, logger)
	logger.Info("stopped")
	return err
}

// parsePrefixes parses a comma-separated list of CIDR prefixes, such as
// 10.0.0.0/8,2001:db8::/32; "" is none. An address without a length is
// refused rather than taken for a /32 or /128: a proxy's network written
// without its length would otherwise trust one address of it silently.
// A prefix with host bits set (10.1.2.3/8) is refused too, as a likely
// typo.
func parsePrefixes(list string) ([]netip.Prefix, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, s := range splitList(list) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8 or 2001:db8::/32", s)
		}
		if p != p.Masked() {
			return nil, fmt.Errorf("%q has bits set past its length: did you mean %s?", s, p.Masked())
		}
		out = append(out, p)
	}
	return out, nil
}

// logFirstStep logs, when the database has no workspace yet (but the
// console's operator workspace), the command that creates one: what a new
// user runs next, in another terminal, while serve runs (the command
// reaches this process through the admin socket).
func logFirstStep(ctx context.Context, svc *identity.Service, logger *slog.Logger, db string, con *console.Handler) {
	workspaces, err := svc.ListWorkspaces(ctx)
	if err != nil {
		return // a failure shows in the first request that reads the store
	}
	for _, ws := range workspaces {
		if con == nil || ws.Slug() != con.OperatorWorkspace() {
			return
		}
	}
	logger.Info("no workspace yet: create one with", "command", "identityd -db "+db+" workspace create SLUG")
}

// startSweeper sweeps expired idempotency records now and then every
// interval, and what each workspace's Retention says is past keeping now
// and then every identity.DefaultRetentionSweepInterval (a minute), until
// ctx ends; the function it returns stops both and waits.
func startSweeper(ctx context.Context, svc *identity.Service, logger *slog.Logger, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		svc.SweepIdempotencyEvery(ctx, interval, func(n int, err error) {
			if err != nil {
				logger.Warn("sweeping idempotency records failed", "err", err)
			} else {
				logger.Info("swept expired idempotency records", "count", n)
			}
		})
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		svc.SweepEvery(ctx, identity.DefaultRetentionSweepInterval, func(r identity.SweepResult, err error) {
			if err != nil {
				logger.Warn("the retention sweep failed", "err", err)
			} else {
				logger.Info("swept records past retention", "deliveries", r.Deliveries, "mail_jobs", r.MailJobs,
					"sessions", r.Sessions, "tokens", r.Tokens, "audit_records", r.AuditRecords)
			}
		})
	}()
	return func() {
		cancel()
		<-done
		<-done
	}
}

// stopDelivery lets attempts in flight finish for up to grace, then
// abandons the rest: their deliveries stay leased in the database and are
// retried when the leases end, so the process still exits promptly.
func stopDelivery(d *delivery.Dispatcher, abandon context.CancelFunc, grace time.Duration) {
	stopped := make(chan struct{})
	go func() {
		d.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(grace):
		abandon()
		<-stopped
	}
	abandon()
}

// closeListener closes ln, if any.
func closeListener(ln net.Listener) {
	if ln != nil {
		ln.Close()
	}
}

// serveMetrics serves m at GET /metrics on ln, and logs the address
// bound; the function it returns shuts that server down and waits for it.
func serveMetrics(ln net.Listener, m *metrics.Metrics, logger *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := newServer(mux, logger)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving metrics failed", "err", err)
		}
	}()
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}
}

// newServer returns an http.Server with timeouts, so that slow or idle
// clients cannot hold connections and goroutines forever.
func newServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// newHandler serves GET /healthz itself, the REST API under
// /t/{slug}/api/, every other path under /t/{slug}/ with the workspace's
// OpenID Provider and, when con is not nil, the console under its base
// path (/console/). It dispatches on the path rather than through a
// ServeMux, which would clean and redirect paths before the adapters see
// them. m counts the requests: the API's by route pattern, the OpenID
// Provider's under the route "oidc", the console's under "console", the
// health checks under "healthz".
func newHandler(svc *identity.Service, logger *slog.Logger, m *metrics.Metrics, con *console.Handler) (http.Handler, error) {
	api := httpapi.New(svc, &httpapi.Options{Logger: logger, Observer: m})
	op, err := oidc.New(svc, &oidc.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	provider := m.Instrument("oidc", op)
	health := m.Instrument("healthz", http.HandlerFunc(healthz))
	var consoleHandler http.Handler
	if con != nil {
		consoleHandler = m.Instrument("console", con)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz":
			health.ServeHTTP(w, r)
		case con != nil && strings.HasPrefix(r.URL.Path, con.BasePath()):
			consoleHandler.ServeHTTP(w, r)
		case isProviderPath(r.URL.Path):
			provider.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	}), nil
}

// isProviderPath reports whether path is under /t/{slug}/ but not under
// /t/{slug}/api/: a path of a workspace's OpenID Provider.
func isProviderPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/t/")
	if !ok {
		return false
	}
	_, sub, ok := strings.Cut(rest, "/")
	return ok && sub != "api" && !strings.HasPrefix(sub, "api/")
}

// healthz answers a liveness check: the process is up and serving.
func healthz(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("ok\n"))
}

// serveUntilDone serves ln until ctx ends, then shuts down gracefully:
// the listener closes at once, in-flight requests get shutdownTimeout to
// finish, and whatever still runs then has its connection closed.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener, logger *slog.Logger) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err // Serve failed before any shutdown
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("requests still running at the shutdown deadline; closing their connections", "err", err)
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// requestLogger returns the adapter's logger: logger with the per-request
// lines (Info) written in batches to lines, or without them when
// accessLog is off.
func requestLogger(logger *slog.Logger, lines *batchedLog, accessLog bool) *slog.Logger {
	if accessLog {
		return slog.New(splitLevel{low: newAccessLineHandler(lines), high: logger.Handler(), level: slog.LevelWarn})
	}
	return slog.New(minLevel{logger.Handler(), slog.LevelWarn})
}

// minLevel drops the records of h below level: the adapter logs each
// request at Info and each server error at Error, so Warn keeps only the
// failures.
type minLevel struct {
	h     slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.h.Enabled(ctx, l)
}

func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{m.h.WithAttrs(attrs), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler { return minLevel{m.h.WithGroup(name), m.level} }
