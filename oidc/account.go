package oidc

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// The account page's steps: the hidden step of its forms (pages.html
// spells them too). stepSignIn and stepCode sign in; the others need the
// session cookie.
const (
	stepSignIn      = "signin"
	stepEnroll      = "enroll"
	stepConfirm     = "confirm"
	stepRemove      = "remove"
	stepRegenerate  = "recovery"
	stepSaved       = "saved"
	stepPassword    = "password"
	stepRevoke      = "revoke"
	stepSignOut     = "signout"
	stepVerifyEmail = "verify-email"
)

// confirmRemove is the account page's ?confirm= that asks whether to
// turn two-step verification off.
const confirmRemove = "remove"

// notices are what the account page says after a redirect, by the key in
// its ?done= parameter: fixed texts, so that no link can make the page
// say anything else.
var notices = map[string]string{
	"password":    "page.notice.password",
	"mfa-off":     "page.notice.mfa_off",
	"revoked":     "page.notice.revoked",
	"signed-out":  "page.notice.signed_out",
	"codes-saved": "page.notice.codes_saved",
	"verify-sent": "page.notice.verify_sent",
}

// notice returns the notice of a ?done= key, "" for any other.
func notice(rq *pageRequest, done string) string {
	key, ok := notices[done]
	if !ok {
		return ""
	}
	return rq.t(key)
}

// account is the signed-in user of an account page request.
type account struct {
	session identity.Session
	user    identity.User
	csrf    string
}

// accountActions are the account page's forms for a signed-in user, by
// step.
var accountActions = map[string]func(h *Handler, w http.ResponseWriter, r *http.Request, rq *pageRequest, a account){
	stepEnroll:      (*Handler).accountEnroll,
	stepConfirm:     (*Handler).accountConfirm,
	stepRemove:      (*Handler).accountRemove,
	stepRegenerate:  (*Handler).accountRegenerate,
	stepSaved:       (*Handler).accountSaved,
	stepPassword:    (*Handler).accountPassword,
	stepRevoke:      (*Handler).accountRevoke,
	stepSignOut:     (*Handler).accountSignOut,
	stepVerifyEmail: (*Handler).accountVerifyEmail,
}

// accountView is what the account page shows of the user.
type accountView struct {
	Username, Email string
	// Unverified is an email address not verified yet;
	// CanSendVerification whether the workspace sends email.
	Unverified, CanSendVerification bool
	MFA                             identity.MFAStatus
	EnrolledAt                      string
	// CanRemove is false when the workspace requires a second factor;
	// RemoveURL asks to confirm the removal.
	CanRemove bool
	RemoveURL string
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
	ID string
	// Device is the browser and system of the session's User-Agent;
	// Address the client address it started from.
	Device, Address string
	// Times in UTC, in ISO 8601 for <time>, and how long ago.
	Created, CreatedISO, CreatedAgo    string
	LastSeen, LastSeenISO, LastSeenAgo string
	// Current is the session of this browser.
	Current bool
	// RevokeLabel names the row's button for a screen reader.
	RevokeLabel string
}

// serveAccount is the self-service account page: GET shows the signed-in
// user's account (or, without a valid session cookie, a sign-in form for
// the page itself); POST takes one of its forms.
func (h *Handler) serveAccount(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	f := accountSteps(rq)
	if r.Method != http.MethodPost {
		f.csrf = csrfToken(w, r, rq)
		a, ok, err := h.signedIn(r, rq, f.csrf)
		if ok {
			r = asUser(r, a.user)
		}
		switch {
		case err != nil:
			h.internalError(w, r, rq.ws.Slug(), err)
		case ok && r.Form.Get("confirm") == confirmRemove:
			h.removeConfirmation(w, r, rq, a, http.StatusOK, pageData{Focus: "code"})
		case ok:
			h.accountPage(w, r, rq, a, http.StatusOK, pageData{Notice: notice(rq, r.Form.Get("done"))})
		default:
			h.accountSignIn(w, r, rq, f, http.StatusOK, pageData{Notice: notice(rq, r.Form.Get("done")), Focus: "login"})
		}
		return
	}
	if !h.csrfChecked(w, r, rq, rq.t("page.csrf.form"), rq.t("page.csrf.account_hint")) {
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
		h.badRequest(w, r, rq, rq.t("page.error.invalid.title"), rq.t("page.error.step"))
		return
	}
	a, ok, err := h.signedIn(r, rq, f.csrf)
	switch {
	case err != nil:
		h.internalError(w, r, rq.ws.Slug(), err)
	case ok:
		act(h, w, asUser(r, a.user), rq, a)
	default:
		h.accountSignIn(w, r, rq, f, http.StatusForbidden, pageData{Message: rq.t("page.account.session_ended"), Focus: "login"})
	}
}

// steps are the account page's sign-in forms, with a's CSRF token.
func (a account) steps(rq *pageRequest) steps {
	f := accountSteps(rq)
	f.csrf = a.csrf
	return f
}

// accountSteps are the account page's sign-in forms.
func accountSteps(rq *pageRequest) steps {
	u := accountURL(rq, "")
	return steps{action: rq.issuer + "/" + pathAccount, formAction: "'self'", over: rq.t("page.signin.expired.title"), restart: u, back: u}
}

// signedIn returns the user of the request's session cookie, with the
// form's CSRF token; false without a valid session, an error when the
// store cannot tell.
func (h *Handler) signedIn(r *http.Request, rq *pageRequest, csrf string) (account, bool, error) {
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

// accountURL is the account page, with a notice's key, in the page's
// language.
func accountURL(rq *pageRequest, done string) string {
	u := rq.issuer + "/" + pathAccount
	if done != "" {
		u += "?done=" + done
	}
	return withLocale(rq, u)
}

// accountSignIn shows the account page's sign-in form, with d's login,
// errors or notice.
func (h *Handler) accountSignIn(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps, status int, d pageData) {
	f.fill(&d, rq.t("page.signin.title"))
	d.Step = stepSignIn
	d.MaxLogin, d.MaxPassword = maxLoginChars, identity.MaxPasswordPolicyLength
	d.ForgotURL = h.forgotURL(r, rq, "")
	h.render(w, r, status, "login", d, f.formAction)
}

// accountLogin is the account page's sign-in: the password, then the
// second factor for a user who needs one (accountCode).
func (h *Handler) accountLogin(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps) {
	var d pageData
	login, password, ok := passwordForm(rq, r, &d)
	if !ok {
		h.accountSignIn(w, r, rq, f, http.StatusBadRequest, d)
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
		return
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	status, shown := refusedSignIn(w, r, rq, &d, err)
	if !shown {
		// One message for every refusal, as on the sign-in page.
		status = http.StatusBadRequest
		d.fieldError(rq.t("page.signin.wrong"), "password", "login")
	}
	h.accountSignIn(w, r, rq, f, status, d)
}

// accountCode is the account page's second factor: a right code starts
// the session; the first code of an enrolment shows the recovery codes
// first.
func (h *Handler) accountCode(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps) {
	verified, ok := h.checkFactor(w, r, rq, f)
	if !ok {
		return
	}
	r = asUser(r, verified.User)
	created, err := rq.ws.CreateSession(r.Context(), verified.User.ID, verified.SessionOptions())
	if !h.stepDone(w, r, rq, f, err) {
		return
	}
	h.setSession(w, rq, created)
	if verified.RecoveryCodes != nil {
		h.recoveryCodes(w, r, rq, f, http.StatusOK, verified.RecoveryCodes, pageData{Focus: "saved"})
		return
	}
	redirect(w, r, accountURL(rq, ""))
}

// accountPage shows the account of a, with d's message, errors or
// notice.
func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account, status int, d pageData) {
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
	s, err := rq.getSettings(ctx)
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	v := &accountView{Username: a.user.Username, Email: a.user.Email, MFA: st,
		Unverified: a.user.Email != "" && !a.user.EmailVerified, CanSendVerification: s.SMTP != nil,
		CanRemove: s.MFA != identity.MFARequired, RemoveURL: withLocale(rq, rq.issuer+"/"+pathAccount+"?confirm="+confirmRemove)}
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
			v.Sessions = append(v.Sessions, newSessionView(rq, s, a.session.ID, now))
		}
	}
	d.Title, d.Action, d.CSRF, d.Account, d.Wide = rq.t("page.account.title"), rq.issuer+"/"+pathAccount, a.csrf, v, true
	d.MaxCode, d.MaxPassword, d.MinPassword = maxCodeBytes, identity.MaxPasswordPolicyLength, s.PasswordPolicy.MinLength
	d.Rules = passwordRules(rq, s.PasswordPolicy)
	h.render(w, r, status, "account", d, "'self'")
}

// newSessionView is how the account page lists the session s; current
// is the id of this browser's.
func newSessionView(rq *pageRequest, s identity.Session, current string, now time.Time) sessionView {
	v := sessionView{ID: s.ID, Device: deviceName(rq, s.UserAgent), Address: s.Address,
		Created: showTime(s.CreatedAt), CreatedISO: s.CreatedAt.UTC().Format(time.RFC3339), CreatedAgo: ago(rq, now, s.CreatedAt),
		LastSeen: showTime(s.LastSeenAt), LastSeenISO: s.LastSeenAt.UTC().Format(time.RFC3339), LastSeenAgo: ago(rq, now, s.LastSeenAt),
		Current: s.ID == current}
	if v.Address == "" {
		v.Address = rq.t("page.account.unknown_address")
	}
	button := rq.t("page.account.revoke")
	if v.Current {
		button = rq.t("page.account.sign_out")
	}
	v.RevokeLabel = rq.t("page.account.row_label", button, v.Device, v.Created)
	return v
}

// deviceName names the browser and system of a User-Agent.
func deviceName(rq *pageRequest, ua string) string {
	d := parseUserAgent(ua)
	browser := d.Browser
	if browser == "" {
		browser = rq.t("page.account.unknown_browser")
	}
	if d.OS == "" {
		return browser
	}
	return rq.t("page.account.browser_on", browser, d.OS)
}

// passwordRules are the policy's rules as a new password's form shows
// them, before anything is typed.
func passwordRules(rq *pageRequest, p identity.PasswordPolicy) []string {
	rules := []string{rq.t("page.rule.min_length", p.MinLength)}
	if p.MaxLength > 0 && p.MaxLength < identity.DefaultPasswordPolicy().MaxLength {
		rules = append(rules, rq.t("page.rule.max_length", p.MaxLength))
	}
	for _, c := range []struct {
		on  bool
		key string
	}{
		{p.RequireUpper, "page.rule.upper"}, {p.RequireLower, "page.rule.lower"},
		{p.RequireDigit, "page.rule.digit"}, {p.RequireSymbol, "page.rule.symbol"},
		{!p.AllowUsernameOrEmail, "page.rule.not_identity"},
	} {
		if c.on {
			rules = append(rules, rq.t(c.key))
		}
	}
	return rules
}

// passwordProblems says, in the page's language, why the policy refused
// a new password: one sentence per broken rule.
func passwordProblems(rq *pageRequest, err error, p identity.PasswordPolicy) string {
	keys := map[string]string{
		identity.RulePasswordUpper: "page.problem.upper", identity.RulePasswordLower: "page.problem.lower",
		identity.RulePasswordDigit: "page.problem.digit", identity.RulePasswordSymbol: "page.problem.symbol",
		identity.RulePasswordIdentity: "page.problem.identity",
	}
	var out []string
	e, _ := errors.AsType[*identity.Error](err)
	for _, f := range e.Fields {
		switch f.Rule {
		case identity.RulePasswordMinLength:
			out = append(out, rq.t("page.problem.min_length", p.MinLength))
		case identity.RulePasswordMaxLength:
			out = append(out, rq.t("page.problem.max_length", p.MaxLength))
		default:
			if key, ok := keys[f.Rule]; ok {
				out = append(out, rq.t(key))
			}
		}
	}
	if len(out) == 0 {
		return rq.t("page.problem.other")
	}
	return strings.Join(out, " ")
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

// accountEnroll begins (or resumes) a TOTP enrolment: its QR code and
// key, and the form of its first code.
func (h *Handler) accountEnroll(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	h.enrollForm(w, r, rq, a, http.StatusOK, pageData{Focus: "code"})
}

// enrollForm shows the account page's enrolment, with d's errors after a
// wrong code.
func (h *Handler) enrollForm(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account, status int, d pageData) {
	e, err := rq.ws.BeginTOTPEnrollment(r.Context(), a.user.ID)
	switch classify(err) {
	case formOK:
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	default: // a factor enrolled meanwhile
		h.accountPage(w, r, rq, a, http.StatusConflict, pageData{Message: rq.t("page.account.factor_on")})
		return
	}
	view, err := newEnrollView(e)
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	f := a.steps(rq)
	f.fill(&d, rq.t("page.enroll.title"))
	d.Step, d.Enroll, d.MaxCode = stepConfirm, view, maxCodeBytes
	d.Link, d.LinkText = f.back, rq.t("page.enroll.cancel")
	h.render(w, r, status, "factor", d, "'self'")
}

// accountConfirm confirms the enrolment with its first code and shows the
// recovery codes, once.
func (h *Handler) accountConfirm(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	code := normalizeCode(r.PostForm.Get("code"))
	var d pageData
	switch {
	case code == "":
		d.fieldError(rq.t("page.factor.missing"), "code")
		h.enrollForm(w, r, rq, a, http.StatusBadRequest, d)
		return
	case len(code) > maxCodeBytes:
		h.enrollForm(w, r, rq, a, codeRefused(w, rq, &d, "code", nil), d)
		return
	}
	codes, err := rq.ws.ConfirmTOTPEnrollment(r.Context(), a.user.ID, code)
	switch classify(err) {
	case formOK:
		h.recoveryCodes(w, r, rq, a.steps(rq), http.StatusOK, codes, pageData{Focus: "saved"})
	case formRefused, formInvalid, formThrottled:
		h.enrollForm(w, r, rq, a, codeRefused(w, rq, &d, "code", err), d)
	case formStale:
		h.accountPage(w, r, rq, a, http.StatusConflict, pageData{Message: rq.t("page.account.enroll_over")})
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// accountSaved leaves the recovery codes for the account page once the
// user says they are saved.
func (h *Handler) accountSaved(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	if h.codesSaved(w, r, rq, a.steps(rq)) {
		redirect(w, r, accountURL(rq, "codes-saved"))
	}
}

// removeConfirmation asks to confirm turning two-step verification off,
// with a warning and a code of the factor; a workspace that requires a
// second factor refuses it. d holds the form's errors.
func (h *Handler) removeConfirmation(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account, status int, d pageData) {
	if !h.mayRemove(w, r, rq, a) {
		return
	}
	d.Title, d.Action, d.CSRF, d.Step, d.MaxCode = rq.t("page.remove.title"), rq.issuer+"/"+pathAccount, a.csrf, stepRemove, maxCodeBytes
	d.Link, d.LinkText = accountURL(rq, ""), rq.t("page.remove.cancel")
	h.render(w, r, status, "remove-factor", d, "'self'")
}

// mayRemove reports whether the workspace lets users remove their second
// factor; otherwise it shows the account page saying so.
func (h *Handler) mayRemove(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) bool {
	s, err := rq.getSettings(r.Context())
	switch {
	case err != nil:
		h.internalError(w, r, rq.ws.Slug(), err)
		return false
	case s.MFA == identity.MFARequired:
		h.accountPage(w, r, rq, a, http.StatusForbidden, pageData{Message: rq.t("page.account.mfa_required")})
		return false
	}
	return true
}

// accountRemove removes the second factor, given one of its codes, from
// the confirmation.
func (h *Handler) accountRemove(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	if !h.mayRemove(w, r, rq, a) {
		return
	}
	again := func(status int, d pageData) { h.removeConfirmation(w, r, rq, a, status, d) }
	h.withFactorCode(w, r, rq, a, again, func(code string) error {
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
func (h *Handler) accountRegenerate(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	again := func(status int, d pageData) { h.accountPage(w, r, rq, a, status, d) }
	h.withFactorCode(w, r, rq, a, again, func(code string) error {
		codes, err := rq.ws.RegenerateRecoveryCodes(r.Context(), a.user.ID, code)
		if err == nil {
			h.recoveryCodes(w, r, rq, a.steps(rq), http.StatusOK, codes, pageData{Focus: "saved"})
		}
		return err
	})
}

// withFactorCode runs do with the form's code of the user's factor, which
// answers the request on success; a missing or refused code is answered
// by again (the form once more), a factor gone meanwhile on the account
// page.
func (h *Handler) withFactorCode(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account, again func(int, pageData), do func(code string) error) {
	code, input := factorCode(r)
	var d pageData
	switch {
	case code == "":
		d.fieldError(rq.t("page.factor.missing"), input)
		again(http.StatusBadRequest, d)
		return
	case len(code) > maxCodeBytes:
		again(codeRefused(w, rq, &d, input, nil), d)
		return
	}
	switch err := do(code); classify(err) {
	case formOK:
	case formRefused, formInvalid, formThrottled:
		again(codeRefused(w, rq, &d, input, err), d)
	case formStale:
		h.accountPage(w, r, rq, a, http.StatusConflict, pageData{Message: rq.t("page.account.factor_off")})
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// accountPassword changes the password, given the current one.
func (h *Handler) accountPassword(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	current, password, repeat := r.PostForm.Get("current"), r.PostForm.Get("password"), r.PostForm.Get("repeat")
	var d pageData
	newPasswordChecks(rq, &d, password, repeat)
	switch {
	case len(current) > maxPasswordBytes:
		d.fieldError(rq.t("page.password.too_long"), "current")
	case current == "":
		d.fieldError(rq.t("page.password.current_missing"), "current")
	}
	if len(d.errs) > 0 {
		// In the order of the inputs: the current password first.
		slices.SortStableFunc(d.errs, func(x, y fieldError) int { return inputOrder(x) - inputOrder(y) })
		h.accountPage(w, r, rq, a, http.StatusBadRequest, d)
		return
	}
	err := rq.ws.ChangePassword(r.Context(), a.user.ID, current, password)
	switch classify(err) {
	case formOK:
		redirect(w, r, accountURL(rq, "password"))
		return
	case formRefused:
		d.fieldError(rq.t("page.password.current_wrong"), "current")
		h.accountPage(w, r, rq, a, http.StatusBadRequest, d)
	case formThrottled:
		d.Message, d.Focus = throttled(w, rq, err), "current"
		h.accountPage(w, r, rq, a, http.StatusTooManyRequests, d)
	case formInvalid:
		s, serr := rq.getSettings(r.Context())
		if serr != nil {
			h.internalError(w, r, rq.ws.Slug(), serr)
			return
		}
		d.fieldError(passwordProblems(rq, err, s.PasswordPolicy), "password")
		h.accountPage(w, r, rq, a, http.StatusBadRequest, d)
	case formStale: // the user is gone
		h.accountSignIn(w, r, rq, a.steps(rq), http.StatusForbidden, pageData{Message: rq.t("page.account.session_ended"), Focus: "login"})
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// inputOrder is where a password form's input comes on the page.
func inputOrder(e fieldError) int {
	return slices.Index([]string{"current", "password", "repeat"}, e.inputs[0])
}

// newPasswordChecks adds to d what is wrong with a new password and its
// repetition before they go to the library.
func newPasswordChecks(rq *pageRequest, d *pageData, password, repeat string) {
	switch {
	case len(password) > maxPasswordBytes:
		d.fieldError(rq.t("page.password.too_long"), "password")
	case password == "":
		d.fieldError(rq.t("page.password.new_missing"), "password")
	}
	switch {
	case len(repeat) > maxPasswordBytes:
		d.fieldError(rq.t("page.password.too_long"), "repeat")
	case repeat == "":
		d.fieldError(rq.t("page.password.repeat_missing"), "repeat")
	case password != "" && password != repeat:
		d.fieldError(rq.t("page.password.no_match"), "repeat")
	}
}

// accountRevoke signs out one of the user's sessions, with the tokens
// issued in it; the current one signs this browser out.
func (h *Handler) accountRevoke(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	id := r.PostForm.Get("session")
	if id == a.session.ID {
		h.accountSignOut(w, r, rq, a)
		return
	}
	notFound := func() {
		h.accountPage(w, r, rq, a, http.StatusBadRequest, pageData{Message: rq.t("page.account.no_session")})
	}
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

// accountSignOut revokes this browser's session, with the tokens issued
// in it, and clears its cookie.
func (h *Handler) accountSignOut(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	if err := rq.ws.RevokeUserSession(r.Context(), a.user.ID, a.session.ID); classify(err) == formFailed {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	http.SetCookie(w, rq.cookie(sessionCookie, "", -1))
	redirect(w, r, accountURL(rq, "signed-out"))
}

// accountVerifyEmail sends a new verification email to the user's
// address.
func (h *Handler) accountVerifyEmail(w http.ResponseWriter, r *http.Request, rq *pageRequest, a account) {
	err := rq.ws.SendVerificationEmail(r.Context(), a.user.ID)
	switch classify(err) {
	case formOK:
		redirect(w, r, accountURL(rq, "verify-sent"))
	case formThrottled:
		minutes := retryAfter(w, err)
		h.accountPage(w, r, rq, a, http.StatusTooManyRequests, pageData{Message: rq.plural("page.account.verify_throttled", minutes)})
	case formStale: // verified meanwhile, or the workspace stopped sending email
		redirect(w, r, accountURL(rq, ""))
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}
