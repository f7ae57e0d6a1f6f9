package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writes records each Write it is given.
type writes []string

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, string(p))
	return len(p), nil
}

// TestBatchedLog checks that access lines wait in the batch and are
// written in one write before any other line and when the batch is full.
// (The log has no flusher here: newBatchedLog's is tested below.)
func TestBatchedLog(t *testing.T) {
	var out writes
	l := &batchedLog{w: &out}
	l.Write([]byte("a1\n"))
	l.Write([]byte("a2\n"))
	if len(out) != 0 {
		t.Fatalf("batched lines written at once: %q", out)
	}
	l.Now().Write([]byte("e1\n"))
	if diff := cmp.Diff(writes{"a1\na2\n", "e1\n"}, out); diff != "" {
		t.Errorf("writes before an immediate line (-want +got):\n%s", diff)
	}

	// A full batch is written by the Write that fills it, not before.
	out = nil
	line := []byte(strings.Repeat("x", 1023) + "\n")
	for range accessLogBatch/len(line) - 1 {
		l.Write(line)
	}
	if len(out) != 0 {
		t.Fatalf("%d writes before the batch was full", len(out))
	}
	l.Write(line)
	if len(out) != 1 || len(out[0]) != accessLogBatch {
		t.Errorf("the write that fills the batch: %d writes, want one of %d bytes", len(out), accessLogBatch)
	}
	l.flush()
	if len(out) != 1 {
		t.Errorf("an empty batch was written: %d writes", len(out))
	}
}

// TestBatchedLogStop checks that stopping the flusher writes what waits.
func TestBatchedLogStop(t *testing.T) {
	var out writes
	l, stop := newBatchedLog(&out)
	l.Write([]byte("last\n"))
	stop()
	stop() // a second stop does nothing
	if diff := cmp.Diff(writes{"last\n"}, out); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestRequestLoggerSplitsLevels checks that the request logger batches
// Info lines and writes warnings and errors at once, and that without the
// access log it drops the Info lines.
func TestRequestLoggerSplitsLevels(t *testing.T) {
	var out writes
	l := &batchedLog{w: &out}
	logger := slog.New(slog.NewTextHandler(l.Now(), nil))
	req := requestLogger(logger, l, true)
	req.Info("http request", "status", 200)
	if len(out) != 0 {
		t.Errorf("an Info line was written at once: %q", out)
	}
	req.Warn("http request", "status", 503)
	if len(out) != 2 || !strings.Contains(out[0], "status=200") || !strings.Contains(out[1], "level=WARN") {
		t.Errorf("writes = %q, want the batched Info line, then the warning", out)
	}
	off := requestLogger(logger, l, false)
	off.Info("http request")
	l.flush()
	if len(out) != 2 {
		t.Errorf("-access-log=false wrote an Info line: %q", out)
	}
}
