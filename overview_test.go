package identity_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
)

// The dashboard's figures: users, the last 24 hours' sign-ins and
// failures (not the older ones), the locked accounts, the workspace's
// queue, and the endpoints that fail or were disabled.
func TestGetOverview(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Threshold: 5, Duration: time.Hour})
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(25 * time.Hour)
	hooks := []int64{e.hook(identity.EventUserCreated), e.hook(identity.EventUserCreated), e.hook(identity.EventUserCreated)}
	e.user("bea") // deliveries 1, 2 and 3
	q := e.queue(nil)
	failingSince := e.clock.Now()
	e.attempt(q, e.leaseOne(q, 1), identity.Result{Status: 200})
	retry := e.attempt(q, e.leaseOne(q, 2), failure(500))
	e.attempt(q, e.leaseOne(q, 3), failure(410))
	for range 2 {
		if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
			t.Fatal(err)
		}
	}
	e.fail("bea", 5)
	e.fail("ada", 2)

	got, err := e.ws.GetOverview(e.ctx)
	if err != nil {
		t.Fatalf("GetOverview: %v", err)
	}
	want := identity.Overview{
		Since:          e.clock.Now().Add(-24 * time.Hour),
		Users:          2,
		SignIns:        identity.AuditCount{Count: 2},
		SignInFailures: identity.AuditCount{Count: 7},
		LockedUsers:    1,
		Queue:          identity.QueueStats{Pending: 1, NextDue: retry.Next},
		FailingEndpoints: []identity.WebhookEndpoint{
			{ID: hooks[1], Enabled: true, FailingSince: failingSince},
			{ID: hooks[2], FailingSince: failingSince},
		},
	}
	endpoint := cmpopts.IgnoreFields(identity.WebhookEndpoint{}, "URL", "Description", "Events", "CreatedAt", "Version")
	if diff := cmp.Diff(want, got, endpoint); diff != "" {
		t.Errorf("GetOverview (-want +got):\n%s", diff)
	}

	// Past OverviewCountMax the counts are capped.
	e.putAuditRecords(identity.AuditSignInSucceeded, identity.OutcomeSuccess, e.clock.Now().Add(-time.Hour), identity.OverviewCountMax)
	got, err = e.ws.GetOverview(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.AuditCount{Count: identity.OverviewCountMax, Capped: true}, got.SignIns); diff != "" {
		t.Errorf("SignIns past the cap (-want +got):\n%s", diff)
	}
	e.st.set(true, false)
	if _, err := e.ws.GetOverview(e.ctx); identity.ErrorCode(err) != identity.CodeInternal {
		t.Errorf("a failing store: %v, want CodeInternal", err)
	}
}
