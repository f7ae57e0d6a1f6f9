package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// The provider's other endpoints: RevokeToken (RFC 7009), IntrospectToken
// (RFC 7662), UserInfo and EndSession (RP-initiated logout).

// betaAccessToken issues an access token in a second workspace, beta,
// of the same Service.
func (e *oidcEnv) betaAccessToken() string {
	e.t.Helper()
	beta, err := e.svc.CreateWorkspace(e.ctx, "beta", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := beta.CreateUser(e.ctx, newUserNamed("bob"))
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := beta.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{webRedirect}})
	if err != nil {
		e.t.Fatal(err)
	}
	tok, err := beta.IssueTokens(e.ctx, identity.TokenRequest{ClientID: c.Client.ID, UserID: u.ID, Scopes: []string{"openid"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.AccessToken
}

// TestRevokeToken: revoking an access or refresh token revokes its
// grant, every token of it; another client's token is CodeForbidden and
// stays; anything that is not a token of the workspace is nothing to
// revoke.
func TestRevokeToken(t *testing.T) {
	tests := []struct {
		name    string
		revoke  func(e *oidcEnv, tok identity.Tokens) error
		code    identity.Code
		revoked bool // the web client's grant is revoked after
	}{
		{"refresh token", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.web, tok.RefreshToken)
		}, "", true},
		{"access token", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken)
		}, "", true},
		{"expired access token", func(e *oidcEnv, tok identity.Tokens) error {
			e.clock.Advance(time.Hour)
			return e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken)
		}, "", true},
		{"twice", func(e *oidcEnv, tok identity.Tokens) error {
			if err := e.ws.Provider().RevokeToken(e.ctx, e.web, tok.RefreshToken); err != nil {
				return err
			}
			return e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken)
		}, "", true},
		{"another client's refresh token", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.spa, tok.RefreshToken)
		}, identity.CodeForbidden, false},
		{"another client's access token", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.machine, tok.AccessToken)
		}, identity.CodeForbidden, false},
		{"garbage", func(e *oidcEnv, _ identity.Tokens) error { return e.ws.Provider().RevokeToken(e.ctx, e.web, "garbage") }, "", false},
		{"empty", func(e *oidcEnv, _ identity.Tokens) error { return e.ws.Provider().RevokeToken(e.ctx, e.web, "") }, "", false},
		{"unknown refresh token", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.web, "idrt_0000000000000000"+tok.RefreshToken[len("idrt_0000000000000000"):])
		}, "", false},
		{"refresh token with a wrong secret", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.web, otherSecret(tok.RefreshToken))
		}, "", false},
		{"ID token", func(e *oidcEnv, tok identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.web, tok.IDToken)
		}, "", false},
		{"another workspace's access token", func(e *oidcEnv, _ identity.Tokens) error {
			return e.ws.Provider().RevokeToken(e.ctx, e.web, e.betaAccessToken())
		}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, _ := e.codeTokens()
			identitytest.WantCode(t, tt.revoke(e, tok), tt.code)
			e.clock.Set(t0)
			g := e.storedGrant(tok.GrantID)
			if !tt.revoked {
				if !g.RevokedAt.IsZero() {
					t.Fatalf("grant revoked: %+v", g)
				}
				e.wantActive(tok.AccessToken)
				return
			}
			if g.RevokeReason != "revoked" || g.RevokedAt.IsZero() {
				t.Errorf("grant RevokedAt %v, RevokeReason %q; want revoked, reason revoked", g.RevokedAt, g.RevokeReason)
			}
			e.wantRefused(tok.AccessToken)
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			identitytest.WantCode(t, err, identity.CodeInvalidGrant)
		})
	}
}

// TestRevokeClientCredentialsToken: a client revokes its own token.
func TestRevokeClientCredentialsToken(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok, err := e.ws.Provider().ExchangeClientCredentials(e.ctx, e.machine, nil)
	if err != nil {
		t.Fatal(err)
	}
	identitytest.WantCode(t, e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken), identity.CodeForbidden)
	e.wantActive(tok.AccessToken)
	if err := e.ws.Provider().RevokeToken(e.ctx, e.machine, tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	e.wantRefused(tok.AccessToken)
}

// TestIntrospectToken: what IntrospectToken tells of active tokens, field
// by field, and that every token that is not active is just that.
func TestIntrospectToken(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok, _ := e.codeTokens("openid", "profile")
	machine, err := e.ws.Provider().ExchangeClientCredentials(e.ctx, e.machine, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	tests := []struct {
		name   string
		client identity.OAuthClient
		token  string
		want   identity.Introspection
	}{
		{"access token", e.web, tok.AccessToken, identity.Introspection{
			Active: true, TokenType: "access_token", Scopes: []string{"openid", "profile"}, ClientID: e.web.ID,
			Subject: "1", UserID: 1, Issuer: acmeIssuer, ID: claimsOf(t, tok.AccessToken)["jti"].(string), Audience: e.web.ID,
			IssuedAt: time.Unix(t0Unix, 0).UTC(), ExpiresAt: time.Unix(t0Unix+600, 0).UTC(),
		}},
		{"refresh token", e.web, tok.RefreshToken, identity.Introspection{
			Active: true, TokenType: "refresh_token", Scopes: []string{"openid", "profile"}, ClientID: e.web.ID,
			Subject: "1", UserID: 1, Issuer: acmeIssuer, Audience: e.web.ID, IssuedAt: t0, ExpiresAt: at(30 * day),
		}},
		{"access token, asked by another confidential client", e.machine, tok.AccessToken, identity.Introspection{
			Active: true, TokenType: "access_token", Scopes: []string{"openid", "profile"}, ClientID: e.web.ID,
			Subject: "1", UserID: 1, Issuer: acmeIssuer, ID: claimsOf(t, tok.AccessToken)["jti"].(string), Audience: e.web.ID,
			IssuedAt: time.Unix(t0Unix, 0).UTC(), ExpiresAt: time.Unix(t0Unix+600, 0).UTC(),
		}},
		{"client credentials token", e.web, machine.AccessToken, identity.Introspection{
			Active: true, TokenType: "access_token", Scopes: []string{}, ClientID: e.machine.ID,
			Subject: e.machine.ID, Issuer: acmeIssuer, ID: claimsOf(t, machine.AccessToken)["jti"].(string), Audience: e.machine.ID,
			IssuedAt: time.Unix(t0Unix, 0).UTC(), ExpiresAt: time.Unix(t0Unix+600, 0).UTC(),
		}},
		{"ID token", e.web, tok.IDToken, identity.Introspection{}},
		{"garbage", e.web, "garbage", identity.Introspection{}},
		{"another workspace's token", e.web, e.betaAccessToken(), identity.Introspection{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.ws.Provider().IntrospectToken(e.ctx, tt.client, tt.token)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Introspection (-want +got):\n%s", diff)
			}
		})
	}
	_, err = e.ws.Provider().IntrospectToken(e.ctx, e.spa, tok.AccessToken)
	identitytest.WantCode(t, err, identity.CodeForbidden)
}

// TestIntrospectInactive: tokens revoked, used, expired or of a disabled
// user are not active, and nothing else is told.
func TestIntrospectInactive(t *testing.T) {
	tests := []struct {
		name  string
		token func(e *oidcEnv, tok identity.Tokens) string
	}{
		{"revoked access token", func(e *oidcEnv, tok identity.Tokens) string {
			if err := e.ws.Provider().RevokeToken(e.ctx, e.web, tok.RefreshToken); err != nil {
				e.t.Fatal(err)
			}
			return tok.AccessToken
		}},
		{"revoked refresh token", func(e *oidcEnv, tok identity.Tokens) string {
			if err := e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken); err != nil {
				e.t.Fatal(err)
			}
			return tok.RefreshToken
		}},
		{"used refresh token", func(e *oidcEnv, tok identity.Tokens) string {
			if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil); err != nil {
				e.t.Fatal(err)
			}
			return tok.RefreshToken
		}},
		{"refresh token at 30 days", func(e *oidcEnv, tok identity.Tokens) string {
			e.clock.Set(at(30 * day))
			return tok.RefreshToken
		}},
		{"access token at exp + 30 s", func(e *oidcEnv, tok identity.Tokens) string {
			e.clock.Set(time.Unix(t0Unix+630, 0))
			return tok.AccessToken
		}},
		{"refresh token of a user disabled in the store", func(e *oidcEnv, tok identity.Tokens) string {
			e.disableInStoreOnly(e.ada.ID, true)
			return tok.RefreshToken
		}},
		{"access token of a user disabled in the store", func(e *oidcEnv, tok identity.Tokens) string {
			e.disableInStoreOnly(e.ada.ID, true)
			return tok.AccessToken
		}},
		{"refresh token with a wrong secret", func(_ *oidcEnv, tok identity.Tokens) string {
			return otherLastChar(tok.RefreshToken)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, _ := e.codeTokens()
			token := tt.token(e, tok)
			got, err := e.ws.Provider().IntrospectToken(e.ctx, e.web, token)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(identity.Introspection{}, got); diff != "" {
				t.Errorf("Introspection (-want +got):\n%s", diff)
			}
		})
	}
	// The boundaries from the other side: still active.
	e := newOIDCEnv(t, nil)
	tok, _ := e.codeTokens()
	e.clock.Set(time.Unix(t0Unix+630, 0).Add(-time.Microsecond))
	if in, err := e.ws.Provider().IntrospectToken(e.ctx, e.web, tok.AccessToken); err != nil || !in.Active {
		t.Errorf("access token 1µs before exp + 30 s: %+v, %v", in, err)
	}
	e.clock.Set(at(30*day - time.Microsecond))
	if in, err := e.ws.Provider().IntrospectToken(e.ctx, e.web, tok.RefreshToken); err != nil || !in.Active {
		t.Errorf("refresh token 1µs before 30 days: %+v, %v", in, err)
	}
}

// TestUserInfo: the user's claims as they are now, by the token's scopes,
// with the mappers' IncludeInID claims.
func TestUserInfo(t *testing.T) {
	tests := []struct {
		name   string
		scopes []string
		want   map[string]any
	}{
		{"openid profile email", []string{"openid", "profile", "email"}, map[string]any{
			"sub": "1", "preferred_username": "ada", "name": "Ada Lovelace", "updated_at": int64(t0Unix),
			"email": "ada@example.com", "email_verified": false, "tier": "gold", "region": "eu",
		}},
		{"openid", []string{"openid"}, map[string]any{"sub": "1", "tier": "gold", "region": "eu"}},
		{"openid email", []string{"openid", "email"}, map[string]any{
			"sub": "1", "email": "ada@example.com", "email_verified": false, "tier": "gold", "region": "eu",
		}},
		{"openid profile", []string{"openid", "profile"}, map[string]any{
			"sub": "1", "preferred_username": "ada", "name": "Ada Lovelace", "updated_at": int64(t0Unix), "tier": "gold", "region": "eu",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			e.withMappers()
			tok, _ := e.codeTokens(tt.scopes...)
			got, err := e.ws.Provider().GetUserInfo(e.ctx, tok.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("UserInfo (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserInfoIsCurrent: UserInfo reads the user and attributes at the
// time of the call, not at the token's issue.
func TestUserInfoIsCurrent(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.withMappers()
	tok, _ := e.codeTokens()
	e.clock.Advance(time.Minute)
	if _, err := e.ws.UpdateUser(e.ctx, e.ada.ID, identity.UserUpdate{Email: "ada@example.com", FullName: "Ada King"}); err != nil {
		t.Fatal(err)
	}
	e.attr(e.ada.ID, "tier", "platinum")
	if err := e.ws.DeleteClaimMapper(e.ctx, "region"); err != nil {
		t.Fatal(err)
	}
	got, err := e.ws.Provider().GetUserInfo(e.ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"sub": "1", "preferred_username": "ada", "name": "Ada King", "updated_at": int64(t0Unix + 60),
		"email": "ada@example.com", "email_verified": false, "tier": "platinum",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UserInfo (-want +got):\n%s", diff)
	}
}

// TestUserInfoRefusals: a token without openid, a client's own token
// (CodeForbidden), a token that does not verify (CodeUnauthenticated).
func TestUserInfoRefusals(t *testing.T) {
	tests := []struct {
		name  string
		token func(e *oidcEnv) string
		code  identity.Code
	}{
		{"no openid scope", func(e *oidcEnv) string {
			return e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"profile", "email"}}).AccessToken
		}, identity.CodeForbidden},
		{"client credentials token", func(e *oidcEnv) string {
			tok, err := e.ws.Provider().ExchangeClientCredentials(e.ctx, e.machine, []string{"openid"})
			if err != nil {
				e.t.Fatal(err)
			}
			return tok.AccessToken
		}, identity.CodeForbidden},
		{"ID token", func(e *oidcEnv) string {
			return e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}}).IDToken
		}, identity.CodeUnauthenticated},
		{"revoked token", func(e *oidcEnv) string {
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			if err := e.ws.Provider().RevokeToken(e.ctx, e.web, tok.AccessToken); err != nil {
				e.t.Fatal(err)
			}
			return tok.AccessToken
		}, identity.CodeUnauthenticated},
		{"expired token", func(e *oidcEnv) string {
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			e.clock.Set(time.Unix(t0Unix+630, 0))
			return tok.AccessToken
		}, identity.CodeUnauthenticated},
		{"garbage", func(*oidcEnv) string { return "garbage" }, identity.CodeUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			_, err := e.ws.Provider().GetUserInfo(e.ctx, tt.token(e))
			identitytest.WantCode(t, err, tt.code)
		})
	}
}

// TestEndSessionWithCookie: logging out with the provider's session
// cookie revokes that session (session.revoked, reason logout) and the
// grants issued in it, and nothing of another session; the browser goes
// to the post-logout URI with the state.
func TestEndSessionWithCookie(t *testing.T) {
	e := newOIDCEnv(t, nil)
	hook := e.hook(identity.EventSessionRevoked)
	tok, s := e.codeTokens()
	otherTok, other := e.codeTokens()
	if other.session.ID == s.session.ID {
		t.Fatal("two sign-ins share a session")
	}
	e.clock.Advance(time.Minute)
	redirect, err := e.ws.Provider().EndSession(e.ctx, identity.EndSessionRequest{
		SessionToken: s.sessionToken, ClientID: e.web.ID, PostLogoutRedirectURI: webLogout, State: "bye-state", Confirmed: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if redirect != "https://app.example.com/bye?state=bye-state" {
		t.Errorf("redirect %q", redirect)
	}
	got, err := e.ws.GetSession(e.ctx, s.session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RevokedAt == nil || !got.RevokedAt.Equal(at(time.Minute)) {
		t.Errorf("session RevokedAt %v, want %v", got.RevokedAt, at(time.Minute))
	}
	want := []string{`{"type":"session.revoked","timestamp":"2026-03-14T15:10:26.535897Z","data":{"sessionId":"` +
		s.session.ID + `","userId":1,"reason":"logout"}}`}
	if diff := cmp.Diff(want, e.payloads(hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	g := e.storedGrant(tok.GrantID)
	if diff := cmp.Diff([]any{at(time.Minute), "logout"}, []any{g.RevokedAt, g.RevokeReason}); diff != "" {
		t.Errorf("grant revocation (-want +got):\n%s", diff)
	}
	e.wantRefused(tok.AccessToken)
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	_, err = e.ws.VerifySession(e.ctx, s.sessionToken)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)

	// The other session and its grant live on.
	e.wantActive(otherTok.AccessToken)
	if _, err := e.ws.VerifySession(e.ctx, other.sessionToken); err != nil {
		t.Errorf("other session: %v", err)
	}
	// Logging out again: nothing more to revoke, no new event, and nothing
	// to confirm.
	if _, err := e.ws.Provider().EndSession(e.ctx, identity.EndSessionRequest{SessionToken: s.sessionToken}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.payloads(hook)); n != 1 {
		t.Errorf("%d session.revoked events, want 1", n)
	}
}

// TestEndSessionRequests: the redirect a logout request leads to, which
// session it ends, and the requests refused (CodeInvalid, nothing
// revoked).
func TestEndSessionRequests(t *testing.T) {
	tests := []struct {
		name string
		req  func(e *oidcEnv, tok identity.Tokens, s signedIn) identity.EndSessionRequest
		// before runs before EndSession, after the sign-in.
		before   func(e *oidcEnv)
		redirect string
		code     identity.Code
		fields   []identity.FieldError
		ended    bool // the signed-in session ends
	}{
		{name: "cookie alone asks first", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken}
		}, code: identity.CodeConfirmationRequired},
		{name: "cookie, confirmed, no redirect", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, Confirmed: true}
		}, redirect: "", ended: true},
		{name: "registered URI without state", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, ClientID: e.web.ID, PostLogoutRedirectURI: webLogout, Confirmed: true}
		}, redirect: webLogout, ended: true},
		{name: "registered URI with a query, and state", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, ClientID: e.web.ID, PostLogoutRedirectURI: webLogoutQ, State: "a b&c", Confirmed: true}
		}, redirect: "https://app.example.com/bye?lang=en&state=a+b%26c", ended: true},
		{name: "ID token hint naming the cookie's session needs no confirmation", req: func(e *oidcEnv, tok identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: tok.IDToken, SessionToken: s.sessionToken}
		}, redirect: "", ended: true},
		{name: "ID token hint of another session than the cookie's asks first", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			other, err := e.ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: e.web.ID, UserID: s.session.UserID, Scopes: []string{"openid"}, SessionID: "another-session"})
			if err != nil {
				e.t.Fatal(err)
			}
			return identity.EndSessionRequest{IDTokenHint: other.IDToken, SessionToken: s.sessionToken}
		}, code: identity.CodeConfirmationRequired},
		{name: "ID token hint alone asks first", req: func(e *oidcEnv, tok identity.Tokens, _ signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: tok.IDToken}
		}, code: identity.CodeConfirmationRequired},
		{name: "ID token hint alone, confirmed", req: func(e *oidcEnv, tok identity.Tokens, _ signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: tok.IDToken, Confirmed: true}
		}, redirect: "", ended: true},
		{name: "ID token hint gives the client of the redirect", req: func(e *oidcEnv, tok identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: tok.IDToken, SessionToken: s.sessionToken, PostLogoutRedirectURI: webLogout, State: "s1"}
		}, redirect: webLogout + "?state=s1", ended: true},
		{name: "expired ID token hint", before: func(e *oidcEnv) { e.clock.Advance(2 * time.Hour) },
			req: func(e *oidcEnv, tok identity.Tokens, s signedIn) identity.EndSessionRequest {
				return identity.EndSessionRequest{IDTokenHint: tok.IDToken, ClientID: e.web.ID, SessionToken: s.sessionToken}
			}, redirect: "", ended: true},
		{name: "no cookie, no hint", req: func(*oidcEnv, identity.Tokens, signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{}
		}, redirect: ""},
		{name: "garbage cookie", req: func(*oidcEnv, identity.Tokens, signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: "ids_garbage"}
		}, redirect: ""},
		{name: "cookie with a wrong secret", req: func(_ *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken[:len(s.sessionToken)-43] + strings.Repeat("A", 43)}
		}, redirect: ""},
		{name: "unregistered URI (trailing slash)", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, ClientID: e.web.ID, PostLogoutRedirectURI: webLogout + "/"}
		}, code: identity.CodeInvalid, fields: field("post_logout_redirect_uri", "unknown")},
		{name: "the redirect URI is not a post-logout URI", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, ClientID: e.web.ID, PostLogoutRedirectURI: webRedirect}
		}, code: identity.CodeInvalid, fields: field("post_logout_redirect_uri", "unknown")},
		{name: "URI of another client", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, ClientID: e.spa.ID, PostLogoutRedirectURI: webLogout}
		}, code: identity.CodeInvalid, fields: field("post_logout_redirect_uri", "unknown")},
		{name: "URI without a client", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{SessionToken: s.sessionToken, PostLogoutRedirectURI: webLogout}
		}, code: identity.CodeInvalid, fields: field("post_logout_redirect_uri", "unknown")},
		{name: "client_id other than the hint's audience", req: func(e *oidcEnv, tok identity.Tokens, _ signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: tok.IDToken, ClientID: e.spa.ID}
		}, code: identity.CodeInvalid, fields: field("client_id", "unknown")},
		{name: "hint of another workspace", req: func(e *oidcEnv, _ identity.Tokens, s signedIn) identity.EndSessionRequest {
			beta, err := e.svc.CreateWorkspace(e.ctx, "beta", nil)
			if err != nil {
				e.t.Fatal(err)
			}
			u, err := beta.CreateUser(e.ctx, newUserNamed("bob"))
			if err != nil {
				e.t.Fatal(err)
			}
			c, err := beta.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{webRedirect}})
			if err != nil {
				e.t.Fatal(err)
			}
			other, err := beta.IssueTokens(e.ctx, identity.TokenRequest{ClientID: c.Client.ID, UserID: u.ID, Scopes: []string{"openid"}, SessionID: s.session.ID})
			if err != nil {
				e.t.Fatal(err)
			}
			return identity.EndSessionRequest{IDTokenHint: other.IDToken}
		}, code: identity.CodeInvalid, fields: field("id_token_hint", "format")},
		{name: "access token as hint", req: func(_ *oidcEnv, tok identity.Tokens, _ signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: tok.AccessToken}
		}, code: identity.CodeInvalid, fields: field("id_token_hint", "format")},
		{name: "garbage hint", req: func(*oidcEnv, identity.Tokens, signedIn) identity.EndSessionRequest {
			return identity.EndSessionRequest{IDTokenHint: "garbage"}
		}, code: identity.CodeInvalid, fields: field("id_token_hint", "format")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, s := e.codeTokens()
			if tt.before != nil {
				tt.before(e)
			}
			redirect, err := e.ws.Provider().EndSession(e.ctx, tt.req(e, tok, s))
			identitytest.WantCode(t, err, tt.code)
			if tt.fields != nil {
				identitytest.WantFields(t, err, tt.fields)
			}
			if redirect != tt.redirect {
				t.Errorf("redirect %q, want %q", redirect, tt.redirect)
			}
			got, err := e.ws.GetSession(e.ctx, s.session.ID)
			if err != nil {
				t.Fatal(err)
			}
			if ended := got.RevokedAt != nil; ended != tt.ended {
				t.Errorf("session ended: %v, want %v", ended, tt.ended)
			}
			if g := e.storedGrant(tok.GrantID); g.RevokedAt.IsZero() == tt.ended {
				t.Errorf("grant revoked at %v, want revoked: %v", g.RevokedAt, tt.ended)
			}
		})
	}
}

// TestEndSessionCookieBeforeHint: with both a cookie and an ID token hint
// naming other sessions, the cookie's session ends.
func TestEndSessionCookieBeforeHint(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tokA, a := e.codeTokens()
	_, b := e.codeTokens()
	_, err := e.ws.Provider().EndSession(e.ctx, identity.EndSessionRequest{SessionToken: b.sessionToken, IDTokenHint: tokA.IDToken})
	identitytest.WantCode(t, err, identity.CodeConfirmationRequired)
	sb, _ := e.ws.GetSession(e.ctx, b.session.ID)
	if sb.RevokedAt != nil {
		t.Error("a hint of another session ended the cookie's without a confirmation")
	}
	if _, err := e.ws.Provider().EndSession(e.ctx, identity.EndSessionRequest{SessionToken: b.sessionToken, IDTokenHint: tokA.IDToken, Confirmed: true}); err != nil {
		t.Fatal(err)
	}
	sa, _ := e.ws.GetSession(e.ctx, a.session.ID)
	sb, _ = e.ws.GetSession(e.ctx, b.session.ID)
	if sa.RevokedAt != nil || sb.RevokedAt == nil {
		t.Errorf("session of the hint ended: %v, of the cookie: %v; want false, true", sa.RevokedAt != nil, sb.RevokedAt != nil)
	}
}
