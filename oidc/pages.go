package oidc

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
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
)

// The messages of the sign-in page.
const (
	msgWrongCredentials = "The username, email or password is not right."
	msgMissing          = "Enter your username or email and your password."
	msgTooLong          = "The username, email or password is too long."
)

// The hidden step of a sign-in form: which of its forms was posted. The
// password form has none.
const (
	// stepCode is the second factor's form: a code, or the first code of
	// an enrolment.
	stepCode = "code"
	// stepContinue leaves the recovery codes shown after an enrolment for
	// the application.
	stepContinue = "continue"
)

//go:embed pages.html
var pagesFS embed.FS

var pages = template.Must(template.ParseFS(pagesFS, "pages.html"))

// pageData is what a page shows.
type pageData struct {
	Slug    string
	Title   string
	Message string
	Hint    string
	// Problems are the messages of a refused form after Message, one a
	// problem (the password policy's rules).
	Problems []string
	// Notice says that what the user asked for was done.
	Notice string
	// Link is where the page sends the user next, labelled LinkText.
	Link, LinkText string
	// The sign-in form's fields.
	ClientName, Action, RequestID, CSRF, Login string
	MaxLogin, MaxPassword                      int
	// Step is the hidden step of the page's form (see stepCode).
	Step string
	// ForgotURL is the password reset page, when the workspace sends
	// email.
	ForgotURL string
	// The second factor's form: the challenge of the sign-in waiting for
	// it, and for a user who enrols (Enrolling) what the authenticator app
	// needs.
	Challenge string
	Enrolling bool
	Enroll    *enrollView
	MaxCode   int
	// RecoveryCodes are shown once, after an enrolment or a regeneration.
	RecoveryCodes []string
	// The password reset forms' fields.
	Token, Email string
	MaxEmail     int
	// Account is what the account page shows.
	Account *accountView
}

// page writes a page with a message (an error, the signed-out page).
func (h *Handler) page(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	h.render(w, r, status, "message", d, "'none'")
}

// render writes the template name with the security headers of a page;
// formAction is the CSP form-action source list.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, d pageData, formAction string) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, d); err != nil {
		h.logFailure(r.Context(), r, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	images := ""
	if d.Enroll != nil {
		// The QR code is an inline data: image; nothing else loads.
		images = "; img-src data:"
	}
	hd.Set("Content-Security-Policy", "default-src 'none'"+images+"; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action "+formAction)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// redirect sends the browser to location.
func redirect(w http.ResponseWriter, r *http.Request, location string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, location, http.StatusFound)
}

// badRequest shows a refused request.
func (h *Handler) badRequest(w http.ResponseWriter, r *http.Request, rq *request, title, message string) {
	h.page(w, r, http.StatusBadRequest, pageData{Slug: rq.ws.Slug(), Title: title, Message: message,
		Hint: "Go back to the application and try again. If this keeps happening, tell the application's administrator."})
}

// parseForm reads the query and the form body, answering a page when it
// cannot.
func (h *Handler) parseForm(w http.ResponseWriter, r *http.Request, rq *request) bool {
	err := r.ParseForm()
	if err == nil {
		return true
	}
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		h.page(w, r, http.StatusRequestEntityTooLarge, pageData{Slug: rq.ws.Slug(), Title: "Request too large",
			Message: "The request is larger than this service accepts."})
		return false
	}
	h.badRequest(w, r, rq, "Invalid request", "The request could not be read.")
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

// authorizeParams are the parameters of an authorization request other
// than client_id and redirect_uri, each at most once.
var authorizeParams = []string{
	"response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method",
	"prompt", "response_mode", "request", "request_uri", "max_age", "login_hint", "id_token_hint",
}

// serveAuthorize is the authorization endpoint. Until the client and its
// redirect URI are known to match, every refusal is a page; after, it
// goes back to the redirect URI with the state.
func (h *Handler) serveAuthorize(w http.ResponseWriter, r *http.Request, rq *request) {
	if !h.parseForm(w, r, rq) {
		return
	}
	clientID, ok1 := single(r.Form, "client_id")
	redirectURI, ok2 := single(r.Form, "redirect_uri")
	if !ok1 || !ok2 {
		h.badRequest(w, r, rq, "Invalid sign-in request", "The application sent client_id or redirect_uri more than once.")
		return
	}
	if _, err := rq.ws.Provider().GetAuthorizationClient(r.Context(), clientID, redirectURI); err != nil {
		h.authorizePage(w, r, rq, err)
		return
	}
	state := r.Form.Get("state")
	if len(state) > identity.MaxStateLength || !utf8.ValidString(state) {
		state = "" // not sent back: Authorize refuses it
	}
	back := func(e *zoidc.Error) {
		e.State = state
		to, err := op.AuthResponseURL(redirectURI, zoidc.ResponseTypeCode, zoidc.ResponseModeQuery, e, zoidc.NewEncoder())
		if err != nil {
			h.internalError(w, r, rq.ws.Slug(), err)
			return
		}
		redirect(w, r, to)
	}
	for _, name := range authorizeParams {
		if _, ok := single(r.Form, name); !ok {
			back(zoidc.ErrInvalidRequest().WithDescription("%s is given more than once", name))
			return
		}
	}
	switch mode := r.Form.Get("response_mode"); {
	case r.Form.Has("request"):
		back(zoidc.ErrRequestNotSupported().WithDescription("request objects are not supported"))
		return
	case r.Form.Has("request_uri"):
		back((&zoidc.Error{ErrorType: errRequestURINotSupported}).WithDescription("request_uri is not supported"))
		return
	case mode != "" && mode != string(zoidc.ResponseModeQuery):
		back(zoidc.ErrInvalidRequest().WithDescription("response_mode must be query"))
		return
	}
	maxAge, ok := parseMaxAge(r.Form.Get("max_age"))
	if !ok {
		back(zoidc.ErrInvalidRequest().WithDescription("max_age must be a whole number of seconds"))
		return
	}
	auth, err := rq.ws.Provider().Authorize(r.Context(), identity.AuthorizationRequest{
		ClientID: clientID, RedirectURI: redirectURI, ResponseType: r.Form.Get("response_type"),
		Scopes: strings.Fields(r.Form.Get("scope")), State: r.Form.Get("state"), Nonce: r.Form.Get("nonce"),
		CodeChallenge: r.Form.Get("code_challenge"), CodeChallengeMethod: r.Form.Get("code_challenge_method"),
		Prompt: strings.Fields(r.Form.Get("prompt")), MaxAge: maxAge,
	}, sessionToken(r))
	if err != nil {
		o := mapError(atAuthorize, err)
		switch {
		case o.page:
			h.authorizePage(w, r, rq, err)
		case o.internal:
			h.logFailure(r.Context(), r, err)
			back(o.err)
		default:
			back(o.err)
		}
		return
	}
	if auth.RequestID != "" {
		q := url.Values{"request": {auth.RequestID}}
		if hint := r.Form.Get("login_hint"); hint != "" && len(hint) <= maxLoginBytes && utf8.ValidString(hint) {
			q.Set("login_hint", hint) // fills in the form's login field
		}
		redirect(w, r, rq.issuer+"/"+pathLogin+"?"+q.Encode())
		return
	}
	h.sendCode(w, r, rq, auth)
}

// parseMaxAge reads the max_age parameter: absent is nil, otherwise a
// count of seconds from 0 to ten years (OpenID Connect Core 3.1.2.1).
func parseMaxAge(v string) (*time.Duration, bool) {
	if v == "" {
		return nil, true
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n > 10*366*24*3600 {
		return nil, false
	}
	d := time.Duration(n) * time.Second
	return &d, true
}

// authorizePage shows an authorization error that must not be redirected:
// the client or its redirect URI is not known.
func (h *Handler) authorizePage(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	o := mapError(atAuthorize, err)
	switch {
	case o.internal:
		h.internalError(w, r, rq.ws.Slug(), err)
	case identity.ErrorCode(err) == identity.CodeNotFound:
		h.badRequest(w, r, rq, "Unknown application", "The application that sent you here is not registered with this sign-in service.")
	default:
		h.badRequest(w, r, rq, "Invalid sign-in request", "The application asked to send you back to an address that is not registered for it.")
	}
}

// sendCode sends the browser back to the client with a code and the state.
func (h *Handler) sendCode(w http.ResponseWriter, r *http.Request, rq *request, auth identity.Authorization) {
	to, err := op.AuthResponseURL(auth.RedirectURI, zoidc.ResponseTypeCode, zoidc.ResponseModeQuery,
		&op.CodeResponseType{Code: auth.Code, State: auth.State}, zoidc.NewEncoder())
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	redirect(w, r, to)
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

// serveLogin is the sign-in page: GET shows the form of a pending
// authorization request; POST signs in, in steps: the password, then for
// a user who needs one the second factor (see signInCode), then, after an
// enrolment, the recovery codes' Continue.
func (h *Handler) serveLogin(w http.ResponseWriter, r *http.Request, rq *request) {
	if !h.parseForm(w, r, rq) {
		return
	}
	if r.Method != http.MethodPost {
		id, _ := single(r.Form, "request")
		p, ok := h.pending(w, r, rq, id)
		hint := r.Form.Get("login_hint")
		if len(hint) > maxLoginBytes || !utf8.ValidString(hint) {
			hint = ""
		}
		if ok {
			h.loginForm(w, r, rq, http.StatusOK, p, csrfToken(w, r, rq), hint, "")
		}
		return
	}
	if !h.csrfChecked(w, r, rq, "Sign-in form not accepted",
		"This sign-in form did not come from this site, or it has expired, so nobody was signed in.",
		"Go back to the application and sign in again.") {
		return
	}
	p, ok := h.pending(w, r, rq, r.PostForm.Get("request"))
	if !ok {
		return
	}
	switch r.PostForm.Get("step") {
	case "":
		h.signInPassword(w, r, rq, p)
	case stepCode:
		h.signInCode(w, r, rq, p)
	case stepContinue:
		h.signInContinue(w, r, rq, p)
	default:
		h.badRequest(w, r, rq, "Invalid request", "The sign-in form sent a step this page does not have.")
	}
}

// signInPassword is the sign-in form's first step: the password.
func (h *Handler) signInPassword(w http.ResponseWriter, r *http.Request, rq *request, p identity.PendingAuthorization) {
	csrf := r.PostForm.Get("csrf")
	login, password := r.PostForm.Get("login"), r.PostForm.Get("password")
	switch {
	case len(login) > maxLoginBytes || len(password) > maxPasswordBytes:
		h.loginForm(w, r, rq, http.StatusBadRequest, p, csrf, "", msgTooLong)
		return
	case login == "" || password == "":
		h.loginForm(w, r, rq, http.StatusBadRequest, p, csrf, login, msgMissing)
		return
	}
	signIn, err := rq.ws.Provider().SignIn(r.Context(), p.RequestID, login, password)
	if h.askSecondFactor(w, r, rq, loginSteps(rq, p, csrf), err) {
		return
	}
	switch classify(err) {
	case formOK:
	case formRefused, formInvalid:
		// A locked account gets the same message as a wrong password: the
		// page never tells whether an account exists.
		h.loginForm(w, r, rq, http.StatusBadRequest, p, csrf, login, msgWrongCredentials)
		return
	case formStale:
		h.expired(w, r, rq)
		return
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	h.setSession(w, rq, signIn.CreatedSession)
	h.sendCode(w, r, rq, signIn.Authorization)
}

// setSession sets the session cookie, for as long as the session lasts.
func (h *Handler) setSession(w http.ResponseWriter, rq *request, s identity.CreatedSession) {
	http.SetCookie(w, rq.cookie(sessionCookie, s.Secret, max(int(s.Session.ExpiresAt.Sub(h.svc.Now()).Round(time.Second)/time.Second), 1)))
}

// pending returns the pending authorization request id names, or shows
// why there is none.
func (h *Handler) pending(w http.ResponseWriter, r *http.Request, rq *request, id string) (identity.PendingAuthorization, bool) {
	if id == "" || len(id) > maxRequestID {
		h.expired(w, r, rq)
		return identity.PendingAuthorization{}, false
	}
	p, err := rq.ws.Provider().GetPendingAuthorization(r.Context(), id)
	switch identity.ErrorCode(err) {
	case "":
		return p, true
	case identity.CodeTokenInvalid, identity.CodeTokenExpired, identity.CodeNotFound, identity.CodeInvalid:
		h.expired(w, r, rq)
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
	return identity.PendingAuthorization{}, false
}

// expired shows that a sign-in request is unknown, used or expired.
func (h *Handler) expired(w http.ResponseWriter, r *http.Request, rq *request) {
	h.badRequest(w, r, rq, "This sign-in has expired",
		"This sign-in page is no longer valid: it has expired or was used already.")
}

// loginForm shows the sign-in form, with a message after a failed try.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request, rq *request, status int, p identity.PendingAuthorization, csrf, login, message string) {
	f := loginSteps(rq, p, csrf)
	d := f.data(rq, "Sign in", message)
	d.Login, d.MaxLogin, d.MaxPassword = login, maxLoginChars, identity.MaxPasswordPolicyLength
	d.ForgotURL = h.forgotURL(r, rq)
	h.render(w, r, status, "login", d, f.formAction)
}

// loginSteps are the sign-in page's forms for the pending request p.
func loginSteps(rq *request, p identity.PendingAuthorization, csrf string) steps {
	name := p.ClientName
	if name == "" {
		name = p.ClientID
	}
	// The forms post here, and their answer may redirect to the client:
	// Chromium checks form-action against both.
	formAction := "'self'"
	if origin, ok := origin(p.RedirectURI); ok {
		formAction += " " + origin
	}
	return steps{
		action: rq.issuer + "/" + pathLogin, requestID: p.RequestID, clientName: name, csrf: csrf,
		formAction: formAction, restart: rq.issuer + "/" + pathLogin + "?" + url.Values{"request": {p.RequestID}}.Encode(),
		over: "This sign-in has expired",
	}
}

// forgotURL returns the password reset page if the workspace sends
// email, and "" otherwise.
func (h *Handler) forgotURL(r *http.Request, rq *request) string {
	s, err := rq.ws.GetSettings(r.Context())
	if err != nil || s.SMTP == nil {
		// A store failure costs the link only: the form still works.
		return ""
	}
	return rq.issuer + "/" + pathReset
}

// safeOrigin is what an origin may look like to go into a CSP header.
var safeOrigin = regexp.MustCompile(`^https?://[A-Za-z0-9.\-]+(:[0-9]+)?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]+)?$`)

// origin returns the origin of a URI, if it is safe to put in a header.
func origin(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", false
	}
	o := u.Scheme + "://" + u.Host
	return o, safeOrigin.MatchString(o)
}

// csrfToken returns the browser's double-submit token, setting a new one
// when it has none.
func csrfToken(w http.ResponseWriter, r *http.Request, rq *request) string {
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
func (h *Handler) csrfChecked(w http.ResponseWriter, r *http.Request, rq *request, title, message, hint string) bool {
	if r.Header.Get("Sec-Fetch-Site") != "cross-site" && csrfMatches(r) {
		return true
	}
	h.page(w, r, http.StatusForbidden, pageData{Slug: rq.ws.Slug(), Title: title, Message: message, Hint: hint})
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

// serveEndSession is RP-initiated logout: it revokes the session of the
// cookie (or the ID token hint's), clears the cookie, and sends the
// browser to the registered post-logout redirect URI or shows that the
// user is signed out.
func (h *Handler) serveEndSession(w http.ResponseWriter, r *http.Request, rq *request) {
	if !h.parseForm(w, r, rq) {
		return
	}
	to, err := rq.ws.Provider().EndSession(r.Context(), identity.EndSessionRequest{
		IDTokenHint: r.Form.Get("id_token_hint"), ClientID: r.Form.Get("client_id"),
		PostLogoutRedirectURI: r.Form.Get("post_logout_redirect_uri"), State: r.Form.Get("state"),
		SessionToken: sessionToken(r),
	})
	if err != nil {
		o := mapError(atAuthorize, err)
		if o.internal {
			h.internalError(w, r, rq.ws.Slug(), err)
			return
		}
		msg := "The application's sign-out request is not valid."
		if e, ok := errors.AsType[*identity.Error](err); ok && len(e.Fields) > 0 && e.Fields[0].Field == "post_logout_redirect_uri" {
			msg = "The application asked to send you back to an address that is not registered for it."
		}
		h.badRequest(w, r, rq, "Invalid sign-out request", msg)
		return
	}
	http.SetCookie(w, rq.cookie(sessionCookie, "", -1))
	if to != "" {
		redirect(w, r, to)
		return
	}
	h.page(w, r, http.StatusOK, pageData{Slug: rq.ws.Slug(), Title: "Signed out", Message: "You are signed out."})
}
