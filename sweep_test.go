package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// sweepReport is one call of SweepIdempotencyEvery's report.
type sweepReport struct {
	Deleted int
	Failed  bool
}

// TestSweepIdempotencyEvery: the sweep runs at once, reports a sweep that
// deleted records or failed, and returns when its context ends. Nothing
// here waits on the clock: the first sweep is immediate, and the interval
// is an hour.
func TestSweepIdempotencyEvery(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, key := range []string{"k-1", "k-2", "k-3"} {
		nu := newUserNamed(key)
		nu.Idempotency = &identity.Idempotency{Scope: "client", Key: key}
		if _, err := e.ws.CreateUser(e.ctx, nu); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(24 * time.Hour)

	run := func(fail bool) sweepReport {
		t.Helper()
		e.st.set(false, fail)
		defer e.st.mend()
		ctx, cancel := context.WithCancel(e.ctx)
		reports := make(chan sweepReport, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.svc.SweepIdempotencyEvery(ctx, time.Hour, func(n int, err error) {
				if fail && !errors.Is(err, errFlaky) || !fail && err != nil {
					t.Errorf("report(%d, %v)", n, err)
				}
				select {
				case reports <- sweepReport{Deleted: n, Failed: err != nil}:
				default:
				}
			})
		}()
		r := <-reports
		cancel()
		<-done
		return r
	}
	got := []sweepReport{run(true), run(false)}
	if diff := cmp.Diff([]sweepReport{{Deleted: 0, Failed: true}, {Deleted: 3, Failed: false}}, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}

	// A context that has ended returns at once, reporting nothing.
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	e.svc.SweepIdempotencyEvery(ctx, 0, func(n int, err error) { t.Errorf("report(%d, %v) after the context ended", n, err) })
}

// TestSweepIdempotencyEveryQuiet: a sweep that deleted nothing is not
// reported, and a nil report is never called. Each run ends at the start
// of its third sweep, so two sweeps have run whole, whatever the speed of
// the machine: the interval is a nanosecond, and the store ends the run.
func TestSweepIdempotencyEveryQuiet(t *testing.T) {
	clock := newFakeClock()
	st := &gateStore{Store: memstore.New()}
	svc, ws := newWorkspace(t, st, clock, nil)
	nu := newUserNamed("bob")
	nu.Idempotency = &identity.Idempotency{Scope: "client", Key: "k-1"}
	if _, err := ws.CreateUser(t.Context(), nu); err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)

	run := func(report func(int, error)) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		st.arm(func(n int) error {
			if n == 3 {
				cancel()
			}
			return nil
		})
		defer st.arm(nil)
		svc.SweepIdempotencyEvery(ctx, time.Nanosecond, report)
	}
	// The first sweep deletes the expired record, with no report to call.
	run(nil)
	if n, err := svc.SweepIdempotency(t.Context()); n != 0 || err != nil {
		t.Errorf("SweepIdempotency after the run = %d, %v; want 0, nil", n, err)
	}
	// Nothing is left to delete: nothing is reported.
	var reports []sweepReport
	run(func(n int, err error) { reports = append(reports, sweepReport{Deleted: n, Failed: err != nil}) })
	if len(reports) != 0 {
		t.Errorf("reports of sweeps that deleted nothing: %+v", reports)
	}
}
