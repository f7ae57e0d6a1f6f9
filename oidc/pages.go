package oidc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/i18n"
	"github.com/identitylib/identity/requestinfo"
)

// The cookies of a workspace, scoped to its issuer's path.
const (
	// sessionCookie holds the session token of the user signed in at the
	// workspace: single sign-on for the next authorization.
	sessionCookie = "identity_session"
	// csrfCookie holds the sign-in form's double-submit token.
	csrfCookie = "identity_csrf"
)

// Bounds of the sign-in form's fields, in bytes: four per character of
// the library's limits.
const (
	maxLoginChars    = max(identity.MaxUsernameLength, identity.MaxEmailLength)
	maxLoginBytes    = 4 * maxLoginChars
	maxPasswordBytes = 4 * identity.MaxPasswordPolicyLength
	maxRequestID     = 128
	// maxUILocales bounds the ui_locales parameter that is read: a
	// handful of language tags.
	maxUILocales = 128
)

//go:embed pages.html
var pagesFS embed.FS

var pages = template.Must(template.ParseFS(pagesFS, "pages.html"))

// pageData is what a page shows. Its texts are in the page's language
// already, except the templates' own, which they print with L.
type pageData struct {
	// L prints the templates' texts in the page's language; Brand and
	// Style present the workspace. render sets them.
	L     i18n.Printer
	Brand brandView
	Style template.CSS
	// UILocales is the ui_locales the page's forms carry on (see
	// pageRequest.uiLocales). render sets it.
	UILocales string
	// Wide is the account page's wider card.
	Wide bool

	Title   string
	Message string
	Hint    string
	// Notice says that what the user asked for was done.
	Notice string
	// Link is the way on from the page, labelled LinkText: every page
	// that ends a flow has one.
	Link, LinkText string

	// errs are the messages tied to inputs, in the order of the inputs on
	// the page (see fieldError); Focus is the input that gets the focus
	// when none is wrong.
	errs  []fieldError
	Focus string

	// The sign-in form's fields.
	ClientName, ClientLogo, Action, RequestID, CSRF, Login string
	MaxLogin, MaxPassword, MinPassword                     int
	// Step is the hidden step of the page's form (see stepCode).
	Step string
	// ForgotURL is the password reset page, when the workspace sends
	// email.
	ForgotURL string
	// The second factor's form: the challenge of the sign-in waiting for
	// it, and for a user who enrols (Enrolling) what the authenticator app
	// needs. RecoveryOpen opens the recovery code's part of the form.
	Challenge    string
	Enrolling    bool
	Enroll       *enrollView
	MaxCode      int
	RecoveryOpen bool
	// RecoveryCodes are shown once, after an enrolment or a regeneration,
	// with Download, a data: URL of them as a text file.
	RecoveryCodes []string
	Download      template.URL
	// Rules are the password policy's rules, shown with a new password's
	// input.
	Rules []string
	// The password reset forms' fields.
	Token, Email string
	MaxEmail     int
	// Account is what the account page shows.
	Account *accountView
	// Logout is the logout confirmation's request.
	Logout *logoutView
}

// fieldError is a message tied to inputs: shown at the first, which it
// describes (aria-describedby) like each of the others, all marked
// aria-invalid.
type fieldError struct {
	// ID is the message's element id.
	ID     string
	Text   string
	inputs []string
}

// fieldError adds a message tied to the inputs (their ids), shown at the
// first of them; the first input of the first message gets the focus.
func (d *pageData) fieldError(text string, inputs ...string) {
	d.errs = append(d.errs, fieldError{ID: inputs[0] + "-error", Text: text, inputs: inputs})
}

// ErrorAt returns the message shown at the input, or nil.
func (d pageData) ErrorAt(input string) *fieldError {
	for i := range d.errs {
		if d.errs[i].inputs[0] == input {
			return &d.errs[i]
		}
	}
	return nil
}

// Attrs returns the input's accessibility attributes: aria-invalid and
// aria-describedby for its messages (and the password rules, for a new
// password), autofocus for the input the focus goes to. No script is
// needed: the browser focuses the wrong field as the page loads.
func (d pageData) Attrs(input string) template.HTMLAttr {
	var ids, attrs []string
	for _, e := range d.errs {
		if slices.Contains(e.inputs, input) {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) > 0 {
		attrs = append(attrs, `aria-invalid="true"`)
	}
	if input == "password" && len(d.Rules) > 0 {
		ids = append(ids, "password-rules")
	}
	if len(ids) > 0 {
		attrs = append(attrs, `aria-describedby="`+strings.Join(ids, " ")+`"`)
	}
	if d.focus() == input {
		attrs = append(attrs, "autofocus")
	}
	// The ids are this package's constants: nothing from a request.
	return template.HTMLAttr(strings.Join(attrs, " "))
}

// focus is the input the focus goes to: the first wrong one, else Focus.
func (d pageData) focus() string {
	if len(d.errs) > 0 {
		return d.errs[0].inputs[0]
	}
	return d.Focus
}

// brandView is how a page presents its workspace.
type brandView struct {
	// Name is the workspace's display name (its slug when it has none);
	// "" on a page outside any workspace.
	Name string
	// Logo is the URL of the workspace's logo, "" when it has none.
	Logo string
}

// pageRequest is a request for a hosted page: the endpoint's request,
// the language of the page, and what the page read of the workspace.
type pageRequest struct {
	*request
	// tr prints in the page's language.
	tr i18n.Printer
	// uiLocales is the locale a ui_locales parameter chose for a page
	// outside an authorization request (the account page, a reset, a
	// logout), which its forms and links carry on; "" when none did.
	uiLocales string
	// settings are the workspace's, once read.
	settings *identity.Settings
	// name is the workspace's slug on a page answered before the
	// workspace was read (request is nil then).
	name string
}

type pageKey struct{}

// pageOf returns the pageRequest of a hosted page's request, or nil.
func pageOf(ctx context.Context) *pageRequest {
	pr, _ := ctx.Value(pageKey{}).(*pageRequest)
	return pr
}

// page adapts a hosted page to the route table: it reads the request's
// form, chooses the page's language, and puts the language in the
// context's identity.RequestInfo, so that an email the request queues is
// written in it.
func page(serve func(h *Handler, w http.ResponseWriter, r *http.Request, rq *pageRequest)) func(*Handler, http.ResponseWriter, *http.Request, *request) {
	return func(h *Handler, w http.ResponseWriter, r *http.Request, base *request) {
		rq := &pageRequest{request: base}
		r = r.WithContext(context.WithValue(r.Context(), pageKey{}, rq))
		// The query's ui_locales speaks for a form that cannot be read.
		r = h.speak(r, rq, r.URL.Query().Get("ui_locales"))
		if !h.parseForm(w, r, rq) {
			return
		}
		if ui, ok := single(r.Form, "ui_locales"); ok && ui != "" && len(ui) <= maxUILocales {
			r = h.speak(r, rq, ui)
			rq.uiLocales = uiLocale(ui)
		}
		serve(h, w, r, rq)
	}
}

// speak sets the page's language from a ui_locales parameter and the
// Accept-Language header (see i18n.Negotiate), and returns the request
// with the language in its context's RequestInfo.
func (h *Handler) speak(r *http.Request, rq *pageRequest, uiLocales string) *http.Request {
	if len(uiLocales) > maxUILocales {
		uiLocales = ""
	}
	rq.tr = i18n.For(i18n.Negotiate(uiLocales, r.Header.Get("Accept-Language")))
	info := identity.RequestInfoFrom(r.Context())
	if info == (identity.RequestInfo{}) {
		// A handler mounted without the provider's request information
		// in the context still records the client of a session.
		info = requestinfo.From(h.svc, r)
	}
	info.Locale = rq.tr.Locale()
	return r.WithContext(identity.WithRequestInfo(r.Context(), info))
}

// uiLocale returns the catalogue's locale of the first tag of a
// ui_locales parameter that it has, or "".
func uiLocale(ui string) string {
	for _, tag := range strings.Fields(ui) {
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if i18n.Has(primary) {
			return primary
		}
	}
	return ""
}

// pageFor returns the pageRequest of r, or one for a page answered
// before the route's (a path that names nothing, a method not allowed):
// in the language of the request's ui_locales and Accept-Language, named
// by the slug.
func (h *Handler) pageFor(r *http.Request, slug string) *pageRequest {
	if rq := pageOf(r.Context()); rq != nil {
		return rq
	}
	ui := r.URL.Query().Get("ui_locales")
	if len(ui) > maxUILocales {
		ui = ""
	}
	return &pageRequest{tr: i18n.For(i18n.Negotiate(ui, r.Header.Get("Accept-Language"))), name: slug}
}

// getSettings returns the workspace's settings, read once a request.
func (rq *pageRequest) getSettings(ctx context.Context) (identity.Settings, error) {
	if rq.settings != nil {
		return *rq.settings, nil
	}
	s, err := rq.ws.GetSettings(ctx)
	if err != nil {
		return identity.Settings{}, err
	}
	rq.settings = &s
	return s, nil
}

// t prints the message with the key in the page's language.
func (rq *pageRequest) t(key string, args ...any) string { return rq.tr.T(key, args...) }

// plural prints key+".one" for n == 1 and key+".other" with n otherwise.
func (rq *pageRequest) plural(key string, n int64) string {
	if n == 1 {
		return rq.t(key + ".one")
	}
	return rq.t(key+".other", n)
}

// page writes a page with a message (an error, the signed-out page).
func (h *Handler) page(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	h.render(w, r, status, "message", d, "'none'")
}

// render writes the template name with the security headers of a page;
// formAction is the CSP form-action source list.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, d pageData, formAction string) {
	rq := h.pageFor(r, "")
	d.L, d.UILocales = rq.tr, rq.uiLocales
	var st style
	d.Brand, st = h.brand(r, rq)
	d.Style = st.css
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, d); err != nil {
		h.logFailure(r.Context(), r, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// Images: the logos, from the issuer; the QR code of an enrolment is
	// an inline data: image.
	images := "'self'"
	if d.Enroll != nil {
		images += " data:"
	}
	hd.Set("Content-Security-Policy", "default-src 'none'; img-src "+images+"; style-src "+st.source+
		"; base-uri 'none'; frame-ancestors 'none'; form-action "+formAction)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Language", rq.tr.Locale())
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// brand returns how the page presents its workspace, and its style.
// What cannot be read costs the page its branding only: the page still
// answers.
func (h *Handler) brand(r *http.Request, rq *pageRequest) (brandView, style) {
	if rq.request == nil {
		return brandView{Name: rq.name}, pageStyle("")
	}
	ctx := r.Context()
	b := brandView{Name: rq.ws.Slug()}
	accent := ""
	if s, err := rq.getSettings(ctx); err == nil {
		b.Name, accent = s.Branding.Name(rq.ws.Slug()), s.Branding.Accent()
	} else {
		h.logFailure(ctx, r, err)
	}
	switch _, err := rq.ws.GetLogo(ctx); identity.ErrorCode(err) {
	case "":
		b.Logo = rq.issuer + "/" + pathLogo
	case identity.CodeNotFound:
	default:
		h.logFailure(ctx, r, err)
	}
	return b, pageStyle(accent)
}

// redirect sends the browser to location.
func redirect(w http.ResponseWriter, r *http.Request, location string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, location, http.StatusFound)
}

// notFound answers a path that names no endpoint or no workspace.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	rq := h.pageFor(r, "")
	h.page(w, r, http.StatusNotFound, pageData{Title: rq.t("page.error.not_found.title"), Message: rq.t("page.error.not_found.message")})
}

// methodNotAllowed answers a method the endpoint does not take.
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request, slug string) {
	rq := h.pageFor(r, slug)
	h.page(w, r.WithContext(context.WithValue(r.Context(), pageKey{}, rq)), http.StatusMethodNotAllowed,
		pageData{Title: rq.t("page.error.method.title"), Message: rq.t("page.error.method.message", r.Method)})
}

// internalError logs a failure and answers 500 without its cause.
func (h *Handler) internalError(w http.ResponseWriter, r *http.Request, slug string, err error) {
	h.logFailure(r.Context(), r, err)
	rq := h.pageFor(r, slug)
	d := pageData{Title: rq.t("page.error.internal.title"), Message: rq.t("page.error.internal.message")}
	if rq.request != nil {
		d.Link, d.LinkText = accountURL(rq, ""), rq.t("page.way.account")
	}
	h.page(w, r.WithContext(context.WithValue(r.Context(), pageKey{}, rq)), http.StatusInternalServerError, d)
}

// badRequest shows a refused request, with the way to the account page.
func (h *Handler) badRequest(w http.ResponseWriter, r *http.Request, rq *pageRequest, title, message string) {
	h.page(w, r, http.StatusBadRequest, pageData{Title: title, Message: message, Hint: rq.t("page.error.go_back"),
		Link: accountURL(rq, ""), LinkText: rq.t("page.way.account")})
}

// parseForm reads the query and the form body, answering a page when it
// cannot.
func (h *Handler) parseForm(w http.ResponseWriter, r *http.Request, rq *pageRequest) bool {
	err := r.ParseForm()
	if err == nil {
		return true
	}
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		h.page(w, r, http.StatusRequestEntityTooLarge, pageData{Title: rq.t("page.error.too_large.title"),
			Message: rq.t("page.error.too_large.message")})
		return false
	}
	h.badRequest(w, r, rq, rq.t("page.error.invalid.title"), rq.t("page.error.unreadable"))
	return false
}

// single returns the one value of a parameter; false when it is given
// more than once (RFC 6749, 3.1).
func single(form url.Values, name string) (string, bool) {
	vs := form[name]
	if len(vs) > 1 {
		return "", false
	}
	if len(vs) == 0 {
		return "", true
	}
	return vs[0], true
}

// withLocale returns u with the page's ui_locales, for a link or a
// redirect of a page outside an authorization request.
func withLocale(rq *pageRequest, u string) string {
	if rq.uiLocales == "" {
		return u
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "ui_locales=" + url.QueryEscape(rq.uiLocales)
}

// retryAfter sets the Retry-After header of a CodeRateLimited refusal,
// in whole seconds rounded up, and returns the wait in minutes rounded
// up, which the pages say.
func retryAfter(w http.ResponseWriter, err error) int64 {
	var after time.Duration
	if e, ok := errors.AsType[*identity.Error](err); ok {
		after = e.RetryAfter
	}
	seconds := max(int64((after+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(seconds, 10))
	return (seconds + 59) / 60
}

// throttled answers a refused sign-in, code or password change of
// CodeRateLimited: its Retry-After, and the page's message.
func throttled(w http.ResponseWriter, rq *pageRequest, err error) string {
	return rq.plural("page.throttled", retryAfter(w, err))
}

// showTime is how the pages show a time: to the minute, in UTC, which
// they say (without a script the browser's zone is not known).
func showTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// ago says how long before now t was, roughly: "just now", minutes,
// hours, then days.
func ago(rq *pageRequest, now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return rq.t("page.time.just_now")
	case d < time.Hour:
		return rq.plural("page.time.minutes", int64(d/time.Minute))
	case d < 48*time.Hour:
		return rq.plural("page.time.hours", int64(d/time.Hour))
	}
	return rq.plural("page.time.days", int64(d/(24*time.Hour)))
}

// sessionToken returns the session cookie's token, or "".
func sessionToken(r *http.Request) string {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// cookie returns a cookie of the workspace that lasts maxAge seconds: 0
// for as long as the browser runs, -1 to delete it. A lifetime rather
// than an expiry time, so that the browser's clock does not matter.
func (rq *request) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: rq.cookiePath, MaxAge: maxAge,
		HttpOnly: true, Secure: rq.secure, SameSite: http.SameSiteLaxMode}
}

// csrfToken returns the browser's double-submit token, setting a new one
// when it has none.
func csrfToken(w http.ResponseWriter, r *http.Request, rq *pageRequest) string {
	if c, err := r.Cookie(csrfCookie); err == nil && validToken(c.Value) {
		return c.Value
	}
	b := make([]byte, 32)
	rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, rq.cookie(csrfCookie, token, 0))
	return token
}

// csrfChecked refuses a form post that is cross-site or whose CSRF token
// is not the cookie's, with a page saying so; it reports whether the post
// may go on.
func (h *Handler) csrfChecked(w http.ResponseWriter, r *http.Request, rq *pageRequest, message, hint string) bool {
	if r.Header.Get("Sec-Fetch-Site") != "cross-site" && csrfMatches(r) {
		return true
	}
	h.page(w, r, http.StatusForbidden, pageData{Title: rq.t("page.csrf.title"), Message: message, Hint: hint,
		Link: accountURL(rq, ""), LinkText: rq.t("page.way.account")})
	return false
}

// csrfMatches reports whether the form's token is the cookie's.
func csrfMatches(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	field := r.PostForm.Get("csrf")
	return err == nil && validToken(c.Value) && subtle.ConstantTimeCompare([]byte(c.Value), []byte(field)) == 1
}

// validToken reports whether s has the form of a CSRF token.
func validToken(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 32
}
