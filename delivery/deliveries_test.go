package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestDeliveriesInspectAndRetry: a delivery's record shows its attempts;
// a failed delivery queued again by RetryDelivery starts its schedule
// over and is delivered; other states and unknown ids are refused.
func TestDeliveriesInspectAndRetry(t *testing.T) {
	clock := newDlvClock()
	env := newDlvEnv(t, clock)
	rc := newDlvReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	hook := env.hook(rc.url("/hook"))
	quiet := env.hook(rc.url("/quiet"), string(identity.EventSessionRevoked))
	ctx := context.Background()

	// Before any dispatcher runs: pending, due now, no attempt.
	env.user("ada")
	ds := env.deliveries(hook.Endpoint.ID)
	if len(ds) != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
	queued := ds[0]
	if queued.Status != identity.DeliveryPending || queued.Attempts != 0 || !queued.NextAttemptAt.Equal(clock.Now()) ||
		queued.EventType != identity.EventUserCreated || queued.EndpointID != hook.Endpoint.ID || !queued.LastAttemptAt.IsZero() {
		t.Errorf("queued delivery %+v", queued)
	}
	if err := env.ws.RetryDelivery(ctx, queued.ID); !errors.Is(err, identity.ErrConflict) {
		t.Errorf("RetryDelivery of a pending delivery: %v, want conflict", err)
	}

	opts := env.options(dlvRoots(rc))
	opts.Retries = []time.Duration{} // one attempt, then failed
	env.start(opts)
	failed := env.waitDeliveries(hook.Endpoint.ID, "the delivery to fail", settled)[0]
	if failed.Status != identity.DeliveryFailed || failed.Attempts != 1 || failed.LastStatus != 500 ||
		failed.LastError != "HTTP status 500" || !failed.LastAttemptAt.Equal(clock.Now()) || !failed.NextAttemptAt.IsZero() {
		t.Errorf("failed delivery %+v", failed)
	}
	got, err := env.ws.GetDelivery(ctx, failed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(failed, got); diff != "" {
		t.Errorf("GetDelivery mismatch (-want +got):\n%s", diff)
	}

	clock.Advance(time.Hour)
	if err := env.ws.RetryDelivery(ctx, failed.ID); err != nil {
		t.Fatal(err)
	}
	done := env.waitDeliveries(hook.Endpoint.ID, "the retried delivery", settled)[0]
	if done.Status != identity.DeliverySucceeded || done.Attempts != 1 || done.LastStatus != 200 || done.LastError != "" ||
		!done.LastAttemptAt.Equal(clock.Now()) || done.EventID != failed.EventID {
		t.Errorf("retried delivery %+v", done)
	}
	if err := env.ws.RetryDelivery(ctx, done.ID); !errors.Is(err, identity.ErrConflict) {
		t.Errorf("RetryDelivery of a succeeded delivery: %v, want conflict", err)
	}
	if n := rc.count(); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}

	// An endpoint with no deliveries lists none, as [] in JSON.
	empty, err := listItems(env.ws.ListDeliveries(ctx, quiet.Endpoint.ID, nil))
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("Deliveries of a quiet endpoint = %#v, %v", empty, err)
	}
	if b, _ := json.Marshal(empty); string(b) != "[]" {
		t.Errorf("JSON of no deliveries = %s", b)
	}
}

func TestDeliveriesNotFound(t *testing.T) {
	env := newDlvEnv(t, nil)
	ctx := context.Background()
	for _, id := range []int64{0, -1, 99} {
		if _, err := listItems(env.ws.ListDeliveries(ctx, id, nil)); !errors.Is(err, identity.ErrNotFound) {
			t.Errorf("Deliveries(%d): %v, want not found", id, err)
		}
		if _, err := env.ws.GetDelivery(ctx, id); !errors.Is(err, identity.ErrNotFound) {
			t.Errorf("GetDelivery(%d): %v, want not found", id, err)
		}
		if err := env.ws.RetryDelivery(ctx, id); !errors.Is(err, identity.ErrNotFound) {
			t.Errorf("RetryDelivery(%d): %v, want not found", id, err)
		}
	}
}

// TestDeliveryJSON: the JSON form uses the REST API's camelCase names and
// leaves out times that are not set.
func TestDeliveryJSON(t *testing.T) {
	d := identity.Delivery{
		ID: 3, EndpointID: 2, EventID: "msg_x", EventType: identity.EventUserCreated,
		Status: identity.DeliverySucceeded, Attempts: 1, LastStatus: 204,
		LastAttemptAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		CreatedAt:     time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC),
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":3,"endpointId":2,"eventId":"msg_x","eventType":"user.created","status":"succeeded","attempts":1,` +
		`"lastStatus":204,"lastError":"","lastAttemptAt":"2026-01-02T03:04:05Z","createdAt":"2026-01-02T03:04:00Z"}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
	if strings.Contains(string(b), "payload") {
		t.Error("the payload is part of the JSON")
	}
}
