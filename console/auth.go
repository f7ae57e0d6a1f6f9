package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// loginCookie holds a sign-in under way, from {base}login to
// {base}callback: state, nonce, PKCE verifier and the page to return to.
// SameSite=Lax, since the provider's redirect back is a navigation that a
// provider on another site starts; it lives 10 minutes.
const loginCookie = "identity_console_login"

// loginCookieAge is how long a sign-in may take, in seconds.
const loginCookieAge = 600

// ClientName is the name of the console's OAuth client in the operator
// workspace (see Prepare).
const ClientName = "Identity console"

// redirectURI is the console's OAuth redirect URI.
func (h *Handler) redirectURI() string { return h.publicURL + "callback" }

// consoleClient returns the console's OAuth client in the operator
// workspace: the public client named ClientName whose redirect URI is
// the console's. Prepare creates it.
func (h *Handler) consoleClient(rq *request, ws *identity.Workspace) (identity.OAuthClient, error) {
	clients, err := ws.ListClients(rq.ctx)
	if err != nil {
		return identity.OAuthClient{}, err
	}
	for _, c := range clients {
		if h.isConsoleClient(c) {
			return c, nil
		}
	}
	return identity.OAuthClient{}, errNotPrepared
}

func (h *Handler) isConsoleClient(c identity.OAuthClient) bool {
	return c.Name == ClientName && c.Public && slices.Contains(c.RedirectURIs, h.redirectURI())
}

var errNotPrepared = &pageError{http.StatusServiceUnavailable, "Console not set up",
	"The operator workspace or the console's OAuth client is missing: the program must call Handler.Prepare (identityd serve does)."}

var errSignInFailed = &pageError{http.StatusBadRequest, "Sign-in failed",
	"The sign-in could not be completed: it took too long, was started in another tab, or was refused. Sign in again."}

// randomText returns n random bytes in unpadded base64url.
func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// safeNext returns next when it is a path of the console (the page to
// show after signing in): under BasePath, without "//", "." or ".."
// segments, backslashes, line breaks or a fragment; otherwise BasePath.
func (h *Handler) safeNext(next string) string {
	p, _, _ := strings.Cut(next, "?")
	if !strings.HasPrefix(next, h.base) || strings.Contains(next, "//") || strings.ContainsAny(next, "\\\r\n#") {
		return h.base
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return h.base
		}
	}
	return next
}

// serveLogin starts a sign-in: an authorization request of the console's
// client to the operator workspace's provider, with PKCE (S256), state
// and nonce kept in the login cookie.
func (h *Handler) serveLogin(rq *request) error {
	ws, err := h.operatorWorkspace(rq.ctx)
	if identity.ErrorCode(err) == identity.CodeNotFound {
		return errNotPrepared
	}
	if err != nil {
		return err
	}
	client, err := h.consoleClient(rq, ws)
	if err != nil {
		return err
	}
	state, nonce, verifier := randomText(24), randomText(24), randomText(32)
	next := h.safeNext(rq.r.URL.Query().Get("next"))
	h.setCookie(rq.w, loginCookie, strings.Join([]string{state, nonce, verifier, base64.RawURLEncoding.EncodeToString([]byte(next))}, "."),
		loginCookieAge, http.SameSiteLaxMode)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"client_id": {client.ID}, "redirect_uri": {h.redirectURI()}, "response_type": {"code"},
		"scope": {"openid profile"}, "state": {state}, "nonce": {nonce},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	http.Redirect(rq.w, rq.r, ws.Issuer()+"/authorize?"+q.Encode(), http.StatusSeeOther)
	return nil
}

// pendingLogin is the login cookie read back.
type pendingLogin struct{ state, nonce, verifier, next string }

func (h *Handler) readLogin(r *http.Request) (pendingLogin, bool) {
	c, err := r.Cookie(loginCookie)
	if err != nil {
		return pendingLogin{}, false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 4 {
		return pendingLogin{}, false
	}
	next, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return pendingLogin{}, false
	}
	return pendingLogin{state: parts[0], nonce: parts[1], verifier: parts[2], next: h.safeNext(string(next))}, true
}

// serveCallback completes a sign-in: the state must be the login
// cookie's, the code is exchanged through the library (Provider.
// ExchangeCode, with the PKCE verifier; no HTTP call), the ID token's
// nonce must be the cookie's, and the access token names the operator.
// The console session is then a new session of the operator workspace
// (Workspace.CreateSession, with the sign-in's methods as its AMR).
func (h *Handler) serveCallback(rq *request) error {
	pending, ok := h.readLogin(rq.r)
	h.clearCookie(rq.w, loginCookie)
	q := rq.r.URL.Query()
	if !ok || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(pending.state)) != 1 {
		return errSignInFailed
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		return errSignInFailed
	}
	ws, err := h.operatorWorkspace(rq.ctx)
	if err != nil {
		return err
	}
	if iss := q.Get("iss"); iss != "" && iss != ws.Issuer() {
		return errSignInFailed
	}
	client, err := h.consoleClient(rq, ws)
	if err != nil {
		return err
	}
	p := ws.Provider()
	if client, err = p.VerifyClient(rq.ctx, client.ID, ""); err != nil {
		return err
	}
	tokens, err := p.ExchangeCode(rq.ctx, client, q.Get("code"), h.redirectURI(), pending.verifier)
	if identity.ErrorCode(err) == identity.CodeInvalidGrant {
		return errSignInFailed
	}
	if err != nil {
		return err
	}
	claims, err := unverifiedClaims(tokens.IDToken)
	if err != nil || subtle.ConstantTimeCompare([]byte(claims.Nonce), []byte(pending.nonce)) != 1 {
		return errSignInFailed
	}
	at, err := ws.VerifyAccessToken(rq.ctx, tokens.AccessToken)
	if err != nil {
		return err
	}
	if at.UserID == 0 || at.ClientID != client.ID || claims.Subject != strconv.FormatInt(at.UserID, 10) {
		return errSignInFailed
	}
	u, err := ws.GetUser(rq.ctx, at.UserID)
	if err != nil {
		return err
	}
	// The session's record names the operator who just signed in.
	ctx := identity.WithActor(rq.ctx, identity.Actor{Kind: identity.ActorOperator, ID: strconv.FormatInt(u.ID, 10), Display: u.Username})
	created, err := ws.CreateSession(ctx, u.ID, &identity.SessionOptions{AMR: claims.AMR})
	if err != nil {
		return err
	}
	h.setCookie(rq.w, sessionCookie, created.Secret, 0, http.SameSiteStrictMode)
	http.Redirect(rq.w, rq.r, pending.next, http.StatusSeeOther)
	return nil
}

// idClaims are the claims of an ID token the console reads.
type idClaims struct {
	Subject string   `json:"sub"`
	Nonce   string   `json:"nonce"`
	AMR     []string `json:"amr"`
}

// unverifiedClaims reads the claims of a JWT without checking its
// signature: only for a token the library handed over in this process
// (ExchangeCode's), never for one that came over the network.
func unverifiedClaims(jwt string) (idClaims, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return idClaims{}, errors.New("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return idClaims{}, err
	}
	var c idClaims
	return c, json.Unmarshal(b, &c)
}

// serveLogout ends the console session (Workspace.RevokeSession, which
// the audit trail records) and sends the browser to the provider's
// end_session, which ends the operator's sign-in there too and comes
// back to the console.
func (h *Handler) serveLogout(rq *request) error {
	ws, err := h.operatorWorkspace(rq.ctx)
	if err != nil {
		return err
	}
	if err := ws.RevokeSession(rq.ctx, rq.op.session.ID); err != nil {
		return err
	}
	h.clearCookie(rq.w, sessionCookie)
	target := ws.Issuer() + "/end_session"
	if client, err := h.consoleClient(rq, ws); err == nil {
		target += "?" + url.Values{"client_id": {client.ID}, "post_logout_redirect_uri": {h.publicURL}}.Encode()
	}
	http.Redirect(rq.w, rq.r, target, http.StatusSeeOther)
	return nil
}
