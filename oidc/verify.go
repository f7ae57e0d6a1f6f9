package oidc

import (
	"net/http"

	"github.com/identitylib/identity"
)

// pathVerify is the email verification page, the default link of the
// verification emails: {issuer}/verify?token=…[&request=…].
const pathVerify = "verify"

// serveVerify confirms an email address with the token of its
// verification email (Workspace.ConfirmEmail) and shows the result: the
// address verified, or why the link no longer works. When the email was
// sent for a sign-in (?request= names an authorization request that still
// waits), the way on is that sign-in; otherwise the account page.
func (h *Handler) serveVerify(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	token, ok := single(r.Form, "token")
	requestID, _ := single(r.Form, "request")
	p, live := livePending(r, rq, requestID)
	if live && p.UILocales != "" {
		r = h.speak(r, rq, p.UILocales)
	}
	d := pageData{}
	if live {
		name := p.ClientName
		if name == "" {
			name = p.ClientID
		}
		d.Link, d.LinkText = loginURL(rq, requestID), rq.t("page.verify.continue", name)
	} else {
		d.Link, d.LinkText = accountURL(rq, ""), rq.t("page.way.account")
	}
	code := identity.CodeTokenInvalid
	if ok && token != "" && len(token) <= maxTokenBytes {
		u, err := rq.ws.ConfirmEmail(r.Context(), token)
		if err == nil {
			d.Title, d.Message = rq.t("page.verify.done.title"), rq.t("page.verify.done", u.Email)
			if live {
				d.Hint = rq.t("page.verify.done_hint")
			}
			h.page(w, r, http.StatusOK, d)
			return
		}
		if classify(err) == formFailed {
			h.internalError(w, r, rq.ws.Slug(), err)
			return
		}
		code = identity.ErrorCode(err)
	}
	d.Title = rq.t("page.verify.over.title")
	switch code {
	case identity.CodeTokenExpired:
		d.Message, d.Hint = rq.t("page.verify.over.expired"), rq.t("page.verify.over.expired_hint")
	case identity.CodeTokenUsed:
		d.Message, d.Hint = rq.t("page.verify.over.used"), rq.t("page.verify.over.used_hint")
	default:
		d.Message, d.Hint = rq.t("page.verify.over.invalid"), rq.t("page.verify.over.invalid_hint")
	}
	h.page(w, r, http.StatusBadRequest, d)
}
