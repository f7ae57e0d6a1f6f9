package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
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

// accessLineHandler writes the access log's request lines to lines: the
// bytes slog.NewTextHandler(lines, nil) would write, but formatted by hand.
// TextHandler's general formatting of these lines (AppendFormat of the
// time above all) took about 4% of the server's CPU under load; this one
// formats the time once a second, and a line without allocating.
//
// It formats only what it can format exactly as TextHandler does: a
// record with a value of another kind (a group, a time, KindAny, a
// LogValuer) or a time whose year has not four digits goes whole to text,
// a TextHandler on the same writer, so every line reads as TextHandler
// would write it.
type accessLineHandler struct {
	lines *batchedLog
	text  *slog.TextHandler
	// second is the time of the last line, formatted to the second: the
	// lines of a busy second share it and differ only in the millis.
	second atomic.Pointer[lineSecond]
}

// newAccessLineHandler returns the handler of the request lines that
// writes to lines.
func newAccessLineHandler(lines *batchedLog) *accessLineHandler {
	return &accessLineHandler{lines: lines, text: slog.NewTextHandler(lines, nil)}
}

// lineSecond is a second of a location as slog formats it, with ".000"
// for its millis: "2006-01-02T15:04:05.000-07:00". The offset is fixed
// within a second (zones change on whole seconds), so every time in the
// second and location formats the same but for the three digits of the
// millis.
type lineSecond struct {
	unix int64
	loc  *time.Location
	text string
}

// lineBuf is the size of the buffer Handle formats a line in, on the
// stack: a request line is about 150 bytes; a longer one still works,
// growing the buffer on the heap.
const lineBuf = 256

// Enabled reports true from Info up, as TextHandler with nil options does.
func (h *accessLineHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo
}

// Handle writes r's line to the batch, or has text write it if r holds
// what the hand formatting does not cover.
func (h *accessLineHandler) Handle(ctx context.Context, r slog.Record) error {
	var a [lineBuf]byte
	b, ok := h.appendLine(a[:0], &r)
	if !ok {
		return h.text.Handle(ctx, r)
	}
	_, err := h.lines.Write(b)
	return err
}

// WithAttrs returns text's: the request lines never use it, and
// TextHandler's preformatted attributes are not worth copying.
func (h *accessLineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.text.WithAttrs(attrs)
}

// WithGroup returns text's, as WithAttrs does.
func (h *accessLineHandler) WithGroup(name string) slog.Handler {
	return h.text.WithGroup(name)
}

// appendLine appends r's line as TextHandler writes it (commonHandler.handle
// in log/slog: time unless zero, level, msg, the attributes, a newline),
// and reports false, with b in no useful state, if r holds something it
// does not format.
func (h *accessLineHandler) appendLine(b []byte, r *slog.Record) ([]byte, bool) {
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		var ok bool
		if b, ok = h.appendTime(b, r.Time); !ok {
			return b, false
		}
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	b = appendTextString(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendTextString(b, r.Message)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendTextAttr(b, a)
		return ok
	})
	return append(b, '\n'), ok
}

// appendTime appends t as slog's appendRFC3339Millis does: truncated to
// the millisecond, RFC 3339 with three digits of fraction, in t's own
// location. The second comes from h.second, formatted anew (and kept) when
// t is in another second or location; it reports false for a year that
// does not have four digits, whose text slog mangles in its own way.
func (h *accessLineHandler) appendTime(b []byte, t time.Time) ([]byte, bool) {
	unix, loc := t.Unix(), t.Location()
	s := h.second.Load()
	if s == nil || s.unix != unix || s.loc != loc {
		if s = formatSecond(t, unix, loc); s == nil {
			return b, false
		}
		h.second.Store(s)
	}
	// The millis are the three digits after "2006-01-02T15:04:05.": those
	// of t.Nanosecond (never negative), which Truncate(time.Millisecond)
	// keeps.
	const frac = len("2006-01-02T15:04:05.")
	ms := t.Nanosecond() / 1e6
	n := len(b) + frac
	b = append(b, s.text...)
	b[n], b[n+1], b[n+2] = byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10)
	return b, true
}

// formatSecond returns the second of t (whose Unix and Location are unix
// and loc) formatted as slog's appendRFC3339Millis formats it with no
// millis, or nil if its year has not four digits. It is slog's algorithm:
// RFC3339Nano of the time plus a tenth of a millisecond, to have four
// fraction digits, less the fourth.
func formatSecond(t time.Time, unix int64, loc *time.Location) *lineSecond {
	const prefix = len("2006-01-02T15:04:05.000")
	var a [64]byte
	b := t.Truncate(time.Second).Add(time.Millisecond/10).AppendFormat(a[:0], time.RFC3339Nano)
	if len(b) <= prefix || string(b[prefix-4:prefix+1]) != ".0001" {
		return nil // a year before 0 or after 9999: the fraction is elsewhere
	}
	return &lineSecond{unix: unix, loc: loc, text: string(b[:prefix]) + string(b[prefix+1:])}
}

// appendTextAttr appends " key=value" as TextHandler writes a, and reports
// false for a value of a kind it does not format: a group, a time, a
// LogValuer (resolving it here and again in the fallback would call it
// twice) or KindAny. The empty Attr, which slog elides, it elides.
func appendTextAttr(b []byte, a slog.Attr) ([]byte, bool) {
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		b = appendTextKey(b, a.Key)
		return appendTextString(b, v.String()), true
	case slog.KindInt64:
		b = appendTextKey(b, a.Key)
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		b = appendTextKey(b, a.Key)
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindFloat64:
		b = appendTextKey(b, a.Key)
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64), true
	case slog.KindBool:
		b = appendTextKey(b, a.Key)
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		// Duration.String is inlined and its string does not escape, so
		// this does not allocate.
		b = appendTextKey(b, a.Key)
		return append(b, v.Duration().String()...), true
	case slog.KindAny:
		// Attr{} (and Any("", nil)) is the empty Attr slog elides.
		return b, a.Key == "" && v.Any() == nil
	}
	return b, false
}

// appendTextKey appends the separator and the key, as slog's appendKey.
func appendTextKey(b []byte, key string) []byte {
	b = append(b, ' ')
	b = appendTextString(b, key)
	return append(b, '=')
}

// appendTextString appends s as TextHandler writes a key or a string:
// as it is, or quoted (strconv.Quote) if slog's needsQuoting says so. A
// string of ASCII, as a request's mostly are, is scanned with
// textPlain and quoted here; strconv's general quoting cost a quarter of
// a line.
func appendTextString(b []byte, s string) []byte {
	i := 0
	for i < len(s) && textPlain[s[i]] {
		i++
	}
	if i == len(s) && len(s) > 0 {
		return append(b, s...)
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			if textNeedsQuoting(s) {
				return strconv.AppendQuote(b, s)
			}
			return append(b, s...)
		}
	}
	return appendQuotedASCII(b, s) // empty, or ASCII with a byte to quote
}

// textPlain holds the bytes that slog's needsQuoting lets through without
// looking further: ASCII but the controls, space, '=' and '"' (DEL and
// the backslash are in: slog's safeSet and needsQuoting let them be).
var textPlain = func() (plain [256]bool) {
	for c := ' ' + 1; c < utf8.RuneSelf; c++ {
		plain[c] = c != '=' && c != '"'
	}
	return plain
}()

// appendQuotedASCII is strconv.AppendQuote for a string of ASCII bytes
// (strconv's appendEscapedRune): '"' and '\\' escaped with a backslash,
// the printable bytes as they are, \a \b \f \n \r \t \v, and \xhh for
// the other controls and DEL.
func appendQuotedASCII(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ' ' <= c && c < 0x7f && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\v':
			b = append(b, `\v`...)
		default:
			b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// textNeedsQuoting is slog's needsQuoting, for the strings that are not
// all ASCII: s is empty, or holds a space, '=', '"', an ASCII control (but
// not DEL, which slog's safeSet lets through, nor a backslash), an invalid
// or U+FFFD rune, or a rune that is a Unicode space or not printable.
func textNeedsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b <= ' ' || b == '=' || b == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
