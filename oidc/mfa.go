package oidc

import (
	"context"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
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
	// maxRecoveryCodes is how many recovery codes the library makes.
	maxRecoveryCodes = 10
)

// recoveryCodeForm is how the library writes a recovery code.
var recoveryCodeForm = regexp.MustCompile(`^[a-z2-7]{5}-[a-z2-7]{5}$`)

// steps are the forms of a sign-in after its password, where they post
// and what their pages show beside them: the sign-in page's, for a
// pending authorization request, or the account page's.
type steps struct {
	// action is the URL the forms post to.
	action string
	// requestID is the pending authorization request, "" on the account
	// page; clientName names its client and clientLogo is the URL of the
	// client's logo, if it has one.
	requestID, clientName, clientLogo string
	csrf                              string
	// formAction is the pages' CSP form-action.
	formAction string
	// over is the title of the page that says a step is over (expired,
	// completed), and restart where that page sends the user.
	over, restart string
	// back is the way back from an enrolment on the account page, ""
	// elsewhere.
	back string
}

// fill sets the forms' part of a page with a title.
func (f steps) fill(d *pageData, title string) {
	d.Title, d.ClientName, d.ClientLogo = title, f.clientName, f.clientLogo
	d.Action, d.RequestID, d.CSRF = f.action, f.requestID, f.csrf
}

// enrollView is what an authenticator app needs to add a TOTP factor.
type enrollView struct {
	// QR is the QR code as a data: URI, which the page's CSP allows.
	QR template.URL
	// Secret is the key to type, in groups of four characters.
	Secret string
	// URI is the otpauth: URI the QR code holds, to copy; Link is the
	// same URI as a link, which opens an authenticator app on the device
	// that shows the page.
	URI  string
	Link template.URL
}

func newEnrollView(e identity.TOTPEnrollment) (*enrollView, error) {
	png, err := otpauth.QRCode(e.URI)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(e.URI, "otpauth://") {
		return nil, errors.New("oidc: an enrolment's URI is not otpauth://")
	}
	// The PNG is drawn here and the URLs' schemes fixed: safe to mark as
	// URLs the template keeps as they are.
	qr := template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
	return &enrollView{QR: qr, Secret: groups(e.Secret, 4), URI: e.URI, Link: template.URL(e.URI)}, nil
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
func (h *Handler) askSecondFactor(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps, err error) bool {
	e, ok := errors.AsType[*identity.Error](err)
	if !ok || e.Code != identity.CodeMFARequired && e.Code != identity.CodeMFAEnrollmentRequired {
		return false
	}
	h.factorForm(w, r, rq, f, http.StatusOK, e.Challenge, e.Code == identity.CodeMFAEnrollmentRequired, pageData{Focus: "code"})
	return true
}

// factorForm shows the second factor's form for the challenge: a code,
// or for a user who must enrol first, the enrolment (its QR code and key)
// with the form of its first code; d holds its errors.
func (h *Handler) factorForm(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps, status int, challenge string, enrolling bool, d pageData) {
	f.fill(&d, rq.t("page.factor.title"))
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
		d.Title = rq.t("page.enroll.title")
	}
	h.render(w, r, status, "factor", d, f.formAction)
}

// factorCode returns the code a second factor's form sent, without the
// white space it may be typed or pasted with, and the input it came
// from: the app's code, or else the recovery code.
func factorCode(r *http.Request) (code, input string) {
	if c := normalizeCode(r.PostForm.Get("code")); c != "" {
		return c, "code"
	}
	if c := normalizeCode(r.PostForm.Get("recovery_code")); c != "" {
		return c, "recovery-code"
	}
	return "", "code"
}

// codeRefused adds to d what a code form says of a missing, refused or
// throttled code from input (see factorCode), and returns the page's
// status.
func codeRefused(w http.ResponseWriter, rq *pageRequest, d *pageData, input string, err error) int {
	d.RecoveryOpen = input == "recovery-code"
	if classify(err) == formThrottled {
		d.Message, d.Focus = throttled(w, rq, err), input
		return http.StatusTooManyRequests
	}
	// A wrong, replayed or used code and a locked account alike, as the
	// sign-in form answers a wrong password.
	d.fieldError(rq.t("page.factor.wrong"), input)
	return http.StatusBadRequest
}

// checkFactor takes the second factor's form: the code for the
// challenge. It returns the user and, after an enrolment, the recovery
// codes; or it shows the form again, or that the sign-in is over, and
// returns false.
func (h *Handler) checkFactor(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps) (identity.VerifiedSecondFactor, bool) {
	challenge, enrolling := r.PostForm.Get("challenge"), r.PostForm.Get("enrolling") == "1"
	code, input := factorCode(r)
	var d pageData
	switch {
	case challenge == "" || len(challenge) > maxTokenBytes:
		h.stepOver(w, r, rq, f)
		return identity.VerifiedSecondFactor{}, false
	case code == "":
		d.fieldError(rq.t("page.factor.missing"), input)
		h.factorForm(w, r, rq, f, http.StatusBadRequest, challenge, enrolling, d)
		return identity.VerifiedSecondFactor{}, false
	case len(code) > maxCodeBytes:
		status := codeRefused(w, rq, &d, input, nil)
		h.factorForm(w, r, rq, f, status, challenge, enrolling, d)
		return identity.VerifiedSecondFactor{}, false
	}
	verify := rq.ws.VerifySecondFactor
	if f.requestID != "" {
		// A sign-in for a client ends when its request is completed,
		// which writes its audit record.
		verify = func(ctx context.Context, challenge, code string) (identity.VerifiedSecondFactor, error) {
			return rq.ws.Provider().VerifySecondFactor(ctx, f.requestID, challenge, code)
		}
	}
	verified, err := verify(r.Context(), challenge, code)
	switch classify(err) {
	case formOK:
		return verified, true
	case formRefused, formInvalid, formThrottled:
		// The challenge stays usable until it expires: the same form.
		status := codeRefused(w, rq, &d, input, err)
		h.factorForm(w, r, rq, f, status, challenge, enrolling, d)
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
func (h *Handler) stepOver(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps) {
	h.page(w, r, http.StatusBadRequest, pageData{Title: f.over, Message: rq.t("page.step_over"),
		Link: f.restart, LinkText: rq.t("page.way.start_again")})
}

// recoveryCodes shows new recovery codes, once, with their download and
// the form that leaves them once the user says they are saved: Continue
// to the application, or to the account page. d holds its errors.
func (h *Handler) recoveryCodes(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps, status int, codes []string, d pageData) {
	f.fill(&d, rq.t("page.recovery.title"))
	d.RecoveryCodes = codes
	d.Step = stepSaved
	if f.requestID != "" {
		d.Step = stepContinue
	}
	name := rq.ws.Slug()
	if s, err := rq.getSettings(r.Context()); err == nil {
		name = s.Branding.Name(name)
	}
	text := rq.t("page.recovery.file_title", name) + "\n\n" + strings.Join(codes, "\n") + "\n"
	// The codes are the library's and the rest is escaped: a data: URL
	// whose scheme is fixed here.
	d.Download = template.URL("data:text/plain;charset=utf-8," + url.PathEscape(text))
	h.render(w, r, status, "recovery", d, f.formAction)
}

// savedCodes reads the recovery codes' form: the codes it carried back
// (the page shows them again when the box was not ticked; the library
// keeps only their hashes), and whether the user ticked that they are
// saved. ok is false when the codes are not ten of the library's.
func savedCodes(r *http.Request) (codes []string, saved, ok bool) {
	codes = r.PostForm["codes"]
	if len(codes) == 0 || len(codes) > maxRecoveryCodes {
		return nil, false, false
	}
	for _, c := range codes {
		if !recoveryCodeForm.MatchString(c) {
			return nil, false, false
		}
	}
	return codes, r.PostForm.Get("saved") == "1", true
}

// codesSaved checks the recovery codes' form: it reports whether the user
// said the codes are saved, and otherwise shows them again, asking for
// the box (or, when they were not sent back, that the step is over).
func (h *Handler) codesSaved(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps) bool {
	codes, saved, ok := savedCodes(r)
	switch {
	case !ok:
		h.stepOver(w, r, rq, f)
		return false
	case !saved:
		var d pageData
		d.fieldError(rq.t("page.recovery.not_saved"), "saved")
		h.recoveryCodes(w, r, rq, f, http.StatusBadRequest, codes, d)
		return false
	}
	return true
}

// signInCode is the sign-in page's second factor: a right code completes
// the request and goes back to the client; the first code of an
// enrolment shows the recovery codes first.
func (h *Handler) signInCode(w http.ResponseWriter, r *http.Request, rq *pageRequest, p identity.PendingAuthorization) {
	f := h.loginSteps(r, rq, p, r.PostForm.Get("csrf"))
	verified, ok := h.checkFactor(w, r, rq, f)
	if !ok {
		return
	}
	// The user proved who they are: the rest of the sign-in is theirs.
	r = asUser(r, verified.User)
	opts := verified.SessionOptions()
	if verified.RecoveryCodes != nil {
		// An authorization code lives a minute, less than reading the
		// codes may take: start the session now, and complete the request
		// when the user continues (signInContinue).
		created, err := rq.ws.CreateSession(r.Context(), verified.User.ID, opts)
		if !h.stepDone(w, r, rq, f, err) {
			return
		}
		h.setSession(w, rq, created)
		h.recoveryCodes(w, r, rq, f, http.StatusOK, verified.RecoveryCodes, pageData{Focus: "saved"})
		return
	}
	signIn, err := rq.ws.Provider().CompleteSignIn(r.Context(), p.RequestID, verified.User.ID, opts)
	if !h.stepDone(w, r, rq, f, err) {
		return
	}
	h.setSession(w, rq, signIn.CreatedSession)
	h.sendCode(w, r, rq, signIn.Authorization)
}

// signInContinue completes the request for the session the enrolment
// started, when the user says the recovery codes are saved.
func (h *Handler) signInContinue(w http.ResponseWriter, r *http.Request, rq *pageRequest, p identity.PendingAuthorization) {
	f := h.loginSteps(r, rq, p, r.PostForm.Get("csrf"))
	if !h.codesSaved(w, r, rq, f) {
		return
	}
	auth, err := rq.ws.Provider().ResumeSignIn(r.Context(), p.RequestID, sessionToken(r))
	if h.stepDone(w, r, rq, f, err) {
		h.sendCode(w, r, rq, auth)
	}
}

// stepDone reports whether a step's last call succeeded; otherwise it
// shows that the sign-in is over (a request or session that ended
// meanwhile, a user disabled) or a failure.
func (h *Handler) stepDone(w http.ResponseWriter, r *http.Request, rq *pageRequest, f steps, err error) bool {
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
