package identity_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
)

// TestUpgradeFromPreviousRelease opens, with identity.Open, a copy of a
// bbolt file that the previous release wrote (see
// store/boltstore/testdata/README.md): workspace acme, webhook endpoint 1
// for user.created, and user alice, whose creation queued a webhook
// delivery and a verification email that are both still pending. The
// previous release told its mail jobs apart by endpoint 0 alone; they
// must still read as email jobs, and the delivery as the endpoint's.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("store", "boltstore", "testdata", "previous-release.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "identity.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	svc, err := identity.Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx := t.Context()
	ws, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatalf("Workspace: %v", err)
	}
	alice, err := ws.Authenticate(ctx, "alice", "correct horse battery staple")
	if err != nil {
		t.Fatalf("Authenticate(alice): %v", err)
	}

	written := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ignore := cmpopts.IgnoreFields(identity.Delivery{}, "EventID")
	deliveries, err := listItems(ws.ListDeliveries(ctx, 1, nil))
	if err != nil {
		t.Fatalf("Deliveries(1): %v", err)
	}
	wantDeliveries := []identity.Delivery{{
		ID: 2, EndpointID: 1, EventType: identity.EventUserCreated, Status: identity.DeliveryPending,
		NextAttemptAt: written, CreatedAt: written,
	}}
	if diff := cmp.Diff(wantDeliveries, deliveries, ignore); diff != "" {
		t.Errorf("Deliveries(1) mismatch (-want +got):\n%s", diff)
	}

	jobs, err := listItems(ws.ListEmailJobs(ctx, nil))
	if err != nil {
		t.Fatalf("EmailJobs: %v", err)
	}
	wantJobs := []identity.Delivery{{
		ID: 1, EventType: identity.EmailVerificationJob, Status: identity.DeliveryPending,
		UserID: alice.ID, NextAttemptAt: written, CreatedAt: written,
	}}
	if diff := cmp.Diff(wantJobs, jobs, ignore); diff != "" {
		t.Errorf("EmailJobs mismatch (-want +got):\n%s", diff)
	}
}
