// Package oidc is the OpenID Provider of every workspace of an
// identity.Service: an http.Handler that a program mounts, like
// net/http/pprof, serving for each workspace with slug S, whose issuer is
// IssuerBase + "/t/" + S (see identity.Options.IssuerBase):
//
//	GET  /t/S/.well-known/openid-configuration   discovery (OpenID Connect Discovery 1.0)
//	GET  /t/S/keys                               the JWKS: the workspace's published signing keys
//	GET, POST /t/S/authorize                     the authorization endpoint (code flow, PKCE)
//	GET, POST /t/S/login                         the hosted sign-in page
//	POST /t/S/token                              authorization_code, refresh_token, client_credentials
//	GET, POST /t/S/userinfo                      claims of the user of a Bearer access token (header or form body)
//	POST /t/S/revoke                             token revocation (RFC 7009)
//	POST /t/S/introspect                         token introspection (RFC 7662), confidential clients only
//	GET, POST /t/S/end_session                   RP-initiated logout
//	GET, POST /t/S/account                       the user's account: second factor, password, sessions
//	GET, POST /t/S/reset                         password reset by email (workspaces with SMTP settings)
//
// A program mounts one Handler for every path under the issuers' "/t/",
// next to its own routes:
//
//	provider, err := oidc.New(svc, nil)
//	mux.Handle("/t/", provider)
//
// The handler finds the workspace and the endpoint at the end of the
// request's path (…/t/S/endpoint), so it works under any prefix, whether
// the program strips it (http.StripPrefix) or not; the URLs it publishes
// and redirects to are built from the issuer, the address clients see. It
// keeps no state of its own and starts no goroutine: authorization
// requests, codes, sessions and refresh tokens live in the Service's
// Store, so several processes over one PostgreSQL database serve the same
// workspaces.
//
// Every protocol rule is the identity package's (Provider.Authorize,
// SignIn, ExchangeCode, RefreshTokens, ...); this package carries requests
// to it and its answers back. The JSON endpoints run on
// github.com/zitadel/oidc/v3's op.Server, which parses requests, checks
// their required fields and client authentication's form, and writes RFC
// 6749 error bodies. The browser-facing endpoints (authorize, login,
// end_session, account, reset) are this package's own, because a refusal there must be an
// HTML page or a redirect decided by identity's rules, where op.Server
// writes JSON. Every library error becomes an OAuth error in one table
// (see errors.go), and no error's cause is ever sent to a client.
//
// # The sign-in page
//
// The page is server-rendered HTML with inline CSS, no external assets and
// no JavaScript. It is protected against cross-site request forgery by a
// double-submit token (a random value in an HttpOnly cookie and in a
// hidden field, compared in constant time) and by refusing requests a
// browser marks Sec-Fetch-Site: cross-site. Cookies are HttpOnly,
// SameSite=Lax, scoped to the workspace's path and Secure when the issuer
// is https. A successful sign-in sets the session cookie, which lets the
// next authorization skip the form (single sign-on); one message answers
// an unknown user, a wrong password and a disabled account alike.
//
// Every hosted page (sign-in, second factor, account, password reset) is
// built the same way: the Content-Security-Policy is default-src 'none'
// (with img-src data: on the pages that show a TOTP QR code, an inline
// PNG), every POST is checked against the double-submit token, request
// bodies are bounded by MaxRequestBytes and each field by the library's
// limits, and a refusal of what the user sent is a page that says what to
// do (a 500 answers only a failure of the store or the machine).
// Library errors reach the pages through one table (classify in
// errors.go).
//
// # The second factor
//
// When a user needs a second factor (Provider.SignIn returns
// identity.CodeMFARequired), the sign-in page asks for a code of the
// user's authenticator app or a recovery code, and a right one completes
// the authorization (Provider.VerifySecondFactor, then Provider.CompleteSignIn).
// A wrong code, and a locked account, get the same message. Under
// identity.MFARequired a user without a factor enrols on the way
// (identity.CodeMFAEnrollmentRequired): the page shows the QR code, the
// key and the otpauth URI, takes the first code, starts the session and
// shows the ten recovery codes once; their Continue then completes the
// authorization (Provider.ResumeSignIn), since an authorization code
// lives only a minute.
//
// # The account page
//
// …/account shows the user of the session cookie (or a sign-in form for
// the page itself, with the same second-factor step): the TOTP factor,
// set up (QR code, key, first code, recovery codes) or removed with a
// code, new recovery codes, a change of password, the user's active
// sessions, each revocable, and sign-out. Its forms post back to it with
// a hidden step; after a change it redirects to itself with a fixed
// notice (?done=).
//
// # Password reset
//
// When the workspace has SMTP settings, the sign-in forms link to
// …/reset, which asks for an address and queues a reset email
// (Workspace.RequestPasswordReset) whose link is …/reset?token=…; the
// answer is the same whether an account has the address or not. The link
// opens the new password's form (Workspace.ResetPassword); a reset signs
// nobody in.
//
// # Protocol details
//
// The token, introspection, revocation and userinfo endpoints refuse any
// query string with 400 invalid_request (userinfo with the Bearer
// challenge): client credentials and tokens belong in the Authorization
// header or the form body (RFC 6749, 2.3.1), and a URL ends up in logs and
// histories. Discovery publishes authorization_response_iss_parameter_supported
// (RFC 9207) and ui_locales_supported, the languages of the hosted pages.
// A throttled request (identity.CodeRateLimited) is answered 429
// temporarily_unavailable with Retry-After, the seconds to wait, rounded
// up. Every library call of a request carries its identity.RequestInfo
// (package requestinfo: the client's address, through the Service's
// trusted proxies, its User-Agent and the request's id), which
// throttling counts, sessions record and the audit trail keeps; every
// answer carries the request's id in X-Request-Id.
//
// # The audit trail
//
// The calls of a request name as their actor (identity.WithActor) who
// the endpoint knows it comes from: the client of the authorization
// request on the sign-in page until a user is known (the library names
// the user of a sign-in that succeeds); the signed-in user on the
// account page, after the second factor's code, and at end_session from
// a browser with a session; the authenticated client at the token,
// revocation and introspection endpoints, and at end_session without a
// session for the client it names. Other requests name none, which the
// library records as the system's. docs/oidc.md has the table.
//
// # Logging
//
// The handler logs one line per request at level INFO to Options.Logger,
// as package httpapi does: "http request" with the method, the route
// pattern (route=/t/:slug/token; "" for a path that names no endpoint),
// the status, the duration, the bytes written and, when the request is
// for a client the workspace has, client_id. It never logs the path or
// query, a header or a body, so no code, token, secret or password: a
// client id is logged only once the client authenticated or the
// workspace is found to have a client of that id. A 5xx is logged at WARN,
// its cause at ERROR: the handler logs the answers it gives with a 500
// (a store failure) with their cause, to Options.Logger. github.com/zitadel/oidc's op package logs each refused
// JSON request (invalid_grant, invalid_client, ...) at level WARN, and
// server errors at ERROR, to slog.Default(), and once per New the routes
// it registers at INFO; a program that does not want those sets the
// default logger's level accordingly.
package oidc
