package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// The tests in this file build identityd and run it as a process, to see
// what only a process shows: exit statuses, signals, the file lock held by
// another process, and durability across SIGKILL.

// raceEnabled is set by race_test.go when the tests run with -race.
var raceEnabled bool

var (
	binDir    string // removed by TestMain
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "identityd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// pgtest.Main starts a throwaway PostgreSQL server if a test needs
	// one (see package pgtest) and stops it when the tests end.
	code := pgtest.Main(m.Run)
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds identityd once for all the tests and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	skipShort(t)
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		binPath = filepath.Join(binDir, "identityd")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.CommandContext(ctx, "go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// shortSaid holds the tests that skipShort has logged for.
var shortSaid sync.Map

// skipShort skips, under -short, a test that builds and runs identityd,
// and says why. With CI=true it does not: CI must never pass without the
// tests of processes (the multi-process PostgreSQL ones among them), so
// there -short runs them all the same, and says so.
func skipShort(t *testing.T) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if os.Getenv("CI") == "true" {
		if _, said := shortSaid.LoadOrStore(t, true); !said {
			t.Log("-short would skip this test, which builds and runs identityd; CI=true, so it runs")
		}
		return
	}
	t.Skip("-short: skips the tests that build and run identityd (CI=true runs them even with -short)")
}

// process is identityd serve running as a child process.
type process struct {
	cmd  *exec.Cmd
	log  *testutil.SyncBuffer // standard output and error
	addr string
	base string
	done chan struct{} // closed when the process has exited
}

// startServe starts identityd serve on a free loopback port and waits until
// it has logged its address. The process is killed when the test ends, if
// it still runs.
func startServe(t *testing.T, db string) *process {
	t.Helper()
	return startServeWith(t, db, nil)
}

// startServeWith is startServe with extra environment variables and serve
// flags.
func startServeWith(t *testing.T, db string, env []string, flags ...string) *process {
	t.Helper()
	return startServeBinary(t, binary(t), db, env, flags...)
}

// startServeBinary is startServeWith with the identityd binary at bin.
func startServeBinary(t *testing.T, bin, db string, env []string, flags ...string) *process {
	t.Helper()
	p := &process{log: new(testutil.SyncBuffer), done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"-db", db, "serve", "-addr", "127.0.0.1:0"}, withoutConsole(flags)...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	p.addr = waitFor(t, p.log, listening, procWait)[1]
	p.base = "http://" + p.addr
	return p
}

// wait waits for the process to exit and returns its exit status, failing
// the test after timeout.
func (p *process) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("identityd did not exit within %v; log:\n%s", timeout, p.log)
		return -1
	}
}

// signal sends sig to the process.
func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// runBinary runs the binary to its end and returns what it printed.
func runBinary(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procWait)
	defer cancel()
	var stdout, stderr testutil.SyncBuffer
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatalf("identityd %s: %v", strings.Join(args, " "), err)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func TestBinaryCommandLine(t *testing.T) {
	db := filepath.Join(t.TempDir(), "identity.db")
	if r := runBinary(t, "-db", db, "workspace", "create", "acme"); r.code != exitOK {
		t.Fatalf("workspace create: exit %d, stderr %q", r.code, r.stderr)
	}
	r := runBinary(t, "-db", db, "key", "create", "-workspace", "acme", "-scopes", "users:read,users:write")
	if r.code != exitOK || !keyPattern.MatchString(r.stdout) {
		t.Errorf("key create: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"workspace", "create", "acme"}, exitError},
		{[]string{"workspace", "create", "Bad_Slug"}, exitError},
		{[]string{"key", "create", "-workspace", "acme", "-scopes", "users:everything"}, exitError},
		{[]string{"key", "create", "-workspace", "acme"}, exitUsage},
		{[]string{"frob"}, exitUsage},
		{nil, exitUsage},
	} {
		r := runBinary(t, append([]string{"-db", db}, tt.args...)...)
		if r.code != tt.code || r.stderr == "" || r.stdout != "" {
			t.Errorf("identityd %s: exit %d, stdout %q, stderr %q; want exit %d and a message on stderr",
				strings.Join(tt.args, " "), r.code, r.stdout, r.stderr, tt.code)
		}
	}
}

func TestBinaryDatabaseInUse(t *testing.T) {
	db, _ := newDB(t)
	// With its admin socket on, serve would run the command instead.
	startServeWith(t, db, nil, "-admin-socket=off")
	// It gives up after the lock timeout (boltstore's tests time it);
	// runBinary's bound catches one that would wait on.
	r := runBinary(t, "-db", db, "workspace", "create", "beta")
	want := "identityd: database " + db + " is in use by another process (is identityd serve running?)\n"
	if r.code != exitError || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", r.code, r.stderr, exitError, want)
	}
}

func TestSIGINTStopsGracefully(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)
	createUser(t, p.base, key, "ada")
	p.signal(t, os.Interrupt)
	if code := p.wait(t, procWait); code != exitOK {
		t.Fatalf("exit %d after SIGINT; log:\n%s", code, p.log)
	}
	assertUsers(t, db, "ada")
}

func TestSIGTERMFinishesRequestInFlight(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)
	createUser(t, p.base, key, "before")

	// Send the headers with Expect: 100-continue, and hold back the body.
	// The server answers 100 Continue once the handler reads the body: the
	// request is then in flight, and the signal comes.
	conn, err := net.DialTimeout("tcp", p.addr, procWait)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(procWait)); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(newUser("inflight"))
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("POST /t/acme/api/v1/users HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", p.addr, key, len(body))
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	replies := bufio.NewReader(conn)
	if cont, err := http.ReadResponse(replies, nil); err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("before the body: %v, %v; want 100 Continue", cont, err)
	}

	p.signal(t, syscall.SIGTERM)
	waitFor(t, p.log, regexp.MustCompile(`msg="shutting down"`), procWait)
	waitRefused(t, p.addr, procWait)
	// The listener is closed; the process must still wait for the request.
	// An identityd that did not would exit at once: it gets exitGrace to
	// show it. (On a slow machine it may not be caught; a correct one is
	// never failed.)
	select {
	case <-p.done:
		t.Fatalf("identityd exited with a request in flight; log:\n%s", p.log)
	case <-time.After(exitGrace):
	}

	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(replies, nil)
	if err != nil {
		t.Fatalf("reading the response of the request in flight: %v; log:\n%s", err, p.log)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("the request in flight got %d, want 201", resp.StatusCode)
	}
	if code := p.wait(t, procWait); code != exitOK {
		t.Fatalf("exit %d after SIGTERM; log:\n%s", code, p.log)
	}
	assertUsers(t, db, "before", "inflight")
}

// exitGrace is how long TestSIGTERMFinishesRequestInFlight gives an
// identityd that does not wait for a request in flight to exit. It bounds
// nothing that must happen.
const exitGrace = 300 * time.Millisecond

// waitRefused waits until the listener at addr is closed: a connection is
// refused (a dial that fails otherwise, or times out, proves nothing).
func waitRefused(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, timeout)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// Close at once: an open new connection would hold up Shutdown.
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s still accepts connections %v after the signal", addr, timeout)
}

// assertUsers checks that the database, reopened, holds exactly the users.
func assertUsers(t *testing.T, db string, usernames ...string) {
	t.Helper()
	ctx := context.Background()
	ws, err := openDB(t, db).GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	page, err := ws.ListUsers(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range page.Items {
		got = append(got, u.Username)
	}
	if strings.Join(got, ",") != strings.Join(usernames, ",") {
		t.Errorf("users after the restart: %v, want %v", got, usernames)
	}
}

// ack is a write that the server acknowledged: a user created (attr empty)
// or an attribute set.
type ack struct {
	userID        int64
	username      string
	attr, attrVal string
}

func TestSIGKILLKeepsAcknowledgedWrites(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)

	// Writers create users and set an attribute on each until the server
	// dies; it is killed while they are still writing, as soon as enough
	// writes are acknowledged.
	const enough = 100
	var (
		mu    sync.Mutex
		acks  []ack
		wg    sync.WaitGroup
		total = make(chan int, 1024)
	)
	record := func(a ack) {
		mu.Lock()
		defer mu.Unlock()
		acks = append(acks, a)
		select {
		case total <- len(acks):
		default: // the test has stopped counting
		}
	}
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				name := fmt.Sprintf("w%d-user%03d", w, i)
				id, err := tryCreateUser(p.base, key, name)
				if err != nil {
					return // the server is gone
				}
				record(ack{userID: id, username: name})
				value := fmt.Sprintf("value of %s", name)
				status, _, err := send(http.MethodPut, userURL(p.base, id)+"/attributes/n", key, map[string]string{"value": value})
				if err != nil || status != http.StatusNoContent {
					return
				}
				record(ack{userID: id, username: name, attr: "n", attrVal: value})
			}
		})
	}
	waitCount(t, total, enough, procWait)
	if err := p.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	p.wait(t, procWait)
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("identityd ended with %v, not by SIGKILL", p.cmd.ProcessState)
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes acknowledged before SIGKILL", len(acks))
	verifyAcks(t, db, acks)
}

// waitCount waits until a value of at least n arrives on counts.
func waitCount(t *testing.T, counts <-chan int, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case c := <-counts:
			if c >= n {
				return
			}
		case <-deadline:
			t.Fatalf("fewer than %d writes acknowledged within %v", n, timeout)
		}
	}
}

// verifyAcks reopens the database and checks every acknowledged write.
func verifyAcks(t *testing.T, db string, acks []ack) {
	t.Helper()
	ctx := context.Background()
	ws, err := openDB(t, db).GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acks {
		u, err := ws.GetUser(ctx, a.userID)
		if err != nil || u.Username != a.username {
			t.Errorf("acknowledged user %d (%s) after SIGKILL: %+v, %v", a.userID, a.username, u, err)
			continue
		}
		if a.attr == "" {
			continue
		}
		attrs, err := ws.ListAttributes(ctx, a.userID)
		if err != nil || attrs[a.attr] != a.attrVal {
			t.Errorf("acknowledged attribute %s of user %d after SIGKILL: %q, %v", a.attr, a.userID, attrs[a.attr], err)
		}
	}
}
