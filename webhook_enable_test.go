package identity_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// An endpoint disabled after 5 days of failures shows since when it
// failed; EnableWebhook enables it with its record, clears the streak so
// that the next failure does not disable it again at once, and lets its
// failed deliveries be retried; enabling an enabled endpoint changes
// nothing and writes nothing.
func TestEnableWebhook(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	hook := e.hook(identity.EventUserCreated)
	t0 := e.clock.Now()
	endpoint := func() identity.WebhookEndpoint {
		t.Helper()
		ep, err := e.ws.GetWebhook(e.ctx, hook)
		if err != nil {
			t.Fatal(err)
		}
		return identity.WebhookEndpoint{Enabled: ep.Enabled, FailingSince: ep.FailingSince}
	}
	e.user("bea") // delivery 1
	if out := e.attempt(q, e.leaseOne(q, 1), failure(500)); out.Status != identity.DeliveryPending {
		t.Fatalf("first failure: %+v", out)
	}
	if diff := cmp.Diff(identity.WebhookEndpoint{Enabled: true, FailingSince: t0}, endpoint()); diff != "" {
		t.Errorf("failing (-want +got):\n%s", diff)
	}
	e.clock.Advance(5 * 24 * time.Hour)
	e.user("cy") // delivery 2
	if out := e.attempt(q, e.leaseOne(q, 2), failure(500)); !out.Disabled {
		t.Fatalf("failure after 5 days: %+v, want the endpoint disabled", out)
	}
	if diff := cmp.Diff(identity.WebhookEndpoint{Enabled: false, FailingSince: t0}, endpoint()); diff != "" {
		t.Errorf("disabled (-want +got):\n%s", diff)
	}
	if err := e.ws.RetryDelivery(e.ctx, 2); identity.ErrorCode(err) != identity.CodeConflict {
		t.Fatalf("RetryDelivery of a disabled endpoint's delivery = %v, want CodeConflict", err)
	}

	e.clock.Advance(time.Second)
	since := e.clock.Now()
	if err := e.ws.EnableWebhook(e.ctx, hook); err != nil {
		t.Fatalf("EnableWebhook: %v", err)
	}
	if diff := cmp.Diff(identity.WebhookEndpoint{Enabled: true}, endpoint()); diff != "" {
		t.Errorf("enabled (-want +got):\n%s", diff)
	}
	recs := e.trail(since)
	want := []identity.AuditRecord{{
		Workspace: "acme", Actor: identity.Actor{Kind: identity.ActorSystem},
		Action: identity.AuditWebhookEnabled, Outcome: identity.OutcomeSuccess,
		Target: identity.AuditTarget{Kind: identity.TargetWebhook, ID: "1", Display: "https://hooks.example.com/identity"},
		Changes: map[string]identity.AuditChange{
			"enabled":      {Before: false, After: true},
			"failingSince": {Before: "2026-03-14T15:09:26.535897Z"},
		},
	}}
	if diff := cmp.Diff(want, recs, ignoreIDAndTime); diff != "" {
		t.Errorf("trail (-want +got):\n%s", diff)
	}

	// The next failure starts a new streak.
	e.user("dee") // delivery 3
	if out := e.attempt(q, e.leaseOne(q, 3), failure(500)); out.Status != identity.DeliveryPending || out.Disabled {
		t.Errorf("first failure after enabling: %+v, want pending", out)
	}
	if err := e.ws.RetryDelivery(e.ctx, 2); err != nil {
		t.Errorf("RetryDelivery after enabling: %v", err)
	}

	// Again: nothing changes, nothing is recorded.
	since = e.clock.Now().Add(time.Microsecond)
	e.clock.Advance(time.Second)
	if err := e.ws.EnableWebhook(e.ctx, hook); err != nil {
		t.Fatalf("EnableWebhook again: %v", err)
	}
	if got := e.trail(since); len(got) != 0 {
		t.Errorf("EnableWebhook of an enabled endpoint wrote %+v", got)
	}
	for _, id := range []int64{0, -1, 99} {
		if err := e.ws.EnableWebhook(e.ctx, id); identity.ErrorCode(err) != identity.CodeNotFound {
			t.Errorf("EnableWebhook(%d) = %v, want CodeNotFound", id, err)
		}
	}
}
