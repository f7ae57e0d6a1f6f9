package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
)

// serve -audit-log: the lines of the records as they commit, and what
// happens to them when the file does not keep up.

// waitLines waits until read returns at least n lines, and returns them.
func waitLines(t *testing.T, what string, read func() string, n int) string {
	t.Helper()
	deadline := time.Now().Add(procWait)
	for {
		s := read()
		if strings.Count(s, "\n") >= n {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d lines after %v, want %d:\n%s", what, strings.Count(s, "\n"), procWait, n, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// decodeAuditLines decodes lines of the audit log, each of which must be
// a record with every field it has known.
func decodeAuditLines(t *testing.T, s string) []identity.AuditRecord {
	t.Helper()
	var out []identity.AuditRecord
	for line := range strings.Lines(s) {
		var r identity.AuditRecord
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || r.ID == "" {
			t.Fatalf("not a record: %q (%v)", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestServeAuditLog: each record is a line of the file as soon as its
// request has committed, in commit order, and the file holds what audit
// export gives of the time serve ran, line for line.
func TestServeAuditLog(t *testing.T) {
	db, key := newDB(t)
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	base, log, stop := serveInProcess(t, db, "-audit-log", file)
	read := func() string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the audit log: %v, %v; want mode 0600", fi, err)
	}
	for i, name := range []string{"ada", "grace", "alan"} {
		createUser(t, base, key, name)
		waitLines(t, "the audit log", read, i+1)
	}
	mustRun(t, "-db", db, "role", "create", "-workspace", "acme", "admin") // through the admin socket
	waitLines(t, "the audit log", read, 4)
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}

	got := read()
	var actions []identity.AuditAction
	for _, r := range decodeAuditLines(t, got) {
		actions = append(actions, r.Action)
	}
	want := []identity.AuditAction{identity.AuditUserCreated, identity.AuditUserCreated, identity.AuditUserCreated, identity.AuditRoleCreated}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("the actions of the audit log (-want +got):\n%s", diff)
	}
	trail := auditTrail(t, db)
	if diff := cmp.Diff(auditLines(t, trail[2:]), got); diff != "" { // after workspace create and key create
		t.Errorf("the audit log differs from the trail serve wrote (-trail +log):\n%s", diff)
	}

	// A second server appends to the file.
	base, log, stop = serveInProcess(t, db, "-audit-log", file)
	createUser(t, base, key, "edsger")
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	trail = auditTrail(t, db)
	if diff := cmp.Diff(auditLines(t, trail[2:]), read()); diff != "" {
		t.Errorf("the audit log after a second server (-trail +log):\n%s", diff)
	}
}

// TestServeAuditLogStdout: -audit-log - writes the lines to standard
// output, and nothing else goes there.
func TestServeAuditLogStdout(t *testing.T) {
	db, key := newDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, log testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-db", db, "serve", "-addr", "127.0.0.1:0", "-console=false", "-audit-log", "-"}, &stdout, &log)
	}()
	base := "http://" + waitFor(t, &log, listening, procWait)[1]
	createUser(t, base, key, "ada")
	waitLines(t, "standard output", stdout.String, 1)
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log.String())
	}
	if diff := cmp.Diff(auditLines(t, auditTrail(t, db)[2:]), stdout.String()); diff != "" {
		t.Errorf("standard output differs from the trail serve wrote (-trail +stdout):\n%s", diff)
	}
}

func TestServeAuditLogRefused(t *testing.T) {
	db, _ := newDB(t)
	for _, tt := range []struct {
		file, stderr string
	}{
		{db, "identityd: -audit-log " + db + " is the database itself: give another file\n"},
		{filepath.Join(t.TempDir(), "missing", "audit.jsonl"), "no such file or directory"},
	} {
		r := runCmd(t, "-db", db, "serve", "-addr", "127.0.0.1:0", "-console=false", "-audit-log", tt.file)
		if r.code != exitError || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("-audit-log %s: exit %d, stderr:\n%s\nwant exit %d and %q", tt.file, r.code, r.stderr, exitError, tt.stderr)
		}
	}
	openDB(t, db) // closed again after the failure
}

// fSetPipeSize is Linux's F_SETPIPE_SZ.
const fSetPipeSize = 1031

// TestServeAuditLogBlocked: the audit log is a pipe that nobody reads. The
// requests go on all the same; the records the pipe and the buffer cannot
// hold are dropped, and once the pipe is read again, lines say how many,
// and when they were written: every record the server committed is a line
// or counted in one, within its times.
func TestServeAuditLogBlocked(t *testing.T) {
	defer func(n int) { auditSinkBuffer = n }(auditSinkBuffer)
	auditSinkBuffer = 4
	db, key := newDB(t)
	fifo := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened for reading first, so that serve's open for writing does not
	// wait; not read until the requests are done.
	pipe, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, pipe.Fd(), fSetPipeSize, 4096); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno)
	}
	base, log, stop := serveInProcess(t, db, "-audit-log", fifo)

	const requests = 300
	within(t, fmt.Sprintf("%d requests while nobody reads the audit log", requests), func() {
		for i := range requests {
			status, body, err := send(http.MethodPost, base+"/t/acme/api/v1/roles", key, map[string]string{"name": fmt.Sprintf("role%03d", i)})
			if err != nil || status != http.StatusCreated {
				t.Errorf("POST roles: %d %s %v", status, body, err)
				return
			}
		}
	})
	read := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(pipe) // until serve closes its end
		read <- b
	}()
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	out := <-read

	trail := auditTrail(t, db)[2:] // after workspace create and key create
	if len(trail) != requests {
		t.Fatalf("the trail has %d records of the server, want %d", len(trail), requests)
	}
	type dropped struct {
		Dropped      int
		Since, Until time.Time
	}
	var lines []string
	var drops []dropped
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, `{"dropped":`) {
			var d dropped
			if err := json.Unmarshal([]byte(line), &d); err != nil || d.Dropped < 1 || !d.Since.Before(d.Until) {
				t.Fatalf("a malformed drop line %q: %v", line, err)
			}
			drops = append(drops, d)
			continue
		}
		lines = append(lines, line)
	}
	if len(drops) == 0 {
		t.Fatalf("no drop line in the %d lines read", len(lines))
	}
	// The lines written are the trail's, in its order, without those
	// dropped; each one dropped lies within a drop line's times.
	var missing []identity.AuditRecord
	next := 0
	for _, r := range trail {
		want, err := appendAuditLine(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		if next < len(lines) && lines[next] == string(want) {
			next++
			continue
		}
		missing = append(missing, r)
	}
	if next != len(lines) {
		t.Fatalf("line %d of the audit log is not the next record of the trail:\n%s", next+1, lines[next])
	}
	total := 0
	for _, d := range drops {
		total += d.Dropped
	}
	if total != len(missing) {
		t.Errorf("the drop lines count %d records, and %d are missing", total, len(missing))
	}
	for _, r := range missing {
		covered := false
		for _, d := range drops {
			covered = covered || !r.Time.Before(d.Since) && r.Time.Before(d.Until)
		}
		if !covered {
			t.Errorf("the record %s of %v is missing, and within no drop line's times", r.ID, r.Time)
		}
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		t.Errorf("the audit log ends with a partial line")
	}
	t.Logf("%d records written, %d dropped in %d drop lines", len(lines), total, len(drops))
}
