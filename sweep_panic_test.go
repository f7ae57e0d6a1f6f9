package identity_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// TestSweepIdempotencyEverySurvivesPanic: a sweep that panics is a failed
// sweep, reported with the panic's value as an internal error, and the
// sweeper goes on: the next sweep deletes the expired record. Without a
// report the panic is logged with slog.Default, its stack included.
// Nothing waits on the clock: the interval is a nanosecond, and the
// store ends each run at the start of its third sweep.
func TestSweepIdempotencyEverySurvivesPanic(t *testing.T) {
	clock := newFakeClock()
	st := &gateStore{Store: memstore.New()}
	svc, ws := newWorkspace(t, st, clock, nil)
	expire := func(key string) {
		t.Helper()
		nu := newUserNamed(key)
		nu.Idempotency = &identity.Idempotency{Scope: "client", Key: key}
		if _, err := ws.CreateUser(t.Context(), nu); err != nil {
			t.Fatal(err)
		}
		clock.Advance(24 * time.Hour)
	}
	run := func(report func(int, error)) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		st.arm(func(n int) error {
			switch n {
			case 1:
				panic("injected sweep panic")
			case 3:
				cancel()
			}
			return nil
		})
		defer st.arm(nil)
		svc.SweepIdempotencyEvery(ctx, time.Nanosecond, report)
	}

	expire("k-1")
	var reports []sweepReport
	var messages []string
	run(func(n int, err error) {
		reports = append(reports, sweepReport{Deleted: n, Failed: err != nil})
		if err != nil {
			messages = append(messages, err.Error())
			if identity.ErrorCode(err) != identity.CodeInternal || !strings.Contains(errors.Unwrap(err).Error(), "goroutine ") {
				t.Errorf("the panicked sweep's error %v (cause %v), want an internal error caused by the stack", err, errors.Unwrap(err))
			}
		}
	})
	if diff := cmp.Diff([]sweepReport{{Deleted: 0, Failed: true}, {Deleted: 1, Failed: false}}, reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"identity: the idempotency sweep panicked: injected sweep panic"}, messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}

	// Without a report, the panic goes to slog.Default.
	expire("k-2")
	var logs bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	run(nil)
	if n, err := svc.SweepIdempotency(t.Context()); n != 0 || err != nil {
		t.Errorf("SweepIdempotency after the run = %d, %v; want 0, nil: the second sweep deleted the record", n, err)
	}
	for _, want := range []string{"level=ERROR", `msg="identity: the idempotency sweep panicked"`, `panic="injected sweep panic"`, "goroutine "} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}

	// A report that panics is logged too, and the sweeper goes on.
	expire("k-3")
	logs.Reset()
	calls := 0
	run(func(int, error) {
		calls++
		panic("injected report panic")
	})
	if calls != 2 {
		t.Errorf("report called %d times, want 2 (the panicked sweep, the deleting one)", calls)
	}
	if want := `msg="identity: reporting the idempotency sweep panicked" panic="injected report panic"`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
}
