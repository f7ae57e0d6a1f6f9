package identity_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// The authorization endpoint's rules: Authorize's checks, single sign-on,
// prompt, the stored request's lifetime and SignIn with its events.

// TestAuthorizeRules: every check of an authorization request, on both
// sides where it has a boundary.
func TestAuthorizeRules(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(e *oidcEnv, r *identity.AuthorizationRequest)
		code   identity.Code
		fields []identity.FieldError
	}{
		{"valid confidential with PKCE", func(*oidcEnv, *identity.AuthorizationRequest) {}, "", nil},
		{"confidential without PKCE", func(_ *oidcEnv, r *identity.AuthorizationRequest) {
			r.CodeChallenge, r.CodeChallengeMethod = "", ""
		}, "", nil},
		{"public with PKCE", func(e *oidcEnv, r *identity.AuthorizationRequest) { r.ClientID, r.RedirectURI = e.spa.ID, spaRedirect }, "", nil},
		{"public without PKCE", func(e *oidcEnv, r *identity.AuthorizationRequest) {
			r.ClientID, r.RedirectURI, r.CodeChallenge, r.CodeChallengeMethod = e.spa.ID, spaRedirect, "", ""
		}, identity.CodeInvalid, field("code_challenge", "required")},
		{"method without challenge", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallenge = "" },
			identity.CodeInvalid, field("code_challenge", "required")},
		{"plain method", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallengeMethod = "plain" },
			identity.CodeInvalid, field("code_challenge_method", "unknown")},
		{"no method (plain by default)", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallengeMethod = "" },
			identity.CodeInvalid, field("code_challenge_method", "unknown")},
		{"method s256 in lower case", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallengeMethod = "s256" },
			identity.CodeInvalid, field("code_challenge_method", "unknown")},
		{"challenge of 42 characters", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallenge = pkceChallenge[:42] },
			identity.CodeInvalid, field("code_challenge", "format")},
		{"challenge of 44 characters", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallenge = pkceChallenge + "A" },
			identity.CodeInvalid, field("code_challenge", "format")},
		{"challenge padded", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallenge = pkceChallenge + "=" },
			identity.CodeInvalid, field("code_challenge", "format")},
		{"challenge in standard base64", func(_ *oidcEnv, r *identity.AuthorizationRequest) {
			r.CodeChallenge = strings.NewReplacer("-", "+", "_", "/").Replace(pkceChallenge)
		}, identity.CodeInvalid, field("code_challenge", "format")},
		{"challenge the verifier itself (43 characters, 32 bytes)", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallenge = pkceVerifier }, "", nil},
		{"response_type token", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.ResponseType = "token" },
			identity.CodeInvalid, field("response_type", "unknown")},
		{"response_type code id_token", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.ResponseType = "code id_token" },
			identity.CodeInvalid, field("response_type", "unknown")},
		{"no response_type", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.ResponseType = "" },
			identity.CodeInvalid, field("response_type", "unknown")},
		{"no openid scope", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Scopes = []string{"profile", "email"} },
			identity.CodeInvalid, field("scope", "required")},
		{"no scopes", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Scopes = nil },
			identity.CodeInvalid, field("scope", "required")},
		{"openid in upper case", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Scopes = []string{"OPENID"} },
			identity.CodeInvalid, field("scope", "required")},
		{"unknown scopes beside openid", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Scopes = []string{"openid", "offline_access"} }, "", nil},
		{"prompt none", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"none"} }, identity.CodeLoginRequired, nil},
		{"prompt login", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"login"} }, "", nil},
		{"prompt consent", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"consent"} }, "", nil},
		{"prompt select_account", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"select_account"} }, "", nil},
		{"prompt login consent", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"login", "consent"} }, "", nil},
		{"prompt none login", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"none", "login"} },
			identity.CodeInvalid, field("prompt", "unknown")},
		{"prompt consent none", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"consent", "none"} },
			identity.CodeInvalid, field("prompt", "unknown")},
		{"prompt unknown", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"create"} },
			identity.CodeInvalid, field("prompt", "unknown")},
		{"prompt in upper case", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Prompt = []string{"LOGIN"} },
			identity.CodeInvalid, field("prompt", "unknown")},
		{"state of 2048 bytes", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.State = strings.Repeat("s", 2048) }, "", nil},
		{"state of 2049 bytes", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.State = strings.Repeat("s", 2049) },
			identity.CodeInvalid, field("state", "max_length")},
		{"state of 1024 two-byte characters (2048 bytes)", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.State = strings.Repeat("é", 1024) }, "", nil},
		{"state of 1025 two-byte characters (2050 bytes)", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.State = strings.Repeat("é", 1025) },
			identity.CodeInvalid, field("state", "max_length")},
		{"state not UTF-8", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.State = "st\xffate" },
			identity.CodeInvalid, field("state", "utf8")},
		{"nonce of 2048 bytes", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Nonce = strings.Repeat("n", 2048) }, "", nil},
		{"nonce of 2049 bytes", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Nonce = strings.Repeat("n", 2049) },
			identity.CodeInvalid, field("nonce", "max_length")},
		{"nonce not UTF-8", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.Nonce = "\xff" },
			identity.CodeInvalid, field("nonce", "utf8")},
		{"max_age zero", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.MaxAge = new(time.Duration) }, "", nil},
		{"max_age one hour", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.MaxAge = durationPtr(time.Hour) }, "", nil},
		{"max_age negative", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.MaxAge = durationPtr(-time.Microsecond) },
			identity.CodeInvalid, field("max_age", "range")},
		{"every problem after response_type at once", func(_ *oidcEnv, r *identity.AuthorizationRequest) {
			r.Scopes, r.CodeChallengeMethod, r.Prompt, r.State = []string{"email"}, "plain", []string{"bogus"}, strings.Repeat("s", 2049)
		}, identity.CodeInvalid, []identity.FieldError{
			{Field: "scope", Rule: "required"}, {Field: "code_challenge_method", Rule: "unknown"},
			{Field: "prompt", Rule: "unknown"}, {Field: "state", Rule: "max_length"},
		}},
		{"client without the authorization_code grant", func(e *oidcEnv, r *identity.AuthorizationRequest) {
			r.ClientID, r.RedirectURI = e.machine.ID, machineRedirect
		}, identity.CodeForbidden, nil},
		{"unknown client", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.ClientID = "idc_0000000000000000" }, identity.CodeNotFound, nil},
		{"no client", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.ClientID = "" }, identity.CodeNotFound, nil},
		{"deleted client", func(e *oidcEnv, _ *identity.AuthorizationRequest) {
			if err := e.ws.DeleteClient(e.ctx, e.web.ID); err != nil {
				e.t.Fatal(err)
			}
		}, identity.CodeNotFound, nil},
		{"redirect_uri with a trailing slash", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.RedirectURI = webRedirect + "/" },
			identity.CodeInvalid, field("redirect_uri", "unknown")},
		{"redirect_uri with a query", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.RedirectURI = webRedirect + "?x=1" },
			identity.CodeInvalid, field("redirect_uri", "unknown")},
		{"redirect_uri in upper case", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.RedirectURI = strings.ToUpper(webRedirect) },
			identity.CodeInvalid, field("redirect_uri", "unknown")},
		{"redirect_uri of another client", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.RedirectURI = spaRedirect },
			identity.CodeInvalid, field("redirect_uri", "unknown")},
		{"no redirect_uri", func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.RedirectURI = "" },
			identity.CodeInvalid, field("redirect_uri", "unknown")},
		{"redirect_uri checked before the rest", func(_ *oidcEnv, r *identity.AuthorizationRequest) {
			r.RedirectURI, r.ResponseType, r.Scopes = webRedirect+"/", "token", nil
		}, identity.CodeInvalid, field("redirect_uri", "unknown")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			req := e.webRequest()
			tt.mod(e, &req)
			got, err := e.ws.Provider().Authorize(e.ctx, req, "")
			identitytest.WantCode(t, err, tt.code)
			if tt.fields != nil {
				identitytest.WantFields(t, err, tt.fields)
			}
			if err == nil && (!hex16Pattern.MatchString(got.RequestID) || got.Code != "") {
				t.Errorf("Authorize = %+v, want a request id and no code", got)
			}
		})
	}
}

// TestAuthorizationClient: the client check on its own, as a page shows
// its errors before anything else.
func TestAuthorizationClient(t *testing.T) {
	e := newOIDCEnv(t, nil)
	c, err := e.ws.Provider().GetAuthorizationClient(e.ctx, e.web.ID, webRedirect)
	if err != nil || c.ID != e.web.ID || c.Name != "Web" {
		t.Fatalf("AuthorizationClient = %+v, %v", c, err)
	}
	_, err = e.ws.Provider().GetAuthorizationClient(e.ctx, e.web.ID, webRedirect+"/")
	identitytest.WantCode(t, err, identity.CodeInvalid)
	identitytest.WantFields(t, err, field("redirect_uri", "unknown"))
	_, err = e.ws.Provider().GetAuthorizationClient(e.ctx, "idc_0000000000000000", webRedirect)
	identitytest.WantCode(t, err, identity.CodeNotFound)
}

// TestAuthorizeSingleSignOn: with a valid session token the request gets
// a code at once (unless prompt=login); prompt=none without a valid
// session is CodeLoginRequired; the code carries the session.
func TestAuthorizeSingleSignOn(t *testing.T) {
	type outcome int
	const (
		signInPage outcome = iota
		code
		loginRequired
	)
	tests := []struct {
		name    string
		prompt  []string
		session func(e *oidcEnv) string
		want    outcome
	}{
		{"session", nil, adaSession, code},
		{"session, prompt consent", []string{"consent"}, adaSession, code},
		{"session, prompt login", []string{"login"}, adaSession, signInPage},
		{"session, prompt none", []string{"none"}, adaSession, code},
		{"no session", nil, noSession, signInPage},
		{"no session, prompt none", []string{"none"}, noSession, loginRequired},
		{"no session, prompt login", []string{"login"}, noSession, signInPage},
		{"garbage session token", nil, func(*oidcEnv) string { return "ids_garbage" }, signInPage},
		{"garbage session token, prompt none", []string{"none"}, func(*oidcEnv) string { return "ids_garbage" }, loginRequired},
		{"revoked session, prompt none", []string{"none"}, func(e *oidcEnv) string {
			created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
			if err != nil {
				e.t.Fatal(err)
			}
			s, token := created.Session, created.Secret
			if err := e.ws.RevokeSession(e.ctx, s.ID); err != nil {
				e.t.Fatal(err)
			}
			return token
		}, loginRequired},
		{"expired session (24 h), prompt none", []string{"none"}, func(e *oidcEnv) string {
			token := adaSession(e)
			e.clock.Advance(24 * time.Hour)
			return token
		}, loginRequired},
		{"session 1µs before it expires, prompt none", []string{"none"}, func(e *oidcEnv) string {
			token := adaSession(e)
			e.clock.Advance(24*time.Hour - time.Microsecond)
			return token
		}, code},
		{"disabled user's session, prompt none", []string{"none"}, func(e *oidcEnv) string {
			bob := e.user("bob")
			created, err := e.ws.CreateSession(e.ctx, bob.ID, nil)
			if err != nil {
				e.t.Fatal(err)
			}
			token := created.Secret
			if err := e.ws.DisableUser(e.ctx, bob.ID); err != nil {
				e.t.Fatal(err)
			}
			return token
		}, loginRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			req := e.webRequest()
			req.Prompt = tt.prompt
			token := tt.session(e)
			got, err := e.ws.Provider().Authorize(e.ctx, req, token)
			switch tt.want {
			case loginRequired:
				identitytest.WantCode(t, err, identity.CodeLoginRequired)
			case signInPage:
				if err != nil || !hex16Pattern.MatchString(got.RequestID) || got.Code != "" {
					t.Fatalf("Authorize = %+v, %v; want a request to sign in for", got, err)
				}
			case code:
				if err != nil {
					t.Fatal(err)
				}
				if !codePattern.MatchString(got.Code) {
					t.Fatalf("code %q does not match %s", got.Code, codePattern)
				}
				want := identity.Authorization{Code: got.Code, RedirectURI: webRedirect, State: "af0ifjsldkj"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Authorization (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func adaSession(e *oidcEnv) string {
	e.t.Helper()
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	token := created.Secret
	return token
}

func noSession(*oidcEnv) string { return "" }

func durationPtr(d time.Duration) *time.Duration { return &d }

// TestAuthorizeMaxAge: a session whose sign-in is max_age old or older is
// not used (sign in again; with prompt=none, login_required); max_age 0
// acts as prompt=login.
func TestAuthorizeMaxAge(t *testing.T) {
	tests := []struct {
		name   string
		maxAge *time.Duration
		age    time.Duration // of the session when Authorize runs
		prompt []string
		want   string // "code", "sign-in" or "login_required"
	}{
		{"no max_age, old session", nil, 23 * time.Hour, nil, "code"},
		{"1µs younger than max_age", durationPtr(time.Hour), time.Hour - time.Microsecond, nil, "code"},
		{"exactly max_age old", durationPtr(time.Hour), time.Hour, nil, "sign-in"},
		{"exactly max_age old, prompt none", durationPtr(time.Hour), time.Hour, []string{"none"}, "login_required"},
		{"1µs younger than max_age, prompt none", durationPtr(time.Hour), time.Hour - time.Microsecond, []string{"none"}, "code"},
		{"max_age 0", durationPtr(0), 0, nil, "sign-in"},
		{"max_age 0, prompt none", durationPtr(0), 0, []string{"none"}, "login_required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			token := adaSession(e)
			e.clock.Advance(tt.age)
			req := e.webRequest()
			req.MaxAge, req.Prompt = tt.maxAge, tt.prompt
			got, err := e.ws.Provider().Authorize(e.ctx, req, token)
			switch tt.want {
			case "login_required":
				identitytest.WantCode(t, err, identity.CodeLoginRequired)
			case "sign-in":
				if err != nil || got.Code != "" || !hex16Pattern.MatchString(got.RequestID) {
					t.Errorf("Authorize = %+v, %v; want a request to sign in for", got, err)
				}
			case "code":
				if err != nil || !codePattern.MatchString(got.Code) || got.RequestID != "" {
					t.Errorf("Authorize = %+v, %v; want a code", got, err)
				}
			}
		})
	}
}

// TestSingleSignOnCode: the code of a single sign-on redeems for tokens
// whose sid is the session's and whose auth_time is when the session
// started, not when the code was issued.
func TestSingleSignOnCode(t *testing.T) {
	e := newOIDCEnv(t, nil)
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	session, token := created.Session, created.Secret
	e.clock.Advance(2 * time.Hour)
	a := e.authorize(e.webRequest("openid"), token)
	tok, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, a.Code, webRedirect, pkceVerifier)
	if err != nil {
		t.Fatal(err)
	}
	id := claimsOf(t, tok.IDToken)
	got := map[string]any{"sid": id["sid"], "auth_time": id["auth_time"], "iat": id["iat"], "nonce": id["nonce"]}
	want := map[string]any{"sid": session.ID, "auth_time": float64(t0Unix), "iat": float64(t0Unix + 7200), "nonce": "n-0S6_WzA2Mj"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ID token claims (-want +got):\n%s", diff)
	}
}

// TestPendingAuthorization: a stored request waits 10 minutes for its
// user: 1 µs before that it is shown, at 10 minutes it is expired.
func TestPendingAuthorization(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.clock.Advance(time.Minute)
	a := e.authorize(e.webRequest(), "")
	want := identity.PendingAuthorization{
		RequestID: a.RequestID, ClientID: e.web.ID, ClientName: "Web", RedirectURI: webRedirect,
		State: "af0ifjsldkj", ExpiresAt: at(11 * time.Minute),
	}
	e.clock.Set(at(11*time.Minute - time.Microsecond))
	got, err := e.ws.Provider().GetPendingAuthorization(e.ctx, a.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PendingAuthorization (-want +got):\n%s", diff)
	}
	e.clock.Set(at(11 * time.Minute))
	_, err = e.ws.Provider().GetPendingAuthorization(e.ctx, a.RequestID)
	identitytest.WantCode(t, err, identity.CodeTokenExpired)
	_, err = e.ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeTokenExpired)

	for _, id := range []string{"0000000000000000", "", "not a request"} {
		_, err = e.ws.Provider().GetPendingAuthorization(e.ctx, id)
		identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	}
}

// TestSignIn: a wrong password is CodeUnauthenticated with login.failed;
// a right one returns the code, the session and its token and emits
// login.succeeded; a request completed once cannot be completed again.
func TestSignIn(t *testing.T) {
	e := newOIDCEnv(t, nil)
	hook := e.hook(identity.EventLoginFailed, identity.EventLoginSucceeded)
	a := e.authorize(e.webRequest(), "")

	for _, try := range []struct{ login, password string }{
		{"ada", "wrong password"},
		{"ghost", adaPassword},
	} {
		_, err := e.ws.Provider().SignIn(e.ctx, a.RequestID, try.login, try.password)
		wantInvalidCredentials(t, err)
	}
	// The request still waits after refusals.
	if _, err := e.ws.Provider().GetPendingAuthorization(e.ctx, a.RequestID); err != nil {
		t.Fatalf("PendingAuthorization after refusals: %v", err)
	}

	e.clock.Advance(time.Minute)
	signIn, err := e.ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	auth, token, session := signIn.Authorization, signIn.Secret, signIn.Session
	if !codePattern.MatchString(auth.Code) || !sessionPattern.MatchString(token) || !strings.HasPrefix(token, "ids_"+session.ID+"_") {
		t.Errorf("code %q, session token %q, session %q: wrong shapes", auth.Code, token, session.ID)
	}
	if diff := cmp.Diff(identity.Authorization{Code: auth.Code, RedirectURI: webRedirect, State: "af0ifjsldkj"}, auth); diff != "" {
		t.Errorf("Authorization (-want +got):\n%s", diff)
	}
	wantSession := identity.Session{ID: session.ID, UserID: 1, CreatedAt: at(time.Minute), ExpiresAt: at(24*time.Hour + time.Minute), LastSeenAt: at(time.Minute), AMR: []string{"pwd"}}
	if diff := cmp.Diff(wantSession, session); diff != "" {
		t.Errorf("Session (-want +got):\n%s", diff)
	}
	if v, err := e.ws.VerifySession(e.ctx, token); err != nil || v.Session.ID != session.ID {
		t.Errorf("VerifySession(token) = %+v, %v", v.Session, err)
	}

	wantEvents := []string{
		`{"type":"login.failed","timestamp":"` + t0Stamp + `","data":{"login":"ada","reason":"wrong_password","userId":1}}`,
		`{"type":"login.failed","timestamp":"` + t0Stamp + `","data":{"login":"ghost","reason":"unknown_user"}}`,
		`{"type":"login.succeeded","timestamp":"2026-03-14T15:10:26.535897Z","data":{"userId":1,"clientId":"` + e.web.ID + `","sessionId":"` + session.ID + `"}}`,
	}
	if diff := cmp.Diff(wantEvents, e.payloads(hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	_, err = e.ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	_, err = e.ws.Provider().GetPendingAuthorization(e.ctx, a.RequestID)
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	if n := len(e.payloads(hook)); n != 3 {
		t.Errorf("%d events after the second SignIn, want 3 (no new login.succeeded)", n)
	}
}

// TestSignInDisabledUser: a disabled user's right password is refused
// like a wrong one.
func TestSignInDisabledUser(t *testing.T) {
	e := newOIDCEnv(t, nil)
	hook := e.hook(identity.EventLoginFailed, identity.EventLoginSucceeded)
	if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	a := e.authorize(e.webRequest(), "")
	_, err := e.ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	wantInvalidCredentials(t, err)
	want := []string{`{"type":"login.failed","timestamp":"` + t0Stamp + `","data":{"login":"ada","reason":"disabled","userId":1}}`}
	if diff := cmp.Diff(want, e.payloads(hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// hookStore runs a function once, before the next Update after it is set.
type hookStore struct {
	store.Store
	mu           sync.Mutex
	beforeUpdate func()
}

func (s *hookStore) setHook(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeUpdate = fn
}

func (s *hookStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	hook := s.beforeUpdate
	s.beforeUpdate = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.Store.Update(ctx, fn)
}

// TestSignInChangedMeanwhile: SignIn checks the request and the password,
// then writes the session, the code and login.succeeded in one
// transaction. If the request expired, or the user was disabled, between
// the checks and that transaction, nothing is written: no session, no
// event; the answer is the one the check would have given.
func TestSignInChangedMeanwhile(t *testing.T) {
	tests := []struct {
		name      string
		meanwhile func(e *oidcEnv)
		code      identity.Code
	}{
		{"nothing", func(*oidcEnv) {}, ""},
		{"the request expired", func(e *oidcEnv) { e.clock.Set(at(10 * time.Minute)) }, identity.CodeTokenExpired},
		{"the user was disabled", func(e *oidcEnv) { e.disableInStoreOnly(e.ada.ID, true) }, identity.CodeUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			hook := e.hook(identity.EventLoginSucceeded)
			a := e.authorize(e.webRequest(), "")
			hs := &hookStore{Store: e.st}
			opts := tokenOpts()
			opts.Now, opts.PasswordHashing = e.clock.Now, &cheapArgon2
			svc, err := identity.New(hs, opts)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := svc.GetWorkspace(e.ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			hs.setHook(func() { tt.meanwhile(e) })
			_, err = ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
			identitytest.WantCode(t, err, tt.code)
			if tt.code == identity.CodeUnauthenticated {
				wantInvalidCredentials(t, err)
			}
			sessions, serr := listItems(e.ws.ListSessions(e.ctx, e.ada.ID, nil))
			if serr != nil {
				t.Fatal(serr)
			}
			wantWrites := 0
			if tt.code == "" {
				wantWrites = 1
			}
			if len(sessions) != wantWrites || len(e.payloads(hook)) != wantWrites {
				t.Errorf("%d sessions and %d login.succeeded events, want %d of each", len(sessions), len(e.payloads(hook)), wantWrites)
			}
		})
	}
}

// wantInvalidCredentials checks that a sign-in was refused with the one
// answer every failed login gets, whatever the reason.
func wantInvalidCredentials(t *testing.T, err error) {
	t.Helper()
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if err.Error() != "identity: invalid credentials" {
		t.Errorf("refusal %q, want the generic \"identity: invalid credentials\"", err)
	}
}
