package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// The token endpoint's grants: ExchangeCode (PKCE, single use, replay),
// RefreshTokens (rotation, reuse detection, sliding and absolute expiry,
// scopes) and ClientCredentialsTokens.

const day = 24 * time.Hour

// ignoreTokenStrings leaves the token strings and the grant id of Tokens
// to checks of their own.
var ignoreTokenStrings = cmpopts.IgnoreFields(identity.Tokens{}, "AccessToken", "IDToken", "RefreshToken", "GrantID")

// disableInStoreOnly marks a user disabled straight in the store, without
// DisableUser's revocations, so that only the check of the user's state
// can refuse.
func (e *testEnv) disableInStoreOnly(userID int64, disabled bool) {
	e.t.Helper()
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		u, err := tx.User("acme", userID)
		if err != nil {
			return err
		}
		u.Enabled = !disabled
		return tx.PutUser("acme", u)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestExchangeCode: the tokens of a redeemed code, with the request's
// nonce, the session's sid and the sign-in time as auth_time, and the
// grant it stores.
func TestExchangeCode(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.withMappers()
	s := e.signIn(e.webRequest())
	e.clock.Advance(30 * time.Second)
	tok, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, s.auth.Code, webRedirect, pkceVerifier)
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := identity.Tokens{TokenType: "Bearer", ExpiresAt: at(10*time.Minute + 30*time.Second), Scopes: []string{"openid", "profile", "email"}}
	if diff := cmp.Diff(wantTokens, tok, ignoreTokenStrings); diff != "" {
		t.Errorf("Tokens (-want +got):\n%s", diff)
	}
	if !refreshPattern.MatchString(tok.RefreshToken) || !hex16Pattern.MatchString(tok.GrantID) {
		t.Errorf("RefreshToken %q, GrantID %q: wrong shapes", tok.RefreshToken, tok.GrantID)
	}
	access := claimsOf(t, tok.AccessToken)
	takeShaped(t, access, "jti", jtiPattern)
	wantAccess := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "client_id": e.web.ID, "scope": "openid profile email",
		"exp": float64(t0Unix + 630), "iat": float64(t0Unix + 30), "auth_time": float64(t0Unix), "sid": s.session.ID,
		"department": "R&D", "region": "eu",
	}
	if diff := cmp.Diff(wantAccess, access); diff != "" {
		t.Errorf("access claims (-want +got):\n%s", diff)
	}
	wantID := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "azp": e.web.ID,
		"exp": float64(t0Unix + 630), "iat": float64(t0Unix + 30), "auth_time": float64(t0Unix),
		"nonce": "n-0S6_WzA2Mj", "sid": s.session.ID, "at_hash": atHash(tok.AccessToken), "amr": []any{"pwd"},
		"preferred_username": "ada", "name": "Ada Lovelace", "updated_at": float64(t0Unix),
		"email": "ada@example.com", "email_verified": false, "tier": "gold", "region": "eu",
	}
	if diff := cmp.Diff(wantID, claimsOf(t, tok.IDToken)); diff != "" {
		t.Errorf("ID claims (-want +got):\n%s", diff)
	}
	wantGrant := store.Grant{
		ID: tok.GrantID, ClientID: e.web.ID, UserID: 1, SessionID: s.session.ID, Scopes: []string{"openid", "profile", "email"},
		AuthTime: t0, AMR: []string{"pwd"}, CreatedAt: at(30 * time.Second), ExpiresAt: at(30*time.Second + 90*day),
	}
	if diff := cmp.Diff(wantGrant, e.storedGrant(tok.GrantID)); diff != "" {
		t.Errorf("stored grant (-want +got):\n%s", diff)
	}
	e.wantActive(tok.AccessToken)
}

// exchange is one ExchangeCode call of a test row.
type exchange struct {
	client   identity.OAuthClient
	code     string
	redirect string
	verifier string
}

// TestExchangeCodeRefusals: every way a code is refused, CodeInvalidGrant
// unless the client may not use the grant at all, with the boundaries
// tried from both sides.
func TestExchangeCodeRefusals(t *testing.T) {
	verifier := func(n int) string { return strings.Repeat("v", n) }
	tests := []struct {
		name string
		opts func(*identity.Options)
		// req changes the authorization request signed in for (nil: the
		// web client's with PKCE).
		req func(e *oidcEnv, r *identity.AuthorizationRequest)
		// ex changes the exchange, made at the clock's time after before.
		ex     func(e *oidcEnv, s signedIn, x *exchange)
		before func(e *oidcEnv, s signedIn)
		code   identity.Code
	}{
		{name: "as issued"},
		{name: "wrong verifier", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.verifier = pkceVerifier[:42] + "X" }, code: identity.CodeInvalidGrant},
		{name: "missing verifier", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.verifier = "" }, code: identity.CodeInvalidGrant},
		{name: "the challenge as verifier", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.verifier = pkceChallenge }, code: identity.CodeInvalidGrant},
		{name: "no challenge, no verifier", req: noPKCE, ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.verifier = "" }},
		{name: "verifier when none was challenged", req: noPKCE, code: identity.CodeInvalidGrant},
		{name: "verifier of 42 characters", req: challengeOf(verifier(42)), ex: withVerifier(verifier(42)), code: identity.CodeInvalidGrant},
		{name: "verifier of 43 characters", req: challengeOf(verifier(43)), ex: withVerifier(verifier(43))},
		{name: "verifier of 128 characters", req: challengeOf(verifier(128)), ex: withVerifier(verifier(128))},
		{name: "verifier of 129 characters", req: challengeOf(verifier(129)), ex: withVerifier(verifier(129)), code: identity.CodeInvalidGrant},
		{name: "redirect_uri with a trailing slash", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.redirect = webRedirect + "/" }, code: identity.CodeInvalidGrant},
		{name: "no redirect_uri", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.redirect = "" }, code: identity.CodeInvalidGrant},
		{name: "another (public) client", ex: func(e *oidcEnv, _ signedIn, x *exchange) { x.client = e.spa }, code: identity.CodeInvalidGrant},
		{name: "another confidential client", ex: func(e *oidcEnv, _ signedIn, x *exchange) {
			x.client = e.client(identity.NewClient{Name: "Other", RedirectURIs: []string{webRedirect}}).Client
		}, code: identity.CodeInvalidGrant},
		{name: "1µs before 60 s", before: func(e *oidcEnv, _ signedIn) { e.clock.Set(at(60*time.Second - time.Microsecond)) }},
		{name: "at 60 s", before: func(e *oidcEnv, _ signedIn) { e.clock.Set(at(60 * time.Second)) }, code: identity.CodeInvalidGrant},
		{name: "malformed code", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.code = "idac_nope" }, code: identity.CodeInvalidGrant},
		{name: "empty code", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.code = "" }, code: identity.CodeInvalidGrant},
		{name: "unknown code", ex: func(_ *oidcEnv, _ signedIn, x *exchange) {
			x.code = "idac_0000000000000000" + x.code[len("idac_0000000000000000"):]
		}, code: identity.CodeInvalidGrant},
		{name: "wrong secret", ex: func(_ *oidcEnv, _ signedIn, x *exchange) { x.code = x.code[:len(x.code)-43] + strings.Repeat("A", 43) }, code: identity.CodeInvalidGrant},
		{name: "code of a request not signed in for", ex: func(e *oidcEnv, _ signedIn, x *exchange) {
			pending := e.authorize(e.webRequest(), "")
			x.code = "idac_" + pending.RequestID + x.code[len("idac_0000000000000000"):]
		}, code: identity.CodeInvalidGrant},
		{name: "session revoked before the exchange", before: func(e *oidcEnv, s signedIn) {
			if err := e.ws.RevokeSession(e.ctx, s.session.ID); err != nil {
				e.t.Fatal(err)
			}
		}, code: identity.CodeInvalidGrant},
		{name: "session 1µs before it expires", opts: func(o *identity.Options) { o.SessionLifetime = 30 * time.Second },
			before: func(e *oidcEnv, _ signedIn) { e.clock.Set(at(30*time.Second - time.Microsecond)) }},
		{name: "session expired before the code", opts: func(o *identity.Options) { o.SessionLifetime = 30 * time.Second },
			before: func(e *oidcEnv, _ signedIn) { e.clock.Set(at(30 * time.Second)) }, code: identity.CodeInvalidGrant},
		{name: "user disabled", before: func(e *oidcEnv, _ signedIn) {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
		}, code: identity.CodeInvalidGrant},
		{name: "user disabled in the store, session active", before: func(e *oidcEnv, _ signedIn) { e.disableInStoreOnly(e.ada.ID, true) },
			code: identity.CodeInvalidGrant},
		{name: "client without authorization_code", ex: func(e *oidcEnv, _ signedIn, x *exchange) { x.client = e.machine }, code: identity.CodeForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			if tt.opts != nil {
				tt.opts(opts)
			}
			e := newOIDCEnv(t, opts)
			req := e.webRequest()
			if tt.req != nil {
				tt.req(e, &req)
			}
			s := e.signIn(req)
			x := exchange{client: e.web, code: s.auth.Code, redirect: webRedirect, verifier: pkceVerifier}
			if tt.ex != nil {
				tt.ex(e, s, &x)
			}
			if tt.before != nil {
				tt.before(e, s)
			}
			tok, err := e.ws.Provider().ExchangeCode(e.ctx, x.client, x.code, x.redirect, x.verifier)
			identitytest.WantCode(t, err, tt.code)
			if err == nil {
				e.wantActive(tok.AccessToken)
			}
		})
	}
}

func noPKCE(_ *oidcEnv, r *identity.AuthorizationRequest) {
	r.CodeChallenge, r.CodeChallengeMethod = "", ""
}

func challengeOf(verifier string) func(*oidcEnv, *identity.AuthorizationRequest) {
	return func(_ *oidcEnv, r *identity.AuthorizationRequest) { r.CodeChallenge = s256(verifier) }
}

func withVerifier(v string) func(*oidcEnv, signedIn, *exchange) {
	return func(_ *oidcEnv, _ signedIn, x *exchange) { x.verifier = v }
}

// TestPKCEExample: the RFC 7636 example pair used throughout is right.
func TestPKCEExample(t *testing.T) {
	if got := s256(pkceVerifier); got != pkceChallenge {
		t.Fatalf("S256(%q) = %q, want %q", pkceVerifier, got, pkceChallenge)
	}
}

// TestExchangeCodeReplay: a code presented again is refused and revokes
// the grant of its first redemption: its access token stops verifying,
// its refresh token stops working, even after the code has expired.
func TestExchangeCodeReplay(t *testing.T) {
	e := newOIDCEnv(t, nil)
	s := e.signIn(e.webRequest())
	tok, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, s.auth.Code, webRedirect, pkceVerifier)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5 * time.Minute)
	e.wantActive(tok.AccessToken)
	_, err = e.ws.Provider().ExchangeCode(e.ctx, e.web, s.auth.Code, webRedirect, pkceVerifier)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	e.wantRefused(tok.AccessToken)
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	g := e.storedGrant(tok.GrantID)
	if diff := cmp.Diff([]any{at(5 * time.Minute), "code_reused"}, []any{g.RevokedAt, g.RevokeReason}); diff != "" {
		t.Errorf("grant revocation (-want +got):\n%s", diff)
	}
	// The session itself is not ended by the replay.
	if _, err := e.ws.VerifySession(e.ctx, s.sessionToken); err != nil {
		t.Errorf("VerifySession after a replay: %v", err)
	}
}

// TestRefreshTokensRotation: a refresh token is exchanged once for new
// tokens and a new refresh token; presented again it is refused, revokes
// the whole family and emits token.refresh_reused, once.
func TestRefreshTokensRotation(t *testing.T) {
	e := newOIDCEnv(t, nil)
	hook := e.hook(identity.EventTokenRefreshReused)
	tok1, s := e.codeTokens()
	e.clock.Advance(time.Minute)
	tok2, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok1.RefreshToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := identity.Tokens{TokenType: "Bearer", ExpiresAt: at(11 * time.Minute), Scopes: []string{"openid", "profile", "email"}}
	if diff := cmp.Diff(wantTokens, tok2, ignoreTokenStrings); diff != "" {
		t.Errorf("Tokens (-want +got):\n%s", diff)
	}
	if tok2.GrantID != tok1.GrantID || tok2.RefreshToken == tok1.RefreshToken || !refreshPattern.MatchString(tok2.RefreshToken) {
		t.Errorf("grant %q -> %q, refresh %q -> %q: want the same grant and a new refresh token", tok1.GrantID, tok2.GrantID, tok1.RefreshToken, tok2.RefreshToken)
	}
	access := claimsOf(t, tok2.AccessToken)
	takeShaped(t, access, "jti", jtiPattern)
	wantAccess := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "client_id": e.web.ID, "scope": "openid profile email",
		"exp": float64(t0Unix + 660), "iat": float64(t0Unix + 60), "auth_time": float64(t0Unix), "sid": s.session.ID,
	}
	if diff := cmp.Diff(wantAccess, access); diff != "" {
		t.Errorf("refreshed access claims (-want +got):\n%s", diff)
	}
	// OpenID Connect Core 12.2: same iss, sub, aud, azp; iat now;
	// auth_time and amr the original sign-in's.
	wantID := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "azp": e.web.ID,
		"exp": float64(t0Unix + 660), "iat": float64(t0Unix + 60), "auth_time": float64(t0Unix),
		"sid": s.session.ID, "at_hash": atHash(tok2.AccessToken), "amr": []any{"pwd"},
		"preferred_username": "ada", "name": "Ada Lovelace", "updated_at": float64(t0Unix),
		"email": "ada@example.com", "email_verified": false,
	}
	if diff := cmp.Diff(wantID, claimsOf(t, tok2.IDToken)); diff != "" {
		t.Errorf("refreshed ID claims (-want +got):\n%s", diff)
	}
	// Rotation alone revokes nothing.
	e.wantActive(tok1.AccessToken)
	e.wantActive(tok2.AccessToken)

	e.clock.Advance(time.Minute)
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tok1.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	want := []string{`{"type":"token.refresh_reused","timestamp":"2026-03-14T15:11:26.535897Z","data":{"grantId":"` +
		tok1.GrantID + `","clientId":"` + e.web.ID + `","userId":1}}`}
	if diff := cmp.Diff(want, e.payloads(hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tok2.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	e.wantRefused(tok1.AccessToken)
	e.wantRefused(tok2.AccessToken)
	g := e.storedGrant(tok1.GrantID)
	if diff := cmp.Diff([]any{at(2 * time.Minute), "refresh_reused"}, []any{g.RevokedAt, g.RevokeReason}); diff != "" {
		t.Errorf("grant revocation (-want +got):\n%s", diff)
	}
	// Presented once more: refused, no second event.
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tok1.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	if n := len(e.payloads(hook)); n != 1 {
		t.Errorf("%d token.refresh_reused events, want 1", n)
	}
	// Another grant of the same user and session lives on.
	tok3, _ := e.codeTokens()
	if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok3.RefreshToken, nil); err != nil {
		t.Errorf("refresh of another grant: %v", err)
	}
}

// TestRefreshTokensExpiry: each refresh token waits at most the sliding
// lifetime (30 days), and no refresh token outlives the grant's absolute
// lifetime (90 days), whatever the chain of refreshes.
func TestRefreshTokensExpiry(t *testing.T) {
	tests := []struct {
		name      string
		lifetimes *identity.TokenLifetimes
		steps     []time.Duration // refreshes that must succeed, at these times
		// wantLast is when the refresh token of the last step expires.
		wantLast time.Duration
		final    time.Duration // the refresh tried last
		code     identity.Code
	}{
		{"sliding: 1µs before 30 days", nil, nil, 30 * day, 30*day - time.Microsecond, ""},
		{"sliding: at 30 days", nil, nil, 30 * day, 30 * day, identity.CodeInvalidGrant},
		{"sliding again after a refresh", nil, []time.Duration{20 * day}, 50 * day, 50 * day, identity.CodeInvalidGrant},
		{"sliding again after a refresh, 1µs before", nil, []time.Duration{20 * day}, 50 * day, 50*day - time.Microsecond, ""},
		{"absolute: 1µs before 90 days", nil, []time.Duration{29 * day, 58 * day, 87 * day}, 90 * day, 90*day - time.Microsecond, ""},
		{"absolute: at 90 days", nil, []time.Duration{29 * day, 58 * day, 87 * day}, 90 * day, 90 * day, identity.CodeInvalidGrant},
		{"custom sliding hour", &identity.TokenLifetimes{Refresh: time.Hour}, nil, time.Hour, time.Hour, identity.CodeInvalidGrant},
		{"custom sliding hour, 1µs before", &identity.TokenLifetimes{Refresh: time.Hour}, nil, time.Hour, time.Hour - time.Microsecond, ""},
		{"absolute shorter than sliding", &identity.TokenLifetimes{RefreshMax: time.Hour}, nil, time.Hour, time.Hour, identity.CodeInvalidGrant},
		{"absolute shorter than sliding, 1µs before", &identity.TokenLifetimes{RefreshMax: time.Hour}, nil, time.Hour, time.Hour - time.Microsecond, ""},
		{"custom absolute through refreshes", &identity.TokenLifetimes{Refresh: time.Hour, RefreshMax: 2 * time.Hour},
			[]time.Duration{59 * time.Minute, 118 * time.Minute}, 2 * time.Hour, 2 * time.Hour, identity.CodeInvalidGrant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.TokenLifetimes = tt.lifetimes
			e := newOIDCEnv(t, opts)
			tok, _ := e.codeTokens()
			refresh := tok.RefreshToken
			for _, step := range tt.steps {
				e.clock.Set(at(step))
				next, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, refresh, nil)
				if err != nil {
					t.Fatalf("refresh at %v: %v", step, err)
				}
				refresh = next.RefreshToken
			}
			in, err := e.ws.Provider().IntrospectToken(e.ctx, e.web, refresh)
			if err != nil || !in.Active || !in.ExpiresAt.Equal(at(tt.wantLast)) {
				t.Errorf("last refresh token: active %v, expires %v (err %v); want active, expiring at %v", in.Active, in.ExpiresAt, err, at(tt.wantLast))
			}
			e.clock.Set(at(tt.final))
			_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, refresh, nil)
			identitytest.WantCode(t, err, tt.code)
		})
	}
}

// TestRefreshTokensScopes: scopes may narrow the grant's (the next
// refresh without scopes gets them all back) and never widen it
// (CodeInvalid on "scope", the refresh token left unused).
func TestRefreshTokensScopes(t *testing.T) {
	tests := []struct {
		name      string
		scopes    []string
		code      identity.Code
		wantScope string
		wantID    []string // the standard claims of the ID token; nil: none
	}{
		{"none: all of the grant's", nil, "", "openid profile", []string{"name", "preferred_username", "updated_at"}},
		{"empty: all of the grant's", []string{}, "", "openid profile", []string{"name", "preferred_username", "updated_at"}},
		{"the same", []string{"openid", "profile"}, "", "openid profile", []string{"name", "preferred_username", "updated_at"}},
		{"narrowed to openid", []string{"openid"}, "", "openid", []string{}},
		{"narrowed to profile: no ID token", []string{"profile"}, "", "profile", nil},
		{"in another order", []string{"profile", "openid"}, "", "profile openid", []string{"name", "preferred_username", "updated_at"}},
		{"widened with email", []string{"openid", "email"}, identity.CodeInvalid, "", nil},
		{"an unknown scope", []string{"openid", "offline_access"}, identity.CodeInvalid, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, _ := e.codeTokens("openid", "profile")
			got, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, tt.scopes)
			identitytest.WantCode(t, err, tt.code)
			if err != nil {
				identitytest.WantFields(t, err, field("scope", "unknown"))
				// Refused before use: the token still works.
				if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil); err != nil {
					t.Errorf("refresh after a refused one: %v", err)
				}
				return
			}
			if diff := cmp.Diff(strings.Fields(tt.wantScope), got.Scopes); diff != "" {
				t.Errorf("Scopes (-want +got):\n%s", diff)
			}
			if s := claimsOf(t, got.AccessToken)["scope"]; s != tt.wantScope {
				t.Errorf("scope claim %q, want %q", s, tt.wantScope)
			}
			if tt.wantID == nil {
				if got.IDToken != "" {
					t.Errorf("ID token without openid")
				}
			} else {
				var standard []string
				for _, c := range []string{"name", "preferred_username", "updated_at", "email", "email_verified"} {
					if _, ok := claimsOf(t, got.IDToken)[c]; ok {
						standard = append(standard, c)
					}
				}
				if diff := cmp.Diff(tt.wantID, standard, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("ID token standard claims (-want +got):\n%s", diff)
				}
			}
			if vt := e.wantActive(got.AccessToken); strings.Join(vt.Scopes, " ") != tt.wantScope {
				t.Errorf("verified scopes %v, want %q", vt.Scopes, tt.wantScope)
			}
			// The grant keeps its scopes: the next refresh without scopes
			// has them all.
			again, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, got.RefreshToken, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"openid", "profile"}, again.Scopes); diff != "" {
				t.Errorf("scopes of the next refresh (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefreshTokensRefusals: refresh tokens refused for who presents them
// or what they are.
func TestRefreshTokensRefusals(t *testing.T) {
	tests := []struct {
		name string
		call func(e *oidcEnv, tok identity.Tokens) error
		code identity.Code
		// unused: the web client's refresh token must still work after.
		unused bool
	}{
		{"another (public) client", func(e *oidcEnv, tok identity.Tokens) error {
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.spa, tok.RefreshToken, nil)
			return err
		}, identity.CodeInvalidGrant, true},
		{"another confidential client", func(e *oidcEnv, tok identity.Tokens) error {
			other := e.client(identity.NewClient{Name: "Other", RedirectURIs: []string{webRedirect}}).Client
			_, err := e.ws.Provider().RefreshTokens(e.ctx, other, tok.RefreshToken, nil)
			return err
		}, identity.CodeInvalidGrant, true},
		{"client without refresh_token", func(e *oidcEnv, tok identity.Tokens) error {
			codeOnly := e.client(identity.NewClient{Name: "Code only", RedirectURIs: []string{webRedirect},
				GrantTypes: []identity.GrantType{identity.GrantAuthorizationCode}}).Client
			_, err := e.ws.Provider().RefreshTokens(e.ctx, codeOnly, tok.RefreshToken, nil)
			return err
		}, identity.CodeForbidden, true},
		{"client_credentials client", func(e *oidcEnv, tok identity.Tokens) error {
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.machine, tok.RefreshToken, nil)
			return err
		}, identity.CodeForbidden, true},
		{"malformed", func(e *oidcEnv, tok identity.Tokens) error {
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, "idrt_x", nil)
			return err
		}, identity.CodeInvalidGrant, true},
		{"unknown", func(e *oidcEnv, tok identity.Tokens) error {
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, "idrt_0000000000000000"+tok.RefreshToken[len("idrt_0000000000000000"):], nil)
			return err
		}, identity.CodeInvalidGrant, true},
		{"wrong secret", func(e *oidcEnv, tok identity.Tokens) error {
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken[:len(tok.RefreshToken)-43]+strings.Repeat("A", 43), nil)
			return err
		}, identity.CodeInvalidGrant, true},
		{"an access token", func(e *oidcEnv, tok identity.Tokens) error {
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.AccessToken, nil)
			return err
		}, identity.CodeInvalidGrant, true},
		{"revoked grant", func(e *oidcEnv, tok identity.Tokens) error {
			if err := e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken); err != nil {
				e.t.Fatal(err)
			}
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			return err
		}, identity.CodeInvalidGrant, false},
		{"user disabled in the store, grant not revoked", func(e *oidcEnv, tok identity.Tokens) error {
			e.disableInStoreOnly(e.ada.ID, true)
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			e.disableInStoreOnly(e.ada.ID, false)
			return err
		}, identity.CodeInvalidGrant, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, _ := e.codeTokens()
			identitytest.WantCode(t, tt.call(e, tok), tt.code)
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			if tt.unused && err != nil {
				t.Errorf("the refresh token no longer works after the refusal: %v", err)
			}
		})
	}
}

// TestRefreshAfterDisableUser: DisableUser revokes the user's grants, so a
// refresh token fails even after the user is enabled again; a fresh
// sign-in works.
func TestRefreshAfterDisableUser(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok, _ := e.codeTokens()
	other, _ := e.codeTokens("openid")
	e.clock.Advance(time.Minute)
	if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{tok.GrantID, other.GrantID} {
		g := e.storedGrant(id)
		if diff := cmp.Diff([]any{at(time.Minute), "user_disabled"}, []any{g.RevokedAt, g.RevokeReason}); diff != "" {
			t.Errorf("grant %s revocation (-want +got):\n%s", id, diff)
		}
	}
	_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	if err := e.ws.EnableUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	e.wantRefused(tok.AccessToken)

	fresh, _ := e.codeTokens()
	if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, fresh.RefreshToken, nil); err != nil {
		t.Errorf("refresh after a fresh sign-in: %v", err)
	}
}

// TestClientCredentialsTokens: a client's own token: sub is the client,
// no user claims, no ID or refresh token, no scopes.
func TestClientCredentialsTokens(t *testing.T) {
	tests := []struct {
		name      string
		lifetimes *identity.TokenLifetimes
		exp       int64
		expiresAt time.Time
	}{
		{"default lifetime", nil, t0Unix + 600, at(10 * time.Minute)},
		{"access 5 minutes", &identity.TokenLifetimes{Access: 5 * time.Minute, ID: time.Hour}, t0Unix + 300, at(5 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.TokenLifetimes = tt.lifetimes
			e := newOIDCEnv(t, opts)
			e.withMappers()
			tok, err := e.ws.Provider().ExchangeClientCredentials(e.ctx, e.machine, []string{"openid", "profile", "email"})
			if err != nil {
				t.Fatal(err)
			}
			want := identity.Tokens{TokenType: "Bearer", ExpiresAt: tt.expiresAt, Scopes: []string{}}
			if diff := cmp.Diff(want, tok, cmpopts.IgnoreFields(identity.Tokens{}, "AccessToken", "GrantID")); diff != "" {
				t.Errorf("Tokens (-want +got):\n%s", diff)
			}
			access := claimsOf(t, tok.AccessToken)
			if jti := takeShaped(t, access, "jti", jtiPattern); !strings.HasPrefix(jti, tok.GrantID+".") {
				t.Errorf("jti %q, grant %q", jti, tok.GrantID)
			}
			wantClaims := map[string]any{
				"iss": acmeIssuer, "sub": e.machine.ID, "aud": e.machine.ID, "client_id": e.machine.ID, "scope": "",
				"exp": float64(tt.exp), "iat": float64(t0Unix),
			}
			if diff := cmp.Diff(wantClaims, access); diff != "" {
				t.Errorf("access claims (-want +got):\n%s", diff)
			}
			got := e.wantActive(tok.AccessToken)
			wantVerified := identity.VerifiedToken{
				ID: got.ID, Subject: e.machine.ID, ClientID: e.machine.ID, Scopes: []string{}, GrantID: tok.GrantID,
				IssuedAt: time.Unix(t0Unix, 0).UTC(), ExpiresAt: time.Unix(tt.exp, 0).UTC(), Claims: map[string]any{},
			}
			if diff := cmp.Diff(wantVerified, got); diff != "" {
				t.Errorf("VerifiedToken (-want +got):\n%s", diff)
			}
			wantGrant := store.Grant{ID: tok.GrantID, ClientID: e.machine.ID, Scopes: []string{}, CreatedAt: t0, ExpiresAt: tt.expiresAt}
			if diff := cmp.Diff(wantGrant, e.storedGrant(tok.GrantID)); diff != "" {
				t.Errorf("stored grant (-want +got):\n%s", diff)
			}
			_, err = e.ws.Provider().GetUserInfo(e.ctx, tok.AccessToken)
			identitytest.WantCode(t, err, identity.CodeForbidden)
			// exp + 30 s.
			e.clock.Set(time.Unix(tt.exp+30, 0).Add(-time.Microsecond))
			e.wantActive(tok.AccessToken)
			e.clock.Set(time.Unix(tt.exp+30, 0))
			e.wantRefused(tok.AccessToken)
		})
	}
}

// TestClientCredentialsRefusals: a public client, or one without the
// grant, is CodeForbidden.
func TestClientCredentialsRefusals(t *testing.T) {
	tests := []struct {
		name   string
		client func(e *oidcEnv) identity.OAuthClient
		code   identity.Code
	}{
		{"the machine client", func(e *oidcEnv) identity.OAuthClient { return e.machine }, ""},
		{"client with every grant", func(e *oidcEnv) identity.OAuthClient {
			return e.client(identity.NewClient{RedirectURIs: []string{webRedirect}, GrantTypes: identity.GrantTypes()}).Client
		}, ""},
		{"public client claiming the grant", func(e *oidcEnv) identity.OAuthClient {
			c := e.spa
			c.GrantTypes = []identity.GrantType{identity.GrantClientCredentials}
			return c
		}, identity.CodeForbidden},
		{"public client", func(e *oidcEnv) identity.OAuthClient { return e.spa }, identity.CodeForbidden},
		{"confidential client without the grant", func(e *oidcEnv) identity.OAuthClient { return e.web }, identity.CodeForbidden},
		{"deleted client", func(e *oidcEnv) identity.OAuthClient {
			if err := e.ws.DeleteClient(e.ctx, e.machine.ID); err != nil {
				e.t.Fatal(err)
			}
			return e.machine
		}, identity.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, err := e.ws.Provider().ExchangeClientCredentials(e.ctx, tt.client(e), nil)
			identitytest.WantCode(t, err, tt.code)
			if err == nil && (tok.IDToken != "" || tok.RefreshToken != "") {
				t.Errorf("client credentials gave an ID or refresh token: %+v", tok)
			}
		})
	}
}

// TestAccessTokenWithinGrant: "ExpiresAt is the absolute end of the
// family: no token of it lives longer" (store.Grant). An access token
// refreshed a minute before the grant's 90 days end must not claim to
// live past them: a resource server that checks the signature and exp
// alone would accept it for 9 minutes more, while VerifyAccessToken
// refuses it 30 s after the grant's end.
func TestAccessTokenWithinGrant(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok, _ := e.codeTokens()
	grantEnd := at(90 * day)
	last := tok
	for _, when := range []time.Time{at(29 * day), at(58 * day), at(87 * day), grantEnd.Add(-time.Minute)} {
		e.clock.Set(when)
		next, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, last.RefreshToken, nil)
		if err != nil {
			t.Fatalf("refresh at %v: %v", when, err)
		}
		last = next
	}
	exp := int64(claimsOf(t, last.AccessToken)["exp"].(float64))
	if exp > grantEnd.Unix() || last.ExpiresAt.After(grantEnd) {
		t.Errorf("access token exp %v (ExpiresAt %v) is after the grant's end %v", time.Unix(exp, 0).UTC(), last.ExpiresAt, grantEnd)
	}
	e.clock.Set(grantEnd.Add(-time.Microsecond))
	e.wantActive(last.AccessToken)
}

// otherLastChar returns s with its last character changed: a secret
// that is certainly wrong.
func otherLastChar(s string) string {
	if s[len(s)-1] == 'A' {
		return s[:len(s)-1] + "B"
	}
	return s[:len(s)-1] + "A"
}

// TestVerifyClient: how a token endpoint authenticates the client of a
// request: a confidential client with its secret, a public client without
// one; anything else is CodeUnauthenticated.
func TestVerifyClient(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tests := []struct {
		name       string
		id, secret string
		want       string // the client's id; "" for a refusal
	}{
		{"confidential with its secret", e.web.ID, e.webSecret, e.web.ID},
		{"confidential with a wrong secret", e.web.ID, otherLastChar(e.webSecret), ""},
		{"confidential without a secret", e.web.ID, "", ""},
		{"public without a secret", e.spa.ID, "", e.spa.ID},
		{"public with a secret", e.spa.ID, e.webSecret, ""},
		{"unknown without a secret", "idc_0000000000000000", "", ""},
		{"unknown with a secret", "idc_0000000000000000", e.webSecret, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := e.ws.Provider().VerifyClient(e.ctx, tt.id, tt.secret)
			if tt.want == "" {
				identitytest.WantCode(t, err, identity.CodeUnauthenticated)
				return
			}
			if err != nil || c.ID != tt.want {
				t.Errorf("VerifyClient = %q, %v; want %q", c.ID, err, tt.want)
			}
		})
	}
}
