package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// The claim mappers of a workspace (workspaces/{slug}/mappers): the
// list, with the form that creates one, a page that edits one and a page
// that confirms a deletion. A mapper is named by its attribute key, which
// may hold any character but NUL and bidirectional controls ("/", "..",
// "?"), so the key travels in the query or the form, never in the path.
// An edit is conditional on the version the page showed, so that two
// operators do not overwrite each other unawares.

// mappersRoutes are the routes of the mappers pages.
func mappersRoutes() []route {
	return []route{
		{http.MethodGet, "workspaces/{slug}/mappers", inWorkspace, (*Handler).serveMappers},
		{http.MethodPost, "workspaces/{slug}/mappers", inWorkspace, (*Handler).createMapper},
		{http.MethodGet, "workspaces/{slug}/mappers/edit", inWorkspace, (*Handler).serveMapper},
		{http.MethodPost, "workspaces/{slug}/mappers/edit", inWorkspace, (*Handler).updateMapper},
		{http.MethodGet, "workspaces/{slug}/mappers/delete", inWorkspace, (*Handler).serveDeleteMapper},
		{http.MethodPost, "workspaces/{slug}/mappers/delete", inWorkspace, (*Handler).deleteMapper},
	}
}

// mapperRow is a mapper as the pages show it.
type mapperRow struct {
	AttributeKey, ClaimName string
	Access, ID              bool
	Version                 int64
	// Edit and Delete are the URLs of its pages.
	Edit, Delete string
}

// mappersData is the data of the mappers page.
type mappersData struct {
	Slug  string
	Rows  []mapperRow
	Max   int
	Links listLinks
	// Reserved lists the claim names no mapper may use.
	Reserved string
}

func (h *Handler) mapperRow(slug string, m identity.ClaimMapper) mapperRow {
	q := "?" + url.Values{"key": {m.AttributeKey}}.Encode()
	return mapperRow{AttributeKey: m.AttributeKey, ClaimName: m.ClaimName, Access: m.IncludeInAccess, ID: m.IncludeInID,
		Version: m.Version, Edit: h.href("workspaces", slug, "mappers", "edit") + q, Delete: h.href("workspaces", slug, "mappers", "delete") + q}
}

func (h *Handler) mappersView(rq *request) (*view, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, err
	}
	all, err := ws.ListClaimMappers(rq.ctx)
	if err != nil {
		return nil, err
	}
	offset := min(offsetOf(rq.r), len(all))
	shown := all[offset:min(offset+pageSize, len(all))]
	d := mappersData{Slug: ws.Slug(), Max: identity.MaxClaimMappers, Reserved: strings.Join(identity.ReservedClaims(), ", "),
		Links: linksOf(h.href("workspaces", ws.Slug(), "mappers"), nil, offset, len(shown), len(all))}
	for _, m := range shown {
		d.Rows = append(d.Rows, h.mapperRow(ws.Slug(), m))
	}
	return &view{Title: "Claim mappers of " + ws.Slug(), Workspace: ws.Slug(), Data: d}, nil
}

// serveMappers lists the mappers.
func (h *Handler) serveMappers(rq *request) error {
	v, err := h.mappersView(rq)
	if err != nil {
		return err
	}
	// The notice of a deletion says only what is true now.
	if key := rq.r.URL.Query().Get("deleted"); key != "" {
		if ws, err := h.pathWorkspace(rq); err == nil {
			if _, err := ws.GetClaimMapper(rq.ctx, key); identity.ErrorCode(err) == identity.CodeNotFound {
				v.Notice = "The mapper of attribute " + key + " is deleted."
			}
		}
	}
	h.render(rq, http.StatusOK, "mappers", v)
	return nil
}

// mapperSpec reads a mapper's form.
func mapperSpec(rq *request) identity.ClaimMapperSpec {
	access, id := rq.r.PostFormValue("includeInAccess") == "on", rq.r.PostFormValue("includeInId") == "on"
	return identity.ClaimMapperSpec{ClaimName: strings.TrimSpace(rq.r.PostFormValue("claimName")), IncludeInAccess: &access, IncludeInID: &id}
}

// mapperFieldError returns err with the field it is about, for the
// library's errors that name none: a reserved or taken claim name, and
// the limit of mappers, shown at the new mapper's attribute.
func mapperFieldError(err error) error {
	var e *identity.Error
	if !errors.As(err, &e) || len(e.Fields) > 0 {
		return err
	}
	field := ""
	switch e.Code {
	case identity.CodeReservedClaim, identity.CodeConflict:
		field = "claimName"
	case identity.CodeLimitReached:
		field = "attributeKey"
	}
	if field == "" {
		return err
	}
	out := *e
	out.Fields = []identity.FieldError{{Field: field, Message: e.Message}}
	return &out
}

// createMapper creates a mapper; one for the attribute exists already is
// refused, not replaced.
func (h *Handler) createMapper(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	spec := mapperSpec(rq)
	spec.Precondition = &identity.Precondition{Absent: true}
	key := strings.TrimSpace(rq.r.PostFormValue("attributeKey"))
	_, err = ws.SetClaimMapper(rq.ctx, key, spec)
	if identity.ErrorCode(err) == identity.CodePreconditionFailed {
		err = &identity.Error{Code: identity.CodeConflict, Message: "The attribute has a mapper already: edit it.",
			Fields: []identity.FieldError{{Field: "attributeKey", Message: "has a mapper already"}}}
	}
	if err != nil {
		v, verr := h.mappersView(rq)
		if verr != nil {
			return verr
		}
		h.renderForm(rq, "mappers", v, mapperFieldError(err))
		return nil
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "mappers")+"#mappers", http.StatusSeeOther)
	return nil
}

// mapperData is the data of a mapper's page.
type mapperData struct {
	Slug string
	Row  mapperRow
}

func (h *Handler) mapperView(rq *request, key string) (*view, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, err
	}
	m, err := ws.GetClaimMapper(rq.ctx, key)
	if err != nil {
		return nil, err
	}
	return &view{Title: "Mapper of attribute " + key, Workspace: ws.Slug(), Data: mapperData{Slug: ws.Slug(), Row: h.mapperRow(ws.Slug(), m)}}, nil
}

// serveMapper is the page that edits a mapper.
func (h *Handler) serveMapper(rq *request) error {
	v, err := h.mapperView(rq, rq.r.URL.Query().Get("key"))
	if err != nil {
		return err
	}
	if rq.r.URL.Query().Get("saved") != "" {
		v.Notice = "The mapper shown is in force."
	}
	h.render(rq, http.StatusOK, "mapper", v)
	return nil
}

// updateMapper replaces a mapper, if it is still at the version its page
// showed.
func (h *Handler) updateMapper(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	key := rq.r.PostFormValue("key")
	version, perr := strconv.ParseInt(rq.r.PostFormValue("version"), 10, 64)
	if perr != nil {
		return errBadForm
	}
	spec := mapperSpec(rq)
	spec.Precondition = identity.IfVersion(version)
	if _, err := ws.SetClaimMapper(rq.ctx, key, spec); err != nil {
		v, verr := h.mapperView(rq, key)
		if verr != nil {
			return verr
		}
		h.renderForm(rq, "mapper", v, mapperFieldError(err))
		return nil
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "mappers", "edit")+"?"+url.Values{"key": {key}, "saved": {"1"}}.Encode(), http.StatusSeeOther)
	return nil
}

// serveDeleteMapper asks to confirm a mapper's deletion.
func (h *Handler) serveDeleteMapper(rq *request) error {
	v, err := h.mapperView(rq, rq.r.URL.Query().Get("key"))
	if err != nil {
		return err
	}
	v.Title = "Delete the mapper of attribute " + rq.r.URL.Query().Get("key")
	h.render(rq, http.StatusOK, "mapper-delete", v)
	return nil
}

// deleteMapper deletes a mapper: its claim is in no token issued from
// then on.
func (h *Handler) deleteMapper(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	key := rq.r.PostFormValue("key")
	if err := ws.DeleteClaimMapper(rq.ctx, key); err != nil {
		return err
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "mappers")+"?"+url.Values{"deleted": {key}}.Encode(), http.StatusSeeOther)
	return nil
}
