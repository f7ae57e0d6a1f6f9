package identity_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
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

// TestWorkspaceQueueStatsCapped: a workspace's share is counted among the
// QueueStatsWalkMax earliest due jobs of every workspace, exactly while
// the queue holds no more, a floor (Capped) once it holds more, with no
// NextDue when none of the workspace's jobs is among them; GetOverview
// carries the same; the Service's count stays exact.
func TestWorkspaceQueueStatsCapped(t *testing.T) {
	e := newTestEnv(t, nil)
	if _, err := e.svc.CreateWorkspace(e.ctx, "globex", nil); err != nil {
		t.Fatal(err)
	}
	base := e.clock.Now().UTC().Truncate(time.Microsecond)
	mail := func(id int64, due time.Duration, status store.DeliveryStatus) store.Delivery {
		return store.Delivery{ID: id, Kind: store.JobMail, EventType: "email.verification", Payload: []byte("{}"),
			CreatedAt: base, Status: status, NextAttemptAt: base.Add(due)}
	}
	put := func(slug string, jobs ...store.Delivery) {
		t.Helper()
		err := e.st.Update(e.ctx, func(tx store.Tx) error {
			for _, d := range jobs {
				if err := tx.PutDelivery(slug, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// globex: QueueStatsWalkMax - 1 jobs, due 1 s to 9,999 s after base.
	var globex []store.Delivery
	for id := int64(1); id < identity.QueueStatsWalkMax; id++ {
		globex = append(globex, mail(id, time.Duration(id)*time.Second, store.DeliveryPending))
	}
	put("globex", globex...)
	stats := func() map[string]identity.QueueStats {
		t.Helper()
		out := map[string]identity.QueueStats{}
		for _, slug := range []string{"acme", "globex"} {
			ws, err := e.svc.GetWorkspace(e.ctx, slug)
			if err != nil {
				t.Fatal(err)
			}
			if out[slug], err = ws.GetQueueStats(e.ctx); err != nil {
				t.Fatalf("%s: GetQueueStats: %v", slug, err)
			}
		}
		o, err := e.ws.GetOverview(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(out["acme"], o.Queue); diff != "" {
			t.Errorf("acme: GetOverview's Queue differs from GetQueueStats (-stats +overview):\n%s", diff)
		}
		if out["service"], err = e.svc.GetQueueStats(e.ctx); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, step := range []struct {
		name         string
		acme, globex []store.Delivery // changes of the jobs
		want         map[string]identity.QueueStats
	}{
		{
			"10,001 jobs: acme's second is past the walk",
			[]store.Delivery{mail(901, 0, store.DeliveryPending), mail(902, 20000*time.Second, store.DeliveryPending)}, nil,
			map[string]identity.QueueStats{
				"acme":    {Pending: 1, NextDue: base, Capped: true},
				"globex":  {Pending: 9999, NextDue: base.Add(time.Second), Capped: true},
				"service": {Pending: 10001, NextDue: base},
			},
		},
		{
			"10,000 jobs: the walk reaches the end",
			[]store.Delivery{mail(902, 20000*time.Second, store.DeliverySucceeded)}, nil,
			map[string]identity.QueueStats{
				"acme":    {Pending: 1, NextDue: base},
				"globex":  {Pending: 9999, NextDue: base.Add(time.Second)},
				"service": {Pending: 10000, NextDue: base},
			},
		},
		{
			"10,001 jobs: acme's one job is past the walk",
			[]store.Delivery{mail(901, 0, store.DeliverySucceeded), mail(902, 20000*time.Second, store.DeliveryPending)},
			[]store.Delivery{mail(10000, 10000*time.Second, store.DeliveryPending)},
			map[string]identity.QueueStats{
				"acme":    {Capped: true},
				"globex":  {Pending: 10000, NextDue: base.Add(time.Second), Capped: true},
				"service": {Pending: 10001, NextDue: base.Add(time.Second)},
			},
		},
	} {
		put("acme", step.acme...)
		put("globex", step.globex...)
		if diff := cmp.Diff(step.want, stats()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.name, diff)
		}
	}
}
