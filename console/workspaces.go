package console

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/identitylib/identity"
)

// pageSize is how many rows a console list shows at once.
const pageSize = 50

// pager is the paging of a list page: the query parameter "offset"
// chooses the rows; the template links to the previous and next pages.
type pager struct {
	Offset, Total int
	// Prev and Next are the offsets of the neighbouring pages, or -1.
	Prev, Next int
	// From and To number the rows shown, from 1.
	From, To int
}

// offsetOf reads the "offset" query parameter: a number of rows to skip,
// 0 when absent or not a number.
func offsetOf(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("offset"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// newPager returns the paging of shown rows from offset among total.
func newPager(offset, shown, total int) pager {
	p := pager{Offset: offset, Total: total, Prev: -1, Next: -1, From: offset + 1, To: offset + shown}
	if shown == 0 {
		p.From = offset
	}
	if offset > 0 {
		p.Prev = max(offset-pageSize, 0)
	}
	if offset+shown < total {
		p.Next = offset + shown
	}
	return p
}

// workspaceRow is a row of the workspaces page.
type workspaceRow struct {
	Slug      string
	CreatedAt time.Time
	// Operators marks the operator workspace.
	Operators bool
}

// workspacesData is the workspaces page's data.
type workspacesData struct {
	Rows  []workspaceRow
	Pager pager
}

// visibleWorkspaces returns the workspaces the operator may read, in the
// library's order.
func (h *Handler) visibleWorkspaces(rq *request) ([]*identity.Workspace, error) {
	all, err := h.svc.ListWorkspaces(rq.ctx)
	if err != nil {
		return nil, err
	}
	var out []*identity.Workspace
	for _, ws := range all {
		if rq.op.grants.can(ws.Slug(), false) {
			out = append(out, ws)
		}
	}
	return out, nil
}

// serveWorkspaces is the list of workspaces the operator may read, with
// the form that creates one for console.admin.
func (h *Handler) serveWorkspaces(rq *request) error {
	v, err := h.workspacesView(rq)
	if err != nil {
		return err
	}
	// The notice of a creation or deletion that redirected here says only
	// what is true now: a link cannot make the page claim otherwise.
	q := rq.r.URL.Query()
	if slug := q.Get("created"); slug != "" {
		if _, err := h.svc.GetWorkspace(rq.ctx, slug); err == nil {
			v.Notice = "Workspace " + slug + " created."
		}
	}
	if slug := q.Get("deleted"); slug != "" && identity.CheckSlug(slug) == nil {
		if _, err := h.svc.GetWorkspace(rq.ctx, slug); identity.ErrorCode(err) == identity.CodeNotFound {
			v.Notice = "Workspace " + slug + " deleted."
		}
	}
	h.render(rq, http.StatusOK, "workspaces", v)
	return nil
}

func (h *Handler) workspacesView(rq *request) (*view, error) {
	all, err := h.visibleWorkspaces(rq)
	if err != nil {
		return nil, err
	}
	offset := min(offsetOf(rq.r), len(all))
	shown := all[offset:min(offset+pageSize, len(all))]
	d := workspacesData{Rows: make([]workspaceRow, len(shown)), Pager: newPager(offset, len(shown), len(all))}
	for i, ws := range shown {
		d.Rows[i] = workspaceRow{Slug: ws.Slug(), CreatedAt: ws.CreatedAt(), Operators: ws.Slug() == h.opSlug}
	}
	return &view{Title: "Workspaces", Data: d}, nil
}

// createWorkspace creates a workspace with the default settings.
func (h *Handler) createWorkspace(rq *request) error {
	slug := rq.r.PostFormValue("slug")
	if _, err := h.svc.CreateWorkspace(rq.ctx, slug, nil); err != nil {
		v, verr := h.workspacesView(rq)
		if verr != nil {
			return verr
		}
		h.renderForm(rq, "workspaces", v, err)
		return nil
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces")+"?created="+url.QueryEscape(slug), http.StatusSeeOther)
	return nil
}

// deleteData is the data of the page that confirms a workspace's
// deletion.
type deleteData struct {
	Slug string
}

// serveDeleteWorkspace asks to confirm a workspace's deletion by typing
// its slug.
func (h *Handler) serveDeleteWorkspace(rq *request) error {
	slug := rq.r.PathValue("slug")
	if _, err := h.svc.GetWorkspace(rq.ctx, slug); err != nil {
		return err
	}
	h.render(rq, http.StatusOK, "workspace-delete", &view{Title: "Delete workspace " + slug, Data: deleteData{Slug: slug}})
	return nil
}

// deleteWorkspace deletes a workspace and everything in it, once the
// operator typed its slug; the operator workspace cannot be deleted
// from the console.
func (h *Handler) deleteWorkspace(rq *request) error {
	slug := rq.r.PathValue("slug")
	v := &view{Title: "Delete workspace " + slug, Data: deleteData{Slug: slug}}
	if slug == h.opSlug {
		v.Error = "The operator workspace holds the console's own operators: it cannot be deleted here."
		h.render(rq, http.StatusConflict, "workspace-delete", v)
		return nil
	}
	if rq.r.PostFormValue("confirm") != slug {
		v.Error = "Type the workspace's slug exactly to confirm."
		v.Fields = map[string]string{"confirm": "Type " + slug + " to confirm."}
		h.render(rq, http.StatusUnprocessableEntity, "workspace-delete", v)
		return nil
	}
	if _, err := h.svc.DeleteWorkspace(rq.ctx, slug); err != nil {
		return err
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces")+"?deleted="+url.QueryEscape(slug), http.StatusSeeOther)
	return nil
}
