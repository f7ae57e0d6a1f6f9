package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestPostgres runs the admin commands and serve against a PostgreSQL
// URL, all at once: unlike a bbolt file, the database is not held by one
// process.
func TestPostgres(t *testing.T) {
	db := pgtest.URL(t)
	mustRun(t, "-db", db, "workspace", "create", "acme")
	base, log, stop := serveInProcess(t, db)
	key := strings.TrimSpace(mustRun(t, "-db", db, "key", "create", "-workspace", "acme", "-scopes", allScopes()).stdout)
	if !keyPattern.MatchString(key + "\n") {
		t.Fatalf("key create printed %q", key)
	}
	id := createUser(t, base, key, "ada")
	if status, body := call(t, http.MethodGet, userURL(base, id), key, nil); status != http.StatusOK {
		t.Errorf("GET user: %d %s", status, body)
	}
	if r := mustRun(t, "-db", db, "workspace", "list"); !strings.Contains(r.stdout, "acme ") {
		t.Errorf("workspace list while serve runs:\n%s", r.stdout)
	}
	if code := stop(); code != exitOK {
		t.Errorf("serve exited %d; log:\n%s", code, log)
	}
}

func TestDBName(t *testing.T) {
	for _, c := range []struct{ db, want string }{
		{"identity.db", "identity.db"},
		{"/var/lib/id/identity.db", "/var/lib/id/identity.db"},
		{"postgres://id:s3cret@db.example.com/identity", "postgres://id:xxxxx@db.example.com/identity"},
		{"postgresql://db.example.com/identity?password=s3cret&sslmode=require", "postgresql://db.example.com/identity?password=xxxxx&sslmode=require"},
		{"postgres://id@db/identity?host=/run/pg", "postgres://id@db/identity?host=/run/pg"},
		{"postgres://id:s3cret@[::1", "(a PostgreSQL URL that does not parse)"},
	} {
		e := &env{dbPath: c.db}
		if got := e.dbName(); got != c.want {
			t.Errorf("dbName(%q) = %q, want %q", c.db, got, c.want)
		}
	}
}
