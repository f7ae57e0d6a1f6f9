package oidc

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
)

// authorizeParams are the parameters of an authorization request other
// than client_id and redirect_uri, each at most once.
var authorizeParams = []string{
	"response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method",
	"prompt", "response_mode", "request", "request_uri", "max_age", "login_hint", "id_token_hint", "ui_locales",
}

// serveAuthorize is the authorization endpoint. Until the client and its
// redirect URI are known to match, every refusal is a page; after, it
// goes back to the redirect URI with the state.
func (h *Handler) serveAuthorize(w http.ResponseWriter, r *http.Request, rq *pageRequest) {
	clientID, ok1 := single(r.Form, "client_id")
	redirectURI, ok2 := single(r.Form, "redirect_uri")
	if !ok1 || !ok2 {
		h.badRequest(w, r, rq, rq.t("page.authorize.invalid.title"), rq.t("page.authorize.duplicate"))
		return
	}
	c, err := rq.ws.Provider().GetAuthorizationClient(r.Context(), clientID, redirectURI)
	if err != nil {
		h.authorizePage(w, r, rq, err)
		return
	}
	r = asClient(r, c.ID, c.Name)
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
		redirect(w, r, withIssuer(to, rq.issuer))
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
		Prompt: strings.Fields(r.Form.Get("prompt")), MaxAge: maxAge, UILocales: r.Form.Get("ui_locales"),
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

// withIssuer adds iss to an authorization response's URL (RFC 9207):
// every workspace is an issuer of its own on one host, and a client that
// talks to several must be able to tell which one answered.
func withIssuer(to, issuer string) string {
	sep := "?"
	if strings.Contains(to, "?") {
		sep = "&"
	}
	// Appended, so that the rest of the URL stays as op.AuthResponseURL
	// wrote it (the client's own query included).
	return to + sep + "iss=" + url.QueryEscape(issuer)
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
func (h *Handler) authorizePage(w http.ResponseWriter, r *http.Request, rq *pageRequest, err error) {
	o := mapError(atAuthorize, err)
	switch {
	case o.internal:
		h.internalError(w, r, rq.ws.Slug(), err)
	case identity.ErrorCode(err) == identity.CodeNotFound:
		h.badRequest(w, r, rq, rq.t("page.authorize.unknown_client.title"), rq.t("page.authorize.unknown_client"))
	default:
		h.badRequest(w, r, rq, rq.t("page.authorize.invalid.title"), rq.t("page.authorize.redirect_uri"))
	}
}

// sendCode sends the browser back to the client with a code, the state
// and the issuer.
func (h *Handler) sendCode(w http.ResponseWriter, r *http.Request, rq *pageRequest, auth identity.Authorization) {
	to, err := op.AuthResponseURL(auth.RedirectURI, zoidc.ResponseTypeCode, zoidc.ResponseModeQuery,
		&op.CodeResponseType{Code: auth.Code, State: auth.State}, zoidc.NewEncoder())
	if err != nil {
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	redirect(w, r, withIssuer(to, rq.issuer))
}
