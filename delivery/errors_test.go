package delivery_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// failingStore is a store.Store whose Update fails while failing is set,
// as a store whose disk is full or whose database is unreachable would.
type failingStore struct {
	store.Store
	failing atomic.Bool
}

var errStoreDown = errors.New("store down on purpose")

func (s *failingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if s.failing.Load() {
		return errStoreDown
	}
	return s.Store.Update(ctx, fn)
}

// storedDelivery reads a delivery's record as the store keeps it, lease
// included.
func storedDelivery(t *testing.T, st store.Store, id int64) store.Delivery {
	t.Helper()
	var d store.Delivery
	err := st.View(context.Background(), func(tx store.Tx) (err error) {
		d, err = tx.Delivery("acme", id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeliveryRecordFailureKeepsLease: when the result of an attempt
// cannot be recorded (the store refuses the write), the failure is
// logged, the delivery keeps its lease and is not attempted again while
// the lease lasts; once it ends, the delivery is attempted again and
// recorded, as the attempt it is: the first was never recorded.
func TestDeliveryRecordFailureKeepsLease(t *testing.T) {
	clock := newDlvClock()
	st := &failingStore{Store: memstore.New()}
	svc, err := identity.New(st, dlvServiceOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	env := newDlvEnvOn(t, svc, st, clock, true)
	rc := newDlvReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 0 {
			st.failing.Store(true) // the first attempt succeeds, but its result is not recorded
		}
	})
	sentinel := newDlvReceiver(t, nil)
	hook := env.hook(rc.url("/hook"))
	sHook := env.hook(sentinel.url("/sentinel"), string(identity.EventUserDisabled))
	var logs testutil.SyncBuffer
	opts := env.options(dlvRoots(rc))
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	opts.AttemptTimeout, opts.LeaseDuration = time.Minute, 10*time.Minute
	d := env.start(opts)
	leasedAt := clock.Now()
	ada := env.user("ada")
	waitFor(t, "the failure to record the attempt", func() bool {
		return strings.Contains(logs.String(), "delivery: recording an attempt failed")
	})
	st.failing.Store(false)
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "recording an attempt failed") && !strings.Contains(line, errStoreDown.Error()) {
			t.Errorf("the log does not give the store's error: %s", line)
		}
	}

	id := env.deliveries(hook.Endpoint.ID)[0].ID
	got := storedDelivery(t, st, id)
	if got.Status != store.DeliveryPending || got.Attempts != 0 || got.LeaseOwner == "" ||
		!got.LeaseUntil.Equal(leasedAt.Add(opts.LeaseDuration)) {
		t.Fatalf("after the failed recording: %+v; want pending, no attempt recorded, leased until %v",
			got, leasedAt.Add(opts.LeaseDuration))
	}

	// Just before the lease ends, a delivery to another endpoint, queued
	// after it, shows the dispatcher has gone past the leased one.
	clock.Set(got.LeaseUntil.Add(-time.Second))
	if err := env.ws.DisableUser(context.Background(), ada.ID); err != nil {
		t.Fatal(err)
	}
	env.waitDeliveries(sHook.Endpoint.ID, "the sentinel delivery", settled)
	if n := rc.count(); n != 1 {
		t.Fatalf("the receiver got %d requests while the lease lasted, want 1", n)
	}

	clock.Set(got.LeaseUntil.Add(time.Second))
	ds := env.waitDeliveries(hook.Endpoint.ID, "the attempt after the lease", settled)
	if ds[0].Status != identity.DeliverySucceeded || ds[0].Attempts != 1 || rc.count() != 2 {
		t.Errorf("after the lease: %+v, %d requests; want succeeded at its one recorded attempt, 2 requests", ds[0], rc.count())
	}
	// Settled, the last attempt is recorded; once it is no longer in
	// flight, it is counted.
	waitFor(t, "the last attempt to end", func() bool {
		s, _ := d.Stats(context.Background())
		return s.InFlight == 0
	})
	if s, _ := d.Stats(context.Background()); s.Attempts != 3 || s.Successes != 2 || s.Failures != 0 || s.Dropped != 0 {
		t.Errorf("stats %+v; want 3 attempts (the sentinel's among them), 2 recorded successes", s)
	}
}

// TestDeliveryResultDroppedAfterLeaseTakenOver: an attempt that outlives
// its lease, whose delivery another dispatcher has leased meanwhile, has
// its result dropped (Stats.Dropped counts it) and leaves the other
// dispatcher's lease and attempt alone; that one's result is recorded.
func TestDeliveryResultDroppedAfterLeaseTakenOver(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	second, err := identity.New(env.st, dlvServiceOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	release := []chan struct{}{make(chan struct{}), make(chan struct{})}
	entered := make(chan int, 4)
	rc := newDlvReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		entered <- n
		if n < len(release) {
			select {
			case <-release[n]:
			case <-r.Context().Done():
			}
		}
	})
	awaitRequest := func(want int) {
		t.Helper()
		select {
		case n := <-entered:
			if n != want {
				t.Fatalf("request %d reached the receiver, want %d", n, want)
			}
		case <-time.After(dlvWait):
			t.Fatalf("request %d never reached the receiver", want)
		}
	}
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	// One attempt per endpoint at a time, so that the first dispatcher
	// cannot lease the delivery again itself.
	opts.MaxPerEndpoint = 1
	opts.AttemptTimeout, opts.LeaseDuration = 10*time.Minute, 20*time.Minute
	d1 := env.start(opts)
	env.user("ada")
	awaitRequest(0)
	id := env.deliveries(hook.Endpoint.ID)[0].ID
	first := storedDelivery(t, env.st, id)

	// The first lease ends while its attempt hangs; the second dispatcher
	// leases the delivery and attempts it.
	clock.Set(first.LeaseUntil.Add(time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d2, err := delivery.Start(ctx, second, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d2.Stop)
	awaitRequest(1)
	taken := storedDelivery(t, env.st, id)
	if taken.LeaseOwner == first.LeaseOwner || !taken.LeaseUntil.Equal(clock.Now().Add(opts.LeaseDuration)) {
		t.Fatalf("lease %q until %v, was %q until %v: want the second dispatcher's", taken.LeaseOwner, taken.LeaseUntil, first.LeaseOwner, first.LeaseUntil)
	}

	// The first attempt now succeeds: too late, its result is dropped.
	close(release[0])
	waitFor(t, "the first dispatcher's attempt to end", func() bool {
		s, _ := d1.Stats(context.Background())
		return s.InFlight == 0
	})
	if s, _ := d1.Stats(context.Background()); s.Dropped != 1 {
		t.Errorf("first dispatcher's stats %+v; want its result dropped", s)
	}
	if got := storedDelivery(t, env.st, id); got.Attempts != 0 || got.Status != store.DeliveryPending || got.LeaseOwner != taken.LeaseOwner {
		t.Errorf("after the dropped result: %+v; want it untouched, leased to the second dispatcher", got)
	}

	close(release[1])
	ds := env.waitDeliveries(hook.Endpoint.ID, "the second dispatcher's attempt", settled)
	if ds[0].Status != identity.DeliverySucceeded || ds[0].Attempts != 1 {
		t.Errorf("delivery %+v; want succeeded, one attempt recorded", ds[0])
	}
	waitFor(t, "the second dispatcher's attempt to end", func() bool {
		s2, _ := d2.Stats(context.Background())
		return s2.InFlight == 0
	})
	if s2, _ := d2.Stats(context.Background()); s2.Attempts != 1 || s2.Successes != 1 || s2.Dropped != 0 {
		t.Errorf("second dispatcher's stats %+v; want 1 attempt, recorded", s2)
	}
	s1, _ := d1.Stats(context.Background())
	if s1.Attempts != 1 || s1.Successes != 0 || s1.Failures != 0 || s1.Dropped != 1 {
		t.Errorf("first dispatcher's stats %+v; want 1 attempt, dropped", s1)
	}
	if n := rc.count(); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}
}
