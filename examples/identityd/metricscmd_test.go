package main

import (
	"strings"
	"testing"
)

// TestMetricsCommand: identityd metrics prints the running server's
// metrics through the admin socket, in the text format a Prometheus
// parser reads, with the server's own counts; without a server it says
// there are none.
func TestMetricsCommand(t *testing.T) {
	db, key := newDB(t)
	r := runCmd(t, "-db", db, "metrics")
	if r.code != exitError || !strings.Contains(r.stderr, "start identityd serve") {
		t.Errorf("without a server: exit %d, stderr %q", r.code, r.stderr)
	}
	p := startServe(t, db)
	createUser(t, p.base, key, "ada")
	got := parseExposition(t, mustRun(t, "-db", db, "metrics").stdout)
	const created = `identity_http_requests_total{method="POST",route="/t/:slug/api/v1/users",status="201"}`
	if got[created] != 1 {
		t.Errorf("%s = %v, want 1", created, got[created])
	}
}
