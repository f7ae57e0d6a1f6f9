package identity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// AuditFilter selects records of the audit trail. The zero value selects
// every record; the fields that are set must all match.
type AuditFilter struct {
	// ActorKind and ActorID, when ActorKind is set, keep what that actor
	// did (the system's actor has no ID).
	ActorKind ActorKind
	ActorID   string
	// TargetKind and TargetID, when TargetKind is set, keep what was done
	// to that target.
	TargetKind string
	TargetID   string
	// Action keeps one action of the catalogue, or, when it ends in ".",
	// every action that starts with it ("user." or "sign_in.").
	Action string
	// Outcome keeps the records with that outcome.
	Outcome AuditOutcome
	// Since and Until, when not zero, keep the records written at or
	// after Since and before Until.
	Since, Until time.Time
}

// ParseAuditRef parses an actor or a target of an AuditFilter written as
// the REST API's and identityd's filters take it, KIND:ID, split at the
// first colon: "user:42", "api_key:3f2a9c01d4e5b6a7", and "system:" for
// an actor without an id. "" is none: no kind and no id. A value without
// a colon is a CodeInvalid error ("invalid audit query") naming field,
// rule RuleFormat; the kind and the id are ListAuditRecords' to judge.
func ParseAuditRef(field, s string) (kind, id string, err error) {
	if s == "" {
		return "", "", nil
	}
	kind, id, ok := strings.Cut(s, ":")
	if !ok {
		var p problems
		p.add(field, RuleFormat, "must be KIND:ID, such as user:42, or KIND: for one without an id, such as system:")
		return "", "", p.err("invalid audit query")
	}
	return kind, id, nil
}

// AuditPageOptions say which page of the trail to read.
type AuditPageOptions struct {
	// Cursor, when set, is the NextCursor of the page before: the page
	// goes on after it.
	Cursor string
	// Limit is 1 to MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
	// Oldest returns the oldest records first; the default is newest
	// first.
	Oldest bool
}

// AuditPage is one page of the audit trail.
type AuditPage struct {
	// Records is the page, never nil.
	Records []AuditRecord `json:"records"`
	// HasMore is exact: whether a record matching the filter lies past
	// the page.
	HasMore bool `json:"hasMore"`
	// NextCursor goes on after the page (set when HasMore).
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListAuditRecords reads one page of the workspace's audit trail: the records
// that match filter (nil: all), newest first unless page says Oldest.
// Paging goes by cursor, so records appended meanwhile never shift a
// page: newest first, they sit before the first page; oldest first, the
// last page reaches them.
//
// There is no total: the trail only grows, and counting it would cost
// in proportion to it. A page filtered by one of actor, target, action
// (or a prefix of a few actions) and outcome reads an index of that kind
// and costs in proportion to the page; further filters are checked on
// the records that index yields. An invalid filter or page is CodeInvalid
// naming its fields.
func (w *Workspace) ListAuditRecords(ctx context.Context, filter *AuditFilter, page *AuditPageOptions) (AuditPage, error) {
	q, err := auditQuery(filter, page)
	if err != nil {
		return AuditPage{}, err
	}
	limit := q.Limit
	q.Limit++ // one more says whether there is more
	var recs []store.AuditRecord
	err = w.view(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.AuditRecords(w.slug, q)
		return err
	})
	if err != nil {
		return AuditPage{}, fromStore(err, "workspace")
	}
	out := AuditPage{Records: make([]AuditRecord, 0, min(len(recs), limit))}
	if len(recs) > limit {
		recs = recs[:limit]
		out.HasMore = true
		out.NextCursor = recs[limit-1].ID
	}
	for _, s := range recs {
		r, err := auditFromRecord(w.slug, s)
		if err != nil {
			return AuditPage{}, err
		}
		out.Records = append(out.Records, r)
	}
	return out, nil
}

// auditQuery validates filter and page and turns them into a store
// query with Limit set to the page's size.
func auditQuery(filter *AuditFilter, page *AuditPageOptions) (store.AuditQuery, error) {
	var f AuditFilter
	if filter != nil {
		f = *filter
	}
	var pg AuditPageOptions
	if page != nil {
		pg = *page
	}
	var p problems
	q := store.AuditQuery{Outcome: string(f.Outcome), Ascending: pg.Oldest, Limit: pg.Limit}
	if q.Limit == 0 {
		q.Limit = DefaultPageLimit
	}
	if q.Limit < 1 || q.Limit > MaxPageLimit {
		p.add("limit", RuleRange, "must be between 1 and %d", MaxPageLimit)
	}
	switch {
	case f.ActorKind != "" && !knownActorKind(f.ActorKind):
		p.add("actor", RuleUnknown, "must be a kind of actor: api_key, operator, user, client or system")
	case f.ActorKind == "" && f.ActorID != "":
		p.add("actor", RuleRequired, "an actor's id needs its kind")
	}
	q.ActorKind, q.ActorID = string(f.ActorKind), f.ActorID
	switch {
	case f.TargetKind != "" && !knownTargetKind(f.TargetKind):
		p.add("target", RuleUnknown, "must be a kind of target: %v", AuditTargetKinds())
	case f.TargetKind == "" && f.TargetID != "":
		p.add("target", RuleRequired, "a target's id needs its kind")
	}
	q.TargetKind, q.TargetID = f.TargetKind, f.TargetID
	if f.Action != "" {
		if q.Actions = actionsMatching(f.Action); len(q.Actions) == 0 {
			p.add("action", RuleUnknown, "must be an action of the catalogue, or a prefix of some ending in \".\"")
		}
	}
	if f.Outcome != "" && f.Outcome != OutcomeSuccess && f.Outcome != OutcomeFailure {
		p.add("outcome", RuleUnknown, "must be success or failure")
	}
	if !f.Since.IsZero() {
		q.After = auditIDBefore(f.Since)
	}
	if !f.Until.IsZero() {
		q.Before = auditIDPrefix(f.Until) + "0000000000000000"
	}
	if pg.Cursor != "" {
		if !validAuditID(pg.Cursor) {
			p.add("cursor", RuleFormat, "must be the nextCursor of a page")
		} else if pg.Oldest {
			q.After = max(q.After, pg.Cursor)
		} else if q.Before == "" || pg.Cursor < q.Before {
			q.Before = pg.Cursor
		}
	}
	return q, p.err("invalid audit query")
}

// auditIDBefore is the highest id a record written before t may have:
// ids above it were written at or after t.
func auditIDBefore(t time.Time) string {
	micros := t.UnixMicro() - 1
	if micros < 0 {
		return ""
	}
	return fmt.Sprintf("%016x", micros) + "ffffffffffffffff"
}

// validAuditID reports whether s has the form of an audit record's id.
func validAuditID(s string) bool {
	if len(s) != auditIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func knownActorKind(k ActorKind) bool { return slices.Contains(ActorKinds(), k) }

// AuditTargetKinds returns the kinds of audit target in a stable order.
func AuditTargetKinds() []string {
	return []string{TargetWorkspace, TargetUser, TargetRole, TargetGroup, TargetMapper, TargetWebhook,
		TargetDelivery, TargetAPIKey, TargetClient, TargetSigningKey}
}

func knownTargetKind(k string) bool { return slices.Contains(AuditTargetKinds(), k) }
