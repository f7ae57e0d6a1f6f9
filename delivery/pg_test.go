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
	checkSharedWork(t, env, hook.Endpoint.ID, rc, g, ds, n)
}
