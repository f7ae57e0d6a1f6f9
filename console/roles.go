package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// Roles and groups are named records of a workspace with the same rules
// (identity's named.go), and the console shows them alike: a list paged
// and searched by name prefix with a form that creates one, a page of
// each with a form that renames it, and a page that confirms its
// deletion. A role's page lists its holders (directly or through a
// group); a group's its members, whom the operator adds by searching
// users, and the roles it carries.

// rolesRoutes are the routes of the roles and groups pages.
func rolesRoutes() []route {
	return []route{
		{http.MethodGet, "workspaces/{slug}/roles", inWorkspace, namedList(roleKind)},
		{http.MethodPost, "workspaces/{slug}/roles", inWorkspace, namedCreate(roleKind)},
		{http.MethodGet, "workspaces/{slug}/roles/{id}", inWorkspace, (*Handler).serveRole},
		{http.MethodPost, "workspaces/{slug}/roles/{id}", inWorkspace, namedUpdate(roleKind)},
		{http.MethodGet, "workspaces/{slug}/roles/{id}/delete", inWorkspace, namedConfirmDelete(roleKind)},
		{http.MethodPost, "workspaces/{slug}/roles/{id}/delete", inWorkspace, namedDelete(roleKind)},
		{http.MethodGet, "workspaces/{slug}/groups", inWorkspace, namedList(groupKind)},
		{http.MethodPost, "workspaces/{slug}/groups", inWorkspace, namedCreate(groupKind)},
		{http.MethodGet, "workspaces/{slug}/groups/{id}", inWorkspace, (*Handler).serveGroup},
		{http.MethodPost, "workspaces/{slug}/groups/{id}", inWorkspace, namedUpdate(groupKind)},
		{http.MethodGet, "workspaces/{slug}/groups/{id}/delete", inWorkspace, namedConfirmDelete(groupKind)},
		{http.MethodPost, "workspaces/{slug}/groups/{id}/delete", inWorkspace, namedDelete(groupKind)},
		{http.MethodPost, "workspaces/{slug}/groups/{id}/members", inWorkspace, (*Handler).addMember},
		{http.MethodPost, "workspaces/{slug}/groups/{id}/members/{user}/remove", inWorkspace, (*Handler).removeMember},
		{http.MethodPost, "workspaces/{slug}/groups/{id}/roles", inWorkspace, (*Handler).addGroupRole},
		{http.MethodPost, "workspaces/{slug}/groups/{id}/roles/{role}/remove", inWorkspace, (*Handler).removeGroupRole},
	}
}

// namedRow is a role or a group as the pages show it.
type namedRow struct {
	ID                int64
	Name, Description string
}

// named is what the pages do with roles or with groups: the library's
// calls for one kind.
type named struct {
	// kind is "role" or "group"; path the pages' path, "roles" or
	// "groups".
	kind, path string
	title      string
	list       func(rq *request, ws *identity.Workspace, search string, page *identity.Page) (identity.List[namedRow], error)
	get        func(rq *request, ws *identity.Workspace, id int64) (namedRow, error)
	byName     func(rq *request, ws *identity.Workspace, name string) (namedRow, error)
	create     func(rq *request, ws *identity.Workspace, name, description string) (namedRow, error)
	update     func(rq *request, ws *identity.Workspace, id int64, name, description string) error
	del        func(rq *request, ws *identity.Workspace, id int64) error
}

var roleKind = &named{
	kind: "role", path: "roles", title: "Roles",
	list: func(rq *request, ws *identity.Workspace, search string, page *identity.Page) (identity.List[namedRow], error) {
		l, err := ws.ListRoles(rq.ctx, search, page)
		return rowsOf(l, func(r identity.Role) namedRow { return namedRow{r.ID, r.Name, r.Description} }), err
	},
	get: func(rq *request, ws *identity.Workspace, id int64) (namedRow, error) {
		r, err := ws.GetRole(rq.ctx, id)
		return namedRow{r.ID, r.Name, r.Description}, err
	},
	byName: func(rq *request, ws *identity.Workspace, name string) (namedRow, error) {
		r, err := ws.GetRoleByName(rq.ctx, name)
		return namedRow{r.ID, r.Name, r.Description}, err
	},
	create: func(rq *request, ws *identity.Workspace, name, description string) (namedRow, error) {
		r, err := ws.CreateRole(rq.ctx, identity.NewRole{Name: name, Description: description})
		return namedRow{r.ID, r.Name, r.Description}, err
	},
	update: func(rq *request, ws *identity.Workspace, id int64, name, description string) error {
		_, err := ws.UpdateRole(rq.ctx, id, identity.RoleUpdate{Name: name, Description: description})
		return err
	},
	del: func(rq *request, ws *identity.Workspace, id int64) error { return ws.DeleteRole(rq.ctx, id) },
}

var groupKind = &named{
	kind: "group", path: "groups", title: "Groups",
	list: func(rq *request, ws *identity.Workspace, search string, page *identity.Page) (identity.List[namedRow], error) {
		l, err := ws.ListGroups(rq.ctx, search, page)
		return rowsOf(l, func(g identity.Group) namedRow { return namedRow{g.ID, g.Name, g.Description} }), err
	},
	get: func(rq *request, ws *identity.Workspace, id int64) (namedRow, error) {
		g, err := ws.GetGroup(rq.ctx, id)
		return namedRow{g.ID, g.Name, g.Description}, err
	},
	byName: func(rq *request, ws *identity.Workspace, name string) (namedRow, error) {
		g, err := ws.GetGroupByName(rq.ctx, name)
		return namedRow{g.ID, g.Name, g.Description}, err
	},
	create: func(rq *request, ws *identity.Workspace, name, description string) (namedRow, error) {
		g, err := ws.CreateGroup(rq.ctx, identity.NewGroup{Name: name, Description: description})
		return namedRow{g.ID, g.Name, g.Description}, err
	},
	update: func(rq *request, ws *identity.Workspace, id int64, name, description string) error {
		_, err := ws.UpdateGroup(rq.ctx, id, identity.GroupUpdate{Name: name, Description: description})
		return err
	},
	del: func(rq *request, ws *identity.Workspace, id int64) error { return ws.DeleteGroup(rq.ctx, id) },
}

func rowsOf[T any](l identity.List[T], row func(T) namedRow) identity.List[namedRow] {
	out := identity.List[namedRow]{Items: make([]namedRow, len(l.Items)), Total: l.Total, Offset: l.Offset, Limit: l.Limit}
	for i, it := range l.Items {
		out.Items[i] = row(it)
	}
	return out
}

// listLinks are the paging links of a list page that keep its search.
type listLinks struct {
	From, To, Total int
	// Prev and Next are the URLs of the neighbouring pages, or "".
	Prev, Next string
}

// linksOf returns the paging links of a page of shown rows from offset
// among total, at path with the query q (without offset).
func linksOf(path string, q url.Values, offset, shown, total int) listLinks {
	p := newPager(offset, shown, total)
	l := listLinks{From: p.From, To: p.To, Total: total}
	at := func(off int) string {
		v := url.Values{}
		for k, vs := range q {
			if vs[0] != "" {
				v[k] = vs
			}
		}
		if off > 0 {
			v.Set("offset", strconv.Itoa(off))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if p.Prev >= 0 {
		l.Prev = at(p.Prev)
	}
	if p.Next >= 0 {
		l.Next = at(p.Next)
	}
	return l
}

// namedListData is the data of the list of roles or of groups.
type namedListData struct {
	Slug, Kind, Path, Query string
	// Title is the kind's name in a caption: "Roles", "Groups".
	Title string
	Rows  []namedRow
	Links listLinks
}

func (h *Handler) namedListView(rq *request, k *named, ws *identity.Workspace) (*view, error) {
	search := strings.TrimSpace(rq.r.URL.Query().Get("q"))
	offset := offsetOf(rq.r)
	l, err := k.list(rq, ws, search, &identity.Page{Offset: offset, Limit: pageSize})
	if identity.ErrorCode(err) == identity.CodeInvalid {
		// A search the library refuses (not UTF-8) finds nothing.
		l, err = identity.List[namedRow]{}, nil
	}
	if err != nil {
		return nil, err
	}
	d := namedListData{Slug: ws.Slug(), Kind: k.kind, Path: k.path, Query: search, Title: k.title, Rows: l.Items,
		Links: linksOf(h.href("workspaces", ws.Slug(), k.path), url.Values{"q": {search}}, offset, len(l.Items), l.Total)}
	return &view{Title: k.title + " of " + ws.Slug(), Workspace: ws.Slug(), Data: d}, nil
}

// namedList is the list of roles or groups, searched by name prefix.
func namedList(k *named) func(h *Handler, rq *request) error {
	return func(h *Handler, rq *request) error {
		ws, err := h.pathWorkspace(rq)
		if err != nil {
			return err
		}
		v, err := h.namedListView(rq, k, ws)
		if err != nil {
			return err
		}
		// The notice of a deletion says only what is true now.
		if name := rq.r.URL.Query().Get("deleted"); name != "" {
			if _, err := k.byName(rq, ws, name); identity.ErrorCode(err) == identity.CodeNotFound {
				v.Notice = "The " + k.kind + " " + name + " is deleted."
			}
		}
		h.render(rq, http.StatusOK, "named-list", v)
		return nil
	}
}

// namedCreate creates a role or a group and goes to its page.
func namedCreate(k *named) func(h *Handler, rq *request) error {
	return func(h *Handler, rq *request) error {
		ws, err := h.pathWorkspace(rq)
		if err != nil {
			return err
		}
		r, err := k.create(rq, ws, strings.TrimSpace(rq.r.PostFormValue("name")), strings.TrimSpace(rq.r.PostFormValue("description")))
		if err != nil {
			v, verr := h.namedListView(rq, k, ws)
			if verr != nil {
				return verr
			}
			h.renderForm(rq, "named-list", v, err)
			return nil
		}
		http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), k.path, r.ID), http.StatusSeeOther)
		return nil
	}
}

// memberRow is a user as the roles and groups pages show it.
type memberRow struct {
	ID                        int64
	Username, Email, FullName string
	Disabled                  bool
	// Href is the user's page in the console, or "" while there is none.
	Href string
}

func (h *Handler) memberRows(slug string, users []identity.User) []memberRow {
	rows := make([]memberRow, len(users))
	for i, u := range users {
		rows[i] = memberRow{ID: u.ID, Username: u.Username, Email: u.Email, FullName: u.FullName, Disabled: !u.Enabled}
		if h.hasPage("workspaces/{slug}/users/{id}") {
			rows[i].Href = h.href("workspaces", slug, "users", u.ID)
		}
	}
	return rows
}

// roleData is the data of a role's page.
type roleData struct {
	Slug    string
	Role    namedRow
	Holders []memberRow
	Links   listLinks
}

// serveRole is a role's page: its rename form and its holders.
func (h *Handler) serveRole(rq *request) error {
	v, err := h.roleView(rq)
	if err != nil {
		return err
	}
	if rq.r.URL.Query().Get("saved") != "" {
		v.Notice = "The name and description shown are in force."
	}
	h.render(rq, http.StatusOK, "role", v)
	return nil
}

func (h *Handler) roleView(rq *request) (*view, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, err
	}
	id, err := pathID(rq, "id")
	if err != nil {
		return nil, err
	}
	r, err := ws.GetRole(rq.ctx, id)
	if err != nil {
		return nil, err
	}
	offset := offsetOf(rq.r)
	holders, err := ws.ListRoleHolders(rq.ctx, id, &identity.Page{Offset: offset, Limit: pageSize})
	if err != nil {
		return nil, err
	}
	d := roleData{Slug: ws.Slug(), Role: namedRow{r.ID, r.Name, r.Description}, Holders: h.memberRows(ws.Slug(), holders.Items),
		Links: linksOf(h.href("workspaces", ws.Slug(), "roles", id), nil, offset, len(holders.Items), holders.Total)}
	return &view{Title: "Role " + r.Name, Workspace: ws.Slug(), Data: d}, nil
}

// namedUpdate renames or redescribes a role or a group.
func namedUpdate(k *named) func(h *Handler, rq *request) error {
	return func(h *Handler, rq *request) error {
		ws, err := h.pathWorkspace(rq)
		if err != nil {
			return err
		}
		id, err := pathID(rq, "id")
		if err != nil {
			return err
		}
		err = k.update(rq, ws, id, strings.TrimSpace(rq.r.PostFormValue("name")), strings.TrimSpace(rq.r.PostFormValue("description")))
		if identity.ErrorCode(err) == identity.CodeNotFound {
			return err
		}
		if err != nil {
			return h.namedFormError(rq, k, err)
		}
		http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), k.path, id)+"?saved=1", http.StatusSeeOther)
		return nil
	}
}

// namedFormError sends a form of a role's or a group's page back with
// err.
func (h *Handler) namedFormError(rq *request, k *named, err error) error {
	var v *view
	var verr error
	page := k.kind
	if k == roleKind {
		v, verr = h.roleView(rq)
	} else {
		v, verr = h.groupView(rq)
	}
	if verr != nil {
		return verr
	}
	h.renderForm(rq, page, v, err)
	return nil
}

// namedDeleteData is the data of the page that confirms a deletion.
type namedDeleteData struct {
	Slug, Kind, Path string
	Row              namedRow
}

// namedConfirmDelete asks to confirm the deletion of a role or a group.
func namedConfirmDelete(k *named) func(h *Handler, rq *request) error {
	return func(h *Handler, rq *request) error {
		ws, err := h.pathWorkspace(rq)
		if err != nil {
			return err
		}
		id, err := pathID(rq, "id")
		if err != nil {
			return err
		}
		r, err := k.get(rq, ws, id)
		if err != nil {
			return err
		}
		h.render(rq, http.StatusOK, "named-delete", &view{Title: "Delete " + k.kind + " " + r.Name, Workspace: ws.Slug(),
			Data: namedDeleteData{Slug: ws.Slug(), Kind: k.kind, Path: k.path, Row: r}})
		return nil
	}
}

// namedDelete deletes a role or a group, with its assignments or
// memberships.
func namedDelete(k *named) func(h *Handler, rq *request) error {
	return func(h *Handler, rq *request) error {
		ws, err := h.pathWorkspace(rq)
		if err != nil {
			return err
		}
		id, err := pathID(rq, "id")
		if err != nil {
			return err
		}
		r, err := k.get(rq, ws, id)
		if err != nil {
			return err
		}
		if err := k.del(rq, ws, id); err != nil {
			return err
		}
		http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), k.path)+"?deleted="+url.QueryEscape(r.Name), http.StatusSeeOther)
		return nil
	}
}
