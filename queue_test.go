package identity_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// The queue's rules, driven through identity.Queue as a dispatcher does
// (Due, Lease, Begin, Record) on the fake clock, with the documented
// values written out.

const owner = "dispatcher-1"

// queue returns the Service's queue under policy (nil: the defaults).
func (e *testEnv) queue(policy *identity.RetryPolicy) *identity.Queue {
	e.t.Helper()
	q, err := e.svc.Queue(policy)
	if err != nil {
		e.t.Fatalf("Queue: %v", err)
	}
	return q
}

// lease leases the due jobs with the ids (every due job when none is
// named) to who for a minute, and returns them in id order.
func (e *testEnv) lease(q *identity.Queue, who string, ids ...int64) []identity.Job {
	e.t.Helper()
	due, err := q.ListDue(e.ctx, q.Now(), 100)
	if err != nil {
		e.t.Fatalf("Due: %v", err)
	}
	var chosen []identity.DueJob
	for _, d := range due {
		if len(ids) == 0 || slices.Contains(ids, d.ID) {
			chosen = append(chosen, d)
		}
	}
	leased, err := q.Lease(e.ctx, who, q.Now(), time.Minute, chosen)
	if err != nil {
		e.t.Fatalf("Lease: %v", err)
	}
	if leased.Failed != 0 || leased.Lost != 0 {
		e.t.Fatalf("Lease = %+v, want every chosen job leased", leased)
	}
	slices.SortFunc(leased.Jobs, func(a, b identity.Job) int { return int(a.ID - b.ID) })
	return leased.Jobs
}

// leaseOne leases the one due job with the id.
func (e *testEnv) leaseOne(q *identity.Queue, id int64) identity.Job {
	e.t.Helper()
	jobs := e.lease(q, owner, id)
	if len(jobs) != 1 {
		e.t.Fatalf("leased %d jobs, want job %d", len(jobs), id)
	}
	return jobs[0]
}

// attempt begins an attempt of job and records res for it, its At set
// from Begin.
func (e *testEnv) attempt(q *identity.Queue, job identity.Job, res identity.Result) identity.Outcome {
	e.t.Helper()
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil {
		e.t.Fatalf("Begin: %v", err)
	}
	res.At = att.At
	out, err := q.Record(e.ctx, owner, job, res)
	if err != nil {
		e.t.Fatalf("Record: %v", err)
	}
	return out
}

// failure is a failed webhook attempt answered with status.
func failure(status int) identity.Result {
	return identity.Result{Status: status, Err: fmt.Errorf("status %d", status)}
}

// within fails the test unless got is wait, jittered by at most ±20%.
func within(t *testing.T, what string, got, wait time.Duration) {
	t.Helper()
	if lo, hi := wait*8/10, wait*12/10; got < lo || got > hi {
		t.Errorf("%s: waited %v, want %v ±20%% (%v to %v)", what, got, wait, lo, hi)
	}
}

// TestRetrySchedule: a webhook delivery is attempted at once, then after
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each ±20%: eight attempts;
// the eighth failure marks it failed. No job is due before its time.
func TestRetrySchedule(t *testing.T) {
	documented := []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
	if diff := cmp.Diff(documented, identity.DefaultRetryDelays()); diff != "" {
		t.Errorf("DefaultRetryDelays (-documented +got):\n%s", diff)
	}
	for _, policy := range []*identity.RetryPolicy{nil, {}, {DisableAfter: 30 * 24 * time.Hour}} {
		e := newTestEnv(t, nil)
		q := e.queue(policy)
		hook := e.hook(identity.EventUserCreated)
		e.user("bob")
		for attempt := 1; attempt <= 8; attempt++ {
			job := e.leaseOne(q, 1)
			if job.Attempts != attempt-1 {
				t.Fatalf("attempt %d: job.Attempts = %d", attempt, job.Attempts)
			}
			now := q.Now()
			out := e.attempt(q, job, failure(503))
			d, err := e.ws.GetDelivery(e.ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if attempt == 8 {
				want := identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1}
				if diff := cmp.Diff(want, out); diff != "" {
					t.Fatalf("the eighth failure (-want +got):\n%s", diff)
				}
				if d.Status != identity.DeliveryFailed || d.Attempts != 8 || !d.NextAttemptAt.IsZero() {
					t.Errorf("after the eighth failure: %+v", d)
				}
				break
			}
			if out.Status != identity.DeliveryPending || out.Exhausted != 0 || out.Disabled || out.Dropped {
				t.Fatalf("failure %d: %+v, want pending", attempt, out)
			}
			within(t, fmt.Sprintf("wait after failure %d", attempt), out.Next.Sub(now), documented[attempt-1])
			if d.Status != identity.DeliveryPending || d.Attempts != attempt || !d.NextAttemptAt.Equal(out.Next) ||
				d.LastStatus != 503 || d.LastError != "status 503" {
				t.Errorf("after failure %d: %+v", attempt, d)
			}
			// Not due a microsecond before its time; due at it.
			e.clock.Set(out.Next.Add(-time.Microsecond))
			if due, err := q.ListDue(e.ctx, q.Now(), 10); err != nil || len(due) != 0 {
				t.Fatalf("Due before the next attempt = %+v, %v", due, err)
			}
			e.clock.Set(out.Next)
		}
		hooks, err := e.ws.GetWebhook(e.ctx, hook)
		if err != nil || !hooks.Enabled {
			t.Errorf("the endpoint after a failed delivery: %+v, %v; want enabled", hooks, err)
		}
	}
}

// TestRetryJitter: the waits are spread over ±20%, so that the retries of
// deliveries that failed together do not arrive together.
func TestRetryJitter(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	for range 50 {
		e.hook(identity.EventUserCreated)
	}
	e.user("bob")
	now := q.Now()
	var waits []time.Duration
	for _, job := range e.lease(q, owner) {
		out := e.attempt(q, job, failure(500))
		waits = append(waits, out.Next.Sub(now))
	}
	if len(waits) != 50 {
		t.Fatalf("%d deliveries failed, want 50", len(waits))
	}
	for _, w := range waits {
		within(t, "first wait", w, 5*time.Second)
	}
	// Each wait falls in either outer tenth with probability 1/4: all
	// fifty missing one of them has odds below 1e-6.
	if lo, hi := slices.Min(waits), slices.Max(waits); lo > 4500*time.Millisecond || hi < 5500*time.Millisecond {
		t.Errorf("waits span %v to %v, want them spread over 4 s to 6 s", lo, hi)
	}
}

// TestRetryPolicy: custom waits, a single attempt, and invalid policies.
func TestRetryPolicy(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, bad := range []struct {
		policy identity.RetryPolicy
		fields []identity.FieldError
	}{
		{identity.RetryPolicy{Retries: []time.Duration{time.Second, -time.Second}}, field("Retries", "range")},
		// Several negative waits are one problem.
		{identity.RetryPolicy{Retries: []time.Duration{-time.Second, time.Second, -time.Minute}}, field("Retries", "range")},
		{identity.RetryPolicy{DisableAfter: -time.Hour}, field("DisableAfter", "range")},
	} {
		_, err := e.svc.Queue(&bad.policy)
		identitytest.WantCode(t, err, identity.CodeInvalid)
		identitytest.WantFields(t, err, bad.fields)
	}
	custom := []time.Duration{time.Minute, 0}
	q := e.queue(&identity.RetryPolicy{Retries: custom})
	custom[0] = time.Hour // the queue keeps its own copy
	e.hook(identity.EventUserCreated)
	e.user("bob")
	now := q.Now()
	out := e.attempt(q, e.leaseOne(q, 1), failure(500))
	within(t, "custom first wait", out.Next.Sub(now), time.Minute)
	e.clock.Set(out.Next)
	out = e.attempt(q, e.leaseOne(q, 1), failure(500))
	if out.Status != identity.DeliveryPending || !out.Next.Equal(q.Now()) {
		t.Errorf("a zero wait: %+v, want due at once", out)
	}
	out = e.attempt(q, e.leaseOne(q, 1), failure(500))
	if diff := cmp.Diff(identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1}, out); diff != "" {
		t.Errorf("third failure of two retries (-want +got):\n%s", diff)
	}

	single := e.queue(&identity.RetryPolicy{Retries: []time.Duration{}})
	e.user("carol")
	out = e.attempt(single, e.leaseOne(single, 2), failure(500))
	if diff := cmp.Diff(identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1}, out); diff != "" {
		t.Errorf("a single attempt (-want +got):\n%s", diff)
	}
}

// TestRetryAfter: a 429 or 503 with Retry-After waits at least that long,
// at most twice the scheduled wait (5 s ±20% after the first attempt).
func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{"none: the schedule", 0, 4 * time.Second, 6 * time.Second},
		{"shorter than the schedule: the schedule", 3 * time.Second, 4 * time.Second, 6 * time.Second},
		{"longer: honored", 7 * time.Second, 7 * time.Second, 7 * time.Second},
		{"far longer: twice the scheduled wait", time.Hour, 8 * time.Second, 12 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			q := e.queue(nil)
			e.hook(identity.EventUserCreated)
			e.user("bob")
			now := q.Now()
			res := failure(429)
			res.RetryAfter = tt.retryAfter
			out := e.attempt(q, e.leaseOne(q, 1), res)
			if got := out.Next.Sub(now); got < tt.lo || got > tt.hi {
				t.Errorf("Retry-After %v: waited %v, want %v to %v", tt.retryAfter, got, tt.lo, tt.hi)
			}
		})
	}
}

// TestDisableEndpoint: a 410 Gone disables the endpoint at once; an
// endpoint whose deliveries have failed for 5 days without a success is
// disabled; a success ends the failing spell. Disabling fails every
// pending delivery of the endpoint with "endpoint disabled".
func TestDisableEndpoint(t *testing.T) {
	const day = 24 * time.Hour
	type step struct {
		at     time.Duration // since the first failure
		status int           // 200 succeeds
		want   identity.Outcome
	}
	pending := identity.Outcome{Status: identity.DeliveryPending}
	tests := []struct {
		name     string
		steps    []step
		disabled bool
	}{
		{"410 at once", []step{
			{0, 410, identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1, Disabled: true}},
		}, true},
		{"a 410 after other failures fails the pending ones too", []step{
			{0, 500, pending},
			{time.Minute, 410, identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 2, Disabled: true}},
		}, true},
		{"failing 5 days less 1 µs", []step{
			{0, 500, pending},
			{3 * day, 500, pending},
			{5*day - time.Microsecond, 500, pending},
		}, false},
		{"failing 5 days", []step{
			{0, 500, pending},
			{3 * day, 500, pending},
			{5 * day, 500, identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 3, Disabled: true}},
		}, true},
		{"a success ends the failing spell", []step{
			{0, 500, pending},
			{day, 200, identity.Outcome{Status: identity.DeliverySucceeded}},
			{5 * day, 500, pending},
			{6*day - time.Microsecond, 500, pending},
			{6 * day, 500, pending},
			{10*day - time.Microsecond, 500, pending},
			{10 * day, 500, identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 6, Disabled: true}},
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			q := e.queue(nil)
			hook := e.hook(identity.EventUserCreated)
			start := e.clock.Now()
			for i, s := range tt.steps {
				e.clock.Set(start.Add(s.at))
				e.user("user" + string(rune('a'+i))) // delivery i+1
				res := identity.Result{Status: s.status}
				if s.status != 200 {
					res = failure(s.status)
				}
				out := e.attempt(q, e.leaseOne(q, int64(i+1)), res)
				out.Next = time.Time{}
				if diff := cmp.Diff(s.want, out); diff != "" {
					t.Fatalf("step %d at %v (-want +got):\n%s", i, s.at, diff)
				}
			}
			ep, err := e.ws.GetWebhook(e.ctx, hook)
			if err != nil {
				t.Fatal(err)
			}
			if ep.Enabled == tt.disabled {
				t.Fatalf("endpoint enabled = %v, want %v", ep.Enabled, !tt.disabled)
			}
			if !tt.disabled {
				return
			}
			ds, err := listItems(e.ws.ListDeliveries(e.ctx, hook, nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if d.Status == identity.DeliveryPending {
					t.Errorf("delivery %d pending after the endpoint was disabled", d.ID)
				}
			}
			// A disabled endpoint gets no new deliveries, and a failed one
			// cannot be retried.
			e.user("late")
			if after, err := listItems(e.ws.ListDeliveries(e.ctx, hook, nil)); err != nil || len(after) != len(ds) {
				t.Errorf("%d deliveries after a new event (%v), want %d", len(after), err, len(ds))
			}
			identitytest.WantCode(t, e.ws.RetryDelivery(e.ctx, ds[0].ID), identity.CodeConflict)
		})
	}
}

// TestDisablingFailsOthers: the deliveries failed by disabling carry the
// error "endpoint disabled"; the one that disabled it its own.
func TestDisablingFailsOthers(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	e.user("carol")
	out := e.attempt(q, e.leaseOne(q, 1), failure(410))
	if diff := cmp.Diff(identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 2, Disabled: true}, out); diff != "" {
		t.Errorf("410 (-want +got):\n%s", diff)
	}
	ds, err := listItems(e.ws.ListDeliveries(e.ctx, hook, nil))
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Status    identity.DeliveryStatus
		Attempts  int
		LastError string
	}
	var got []summary
	for _, d := range ds {
		got = append(got, summary{d.Status, d.Attempts, d.LastError})
	}
	want := []summary{{"failed", 1, "status 410"}, {"failed", 0, "endpoint disabled"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
}

// TestSuccessRecorded: a success is recorded with its status, and the
// webhook attempt carries the event's id, the endpoint's URL and secret
// and the stored body.
func TestSuccessRecorded(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	created, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/a", Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	e.user("bob")
	job := e.leaseOne(q, 1)
	want := identity.Job{Workspace: "acme", ID: 1, Kind: identity.WebhookJob, EndpointID: created.Endpoint.ID, EventType: identity.EventUserCreated}
	if diff := cmp.Diff(want, job, cmpopts.IgnoreUnexported(identity.Job{})); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(identity.Lane{Workspace: "acme", EndpointID: created.Endpoint.ID}, job.Lane()); diff != "" {
		t.Errorf("lane (-want +got):\n%s", diff)
	}
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.ws.GetDelivery(e.ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	stored := e.stored(1)
	wantReq := &identity.WebhookRequest{
		URL: "https://hooks.example.com/a", Secret: created.Secret, EventID: d.EventID, Timestamp: q.Now(), Body: stored.Payload,
	}
	if diff := cmp.Diff(identity.Attempt{At: q.Now(), Webhook: wantReq}, att); diff != "" {
		t.Errorf("attempt (-want +got):\n%s", diff)
	}
	out, err := q.Record(e.ctx, owner, job, identity.Result{At: att.At, Status: 204})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.Outcome{Status: identity.DeliverySucceeded}, out); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	d, err = e.ws.GetDelivery(e.ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != identity.DeliverySucceeded || d.Attempts != 1 || d.LastStatus != 204 || d.LastError != "" ||
		!d.LastAttemptAt.Equal(att.At) || !d.NextAttemptAt.IsZero() {
		t.Errorf("delivery after success: %+v", d)
	}
	if n, err := q.CountPending(e.ctx); err != nil || n != 0 {
		t.Errorf("Pending = %d, %v; want 0", n, err)
	}
	identitytest.WantCode(t, e.ws.RetryDelivery(e.ctx, 1), identity.CodeConflict)
}

// TestLeaseTakenOver: a job whose lease passed to another owner is not
// sent (Begin: ErrLeaseLost) and its result is dropped, writing nothing;
// a leased job is not leased again until its lease ends.
func TestLeaseTakenOver(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	e.hook(identity.EventUserCreated)
	e.user("bob")
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("Due = %+v, %v", due, err)
	}
	mine, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, due)
	if err != nil || len(mine.Jobs) != 1 {
		t.Fatalf("Lease = %+v, %v", mine, err)
	}
	if !mine.HasNext || !mine.NextDue.Equal(q.Now().Add(time.Minute)) {
		t.Errorf("Lease: NextDue %v (%v), want the lease's end", mine.NextDue, mine.HasNext)
	}
	// While the lease lasts, nobody else leases the job.
	theirs, err := q.Lease(e.ctx, "dispatcher-2", q.Now(), time.Minute, due)
	if err != nil || len(theirs.Jobs) != 0 || theirs.Lost != 1 {
		t.Fatalf("a second Lease during the lease = %+v, %v; want it lost", theirs, err)
	}
	e.clock.Advance(time.Minute - time.Microsecond)
	if due, err := q.ListDue(e.ctx, q.Now(), 10); err != nil || len(due) != 0 {
		t.Fatalf("due before the lease ended: %+v, %v", due, err)
	}
	e.clock.Advance(time.Microsecond)
	theirs, err = q.Lease(e.ctx, "dispatcher-2", q.Now(), time.Minute, due)
	if err != nil || len(theirs.Jobs) != 1 {
		t.Fatalf("Lease after the lease ended = %+v, %v", theirs, err)
	}
	before := e.stored(1)
	if before.LeaseOwner != "dispatcher-2" {
		t.Fatalf("lease owner %q, want dispatcher-2", before.LeaseOwner)
	}
	if _, err := q.Begin(e.ctx, owner, mine.Jobs[0]); !errors.Is(err, identity.ErrLeaseLost) {
		t.Errorf("Begin by the old owner = %v, want ErrLeaseLost", err)
	}
	out, err := q.Record(e.ctx, owner, mine.Jobs[0], failure(500))
	if err != nil || !out.Dropped {
		t.Errorf("Record by the old owner = %+v, %v; want dropped", out, err)
	}
	if diff := cmp.Diff(before, e.stored(1)); diff != "" {
		t.Errorf("a dropped result changed the delivery (-before +after):\n%s", diff)
	}
	// The new owner's result counts.
	att, err := q.Begin(e.ctx, "dispatcher-2", theirs.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	out, err = q.Record(e.ctx, "dispatcher-2", theirs.Jobs[0], identity.Result{At: att.At, Status: 200})
	if err != nil || out.Status != identity.DeliverySucceeded {
		t.Errorf("Record by the new owner = %+v, %v", out, err)
	}
	// A finished job is no longer leased to anyone.
	if _, err := q.Begin(e.ctx, "dispatcher-2", theirs.Jobs[0]); !errors.Is(err, identity.ErrLeaseLost) {
		t.Errorf("Begin of a succeeded job = %v, want ErrLeaseLost", err)
	}
	if out, err := q.Record(e.ctx, "dispatcher-2", theirs.Jobs[0], failure(500)); err != nil || !out.Dropped {
		t.Errorf("Record of a succeeded job = %+v, %v; want dropped", out, err)
	}
}

// TestLeaseOfStaleChoice: Lease reads each job again: one no longer due,
// or gone, is counted lost, not leased.
func TestLeaseOfStaleChoice(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	e.hook(identity.EventUserCreated)
	e.user("bob")
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("Due = %+v, %v", due, err)
	}
	e.attempt(q, e.leaseOne(q, 1), failure(500)) // due again in about 5 s
	stale, err := q.Lease(e.ctx, "dispatcher-2", q.Now(), time.Minute, due)
	if err != nil || len(stale.Jobs) != 0 || stale.Lost != 1 {
		t.Errorf("Lease of a job not due = %+v, %v; want lost", stale, err)
	}
	gone := []identity.DueJob{{Workspace: "acme", ID: 99, Lane: due[0].Lane, Open: true}}
	stale, err = q.Lease(e.ctx, "dispatcher-2", q.Now(), time.Minute, gone)
	if err != nil || len(stale.Jobs) != 0 || stale.Lost != 1 {
		t.Errorf("Lease of a missing job = %+v, %v; want lost", stale, err)
	}
	// A job of a workspace deleted since it was chosen is lost too.
	ofGone := []identity.DueJob{{Workspace: "gone", ID: 1, Lane: identity.Lane{Workspace: "gone"}, Open: true}}
	stale, err = q.Lease(e.ctx, "dispatcher-2", q.Now(), time.Minute, ofGone)
	if err != nil || len(stale.Jobs) != 0 || stale.Lost != 1 {
		t.Errorf("Lease of a job of a missing workspace = %+v, %v; want lost", stale, err)
	}
}

// TestEndpointDeletedWhileLeased: a leased job whose endpoint is deleted
// is not sent and its result is dropped; a job chosen before the delete
// is lost at Lease.
func TestEndpointDeletedWhileLeased(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	e.user("carol")
	job := e.leaseOne(q, 1)
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != 2 || !due[0].Open {
		t.Fatalf("Due = %+v, %v; want job 2, open", due, err)
	}
	if err := e.ws.DeleteWebhook(e.ctx, hook); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Begin(e.ctx, owner, job); !errors.Is(err, identity.ErrLeaseLost) {
		t.Errorf("Begin after the delete = %v, want ErrLeaseLost", err)
	}
	out, err := q.Record(e.ctx, owner, job, failure(500))
	if err != nil || !out.Dropped {
		t.Errorf("Record after the delete = %+v, %v; want dropped", out, err)
	}
	leased, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, due)
	if diff := cmp.Diff(identity.Leased{Lost: 1}, leased); err != nil || diff != "" {
		t.Errorf("Lease after the delete (%v) (-want +got):\n%s", err, diff)
	}
	if n, err := q.CountPending(e.ctx); err != nil || n != 0 {
		t.Errorf("Pending = %d, %v; want 0", n, err)
	}
}

// TestEndpointLostButJobKept: a store that still holds a job whose
// endpoint it no longer finds: Lease counts it lost and Record drops the
// result.
func TestEndpointLostButJobKept(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	e.hook(identity.EventUserCreated)
	e.user("bob")
	e.user("carol")
	job := e.leaseOne(q, 1)
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("Due = %+v, %v", due, err)
	}
	e.st.breakMethod("Webhook", store.ErrNotFound)
	defer e.st.breakMethod("Webhook", nil)
	if due, err := q.ListDue(e.ctx, q.Now(), 10); err != nil || len(due) != 1 || due[0].Open {
		t.Errorf("Due = %+v, %v; want job 2, not open", due, err)
	}
	leased, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, due)
	if err != nil || leased.Lost != 1 || len(leased.Jobs) != 0 {
		t.Errorf("Lease = %+v, %v; want lost", leased, err)
	}
	before := e.stored(1)
	out, err := q.Record(e.ctx, owner, job, failure(500))
	if err != nil || !out.Dropped {
		t.Errorf("Record = %+v, %v; want dropped", out, err)
	}
	if diff := cmp.Diff(before, e.stored(1)); diff != "" {
		t.Errorf("a dropped result changed the delivery (-before +after):\n%s", diff)
	}
}

// TestDisabledEndpointJob: a pending job of a disabled endpoint is not
// open, and Lease fails it with "endpoint disabled" instead of leasing it.
func TestDisabledEndpointJob(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	e.disableInStore(hook)
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	wantDue := []identity.DueJob{{Workspace: "acme", ID: 1, Lane: identity.Lane{Workspace: "acme", EndpointID: hook}, Open: false}}
	if diff := cmp.Diff(wantDue, due); diff != "" {
		t.Errorf("Due (-want +got):\n%s", diff)
	}
	leased, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, due)
	if diff := cmp.Diff(identity.Leased{Failed: 1}, leased); err != nil || diff != "" {
		t.Errorf("Lease (%v) (-want +got):\n%s", err, diff)
	}
	d, err := e.ws.GetDelivery(e.ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != identity.DeliveryFailed || d.LastError != "endpoint disabled" || d.Attempts != 0 || !d.NextAttemptAt.IsZero() {
		t.Errorf("delivery of a disabled endpoint: %+v", d)
	}
}

// TestRecordFailureKeepsLease: when the store fails to record a result,
// Record returns an internal error and nothing of the attempt is stored:
// the lease stays, and the job is due again when it ends.
func TestRecordFailureKeepsLease(t *testing.T) {
	breaks := []struct {
		name  string
		apply func(s *flakyStore)
	}{
		{"the transaction fails", func(s *flakyStore) { s.set(false, true) }},
		{"the endpoint cannot be written", func(s *flakyStore) { s.breakMethod("PutWebhook", errFlaky) }},
		{"the delivery cannot be written", func(s *flakyStore) { s.breakMethod("PutDelivery", errFlaky) }},
		{"the delivery cannot be read", func(s *flakyStore) { s.breakMethod("Delivery", errFlaky) }},
		{"the endpoint cannot be read", func(s *flakyStore) { s.breakMethod("Webhook", errFlaky) }},
	}
	for _, b := range breaks {
		t.Run(b.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			q := e.queue(nil)
			hook := e.hook(identity.EventUserCreated)
			e.user("bob")
			job := e.leaseOne(q, 1)
			att, err := q.Begin(e.ctx, owner, job)
			if err != nil {
				t.Fatal(err)
			}
			before := e.stored(1)
			epBefore, err := e.ws.GetWebhook(e.ctx, hook)
			if err != nil {
				t.Fatal(err)
			}
			b.apply(e.st)
			_, err = q.Record(e.ctx, owner, job, identity.Result{At: att.At, Status: 500, Err: errors.New("status 500")})
			identitytest.WantCode(t, err, identity.CodeInternal)
			if !errors.Is(err, errFlaky) {
				t.Errorf("Record = %v, want it to wrap the store's failure", err)
			}
			e.st.mend()
			if diff := cmp.Diff(before, e.stored(1)); diff != "" {
				t.Errorf("a failed Record changed the delivery (-before +after):\n%s", diff)
			}
			if before.LeaseOwner != owner || !before.LeaseUntil.Equal(q.Now().Add(time.Minute)) {
				t.Errorf("lease %q until %v, want %q until a minute from now", before.LeaseOwner, before.LeaseUntil, owner)
			}
			if ep, err := e.ws.GetWebhook(e.ctx, hook); err != nil || ep.Version != epBefore.Version {
				t.Errorf("a failed Record wrote the endpoint (%v)", err)
			}
			e.clock.Advance(time.Minute)
			job = e.leaseOne(q, 1)
			if job.Attempts != 0 {
				t.Errorf("the job after the lease ended: Attempts %d, want 0", job.Attempts)
			}
		})
	}
}

// TestQueueStoreFailures: a failing store is an internal error from every
// step, and Begin does not mistake it for a lost lease.
func TestQueueStoreFailures(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	e.hook(identity.EventUserCreated)
	e.user("bob")
	job := e.leaseOne(q, 1)
	due := []identity.DueJob{{Workspace: "acme", ID: 1, Lane: job.Lane(), Open: true}}
	steps := []struct {
		name  string
		brk   func()
		call  func() error
		fixup func()
	}{
		{"Due", func() { e.st.set(true, false) }, func() error { _, err := q.ListDue(e.ctx, q.Now(), 10); return err }, nil},
		{"Due reading the queue", func() { e.st.breakMethod("DueDeliveries", errFlaky) }, func() error { _, err := q.ListDue(e.ctx, q.Now(), 10); return err }, nil},
		{"Due reading an endpoint", func() { e.st.breakMethod("Webhook", errFlaky) }, func() error { _, err := q.ListDue(e.ctx, q.Now().Add(time.Hour), 10); return err }, nil},
		{"Pending", func() { e.st.set(true, false) }, func() error { _, err := q.CountPending(e.ctx); return err }, nil},
		{"Lease", func() { e.st.set(false, true) }, func() error { _, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, due); return err }, nil},
		{"Lease claiming", func() { e.st.breakMethod("ClaimDelivery", errFlaky) }, func() error { _, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, due); return err }, nil},
		{"Lease reading the next due time", func() { e.st.breakMethod("NextDueAt", errFlaky) }, func() error { _, err := q.Lease(e.ctx, owner, q.Now(), time.Minute, nil); return err }, nil},
		{"Begin", func() { e.st.set(true, false) }, func() error { _, err := q.Begin(e.ctx, owner, job); return err }, nil},
	}
	for _, s := range steps {
		s.brk()
		err := s.call()
		e.st.mend()
		if identity.ErrorCode(err) != identity.CodeInternal || !errors.Is(err, errFlaky) || errors.Is(err, identity.ErrLeaseLost) {
			t.Errorf("%s with a failing store = %v, want an internal error wrapping the failure", s.name, err)
		}
	}
}

// TestLeaseFailureOfDisabledEndpoint: failing a disabled endpoint's job
// is a write like any other: if it fails, Lease fails and leases nothing.
func TestLeaseFailureOfDisabledEndpoint(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(nil)
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	e.disableInStore(hook)
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	e.st.breakMethod("PutDelivery", errFlaky)
	_, err = q.Lease(e.ctx, owner, q.Now(), time.Minute, due)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.breakMethod("PutDelivery", nil)
	if d := e.stored(1); d.Status != store.DeliveryPending {
		t.Errorf("delivery %+v, want still pending", d)
	}
}

// TestDeliveriesInspection: GetDelivery, RetryDelivery and Deliveries.
func TestDeliveriesInspection(t *testing.T) {
	e := newTestEnv(t, nil)
	q := e.queue(&identity.RetryPolicy{Retries: []time.Duration{}})
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	e.attempt(q, e.leaseOne(q, 1), failure(500))
	e.clock.Advance(time.Hour)
	if err := e.ws.RetryDelivery(e.ctx, 1); err != nil {
		t.Fatal(err)
	}
	d, err := e.ws.GetDelivery(e.ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := identity.Delivery{
		ID: 1, EndpointID: hook, EventID: d.EventID, EventType: identity.EventUserCreated, Status: identity.DeliveryPending,
		Attempts: 0, LastStatus: 500, LastError: "status 500", LastAttemptAt: q.Now().Add(-time.Hour),
		NextAttemptAt: q.Now(), CreatedAt: q.Now().Add(-time.Hour),
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("retried delivery (-want +got):\n%s", diff)
	}
	identitytest.WantCode(t, e.ws.RetryDelivery(e.ctx, 1), identity.CodeConflict) // pending
	identitytest.WantCode(t, e.ws.RetryDelivery(e.ctx, 0), identity.CodeNotFound)
	identitytest.WantCode(t, e.ws.RetryDelivery(e.ctx, 9), identity.CodeNotFound)
	for _, id := range []int64{0, 9} {
		_, err := e.ws.GetDelivery(e.ctx, id)
		identitytest.WantCode(t, err, identity.CodeNotFound)
	}
	for _, id := range []int64{0, 9} {
		_, err := listItems(e.ws.ListDeliveries(e.ctx, id, nil))
		identitytest.WantCode(t, err, identity.CodeNotFound)
	}
	// The retried delivery starts its schedule over: one attempt again.
	out := e.attempt(q, e.leaseOne(q, 1), failure(500))
	if out.Status != identity.DeliveryFailed {
		t.Errorf("retried delivery after its one attempt: %+v", out)
	}
}

// recordingWatcher records what a Service tells its queue watchers.
type recordingWatcher struct {
	queued  int
	deleted []identity.Lane
}

func (w *recordingWatcher) JobsQueued() { w.queued++ }
func (w *recordingWatcher) EndpointDeleted(slug string, id int64) {
	w.deleted = append(w.deleted, identity.Lane{Workspace: slug, EndpointID: id})
}

// TestWatchQueue: watchers are woken after commits and told of deleted
// endpoints, until they stop watching.
func TestWatchQueue(t *testing.T) {
	e := newTestEnv(t, nil)
	w := &recordingWatcher{}
	stop := e.svc.WatchQueue(w)
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	if err := e.ws.DeleteWebhook(e.ctx, hook); err != nil {
		t.Fatal(err)
	}
	if w.queued < 2 {
		t.Errorf("JobsQueued called %d times, want at least 2", w.queued)
	}
	if diff := cmp.Diff([]identity.Lane{{Workspace: "acme", EndpointID: hook}}, w.deleted); diff != "" {
		t.Errorf("EndpointDeleted (-want +got):\n%s", diff)
	}
	stop()
	queued := w.queued
	e.user("carol")
	if w.queued != queued {
		t.Errorf("JobsQueued called after stop")
	}
}
