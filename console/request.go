package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/identitylib/identity"
)

// sessionCookie holds the console session's token: a session of the
// operator workspace (Workspace.CreateSession).
const sessionCookie = "identity_console"

// request is one request to the console: what the route's function
// needs, in one place.
type request struct {
	w http.ResponseWriter
	r *http.Request
	// ctx is the request's context with its identity.RequestInfo and,
	// once an operator is signed in, the operator as the actor of every
	// library call (identity.WithActor, ActorOperator).
	ctx context.Context
	// op is the signed-in operator, or nil.
	op *operator
}

// operator is the signed-in operator of a request.
type operator struct {
	user    identity.User
	session identity.Session
	// token is the session token from the cookie; the CSRF token is
	// derived from it.
	token  string
	grants grants
}

func (h *Handler) newRequest(w http.ResponseWriter, r *http.Request) *request {
	return &request{w: w, r: r, ctx: r.Context()}
}

// loadOperator finds the operator of the request's session cookie: a
// valid session of the operator workspace within the console's lifetime
// and idle timeout (Workspace.VerifySessionWithin), whose user is enabled,
// with the roles the user holds now (directly or through groups). A
// request without one has no operator; a cookie that names no valid
// session is cleared.
func (h *Handler) loadOperator(rq *request) {
	c, err := rq.r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return
	}
	ws, err := h.operatorWorkspace(rq.ctx)
	if err != nil {
		return
	}
	vs, err := ws.VerifySessionWithin(rq.ctx, c.Value, h.limits)
	if err != nil {
		if identity.ErrorCode(err) != identity.CodeUnauthenticated {
			h.logger.ErrorContext(rq.ctx, "console: checking a session", "error", err)
			return
		}
		h.clearCookie(rq.w, sessionCookie)
		return
	}
	roles, err := ws.ListUserRoles(rq.ctx, vs.User.ID)
	if err != nil {
		h.logger.ErrorContext(rq.ctx, "console: reading an operator's roles", "error", err)
		return
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.Name
	}
	rq.op = &operator{user: vs.User, session: vs.Session, token: c.Value, grants: grantsOf(h.opSlug, names)}
	rq.ctx = identity.WithActor(rq.ctx, identity.Actor{
		Kind: identity.ActorOperator, ID: strconv.FormatInt(vs.User.ID, 10), Display: vs.User.Username,
	})
}

// csrfToken returns the CSRF token of the request's session: a hash of
// the session token, which the HttpOnly cookie keeps from scripts of
// other origins; "" without a session.
func (rq *request) csrfToken() string {
	if rq.op == nil {
		return ""
	}
	return csrfOf(rq.op.token)
}

func csrfOf(sessionToken string) string {
	sum := sha256.Sum256([]byte("identity console csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// csrfValid reports whether the form's csrf field is the session's token,
// compared in constant time.
func (rq *request) csrfValid() bool {
	want := rq.csrfToken()
	got := rq.r.PostFormValue("csrf")
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// setCookie sets a console cookie: HttpOnly, scoped to BasePath, Secure
// when PublicURL is https, with the SameSite mode given; maxAge 0 makes a
// cookie of the browser session.
func (h *Handler) setCookie(w http.ResponseWriter, name, value string, maxAge int, same http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: h.base, MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure, SameSite: same})
}

// clearCookie removes a console cookie.
func (h *Handler) clearCookie(w http.ResponseWriter, name string) {
	h.setCookie(w, name, "", -1, http.SameSiteStrictMode)
}
