package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/identitylib/identity"
)

//go:embed templates/*.html
var templateFS embed.FS

// parsePages parses every page: templates/layout.html with one page file
// each, named by the file's name without ".html".
// Templates call href to build every console URL.
func (h *Handler) parsePages() (map[string]*template.Template, error) {
	layout, err := template.New("layout.html").Funcs(template.FuncMap{"href": h.href}).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console: parsing the layout: %w", err)
	}
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		if f == "templates/layout.html" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("console: parsing %s: %w", f, err)
		}
		pages[strings.TrimSuffix(path.Base(f), ".html")] = t
	}
	return pages, nil
}

// view is what every page's template is given: the layout's parts and the
// page's own Data. A page template defines "content" and reads its data
// as .Data; messages, field errors and the values of a form sent back go
// in Notice, Error, Fields and Form.
type view struct {
	// Title is the page's title (the h1 and the document's title).
	Title string
	// Workspace is the workspace the page is about, or "": the
	// navigation then shows the workspace's pages.
	Workspace string
	// Notice is a message of success; Error one of failure.
	Notice, Error string
	// Fields are the messages of the form's invalid fields, by field
	// name (the input's name and id).
	Fields map[string]string
	// Form holds the values of a form sent back with its errors.
	Form url.Values
	// Data is the page's own data.
	Data any

	// Set by render.
	Base     string
	CSRF     string
	Operator *identity.User
	Nav      []navLink
	canFn    func(slug string, write bool) bool
}

// navLink is an entry of the navigation as the layout shows it.
type navLink struct {
	Label, Href string
	Current     bool
}

// Can reports whether the signed-in operator may read (write false) or
// change (write true) the workspace slug ("": the whole service): a page
// shows a write control only when Can says so.
func (v *view) Can(slug string, write bool) bool { return v.canFn != nil && v.canFn(slug, write) }

// Field returns the value of the form's field name sent back, or "".
func (v *view) Field(name string) string { return v.Form.Get(name) }

// href returns the console URL of the parts: the first is a literal path
// relative to BasePath ("workspaces"), the others are escaped as one path
// segment each (a slug, an id).
func (h *Handler) href(parts ...any) string {
	var b strings.Builder
	b.WriteString(h.base)
	for i, p := range parts {
		s := fmt.Sprint(p)
		if i == 0 {
			b.WriteString(s)
			continue
		}
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// render writes the page name with status. It completes v with the
// layout's parts.
func (h *Handler) render(rq *request, status int, name string, v *view) {
	t, ok := h.pages[name]
	if !ok {
		h.logger.ErrorContext(rq.ctx, "console: no such page template", "page", name)
		http.Error(rq.w, "internal error", http.StatusInternalServerError)
		return
	}
	v.Base = h.base
	if rq.op != nil {
		v.Operator = &rq.op.user
		v.CSRF = rq.csrfToken()
		v.canFn = rq.op.grants.can
		v.Nav = h.navFor(rq, v.Workspace)
	}
	var buf bytes.Buffer
	err := t.ExecuteTemplate(&buf, "layout.html", v)
	if err != nil {
		h.logger.ErrorContext(rq.ctx, "console: rendering a page", "page", name, "error", err)
		http.Error(rq.w, "internal error", http.StatusInternalServerError)
		return
	}
	rq.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rq.w.WriteHeader(status)
	rq.w.Write(buf.Bytes())
}

// navFor returns the navigation of a page about the workspace slug (or
// none): the pages that exist, those of the workspace only when the
// operator may read it.
func (h *Handler) navFor(rq *request, slug string) []navLink {
	var links []navLink
	cur := strings.TrimPrefix(rq.r.URL.Path, h.base)
	for _, n := range nav {
		if !n.workspace {
			if h.hasPage(n.path) {
				links = append(links, navLink{Label: n.label, Href: h.base + n.path, Current: cur == n.path})
			}
			continue
		}
		if slug == "" || !rq.op.grants.can(slug, false) || !h.hasPage("workspaces/{slug}/"+n.path) {
			continue
		}
		p := "workspaces/" + url.PathEscape(slug) + "/" + n.path
		links = append(links, navLink{Label: n.label, Href: h.base + p, Current: strings.HasPrefix(cur, p)})
	}
	return links
}

// pageError is a refusal the console explains on a page of its own.
type pageError struct {
	status  int
	title   string
	message string
}

func (e *pageError) Error() string { return e.message }

// The console's own refusals.
var (
	errNotFound     = &pageError{http.StatusNotFound, "Not found", "There is no such page, or what it showed was deleted."}
	errForbidden    = &pageError{http.StatusForbidden, "Not allowed", "Your roles do not allow this. Ask an administrator of the console."}
	errNoRole       = &pageError{http.StatusForbidden, "No console role", "You are signed in, but hold no console role (console.admin, console.viewer, or one of a workspace). Ask an administrator of the console."}
	errForged       = &pageError{http.StatusForbidden, "Request refused", "The form was not sent from this console's page, or the page is too old. Go back, reload the page and try again."}
	errSessionEnded = &pageError{http.StatusForbidden, "Signed out", "Your console session has ended. Sign in again, then repeat what you were doing."}
	errBadForm      = &pageError{http.StatusBadRequest, "Bad request", "The form could not be read."}
	// errSignIn sends a GET without a session to the sign-in.
	errSignIn = &pageError{http.StatusSeeOther, "Sign in", "Sign in to use the console."}
)

// libraryError maps an error of the library to the status and message
// of the page that shows it: the one place where the console decides
// what an identity.Error means to an operator. The library's messages
// are written to be shown; a CodeInternal's is not, and is logged.
func libraryError(err error) (status int, title, message string) {
	var e *identity.Error
	if !errors.As(err, &e) {
		return http.StatusInternalServerError, "Server error", "Something failed on the server; the log says what. Try again later."
	}
	switch e.Code {
	case identity.CodeInvalid:
		return http.StatusUnprocessableEntity, "Check the form", "Some values are not valid: see the messages next to them."
	case identity.CodeNotFound:
		return http.StatusNotFound, "Not found", "It does not exist, or was deleted meanwhile."
	case identity.CodeConflict:
		return http.StatusConflict, "Already taken", e.Message
	case identity.CodeReservedClaim, identity.CodeLimitReached:
		return http.StatusUnprocessableEntity, "Not possible", e.Message
	case identity.CodeForbidden:
		return http.StatusForbidden, "Not allowed", e.Message
	case identity.CodePreconditionFailed:
		return http.StatusConflict, "Changed meanwhile", "Someone changed it while you were editing. Reload the page and try again."
	case identity.CodeTokenInvalid, identity.CodeTokenExpired, identity.CodeTokenUsed, identity.CodeInvalidGrant:
		return http.StatusBadRequest, "Link not valid", e.Message
	case identity.CodeRateLimited:
		return http.StatusTooManyRequests, "Too many attempts", e.Message
	case identity.CodeLocked:
		return http.StatusConflict, "Locked", e.Message
	case identity.CodeUnauthenticated:
		return http.StatusForbidden, "Not signed in", e.Message
	}
	return http.StatusInternalServerError, "Server error", "Something failed on the server; the log says what. Try again later."
}

// fieldErrors returns the field messages of a CodeInvalid (or a
// CodeConflict naming fields), by field name.
func fieldErrors(err error) map[string]string {
	var e *identity.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, f := range e.Fields {
		if _, ok := out[f.Field]; !ok {
			out[f.Field] = f.Message
		}
	}
	return out
}

// fail answers a request whose route returned err: a sign-in redirect, or
// a page saying what went wrong with its status.
func (h *Handler) fail(rq *request, err error) {
	if err == errSignIn {
		next := rq.r.URL.Path
		if rq.r.URL.RawQuery != "" {
			next += "?" + rq.r.URL.RawQuery
		}
		http.Redirect(rq.w, rq.r, h.base+"login?next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	var pe *pageError
	var status int
	var title, message string
	if errors.As(err, &pe) {
		status, title, message = pe.status, pe.title, pe.message
	} else {
		status, title, message = libraryError(err)
	}
	if status == http.StatusInternalServerError {
		h.logger.ErrorContext(rq.ctx, "console: a request failed", "method", rq.r.Method, "path", rq.r.URL.Path, "error", err)
	}
	h.render(rq, status, "error", &view{Title: title, Error: message})
}

// renderForm answers a form that the library refused: the form's page
// again with the status of err (422 for invalid values), its message and
// the messages of its fields, and the values sent. An error the page
// cannot show next to the form (a server failure) goes to fail.
func (h *Handler) renderForm(rq *request, name string, v *view, err error) {
	status, _, message := libraryError(err)
	if status == http.StatusInternalServerError {
		h.fail(rq, err)
		return
	}
	v.Error = message
	v.Fields = fieldErrors(err)
	v.Form = rq.r.PostForm
	h.render(rq, status, name, v)
}
