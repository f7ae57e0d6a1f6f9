package delivery_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
	"github.com/identitylib/identity/webhook"
)

// panickyStore is a memstore whose transactions panic once where armed:
// DueDeliveries (read by the dispatcher's loop) and Delivery of one id
// (read by a worker when it begins an attempt).
type panickyStore struct {
	store.Store
	panicDue      atomic.Bool
	panicDelivery atomic.Int64
}

func (s *panickyStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(&panickyTx{Tx: tx, s: s}) })
}

func (s *panickyStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(&panickyTx{Tx: tx, s: s}) })
}

type panickyTx struct {
	store.Tx
	s *panickyStore
}

func (tx *panickyTx) DueDeliveries(now time.Time, limit int) ([]store.QueuedDelivery, error) {
	if tx.s.panicDue.CompareAndSwap(true, false) {
		panic("injected panic in DueDeliveries")
	}
	return tx.Tx.DueDeliveries(now, limit)
}

func (tx *panickyTx) Delivery(slug string, id int64) (store.Delivery, error) {
	if tx.s.panicDelivery.CompareAndSwap(id, 0) {
		panic(fmt.Sprintf("injected panic in Delivery(%d)", id))
	}
	return tx.Tx.Delivery(slug, id)
}

// TestDispatcherSurvivesPanics: a panic in the loop's round and one in a
// worker's attempt are logged with their stacks, and the dispatcher goes
// on: its one worker delivers the next job, and the job whose attempt
// panicked, left unrecorded under its lease, is delivered once the lease
// ends.
func TestDispatcherSurvivesPanics(t *testing.T) {
	clock := newDlvClock()
	st := &panickyStore{Store: memstore.New()}
	svc, err := identity.New(st, dlvServiceOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	env := newDlvEnvOn(t, svc, st, clock, true)
	rc := newDlvReceiver(t, nil)
	hook := env.hook(rc.url("/hook"))
	env.user("first")
	env.user("second")
	ds := env.deliveries(hook.Endpoint.ID)
	if len(ds) != 2 {
		t.Fatalf("deliveries %+v, want 2", ds)
	}
	if ds[0].ID > ds[1].ID {
		ds[0], ds[1] = ds[1], ds[0]
	}
	panicked, next := ds[0], ds[1]
	st.panicDue.Store(true)
	st.panicDelivery.Store(panicked.ID)

	logs := &testutil.SyncBuffer{}
	opts := env.options(dlvRoots(rc))
	opts.Workers = 1
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	env.start(opts)

	// The only worker survives its panic and delivers the next job.
	waitFor(t, "the next job's delivery", func() bool { return rc.count() == 1 })
	waitFor(t, "both panics logged", func() bool {
		return strings.Contains(logs.String(), "a round of claiming due jobs panicked") &&
			strings.Contains(logs.String(), "an attempt panicked")
	})
	if got := env.deliveries(hook.Endpoint.ID); !hasDelivery(got, panicked.ID, identity.DeliveryPending, 0) {
		t.Errorf("deliveries after the panic %+v, want delivery %d pending with no attempt recorded", got, panicked.ID)
	}

	// Its lease ends: the job is attempted again, and delivered.
	clock.Advance(2*delivery.DefaultAttemptTimeout + time.Second)
	env.waitDeliveries(hook.Endpoint.ID, "the panicked job's delivery after its lease", settled)
	var ids []string
	for _, r := range rc.requests() {
		ids = append(ids, r.header.Get(webhook.HeaderID))
	}
	if diff := cmp.Diff([]string{next.EventID, panicked.EventID}, ids); diff != "" {
		t.Errorf("webhook-ids received (-want +got):\n%s", diff)
	}
	for _, d := range env.deliveries(hook.Endpoint.ID) {
		if d.Status != identity.DeliverySucceeded || d.Attempts != 1 {
			t.Errorf("delivery %d: %s after %d attempts, want succeeded after 1", d.ID, d.Status, d.Attempts)
		}
	}

	log := logs.String()
	for _, want := range []string{
		`level=ERROR msg="delivery: a round of claiming due jobs panicked" panic="injected panic in DueDeliveries" stack="goroutine `,
		fmt.Sprintf(`level=ERROR msg="delivery: an attempt panicked; the job is retried when its lease ends" workspace=acme endpoint=%d delivery=%d panic="injected panic in Delivery(%d)" stack="goroutine `,
			hook.Endpoint.ID, panicked.ID, panicked.ID),
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// hasDelivery reports whether ds holds delivery id with the status and
// number of attempts.
func hasDelivery(ds []identity.Delivery, id int64, status identity.DeliveryStatus, attempts int) bool {
	for _, d := range ds {
		if d.ID == id {
			return d.Status == status && d.Attempts == attempts
		}
	}
	return false
}
