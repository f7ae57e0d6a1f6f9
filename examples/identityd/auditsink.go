package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/identitylib/identity"
)

// serve -audit-log FILE|- writes every audit record, once its transaction
// has committed, as one JSON line (the line of audit export) to FILE or
// standard output: a copy of the trail off the database, for a SIEM.
//
// The library gives the sink each record on the goroutine that committed
// it, so the sink must never wait: a request would wait with it. Records
// go into a buffer of auditSinkBuffer records that one goroutine writes
// out, a batch of whatever waits at a time. A record that finds the
// buffer full is dropped and counted, and so are the lines of a write
// that failed (a write error is logged at most once every
// auditSinkErrorEvery). The next write that succeeds starts with one
// line that says how many were dropped and when they were written:
//
//	{"dropped":N,"since":"2026-11-27T18:02:11.123456Z","until":"2026-11-27T18:02:14.5Z"}
//
// since is the time of the earliest record dropped and until just after
// the latest (inclusive and exclusive, as audit list -since and -until
// take them), so that those records can be read again from the trail in
// the database. When serve stops, the sink writes what waits, and a last
// such line, within shutdownTimeout.

// auditSinkBuffer is how many records the sink holds for its writer: a
// variable, so that a test can make it small.
var auditSinkBuffer = 10_000

// auditSinkBatch is the most bytes of lines written at once.
const auditSinkBatch = 256 << 10

// auditSinkErrorEvery is how often, at most, the sink logs a failed write.
const auditSinkErrorEvery = time.Minute

// auditSink is the identity.AuditSink of serve -audit-log.
type auditSink struct {
	w      io.Writer
	file   *os.File // closed by close; nil for standard output
	sync   bool     // file is a regular file, which close syncs
	name   string   // for the log
	logger *slog.Logger
	now    func() time.Time

	records chan identity.AuditRecord
	wake    chan struct{} // Audit dropped a record
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when the writer has stopped

	mu      sync.Mutex
	dropped drops // not yet reported

	// The writer's own.
	lastError time.Time // when a failed write was last logged
	cut       bool      // a failed write left a partial line
	batch     []byte
	ends      []int       // where each record's line in batch ends
	times     []time.Time // the time of each record in batch
}

// drops counts records that were dropped: how many, and the earliest
// and latest time among them.
type drops struct {
	n                int
	earliest, latest time.Time
}

// add counts n records of the times from to last.
func (d *drops) add(n int, from, last time.Time) {
	if n == 0 {
		return
	}
	if d.n == 0 || from.Before(d.earliest) {
		d.earliest = from
	}
	if d.n == 0 || last.After(d.latest) {
		d.latest = last
	}
	d.n += n
}

// dropLine is the line that reports dropped records.
type dropLine struct {
	Dropped int       `json:"dropped"`
	Since   time.Time `json:"since"`
	Until   time.Time `json:"until"`
}

// openAuditSink opens serve's -audit-log name: "-" is stdout, anything
// else a file, created with mode 0600 if need be and appended to. db is
// serve's -db, which it refuses to write into.
func openAuditSink(name string, stdout io.Writer, db string, logger *slog.Logger) (*auditSink, error) {
	if name == "-" {
		return newAuditSink(stdout, nil, "standard output", auditSinkBuffer, logger), nil
	}
	if isDatabaseFile(name, db) {
		return nil, fmt.Errorf("-audit-log %s is the database itself: give another file", name)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("-audit-log: %w", err)
	}
	return newAuditSink(f, f, name, auditSinkBuffer, logger), nil
}

// newAuditSink returns a sink that writes to w through a buffer of size
// records, and starts its writer. file, if not nil, is w's file, which
// close syncs and closes.
func newAuditSink(w io.Writer, file *os.File, name string, size int, logger *slog.Logger) *auditSink {
	s := &auditSink{
		w: w, file: file, name: name, logger: logger, now: time.Now,
		records: make(chan identity.AuditRecord, size),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if file != nil {
		fi, err := file.Stat()
		s.sync = err == nil && fi.Mode().IsRegular()
	}
	go s.write()
	return s
}

// Audit implements identity.AuditSink: it hands rec to the writer, or,
// when the buffer is full, drops it and counts it. It never waits.
func (s *auditSink) Audit(rec identity.AuditRecord) {
	select {
	case s.records <- rec:
	default:
		s.drop(1, rec.Time, rec.Time)
		// The writer may have written everything before this record and
		// be waiting: it reports the drop at once.
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// drop counts n records dropped, of the times from to last.
func (s *auditSink) drop(n int, from, last time.Time) {
	s.mu.Lock()
	s.dropped.add(n, from, last)
	s.mu.Unlock()
}

// takeDropped returns the drops not yet reported, and forgets them.
func (s *auditSink) takeDropped() drops {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dropped
	s.dropped = drops{}
	return d
}

// write is the writer: it writes the records as they come, a batch of
// whatever waits at a time, and the line of the records dropped since the
// last write, until close; then what waits still.
func (s *auditSink) write() {
	defer close(s.done)
	for {
		select {
		case rec := <-s.records:
			s.add(rec)
		case <-s.wake:
		case <-s.stop:
			for {
				s.gather()
				s.flush()
				if len(s.records) == 0 {
					return
				}
			}
		}
		s.gather()
		s.flush()
	}
}

// gather adds to the batch what waits in the buffer, up to a batch.
func (s *auditSink) gather() {
	for len(s.batch) < auditSinkBatch {
		select {
		case rec := <-s.records:
			s.add(rec)
		default:
			return
		}
	}
}

// add appends rec's line to the batch; a record that cannot be encoded
// is dropped.
func (s *auditSink) add(rec identity.AuditRecord) {
	b, err := appendAuditLine(s.batch, rec)
	if err != nil {
		s.logger.Error("audit log: a record was dropped", "file", s.name, "err", err)
		s.drop(1, rec.Time, rec.Time)
		return
	}
	s.batch = b
	s.ends = append(s.ends, len(b))
	s.times = append(s.times, rec.Time)
}

// flush writes the line of the drops not yet reported, if any, and the
// batch, in one write. The lines a failed write did not write whole are
// counted as dropped, and reported by the next write that succeeds.
func (s *auditSink) flush() {
	d := s.takeDropped()
	if d.n == 0 && len(s.batch) == 0 {
		return
	}
	now := s.now()
	var head []byte
	if s.cut {
		head = append(head, '\n') // ends the line a failed write cut, so that the next is whole
	}
	if d.n > 0 {
		line, _ := json.Marshal(dropLine{Dropped: d.n, Since: d.earliest, Until: d.latest.Add(time.Microsecond)})
		head = append(append(head, line...), '\n')
	}
	out := s.batch
	if len(head) > 0 {
		out = append(head, s.batch...)
	}
	n, err := s.w.Write(out)
	if err == nil && n < len(out) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			s.cut = out[n-1] != '\n'
		}
		if n < len(head) {
			s.drop(d.n, d.earliest, d.latest) // reported by the next write, with the rest
		}
		// The records whose lines were not written whole.
		for i, end := range s.ends {
			if len(head)+end > n {
				s.drop(len(s.ends)-i, minTime(s.times[i:]), maxTime(s.times[i:]))
				break
			}
		}
		if s.lastError.IsZero() || now.Sub(s.lastError) >= auditSinkErrorEvery {
			s.lastError = now
			s.logger.Error("audit log: writing failed; its lines are dropped, counted and reported in the file once a write succeeds",
				"file", s.name, "err", err)
		}
	} else {
		s.cut = false
	}
	s.batch, s.ends, s.times = s.batch[:0], s.ends[:0], s.times[:0]
}

// close stops the sink once the writer has written what waits, or after
// timeout if it cannot (a reader that stopped reading a pipe), and then
// syncs and closes the file. The Service must be closed first: a record
// given afterwards is not written.
func (s *auditSink) close(timeout time.Duration) error {
	close(s.stop)
	var err error
	select {
	case <-s.done:
		if d := s.takeDropped(); d.n > 0 {
			err = fmt.Errorf("audit log %s: %d records dropped at shutdown", s.name, d.n)
		}
	case <-time.After(timeout):
		err = fmt.Errorf("audit log %s: the writer did not finish within %v of shutdown; the records still waiting are lost", s.name, timeout)
	}
	if s.file != nil {
		if s.sync {
			err = errors.Join(err, s.file.Sync())
		}
		// Closing the file also ends a write that a pipe's reader holds up.
		err = errors.Join(err, s.file.Close())
	}
	return err
}

func minTime(ts []time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}

func maxTime(ts []time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.After(m) {
			m = t
		}
	}
	return m
}
