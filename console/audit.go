package console

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// auditTimeLayout is how the audit page's time filters are written: the
// value of an <input type="datetime-local">, read as UTC.
const auditTimeLayout = "2006-01-02T15:04"

// auditRow is an entry of the audit page.
type auditRow struct {
	Rec identity.AuditRecord
	// TargetHref links to the page of the record's target, or is "".
	TargetHref string
	Changes    []auditChangeRow
}

// auditChangeRow is a field's change, each side written as JSON, "" for
// no value.
type auditChangeRow struct {
	Field, Before, After string
}

// auditData is the data of the audit page.
type auditData struct {
	Slug string
	Rows []auditRow
	// NextHref continues after the page, FirstHref goes back to its
	// first page; "" when there is none.
	NextHref, FirstHref string
	// Filtered reports whether a filter is set.
	Filtered bool
	Actions  []identity.AuditAction
	Kinds    []string
	Actors   []identity.ActorKind
}

// serveAudit shows the workspace's audit trail, newest first, filtered
// by the query's actor ("kind:id", or "system"), target ("kind:id"), action
// (one, or a prefix ending in "."), outcome and time (since, until), a
// page at a time by cursor.
func (h *Handler) serveAudit(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	q := rq.r.URL.Query()
	d := auditData{Slug: ws.Slug(), Actions: identity.AuditActions(), Kinds: identity.AuditTargetKinds(),
		Actors: identity.ActorKinds()}
	v := &view{Title: "Audit trail", Workspace: ws.Slug(), Form: q}
	var f identity.AuditFilter
	kind, id, _ := strings.Cut(strings.TrimSpace(q.Get("actor")), ":")
	f.ActorKind, f.ActorID = identity.ActorKind(kind), id
	f.TargetKind, f.TargetID, _ = strings.Cut(strings.TrimSpace(q.Get("target")), ":")
	f.Action = strings.TrimSpace(q.Get("action"))
	f.Outcome = identity.AuditOutcome(q.Get("outcome"))
	fields := map[string]string{}
	for name, t := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		s := q.Get(name)
		if s == "" {
			continue
		}
		tm, err := time.Parse(auditTimeLayout, s)
		if err != nil {
			fields[name] = "must be a date and time, such as 2026-03-01T12:00"
			continue
		}
		*t = tm
	}
	d.Filtered = f != identity.AuditFilter{}
	path := h.href("workspaces", ws.Slug(), "audit")
	first := url.Values{}
	for k, vs := range q {
		if k != "cursor" {
			first[k] = vs
		}
	}
	if q.Get("cursor") != "" {
		d.FirstHref = path
		if len(first) > 0 {
			d.FirstHref += "?" + first.Encode()
		}
	}
	v.Data = d
	if len(fields) > 0 {
		v.Error, v.Fields = "Some filters are not valid: see the messages next to them.", fields
		h.render(rq, http.StatusUnprocessableEntity, "audit", v)
		return nil
	}
	page, err := ws.ListAuditRecords(rq.ctx, &f, &identity.AuditPageOptions{Cursor: q.Get("cursor"), Limit: pageSize})
	if err != nil {
		status, _, message := libraryError(err)
		if status == http.StatusInternalServerError {
			return err
		}
		v.Error, v.Fields = message, fieldErrors(err)
		h.render(rq, status, "audit", v)
		return nil
	}
	for _, rec := range page.Records {
		row := auditRow{Rec: rec, TargetHref: h.auditTargetHref(rq, ws, rec.Target)}
		for _, name := range slices.Sorted(maps.Keys(rec.Changes)) {
			c := rec.Changes[name]
			row.Changes = append(row.Changes, auditChangeRow{Field: name, Before: auditValue(c.Before), After: auditValue(c.After)})
		}
		d.Rows = append(d.Rows, row)
	}
	if page.HasMore {
		next := url.Values{}
		maps.Copy(next, first)
		next.Set("cursor", page.NextCursor)
		d.NextHref = path + "?" + next.Encode()
	}
	v.Data = d
	h.render(rq, http.StatusOK, "audit", v)
	return nil
}

// auditTargetHref returns the console page of an audit record's target,
// or "" when it has none: a user's page, a client's, an endpoint's (a
// delivery's endpoint), the signing keys, the API keys; a workspace's
// list. A target deleted since is still linked: its page says so.
func (h *Handler) auditTargetHref(rq *request, ws *identity.Workspace, t identity.AuditTarget) string {
	slug := ws.Slug()
	switch t.Kind {
	case identity.TargetUser:
		return h.href("workspaces", slug, "users", t.ID)
	case identity.TargetClient:
		return h.href("workspaces", slug, "clients", t.ID)
	case identity.TargetWebhook:
		return h.href("workspaces", slug, "webhooks", t.ID)
	case identity.TargetDelivery:
		id, err := strconv.ParseInt(t.ID, 10, 64)
		if err != nil {
			return ""
		}
		dl, err := ws.GetDelivery(rq.ctx, id)
		if err != nil || dl.EndpointID == 0 {
			return ""
		}
		return h.href("workspaces", slug, "webhooks", dl.EndpointID)
	case identity.TargetSigningKey:
		return h.href("workspaces", slug, "keys")
	case identity.TargetAPIKey:
		return h.href("workspaces", slug, "clients") + "#apikey-" + url.PathEscape(t.ID)
	case identity.TargetWorkspace:
		return h.href("workspaces")
	}
	return ""
}

// auditValue writes a changed value as JSON: a string in quotes, a list
// in brackets; "" for none.
func auditValue(v any) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the template escapes: "<" stays "<" to read
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
