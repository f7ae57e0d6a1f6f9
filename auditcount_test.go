package identity_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// putAuditRecords writes n records of the action and outcome straight
// into the store, one a second from first on, with ids the library's
// scheme would give them (the time's microseconds, then 16 more hex
// digits).
func (e *testEnv) putAuditRecords(action identity.AuditAction, outcome identity.AuditOutcome, first time.Time, n int) {
	e.t.Helper()
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		for i := range n {
			at := first.Add(time.Duration(i) * time.Second).UTC()
			rec := store.AuditRecord{
				ID: fmt.Sprintf("%016x%016x", at.UnixMicro(), i), Time: at, ActorKind: string(identity.ActorUser), ActorID: "1",
				Action: string(action), TargetKind: identity.TargetUser, TargetID: "1", Outcome: string(outcome),
			}
			if err := tx.PutAuditRecord("acme", rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// The count walks the trail in batches of 1,000 and stops one record
// past max: 2,500 sign-ins in the window are counted whole by any max
// of 2,500 or more and capped by any smaller one, across the batches'
// edges; records outside the window or of another action never count.
func TestCountAuditRecords(t *testing.T) {
	e := newTestEnv(t, nil)
	now := e.clock.Now()
	day := now.Add(-24 * time.Hour)
	e.putAuditRecords(identity.AuditSignInSucceeded, identity.OutcomeSuccess, day.Add(-time.Hour), 3) // before the window
	e.putAuditRecords(identity.AuditSignInSucceeded, identity.OutcomeSuccess, day, 2500)
	e.putAuditRecords(identity.AuditSignInFailed, identity.OutcomeFailure, day.Add(time.Minute), 7)
	signIns := &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded), Since: day}
	for _, c := range []struct {
		name   string
		filter *identity.AuditFilter
		max    int
		want   identity.AuditCount
	}{
		{"all in the window, max far above", signIns, identity.MaxAuditCount, identity.AuditCount{Count: 2500}},
		{"max exactly the count", signIns, 2500, identity.AuditCount{Count: 2500}},
		{"max one below the count", signIns, 2499, identity.AuditCount{Count: 2499, Capped: true}},
		{"max one batch", signIns, 1000, identity.AuditCount{Count: 1000, Capped: true}},
		{"max one past a batch", signIns, 1001, identity.AuditCount{Count: 1001, Capped: true}},
		{"max 1", signIns, 1, identity.AuditCount{Count: 1, Capped: true}},
		{"the records before the window count without Since", &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, 10000, identity.AuditCount{Count: 2503}},
		{"until cuts the window", &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded), Since: day, Until: day.Add(10 * time.Second)}, 10000, identity.AuditCount{Count: 10}},
		{"failures by outcome", &identity.AuditFilter{Outcome: identity.OutcomeFailure, Since: day}, 10000, identity.AuditCount{Count: 7}},
		{"a prefix of actions", &identity.AuditFilter{Action: "sign_in.", Since: day}, 10000, identity.AuditCount{Count: 2507}},
		// workspace.created, user.created (ada), and the records written here.
		{"nil filter: every record", nil, 10000, identity.AuditCount{Count: 2512}},
		{"nothing matches", &identity.AuditFilter{Action: string(identity.AuditUserDeleted)}, 10, identity.AuditCount{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.ws.CountAuditRecords(e.ctx, c.filter, c.max)
			if err != nil {
				t.Fatalf("CountAuditRecords: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("CountAuditRecords (-want +got):\n%s", diff)
			}
		})
	}
}

// An invalid max or filter is CodeInvalid naming each field at fault.
func TestCountAuditRecordsInvalid(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, c := range []struct {
		name   string
		filter *identity.AuditFilter
		max    int
		want   []identity.FieldError
	}{
		{"max 0", nil, 0, []identity.FieldError{{Field: "max", Rule: identity.RuleRange, Message: "must be between 1 and 1000000"}}},
		{"max above the bound", nil, identity.MaxAuditCount + 1, []identity.FieldError{{Field: "max", Rule: identity.RuleRange, Message: "must be between 1 and 1000000"}}},
		{"an unknown action and max", &identity.AuditFilter{Action: "nope"}, -1, []identity.FieldError{
			{Field: "action", Rule: identity.RuleUnknown, Message: "must be an action of the catalogue, or a prefix of some ending in \".\""},
			{Field: "max", Rule: identity.RuleRange, Message: "must be between 1 and 1000000"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.ws.CountAuditRecords(e.ctx, c.filter, c.max)
			if identity.ErrorCode(err) != identity.CodeInvalid {
				t.Fatalf("CountAuditRecords = %v, want CodeInvalid", err)
			}
			if diff := cmp.Diff(c.want, fieldsOf(err)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

// fieldsOf returns the Fields of err, an *identity.Error, or nil.
func fieldsOf(err error) []identity.FieldError {
	if e, ok := errors.AsType[*identity.Error](err); ok {
		return e.Fields
	}
	return nil
}

// auditReadCounter is a Store whose read transactions count the audit
// records AuditRecords returns.
type auditReadCounter struct {
	store.Store
	read *int
}

func (s auditReadCounter) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(auditReadCountingTx{Tx: tx, read: s.read}) })
}

type auditReadCountingTx struct {
	store.Tx
	read *int
}

func (tx auditReadCountingTx) AuditRecords(slug string, q store.AuditQuery) ([]store.AuditRecord, error) {
	recs, err := tx.Tx.AuditRecords(slug, q)
	*tx.read += len(recs)
	return recs, err
}

// A count reads what it counts and one record more, never a batch past
// max: 1,501 records for a max of 1,500, 2 for a max of 1.
func TestCountAuditRecordsReadsNoMore(t *testing.T) {
	var read int
	e := newTestEnvOver(t, nil, func(s store.Store) store.Store { return auditReadCounter{Store: s, read: &read} })
	e.putAuditRecords(identity.AuditSignInSucceeded, identity.OutcomeSuccess, e.clock.Now().Add(-time.Hour), 2500)
	signIns := &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}
	for _, c := range []struct {
		max, read int
		want      identity.AuditCount
	}{
		{1500, 1501, identity.AuditCount{Count: 1500, Capped: true}},
		{1, 2, identity.AuditCount{Count: 1, Capped: true}},
		{3000, 2500, identity.AuditCount{Count: 2500}},
	} {
		read = 0
		got, err := e.ws.CountAuditRecords(e.ctx, signIns, c.max)
		if err != nil || got != c.want || read != c.read {
			t.Errorf("CountAuditRecords(max %d) = %+v, %v after reading %d records; want %+v after %d", c.max, got, err, read, c.want, c.read)
		}
	}
}
