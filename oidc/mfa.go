package oidc

import (
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/otpauth"
)

// Bounds of the second factor's form, in bytes.
const (
	// maxCodeBytes bounds a code: a TOTP code is 6 digits and a recovery
	// code 11 characters, so this leaves room for spaces pasted with one.
	maxCodeBytes = 64
	// maxTokenBytes bounds a challenge, a reset token, a session token
	// or id: the library's are under a hundred characters.
	maxTokenBytes = 512
)

// The messages of the second factor's form.
const (
	// msgWrongCode answers a wrong, replayed or used code and a locked
	// account alike, as the sign-in form answers a wrong password.
	msgWrongCode = "The code is not valid."
	msgNoCode    = "Enter the code from your authenticator app."
)

// steps are the forms of a sign-in after its password, where they post
// and what their pages show beside them: the sign-in page's, for a
// pending authorization request, or the account page's.
type steps struct {
	// action is the URL the forms post to.
	action string
	// requestID is the pending authorization request, "" on the account
	// page; clientName names its client.
	requestID, clientName string
	csrf                  string
	// formAction is the pages' CSP form-action.
	formAction string
	// over is the title of the page that says a step is over (expired,
	// completed), and restart where that page sends the user.
	over, restart string
	// next is where the recovery codes' page sends the user when there
	// is no request to complete.
	next string
}

// data returns a page of the forms with a title and an error message.
func (f steps) data(rq *request, title, message string) pageData {
	return pageData{Slug: rq.ws.Slug(), Title: title, Message: message, ClientName: f.clientName,
		Action: f.action, RequestID: f.requestID, CSRF: f.csrf}
}

// enrollView is what an authenticator app needs to add a TOTP factor.
type enrollView struct {
	// QR is the QR code as a data: URI, which the page's CSP allows.
	QR template.URL
	// Secret is the key to type, in groups of four characters.
	Secret string
	// URI is the otpauth: URI the QR code holds.
	URI string
}

func newEnrollView(e identity.TOTPEnrollment) (*enrollView, error) {
	png, err := otpauth.QRCode(e.URI)
	if err != nil {
		return nil, err
	}
	// The PNG is drawn here and the URL's scheme fixed: safe to mark as a
	// URL the template keeps as it is.
	qr := template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
	return &enrollView{QR: qr, Secret: groups(e.Secret, 4), URI: e.URI}, nil
}

// groups splits s into groups of n characters separated by spaces, as
// authenticator apps show keys (they ignore the spaces).
func groups(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+n, len(s))])
	}
	return b.String()
}

// askSecondFactor shows the second factor's form if err asks for it (a
// right password of a user who needs a second factor), and reports
// whether it did.
func (h *Handler) askSecondFactor(w http.ResponseWriter, r *http.Request, rq *request, f steps, err error) bool {
	e, ok := errors.AsType[*identity.Error](err)
	if !ok || e.Code != identity.CodeMFARequired && e.Code != identity.CodeMFAEnrollmentRequired {
		return false
	}
	h.factorForm(w, r, rq, f, http.StatusOK, e.Challenge, e.Code == identity.CodeMFAEnrollmentRequired, "")
	return true
}

// factorForm shows the second factor's form for the challenge: a code,
// or for a user who must enrol first, the enrolment (its QR code and key)
// with the form of its first code.
func (h *Handler) factorForm(w http.ResponseWriter, r *http.Request, rq *request, f steps, status int, challenge string, enrolling bool, message string) {
	d := f.data(rq, "Two-step verification", message)
	d.Step, d.Challenge, d.Enrolling, d.MaxCode = stepCode, challenge, enrolling, maxCodeBytes
	if enrolling {
		// The same secret again within the enrolment's lifetime: the
		// page can be shown again after a wrong code.
		e, err := rq.ws.BeginChallengeEnrollment(r.Context(), challenge)
		switch classify(err) {
		case formOK:
		case formFailed:
			h.internalError(w, r, rq.ws.Slug(), err)
			return
		default:
			h.stepOver(w, r, rq, f)
			return
		}
		if d.Enroll, err = newEnrollView(e); err != nil {
			h.internalError(w, r, rq.ws.Slug(), err)
			return
		}
		d.Title = "Set up two-step verification"
	}
	h.render(w, r, status, "factor", d, f.formAction)
}

// checkFactor takes the second factor's form: the code for the
// challenge. It returns the user and, after an enrolment, the recovery
// codes; or it shows the form again, or that the sign-in is over, and
// returns false.
func (h *Handler) checkFactor(w http.ResponseWriter, r *http.Request, rq *request, f steps) (identity.VerifiedSecondFactor, bool) {
	challenge, enrolling := r.PostForm.Get("challenge"), r.PostForm.Get("enrolling") == "1"
	code := normalizeCode(r.PostForm.Get("code"))
	switch {
	case challenge == "" || len(challenge) > maxTokenBytes:
		h.stepOver(w, r, rq, f)
		return identity.VerifiedSecondFactor{}, false
	case code == "":
		h.factorForm(w, r, rq, f, http.StatusBadRequest, challenge, enrolling, msgNoCode)
		return identity.VerifiedSecondFactor{}, false
	case len(code) > maxCodeBytes:
		h.factorForm(w, r, rq, f, http.StatusBadRequest, challenge, enrolling, msgWrongCode)
		return identity.VerifiedSecondFactor{}, false
	}
	verified, err := rq.ws.VerifySecondFactor(r.Context(), challenge, code)
	switch classify(err) {
	case formOK:
		return verified, true
	case formRefused, formInvalid:
		// The challenge stays usable until it expires: the same form.
		h.factorForm(w, r, rq, f, http.StatusBadRequest, challenge, enrolling, msgWrongCode)
	case formStale:
		h.stepOver(w, r, rq, f)
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
	}
	return identity.VerifiedSecondFactor{}, false
}

// normalizeCode removes the white space a code may be typed or pasted
// with ("123 456").
func normalizeCode(s string) string { return strings.Join(strings.Fields(s), "") }

// stepOver shows that a sign-in's step can no longer be taken: its
// challenge or request expired or was used.
func (h *Handler) stepOver(w http.ResponseWriter, r *http.Request, rq *request, f steps) {
	h.page(w, r, http.StatusBadRequest, pageData{Slug: rq.ws.Slug(), Title: f.over,
		Message: "This page is no longer valid: it has expired or was used already.", Link: f.restart, LinkText: "Start again"})
}

// recoveryCodes shows new recovery codes, once: after an enrolment, with
// the way on (Continue to the application, or the account page).
func (h *Handler) recoveryCodes(w http.ResponseWriter, r *http.Request, rq *request, f steps, codes []string) {
	d := f.data(rq, "Save your recovery codes", "")
	d.RecoveryCodes = codes
	if f.requestID != "" {
		d.Step = stepContinue
	} else {
		d.Link, d.LinkText = f.next, "Continue to your account"
	}
	h.render(w, r, http.StatusOK, "recovery", d, f.formAction)
}

// signInCode is the sign-in page's second factor: a right code completes
// the request and goes back to the client; the first code of an
// enrolment shows the recovery codes first.
func (h *Handler) signInCode(w http.ResponseWriter, r *http.Request, rq *request, p identity.PendingAuthorization) {
	f := loginSteps(rq, p, r.PostForm.Get("csrf"))
	verified, ok := h.checkFactor(w, r, rq, f)
	if !ok {
		return
	}
	if verified.RecoveryCodes != nil {
		// An authorization code lives a minute, less than reading the
		// codes may take: start the session now, and complete the request
		// when the user continues (signInContinue).
		created, err := rq.ws.CreateSession(r.Context(), verified.User.ID)
		if !h.stepDone(w, r, rq, f, err) {
			return
		}
		h.setSession(w, rq, created)
		h.recoveryCodes(w, r, rq, f, verified.RecoveryCodes)
		return
	}
	signIn, err := rq.ws.Provider().CompleteSignIn(r.Context(), p.RequestID, verified.User.ID)
	if !h.stepDone(w, r, rq, f, err) {
		return
	}
	h.setSession(w, rq, signIn.CreatedSession)
	h.sendCode(w, r, rq, signIn.Authorization)
}

// signInContinue completes the request for the session the enrolment
// started, when the user leaves the recovery codes.
func (h *Handler) signInContinue(w http.ResponseWriter, r *http.Request, rq *request, p identity.PendingAuthorization) {
	f := loginSteps(rq, p, r.PostForm.Get("csrf"))
	auth, err := rq.ws.Provider().ResumeSignIn(r.Context(), p.RequestID, sessionToken(r))
	if h.stepDone(w, r, rq, f, err) {
		h.sendCode(w, r, rq, auth)
	}
}

// stepDone reports whether a step's last call succeeded; otherwise it
// shows that the sign-in is over (a request or session that ended
// meanwhile, a user disabled) or a failure.
func (h *Handler) stepDone(w http.ResponseWriter, r *http.Request, rq *request, f steps, err error) bool {
	switch classify(err) {
	case formOK:
		return true
	case formFailed:
		h.internalError(w, r, rq.ws.Slug(), err)
	default:
		h.stepOver(w, r, rq, f)
	}
	return false
}
