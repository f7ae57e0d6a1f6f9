package oidc

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/identitylib/identity"
)

// The account page's steps: the hidden step of its forms (pages.html
// spells them too). stepSignIn and stepCode sign in; the others need the
// session cookie.
const (
	stepSignIn     = "signin"
	stepEnroll     = "enroll"
	stepConfirm    = "confirm"
	stepRemove     = "remove"
	stepRegenerate = "recovery"
	stepPassword   = "password"
	stepRevoke     = "revoke"
	stepSignOut    = "signout"
)

// The messages of the account page.
const (
	msgSessionEnded    = "Your session has ended. Sign in again."
	msgWrongCurrent    = "The current password is not right."
	msgPasswordsNeeded = "Enter your current password and the new one twice."
	msgPasswordTooLong = "The password is too long."
	msgNoMatch         = "The new passwords do not match."
	msgNoSession       = "That session was not found."
	msgFactorOn        = "Two-step verification is on already."
	msgFactorOff       = "Two-step verification is not on."
	msgEnrollOver      = "The set-up of two-step verification is no longer in progress: start it again."
)

// notices are what the account page says after a redirect, by the key in
// its ?done= parameter: fixed texts, so that no link can make the page
// say anything else.
var notices = map[string]string{
	"password":   "Your password was changed.",
	"mfa-off":    "Two-step verification is off: the authenticator app and the recovery codes no longer work.",
	"revoked":    "The session was signed out.",
	"signed-out": "You are signed out.",
}

// account is the signed-in user of an account page request.
type account struct {
	session identity.Session
	user    identity.User
	csrf    string
}

// accountActions are the account page's forms for a signed-in user, by
// step.
var accountActions = map[string]func(h *Handler, w http.ResponseWriter, r *http.Request, rq *request, a account){
	stepEnroll:     (*Handler).accountEnroll,
	stepConfirm:    (*Handler).accountConfirm,
	stepRemove:     (*Handler).accountRemove,
	stepRegenerate: (*Handler).accountRegenerate,
	stepPassword:   (*Handler).accountPassword,
	stepRevoke:     (*Handler).accountRevoke,
	stepSignOut:    (*Handler).accountSignOut,
}

// accountView is what the account page shows of the user.
type accountView struct {
	Username, Email string
	MFA             identity.MFAStatus
	EnrolledAt      string
	// Sessions are the user's active sessions, newest first, at most
	// maxSessionsShown; MoreSessions counts the older ones not shown.
	Sessions     []sessionView
	MoreSessions int
}

// maxSessionsShown bounds the account page's list of sessions (every
// sign-in starts one), so that the page stays small.
const maxSessionsShown = 50

// sessionView is a session as the account page lists it.
type sessionView struct {
	ID                         string
	Created, LastSeen, Expires string
	// Current is the session of this browser.
	Current bool
}

// serveAccount is the self-service account page: GET shows the signed-in
// user's account (or, without a valid session cookie, a sign-in form for
// the page itself); POST takes one of its forms.
func (h *Handler) serveAccount(w http.ResponseWriter, r *http.Request, rq *request) {
	if !h.parseForm(w, r, rq) {
		return
	}
	f := accountSteps(rq)
	if r.Method != http.MethodPost {
		f.csrf = csrfToken(w, r, rq)
		a, ok, err := h.signedIn(r, rq, f.csrf)
		switch {
		case err != nil:
			h.internalError(w, r, rq.ws.Slug(), err)
		case ok:
			h.accountPage(w, r, rq, a, http.StatusOK, pageData{Notice: notices[r.Form.Get("done")]})
		default:
			h.accountSignIn(w, r, rq, f, http.StatusOK, "", "", notices[r.Form.Get("done")])
		}
		return
	}
	if !h.csrfChecked(w, r, rq, "Form not accepted",
		"This form did not come from this site, or it has expired, so nothing was changed.",
		"Open your account page again and retry.") {
		return
	}
	f.csrf = r.PostForm.Get("csrf")
	step := r.PostForm.Get("step")
	switch step {
	case stepSignIn:
		h.accountLogin(w, r, rq, f)
		return
	case stepCode:
		h.accountCode(w, r, rq, f)
		return
	}
	act, known := accountActions[step]
	if !known {
		h.badRequest(w, r, rq, "Invalid request", "The account form sent a step this page does not have.")
		return
	}
	a, ok, err := h.signedIn(r, rq, f.csrf)
	switch {
	case err != nil:
		h.internalError(w, r, rq.ws.Slug(), err)
	case ok:
		act(h, w, r, rq, a)
	default:
		h.accountSignIn(w, r, rq, f, http.StatusForbidden, "", msgSessionEnded, "")
	}
}

// steps are the account page's sign-in forms, with a's CSRF token.
func (a account) steps(rq *request) steps {
	f := accountSteps(rq)
	f.csrf = a.csrf
	return f
}

// accountSteps are the account page's sign-in forms.
func accountSteps(rq *request) steps {
	u := rq.issuer + "/" + pathAccount
	return steps{action: u, formAction: "'self'", over: "This sign-in has expired", restart: u, next: u}
}

// signedIn returns the user of the request's session cookie, with the
// form's CSRF token; false without a valid session, an error when the
// store cannot tell.
func (h *Handler) signedIn(r *http.Request, rq *request, csrf string) (account, bool, error) {
	token := sessionToken(r)
	if token == "" || len(token) > maxTokenBytes {
		return account{}, false, nil
	}
	verified, err := rq.ws.VerifySession(r.Context(), token)
	switch classify(err) {
	case formOK:
		return account{session: verified.Session, user: verified.User, csrf: csrf}, true, nil
	case formFailed:
		return account{}, false, err
	}
	return account{}, false, nil
}

// accountURL is the account page, with a notice's key.
func accountURL(rq *request, done string) string {
	u := rq.issuer + "/" + pathAccount
	if done != "" {
		u += "?done=" + done
	}
	return u
}

// accountSignIn shows the account page's sign-in form, filled in with
// login, with an error message or a notice.
func (h *Handler) accountSignIn(w http.ResponseWriter, r *http.Request, rq *request, f steps, status int, login, message, notice string) {
	d := f.data(rq, "Sign in", message)
	d.Notice, d.Step, d.Login = notice, stepSignIn, login
	d.MaxLogin, d.MaxPassword = maxLoginChars, identity.MaxPasswordPolicyLength
	d.ForgotURL = h.forgotURL(r, rq)
	h.render(w, r, status, "login", d, f.formAction)
}

// accountLogin is the account page's sign-in: the password, then the
// second factor for a user who needs one (accountCode).
func (h *Handler) accountLogin(w http.ResponseWriter, r *http.Request, rq *request, f steps) {
	login, password := r.PostForm.Get("login"), r.PostForm.Get("password")
	switch {
	case len(login) > maxLoginBytes || len(password) > maxPasswordBytes:
		h.accountSignIn(w, r, rq, f, http.StatusBadRequest, "", msgTooLong, "")
		return
	case login == "" || password == "":
		h.accountSignIn(w, r, rq, f, http.StatusBadRequest, login, msgMissing, "")
		return
	}
	created, err := rq.ws.Login(r.Context(), login, password)
	if h.askSecondFactor(w, r, rq, f, err) {
		return
	}
	switch classify(err) {
	case formOK:
		h.setSession(w, rq, created)
		redirect(w, r, accountURL(rq, ""))
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
	default:
		// One message for every refusal, as on the sign-in page.
		h.accountSignIn(w, r, rq, f, http.StatusBadRequest, login, msgWrongCredentials, "")
	}
}

// accountCode is the account page's second factor: a right code starts
// the session; the first code of an enrolment shows the recovery codes
// first.
func (h *Handler) accountCode(w http.ResponseWriter, r *http.Request, rq *request, f steps) {
	verified, ok := h.checkFactor(w, r, rq, f)
	if !ok {
		return
	}
	created, err := rq.ws.CreateSession(r.Context(), verified.User.ID)
	if !h.stepDone(w, r, rq, f, err) {
		return
	}
	h.setSession(w, rq, created)
	if verified.RecoveryCodes != nil {
		h.recoveryCodes(w, r, rq, f, verified.RecoveryCodes)
		return
	}
	redirect(w, r, accountURL(rq, ""))
}

// accountPage shows the account of a, with d's message, problems or
// notice.
func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request, rq *request, a account, status int, d pageData) {
	ctx := r.Context()
	st, err := rq.ws.GetMFAStatus(ctx, a.user.ID)
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	sessions, err := userSessions(ctx, rq.ws, a.user.ID)
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	v := &accountView{Username: a.user.Username, Email: a.user.Email, MFA: st}
	if st.Enabled {
		v.EnrolledAt = showTime(st.EnrolledAt)
	}
	now := h.svc.Now()
	for _, s := range slices.Backward(sessions) {
		switch {
		case !s.Active(now):
		case len(v.Sessions) == maxSessionsShown:
			v.MoreSessions++
		default:
			v.Sessions = append(v.Sessions, sessionView{ID: s.ID, Created: showTime(s.CreatedAt), LastSeen: showTime(s.LastSeenAt),
				Expires: showTime(s.ExpiresAt), Current: s.ID == a.session.ID})
		}
	}
	d.Slug, d.Title, d.Action, d.CSRF, d.Account = rq.ws.Slug(), "Your account", accountURL(rq, ""), a.csrf, v
	d.MaxCode, d.MaxPassword = maxCodeBytes, identity.MaxPasswordPolicyLength
	h.render(w, r, status, "account", d, "'self'")
}

// userSessions reads every session of the user, page by page (the ended
// ones are only those Retention keeps), oldest first.
func userSessions(ctx context.Context, ws *identity.Workspace, userID int64) ([]identity.Session, error) {
	var all []identity.Session
	for {
		page, err := ws.ListSessions(ctx, userID, &identity.Page{Offset: len(all), Limit: identity.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if len(page.Items) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}

// showTime is how the account page shows a time: to the minute, in UTC.
func showTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// accountEnroll begins (or resumes) a TOTP enrolment: its QR code and
// key, and the form of its first code.
func (h *Handler) accountEnroll(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	h.enrollForm(w, r, rq, a, http.StatusOK, "")
}

// enrollForm shows the account page's enrolment, with a message after a
// wrong code.
func (h *Handler) enrollForm(w http.ResponseWriter, r *http.Request, rq *request, a account, status int, message string) {
	e, err := rq.ws.BeginTOTPEnrollment(r.Context(), a.user.ID)
	switch classify(err) {
	case formOK:
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	default: // a factor enrolled meanwhile
		h.accountPage(w, r, rq, a, http.StatusConflict, pageData{Message: msgFactorOn})
		return
	}
	view, err := newEnrollView(e)
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	d := pageData{Slug: rq.ws.Slug(), Title: "Set up two-step verification", Message: message, Action: accountURL(rq, ""),
		CSRF: a.csrf, Step: stepConfirm, Enroll: view, MaxCode: maxCodeBytes}
	h.render(w, r, status, "factor", d, "'self'")
}

// accountConfirm confirms the enrolment with its first code and shows the
// recovery codes, once.
func (h *Handler) accountConfirm(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	code := normalizeCode(r.PostForm.Get("code"))
	switch {
	case code == "":
		h.enrollForm(w, r, rq, a, http.StatusBadRequest, msgNoCode)
		return
	case len(code) > maxCodeBytes:
		h.enrollForm(w, r, rq, a, http.StatusBadRequest, msgWrongCode)
		return
	}
	codes, err := rq.ws.ConfirmTOTPEnrollment(r.Context(), a.user.ID, code)
	switch classify(err) {
	case formOK:
		h.recoveryCodes(w, r, rq, a.steps(rq), codes)
	case formRefused, formInvalid:
		h.enrollForm(w, r, rq, a, http.StatusBadRequest, msgWrongCode)
	case formStale:
		h.accountPage(w, r, rq, a, http.StatusConflict, pageData{Message: msgEnrollOver})
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// accountRemove removes the second factor, given one of its codes.
func (h *Handler) accountRemove(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	h.withFactorCode(w, r, rq, a, func(code string) error {
		err := rq.ws.RemoveSecondFactor(r.Context(), a.user.ID, code)
		if err == nil {
			redirect(w, r, accountURL(rq, "mfa-off"))
		}
		return err
	})
}

// accountRegenerate replaces the recovery codes, given a code of the
// factor (a stolen session alone cannot mint codes that pass it), and
// shows the new ones, once.
func (h *Handler) accountRegenerate(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	h.withFactorCode(w, r, rq, a, func(code string) error {
		codes, err := rq.ws.RegenerateRecoveryCodes(r.Context(), a.user.ID, code)
		if err == nil {
			h.recoveryCodes(w, r, rq, a.steps(rq), codes)
		}
		return err
	})
}

// withFactorCode runs do with the form's code of the user's factor, which
// answers the request on success; a missing or refused code, or a factor
// gone meanwhile, is answered on the account page.
func (h *Handler) withFactorCode(w http.ResponseWriter, r *http.Request, rq *request, a account, do func(code string) error) {
	code := normalizeCode(r.PostForm.Get("code"))
	switch {
	case code == "":
		h.accountPage(w, r, rq, a, http.StatusBadRequest, pageData{Message: msgNoCode})
		return
	case len(code) > maxCodeBytes:
		h.accountPage(w, r, rq, a, http.StatusBadRequest, pageData{Message: msgWrongCode})
		return
	}
	switch err := do(code); classify(err) {
	case formOK:
	case formRefused, formInvalid:
		h.accountPage(w, r, rq, a, http.StatusBadRequest, pageData{Message: msgWrongCode})
	case formStale:
		h.accountPage(w, r, rq, a, http.StatusConflict, pageData{Message: msgFactorOff})
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// accountPassword changes the password, given the current one.
func (h *Handler) accountPassword(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	current, password, repeat := r.PostForm.Get("current"), r.PostForm.Get("password"), r.PostForm.Get("repeat")
	refuse := func(d pageData) { h.accountPage(w, r, rq, a, http.StatusBadRequest, d) }
	switch {
	case len(current) > maxPasswordBytes || len(password) > maxPasswordBytes || len(repeat) > maxPasswordBytes:
		refuse(pageData{Message: msgPasswordTooLong})
		return
	case current == "" || password == "" || repeat == "":
		refuse(pageData{Message: msgPasswordsNeeded})
		return
	case password != repeat:
		refuse(pageData{Message: msgNoMatch})
		return
	}
	err := rq.ws.ChangePassword(r.Context(), a.user.ID, current, password)
	switch classify(err) {
	case formOK:
		redirect(w, r, accountURL(rq, "password"))
	case formRefused:
		refuse(pageData{Message: msgWrongCurrent})
	case formInvalid:
		refuse(pageData{Problems: fieldMessages(err, "The new password")})
	case formStale: // the user is gone
		h.accountSignIn(w, r, rq, a.steps(rq), http.StatusForbidden, "", msgSessionEnded, "")
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// accountRevoke signs out one of the user's sessions; the current one
// signs this browser out.
func (h *Handler) accountRevoke(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	id := r.PostForm.Get("session")
	if id == a.session.ID {
		h.accountSignOut(w, r, rq, a)
		return
	}
	notFound := func() { h.accountPage(w, r, rq, a, http.StatusBadRequest, pageData{Message: msgNoSession}) }
	if id == "" || len(id) > maxTokenBytes {
		notFound()
		return
	}
	// Another user's session reads like an unknown one.
	switch err := rq.ws.RevokeUserSession(r.Context(), a.user.ID, id); classify(err) {
	case formOK:
		redirect(w, r, accountURL(rq, "revoked"))
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
	default:
		notFound()
	}
}

// accountSignOut revokes this browser's session and clears its cookie.
func (h *Handler) accountSignOut(w http.ResponseWriter, r *http.Request, rq *request, a account) {
	if err := rq.ws.RevokeSession(r.Context(), a.session.ID); classify(err) == formFailed {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	http.SetCookie(w, rq.cookie(sessionCookie, "", -1))
	redirect(w, r, accountURL(rq, "signed-out"))
}
