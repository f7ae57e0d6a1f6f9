package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestPostgresKeyCacheTTL checks -key-cache-ttl across two processes on
// one PostgreSQL database: a key that process B revokes is refused at
// once by a process without the flag (PostgreSQL's default: no cache),
// and still accepted, within the TTL (an hour, which this test never
// waits out), by a process that verified it before with the flag.
func TestPostgresKeyCacheTTL(t *testing.T) {
	url, _ := pgDB(t)
	out := mustRun(t, "-db", url, "key", "create", "-workspace", "acme", "-scopes", "users:read", "-name", "cached")
	key := strings.TrimSpace(out.stdout)
	id := strings.Split(key, "_")[1] // idk_<id>_<secret>
	cached := startServeWith(t, url, nil, "-access-log=false", "-key-cache-ttl", "1h")
	uncached := startServeWith(t, url, nil, "-access-log=false")
	list := func(p *process) int {
		status, _ := call(t, http.MethodGet, p.base+"/t/acme/api/v1/users", key, nil)
		return status
	}
	for _, p := range []*process{cached, uncached} {
		if status := list(p); status != http.StatusOK {
			t.Fatalf("before the revocation: %d", status)
		}
	}
	mustRun(t, "-db", url, "key", "revoke", "-workspace", "acme", id)
	if status := list(uncached); status != http.StatusUnauthorized {
		t.Errorf("without -key-cache-ttl, a revoked key: %d, want 401", status)
	}
	if status := list(cached); status != http.StatusOK {
		t.Errorf("with -key-cache-ttl 1h, a key verified before another process revoked it: %d, want 200 (cached)", status)
	}
}
