package oidc

import (
	"net/http"
	"net/url"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity"
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

// serveLogin is the sign-in page: GET shows the form of a pending
// authorization request; POST signs in, in steps: the password, then for
// a user who needs one the second factor (see signInCode), then, after an
// enrolment, the recovery codes' Continue.
func (h *Handler) serveLogin(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	if r.Method != http.MethodPost {
		id, _ := single(r.Form, "request")
		p, r, ok := h.pending(w, r, rq, id)
		if !ok {
			return
		}
		r = asClient(r, p.ClientID, p.ClientName)
		d := pageData{Login: r.Form.Get("login_hint"), Focus: "login"}
		if len(d.Login) > maxLoginBytes || !utf8.ValidString(d.Login) {
			d.Login = ""
		}
		if d.Login != "" {
			d.Focus = "password"
		}
		h.loginForm(w, r, rq, http.StatusOK, p, csrfToken(w, r, rq), d)
		return
	}
	if !h.csrfChecked(w, r, rq, rq.t("page.csrf.signin"), rq.t("page.csrf.signin_hint")) {
		return
	}
	p, r, ok := h.pending(w, r, rq, r.PostForm.Get("request"))
	if !ok {
		return
	}
	// Until a step proves who signs in, the request is the client's.
	r = asClient(r, p.ClientID, p.ClientName)
	switch r.PostForm.Get("step") {
	case "":
		h.signInPassword(w, r, rq, p)
	case stepCode:
		h.signInCode(w, r, rq, p)
	case stepContinue:
		h.signInContinue(w, r, rq, p)
	default:
		h.badRequest(w, r, rq, rq.t("page.error.invalid.title"), rq.t("page.error.step"))
	}
}

// passwordForm checks the sign-in form's login and password before they
// go to the library, and adds what is wrong with them to d.
func passwordForm(rq *pageRequest, r *http.Request, d *pageData) (login, password string, ok bool) {
	login, password = r.PostForm.Get("login"), r.PostForm.Get("password")
	d.Login = login
	switch {
	case len(login) > maxLoginBytes:
		d.Login = ""
		d.fieldError(rq.t("page.signin.login_too_long"), "login")
	case login == "":
		d.fieldError(rq.t("page.signin.login_missing"), "login")
	}
	switch {
	case len(password) > maxPasswordBytes:
		d.fieldError(rq.t("page.signin.password_too_long"), "password")
	case password == "":
		d.fieldError(rq.t("page.signin.password_missing"), "password")
	}
	return login, password, len(d.errs) == 0
}

// refusedSignIn adds to d what a sign-in form says of a refused
// password, and returns the status of the page; false for an error no
// form shows (stale or failed).
func refusedSignIn(w http.ResponseWriter, r *http.Request, rq *pageRequest, d *pageData, err error) (int, bool) {
	switch classify(err) {
	case formRefused, formInvalid:
		// A locked account gets the same message as a wrong password: the
		// page never tells whether an account exists. The focus goes to
		// the password, which is what is retyped.
		d.fieldError(rq.t("page.signin.wrong"), "password", "login")
		return http.StatusBadRequest, true
	case formThrottled:
		d.Message, d.Focus = throttled(w, rq, err), "password"
		return http.StatusTooManyRequests, true
	case formUnverified:
		// Only a right password gets here: telling it does not tell
		// whether an account exists to someone who does not know it.
		d.Message = rq.t("page.signin.unverified")
		if s, serr := rq.getSettings(r.Context()); serr == nil && s.SMTP == nil {
			d.Message = rq.t("page.signin.unverified_no_mail")
		}
		return http.StatusForbidden, true
	}
	return 0, false
}

// signInPassword is the sign-in form's first step: the password.
func (h *Handler) signInPassword(w http.ResponseWriter, r *http.Request, rq *pageRequest, p identity.PendingAuthorization) {
	csrf := r.PostForm.Get("csrf")
	var d pageData
	login, password, ok := passwordForm(rq, r, &d)
	if !ok {
		h.loginForm(w, r, rq, http.StatusBadRequest, p, csrf, d)
		return
	}
	signIn, err := rq.ws.Provider().SignIn(r.Context(), p.RequestID, login, password)
	if h.askSecondFactor(w, r, rq, h.loginSteps(r, rq, p, csrf), err) {
		return
	}
	if err == nil {
		h.setSession(w, rq, signIn.CreatedSession)
		h.sendCode(w, r, rq, signIn.Authorization)
		return
	}
	if status, shown := refusedSignIn(w, r, rq, &d, err); shown {
		h.loginForm(w, r, rq, status, p, csrf, d)
		return
	}
	if classify(err) == formStale {
		h.expired(w, r, rq)
		return
	}
	h.internalError(w, r, rq.ws.Slug(), err)
}

// setSession sets the session cookie, for as long as the session lasts.
func (h *Handler) setSession(w http.ResponseWriter, rq *pageRequest, s identity.CreatedSession) {
	http.SetCookie(w, rq.cookie(sessionCookie, s.Secret, max(int(s.Session.ExpiresAt.Sub(h.svc.Now()).Round(time.Second)/time.Second), 1)))
}

// pending returns the pending authorization request id names, and the
// request in the language of its ui_locales; or shows why there is none.
func (h *Handler) pending(w http.ResponseWriter, r *http.Request, rq *pageRequest, id string) (identity.PendingAuthorization, *http.Request, bool) {
	if id == "" || len(id) > maxRequestID {
		h.expired(w, r, rq)
		return identity.PendingAuthorization{}, r, false
	}
	p, err := rq.ws.Provider().GetPendingAuthorization(r.Context(), id)
	switch identity.ErrorCode(err) {
	case "":
		if p.UILocales != "" {
			r = h.speak(r, rq, p.UILocales)
		}
		return p, r, true
	case identity.CodeTokenInvalid, identity.CodeTokenExpired, identity.CodeNotFound, identity.CodeInvalid:
		h.expired(w, r, rq)
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
	return identity.PendingAuthorization{}, r, false
}

// livePending returns the pending authorization request id names, if it
// still waits for a sign-in: for a way back to it from a page that ends
// another flow (a reset, a verification).
func livePending(r *http.Request, rq *pageRequest, id string) (identity.PendingAuthorization, bool) {
	if id == "" || len(id) > maxRequestID {
		return identity.PendingAuthorization{}, false
	}
	p, err := rq.ws.Provider().GetPendingAuthorization(r.Context(), id)
	return p, err == nil
}

// loginURL is the sign-in page of a pending authorization request.
func loginURL(rq *pageRequest, requestID string) string {
	return rq.issuer + "/" + pathLogin + "?" + url.Values{"request": {requestID}}.Encode()
}

// expired shows that a sign-in request is unknown, used or expired.
func (h *Handler) expired(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	h.badRequest(w, r, rq, rq.t("page.signin.expired.title"), rq.t("page.signin.expired"))
}

// loginForm shows the sign-in form of d, with its errors after a failed
// try.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request, rq *pageRequest, status int, p identity.PendingAuthorization, csrf string, d pageData) {
	f := h.loginSteps(r, rq, p, csrf)
	f.fill(&d, rq.t("page.signin.title"))
	d.MaxLogin, d.MaxPassword = maxLoginChars, identity.MaxPasswordPolicyLength
	d.ForgotURL = h.forgotURL(r, rq, p.RequestID)
	h.render(w, r, status, "login", d, f.formAction)
}

// loginSteps are the sign-in page's forms for the pending request p.
func (h *Handler) loginSteps(r *http.Request, rq *pageRequest, p identity.PendingAuthorization, csrf string) steps {
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
	restart := loginURL(rq, p.RequestID)
	return steps{
		action: rq.issuer + "/" + pathLogin, requestID: p.RequestID, clientName: name,
		clientLogo: h.clientLogo(r, rq, p.ClientID), csrf: csrf,
		formAction: formAction, restart: restart, over: rq.t("page.signin.expired.title"),
	}
}

// forgotURL returns the password reset page if the workspace sends
// email, and "" otherwise; requestID is the authorization request the
// reset should lead back to, if any.
func (h *Handler) forgotURL(r *http.Request, rq *pageRequest, requestID string) string {
	s, err := rq.getSettings(r.Context())
	if err != nil || s.SMTP == nil {
		// A store failure costs the link only: the form still works.
		return ""
	}
	u := rq.issuer + "/" + pathReset
	if requestID != "" {
		u += "?" + url.Values{"request": {requestID}}.Encode()
	}
	return withLocale(rq, u)
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
