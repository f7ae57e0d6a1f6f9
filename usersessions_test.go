package identity_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// RevokeUserSessions ends the user's active sessions, each with its audit
// record, and counts them; sessions revoked before, and other users'
// sessions, are left alone; an unknown user is CodeNotFound.
func TestRevokeUserSessions(t *testing.T) {
	e := newTestEnv(t, nil)
	bob := e.user("bob")
	var ada []identity.CreatedSession
	for range 3 {
		s, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		ada = append(ada, s)
	}
	bobs, err := e.ws.CreateSession(e.ctx, bob.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ws.RevokeSession(e.ctx, ada[0].Session.ID); err != nil {
		t.Fatal(err)
	}
	before, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSessionRevoked)}, nil)
	if err != nil {
		t.Fatal(err)
	}

	n, err := e.ws.RevokeUserSessions(e.ctx, e.ada.ID)
	if err != nil || n != 2 {
		t.Fatalf("RevokeUserSessions(ada) = %d, %v; want 2, nil", n, err)
	}
	for i, s := range ada {
		if _, err := e.ws.VerifySession(e.ctx, s.Secret); identity.ErrorCode(err) != identity.CodeUnauthenticated {
			t.Errorf("ada's session %d: VerifySession: %v, want CodeUnauthenticated", i, err)
		}
	}
	if _, err := e.ws.VerifySession(e.ctx, bobs.Secret); err != nil {
		t.Errorf("bob's session: %v", err)
	}
	after, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSessionRevoked)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range after.Records {
		got = append(got, r.Target.ID+" "+r.Changes["sessionId"].Before.(string))
	}
	// One record per session revoked, ada[0]'s by RevokeSession before
	// and none more for it. The test's clock stands still, so the records
	// share their time and their order is their ids' random part: compare
	// them as a set.
	if len(before.Records) != 1 {
		t.Fatalf("before: %d session.revoked records, want 1", len(before.Records))
	}
	id := strconv.FormatInt(e.ada.ID, 10)
	want := []string{id + " " + ada[0].Session.ID, id + " " + ada[1].Session.ID, id + " " + ada[2].Session.ID}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session.revoked records (-want +got):\n%s", diff)
	}

	if n, err := e.ws.RevokeUserSessions(e.ctx, e.ada.ID); err != nil || n != 0 {
		t.Errorf("again: %d, %v; want 0, nil", n, err)
	}
	if _, err := e.ws.RevokeUserSessions(e.ctx, 999); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("unknown user: %v, want CodeNotFound", err)
	}
}
