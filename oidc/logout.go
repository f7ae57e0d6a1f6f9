package oidc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/identitylib/identity"
)

// logoutView is a logout request that waits for the user's confirmation:
// what the confirmation's form posts back, and the client's name.
type logoutView struct {
	IDTokenHint, ClientID, PostLogoutRedirectURI, State string
	ClientName                                          string
}

// serveEndSession is RP-initiated logout: it revokes the session of the
// cookie (or the ID token hint's) with the grants issued in it, clears
// the cookie, and sends the browser to the registered post-logout
// redirect URI or shows that the user is signed out. When the request
// does not prove that it comes from the session's client (a hint naming
// the cookie's session), it asks first: a page with a form that posts the
// request back with confirm and the CSRF token; its other choice keeps
// the session. Any page can send a browser here, with an <img> even; only
// the user's click on the form ends the session.
func (h *Handler) serveEndSession(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	req := identity.EndSessionRequest{
		IDTokenHint: r.Form.Get("id_token_hint"), ClientID: r.Form.Get("client_id"),
		PostLogoutRedirectURI: r.Form.Get("post_logout_redirect_uri"), State: r.Form.Get("state"),
		SessionToken: sessionToken(r),
	}
	if r.Method == http.MethodPost && r.PostForm.Get("confirm") != "" {
		// The confirmation's own form: it must be this site's.
		if !h.csrfChecked(w, r, rq, rq.t("page.csrf.logout"), rq.t("page.csrf.logout_hint")) {
			return
		}
		req.Confirmed = true
	}
	r = h.logoutActor(r, rq, req)
	to, err := rq.ws.Provider().EndSession(r.Context(), req)
	if identity.ErrorCode(err) == identity.CodeConfirmationRequired {
		h.logoutConfirmation(w, r, rq, req)
		return
	}
	if err != nil {
		o := mapError(atAuthorize, err)
		if o.internal {
			h.internalError(w, r, rq.ws.Slug(), err)
			return
		}
		msg := rq.t("page.logout.invalid")
		if e, ok := errors.AsType[*identity.Error](err); ok && len(e.Fields) > 0 && e.Fields[0].Field == "post_logout_redirect_uri" {
			msg = rq.t("page.authorize.redirect_uri")
		}
		h.badRequest(w, r, rq, rq.t("page.logout.invalid.title"), msg)
		return
	}
	http.SetCookie(w, rq.cookie(sessionCookie, "", -1))
	if to != "" {
		redirect(w, r, to)
		return
	}
	h.page(w, r, http.StatusOK, pageData{Title: rq.t("page.logout.done.title"), Message: rq.t("page.logout.done"),
		Link: accountURL(rq, ""), LinkText: rq.t("page.way.sign_in_again")})
}

// logoutActor returns r with the actor of a logout request: the user of
// the browser's session when it has a valid one (the user who confirms,
// or whose client sent the browser here), else the client the request
// names (client_id, or the ID token hint's audience, which EndSession
// verifies) when the workspace has it; else r as it is.
func (h *Handler) logoutActor(r *http.Request, rq *pageRequest, req identity.EndSessionRequest) *http.Request {
	ctx := r.Context()
	if req.SessionToken != "" && len(req.SessionToken) <= maxTokenBytes {
		if v, err := rq.ws.VerifySession(ctx, req.SessionToken); err == nil {
			return asUser(r, v.User)
		}
	}
	id := req.ClientID
	if id == "" {
		id = hintAudience(req.IDTokenHint)
	}
	if !loggableClientID(id) {
		return r // no client's id has another form
	}
	if c, err := rq.ws.GetClient(ctx, id); err == nil {
		return asClient(r, c.ID, c.Name)
	}
	return r
}

// logoutConfirmation asks the user whether to sign out, naming the
// workspace and, when the request names it, the client.
func (h *Handler) logoutConfirmation(w http.ResponseWriter, r *http.Request, rq *pageRequest, req identity.EndSessionRequest) {
	v := &logoutView{IDTokenHint: req.IDTokenHint, ClientID: req.ClientID, PostLogoutRedirectURI: req.PostLogoutRedirectURI, State: req.State}
	clientID := req.ClientID
	if clientID == "" {
		// EndSession verified the hint before it asked.
		clientID = hintAudience(req.IDTokenHint)
	}
	if clientID != "" {
		if c, err := rq.ws.GetClient(r.Context(), clientID); err == nil {
			v.ClientName = c.Name
		}
	}
	name := rq.ws.Slug()
	if s, err := rq.getSettings(r.Context()); err == nil {
		name = s.Branding.Name(name)
	}
	d := pageData{Title: rq.t("page.logout.title", name), Action: rq.issuer + "/" + pathEndSession,
		CSRF: csrfToken(w, r, rq), Logout: v, Link: accountURL(rq, ""), LinkText: rq.t("page.logout.stay")}
	// The form's answer redirects to the client's post-logout URI:
	// Chromium checks form-action against it too.
	formAction := "'self'"
	if o, ok := origin(req.PostLogoutRedirectURI); ok && req.PostLogoutRedirectURI != "" {
		formAction += " " + o
	}
	h.render(w, r, http.StatusOK, "logout", d, formAction)
}

// hintAudience returns the client an ID token names as its audience
// (the first, if several), without verifying the token: for a name to
// show only.
func hintAudience(hint string) string {
	parts := strings.Split(hint, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Aud json.RawMessage `json:"aud"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	var one string
	if json.Unmarshal(claims.Aud, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(claims.Aud, &many) == nil && len(many) > 0 {
		return many[0]
	}
	return ""
}
