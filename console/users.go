package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// usersRoutes are the pages and actions of a workspace's users: the list
// (search, filters, bulk actions), the user page and its actions.
func usersRoutes() []route {
	u := "workspaces/{slug}/users"
	one := u + "/{id}"
	return []route{
		{http.MethodGet, u, inWorkspace, (*Handler).serveUsers},
		{http.MethodPost, u + "/bulk", inWorkspace, (*Handler).bulkUsers},
		{http.MethodGet, one, inWorkspace, (*Handler).serveUser},
		{http.MethodPost, one, inWorkspace, (*Handler).updateUser},
		{http.MethodPost, one + "/enable", inWorkspace, (*Handler).enableUser},
		{http.MethodPost, one + "/disable", inWorkspace, (*Handler).disableUser},
		{http.MethodPost, one + "/email-verified", inWorkspace, (*Handler).setEmailVerified},
		{http.MethodPost, one + "/password-reset", inWorkspace, (*Handler).requestPasswordReset},
		{http.MethodPost, one + "/attributes", inWorkspace, (*Handler).setAttribute},
		{http.MethodPost, one + "/attributes/delete", inWorkspace, (*Handler).deleteAttribute},
		{http.MethodPost, one + "/roles", inWorkspace, (*Handler).assignRole},
		{http.MethodPost, one + "/roles/{role}/remove", inWorkspace, (*Handler).removeRole},
		{http.MethodPost, one + "/groups", inWorkspace, (*Handler).addToGroup},
		{http.MethodPost, one + "/groups/{group}/remove", inWorkspace, (*Handler).removeFromGroup},
		{http.MethodPost, one + "/sessions/revoke", inWorkspace, (*Handler).revokeAllSessions},
		{http.MethodPost, one + "/sessions/{session}/revoke", inWorkspace, (*Handler).revokeSession},
		{http.MethodPost, one + "/passkeys/{passkey}/delete", inWorkspace, (*Handler).deletePasskey},
		{http.MethodPost, one + "/mfa/reset", inWorkspace, (*Handler).resetMFA},
		{http.MethodPost, one + "/unlock", inWorkspace, (*Handler).unlockUser},
		{http.MethodGet, one + "/audit", inWorkspace, (*Handler).serveUserAudit},
		{http.MethodGet, one + "/delete", inWorkspace, (*Handler).serveDeleteUser},
		{http.MethodPost, one + "/delete", inWorkspace, (*Handler).deleteUser},
	}
}

// stamp is a time as the pages show it: machine-readable and in words.
type stamp struct {
	ISO, Text string
}

// stampOf returns t as a stamp; the zero time is the zero stamp.
func stampOf(t time.Time) stamp {
	if t.IsZero() {
		return stamp{}
	}
	t = t.UTC()
	return stamp{ISO: t.Format(time.RFC3339), Text: t.Format("2006-01-02 15:04") + " UTC"}
}

// userRow is a user as a list shows it.
type userRow struct {
	ID                          int64
	Username, Email, FullName   string
	Enabled, EmailVerified, MFA bool
	Created                     stamp
}

func rowOf(u identity.User) userRow {
	return userRow{ID: u.ID, Username: u.Username, Email: u.Email, FullName: u.FullName, Enabled: u.Enabled,
		EmailVerified: u.EmailVerified, MFA: u.MFAEnabled, Created: stampOf(u.CreatedAt)}
}

// The list's modes: what the query asks the library.
const (
	// modeSearch: ListUsers with the prefix search (none: every user),
	// paged by offset, with the total.
	modeSearch = "search"
	// modeScan: ListUsersFiltered, a scan by state that examines at most
	// identity.UserScanBatch users a call, paged by cursor.
	modeScan = "scan"
	// modeAttribute: ListUsersByAttribute, paged by offset, with the
	// total.
	modeAttribute = "attribute"
)

// usersQuery is what the users page was asked: the search, the state
// filters and the attribute filter, read from the URL's query.
type usersQuery struct {
	Q                                 string
	Disabled, Locked, MFA, Unverified bool
	Key, Value                        string
	hasKey                            bool
	offset                            int
	cursor                            string
}

func usersQueryOf(r *http.Request) usersQuery {
	q := r.URL.Query()
	uq := usersQuery{Q: q.Get("q"), Disabled: q.Get("disabled") != "", Locked: q.Get("locked") != "",
		MFA: q.Get("mfa") != "", Unverified: q.Get("unverified") != "", Key: q.Get("key"), Value: q.Get("value"),
		offset: offsetOf(r), cursor: q.Get("cursor")}
	uq.hasKey = uq.Key != ""
	return uq
}

// mode says which list the query asks for: the attribute filter when a
// key is given, else a scan when a state filter is set, else the search.
func (uq usersQuery) mode() string {
	switch {
	case uq.hasKey:
		return modeAttribute
	case uq.Disabled || uq.Locked || uq.MFA || uq.Unverified:
		return modeScan
	}
	return modeSearch
}

// values returns the query's filters as URL values, without the paging.
func (uq usersQuery) values() url.Values {
	v := url.Values{}
	set := func(k string, on bool) {
		if on {
			v.Set(k, "1")
		}
	}
	if uq.Q != "" {
		v.Set("q", uq.Q)
	}
	set("disabled", uq.Disabled)
	set("locked", uq.Locked)
	set("mfa", uq.MFA)
	set("unverified", uq.Unverified)
	if uq.hasKey {
		v.Set("key", uq.Key)
		v.Set("value", uq.Value)
	}
	return v
}

// usersURL returns the URL of the users page of slug with the query and one
// more parameter (the paging), or none when name is "".
func (h *Handler) usersURL(slug string, uq usersQuery, name, value string) string {
	v := uq.values()
	if name != "" {
		v.Set(name, value)
	}
	u := h.href("workspaces", slug, "users")
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// usersData is the users page's data.
type usersData struct {
	Slug  string
	Query usersQuery
	Mode  string
	Rows  []userRow
	// Total counts the users the list goes over: the matches of the
	// search or of the attribute, or, for a scan, the users it walks.
	Total int
	// From and To number the rows shown (offset lists).
	From, To int
	// Examined counts the users a scan examined for this page, from
	// ScanFrom (1-based), and More says that the scan has users left.
	Examined, ScanFrom, ScanTo int
	More                       bool
	// PrevURL, NextURL and FirstURL page the list ("" when there is no
	// such page).
	PrevURL, NextURL, FirstURL string
	// BulkMax is how many users one bulk action handles at most.
	BulkMax int
	// ScanBatch is how many users one page of a scan examines at most.
	ScanBatch int
	// Deleted names a user deleted permanently, shown as a notice.
	Deleted string
}

// serveUsers is the users page: the search (as you type with JavaScript,
// by the button without), the state and attribute filters, the list and
// the bulk actions.
func (h *Handler) serveUsers(rq *request) error {
	slug := rq.r.PathValue("slug")
	ws, err := h.svc.GetWorkspace(rq.ctx, slug)
	if err != nil {
		return err
	}
	uq := usersQueryOf(rq.r)
	d := usersData{Slug: slug, Query: uq, Mode: uq.mode(), BulkMax: bulkMax, ScanBatch: identity.UserScanBatch}
	v := &view{Title: "Users", Workspace: slug, Data: &d}
	switch d.Mode {
	case modeScan:
		page, err := ws.ListUsersFiltered(rq.ctx, identity.UserFilter{Search: uq.Q, Disabled: uq.Disabled,
			Locked: uq.Locked, MFAEnrolled: uq.MFA, EmailUnverified: uq.Unverified},
			&identity.ScanOptions{Cursor: uq.cursor, Limit: pageSize})
		if identity.ErrorCode(err) == identity.CodeInvalid {
			// A cursor that is not one of ours starts the scan over.
			uq.cursor = ""
			page, err = ws.ListUsersFiltered(rq.ctx, identity.UserFilter{Search: uq.Q, Disabled: uq.Disabled,
				Locked: uq.Locked, MFAEnrolled: uq.MFA, EmailUnverified: uq.Unverified},
				&identity.ScanOptions{Limit: pageSize})
		}
		if err != nil {
			return err
		}
		start, _ := strconv.Atoi(uq.cursor)
		d.Total, d.Examined, d.ScanFrom, d.ScanTo, d.More = page.Total, page.Examined, start+1, start+page.Examined, page.HasMore
		for _, u := range page.Items {
			d.Rows = append(d.Rows, rowOf(u))
		}
		if page.HasMore {
			d.NextURL = h.usersURL(slug, uq, "cursor", page.NextCursor)
		}
		if uq.cursor != "" {
			d.FirstURL = h.usersURL(slug, uq, "", "")
		}
	default:
		var list identity.List[identity.User]
		page := &identity.Page{Offset: uq.offset, Limit: pageSize}
		if d.Mode == modeAttribute {
			list, err = ws.ListUsersByAttribute(rq.ctx, uq.Key, uq.Value, page)
			if identity.ErrorCode(err) == identity.CodeInvalid {
				v.Error = "The attribute filter is not valid: see the messages next to it."
				v.Fields = fieldErrors(err)
				h.render(rq, http.StatusUnprocessableEntity, "users", v)
				return nil
			}
		} else {
			list, err = ws.ListUsers(rq.ctx, uq.Q, page)
		}
		if err != nil {
			return err
		}
		for _, u := range list.Items {
			d.Rows = append(d.Rows, rowOf(u))
		}
		p := newPager(uq.offset, len(list.Items), list.Total)
		d.Total, d.From, d.To = list.Total, p.From, p.To
		if p.Prev >= 0 {
			d.PrevURL = h.usersURL(slug, uq, "offset", strconv.Itoa(p.Prev))
		}
		if p.Next >= 0 {
			d.NextURL = h.usersURL(slug, uq, "offset", strconv.Itoa(p.Next))
		}
	}
	// The notice of a permanent deletion says only what is true now: the
	// user is gone and the username free.
	q := rq.r.URL.Query()
	if id, err := strconv.ParseInt(q.Get("deleted"), 10, 64); err == nil && q.Get("username") != "" {
		name := q.Get("username")
		if _, err := ws.GetUser(rq.ctx, id); identity.ErrorCode(err) == identity.CodeNotFound && !h.usernameTaken(rq, ws, name) {
			v.Notice = "User " + name + " deleted permanently; the username is free."
		}
	}
	h.render(rq, http.StatusOK, "users", v)
	return nil
}

// usernameTaken reports whether a user of ws has the username, ignoring
// case, as the library compares usernames, by the prefix search: it looks
// at the first 1,000 matches, and counts a search with more as taken.
func (h *Handler) usernameTaken(rq *request, ws *identity.Workspace, name string) bool {
	for offset := 0; offset < 1000; offset += identity.MaxPageLimit {
		list, err := ws.ListUsers(rq.ctx, name, &identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			return true
		}
		for _, u := range list.Items {
			if strings.EqualFold(u.Username, name) {
				return true
			}
		}
		if offset+len(list.Items) >= list.Total {
			return false
		}
	}
	return true
}
