package identity_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// TestGrowthBounded: a steady load over a fake week (every hour a new
// user, whose user.created event is delivered, and a login of ada) with
// the sweeper running every hour on the fake clock keeps the records
// bounded: with a retention of 1 day for succeeded deliveries and ended
// sessions (which last 24 hours), every day from the second on ends with
// 24 deliveries and 48 sessions. Without sweeps they would grow by 24 a
// day.
func TestGrowthBounded(t *testing.T) {
	e := newTestEnv(t, nil)
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Retention = identity.Retention{SucceededDeliveryDays: 1, EndedSessionDays: 1}
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	q := e.queue(nil)
	hook := e.hook(identity.EventUserCreated)
	count := func() (deliveries, sessions int) {
		err := e.st.Store.View(e.ctx, func(tx store.Tx) error {
			ds, err := tx.Deliveries("acme", hook)
			if err != nil {
				return err
			}
			ss, err := tx.UserSessions("acme", e.ada.ID)
			deliveries, sessions = len(ds), len(ss)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return deliveries, sessions
	}
	var perDay []string
	for hour := 1; hour <= 7*24; hour++ {
		e.clock.Advance(time.Hour)
		e.user(fmt.Sprint("user-", hour))
		if _, err := e.ws.Login(e.ctx, "ada", adaPassword); err != nil {
			t.Fatal(err)
		}
		for _, job := range e.lease(q, owner) {
			e.attempt(q, job, identity.Result{Status: 204})
		}
		if _, err := e.svc.Sweep(e.ctx, e.clock.Now()); err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		if hour%24 == 0 {
			d, s := count()
			perDay = append(perDay, fmt.Sprintf("day %d: %d deliveries, %d sessions", hour/24, d, s))
		}
	}
	want := []string{
		"day 1: 24 deliveries, 24 sessions",
		"day 2: 24 deliveries, 48 sessions",
		"day 3: 24 deliveries, 48 sessions",
		"day 4: 24 deliveries, 48 sessions",
		"day 5: 24 deliveries, 48 sessions",
		"day 6: 24 deliveries, 48 sessions",
		"day 7: 24 deliveries, 48 sessions",
	}
	if diff := cmp.Diff(want, perDay); diff != "" {
		t.Errorf("records at the end of each day (-want +got):\n%s", diff)
	}
}
