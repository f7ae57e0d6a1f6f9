package main

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
)

// The sink of serve -audit-log, on writers that the tests control: one
// that holds a write until told, one that fails.

// sinkRecord is the record i of these tests, written at t0 + i ms.
func sinkRecord(i int) identity.AuditRecord {
	return identity.AuditRecord{
		ID:        strings.Repeat("0", 31) + string(rune('a'+i)),
		Time:      sinkT0.Add(time.Duration(i) * time.Millisecond),
		Workspace: "acme",
		Actor:     identity.Actor{Kind: identity.ActorOperator, ID: "1000", Display: "ops"},
		Action:    identity.AuditRoleCreated,
		Target:    identity.AuditTarget{Kind: identity.TargetRole, ID: "1", Display: "admin"},
		Outcome:   identity.OutcomeSuccess,
	}
}

var sinkT0 = time.Date(2026, 11, 27, 18, 2, 11, 0, time.UTC)

// sinkLine is the line the sink writes for sinkRecord(i).
func sinkLine(t *testing.T, i int) string {
	t.Helper()
	b, err := appendAuditLine(nil, sinkRecord(i))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// heldWriter holds each write until release is called, after telling
// entered that a write waits.
type heldWriter struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	out     strings.Builder
}

func newHeldWriter() *heldWriter {
	return &heldWriter{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (w *heldWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

func (w *heldWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// within runs fn and fails the test if it has not returned within
// procWait: for calls that must never wait on the sink's writer.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(procWait):
		t.Fatalf("%s did not return within %v", what, procWait)
	}
}

// TestAuditSinkLines: every record becomes its line, in the order given,
// and close writes what waits.
func TestAuditSinkLines(t *testing.T) {
	var out testutil.SyncBuffer
	s := newAuditSink(&out, nil, "test", 100, slog.New(slog.DiscardHandler))
	var want string
	for i := range 50 {
		s.Audit(sinkRecord(i))
		want += sinkLine(t, i)
	}
	if err := s.close(procWait); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("the lines (-want +got):\n%s", diff)
	}
}

// TestAuditSinkFull: while the writer is held, the sink takes what its
// buffer holds and drops the rest, at once; once the writer goes on, one
// line says how many were dropped and when they were written, before the
// lines that waited.
func TestAuditSinkFull(t *testing.T) {
	w := newHeldWriter()
	s := newAuditSink(w, nil, "test", 2, slog.New(slog.DiscardHandler))
	s.Audit(sinkRecord(0))
	<-w.entered // the writer holds record 0's line
	within(t, "Audit with a full buffer", func() {
		for i := 1; i <= 6; i++ {
			s.Audit(sinkRecord(i)) // 1 and 2 wait; 3, 4, 5 and 6 are dropped
		}
	})
	close(w.release)
	if err := s.close(procWait); err != nil {
		t.Fatal(err)
	}
	want := sinkLine(t, 0) +
		`{"dropped":4,"since":"2026-11-27T18:02:11.003Z","until":"2026-11-27T18:02:11.006001Z"}` + "\n" +
		sinkLine(t, 1) + sinkLine(t, 2)
	if diff := cmp.Diff(want, w.String()); diff != "" {
		t.Errorf("the lines (-want +got):\n%s", diff)
	}
}

// TestAuditSinkDropReportedAtOnce: records dropped while the writer was
// held are reported as soon as it goes on, with no record after them and
// before close.
func TestAuditSinkDropReportedAtOnce(t *testing.T) {
	w := newHeldWriter()
	s := newAuditSink(w, nil, "test", 1, slog.New(slog.DiscardHandler))
	s.Audit(sinkRecord(0))
	<-w.entered
	s.Audit(sinkRecord(1)) // waits
	s.Audit(sinkRecord(2)) // dropped
	close(w.release)
	want := sinkLine(t, 0) + `{"dropped":1,"since":"2026-11-27T18:02:11.002Z","until":"2026-11-27T18:02:11.002001Z"}` + "\n" + sinkLine(t, 1)
	deadline := time.Now().Add(procWait)
	for w.String() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the lines, before close:\n%s\nwant:\n%s", w.String(), want)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.close(procWait); err != nil {
		t.Fatal(err)
	}
	if w.String() != want {
		t.Errorf("close wrote more:\n%s", w.String())
	}
}

// failingWriter fails the writes while fail is set, after writing the
// first partial bytes of each.
type failingWriter struct {
	mu      sync.Mutex
	fail    bool
	partial int
	writes  chan struct{}
	out     strings.Builder
}

func (w *failingWriter) Write(p []byte) (int, error) {
	defer func() { w.writes <- struct{}{} }()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail {
		n := min(w.partial, len(p))
		w.out.Write(p[:n])
		return n, errors.New("no space left on device")
	}
	return w.out.Write(p)
}

func (w *failingWriter) set(fail bool, partial int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fail, w.partial = fail, partial
}

func (w *failingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// TestAuditSinkWriteErrors: the lines of a failed write are dropped and
// counted, the failure is logged at most once a minute, a line cut short
// is ended, and the next write that succeeds reports the drops first.
func TestAuditSinkWriteErrors(t *testing.T) {
	w := &failingWriter{writes: make(chan struct{}, 100)}
	var log testutil.SyncBuffer
	s := newAuditSink(w, nil, "audit.jsonl", 100, slog.New(slog.NewTextHandler(&log, nil)))
	clock := testutil.NewClock(sinkT0)
	s.now = clock.Now // set before the first record: the writer reads it only then

	w.set(true, 0)
	for i, advance := range []time.Duration{0, 30 * time.Second, 31 * time.Second} {
		clock.Advance(advance)
		s.Audit(sinkRecord(i))
		<-w.writes
	}
	w.set(true, 10) // the next write cuts its line after 10 bytes
	s.Audit(sinkRecord(3))
	<-w.writes
	w.set(false, 0)
	s.Audit(sinkRecord(4))
	<-w.writes
	w.set(true, len(sinkLine(t, 5))) // fails after writing the whole line
	s.Audit(sinkRecord(5))
	<-w.writes
	w.set(false, 0)
	s.Audit(sinkRecord(6))
	<-w.writes
	if err := s.close(procWait); err != nil {
		t.Fatal(err)
	}

	want := `{"dropped"` + "\n" + // the 10 bytes of the cut write: of its drop line
		`{"dropped":4,"since":"2026-11-27T18:02:11Z","until":"2026-11-27T18:02:11.003001Z"}` + "\n" +
		sinkLine(t, 4) +
		sinkLine(t, 5) + sinkLine(t, 6) // a line written whole is not dropped, nor followed by an empty one
	if diff := cmp.Diff(want, w.String()); diff != "" {
		t.Errorf("the lines (-want +got):\n%s", diff)
	}
	// Failures at 0 s (logged), 30 s (not: within the minute), 61 s
	// (logged) and 61 s twice again (not).
	if n := strings.Count(log.String(), "audit log: writing failed"); n != 2 {
		t.Errorf("the failure was logged %d times, want 2:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), `file=audit.jsonl err="no space left on device"`) {
		t.Errorf("the log does not name the file and the error:\n%s", log.String())
	}
}

// TestAuditSinkCloseBlocked: close gives a writer that a pipe's reader
// holds up its time, then closes the pipe, which ends the write, and says
// that records were lost.
func TestAuditSinkCloseBlocked(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := newAuditSink(pw, pw, "pipe", 10, slog.New(slog.DiscardHandler))
	// More than a pipe holds, so the writer waits for a reader that never
	// reads.
	big := sinkRecord(0)
	big.Changes = map[string]identity.AuditChange{"description": {After: strings.Repeat("x", 1<<20)}}
	s.Audit(big)
	s.Audit(sinkRecord(1))
	var cerr error
	within(t, "close", func() { cerr = s.close(10 * time.Millisecond) })
	if cerr == nil || !strings.Contains(cerr.Error(), "did not finish") {
		t.Errorf("close: %v, want an error saying the writer did not finish", cerr)
	}
	select {
	case <-s.done:
	case <-time.After(procWait):
		t.Fatal("the writer still runs after its pipe was closed")
	}
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
}
