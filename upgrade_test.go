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

// TestUpgradeBeforeRoles opens, with identity.Open, a copy of a bbolt
// file written before roles were records (see
// store/boltstore/testdata/README.md): its assigned role ids become roles
// named role-<id>, dated by the Service's clock, which the users hold as
// before; new roles take ids after the largest; the old client receives
// no claims of its own; tokens carry the roles.
func TestUpgradeBeforeRoles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("store", "boltstore", "testdata", "before-roles.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "identity.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	upgraded := time.Date(2026, 11, 27, 12, 0, 0, 123456000, time.UTC)
	svc, err := identity.Open(path, &identity.Options{Now: func() time.Time { return upgraded }})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx := t.Context()
	ws, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	roles, err := ws.ListRoles(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []identity.Role{
		{ID: 3, Name: "role-3", CreatedAt: upgraded, UpdatedAt: upgraded},
		{ID: 7, Name: "role-7", CreatedAt: upgraded, UpdatedAt: upgraded},
	}
	if diff := cmp.Diff(want, roles.Items, cmpopts.IgnoreFields(identity.Role{}, "Version")); diff != "" || roles.Total != 2 {
		t.Errorf("the roles of the upgraded file: total %d (-want +got):\n%s", roles.Total, diff)
	}
	held, err := ws.ListUserRoles(ctx, 1)
	if err != nil || len(held) != 2 || held[0].Name != "role-3" || held[1].Name != "role-7" || !held[0].Direct {
		t.Errorf("ada's roles = %+v, %v; want role-3 and role-7, directly", held, err)
	}
	holders, err := ws.ListRoleHolders(ctx, 7, nil)
	if err != nil || holders.Total != 2 {
		t.Errorf("holders of role-7 = %+v, %v; want ada and bob", holders, err)
	}
	next, err := ws.CreateRole(ctx, identity.NewRole{Name: "auditor"})
	if err != nil || next.ID != 8 {
		t.Errorf("the first role created after the upgrade = id %d, %v; want 8", next.ID, err)
	}
	clients, err := ws.ListClients(ctx)
	if err != nil || len(clients) != 1 || len(clients[0].Claims) != 0 {
		t.Errorf("the old client = %+v, %v; want one, with no claims", clients, err)
	}
}
