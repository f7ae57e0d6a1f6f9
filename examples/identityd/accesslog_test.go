package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

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

// accessLineCase is a record for the differential tests of
// accessLineHandler, and whether the handler formats it itself (fast) or
// hands it to its TextHandler.
type accessLineCase struct {
	name  string
	time  time.Time
	level slog.Level
	msg   string // "http request" unless rawMsg
	attrs []slog.Attr
	fast  bool
	// rawMsg has msg be the message even when empty.
	rawMsg bool
}

// stringValuer is a LogValuer: slog resolves it to its string.
type stringValuer string

// LogValue returns v as a string.
func (v stringValuer) LogValue() slog.Value { return slog.StringValue(string(v)) }

// groupValuer is a LogValuer that resolves to a group.
type groupValuer struct{}

// LogValue returns a group of one attribute.
func (groupValuer) LogValue() slog.Value { return slog.GroupValue(slog.Int("a", 1)) }

// requestAttrs are the attributes of logRequest's Info line.
func requestAttrs(method, route string, status int, took time.Duration, size int64) []slog.Attr {
	return []slog.Attr{
		slog.String("method", method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", took),
		slog.Int64("bytes", size),
	}
}

// accessLineStrings are strings on either side of slog's quoting rule.
var accessLineStrings = []string{
	"", "GET", "a b", "a=b", "=", `a"b`, `a\b`, `\`, "a\tb", "\n", "\x00", "\x1f", "\x7f",
	"héllo", "µ", "812µs", "日本", "🙂", "\xff", "a\xc3", "\xed\xa0\x80", "\ufffd", "\u00a0",
	"\u0085", "\u2028", "\u200b", "\u3000", "e\u0301", "\U0010ffff", "\u00ad",
	"/t/:slug/api/v1/users/:id", "GET /x", "BREW", "M-SEARCH", "a,b;c{}[]|~!#$%&'()*+.:<>?@^_`",
}

// accessLineCases are the records of the differential tests, run in order
// through one handler (so the cached second carries from one to the next).
func accessLineCases() []accessLineCase {
	utc := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	india := time.FixedZone("x", 5*3600+30*60)
	west := time.FixedZone("y", -(9*3600 + 30*60))
	zeroNamed := time.FixedZone("z", 0)
	req := requestAttrs("GET", "/t/:slug/api/v1/users/:id", 200, 812*time.Microsecond, 1234)
	cs := []accessLineCase{
		{name: "request", time: utc.Add(123456789), attrs: req, fast: true},
		{name: "same second", time: utc.Add(500 * time.Millisecond), attrs: req, fast: true},
		{name: ".999", time: utc.Add(999999999), attrs: req, fast: true},
		{name: "next second .000", time: utc.Add(time.Second), attrs: req, fast: true},
		{name: "next second .001", time: utc.Add(time.Second + time.Millisecond), attrs: req, fast: true},
		{name: "sub-millisecond", time: utc.Add(time.Second + 999999), attrs: req, fast: true},
		{name: "+05:30", time: utc.Add(time.Second + 7*time.Millisecond).In(india), attrs: req, fast: true},
		{name: "+05:30 .000", time: utc.Add(2 * time.Second).In(india), attrs: req, fast: true},
		{name: "-09:30", time: utc.Add(2*time.Second + 990*time.Millisecond).In(west), attrs: req, fast: true},
		{name: "offset 0 not UTC", time: utc.Add(2 * time.Second).In(zeroNamed), attrs: req, fast: true},
		{name: "local", time: utc.Add(3 * time.Second).Local(), attrs: req, fast: true},
		{name: "monotonic", time: time.Now(), attrs: req, fast: true},
		{name: "new year", time: time.Date(2025, 12, 31, 23, 59, 59, 999e6, time.UTC), attrs: req, fast: true},
		{name: "year 0", time: time.Date(0, 1, 1, 0, 0, 0, 42e6, time.UTC), attrs: req, fast: true},
		{name: "year 9999", time: time.Date(9999, 12, 31, 23, 59, 59, 999e6, india), attrs: req, fast: true},
		{name: "year -1", time: time.Date(-1, 1, 1, 0, 0, 0, 42e6, time.UTC), attrs: req},
		{name: "year 10000", time: time.Date(10000, 1, 1, 0, 0, 0, 42e6, time.UTC), attrs: req},
		{name: "zero time", attrs: req, fast: true},
		{name: "no attrs", time: utc, fast: true},
		{name: "level warn", time: utc, level: slog.LevelWarn, attrs: req, fast: true},
		{name: "level info+2", time: utc, level: slog.LevelInfo + 2, attrs: req, fast: true},
		{name: "level debug", time: utc, level: slog.LevelDebug, fast: true},
		{name: "empty msg", time: utc, msg: "", rawMsg: true, attrs: req, fast: true},
		{name: "msg a=b", time: utc, msg: "a=b", fast: true},
		{name: "kinds", time: utc, attrs: []slog.Attr{
			slog.Int("neg", -42), slog.Int64("min", math.MinInt64), slog.Int64("zero", 0),
			slog.Uint64("max", math.MaxUint64), slog.Bool("t", true), slog.Bool("f", false),
			slog.Duration("d0", 0), slog.Duration("ns", 1), slog.Duration("ms", 1500*time.Microsecond),
			slog.Duration("long", 2*time.Hour+3*time.Minute+4500*time.Millisecond),
			slog.Duration("neg", -812*time.Microsecond), slog.Duration("min", math.MinInt64),
			slog.Float64("f", 1.5), slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(-1)),
			slog.Float64("negzero", math.Copysign(0, -1)), slog.Float64("big", 1e300),
		}, fast: true},
		{name: "empty Attr", time: utc, attrs: []slog.Attr{slog.String("a", "1"), {}, slog.Int("b", 2)}, fast: true},
		{name: "empty Any", time: utc, attrs: []slog.Attr{slog.Any("", nil)}, fast: true},
		{name: "empty key", time: utc, attrs: []slog.Attr{slog.String("", "v"), slog.Int("", 0)}, fast: true},
		{name: "nil Any with key", time: utc, attrs: []slog.Attr{slog.Any("k", nil)}},
		{name: "group", time: utc, attrs: []slog.Attr{slog.String("a", "1"), slog.Group("g", slog.Int("b", 2))}},
		{name: "empty group", time: utc, attrs: []slog.Attr{slog.Group("g")}, fast: true}, // Record.AddAttrs drops it
		{name: "inline group", time: utc, attrs: []slog.Attr{slog.Group("", slog.Int("b", 2))}},
		{name: "any", time: utc, attrs: []slog.Attr{slog.Any("err", errors.New("a b"))}},
		{name: "any bytes", time: utc, attrs: []slog.Attr{slog.Any("b", []byte("x=y"))}},
		{name: "time value", time: utc, attrs: []slog.Attr{slog.Time("t", utc.In(india))}},
		{name: "LogValuer", time: utc, attrs: []slog.Attr{slog.Any("v", stringValuer("a b"))}},
		{name: "LogValuer group", time: utc, attrs: []slog.Attr{slog.Any("v", groupValuer{})}},
	}
	for i, s := range accessLineStrings {
		cs = append(cs,
			accessLineCase{name: fmt.Sprintf("value %q", s), time: utc.Add(time.Duration(i) * time.Millisecond),
				attrs: requestAttrs(s, s, 200, time.Duration(i)*time.Microsecond, int64(-i)), fast: true},
			accessLineCase{name: fmt.Sprintf("key %q", s), time: utc, msg: s, rawMsg: true, attrs: []slog.Attr{slog.Bool(s, true)}, fast: true},
		)
	}
	for i := range cs {
		if cs[i].msg == "" && !cs[i].rawMsg {
			cs[i].msg = "http request"
		}
	}
	return cs
}

// record returns c's record.
func (c accessLineCase) record() slog.Record {
	r := slog.NewRecord(c.time, c.level, c.msg, 0)
	r.AddAttrs(c.attrs...)
	return r
}

// lineTester has a record handled by an accessLineHandler and by
// slog.NewTextHandler, each writing to its own buffer.
type lineTester struct {
	h        *accessLineHandler
	got      bytes.Buffer
	wantText *slog.TextHandler
	want     bytes.Buffer
}

// newLineTester returns a lineTester whose accessLineHandler writes
// through a batchedLog, as in serve.
func newLineTester() *lineTester {
	lt := &lineTester{}
	lt.h = newAccessLineHandler(&batchedLog{w: &lt.got})
	lt.wantText = slog.NewTextHandler(&lt.want, nil)
	return lt
}

// check has r handled both ways, reports a difference in the bytes, and
// returns whether the accessLineHandler formatted r itself.
func (lt *lineTester) check(t *testing.T, name string, r slog.Record) (fast bool) {
	t.Helper()
	lt.got.Reset()
	lt.want.Reset()
	_, fast = lt.h.appendLine(nil, &r)
	if err := lt.h.Handle(context.Background(), r); err != nil {
		t.Fatalf("%s: Handle: %v", name, err)
	}
	lt.h.lines.flush()
	if err := lt.wantText.Handle(context.Background(), r); err != nil {
		t.Fatalf("%s: TextHandler.Handle: %v", name, err)
	}
	if diff := cmp.Diff(lt.want.String(), lt.got.String()); diff != "" {
		t.Errorf("%s: the line (-TextHandler +accessLineHandler):\n%s", name, diff)
	}
	return fast
}

// TestAccessLine checks that accessLineHandler writes each record as
// slog.NewTextHandler does, byte for byte, and formats by itself the ones
// it should (a fallback for all would pass the comparison).
func TestAccessLine(t *testing.T) {
	lt := newLineTester()
	for _, c := range accessLineCases() {
		if fast := lt.check(t, c.name, c.record()); fast != c.fast {
			t.Errorf("%s: formatted by hand = %v, want %v", c.name, fast, c.fast)
		}
	}
}

// TestAccessLineBytes checks every single byte and every pair of a few
// as a string value and as a key, against TextHandler's quoting.
func TestAccessLineBytes(t *testing.T) {
	lt := newLineTester()
	some := []byte{0, '\t', ' ', '"', '=', '\\', 'a', 0x7f, 0x80, 0xc2, 0xb5, 0xff}
	var ss []string
	for c := range 256 {
		ss = append(ss, string([]byte{byte(c)}))
	}
	for _, x := range some {
		for _, y := range some {
			ss = append(ss, string([]byte{x, y}))
		}
	}
	for _, s := range ss {
		r := slog.NewRecord(time.Time{}, slog.LevelInfo, s, 0)
		r.AddAttrs(slog.String(s, s))
		lt.check(t, fmt.Sprintf("%q", s), r)
	}
}

// fuzzZones are the locations FuzzAccessLine picks from: UTC, offsets
// east and west (with minutes), 0 under another name, Local, and zones
// with summer time where the system has them.
var fuzzZones = func() []*time.Location {
	zs := []*time.Location{
		time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -(9*3600 + 30*60)),
		time.FixedZone("z", 0), time.FixedZone("w", 14*3600), time.Local,
	}
	for _, name := range []string{"America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Europe/Dublin"} {
		if loc, err := time.LoadLocation(name); err == nil {
			zs = append(zs, loc)
		}
	}
	return zs
}()

// FuzzAccessLine checks that accessLineHandler formats logRequest's line,
// from any method, route, status, duration, size and time, by itself and
// as slog.NewTextHandler does; a second line, delta later (within two
// seconds), comes from the cached second or the next.
func FuzzAccessLine(f *testing.F) {
	for i, c := range accessLineCases() {
		s := accessLineStrings[i%len(accessLineStrings)]
		f.Add(s, accessLineStrings[(i*7)%len(accessLineStrings)], 200+i, int64(i)*int64(time.Microsecond)*97, int64(i)-3,
			c.time.UnixNano(), uint8(i), int64(i)*int64(time.Millisecond)*31)
	}
	f.Add("GET", "/t/:slug/api/v1/users", 200, int64(812*time.Microsecond), int64(1234),
		time.Date(2026, 3, 29, 0, 59, 59, 999e6, time.UTC).UnixNano(), uint8(9), int64(time.Millisecond)) // Dublin's summer time begins
	f.Add("GET", "", 404, int64(math.MaxInt64), int64(math.MinInt64), int64(math.MinInt64), uint8(0), int64(-1))
	f.Add("GET", "", 404, int64(math.MinInt64), int64(math.MaxInt64), int64(math.MaxInt64), uint8(1), int64(1))
	f.Fuzz(func(t *testing.T, method, route string, status int, took, size, unixNano int64, zone uint8, delta int64) {
		loc := fuzzZones[int(zone)%len(fuzzZones)]
		when := time.Unix(0, unixNano).In(loc)
		lt := newLineTester()
		for i, at := range []time.Time{when, when.Add(time.Duration(delta % int64(2*time.Second)))} {
			r := slog.NewRecord(at, slog.LevelInfo, "http request", 0)
			r.AddAttrs(requestAttrs(method, route, status, time.Duration(took), size)...)
			if !lt.check(t, fmt.Sprintf("line %d at %s", i, at.Format(time.RFC3339Nano)), r) {
				t.Errorf("line %d at %s: handed to TextHandler", i, at.Format(time.RFC3339Nano))
			}
		}
	})
}

// TestAccessLineSecond checks the cached second: kept within a second,
// replaced at the next and for the same second in another location (also
// one of the same name), with the millis written in.
func TestAccessLineSecond(t *testing.T) {
	var out writes
	h := newAccessLineHandler(&batchedLog{w: &out})
	base := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	x1, x2 := time.FixedZone("x", 3600), time.FixedZone("x", 2*3600)
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{base.Add(999999999), "2026-03-04T12:00:00.999Z"},
		{base.Add(time.Second), "2026-03-04T12:00:01.000Z"},
		{base.Add(time.Second + 10*time.Millisecond), "2026-03-04T12:00:01.010Z"},
		{base.Add(time.Second + 10*time.Millisecond).In(x1), "2026-03-04T13:00:01.010+01:00"},
		{base.Add(time.Second + 100*time.Millisecond).In(x2), "2026-03-04T14:00:01.100+02:00"},
		{base.Add(time.Second + 200*time.Millisecond).In(x1), "2026-03-04T13:00:01.200+01:00"},
		{base.Add(time.Second + 300*time.Millisecond), "2026-03-04T12:00:01.300Z"},
		{base.Add(2*time.Second - 1), "2026-03-04T12:00:01.999Z"},
		{base.Add(2 * time.Second), "2026-03-04T12:00:02.000Z"},
		{base.Add(time.Second + 5*time.Millisecond), "2026-03-04T12:00:01.005Z"}, // back a second
	} {
		got, ok := h.appendTime(nil, c.at)
		if !ok || string(got) != c.want {
			t.Errorf("appendTime(%v) = %q, %v; want %q", c.at, got, ok, c.want)
		}
		if s := h.second.Load(); s.unix != c.at.Unix() || s.loc != c.at.Location() {
			t.Errorf("after %v the cached second is %d in %p, want %d in %p", c.at, s.unix, s.loc, c.at.Unix(), c.at.Location())
		}
		r := slog.NewRecord(c.at, slog.LevelInfo, "http request", 0)
		var want bytes.Buffer
		slog.NewTextHandler(&want, nil).Handle(context.Background(), r)
		h.Handle(context.Background(), r)
		h.lines.flush()
		if !strings.HasPrefix(want.String(), "time="+c.want+" ") {
			t.Errorf("TextHandler wrote %q, the test wants time=%s", want.String(), c.want)
		}
		if len(out) == 0 || out[len(out)-1] != want.String() {
			t.Errorf("Handle wrote %q, want %q", out, want.String())
		}
	}
}

// TestAccessLineAllocs checks that a request line, in a second already
// formatted, is written without allocating.
func TestAccessLineAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	h := newAccessLineHandler(&batchedLog{w: io.Discard})
	r := slog.NewRecord(time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC), slog.LevelInfo, "http request", 0)
	r.AddAttrs(requestAttrs("GET", "/t/:slug/api/v1/users/:id", 200, 812*time.Microsecond, 1234)...)
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		r.Time = r.Time.Add(time.Microsecond)
		h.Handle(ctx, r)
	}); n != 0 {
		t.Errorf("%v allocations a line, want 0", n)
	}
}

// BenchmarkAccessLine compares slog.NewTextHandler with accessLineHandler
// on logRequest's line, 7µs apart (a new second every 142,857 lines),
// into a batchedLog that writes to io.Discard.
func BenchmarkAccessLine(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    func(*batchedLog) slog.Handler
	}{
		{"TextHandler", func(l *batchedLog) slog.Handler { return slog.NewTextHandler(l, nil) }},
		{"accessLineHandler", func(l *batchedLog) slog.Handler { return newAccessLineHandler(l) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := bc.h(&batchedLog{w: io.Discard, batch: make([]byte, 0, accessLogBatch)})
			r := slog.NewRecord(time.Date(2026, 3, 4, 12, 0, 0, 0, time.FixedZone("x", 3600)), slog.LevelInfo, "http request", 0)
			r.AddAttrs(requestAttrs("GET", "/t/:slug/api/v1/users/:id", 200, 812*time.Microsecond, 1234)...)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				r.Time = r.Time.Add(7 * time.Microsecond)
				h.Handle(ctx, r)
			}
		})
	}
}
