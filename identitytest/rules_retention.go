package identitytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// testRuleRetention: on the store under test, Sweep keeps a succeeded
// webhook delivery until 7 days after its attempt and an ended session
// until 90 days after it ended (revoked or expired), and removes each at
// that time, not a microsecond before; a sweep of nothing removes
// nothing.
func testRuleRetention(t *testing.T, e *env) {
	const day = 24 * time.Hour
	hook := e.endpoint(identity.EventUserCreated)
	u := e.user("ada")
	q, err := e.svc.Queue(nil)
	if err != nil {
		t.Fatal(err)
	}
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	leased, err := q.Lease(e.ctx, "rules", q.Now(), time.Minute, due)
	if err != nil || len(leased.Jobs) != 1 {
		t.Fatalf("Lease = %+v, %v; want the user.created job", leased, err)
	}
	att, err := q.Begin(e.ctx, "rules", leased.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Record(e.ctx, "rules", leased.Jobs[0], identity.Result{At: att.At, Status: 204}); err != nil {
		t.Fatal(err)
	}
	created, err := e.ws.Login(e.ctx, "ada", "s3cret-passphrase") // expires after a day
	if err != nil {
		t.Fatal(err)
	}
	s1 := created.Session
	created, err = e.ws.Login(e.ctx, "ada", "s3cret-passphrase")
	if err != nil {
		t.Fatal(err)
	}
	s2 := created.Session
	e.clock.Advance(time.Hour)
	if err := e.ws.RevokeSession(e.ctx, s2.ID); err != nil {
		t.Fatal(err)
	}
	revoked := e.clock.Now()
	count := func() (deliveries, sessions int) {
		t.Helper()
		ds, err := e.ws.ListDeliveries(e.ctx, hook, nil)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := e.ws.ListSessions(e.ctx, u.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ds.Total, ss.Total
	}
	var got []string
	for _, c := range []struct {
		name string
		at   time.Time
	}{
		{"7 d - 1 µs", att.At.Add(7*day - time.Microsecond)},
		{"7 d", att.At.Add(7 * day)},
		{"revoked + 90 d - 1 µs", revoked.Add(90*day - time.Microsecond)},
		{"revoked + 90 d", revoked.Add(90 * day)},
		{"expired + 90 d - 1 µs", s1.ExpiresAt.Add(90*day - time.Microsecond)},
		{"expired + 90 d", s1.ExpiresAt.Add(90 * day)},
		{"again", s1.ExpiresAt.Add(90 * day)},
	} {
		res, err := e.svc.Sweep(e.ctx, c.at)
		if err != nil {
			t.Fatalf("Sweep at %s: %v", c.name, err)
		}
		d, s := count()
		got = append(got, c.name+": "+fmt.Sprint(res.Deliveries, " ", res.Sessions, " removed, ", d, " ", s, " left"))
	}
	want := []string{
		"7 d - 1 µs: 0 0 removed, 1 2 left",
		"7 d: 1 0 removed, 0 2 left",
		"revoked + 90 d - 1 µs: 0 0 removed, 0 2 left",
		"revoked + 90 d: 0 1 removed, 0 1 left",
		"expired + 90 d - 1 µs: 0 0 removed, 0 1 left",
		"expired + 90 d: 0 1 removed, 0 0 left",
		"again: 0 0 removed, 0 0 left",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sweeps: deliveries and sessions removed and left (-want +got):\n%s", diff)
	}
}
