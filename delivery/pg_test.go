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
// being sent twice at the same moment, and each event succeeds once.
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
	rc := flakyReceiver(t, 0.3, time.Millisecond)
	hook := env.hook(rc.url("/hook"))
	opts := env.options(dlvRoots(rc))
	opts.Retries = shortRetries(30)
	opts.MaxPerEndpoint = 8
	dispatchers := []*delivery.Dispatcher{env.start(opts)}
	for range 2 {
		d, err := delivery.Start(context.Background(), open(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Stop)
		dispatchers = append(dispatchers, d)
	}
	env.createUsers(n)
	env.waitDeliveries(hook.Endpoint.ID, "every delivery to succeed", func(ds []identity.Delivery) bool {
		return len(ds) == n && settled(ds)
	})
	for _, d := range dispatchers {
		d.Stop()
	}

	checkAtLeastOnce(t, rc.requests(), n)
	rc.mu.Lock()
	maxActive := rc.maxActive
	rc.mu.Unlock()
	if maxActive != 1 {
		t.Errorf("a webhook-id was in flight %d times at once", maxActive)
	}
	busy := 0
	for _, d := range dispatchers {
		st, err := d.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Attempts > 0 {
			busy++
		}
		if st.Pending != 0 {
			t.Errorf("stats %+v: deliveries still pending", st)
		}
	}
	t.Logf("%d of %d dispatchers made attempts", busy, len(dispatchers))
}
