package pgtest

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
)

// EnvBin is the environment variable that names the directory of
// PostgreSQL's server programs, initdb and postgres, for the throwaway
// server. Unset, it is the newest /usr/lib/postgresql/*/bin (Debian's
// layout) that has them, else the directory of initdb on PATH. Naming a
// directory without them, such as /nonexistent, makes the tests behave as
// on a machine without PostgreSQL: they skip.
const EnvBin = "IDENTITY_TEST_POSTGRES_BIN"

// errNotInstalled says that there are no server programs to start a
// throwaway server with: BaseURL skips the test.
var errNotInstalled = errors.New("PostgreSQL is not installed")

// errNoMain says that the test binary has PostgreSQL to start but would
// not stop it: without Main, the server would outlive the tests.
var errNoMain = errors.New("PostgreSQL is installed, but this package's TestMain does not call pgtest.Main, " +
	"which starts and stops a throwaway server: call it, or set " + EnvURL)

// underMain is set while Main runs the tests: only then may BaseURL start
// a server, since only Main stops it.
var underMain atomic.Bool

// skipped counts the tests that skipped for want of PostgreSQL, for the
// line Main prints.
var skipped atomic.Int64

// server is the throwaway server of this test binary: started by the
// first test that needs it, once, and stopped by Main.
var server struct {
	mu   sync.Mutex
	done bool // a start was tried (c or err is set), or Main has ended
	c    *cluster
	err  error
}

// Main runs a test binary's tests through run and returns its exit code,
// for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m.Run)) }
//
// run is m.Run, or a function that calls it and then cleans up what
// needs the server (dropping schemas that outlive one test), since Main
// stops the server once run returns.
//
// While run runs, BaseURL may start a throwaway server (see the package
// documentation), at most once. When run returns (or panics in the
// goroutine of TestMain), Main stops the server and removes its
// directory. If the process dies instead (a panicking test, a timeout, a
// signal), the server goes all the same: it gets SIGQUIT, PostgreSQL's
// immediate shutdown, from the kernel when the process ends, and a small
// shell process that outlives the test binary removes the directory once
// the server is gone.
//
// Without PostgreSQL, if tests skipped for want of it, Main prints one
// line that says how many and what to install or set, where a developer
// sees it: go test shows a passing package's output only with -v, so
// without -v the line goes to the terminal, when there is one.
func Main(run func() int) (code int) {
	underMain.Store(true)
	defer func() {
		underMain.Store(false)
		if err := stopThrowaway(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	code = run()
	if n := skipped.Load(); n > 0 {
		tests := "tests"
		if n == 1 {
			tests = "test"
		}
		announce(fmt.Sprintf("%s: %d PostgreSQL %s skipped: %s", testedPackage(), n, tests, installHint))
	}
	return code
}

// throwaway returns the URL of the throwaway server, starting it if no
// test has yet, or the error of starting it.
func throwaway() (string, error) {
	server.mu.Lock()
	defer server.mu.Unlock()
	if !server.done {
		server.done = true
		server.c, server.err = startThrowaway()
	}
	if server.err != nil {
		return "", server.err
	}
	return server.c.url, nil
}

// stopThrowaway stops the throwaway server, if it was started, and keeps
// it from being started again.
func stopThrowaway() error {
	server.mu.Lock()
	defer server.mu.Unlock()
	c := server.c
	server.done, server.c = true, nil
	server.err = errors.New("the throwaway PostgreSQL server is stopped: pgtest.Main has returned")
	if c == nil {
		return nil
	}
	return c.stop()
}

// testedPackage returns the import path of the package under test, which
// names the test binary's main package with a ".test" suffix.
func testedPackage() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		return strings.TrimSuffix(bi.Path, ".test")
	}
	return "pgtest"
}
