package identity

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// The in-memory limiter's arithmetic and its bound, on a clock the test
// moves.

type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time { return c.t }

// TestMemoryLimiterWindow: the count of a sliding window, the wait it
// answers, and undo taking back its own event only.
func TestMemoryLimiterWindow(t *testing.T) {
	ctx := context.Background()
	clock := &stepClock{t: time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)}
	l := newMemoryLimiter(clock.now)
	rate := Rate{Count: 2, Window: 10 * time.Second}
	take := func(wantRetry time.Duration) func() {
		t.Helper()
		undo, retry, err := l.Take(ctx, "k", rate)
		if err != nil || retry != wantRetry || (undo == nil) != (wantRetry > 0) {
			t.Fatalf("Take at %s = undo %v, retry %v, %v; want retry %v", clock.t.Format("15:04:05.000"), undo != nil, retry, err, wantRetry)
		}
		return undo
	}
	take(0) // 0 s
	clock.t = clock.t.Add(3 * time.Second)
	undo := take(0) // 3 s
	clock.t = clock.t.Add(time.Second)
	take(6 * time.Second) // 4 s: the first leaves at 10 s
	undo()                // the 3 s event taken back
	take(0)               // 4 s counts instead
	take(6 * time.Second)
	clock.t = clock.t.Add(6*time.Second - time.Nanosecond)
	take(time.Nanosecond)
	clock.t = clock.t.Add(time.Nanosecond) // 10 s: the first left
	take(0)
	take(4 * time.Second) // the 4 s event leaves at 14 s

	if err := l.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	take(0)
}

// TestMemoryLimiterFull: with maxLimiterKeys live keys, a new key goes
// uncounted (the keys under attack keep their counts); once their windows
// passed, a sweep makes room, at most once a second.
func TestMemoryLimiterFull(t *testing.T) {
	ctx := context.Background()
	clock := &stepClock{t: time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)}
	l := newMemoryLimiter(clock.now)
	rate := Rate{Count: 1, Window: time.Minute}
	for i := range maxLimiterKeys {
		if _, retry, _ := l.Take(ctx, strconv.Itoa(i), rate); retry != 0 {
			t.Fatalf("key %d refused", i)
		}
	}
	if _, retry, _ := l.Take(ctx, "0", rate); retry != time.Minute {
		t.Errorf("a counted key: retry %v, want 1m0s", retry)
	}
	for range 3 {
		if _, retry, _ := l.Take(ctx, "new", rate); retry != 0 {
			t.Fatalf("a key past the bound: retry %v, want uncounted", retry)
		}
	}
	if got := len(l.keys); got != maxLimiterKeys {
		t.Errorf("%d keys, want %d", got, maxLimiterKeys)
	}

	clock.t = clock.t.Add(time.Minute)
	if _, retry, _ := l.Take(ctx, "new", rate); retry != 0 {
		t.Fatal("after the windows: refused")
	}
	if _, retry, _ := l.Take(ctx, "new", rate); retry != time.Minute {
		t.Errorf("after the sweep, the new key is counted: retry %v, want 1m0s", retry)
	}
	if got := len(l.keys); got != 1 {
		t.Errorf("%d keys after the sweep, want 1", got)
	}
}

// TestRetryMessage: the wait is said in whole minutes, rounded up, in
// the singular for one.
func TestRetryMessage(t *testing.T) {
	tests := []struct {
		wait time.Duration
		want string
	}{
		{time.Nanosecond, "too many attempts: try again in 1 minute"},
		{time.Minute, "too many attempts: try again in 1 minute"},
		{time.Minute + time.Nanosecond, "too many attempts: try again in 2 minutes"},
		{15 * time.Minute, "too many attempts: try again in 15 minutes"},
	}
	for _, tt := range tests {
		err := errRateLimited(tt.wait).(*Error)
		if err.Message != tt.want || err.RetryAfter != tt.wait || err.Code != CodeRateLimited {
			t.Errorf("errRateLimited(%v) = %q, %v, %q; want %q", tt.wait, err.Message, err.RetryAfter, err.Code, tt.want)
		}
	}
}
