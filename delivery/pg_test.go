package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestDispatchersOverPostgres: three Services, each with a pgstore Store
// of its own on one PostgreSQL schema and a dispatcher, as three processes
// sharing a database would be, work one queue: no webhook-id is ever
// being sent twice at the same moment, and each event succeeds once. The
// receiver holds the first requests until more are in flight than two
// dispatchers may send (a gate), so all three must take part.
func TestDispatchersOverPostgres(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 60
	}
	url := pgtest.URL(t)
	open := func() *identity.Service {
		t.Helper()
		st, err := pgstore.Open(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := identity.New(st, dlvServiceOptions(nil))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		return svc
	}
	env := newDlvEnvOn(t, open(), nil, nil, true)
	const dispatchers, perEndpoint = 3, 4
	g := newGate((dispatchers-1)*perEndpoint + 1)
	rc := flakyReceiver(t, 0.3, time.Millisecond, g)
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	opts.Retries = shortRetries(30)
	opts.MaxPerEndpoint = perEndpoint
	opts.AttemptTimeout = 10 * time.Minute // only the gate holds requests
	ds := []*delivery.Dispatcher{env.start(opts)}
	for range dispatchers - 1 {
		d, err := delivery.Start(context.Background(), open(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Stop)
		ds = append(ds, d)
	}
	env.createUsers(n)
	env.waitDeliveries(hook.Endpoint.ID, "every delivery to succeed (the gate opens only when the dispatchers send at the same time)", func(ds []identity.Delivery) bool {
		return len(ds) == n && settled(ds)
	})
	for _, d := range ds {
		d.Stop()
	}

	checkAtLeastOnce(t, rc.requests(), n)
	rc.mu.Lock()
	maxActive := rc.maxActive
	rc.mu.Unlock()
	if maxActive != 1 {
		t.Errorf("a webhook-id was in flight %d times at once", maxActive)
	}
	if !g.isOpen() {
		t.Error("the gate never opened")
	}
	var successes uint64
	for i, d := range ds {
		st, err := d.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Attempts == 0 {
			t.Errorf("dispatcher %d made no attempt: %+v", i, st)
		}
		if st.Pending != 0 {
			t.Errorf("stats %+v: deliveries still pending", st)
		}
		successes += st.Successes
		t.Logf("dispatcher %d: %d attempts", i, st.Attempts)
	}
	if successes != uint64(n) {
		t.Errorf("%d successes in all, want %d", successes, n)
	}
}
