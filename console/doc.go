// Package console is the operator console of an identity.Service: an
// http.Handler a program mounts, like net/http/pprof, that serves
// server-rendered pages to the operators of the service. It calls the
// library's public API only, never a store: whatever it does, a program
// can do too.
//
//	h, err := console.New(svc, nil) // served under /console/
//	if err != nil { ... }
//	if err := h.Prepare(ctx); err != nil { ... } // the operator workspace
//	mux.Handle("/t/", provider)                  // package oidc: operators sign in there
//	mux.Handle(h.BasePath(), h)
//
// docs/console.md is the operator's guide; this comment is the page
// author's.
//
// # Operators and roles
//
// Operators are the users of one workspace, the operator workspace
// (Options.OperatorWorkspace, "operators"), which Prepare creates with a
// second factor required of everybody. They sign in through the library's
// own OpenID Provider: the console is a public OAuth client of that
// workspace (authorization code, PKCE S256, state and nonce); the code is
// exchanged in process (identity.Provider.ExchangeCode), and the console
// session is a session of the operator workspace (Workspace.CreateSession)
// whose token is the HttpOnly, SameSite=Strict cookie identity_console,
// bound by Options.SessionLifetime (8 h) and IdleTimeout (30 min) through
// Workspace.VerifySessionWithin. Every request checks the session, the
// user (enabled) and reads the user's roles again, so a role removed or an
// operator disabled takes effect on their next click.
//
// Roles of the operator workspace grant access: RoleAdmin
// ("console.admin") everything, RoleViewer ("console.viewer") reading
// everything, and WorkspaceRole(RoleAdmin or RoleViewer, SLUG) the same
// for the workspace SLUG alone, never the operator workspace. One function
// decides (grants.can(slug, write)); a page asks it through the view
// (.Can SLUG true) before it shows a write control, and the router asks it
// before any route runs.
//
// # Writing a page
//
// A page is a route, a function and a template:
//
//   - Add a route to routeTable (routes.go): method, path relative to
//     BasePath in http.ServeMux's syntax ("workspaces/{slug}/users/{id}"),
//     and its access: public (no session needed), asset (not even read:
//     the static files), anyOperator (any console role; the page filters
//     what it shows), service (the whole service: can("", write)) or
//     inWorkspace (the path's {slug}: can(slug, write)). A GET route
//     reads; a POST route writes, and is refused to an operator who may
//     only read. Pages of one workspace live under "workspaces/{slug}/";
//     an entry of nav (routes.go) shows in the navigation once its GET
//     route exists.
//   - The function is func(h *Handler, rq *request) error. rq.ctx carries
//     the request's identity.RequestInfo and the operator as the actor of
//     every library call (identity.ActorOperator, their user id and
//     username), so the audit trail names who did what from where: always
//     call the library with rq.ctx. Render with h.render(rq, status, name,
//     view), or return an error: a library error becomes a page with the
//     status libraryError gives its code (render.go: the one table), a
//     console refusal (pageError) its own page.
//   - A form that the library refuses is sent back with
//     h.renderForm(rq, name, view, err): status 422 for invalid values,
//     the message on top, each field's message next to its input
//     (view.Fields, keyed by the library's field names, which are the
//     inputs' names and ids), and the values typed (view.Field).
//   - After a successful POST, redirect (303) to a GET page; a notice
//     carried in the query names an object and is shown only when it is
//     true (see serveWorkspaces), so a link cannot make a page lie.
//   - The template is templates/NAME.html defining "content"; the layout
//     (templates/layout.html) gives the title, the navigation, messages
//     and the skip link. Build every URL with href: {{href "workspaces"
//     .Slug "delete"}} is BasePath + "workspaces/" + the escaped slug +
//     "/delete". Every input has a label; errors are tied to their inputs
//     with aria-describedby and aria-invalid. Every POST form carries
//     <input type="hidden" name="csrf" value="{{.CSRF}}">. Lists are paged
//     (pager, "offset" in the query, pageSize rows) with their total.
//   - No inline script or style (the CSP forbids them): static/console.css
//     styles everything, static/console.js enhances (data-confirm on a
//     form asks before sending it, in a dialog the keyboard operates;
//     data-live on a search form sends it while typing and puts the
//     focus back in the field). Every page works without JavaScript.
//   - The keyboard: the layout's first message (Error, else Notice)
//     takes the focus as the page loads, so a redirect after a POST
//     carries no fragment (a fragment would cancel the autofocus).
//     TestBrowserKeyboard walks the main journeys with keys alone.
//   - Tests: env_test.go gives a test a console over a real Service and
//     OpenID Provider, and e.operator(name, roles...) a browser signed in
//     with the roles chosen. A new POST route needs its row in csrfRows
//     (csrf_test.go), or TestCSRFEveryRoute fails.
//
// # Security
//
// Every POST (its body at most MaxFormBytes) passes Go's
// http.CrossOriginProtection and, when it needs a session, carries the session's CSRF token (a hash of the session
// token, compared in constant time); the setup form's one-time token
// stands for it there. Every answer has the headers Content-Security-
// Policy (default-src 'none'; scripts, styles and images from the console
// itself; forms to the console and the provider; frame-ancestors
// 'none'), Cache-Control: no-store, X-Content-Type-Options: nosniff,
// Referrer-Policy: same-origin and X-Frame-Options: DENY.
//
// # First run
//
// Invite makes a user of the operator workspace an operator with the
// roles given and returns a one-time setup link (identity.
// Workspace.CreateAccountSetup, one hour, single use) to the page
// {base}setup, where they choose their password; their first sign-in
// then makes them enrol a second factor. HasOperator tells a program
// whether anyone can sign in yet (identityd serve prints a link when not).
package console
