package oidc

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/identitylib/identity"
)

// maxEmailBytes bounds the reset form's address: four per character of
// the library's limit.
const maxEmailBytes = 4 * identity.MaxEmailLength

// The messages of the password reset pages.
const (
	msgNoEmail       = "Enter your email address."
	msgBadEmail      = "Enter a valid email address, such as name@example.com."
	msgPasswordTwice = "Enter the new password twice."
	msgRepeatNoMatch = "The passwords do not match."
)

// resetSent is what the reset form answers whenever the address is well
// formed: the same page whether an account has it or not.
var resetSent = pageData{Title: "Check your email",
	Message: "If an account has this address, we sent an email to it with a link to choose a new password.",
	Hint: fmt.Sprintf("The link works for %d minutes. No email? Check your spam folder, or ask again.",
		int(identity.PasswordResetTokenLifetime.Minutes()))}

// serveReset is the password reset page, for a workspace that sends
// email. GET shows the form asking for the address, or with ?token= (the
// email's link) the new password's form; POST sends the email, or with a
// token sets the new password. A reset never signs in.
func (h *Handler) serveReset(w http.ResponseWriter, r *http.Request, rq *request) {
	if !h.parseForm(w, r, rq) {
		return
	}
	if r.Method != http.MethodPost {
		csrf := csrfToken(w, r, rq)
		if token, ok := single(r.Form, "token"); r.Form.Has("token") {
			if !ok || token == "" || len(token) > maxTokenBytes {
				h.resetLinkOver(w, r, rq, identity.CodeTokenInvalid)
				return
			}
			// Say a link is over before its user types a new password.
			switch err := rq.ws.CheckPasswordResetToken(r.Context(), token); classify(err) {
			case formOK:
				h.newPasswordForm(w, r, rq, http.StatusOK, csrf, token, pageData{})
			case formFailed:
				h.internalError(w, r, rq.ws.Slug(), err)
			default:
				h.resetLinkOver(w, r, rq, identity.ErrorCode(err))
			}
			return
		}
		h.resetForm(w, r, rq, http.StatusOK, csrf, "", "")
		return
	}
	if !h.csrfChecked(w, r, rq, "Form not accepted",
		"This form did not come from this site, or it has expired, so nothing was changed.",
		"Open the password reset page again and retry.") {
		return
	}
	if r.PostForm.Has("token") {
		h.resetPassword(w, r, rq)
	} else {
		h.requestReset(w, r, rq)
	}
}

// resetURL is the reset page.
func resetURL(rq *request) string { return rq.issuer + "/" + pathReset }

// resetForm shows the form asking for the address, if the workspace sends
// email.
func (h *Handler) resetForm(w http.ResponseWriter, r *http.Request, rq *request, status int, csrf, email, message string) {
	s, err := rq.ws.GetSettings(r.Context())
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	if s.SMTP == nil {
		h.resetUnavailable(w, r, rq)
		return
	}
	d := pageData{Slug: rq.ws.Slug(), Title: "Forgot your password?", Message: message, Action: resetURL(rq), CSRF: csrf,
		Email: email, MaxEmail: identity.MaxEmailLength}
	h.render(w, r, status, "reset", d, "'self'")
}

// resetUnavailable shows that the workspace sends no email.
func (h *Handler) resetUnavailable(w http.ResponseWriter, r *http.Request, rq *request) {
	h.page(w, r, http.StatusNotFound, pageData{Slug: rq.ws.Slug(), Title: "Password reset is not available",
		Message: "This sign-in service does not send email, so it cannot reset a password.",
		Hint:    "Ask the application's administrator to reset it."})
}

// requestReset sends a reset email to the address, if an account has it.
func (h *Handler) requestReset(w http.ResponseWriter, r *http.Request, rq *request) {
	csrf, email := r.PostForm.Get("csrf"), strings.TrimSpace(r.PostForm.Get("email"))
	switch {
	case email == "":
		h.resetForm(w, r, rq, http.StatusBadRequest, csrf, "", msgNoEmail)
		return
	case len(email) > maxEmailBytes:
		h.resetForm(w, r, rq, http.StatusBadRequest, csrf, "", msgBadEmail)
		return
	}
	err := rq.ws.RequestPasswordReset(r.Context(), email, &identity.PasswordResetOptions{Link: resetURL(rq) + "?token={token}"})
	switch classify(err) {
	case formOK:
		d := resetSent
		d.Slug = rq.ws.Slug()
		h.page(w, r, http.StatusOK, d)
	case formInvalid:
		if e, ok := errors.AsType[*identity.Error](err); ok && len(e.Fields) > 0 && e.Fields[0].Field == "email" {
			h.resetForm(w, r, rq, http.StatusBadRequest, csrf, email, msgBadEmail)
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

// newPasswordForm shows the form of the new password for a reset token.
func (h *Handler) newPasswordForm(w http.ResponseWriter, r *http.Request, rq *request, status int, csrf, token string, d pageData) {
	d.Slug, d.Title, d.Action, d.CSRF, d.Token = rq.ws.Slug(), "Choose a new password", resetURL(rq), csrf, token
	d.MaxPassword = identity.MaxPasswordPolicyLength
	h.render(w, r, status, "new-password", d, "'self'")
}

// resetPassword sets the new password of a reset token.
func (h *Handler) resetPassword(w http.ResponseWriter, r *http.Request, rq *request) {
	csrf, token := r.PostForm.Get("csrf"), r.PostForm.Get("token")
	password, repeat := r.PostForm.Get("password"), r.PostForm.Get("repeat")
	refuse := func(d pageData) { h.newPasswordForm(w, r, rq, http.StatusBadRequest, csrf, token, d) }
	switch {
	case token == "" || len(token) > maxTokenBytes:
		h.resetLinkOver(w, r, rq, identity.CodeTokenInvalid)
		return
	case len(password) > maxPasswordBytes || len(repeat) > maxPasswordBytes:
		refuse(pageData{Message: msgPasswordTooLong})
		return
	case password == "" || repeat == "":
		refuse(pageData{Message: msgPasswordTwice})
		return
	case password != repeat:
		refuse(pageData{Message: msgRepeatNoMatch})
		return
	}
	_, err := rq.ws.ResetPassword(r.Context(), token, password)
	switch classify(err) {
	case formOK:
		// Every session of the user was revoked: this browser's too.
		http.SetCookie(w, rq.cookie(sessionCookie, "", -1))
		h.page(w, r, http.StatusOK, pageData{Slug: rq.ws.Slug(), Title: "Password changed",
			Message: "Your new password is set, and every session of your account was signed out.",
			Hint:    "Go back to the application and sign in with the new password.",
			Link:    accountURL(rq, ""), LinkText: "Or sign in to your account"})
	case formInvalid:
		refuse(pageData{Problems: fieldMessages(err, "The new password")})
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
	default:
		h.resetLinkOver(w, r, rq, identity.ErrorCode(err))
	}
}

// resetLinkOver shows that a reset link no longer works, and why.
func (h *Handler) resetLinkOver(w http.ResponseWriter, r *http.Request, rq *request, code identity.Code) {
	message := "This link is not valid. Check that you opened the whole link of the email."
	switch code {
	case identity.CodeTokenExpired:
		message = "This link has expired."
	case identity.CodeTokenUsed:
		message = "This link was used already."
	}
	h.page(w, r, http.StatusBadRequest, pageData{Slug: rq.ws.Slug(), Title: "This link no longer works", Message: message,
		Link: resetURL(rq), LinkText: "Ask for a new link"})
}
