package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/internal/testutil"

	"github.com/identitylib/identity"
)

// keyPattern is the whole output of key create.
var keyPattern = regexp.MustCompile(`^idk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$`)

// listening finds the bound address in serve's log.
var listening = regexp.MustCompile(`msg=listening addr=(\S+)`)

// result is what one run of the command line produced.
type result struct {
	code           int
	stdout, stderr string
}

// procWait bounds every wait of these tests: for a command or a process
// to finish, a log line, a request, a delivery. Nothing is timed: a wait
// that runs out is a failure, however long the machine took, so the bound
// is far beyond what any wait needs on a loaded machine.
const procWait = 5 * time.Minute

// runCmd runs the command line in-process with a bounded context.
func runCmd(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procWait)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// mustRun runs the command line and fails the test unless it succeeds.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := runCmd(t, args...)
	if r.code != exitOK {
		t.Fatalf("identityd %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// newDB returns the path of a database in a fresh directory, with the
// workspace acme and a key carrying every scope.
func newDB(t *testing.T) (path, key string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "identity.db")
	mustRun(t, "-db", path, "workspace", "create", "acme")
	out := mustRun(t, "-db", path, "key", "create", "-workspace", "acme", "-scopes", allScopes())
	return path, strings.TrimSpace(out.stdout)
}

// allScopes returns every scope as -scopes takes them.
func allScopes() string {
	var s []string
	for _, scope := range identity.Scopes() {
		s = append(s, string(scope))
	}
	return strings.Join(s, ",")
}

// openDB opens the database in the test, closing it at the end.
func openDB(t *testing.T, path string) *identity.Service {
	t.Helper()
	svc, err := openService(path, nil)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// inAcme opens the database, passes fn the workspace acme and closes the
// database again, so that the next command may open it.
func inAcme(t *testing.T, db string, fn func(ctx context.Context, ws *identity.Workspace)) {
	t.Helper()
	svc, err := openService(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	ws, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	fn(ctx, ws)
}

// waitFor polls the log until re matches, and returns the match.
func waitFor(t *testing.T, log *testutil.SyncBuffer, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line matching %q within %v; log:\n%s", re, timeout, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// client is the HTTP client of the tests: every request is bounded.
var client = &http.Client{Timeout: procWait}

// send sends a request with the key (none if empty) and a JSON body (nil
// for none) and returns the status and the body. It does not touch t, so
// that any goroutine may use it.
func send(method, url, key string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	return resp.StatusCode, out, nil
}

// call is send for the test goroutine: a failure to get a response ends
// the test.
func call(t *testing.T, method, url, key string, body any) (int, []byte) {
	t.Helper()
	status, out, err := send(method, url, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, out
}

// newUser is the create body of a test user.
func newUser(name string) map[string]string {
	return map[string]string{
		"username": name,
		"email":    name + "@example.com",
		"fullName": "User " + name,
		"password": "correct horse battery",
	}
}

// createUser creates a user over HTTP and returns its id.
func createUser(t *testing.T, base, key, name string) int64 {
	t.Helper()
	id, err := tryCreateUser(base, key, name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// tryCreateUser creates a user over HTTP and returns its id once the
// server has acknowledged it with 201.
func tryCreateUser(base, key, name string) (int64, error) {
	status, body, err := send(http.MethodPost, base+"/t/acme/api/v1/users", key, newUser(name))
	if err != nil {
		return 0, err
	}
	if status != http.StatusCreated {
		return 0, fmt.Errorf("create user %s: status %d, body %s", name, status, body)
	}
	var u struct{ ID int64 }
	if err := json.Unmarshal(body, &u); err != nil || u.ID <= 0 {
		return 0, fmt.Errorf("create user %s: body %s: %v", name, body, err)
	}
	return u.ID, nil
}

// userURL is the address of a user of acme.
func userURL(base string, id int64) string {
	return fmt.Sprintf("%s/t/acme/api/v1/users/%d", base, id)
}
