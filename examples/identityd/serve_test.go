package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/internal/testutil"
)

// serveInProcess runs serve through run until the test ends or stop is
// called, and returns the base URL, the log and stop, which cancels the
// context and returns the exit status.
//
// Unless flags say otherwise, serve runs without the console
// (-console=false), whose operator workspace would add to the workspaces,
// users and audit records a test counts; serveWithDefaults runs serve as
// a user would.
func serveInProcess(t *testing.T, db string, flags ...string) (base string, log *testutil.SyncBuffer, stop func() int) {
	t.Helper()
	return serveWithDefaults(t, db, withoutConsole(flags)...)
}

// withoutConsole returns serve's flags with -console=false added, unless
// they set -console.
func withoutConsole(flags []string) []string {
	for _, f := range flags {
		if f == "-console" || strings.HasPrefix(f, "-console=") {
			return flags
		}
	}
	return append([]string{"-console=false"}, flags...)
}

// serveWithDefaults is serveInProcess with serve's flags as given.
func serveWithDefaults(t *testing.T, db string, flags ...string) (base string, log *testutil.SyncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log = new(testutil.SyncBuffer)
	done := make(chan int, 1)
	args := append([]string{"-db", db, "serve", "-addr", "127.0.0.1:0"}, flags...)
	go func() { done <- run(ctx, args, new(testutil.SyncBuffer), log) }()
	addr := waitFor(t, log, listening, procWait)[1]
	stop = func() int {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(procWait):
			t.Fatalf("serve did not stop within %v; log:\n%s", procWait, log)
			return -1
		}
	}
	return "http://" + addr, log, stop
}

func TestServe(t *testing.T) {
	db, key := newDB(t)
	base, log, stop := serveInProcess(t, db)

	if status, body := call(t, http.MethodGet, base+"/healthz", "", nil); status != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("GET /healthz: %d %q", status, body)
	}
	if status, _ := call(t, http.MethodPost, base+"/healthz", "", nil); status != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d", status)
	}
	if status, _ := call(t, http.MethodGet, base+"/t/acme/api/v1/users", "", nil); status != http.StatusUnauthorized {
		t.Errorf("GET users without a key: %d, want 401", status)
	}

	id := createUser(t, base, key, "ada")
	status, body := call(t, http.MethodGet, userURL(base, id), key, nil)
	var u struct{ Username string }
	if status != http.StatusOK || json.Unmarshal(body, &u) != nil || u.Username != "ada" {
		t.Errorf("GET user: %d %s", status, body)
	}
	if status, body := call(t, http.MethodPut, userURL(base, id)+"/attributes/dept", key, map[string]string{"value": "math"}); status != http.StatusNoContent {
		t.Errorf("PUT attribute: %d %s", status, body)
	}

	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	for _, want := range []string{"msg=\"http request\"", "msg=\"shutting down\"", "msg=stopped"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log.String(), "no workspace yet") {
		t.Errorf("the log says there is no workspace, with acme in the database:\n%s", log)
	}
	if strings.Contains(log.String(), key) {
		t.Errorf("the log shows the api key:\n%s", log)
	}
	openDB(t, db) // the database was closed: it opens at once
}

// TestServeFirstStep: serve on a database without workspaces says, in one
// line, what to run next; the command it gives works while serve runs.
func TestServeFirstStep(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	_, log, stop := serveInProcess(t, db)
	line := waitFor(t, log, regexp.MustCompile(`msg="no workspace yet: create one with" command="identityd -db (\S+) workspace create SLUG"`), procWait)
	if line[1] != db {
		t.Errorf("the command names the database %q, want %q", line[1], db)
	}
	var stdout, stderr testutil.SyncBuffer
	if code := run(context.Background(), []string{"-db", line[1], "workspace", "create", "acme"}, &stdout, &stderr); code != exitOK {
		t.Errorf("the command it gives: exit %d, %s", code, stderr.String())
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	if n := strings.Count(log.String(), "no workspace yet"); n != 1 {
		t.Errorf("the hint is logged %d times, want once:\n%s", n, log)
	}
}

func TestServeWithoutAccessLog(t *testing.T) {
	db, key := newDB(t)
	base, log, stop := serveInProcess(t, db, "-access-log=false")
	createUser(t, base, key, "ada")
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	if strings.Contains(log.String(), "http request") {
		t.Errorf("-access-log=false logged requests:\n%s", log)
	}
}

func TestServeListenError(t *testing.T) {
	db, _ := newDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := runCmd(t, "-db", db, "serve", "-addr", ln.Addr().String())
	if r.code != exitError || !strings.Contains(r.stderr, "address already in use") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	openDB(t, db) // closed again after the failure
}
