package main

import (
	"context"
	"errors"
	"flag"
)

// errNoServerMetrics is the answer of identityd metrics without a server.
var errNoServerMetrics = errors.New("identityd metrics prints a running server's metrics through its admin socket: start identityd serve (or scrape its -metrics-addr)")

// metricsCommand prints the metrics of the server that holds the
// database, in the Prometheus text format, through its admin socket:
// identityd metrics. Metrics belong to a running server, so without one
// there are none to print.
func metricsCommand(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if _, err := parseCommand(fs, args, nil); err != nil {
		return err
	}
	if e.server == nil || e.server.writeMetrics == nil {
		return errNoServerMetrics
	}
	return e.server.writeMetrics(e.stdout)
}
