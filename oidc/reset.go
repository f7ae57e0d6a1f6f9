package oidc

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/identitylib/identity"
)

// maxEmailBytes bounds the reset form's address: four per character of
// the library's limit.
const maxEmailBytes = 4 * identity.MaxEmailLength

// serveReset is the password reset page, for a workspace that sends
// email. GET shows the form asking for the address, or with ?token= (the
// email's link) the new password's form; POST sends the email, or with a
// token sets the new password. A reset started from a sign-in page
// carries its authorization request (?request=) through the email, so
// that the page after the reset leads back to it.
func (h *Handler) serveReset(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	requestID, _ := single(r.Form, "request")
	if len(requestID) > maxRequestID {
		requestID = ""
	}
	if r.Method != http.MethodPost {
		csrf := csrfToken(w, r, rq)
		if token, ok := single(r.Form, "token"); r.Form.Has("token") {
			if !ok || token == "" || len(token) > maxTokenBytes {
				h.resetLinkOver(w, r, rq, requestID, identity.CodeTokenInvalid)
				return
			}
			// Say a link is over before its user types a new password.
			switch err := rq.ws.CheckPasswordResetToken(r.Context(), token); classify(err) {
			case formOK:
				h.newPasswordForm(w, r, rq, http.StatusOK, csrf, token, requestID, pageData{Focus: "password"})
			case formFailed:
				h.internalError(w, r, rq.ws.Slug(), err)
			default:
				h.resetLinkOver(w, r, rq, requestID, identity.ErrorCode(err))
			}
			return
		}
		h.resetForm(w, r, rq, http.StatusOK, csrf, requestID, pageData{Focus: "email"})
		return
	}
	if !h.csrfChecked(w, r, rq, rq.t("page.csrf.form"), rq.t("page.csrf.reset_hint")) {
		return
	}
	if r.PostForm.Has("token") {
		h.resetPassword(w, r, rq, requestID)
	} else {
		h.requestReset(w, r, rq, requestID)
	}
}

// resetURL is the reset page, for the authorization request if any.
func resetURL(rq *pageRequest, requestID string) string {
	u := rq.issuer + "/" + pathReset
	if requestID != "" {
		u += "?" + url.Values{"request": {requestID}}.Encode()
	}
	return withLocale(rq, u)
}

// wayBack is the way back from a reset page: to the sign-in page of the
// authorization request, while it waits, else to the account page.
func wayBack(r *http.Request, rq *pageRequest, requestID, signInText string) (link, text string) {
	if _, ok := livePending(r, rq, requestID); ok {
		return loginURL(rq, requestID), signInText
	}
	return accountURL(rq, ""), rq.t("page.way.account_sign_in")
}

// resetForm shows the form asking for the address, if the workspace sends
// email; d holds its errors.
func (h *Handler) resetForm(w http.ResponseWriter, r *http.Request, rq *pageRequest, status int, csrf, requestID string, d pageData) {
	s, err := rq.getSettings(r.Context())
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	if s.SMTP == nil {
		h.resetUnavailable(w, r, rq)
		return
	}
	d.Title, d.Action, d.CSRF, d.RequestID, d.MaxEmail = rq.t("page.reset.title"), rq.issuer+"/"+pathReset, csrf, requestID, identity.MaxEmailLength
	d.Link, d.LinkText = wayBack(r, rq, requestID, rq.t("page.way.back_to_sign_in"))
	h.render(w, r, status, "reset", d, "'self'")
}

// resetUnavailable shows that the workspace sends no email.
func (h *Handler) resetUnavailable(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	h.page(w, r, http.StatusNotFound, pageData{Title: rq.t("page.reset.unavailable.title"),
		Message: rq.t("page.reset.unavailable"), Hint: rq.t("page.reset.unavailable_hint"),
		Link: accountURL(rq, ""), LinkText: rq.t("page.way.account")})
}

// requestReset sends a reset email to the address, if an account has it.
func (h *Handler) requestReset(w http.ResponseWriter, r *http.Request, rq *pageRequest, requestID string) {
	csrf, email := r.PostForm.Get("csrf"), strings.TrimSpace(r.PostForm.Get("email"))
	var d pageData
	switch {
	case email == "":
		d.fieldError(rq.t("page.reset.email_missing"), "email")
		h.resetForm(w, r, rq, http.StatusBadRequest, csrf, requestID, d)
		return
	case len(email) > maxEmailBytes:
		d.fieldError(rq.t("page.reset.email_invalid"), "email")
		h.resetForm(w, r, rq, http.StatusBadRequest, csrf, requestID, d)
		return
	}
	// The email's link opens the page in the language of this one.
	q := url.Values{"ui_locales": {rq.tr.Locale()}}
	if requestID != "" {
		q.Set("request", requestID)
	}
	link := rq.issuer + "/" + pathReset + "?token={token}&" + q.Encode()
	err := rq.ws.RequestPasswordReset(r.Context(), email, &identity.PasswordResetOptions{Link: link})
	switch classify(err) {
	case formOK:
		d := pageData{Title: rq.t("page.reset.sent.title"), Message: rq.t("page.reset.sent"),
			Hint: rq.t("page.reset.sent_hint", int(identity.PasswordResetTokenLifetime.Minutes()))}
		d.Link, d.LinkText = wayBack(r, rq, requestID, rq.t("page.way.back_to_sign_in"))
		h.page(w, r, http.StatusOK, d)
	case formThrottled:
		d.Email, d.Message = email, throttled(w, rq, err)
		h.resetForm(w, r, rq, http.StatusTooManyRequests, csrf, requestID, d)
	case formInvalid:
		if e, ok := errors.AsType[*identity.Error](err); ok && len(e.Fields) > 0 && e.Fields[0].Field == "email" {
			d.Email = email
			d.fieldError(rq.t("page.reset.email_invalid"), "email")
			h.resetForm(w, r, rq, http.StatusBadRequest, csrf, requestID, d)
			return
		}
		// The link is the issuer's: an issuer the library cannot link to
		// is the program's mistake.
		h.internalError(w, r, rq.ws.Slug(), err)
	case formStale: // the SMTP settings were removed meanwhile
		h.resetUnavailable(w, r, rq)
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
}

// newPasswordForm shows the form of the new password for a reset token,
// with the policy's rules; d holds its errors.
func (h *Handler) newPasswordForm(w http.ResponseWriter, r *http.Request, rq *pageRequest, status int, csrf, token, requestID string, d pageData) {
	s, err := rq.getSettings(r.Context())
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	d.Title, d.Action, d.CSRF, d.Token, d.RequestID = rq.t("page.reset.new.title"), rq.issuer+"/"+pathReset, csrf, token, requestID
	d.MaxPassword, d.MinPassword, d.Rules = identity.MaxPasswordPolicyLength, s.PasswordPolicy.MinLength, passwordRules(rq, s.PasswordPolicy)
	h.render(w, r, status, "new-password", d, "'self'")
}

// resetPassword sets the new password of a reset token.
func (h *Handler) resetPassword(w http.ResponseWriter, r *http.Request, rq *pageRequest, requestID string) {
	csrf, token := r.PostForm.Get("csrf"), r.PostForm.Get("token")
	password, repeat := r.PostForm.Get("password"), r.PostForm.Get("repeat")
	if token == "" || len(token) > maxTokenBytes {
		h.resetLinkOver(w, r, rq, requestID, identity.CodeTokenInvalid)
		return
	}
	var d pageData
	if newPasswordChecks(rq, &d, password, repeat); len(d.errs) > 0 {
		h.newPasswordForm(w, r, rq, http.StatusBadRequest, csrf, token, requestID, d)
		return
	}
	_, err := rq.ws.ResetPassword(r.Context(), token, password)
	switch classify(err) {
	case formOK:
		// Every session of the user was revoked: this browser's too. The
		// reset ended a lockout, so the new password works at once.
		http.SetCookie(w, rq.cookie(sessionCookie, "", -1))
		done := pageData{Title: rq.t("page.reset.done.title"), Message: rq.t("page.reset.done"), Hint: rq.t("page.reset.done_hint")}
		done.Link, done.LinkText = wayBack(r, rq, requestID, rq.t("page.way.sign_in"))
		h.page(w, r, http.StatusOK, done)
	case formInvalid:
		s, serr := rq.getSettings(r.Context())
		if serr != nil {
			h.internalError(w, r, rq.ws.Slug(), serr)
			return
		}
		d.fieldError(passwordProblems(rq, err, s.PasswordPolicy), "password")
		h.newPasswordForm(w, r, rq, http.StatusBadRequest, csrf, token, requestID, d)
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
	default:
		h.resetLinkOver(w, r, rq, requestID, identity.ErrorCode(err))
	}
}

// resetLinkOver shows that a reset link no longer works, and why.
func (h *Handler) resetLinkOver(w http.ResponseWriter, r *http.Request, rq *pageRequest, requestID string, code identity.Code) {
	message := rq.t("page.reset.over.invalid")
	switch code {
	case identity.CodeTokenExpired:
		message = rq.t("page.reset.over.expired")
	case identity.CodeTokenUsed:
		message = rq.t("page.reset.over.used")
	}
	h.page(w, r, http.StatusBadRequest, pageData{Title: rq.t("page.reset.over.title"), Message: message,
		Link: resetURL(rq, requestID), LinkText: rq.t("page.reset.over.again")})
}
