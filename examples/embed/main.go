// Command embed shows the identity REST API mounted inside an existing
// net/http server, next to the program's own routes:
//
//	GET /healthz                       the program's liveness check
//	GET /hello                         the program's own page
//	/identity/t/{slug}/api/v1/...      the identity API (httpapi.New)
//
// The API is mounted with http.StripPrefix, so it sees the paths it knows
// (/t/{slug}/api/v1/...) whatever the prefix. Its Location headers are
// relative to the handler: they lack the /identity prefix.
//
// An embedding program runs, beside its server, what the library needs
// running: a dispatcher (package delivery) that sends the webhooks and
// verification emails the API's changes queue, and the periodic sweep of
// expired idempotency records. Both stop when the program does; the queue
// is in the database, so what was not sent yet is sent after a restart.
//
// Usage:
//
//	embed [-db FILE] [-addr HOST:PORT]
//
// The database is a bbolt file (default embed.db). Create a workspace and a
// key in it with identityd first; only one process may hold the file at a
// time, so do it while embed is not running:
//
//	go run ./examples/identityd -db embed.db workspace create acme
//	KEY=$(go run ./examples/identityd -db embed.db key create -workspace acme -scopes users:read,users:write)
//	go run ./examples/embed -db embed.db &
//	curl -H "Authorization: Bearer $KEY" http://127.0.0.1:8080/identity/t/acme/api/v1/users
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/httpapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "embed:", err)
		}
		stop()
		os.Exit(1)
	}
}

// newMux is the program's whole HTTP surface: its own routes and the
// identity API under /identity/.
func newMux(svc *identity.Service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello from the host application")
	})
	// No method in the pattern: the API answers every method itself,
	// including 405 with Allow for a method a route does not take.
	mux.Handle("/identity/", http.StripPrefix("/identity", httpapi.New(svc, nil)))
	return mux
}

// run opens the database and serves until ctx ends, then shuts down
// gracefully. It logs the address it listens on to logOut.
func run(ctx context.Context, args []string, logOut io.Writer) (err error) {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(logOut)
	db := fs.String("db", "embed.db", "the bbolt database `FILE`")
	addr := fs.String("addr", "127.0.0.1:8080", "the `HOST:PORT` to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	slog.SetDefault(logger) // httpapi.New(svc, nil) logs requests to the default logger

	svc, err := identity.Open(*db, nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, svc.Close()) }()
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", *addr)
	if err != nil {
		return err
	}
	stopBackground, err := startBackground(ctx, svc, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopBackground() // after the server: requests may still queue jobs
	srv := &http.Server{
		Handler:           newMux(svc),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	logger.Info("listening", "addr", ln.Addr().String(), "db", *db)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// startBackground starts the dispatcher and the idempotency sweep. The
// function it returns stops both: attempts in flight finish (the attempt
// timeout bounds them) and are recorded.
func startBackground(ctx context.Context, svc *identity.Service, logger *slog.Logger) (stop func(), err error) {
	d, err := delivery.Start(context.WithoutCancel(ctx), svc, &delivery.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	sweepCtx, cancelSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		svc.SweepIdempotencyEvery(sweepCtx, 0, func(n int, err error) {
			logger.Info("idempotency sweep", "deleted", n, "err", err)
		})
	}()
	return func() {
		cancelSweep()
		<-swept
		d.Stop()
	}, nil
}
