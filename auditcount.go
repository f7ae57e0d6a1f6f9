package identity

import (
	"context"
	"errors"

	"github.com/identitylib/identity/store"
)

// Bounds of CountAuditRecords.
const (
	// MaxAuditCount is the highest max CountAuditRecords takes: a count
	// reads every record it counts, and a million of them take seconds
	// of a store's time (BENCHMARKS.md).
	MaxAuditCount = 1_000_000
	// auditCountBatch is how many records one read transaction of
	// CountAuditRecords reads, so that no transaction stays open for the
	// whole count.
	auditCountBatch = 1000
)

// AuditCount is the result of CountAuditRecords.
type AuditCount struct {
	// Count is how many records match, up to the max asked for.
	Count int `json:"count"`
	// Capped reports that more than max records match: Count is max,
	// and a display says "10,000+" rather than "10,000".
	Capped bool `json:"capped"`
}

// CountAuditRecords counts the records of the workspace's audit trail
// that match filter (nil: all), up to max, 1 to MaxAuditCount: a
// count of the sign-ins of the last 24 hours is
//
//	ws.CountAuditRecords(ctx, &identity.AuditFilter{Action: "sign_in.succeeded", Since: now.Add(-24 * time.Hour)}, 10000)
//
// and a result with Capped set is shown as "10,000+". The trail keeps
// no counters (nothing on the write path pays for a count): the count
// walks the records by id, newest first, as ListAuditRecords pages
// them, in read transactions of 1,000 records each, so that its cost
// follows the records counted (at most max), never the trail; a
// filter by one of actor, target, action and outcome reads that index.
// Records written while the count runs may or may not be counted. An
// invalid filter or max is CodeInvalid naming its fields ("max" for
// max).
func (w *Workspace) CountAuditRecords(ctx context.Context, filter *AuditFilter, max int) (AuditCount, error) {
	q, err := auditQuery(filter, nil)
	var p problems
	if e, ok := errors.AsType[*Error](err); ok {
		p.addFrom(e)
	} else if err != nil {
		return AuditCount{}, err
	}
	if max < 1 || max > MaxAuditCount {
		p.add("max", RuleRange, "must be between 1 and %d", MaxAuditCount)
	}
	if err := p.err("invalid audit count"); err != nil {
		return AuditCount{}, err
	}
	var out AuditCount
	for {
		// One record past max says whether the count is capped.
		q.Limit = min(auditCountBatch, max+1-out.Count)
		var recs []store.AuditRecord
		err := w.view(ctx, func(tx store.Tx) (err error) {
			recs, err = tx.AuditRecords(w.slug, q)
			return err
		})
		if err != nil {
			return AuditCount{}, fromStore(err, "workspace")
		}
		out.Count += len(recs)
		if out.Count > max {
			return AuditCount{Count: max, Capped: true}, nil
		}
		if len(recs) < q.Limit {
			return out, nil
		}
		q.Before = recs[len(recs)-1].ID
	}
}
