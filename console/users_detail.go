package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// userData is the user page's data.
type userData struct {
	Slug    string
	User    userRow
	Version int64
	Updated stamp
	// Email and FullName are the profile form's values.
	Email, FullName string

	Attrs                        []attrRow
	AttrTotal, AttrLimit         int
	AttrPrevURL, AttrNextURL     string
	AttrKey, AttrValue, RoleName string

	Roles  []roleRow
	Groups []identity.Group
	// GroupQ is the group search; GroupMatches its first groups.
	GroupQ       string
	GroupMatches []groupMatch
	GroupTotal   int
	Searched     bool

	Sessions                       []sessionRow
	SessionTotal, ActiveOnPage     int
	SessionPrevURL, SessionNextURL string

	Passkeys []passkeyRow

	MFA      identity.MFAStatus
	Enrolled stamp
	Lock     identity.LockState
	LockEnd  stamp

	Clients      []clientOption
	ClientID     string
	Scopes       string
	Access, ID   []claimRow
	PreviewError string

	Audit     []userAuditRow
	AuditMore bool
}

type attrRow struct{ Key, Value string }

type roleRow struct {
	ID     int64
	Name   string
	Direct bool
	Groups []identity.GroupRef
}

type groupMatch struct {
	ID     int64
	Name   string
	Member bool
}

type sessionRow struct {
	ID, Browser, UserAgent, Address string
	Created, LastSeen, Expires      stamp
	Active                          bool
	Revoked                         stamp
}

// passkeyRow is a passkey as the user page shows it.
type passkeyRow struct {
	ID, Name, Authenticator  string
	Created, LastUsed        stamp
	BackupEligible, BackedUp bool
}

// passkeyRows returns the rows of the user's passkeys.
func passkeyRows(keys []identity.Passkey) []passkeyRow {
	rows := make([]passkeyRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, passkeyRow{ID: k.ID, Name: k.Name, Authenticator: k.AuthenticatorName,
			Created: stampOf(k.CreatedAt), LastUsed: stampOf(k.LastUsedAt), BackupEligible: k.BackupEligible, BackedUp: k.BackupState})
	}
	return rows
}

type clientOption struct {
	ID, Name string
	Selected bool
}

type claimRow struct {
	Name, Value, Source string
}

type userAuditRow struct {
	Time                           stamp
	Action, Actor, Outcome, Reason string
	Address                        string
}

// userAuditShown is how many records of the user's trail the user page
// shows; the user's audit page pages through the rest.
const userAuditShown = 20

// workspaceUser reads the path's workspace and user id.
func (h *Handler) workspaceUser(rq *request) (*identity.Workspace, int64, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, 0, err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return nil, 0, err
	}
	return ws, id, nil
}

// userView reads everything the user page shows.
func (h *Handler) userView(rq *request, ws *identity.Workspace, id int64) (*view, *userData, error) {
	ctx := rq.ctx
	u, err := ws.GetUser(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	q := rq.r.URL.Query()
	d := &userData{Slug: ws.Slug(), User: rowOf(u), Version: u.Version, Updated: stampOf(u.UpdatedAt),
		Email: u.Email, FullName: u.FullName}
	base := h.href("workspaces", ws.Slug(), "users", u.ID)

	attrs, err := ws.ListAttributes(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	aoff := min(atoiQuery(q, "attrs"), len(keys))
	for _, k := range keys[aoff:min(aoff+pageSize, len(keys))] {
		d.Attrs = append(d.Attrs, attrRow{k, attrs[k]})
	}
	d.AttrTotal = len(keys)
	if ap := newPager(aoff, len(d.Attrs), len(keys)); ap.Prev >= 0 || ap.Next >= 0 {
		if ap.Prev >= 0 {
			d.AttrPrevURL = base + "?attrs=" + strconv.Itoa(ap.Prev) + "#attributes"
		}
		if ap.Next >= 0 {
			d.AttrNextURL = base + "?attrs=" + strconv.Itoa(ap.Next) + "#attributes"
		}
	}

	roles, err := ws.ListUserRoles(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range roles {
		d.Roles = append(d.Roles, roleRow{ID: r.ID, Name: r.Name, Direct: r.Direct, Groups: r.Groups})
	}
	if d.Groups, err = ws.ListUserGroups(ctx, id); err != nil {
		return nil, nil, err
	}
	if d.GroupQ = q.Get("groupq"); q.Has("groupq") {
		d.Searched = true
		list, err := ws.ListGroups(ctx, d.GroupQ, &identity.Page{Limit: 10})
		if err != nil {
			return nil, nil, err
		}
		d.GroupTotal = list.Total
		for _, g := range list.Items {
			member := slices.ContainsFunc(d.Groups, func(m identity.Group) bool { return m.ID == g.ID })
			d.GroupMatches = append(d.GroupMatches, groupMatch{ID: g.ID, Name: g.Name, Member: member})
		}
	}

	soff := atoiQuery(q, "sessions")
	sessions, err := ws.ListSessions(ctx, id, &identity.Page{Offset: soff, Limit: pageSize})
	if err != nil {
		return nil, nil, err
	}
	now := h.svc.Now()
	for _, s := range sessions.Items {
		row := sessionRow{ID: s.ID, Browser: browserOf(s.UserAgent), UserAgent: s.UserAgent, Address: s.Address,
			Created: stampOf(s.CreatedAt), LastSeen: stampOf(s.LastSeenAt), Expires: stampOf(s.ExpiresAt), Active: s.Active(now)}
		if s.RevokedAt != nil {
			row.Revoked = stampOf(*s.RevokedAt)
		}
		if row.Active {
			d.ActiveOnPage++
		}
		d.Sessions = append(d.Sessions, row)
	}
	d.SessionTotal = sessions.Total
	if sp := newPager(soff, len(sessions.Items), sessions.Total); sp.Prev >= 0 || sp.Next >= 0 {
		if sp.Prev >= 0 {
			d.SessionPrevURL = base + "?sessions=" + strconv.Itoa(sp.Prev) + "#sessions"
		}
		if sp.Next >= 0 {
			d.SessionNextURL = base + "?sessions=" + strconv.Itoa(sp.Next) + "#sessions"
		}
	}

	passkeys, err := ws.ListPasskeys(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	d.Passkeys = passkeyRows(passkeys)
	if d.MFA, err = ws.GetMFAStatus(ctx, id); err != nil {
		return nil, nil, err
	}
	d.Enrolled = stampOf(d.MFA.EnrolledAt)
	if d.Lock, err = ws.GetLockState(ctx, id); err != nil {
		return nil, nil, err
	}
	d.LockEnd = stampOf(d.Lock.LockedUntil)

	if err := h.claimsPreview(rq, ws, d); err != nil {
		return nil, nil, err
	}

	trail, err := ws.ListAuditRecords(ctx, &identity.AuditFilter{TargetKind: identity.TargetUser, TargetID: strconv.FormatInt(id, 10)},
		&identity.AuditPageOptions{Limit: userAuditShown})
	if err != nil {
		return nil, nil, err
	}
	d.Audit, d.AuditMore = userAuditRows(trail.Records), trail.HasMore

	return &view{Title: "User " + u.Username, Workspace: ws.Slug(), Data: d}, d, nil
}

// claimsPreview fills the claims preview of the user's tokens: for the
// client and scopes the query names (none and openid profile email by
// default).
func (h *Handler) claimsPreview(rq *request, ws *identity.Workspace, d *userData) error {
	q := rq.r.URL.Query()
	d.ClientID = q.Get("client")
	d.Scopes = "openid profile email"
	if q.Has("scopes") {
		d.Scopes = q.Get("scopes")
	}
	clients, err := ws.ListClients(rq.ctx)
	if err != nil {
		return err
	}
	for _, c := range clients {
		d.Clients = append(d.Clients, clientOption{ID: c.ID, Name: c.Name, Selected: c.ID == d.ClientID})
	}
	p, err := ws.GetClaimsPreview(rq.ctx, identity.ClaimsPreviewRequest{UserID: d.User.ID, ClientID: d.ClientID,
		Scopes: strings.Fields(d.Scopes)})
	switch identity.ErrorCode(err) {
	case "":
	case identity.CodeForbidden:
		d.PreviewError = "A disabled user gets no tokens: enable the user to preview them."
		return nil
	case identity.CodeNotFound:
		d.PreviewError = "There is no such client: choose one of the list."
		return nil
	default:
		return err
	}
	d.Access, d.ID = claimRows(p.Access), claimRows(p.ID)
	return nil
}

func claimRows(claims []identity.PreviewClaim) []claimRow {
	rows := make([]claimRow, len(claims))
	for i, c := range claims {
		val := "(set when the token is signed)"
		if c.Value != nil {
			b, err := json.Marshal(c.Value)
			if err == nil {
				val = string(b)
			}
		}
		src := string(c.Source.Kind)
		switch c.Source.Kind {
		case identity.ClaimFromMapper:
			src = "mapper of attribute " + c.Source.Detail
		case identity.ClaimFromScope:
			src = "scope " + c.Source.Detail
		case identity.ClaimFromClient:
			src = "the client's " + c.Source.Detail + " claim"
		case identity.ClaimFromProtocol:
			src = "protocol: " + c.Source.Detail
		}
		rows[i] = claimRow{Name: c.Name, Value: val, Source: src}
	}
	return rows
}

func userAuditRows(recs []identity.AuditRecord) []userAuditRow {
	rows := make([]userAuditRow, len(recs))
	for i, r := range recs {
		actor := string(r.Actor.Kind)
		if r.Actor.Display != "" {
			actor += " " + r.Actor.Display
		}
		rows[i] = userAuditRow{Time: stampOf(r.Time), Action: string(r.Action), Actor: actor, Outcome: string(r.Outcome),
			Reason: r.Reason, Address: r.Request.Address}
	}
	return rows
}

// atoiQuery reads a non-negative number of the query, 0 when absent.
func atoiQuery(q url.Values, name string) int {
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// browserOf names the browser and system of a User-Agent, as far as
// the common ones tell; "" for none, the string itself for others.
func browserOf(ua string) string {
	if ua == "" {
		return ""
	}
	var name string
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Chromium/", "Chromium"},
		{"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			name = b.name
			break
		}
	}
	var system string
	for _, s := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iOS"}, {"iPad", "iPadOS"}, {"Windows", "Windows"}, {"Mac OS X", "macOS"},
		{"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			system = s.name
			break
		}
	}
	switch {
	case name == "":
		return ua
	case system == "":
		return name
	}
	return name + " on " + system
}

// serveUser is the user page.
func (h *Handler) serveUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	v, d, err := h.userView(rq, ws, id)
	if err != nil {
		return err
	}
	v.Notice = h.userNotice(rq, ws, d)
	h.render(rq, http.StatusOK, "users-user", v)
	return nil
}

// userNotice is the notice of the action that redirected to the user
// page, said only when the page shows it to be true: a link cannot make
// the page claim what did not happen.
func (h *Handler) userNotice(rq *request, ws *identity.Workspace, d *userData) string {
	q := rq.r.URL.Query()
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(q.Get(name), 10, 64)
		return n
	}
	switch q.Get("done") {
	case "saved":
		if num("version") == d.Version {
			return "Profile saved."
		}
	case "enabled":
		if d.User.Enabled {
			return "User enabled."
		}
	case "disabled":
		if !d.User.Enabled {
			return "User disabled: their sessions and tokens are revoked."
		}
	case "verified":
		if d.User.EmailVerified {
			return "Email marked verified."
		}
	case "unverified":
		if !d.User.EmailVerified {
			return "Email marked not verified."
		}
	case "reset":
		for _, a := range d.Audit {
			if a.Action == string(identity.AuditPasswordResetRequested) {
				return "A password reset email is queued for " + d.User.Email + "."
			}
		}
	case "attr":
		key := q.Get("key")
		if slices.ContainsFunc(d.Attrs, func(a attrRow) bool { return a.Key == key }) || h.hasAttr(rq, ws, d.User.ID, key) {
			return "Attribute " + key + " saved."
		}
	case "attr-deleted":
		if key := q.Get("key"); key != "" && !h.hasAttr(rq, ws, d.User.ID, key) {
			return "Attribute " + key + " deleted."
		}
	case "role":
		for _, r := range d.Roles {
			if r.ID == num("role") && r.Direct {
				return "Role " + r.Name + " assigned."
			}
		}
	case "role-removed":
		r, err := ws.GetRole(rq.ctx, num("role"))
		if err == nil && !slices.ContainsFunc(d.Roles, func(x roleRow) bool { return x.ID == r.ID && x.Direct }) {
			return "Role " + r.Name + " is no longer assigned directly."
		}
	case "group":
		for _, g := range d.Groups {
			if g.ID == num("group") {
				return "Added to group " + g.Name + "."
			}
		}
	case "group-removed":
		g, err := ws.GetGroup(rq.ctx, num("group"))
		if err == nil && !slices.ContainsFunc(d.Groups, func(x identity.Group) bool { return x.ID == g.ID }) {
			return "Removed from group " + g.Name + "."
		}
	case "session":
		s, err := ws.GetSession(rq.ctx, q.Get("session"))
		if err == nil && s.UserID == d.User.ID && s.RevokedAt != nil {
			return "Session revoked."
		}
	case "sessions":
		if n, err := h.activeSessions(rq, ws, d.User.ID); err == nil && n == 0 {
			return "Every session of the user is revoked."
		}
	case "passkey-removed":
		if pid := q.Get("passkey"); pid != "" && !slices.ContainsFunc(d.Passkeys, func(p passkeyRow) bool { return p.ID == pid }) {
			return "Passkey removed."
		}
	case "mfa-reset":
		if !d.MFA.Enabled && !d.MFA.Pending {
			return "Second factor reset: the user enrols again at their next sign-in if the workspace requires one."
		}
	case "unlocked":
		if !d.Lock.Locked && d.Lock.Failures == 0 {
			return "Account unlocked."
		}
	}
	return ""
}

func (h *Handler) hasAttr(rq *request, ws *identity.Workspace, id int64, key string) bool {
	attrs, err := ws.ListAttributes(rq.ctx, id)
	if err != nil {
		return false
	}
	_, ok := attrs[key]
	return ok
}

// activeSessions counts the user's active sessions.
func (h *Handler) activeSessions(rq *request, ws *identity.Workspace, id int64) (int, error) {
	now := h.svc.Now()
	n := 0
	for offset := 0; ; offset += identity.MaxPageLimit {
		list, err := ws.ListSessions(rq.ctx, id, &identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			return 0, err
		}
		for _, s := range list.Items {
			if s.Active(now) {
				n++
			}
		}
		if offset+len(list.Items) >= list.Total || len(list.Items) == 0 {
			return n, nil
		}
	}
}

// backToUser redirects to the user page with the notice done and its
// parameters. No fragment: the page's notice takes the focus (an
// autofocus, which a fragment would cancel), so that the keyboard and a
// screen reader start from what the action did.
func (h *Handler) backToUser(rq *request, id int64, done string, params url.Values) error {
	if params == nil {
		params = url.Values{}
	}
	params.Set("done", done)
	u := h.href("workspaces", rq.r.PathValue("slug"), "users", id) + "?" + params.Encode()
	http.Redirect(rq.w, rq.r, u, http.StatusSeeOther)
	return nil
}

// userFormError sends the user page back with the error of one of its
// forms; fill sets the values of that form. A limit reached is shown
// next to field, where the operator typed what hit it.
func (h *Handler) userFormError(rq *request, ws *identity.Workspace, id int64, err error, field string, fill func(*userData)) error {
	if e, ok := errors.AsType[*identity.Error](err); ok && len(e.Fields) == 0 && field != "" &&
		e.Code != identity.CodeInternal && e.Code != identity.CodeNotFound {
		err = &identity.Error{Code: e.Code, Message: e.Message, Fields: []identity.FieldError{{Field: field, Message: e.Message}}}
	}
	if identity.ErrorCode(err) == identity.CodeNotFound && field == "" {
		return err
	}
	v, d, verr := h.userView(rq, ws, id)
	if verr != nil {
		return verr
	}
	if fill != nil {
		fill(d)
	}
	h.renderForm(rq, "users-user", v, err)
	return nil
}

// updateUser saves the profile (email and full name) if the user is
// still at the version the form was read at.
func (h *Handler) updateUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	f := rq.r.PostForm
	upd := identity.UserUpdate{Email: f.Get("email"), FullName: f.Get("fullName")}
	if v, err := strconv.ParseInt(f.Get("version"), 10, 64); err == nil {
		upd.Precondition = identity.IfVersion(v)
	}
	u, err := ws.UpdateUser(rq.ctx, id, upd)
	if err != nil {
		return h.userFormError(rq, ws, id, err, "", func(d *userData) {
			if identity.ErrorCode(err) != identity.CodePreconditionFailed {
				d.Email, d.FullName = upd.Email, upd.FullName
			}
		})
	}
	return h.backToUser(rq, id, "saved", url.Values{"version": {strconv.FormatInt(u.Version, 10)}})
}

func (h *Handler) enableUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	if err := ws.EnableUser(rq.ctx, id); err != nil {
		return err
	}
	return h.backToUser(rq, id, "enabled", nil)
}

func (h *Handler) disableUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	if err := ws.DisableUser(rq.ctx, id); err != nil {
		return err
	}
	return h.backToUser(rq, id, "disabled", nil)
}

// setEmailVerified marks the email verified (verified=true) or not.
func (h *Handler) setEmailVerified(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	verified := rq.r.PostFormValue("verified") == "true"
	if _, err := ws.SetEmailVerified(rq.ctx, id, verified); err != nil {
		return err
	}
	if verified {
		return h.backToUser(rq, id, "verified", nil)
	}
	return h.backToUser(rq, id, "unverified", nil)
}

// requestPasswordReset queues a password reset email to the user's
// address (the workspace's SMTP settings say where its link goes).
func (h *Handler) requestPasswordReset(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	u, err := ws.GetUser(rq.ctx, id)
	if err != nil {
		return err
	}
	if err := ws.RequestPasswordReset(rq.ctx, u.Email, nil); err != nil {
		return h.userFormError(rq, ws, id, err, "", nil)
	}
	return h.backToUser(rq, id, "reset", nil)
}

func (h *Handler) setAttribute(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	key, value := rq.r.PostFormValue("key"), rq.r.PostFormValue("value")
	if _, err := ws.SetAttribute(rq.ctx, id, key, value, nil); err != nil {
		return h.userFormError(rq, ws, id, err, "key", func(d *userData) { d.AttrKey, d.AttrValue = key, value })
	}
	return h.backToUser(rq, id, "attr", url.Values{"key": {key}})
}

func (h *Handler) deleteAttribute(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	key := rq.r.PostFormValue("key")
	if _, err := ws.DeleteAttribute(rq.ctx, id, key, nil); err != nil {
		return err
	}
	return h.backToUser(rq, id, "attr-deleted", url.Values{"key": {key}})
}

// assignRole assigns the role named in the form directly.
func (h *Handler) assignRole(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(rq.r.PostFormValue("role"))
	r, err := ws.GetRoleByName(rq.ctx, name)
	if err == nil {
		err = ws.AssignRole(rq.ctx, id, r.ID)
	}
	if err != nil {
		if identity.ErrorCode(err) == identity.CodeNotFound {
			if _, uerr := ws.GetUser(rq.ctx, id); uerr != nil {
				return uerr
			}
			err = &identity.Error{Code: identity.CodeInvalid, Message: "no such role",
				Fields: []identity.FieldError{{Field: "role", Message: "There is no role named " + strconv.Quote(name) + " in this workspace."}}}
		}
		return h.userFormError(rq, ws, id, err, "role", func(d *userData) { d.RoleName = name })
	}
	return h.backToUser(rq, id, "role", url.Values{"role": {strconv.FormatInt(r.ID, 10)}})
}

func (h *Handler) removeRole(rq *request) error {
	return h.userLink(rq, pathValue, "role", "role-removed", func(ws *identity.Workspace, userID, roleID int64) error {
		return ws.RemoveRole(rq.ctx, userID, roleID)
	})
}

// addToGroup adds the user to the group the form names by id (a button
// of the group search).
func (h *Handler) addToGroup(rq *request) error {
	return h.userLink(rq, formValue, "group", "group", func(ws *identity.Workspace, userID, groupID int64) error {
		return ws.AddGroupMember(rq.ctx, groupID, userID)
	})
}

func (h *Handler) removeFromGroup(rq *request) error {
	return h.userLink(rq, pathValue, "group", "group-removed", func(ws *identity.Workspace, userID, groupID int64) error {
		return ws.RemoveGroupMember(rq.ctx, groupID, userID)
	})
}

// idSource is where userLink reads the other object's id: the path (a
// bad one is a page not found) or the form (a bad one is a bad form).
type idSource bool

const (
	pathValue idSource = true
	formValue idSource = false
)

// userLink runs link between the path's user and the object whose id
// the request carries under name, then goes back to the user's page
// with the notice and the id.
func (h *Handler) userLink(rq *request, from idSource, name, notice string, link func(ws *identity.Workspace, userID, otherID int64) error) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	var other int64
	if from == pathValue {
		if other, err = pathID(rq, name); err != nil {
			return err
		}
	} else if other, err = strconv.ParseInt(rq.r.PostFormValue(name), 10, 64); err != nil {
		return errBadForm
	}
	if err := link(ws, id, other); err != nil {
		return err
	}
	return h.backToUser(rq, id, notice, url.Values{name: {strconv.FormatInt(other, 10)}})
}

func (h *Handler) revokeSession(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	sid := rq.r.PathValue("session")
	if err := ws.RevokeUserSession(rq.ctx, id, sid); err != nil {
		return err
	}
	return h.backToUser(rq, id, "session", url.Values{"session": {sid}})
}

func (h *Handler) revokeAllSessions(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	if _, err := ws.RevokeUserSessions(rq.ctx, id); err != nil {
		return err
	}
	return h.backToUser(rq, id, "sessions", nil)
}

// deletePasskey removes a passkey of the user, the last one too: an
// operator removes a lost or stolen key, and the user registers a new one
// at their next password sign-in where the workspace requires one.
func (h *Handler) deletePasskey(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	pid := rq.r.PathValue("passkey")
	if err := ws.DeletePasskey(rq.ctx, id, pid); err != nil {
		return err
	}
	return h.backToUser(rq, id, "passkey-removed", url.Values{"passkey": {pid}})
}

func (h *Handler) resetMFA(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	if err := ws.ResetMFA(rq.ctx, id); err != nil {
		return err
	}
	return h.backToUser(rq, id, "mfa-reset", nil)
}

func (h *Handler) unlockUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	if err := ws.UnlockUser(rq.ctx, id); err != nil {
		return err
	}
	return h.backToUser(rq, id, "unlocked", nil)
}

// userAuditData is the data of the user's audit page.
type userAuditData struct {
	Slug     string
	User     userRow
	Rows     []userAuditRow
	NextURL  string
	FirstURL string
}

// serveUserAudit pages through the records of the trail whose target is
// the user, newest first, by cursor (the trail has no total).
func (h *Handler) serveUserAudit(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	u, err := ws.GetUser(rq.ctx, id)
	if err != nil {
		return err
	}
	cursor := rq.r.URL.Query().Get("cursor")
	filter := &identity.AuditFilter{TargetKind: identity.TargetUser, TargetID: strconv.FormatInt(id, 10)}
	page, err := ws.ListAuditRecords(rq.ctx, filter, &identity.AuditPageOptions{Cursor: cursor, Limit: pageSize})
	if identity.ErrorCode(err) == identity.CodeInvalid {
		cursor = ""
		page, err = ws.ListAuditRecords(rq.ctx, filter, &identity.AuditPageOptions{Limit: pageSize})
	}
	if err != nil {
		return err
	}
	self := h.href("workspaces", ws.Slug(), "users", id, "audit")
	d := userAuditData{Slug: ws.Slug(), User: rowOf(u), Rows: userAuditRows(page.Records)}
	if page.HasMore {
		d.NextURL = self + "?cursor=" + url.QueryEscape(page.NextCursor)
	}
	if cursor != "" {
		d.FirstURL = self
	}
	h.render(rq, http.StatusOK, "users-audit", &view{Title: "Audit trail of " + u.Username, Workspace: ws.Slug(), Data: &d})
	return nil
}

// serveDeleteUser asks to confirm a permanent deletion by typing the
// username.
func (h *Handler) serveDeleteUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	u, err := ws.GetUser(rq.ctx, id)
	if err != nil {
		return err
	}
	h.render(rq, http.StatusOK, "users-delete", &view{Title: "Delete user " + u.Username, Workspace: ws.Slug(),
		Data: &userAuditData{Slug: ws.Slug(), User: rowOf(u)}})
	return nil
}

// deleteUser deletes the user permanently once the operator typed the
// username, and goes back to the list, which says the username is free.
func (h *Handler) deleteUser(rq *request) error {
	ws, id, err := h.workspaceUser(rq)
	if err != nil {
		return err
	}
	u, err := ws.GetUser(rq.ctx, id)
	if err != nil {
		return err
	}
	if rq.r.PostFormValue("confirm") != u.Username {
		v := &view{Title: "Delete user " + u.Username, Workspace: ws.Slug(), Data: &userAuditData{Slug: ws.Slug(), User: rowOf(u)},
			Error: "Type the username exactly to confirm.", Fields: map[string]string{"confirm": "Type " + u.Username + " to confirm."}}
		h.render(rq, http.StatusUnprocessableEntity, "users-delete", v)
		return nil
	}
	if _, err := ws.DeleteUserPermanently(rq.ctx, id); err != nil {
		return err
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "users")+"?"+url.Values{
		"deleted": {strconv.FormatInt(id, 10)}, "username": {u.Username}}.Encode(), http.StatusSeeOther)
	return nil
}
