package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// integRoutes are the pages of a workspace's integrations: its webhook
// endpoints and their deliveries (webhooks.go), API keys and OAuth
// clients (clients.go), signing keys (keys.go) and audit trail
// (audit.go).
func integRoutes() []route {
	const ws = "workspaces/{slug}/"
	return []route{
		{http.MethodGet, ws + "webhooks", inWorkspace, (*Handler).serveWebhooks},
		{http.MethodPost, ws + "webhooks", inWorkspace, (*Handler).createWebhook},
		{http.MethodGet, ws + "webhooks/{id}", inWorkspace, (*Handler).serveWebhook},
		{http.MethodGet, ws + "webhooks/{id}/delete", inWorkspace, (*Handler).serveDeleteWebhook},
		{http.MethodPost, ws + "webhooks/{id}/delete", inWorkspace, (*Handler).deleteWebhook},
		{http.MethodPost, ws + "webhooks/{id}/enable", inWorkspace, (*Handler).enableWebhook},
		{http.MethodPost, ws + "webhooks/{id}/deliveries/{delivery}/retry", inWorkspace, (*Handler).retryDelivery},
		{http.MethodGet, ws + "clients", inWorkspace, (*Handler).serveClients},
		{http.MethodPost, ws + "clients", inWorkspace, (*Handler).createClient},
		{http.MethodGet, ws + "clients/{id}", inWorkspace, (*Handler).serveClient},
		{http.MethodGet, ws + "clients/{id}/delete", inWorkspace, (*Handler).serveDeleteClient},
		{http.MethodPost, ws + "clients/{id}/delete", inWorkspace, (*Handler).deleteClient},
		{http.MethodPost, ws + "clients/apikeys", inWorkspace, (*Handler).createAPIKey},
		{http.MethodGet, ws + "clients/apikeys/{id}/revoke", inWorkspace, (*Handler).serveRevokeAPIKey},
		{http.MethodPost, ws + "clients/apikeys/{id}/revoke", inWorkspace, (*Handler).revokeAPIKey},
		{http.MethodGet, ws + "keys", inWorkspace, (*Handler).serveSigningKeys},
		{http.MethodGet, ws + "keys/rotate", inWorkspace, (*Handler).serveRotateSigningKey},
		{http.MethodPost, ws + "keys/rotate", inWorkspace, (*Handler).rotateSigningKey},
		{http.MethodGet, ws + "audit", inWorkspace, (*Handler).serveAudit},
	}
}

// pathWorkspace returns the workspace named by the path's {slug}.
func (h *Handler) pathWorkspace(rq *request) (*identity.Workspace, error) {
	return h.svc.GetWorkspace(rq.ctx, rq.r.PathValue("slug"))
}

// pathID reads the path's wildcard name as a positive integer id; any
// other value names nothing, and the page is not found.
func pathID(rq *request, name string) (int64, error) {
	id, err := strconv.ParseInt(rq.r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound
	}
	return id, nil
}

// listPager is the paging of one of several lists on a page: each list
// has its own query parameter, and its links keep the others'.
type listPager struct {
	// From, To and Total number the rows shown, from 1.
	From, To, Total int
	// PrevHref and NextHref link to the neighbouring pages, or are "".
	PrevHref, NextHref string
}

// newListPager returns the paging of shown rows from offset among total,
// in the list whose offset is the query parameter param of the page
// path (a URL built with href).
func newListPager(rq *request, path, param string, offset, shown, total int) listPager {
	p := newPager(offset, shown, total)
	link := func(off int) string {
		q := rq.r.URL.Query()
		q.Set(param, strconv.Itoa(off))
		return path + "?" + q.Encode()
	}
	lp := listPager{From: p.From, To: p.To, Total: p.Total}
	if p.Prev >= 0 {
		lp.PrevHref = link(p.Prev)
	}
	if p.Next >= 0 {
		lp.NextHref = link(p.Next)
	}
	return lp
}

// queryOffset reads the query parameter param as a number of rows to
// skip: 0 when absent or not a number.
func queryOffset(rq *request, param string) int {
	n, err := strconv.Atoi(rq.r.URL.Query().Get(param))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// indexedField matches the library's name of a list's entry,
// "redirectUris[2]".
var indexedField = regexp.MustCompile(`^([A-Za-z]+)\[(\d+)\]$`)

// inputErrors returns the field messages of a library error by the name
// of the form's input: the entries of a list ("events[1]") belong to the
// list's one input (a group of checkboxes, a text area of one entry a
// line), whose message then says which line, when lines names the
// entries' input as one a line.
func inputErrors(err error, lines ...string) map[string]string {
	var e *identity.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, f := range e.Fields {
		name, msg := f.Field, f.Message
		if m := indexedField.FindStringSubmatch(f.Field); m != nil {
			name = m[1]
			for _, l := range lines {
				if l == name {
					n, _ := strconv.Atoi(m[2])
					msg = fmt.Sprintf("line %d: %s", n+1, msg)
				}
			}
		}
		if _, ok := out[name]; !ok {
			out[name] = msg
		}
	}
	return out
}

// formLines returns the non-empty lines of a text area, trimmed.
func formLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// refuseForm answers an action that the library refused with the page
// of its form: renderForm's status and messages, the fields' messages by
// input (inputErrors).
func (h *Handler) refuseForm(rq *request, name string, v *view, err error, lines ...string) {
	status, _, message := libraryError(err)
	if status == http.StatusInternalServerError {
		h.fail(rq, err)
		return
	}
	v.Error = message
	v.Fields = inputErrors(err, lines...)
	v.Form = rq.r.PostForm
	h.render(rq, status, name, v)
}

// InputChecked reports whether a checkbox or radio button name with
// value is checked: whether the form sent back has it, or, on a fresh
// form, def.
func (v *view) InputChecked(name, value string, def bool) bool {
	if v.Form == nil {
		return def
	}
	for _, s := range v.Form[name] {
		if s == value {
			return true
		}
	}
	return false
}

// redirect answers a successful action with 303 to path (built with
// href) and its query.
func redirect(rq *request, path string, q url.Values) {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	http.Redirect(rq.w, rq.r, path, http.StatusSeeOther)
}
