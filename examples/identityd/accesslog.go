package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// The access log writes one line per request, and writing each with its
// own write(2) cost about a tenth of the server's CPU under load. So its
// lines wait in a batch that is written when accessLogBatch bytes are
// waiting, every accessLogFlush, before any other line (so the log keeps
// its order) and when serve stops. A crash loses at most the request
// lines of the last accessLogFlush; warnings and errors are written at
// once.
const (
	accessLogFlush = 100 * time.Millisecond
	accessLogBatch = 64 << 10
)

// batchedLog is the writer of the access log's lines: its writes wait in
// the batch. Now returns the writer of every other line.
type batchedLog struct {
	mu    sync.Mutex
	w     io.Writer
	batch []byte
}

// newBatchedLog returns a batchedLog that writes to w, and starts the
// flusher that stop ends (writing what waits).
func newBatchedLog(w io.Writer) (l *batchedLog, stop func()) {
	l = &batchedLog{w: w, batch: make([]byte, 0, accessLogBatch)}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(accessLogFlush)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				l.flush()
			case <-done:
				l.flush()
				return
			}
		}
	}()
	var once sync.Once
	return l, func() {
		once.Do(func() { close(done); <-stopped })
	}
}

// Write adds p to the batch, writing the batch when it is full.
func (l *batchedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batch = append(l.batch, p...)
	if len(l.batch) >= accessLogBatch {
		return len(p), l.flushLocked()
	}
	return len(p), nil
}

// flush writes what waits.
func (l *batchedLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked() // a log that cannot be written has nowhere to say so
}

func (l *batchedLog) flushLocked() error {
	if len(l.batch) == 0 {
		return nil
	}
	_, err := l.w.Write(l.batch)
	l.batch = l.batch[:0]
	return err
}

// Now returns a writer that writes at once, after what waits.
func (l *batchedLog) Now() io.Writer { return logNow{l} }

// logNow is the writer Now returns.
type logNow struct{ l *batchedLog }

func (n logNow) Write(p []byte) (int, error) {
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	if err := n.l.flushLocked(); err != nil {
		return 0, err
	}
	return n.l.w.Write(p)
}

// splitLevel sends the records below level to low and the others to high:
// the access log's request lines (Info) to the batch, its warnings and
// errors through at once.
type splitLevel struct {
	low, high slog.Handler
	level     slog.Level
}

func (s splitLevel) pick(l slog.Level) slog.Handler {
	if l < s.level {
		return s.low
	}
	return s.high
}

func (s splitLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return s.pick(l).Enabled(ctx, l)
}

func (s splitLevel) Handle(ctx context.Context, r slog.Record) error {
	return s.pick(r.Level).Handle(ctx, r)
}

func (s splitLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return splitLevel{s.low.WithAttrs(attrs), s.high.WithAttrs(attrs), s.level}
}

func (s splitLevel) WithGroup(name string) slog.Handler {
	return splitLevel{s.low.WithGroup(name), s.high.WithGroup(name), s.level}
}
