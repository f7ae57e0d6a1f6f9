package pgstore

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
)

// The audit trail (migration 0013): one row per record, keyed by
// (workspace, id), with an index per filter of AuditRecords, each ending
// in the id. A page is one statement that reads one index in id order, in
// either direction, and stops at the page's end; a page of several
// actions reads the action index once per action and merges the ordered
// runs (see auditPageSQL). A record is written with no read of any other
// record (no "last record", no counter), so that the transactions of a
// workspace append side by side without conflicting.

// auditColumns are the columns scanAuditRecord reads, in its order.
const auditColumns = `id, time, actor_kind, actor_id, actor_display, action, target_kind, target_id,
	target_display, outcome, reason, address, user_agent, request_id, changes`

// scanAuditRecord reads a row of auditColumns. Changes come back nil
// when empty.
func scanAuditRecord(r pgx.Row) (store.AuditRecord, error) {
	var a store.AuditRecord
	var actorID, actorDisplay, targetID, targetDisplay, requestID []byte
	err := r.Scan(&a.ID, &a.Time, &a.ActorKind, &actorID, &actorDisplay, &a.Action, &a.TargetKind, &targetID,
		&targetDisplay, &a.Outcome, &a.Reason, &a.Address, &a.UserAgent, &requestID, &a.Changes)
	a.ActorID, a.ActorDisplay = string(actorID), string(actorDisplay)
	a.TargetID, a.TargetDisplay = string(targetID), string(targetDisplay)
	a.RequestID = string(requestID)
	if len(a.Changes) == 0 {
		a.Changes = nil
	}
	return a, err
}

// PutAuditRecord implements store.Tx. In a workspace the transaction
// knows to exist, the write is deferred to the next statement or the
// COMMIT (see deferWrite): it is then a plain INSERT ... ON CONFLICT of
// one row, which only a concurrent deletion of the workspace (a
// serialization failure) can fail. Otherwise it inserts from a SELECT of
// the workspace and counts the row, one round trip.
func (t *tx) PutAuditRecord(slug string, r store.AuditRecord) error {
	if !storable(slug) {
		return notFound("workspace %q", slug)
	}
	if err := checkText("audit record id", r.ID, "actor kind", r.ActorKind, "action", r.Action,
		"target kind", r.TargetKind, "outcome", r.Outcome, "reason", r.Reason, "address", r.Address,
		"user agent", r.UserAgent); err != nil {
		return err
	}
	args := []any{slug, r.ID, ts(r.Time), r.ActorKind, []byte(r.ActorID), []byte(r.ActorDisplay), r.Action,
		r.TargetKind, []byte(r.TargetID), []byte(r.TargetDisplay), r.Outcome, r.Reason, r.Address, r.UserAgent,
		[]byte(r.RequestID), bin(r.Changes)}
	if t.spaceInSnapshot(slug) {
		return t.deferWrite(`INSERT INTO audit_records (workspace, `+auditColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (workspace, id) DO UPDATE SET `+auditUpdate, args...)
	}
	tag, err := t.exec(`INSERT INTO audit_records (workspace, `+auditColumns+`)
		SELECT slug, $2::text, $3::timestamptz, $4::text, $5::bytea, $6::bytea, $7::text, $8::text, $9::bytea,
			$10::bytea, $11::text, $12::text, $13::text, $14::text, $15::bytea, $16::bytea
		FROM workspaces WHERE slug = $1
		ON CONFLICT (workspace, id) DO UPDATE SET `+auditUpdate, args...)
	return t.written(tag, err, slug)
}

// auditUpdate is the SET list of PutAuditRecord's ON CONFLICT: every
// column but the key.
const auditUpdate = `time = excluded.time, actor_kind = excluded.actor_kind, actor_id = excluded.actor_id,
	actor_display = excluded.actor_display, action = excluded.action, target_kind = excluded.target_kind,
	target_id = excluded.target_id, target_display = excluded.target_display, outcome = excluded.outcome,
	reason = excluded.reason, address = excluded.address, user_agent = excluded.user_agent,
	request_id = excluded.request_id, changes = excluded.changes`

// spaceInSnapshot reports whether the transaction knows that the
// workspace exists: it read or wrote the workspace, or read one of its
// users (whose row names it by a foreign key), and has not deleted it
// since.
func (t *tx) spaceInSnapshot(slug string) bool {
	if t.spaces[slug] {
		return true
	}
	for u := range t.users {
		if u.slug == slug {
			return true
		}
	}
	return false
}

// AuditRecords implements store.Tx in one statement (auditPageSQL),
// with PostgreSQL's generic plan, as idPage reads its pages and for the
// same reason: the plan cache prices a generic plan's LIMIT of an
// unknown size at a tenth of the rows it expects of a filter, and so
// planned each call anew, which cost more than the page (0.2 ms a
// filter, 2 ms for a dozen actions). The generic plan of each filter is
// its index read in order (TestAuditPagesUseTheirIndex checks both).
func (t *tx) AuditRecords(slug string, q store.AuditQuery) ([]store.AuditRecord, error) {
	if !storable(slug) {
		return nil, notFound("workspace %q", slug)
	}
	sql, args, ok := auditPageSQL(slug, q)
	if !ok {
		return nil, t.emptyResult(slug)
	}
	if t.failed == nil {
		t.pending = append(t.pending, queued{sql: "SET LOCAL plan_cache_mode = force_generic_plan"})
	}
	recs, err := collect(t, sql, args, func(r pgx.Rows) (store.AuditRecord, error) { return scanAuditRecord(r) })
	if err != nil {
		return nil, err
	}
	t.pending = append(t.pending, queued{sql: "SET LOCAL plan_cache_mode TO DEFAULT"})
	if len(recs) == 0 {
		return nil, t.emptyResult(slug)
	}
	return recs, nil
}

// auditPageSQL returns the statement of a page of AuditRecords and its
// arguments, or false when no record can match q.
//
// The filters that are set are conditions of the WHERE, each on the
// leading columns of its index after the workspace; After and Before
// bound the id, the index's last column; and the page is ORDER BY id
// LIMIT, so PostgreSQL reads one index range in order and stops at the
// page's end. Several actions are not action = ANY(...), which would
// read the whole range of each action to sort it: each action is a
// subquery of its own, ordered and limited, and the page is their UNION
// ALL ordered and limited again, which PostgreSQL answers by merging
// the ordered runs (Merge Append), reading a page's worth in all.
//
// A kind, action or outcome that text cannot hold matches no record. A
// bound that text cannot hold is replaced by the least string text can
// hold that is not below it (textCeil), which selects the same ids.
func auditPageSQL(slug string, q store.AuditQuery) (sql string, args []any, ok bool) {
	if q.Limit <= 0 {
		return "", nil, false
	}
	args = []any{slug}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := "workspace = $1"
	if q.ActorKind != "" {
		if !storable(q.ActorKind) {
			return "", nil, false
		}
		where += " AND actor_kind = " + param(q.ActorKind) + " AND actor_id = " + param([]byte(q.ActorID))
	}
	if q.TargetKind != "" {
		if !storable(q.TargetKind) {
			return "", nil, false
		}
		where += " AND target_kind = " + param(q.TargetKind) + " AND target_id = " + param([]byte(q.TargetID))
	}
	if q.Outcome != "" {
		if !storable(q.Outcome) {
			return "", nil, false
		}
		where += " AND outcome = " + param(q.Outcome)
	}
	if q.After != "" {
		switch ceil, ok := textCeil(q.After); {
		case !ok:
			return "", nil, false
		case ceil == q.After:
			where += " AND id > " + param(q.After)
		default:
			where += " AND id >= " + param(ceil)
		}
	}
	if q.Before != "" {
		if ceil, ok := textCeil(q.Before); ok {
			where += " AND id < " + param(ceil)
		}
	}
	var actions []string
	for _, a := range q.Actions {
		if storable(a) && !slices.Contains(actions, a) {
			actions = append(actions, a)
		}
	}
	if len(q.Actions) > 0 && len(actions) == 0 {
		return "", nil, false
	}
	order := " ORDER BY id DESC LIMIT "
	if q.Ascending {
		order = " ORDER BY id ASC LIMIT "
	}
	limit := param(q.Limit)
	page := func(where string) string {
		return "SELECT " + auditColumns + " FROM audit_records WHERE " + where + order + limit
	}
	switch len(actions) {
	case 0:
		return page(where), args, true
	case 1:
		return page(where + " AND action = " + param(actions[0])), args, true
	}
	runs := make([]string, len(actions))
	for i, a := range actions {
		runs[i] = "(" + page(where+" AND action = "+param(a)) + ")"
	}
	return strings.Join(runs, " UNION ALL ") + order + limit, args, true
}

// DeleteAuditRecords implements store.Tx: one DELETE of the rows that a
// range of the primary key, lowest ids first, finds, as the sweeps of
// sweep.go delete.
func (t *tx) DeleteAuditRecords(slug, beforeID string, limit int) (int, error) {
	if limit <= 0 || !storable(slug) {
		return t.deleted(slug, 0)
	}
	bound, args := "", []any{slug, limit}
	if ceil, ok := textCeil(beforeID); ok {
		bound, args = " AND id < $3", append(args, ceil)
	}
	tag, err := t.exec(`DELETE FROM audit_records WHERE ctid IN (
		SELECT ctid FROM audit_records WHERE workspace = $1`+bound+` ORDER BY id LIMIT $2)`, args...)
	if err != nil {
		return 0, err
	}
	return t.deleted(slug, int(tag.RowsAffected()))
}

// textCeil returns the least string that PostgreSQL text can hold (see
// storable) and that is not below s in byte order, and false when there
// is none. For every string x that text can hold, x < s exactly when x <
// textCeil(s), and x > s exactly when x >= textCeil(s) for an s that text
// cannot hold: so a bound of ids that text cannot hold becomes one it
// can, which selects the same ids. A storable s is its own ceiling.
func textCeil(s string) (string, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != 0 && (r != utf8.RuneError || size > 1) {
			i += size
			continue
		}
		// s[:i] is storable, and no code point text holds is a prefix of
		// rest. Code points encode in the order of their values, so the
		// least one whose encoding is not below rest, after s[:i], is the
		// ceiling; if there is none, every string that starts with s[:i]
		// is below s, and the ceiling is the least string above them.
		rest := s[i:]
		if k := sort.Search(textRunes, func(k int) bool { return string(textRune(k)) >= rest }); k < textRunes {
			return s[:i] + string(textRune(k)), true
		}
		return prefixEnd(s[:i])
	}
	return s, true
}

// textRunes counts the code points text can hold: U+0001 to U+10FFFF
// but the surrogates, which textRune numbers from 0 in ascending order.
const textRunes = utf8.MaxRune - 0x800

// textRune returns the code point numbered k (see textRunes).
func textRune(k int) rune {
	if r := rune(k) + 1; r < 0xD800 {
		return r
	}
	return rune(k) + 1 + 0x800
}
