package pgtest_test

import (
	"bufio"
	"bytes"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/store/pgstore/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m.Run)) }

// childEnv makes TestThrowawayGoesWithProcess, in the process it starts,
// start the throwaway server and wait to be killed.
const childEnv = "PGTEST_THROWAWAY_CHILD"

// TestThrowawayGoesWithProcess: a test process killed with SIGKILL, which
// runs no cleanup of its own, leaves neither its throwaway server nor the
// server's directory behind.
func TestThrowawayGoesWithProcess(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		u := pgtest.BaseURL(t)
		os.Stdout.WriteString("URL " + u + "\n")
		time.Sleep(time.Minute)
		return
	}
	if os.Getenv(pgtest.EnvURL) != "" {
		t.Skip(pgtest.EnvURL + " is set: the tests use that server, not a throwaway one")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThrowawayGoesWithProcess$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var base string
	var said []string
	for sc := bufio.NewScanner(out); base == "" && sc.Scan(); {
		said = append(said, sc.Text())
		if after, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			base = after
		}
	}
	if base == "" {
		if strings.Contains(strings.Join(said, "\n"), "--- SKIP") {
			t.Skip("PostgreSQL is not installed")
		}
		t.Fatalf("the child process started no server:\n%s", strings.Join(said, "\n"))
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	dir := u.Query().Get("host")
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}

	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, statErr := os.Stat(dir)
		gone := errors.Is(statErr, os.ErrNotExist)
		exited := !running(pid)
		if gone && exited {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("two minutes after the test process was killed: directory %s removed %v, postmaster %d exited %v",
				dir, gone, pid, exited)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether process pid runs. A zombie does not: the
// postmaster's parent is gone, and when init reaps orphans is up to init.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	_, after, _ := strings.Cut(string(b[bytes.LastIndexByte(b, ')')+1:]), " ")
	return !strings.HasPrefix(after, "Z")
}
