package identity_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// Retention: the settings, the cut-off times Sweep passes the store, and
// what a sweep removes on either side of them.

// sweepCallRecorder is a store that records every sweep method called
// through its Update transactions, with the time it was given.
type sweepCallRecorder struct {
	store.Store
	mu    sync.Mutex
	calls []string
}

func (r *sweepCallRecorder) Update(ctx context.Context, fn func(store.Tx) error) error {
	return r.Store.Update(ctx, func(tx store.Tx) error { return fn(&recordingTx{Tx: tx, r: r}) })
}

func (r *sweepCallRecorder) record(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

type recordingTx struct {
	store.Tx
	r *sweepCallRecorder
}

func (tx *recordingTx) DeleteFinishedDeliveries(slug string, kind store.JobKind, status store.DeliveryStatus, before time.Time, limit int) (int, error) {
	tx.r.record(slug + " " + string(kind) + " " + string(status) + " " + before.Format(time.RFC3339Nano) + " " + itoa(limit))
	return tx.Tx.DeleteFinishedDeliveries(slug, kind, status, before, limit)
}

func (tx *recordingTx) DeleteEndedSessions(slug string, before time.Time, limit int) (int, error) {
	tx.r.record(slug + " sessions " + before.Format(time.RFC3339Nano) + " " + itoa(limit))
	return tx.Tx.DeleteEndedSessions(slug, before, limit)
}

func (tx *recordingTx) DeleteExpiredTokens(slug string, before time.Time, limit int) (int, error) {
	tx.r.record(slug + " tokens " + before.Format(time.RFC3339Nano) + " " + itoa(limit))
	return tx.Tx.DeleteExpiredTokens(slug, before, limit)
}

func (tx *recordingTx) DeleteAuditRecords(slug, beforeID string, limit int) (int, error) {
	tx.r.record(slug + " audit " + beforeID + " " + itoa(limit))
	return tx.Tx.DeleteAuditRecords(slug, beforeID, limit)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSweepCutoffs: Sweep asks the store, for each workspace, for
// succeeded webhook deliveries finished 7 days before now, failed ones
// and mail jobs 30 days, sessions ended 90 days, and tokens expired by
// now, and audit records older than 365 days (by the id the first record
// of the cut-off's microsecond would have), in batches of 500; a
// workspace's Retention changes its own.
func TestSweepCutoffs(t *testing.T) {
	e := newTestEnv(t, nil)
	other, err := e.svc.CreateWorkspace(e.ctx, "globex", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := other.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Retention = identity.Retention{SucceededDeliveryDays: 1, FailedDeliveryDays: 2, MailJobDays: 3, EndedSessionDays: 4, AuditDays: 5}
	if err := other.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	rec := &sweepCallRecorder{Store: e.st.Store}
	svc, err := identity.New(rec, &identity.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	if _, err := svc.Sweep(e.ctx, now); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	want := []string{
		"acme webhook succeeded 2026-03-07T15:09:26.535897Z 500",
		"acme webhook failed 2026-02-12T15:09:26.535897Z 500",
		"acme mail succeeded 2026-02-12T15:09:26.535897Z 500",
		"acme mail failed 2026-02-12T15:09:26.535897Z 500",
		"acme sessions 2025-12-14T15:09:26.535897Z 500",
		"acme tokens 2026-03-14T15:09:26.535897Z 500",
		"acme audit 0006304ed30aa2d90000000000000000 500",
		"globex webhook succeeded 2026-03-13T15:09:26.535897Z 500",
		"globex webhook failed 2026-03-12T15:09:26.535897Z 500",
		"globex mail succeeded 2026-03-11T15:09:26.535897Z 500",
		"globex mail failed 2026-03-11T15:09:26.535897Z 500",
		"globex sessions 2026-03-10T15:09:26.535897Z 500",
		"globex tokens 2026-03-14T15:09:26.535897Z 500",
		"globex audit 00064c98c9e9a2d90000000000000000 500",
	}
	if diff := cmp.Diff(want, rec.calls); diff != "" {
		t.Errorf("sweep calls (-want +got):\n%s", diff)
	}
}

// TestRetentionSettings: each Retention field is 0 (the default) or 1 to
// 3650 days.
func TestRetentionSettings(t *testing.T) {
	e := newTestEnv(t, nil)
	base, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    identity.Retention
		want []identity.FieldError
	}{
		{"Zero", identity.Retention{}, nil},
		{"Bounds", identity.Retention{SucceededDeliveryDays: 1, FailedDeliveryDays: 3650, MailJobDays: 1, EndedSessionDays: 3650, AuditDays: 1}, nil},
		{"AuditUpperBound", identity.Retention{AuditDays: 3650}, nil},
		{"Negative", identity.Retention{SucceededDeliveryDays: -1, FailedDeliveryDays: -1, MailJobDays: -1, EndedSessionDays: -1, AuditDays: -1}, []identity.FieldError{
			{Field: "retention.succeededDeliveryDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 7)"},
			{Field: "retention.failedDeliveryDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 30)"},
			{Field: "retention.mailJobDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 30)"},
			{Field: "retention.endedSessionDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 90)"},
			{Field: "retention.auditDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 365)"},
		}},
		{"TooLong", identity.Retention{EndedSessionDays: 3651}, []identity.FieldError{
			{Field: "retention.endedSessionDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 90)"},
		}},
		{"AuditTooLong", identity.Retention{AuditDays: 3651}, []identity.FieldError{
			{Field: "retention.auditDays", Rule: identity.RuleRange, Message: "must be between 1 and 3650 days (0 means 365)"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			s.Retention = c.r
			err := e.ws.UpdateSettings(e.ctx, s)
			var got []identity.FieldError
			if ie, ok := errors.AsType[*identity.Error](err); ok {
				got = ie.Fields
			} else if err != nil {
				t.Fatalf("UpdateSettings: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			if c.want == nil {
				read, err := e.ws.GetSettings(e.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(c.r, read.Retention); diff != "" {
					t.Errorf("Retention read back (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestSweepBoundaries: a succeeded webhook delivery is kept 7 days after
// its attempt and a failed one 30, a session 90 days after it expired or
// was revoked: a sweep a microsecond earlier keeps each, a sweep at the
// time removes it.
func TestSweepBoundaries(t *testing.T) {
	t.Run("SucceededDelivery", func(t *testing.T) {
		e := newTestEnv(t, nil)
		q := e.queue(nil)
		e.hook(identity.EventUserCreated)
		e.user("bob")
		attempted := e.clock.Now()
		e.attempt(q, e.leaseOne(q, 1), identity.Result{Status: 204})
		e.checkSweep(attempted.Add(7*day-time.Microsecond), identity.SweepResult{}, 1, true)
		e.checkSweep(attempted.Add(7*day), identity.SweepResult{Deliveries: 1}, 1, false)
	})
	t.Run("FailedDelivery", func(t *testing.T) {
		e := newTestEnv(t, nil)
		q := e.queue(&identity.RetryPolicy{Retries: []time.Duration{}})
		e.hook(identity.EventUserCreated)
		e.user("bob")
		attempted := e.clock.Now()
		if out := e.attempt(q, e.leaseOne(q, 1), failure(500)); out.Status != identity.DeliveryFailed {
			t.Fatalf("outcome %+v, want failed", out)
		}
		e.checkSweep(attempted.Add(30*day-time.Microsecond), identity.SweepResult{}, 1, true)
		e.checkSweep(attempted.Add(30*day), identity.SweepResult{Deliveries: 1}, 1, false)
	})
	for _, revoke := range []bool{false, true} {
		name := map[bool]string{false: "ExpiredSession", true: "RevokedSession"}[revoke]
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			created, err := e.ws.Login(e.ctx, "ada", adaPassword)
			if err != nil {
				t.Fatal(err)
			}
			sess := created.Session
			ended := sess.ExpiresAt
			if revoke {
				e.clock.Advance(time.Hour)
				if err := e.ws.RevokeSession(e.ctx, sess.ID); err != nil {
					t.Fatal(err)
				}
				ended = e.clock.Now()
			}
			sessions := func() int {
				ss, err := listItems(e.ws.ListSessions(e.ctx, e.ada.ID, nil))
				if err != nil {
					t.Fatal(err)
				}
				return len(ss)
			}
			e.sweepAt(ended.Add(90*day-time.Microsecond), identity.SweepResult{})
			if n := sessions(); n != 1 {
				t.Errorf("%d sessions a microsecond before 90 days, want 1", n)
			}
			e.sweepAt(ended.Add(90*day), identity.SweepResult{Sessions: 1})
			if n := sessions(); n != 0 {
				t.Errorf("%d sessions at 90 days, want 0", n)
			}
		})
	}
}

// sweepAt sweeps at now and checks what it removed.
func (e *testEnv) sweepAt(now time.Time, want identity.SweepResult) {
	e.t.Helper()
	got, err := e.svc.Sweep(e.ctx, now)
	if err != nil {
		e.t.Fatalf("Sweep: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		e.t.Errorf("Sweep(%v) (-want +got):\n%s", now, diff)
	}
}

// checkSweep sweeps at now, checks what it removed and whether the
// delivery with the id is still there.
func (e *testEnv) checkSweep(now time.Time, want identity.SweepResult, id int64, kept bool) {
	e.t.Helper()
	e.sweepAt(now, want)
	_, err := e.ws.GetDelivery(e.ctx, id)
	if kept && err != nil {
		e.t.Errorf("after Sweep(%v): GetDelivery(%d): %v, want it kept", now, id, err)
	}
	if !kept && !errors.Is(err, identity.ErrNotFound) {
		e.t.Errorf("after Sweep(%v): GetDelivery(%d): %v, want ErrNotFound", now, id, err)
	}
}

// TestSweepAuditRecord: a sweep that removed anything in a workspace
// leaves one retention.swept record there, by the system, at the sweep's
// time, counting only the kinds it removed, each under its own name; a
// sweep that removed nothing leaves none.
func TestSweepAuditRecord(t *testing.T) {
	e := newTestEnv(t, nil)
	if _, err := e.ws.Login(e.ctx, "ada", adaPassword); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(400 * day)
	now := e.clock.Now()
	// ada's session, ended for more than 90 days, and every record
	// before it: workspace.created, user.created, sign_in.succeeded and
	// session.created.
	e.sweepAt(now, identity.SweepResult{Sessions: 1, AuditRecords: 4})
	e.sweepAt(now, identity.SweepResult{})
	want := []identity.AuditRecord{{
		Time: now, Workspace: "acme", Actor: identity.Actor{Kind: identity.ActorSystem},
		Action: identity.AuditRetentionSwept, Target: identity.AuditTarget{Kind: identity.TargetWorkspace, ID: "acme", Display: "acme"},
		Outcome: identity.OutcomeSuccess, Reason: "retention",
		Changes: map[string]identity.AuditChange{"removed.sessions": {After: float64(1)}, "removed.auditRecords": {After: float64(4)}},
	}}
	if diff := cmp.Diff(want, e.trail(time.Time{}), cmpopts.IgnoreFields(identity.AuditRecord{}, "ID")); diff != "" {
		t.Errorf("trail after the sweeps (-want +got):\n%s", diff)
	}
}
