package identity_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestQueueStats: the depth of the queue and its earliest due time, and
// the age of that job by a clock.
func TestQueueStats(t *testing.T) {
	e := newTestEnv(t, nil)
	st, err := e.svc.GetQueueStats(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.QueueStats{}, st); diff != "" {
		t.Errorf("empty queue (-want +got):\n%s", diff)
	}
	if age := st.OldestDueAge(e.clock.Now()); age != 0 {
		t.Errorf("empty queue: age %v, want 0", age)
	}

	e.hook(identity.EventUserCreated)
	first := e.clock.Now().UTC().Truncate(time.Microsecond)
	e.user("grace")
	e.clock.Advance(time.Minute)
	e.user("alan")
	e.clock.Advance(time.Minute)
	st, err = e.svc.GetQueueStats(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.QueueStats{Pending: 2, NextDue: first}, st); diff != "" {
		t.Errorf("two jobs (-want +got):\n%s", diff)
	}
	if age := st.OldestDueAge(e.clock.Now()); age != 2*time.Minute {
		t.Errorf("age %v, want 2m", age)
	}
	if age := st.OldestDueAge(first.Add(-time.Second)); age != 0 {
		t.Errorf("age before the job is due: %v, want 0", age)
	}

	e.st.set(true, false)
	if _, err := e.svc.GetQueueStats(e.ctx); identity.ErrorCode(err) != identity.CodeInternal {
		t.Errorf("a failing store: %v, want CodeInternal", err)
	}
}

// TestWorkspaceQueueStats: each workspace's own share of the queue, its
// jobs' number and earliest due time, beside the Service's of all; a
// delivered job leaves it.
func TestWorkspaceQueueStats(t *testing.T) {
	e := newTestEnv(t, nil)
	other, err := e.svc.CreateWorkspace(e.ctx, "globex", nil)
	if err != nil {
		t.Fatal(err)
	}
	stats := func() map[string]identity.QueueStats {
		t.Helper()
		out := map[string]identity.QueueStats{}
		for _, ws := range []*identity.Workspace{e.ws, other} {
			st, err := ws.GetQueueStats(e.ctx)
			if err != nil {
				t.Fatalf("%s: GetQueueStats: %v", ws.Slug(), err)
			}
			out[ws.Slug()] = st
		}
		st, err := e.svc.GetQueueStats(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		out["service"] = st
		return out
	}
	if diff := cmp.Diff(map[string]identity.QueueStats{"acme": {}, "globex": {}, "service": {}}, stats()); diff != "" {
		t.Errorf("empty (-want +got):\n%s", diff)
	}
	e.hook(identity.EventUserCreated)
	if _, err := other.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/globex", Events: []string{string(identity.EventUserCreated)}}); err != nil {
		t.Fatal(err)
	}
	first := e.clock.Now().UTC().Truncate(time.Microsecond)
	e.user("grace")
	e.clock.Advance(time.Minute)
	e.user("alan")
	e.clock.Advance(time.Minute)
	if _, err := other.CreateUser(e.ctx, newUserNamed("hedy")); err != nil {
		t.Fatal(err)
	}
	want := map[string]identity.QueueStats{
		"acme":    {Pending: 2, NextDue: first},
		"globex":  {Pending: 1, NextDue: first.Add(2 * time.Minute)},
		"service": {Pending: 3, NextDue: first},
	}
	if diff := cmp.Diff(want, stats()); diff != "" {
		t.Errorf("three jobs (-want +got):\n%s", diff)
	}
	q := e.queue(nil)
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	var acme1 []identity.DueJob
	for _, d := range due {
		if d.Workspace == "acme" && d.ID == 1 {
			acme1 = append(acme1, d)
		}
	}
	leased, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, acme1)
	if err != nil || len(leased.Jobs) != 1 {
		t.Fatalf("Lease = %+v, %v; want acme's job 1", leased, err)
	}
	e.attempt(q, leased.Jobs[0], identity.Result{Status: 200})
	want["acme"] = identity.QueueStats{Pending: 1, NextDue: first.Add(time.Minute)}
	want["service"] = identity.QueueStats{Pending: 2, NextDue: first.Add(time.Minute)}
	if diff := cmp.Diff(want, stats()); diff != "" {
		t.Errorf("after a delivery (-want +got):\n%s", diff)
	}
	e.st.set(true, false)
	if _, err := e.ws.GetQueueStats(e.ctx); identity.ErrorCode(err) != identity.CodeInternal {
		t.Errorf("a failing store: %v, want CodeInternal", err)
	}
}
