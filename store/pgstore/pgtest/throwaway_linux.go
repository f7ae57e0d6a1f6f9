package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// installHint says what gives the tests a server.
const installHint = "install PostgreSQL (Debian: apt-get install postgresql) for a throwaway server, or set " + EnvURL

const (
	// startTimeout bounds initdb and the server's start, each.
	startTimeout = 60 * time.Second
	// stopTimeout bounds the server's immediate shutdown before it is
	// killed.
	stopTimeout = 30 * time.Second
)

// cluster is a throwaway PostgreSQL server: a cluster in dir/data whose
// postmaster listens on a Unix socket in dir.
type cluster struct {
	dir string
	url string
	// postmaster is nil until it has started; exited is closed when it
	// has exited and been waited for.
	postmaster *os.Process
	exited     chan struct{}
	// reaper removes dir if the test process dies; guard is the write
	// end of its standard input, which it reads to the end.
	reaper *exec.Cmd
	guard  *os.File
}

// reaperScript removes the cluster's directory ($1) once the test process
// and then the postmaster are gone. It reads its standard input, a pipe
// whose only writer is the test process, to the end, which comes when
// that process exits however it exits: the kernel closes the descriptors
// of a killed process too. By then the postmaster has had its
// parent-death signal; the script gives it time to shut down (it removes
// postmaster.pid as it goes) before removing what is left, and does not
// signal it itself, so that a reused process ID is never at risk. Were
// the postmaster still running, the directory's removal would stop it
// too: PostgreSQL checks its lock file every minute and shuts down when
// the file has gone.
const reaperScript = `cat >/dev/null
pidfile="$1/data/postmaster.pid"
if [ -f "$pidfile" ] && read -r pid <"$pidfile"; then
	n=0
	while [ "$n" -lt 300 ] && [ -f "$pidfile" ] && kill -0 "$pid" 2>/dev/null; do
		n=$((n+1))
		sleep 0.1
	done
fi
rm -rf "$1" 2>/dev/null || { sleep 1; rm -rf "$1"; }
`

// startThrowaway starts a throwaway server with the server programs of
// serverBin.
func startThrowaway() (*cluster, error) {
	bin := serverBin()
	if bin == "" {
		return nil, errNotInstalled
	}
	if !underMain.Load() {
		return nil, errNoMain
	}
	c, err := startCluster(bin)
	if err != nil {
		return nil, fmt.Errorf("starting a throwaway PostgreSQL server with %s: %w", bin, err)
	}
	return c, nil
}

// serverBin returns the directory of the server programs: that of EnvBin,
// else the newest of Debian's, else that of initdb on PATH; or "".
func serverBin() string {
	if dir := os.Getenv(EnvBin); dir != "" {
		if hasServer(dir) {
			return dir
		}
		return ""
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// The version directories are numbers, 9.6 before 10: sort them as such.
	version := func(dir string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int {
		va, vb := version(a), version(b)
		switch {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil && hasServer(filepath.Dir(initdb)) {
		return filepath.Dir(initdb)
	}
	return ""
}

// hasServer reports whether dir holds the server programs; the client
// package alone installs a bin directory without them.
func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// startCluster makes a cluster in a new temporary directory and starts
// its server, as .ci/run does: trust authentication, a Unix socket in the
// directory and no TCP port, the server's defaults otherwise (fsync
// included). As root it runs PostgreSQL's programs as the postgres user,
// since PostgreSQL refuses to run as root.
func startCluster(bin string) (_ *cluster, err error) {
	// As root: what runuser -u postgres does, switching to that user, but
	// without a runuser process in between, since the postmaster must be
	// this process's child for its parent-death signal. The empty Groups
	// drops root's supplementary groups.
	var cred *syscall.Credential
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	// Each program has a session of its own, so that the terminal's
	// signals (^C) go to the test process alone: the server ends when
	// that process does, and the reaper after it.
	attr := func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{Setsid: true, Credential: cred}
	}

	dir, err := os.MkdirTemp("", "identity-pgtest-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	if uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := c.startReaper(attr()); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()

	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = attr()
	// initdb ends with the test process: the reaper removes what it made.
	initdb.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// A killed initdb's backend may hold its output open a moment longer.
	initdb.WaitDelay = time.Second
	var out bytes.Buffer
	initdb.Stdout, initdb.Stderr = &out, &out
	if err := initdb.Start(); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(startTimeout, func() { initdb.Process.Kill() })
	err = initdb.Wait()
	timer.Stop()
	if err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out.Bytes())
	}

	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the postmaster has its own descriptor
	// The port only names the socket, since there is no TCP listener; it
	// is set, here and in the URL, so that a PGPORT in the environment
	// changes neither.
	postgres := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-c", "listen_addresses=", "-c", "unix_socket_directories="+dir,
		"-c", "port=5432", "-c", "max_connections=300")
	postgres.Dir = dir
	postgres.Stdout, postgres.Stderr = logFile, logFile
	postgres.SysProcAttr = attr()
	// SIGQUIT is PostgreSQL's immediate shutdown: the postmaster stops
	// its backends, frees its shared memory and exits. The kernel sends
	// it when the thread that started the postmaster ends, as all do
	// when the process ends; so that thread is kept for the goroutine
	// that waits for the postmaster, lest the runtime end it while the
	// tests run, should another goroutine lock it and exit.
	postgres.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	c.exited = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := postgres.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		postgres.Wait()
		close(c.exited)
	}()
	if err := <-started; err != nil {
		c.exited = nil
		return nil, err
	}
	c.postmaster = postgres.Process

	if err := c.waitReady(startTimeout); err != nil {
		logText, _ := os.ReadFile(logFile.Name())
		return nil, fmt.Errorf("%v\n%s", err, logText)
	}
	c.url = "postgres:///postgres?" + url.Values{
		"host":    {dir},
		"port":    {"5432"},
		"user":    {"postgres"},
		"sslmode": {"disable"},
	}.Encode()
	return c, nil
}

// startReaper starts the shell process that removes the directory if the
// test process dies (see reaperScript). It outlives the test process, so
// it has no parent-death signal.
func (c *cluster) startReaper(attr *syscall.SysProcAttr) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// Named so that ps shows whose it is.
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "identity-pgtest-reaper", c.dir)
	cmd.Dir = "/"
	cmd.Stdin = r
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("starting the cleanup process: %w", err)
	}
	c.reaper, c.guard = cmd, w
	return nil
}

// waitReady waits until the postmaster accepts connections, as pg_ctl -w
// does: until the status line of postmaster.pid says "ready".
func (c *cluster) waitReady(timeout time.Duration) error {
	pidfile := filepath.Join(c.dir, "data", "postmaster.pid")
	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(pidfile); err == nil {
			// The eighth line is the status (PostgreSQL 10 and later).
			if lines := strings.Split(string(b), "\n"); len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				return nil
			}
		}
		select {
		case <-c.exited:
			return errors.New("postgres exited before accepting connections")
		case <-deadline:
			return fmt.Errorf("postgres did not accept connections within %v", timeout)
		case <-tick.C:
		}
	}
}

// stop shuts the server down and removes the directory, then lets the
// reaper, which finds nothing left to do, exit.
func (c *cluster) stop() error {
	var errs []error
	if c.postmaster != nil {
		c.postmaster.Signal(syscall.SIGQUIT)
		select {
		case <-c.exited:
		case <-time.After(stopTimeout):
			errs = append(errs, fmt.Errorf("postgres did not shut down within %v: killed", stopTimeout))
			c.postmaster.Kill()
			<-c.exited
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	c.guard.Close()
	c.reaper.Wait()
	return errors.Join(errs...)
}

// announce writes line where a developer sees it. go test shows the
// output of a passing package only with -v, so without -v, the line goes
// to the terminal, when the tests run in its foreground; else to standard
// error, which go test shows with -v, in a package's directory, and when
// the package fails.
func announce(line string) {
	if !testing.Verbose() {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY|syscall.O_NOCTTY, 0); err == nil {
			defer tty.Close()
			if foreground(tty) {
				fmt.Fprintln(tty, line)
				return
			}
		}
	}
	fmt.Fprintln(os.Stderr, line)
}

// foreground reports whether this process is in the foreground process
// group of the terminal tty: writing to it from the background could
// stop the process (SIGTTOU) or print amid another program's output.
func foreground(tty *os.File) bool {
	var pgrp int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	return errno == 0 && int(pgrp) == syscall.Getpgrp()
}
