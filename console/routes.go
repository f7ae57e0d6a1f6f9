package console

import "net/http"

// access is who may use a route.
type access int

const (
	// public: anyone, signed in or not (the sign-in steps, the setup
	// page, the static files).
	public access = iota
	// anyOperator: a signed-in operator with any console role; the page
	// shows only the workspaces the operator may read. A POST with this
	// access must change nothing of any workspace (sign-out): a viewer
	// may send it.
	anyOperator
	// service: what belongs to the whole service: grants.can("", write).
	service
	// inWorkspace: the workspace named by the path's {slug}:
	// grants.can(slug, write).
	inWorkspace
	// asset: anyone, and the session is not even read (the static files
	// cost no read of the store).
	asset
)

// route is one page or action of the console. A POST route is an action:
// it is checked against cross-origin requests and, when its access is
// not public, against the session's CSRF token, and write is what its
// access rule asks for; a GET route only reads.
type route struct {
	method string
	// path is relative to BasePath, in http.ServeMux's pattern syntax:
	// "workspaces/{slug}/delete"; "" is BasePath itself.
	path   string
	access access
	serve  func(h *Handler, rq *request) error
}

// pattern returns the route's ServeMux pattern below BasePath.
func (rt route) pattern() string {
	if rt.path == "" {
		return "{$}"
	}
	return rt.path
}

// routeTable returns every page and action of the console. A page
// author adds a route here (and, for a page of the navigation, a
// navItem) and nothing else: access, CSRF, headers and errors are the
// wrapper's (Handler.wrap).
func routeTable() []route {
	rt := []route{
		{http.MethodGet, "static/{file}", asset, (*Handler).serveStatic},
		{http.MethodGet, "login", public, (*Handler).serveLogin},
		{http.MethodGet, "callback", public, (*Handler).serveCallback},
		{http.MethodPost, "logout", anyOperator, (*Handler).serveLogout},
		{http.MethodGet, "setup", public, (*Handler).serveSetup},
		{http.MethodPost, "setup", public, (*Handler).completeSetup},
		{http.MethodGet, "", anyOperator, (*Handler).serveDashboard},
		{http.MethodGet, "workspaces", anyOperator, (*Handler).serveWorkspaces},
		{http.MethodPost, "workspaces", service, (*Handler).createWorkspace},
		{http.MethodGet, "workspaces/{slug}/delete", service, (*Handler).serveDeleteWorkspace},
		{http.MethodPost, "workspaces/{slug}/delete", service, (*Handler).deleteWorkspace},
	}
	rt = append(rt, integRoutes()...)
	rt = append(rt, cconfigRoutes()...)
	rt = append(rt, usersRoutes()...)
	return rt
}

// navItem is an entry of the navigation: a page that reads, at path
// (relative to BasePath, or to "workspaces/{slug}/" when workspace is
// set). The layout shows an entry only when its GET route exists, so
// the navigation grows with the pages.
type navItem struct {
	label     string
	path      string
	workspace bool
}

// nav is the navigation, in its order.
var nav = []navItem{
	{"Dashboard", "", false},
	{"Workspaces", "workspaces", false},
	{"Users", "users", true},
	{"Roles & groups", "roles", true},
	{"Mappers", "mappers", true},
	{"Webhooks", "webhooks", true},
	{"API keys & clients", "clients", true},
	{"Signing keys", "keys", true},
	{"Audit", "audit", true},
	{"Settings", "settings", true},
}

// hasPage reports whether the GET route path exists.
func (h *Handler) hasPage(path string) bool {
	for _, rt := range h.routes {
		if rt.method == http.MethodGet && rt.path == path {
			return true
		}
	}
	return false
}
