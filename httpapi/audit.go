package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/identitylib/identity"
)

// The audit trail: GET /audit reads one page of the workspace's trail
// (Workspace.ListAuditRecords), newest first, filtered by its query. routes
// names listAudit with its scope, audit:read.

// listAudit answers a page of the trail as {"records": [...], "hasMore",
// "nextCursor"}, each record as identity.AuditRecord marshals. Its query
// parameters, each optional (an empty value is as if absent):
//
//   - actor and target: KIND:ID, as identity.ParseAuditRef reads them
//     ("api_key:3f2a9c01d4e5b6a7", "user:42"); an empty ID names the
//     actor or target that has none ("system:", the system's actor);
//   - action: an action of the catalogue, or a prefix of some ending in
//     "." ("sign_in.");
//   - outcome: success or failure;
//   - since and until: RFC 3339 times, the records written at or after
//     since and before until;
//   - cursor: the nextCursor of the page before;
//   - limit: 1 to identity.MaxPageLimit, identity.DefaultPageLimit when
//     absent.
//
// Any of them malformed, or refused by the library, is a 422 of code
// invalid naming every such parameter, as on every list.
func listAudit(ctx context.Context, w http.ResponseWriter, c *call) error {
	q, err := query(c.r)
	if err != nil {
		return err
	}
	filter, page, err := auditQueryOf(q)
	if err != nil {
		return err
	}
	list, err := c.ws.ListAuditRecords(ctx, filter, page)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, list)
}

// auditQueryOf reads the filter and the page of GET /audit from its
// query. It checks only what the library cannot see (the forms of actor,
// target, since, until and limit); the values are the library's to judge.
func auditQueryOf(q url.Values) (*identity.AuditFilter, *identity.AuditPageOptions, error) {
	var fields []identity.FieldError
	f := &identity.AuditFilter{Action: q.Get("action"), Outcome: identity.AuditOutcome(q.Get("outcome"))}
	page := &identity.AuditPageOptions{Cursor: q.Get("cursor")}
	kind, id, err := identity.ParseAuditRef("actor", q.Get("actor"))
	fields = appendFields(fields, err)
	f.ActorKind, f.ActorID = identity.ActorKind(kind), id
	f.TargetKind, f.TargetID, err = identity.ParseAuditRef("target", q.Get("target"))
	fields = appendFields(fields, err)
	fields = parseTimeParam(fields, q, "since", &f.Since)
	fields = parseTimeParam(fields, q, "until", &f.Until)
	if v := q.Get("limit"); v != "" {
		fields = parseIntParam(fields, "limit", v, &page.Limit)
		if page.Limit == 0 && len(fields) == 0 {
			// The library takes 0 for its default; the API's limit is
			// 1 or more, as on every list.
			fields = append(fields, identity.FieldError{Field: "limit", Rule: identity.RuleRange,
				Message: fmt.Sprintf("must be between 1 and %d", identity.MaxPageLimit)})
		}
	}
	if len(fields) > 0 {
		return nil, nil, invalid("invalid audit query", fields)
	}
	return f, page, nil
}

// appendFields appends the field errors of err, an error of
// identity.ParseAuditRef, to fields.
func appendFields(fields []identity.FieldError, err error) []identity.FieldError {
	var e *identity.Error
	if errors.As(err, &e) {
		fields = append(fields, e.Fields...)
	}
	return fields
}

// parseTimeParam parses the RFC 3339 time of the query parameter name
// into dst, when the query has one, or appends the problem with it.
func parseTimeParam(fields []identity.FieldError, q url.Values, name string, dst *time.Time) []identity.FieldError {
	v := q.Get(name)
	if v == "" {
		return fields
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return append(fields, identity.FieldError{Field: name, Rule: identity.RuleFormat,
			Message: "must be an RFC 3339 time, such as 2026-03-01T12:00:00Z"})
	}
	*dst = t
	return fields
}
