package identity_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// IssueTokens and VerifyAccessToken: the claims and headers of access and
// ID tokens with a fixed clock, the mapped claims, and every reason a
// token is refused.

// withMappers gives the workspace four claim mappers and ada three of
// their attributes: department (access only), tier (ID only), region
// (both) and handle (both, an attribute ada lacks).
func (e *oidcEnv) withMappers() {
	e.t.Helper()
	e.mapper("dept", "department", true, false)
	e.mapper("tier", "tier", false, true)
	e.mapper("region", "region", true, true)
	e.mapper("nick", "handle", true, true)
	e.attr(e.ada.ID, "dept", "R&D")
	e.attr(e.ada.ID, "tier", "gold")
	e.attr(e.ada.ID, "region", "eu")
}

// TestIssueTokensClaims: the full claims and headers of the access and ID
// tokens IssueTokens returns, with a session started 5 minutes before.
func TestIssueTokensClaims(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.withMappers()
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	session := created.Session
	e.clock.Advance(5 * time.Minute)
	tok := e.issue(identity.TokenRequest{
		ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid", "profile", "email", "offline_access", "openid", "address"},
		Nonce: "n-0S6_WzA2Mj", SessionID: session.ID, AuthTime: session.CreatedAt,
	})
	kid := e.keyByState()[identity.KeyActive].ID

	wantTokens := identity.Tokens{TokenType: "Bearer", ExpiresAt: at(15 * time.Minute), Scopes: []string{"openid", "profile", "email"}}
	if diff := cmp.Diff(wantTokens, tok, cmpopts.IgnoreFields(identity.Tokens{}, "AccessToken", "IDToken", "RefreshToken", "GrantID")); diff != "" {
		t.Errorf("Tokens (-want +got):\n%s", diff)
	}
	if !hex16Pattern.MatchString(tok.GrantID) || !refreshPattern.MatchString(tok.RefreshToken) {
		t.Errorf("GrantID %q, RefreshToken %q: wrong shapes", tok.GrantID, tok.RefreshToken)
	}

	if diff := cmp.Diff(map[string]any{"alg": "ES256", "kid": kid, "typ": "at+jwt"}, headerOf(t, tok.AccessToken)); diff != "" {
		t.Errorf("access token header (-want +got):\n%s", diff)
	}
	access := claimsOf(t, tok.AccessToken)
	if jti := takeShaped(t, access, "jti", jtiPattern); !strings.HasPrefix(jti, tok.GrantID+".") {
		t.Errorf("jti %q does not start with the grant id %q", jti, tok.GrantID)
	}
	if !hex16Pattern.MatchString(session.ID) {
		t.Fatalf("session id %q", session.ID)
	}
	wantAccess := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "client_id": e.web.ID, "scope": "openid profile email",
		"exp": float64(t0Unix + 900), "iat": float64(t0Unix + 300), "auth_time": float64(t0Unix), "sid": session.ID,
		"department": "R&D", "region": "eu",
	}
	if diff := cmp.Diff(wantAccess, access); diff != "" {
		t.Errorf("access token claims (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff(map[string]any{"alg": "ES256", "kid": kid, "typ": "JWT"}, headerOf(t, tok.IDToken)); diff != "" {
		t.Errorf("ID token header (-want +got):\n%s", diff)
	}
	wantID := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "azp": e.web.ID,
		"exp": float64(t0Unix + 900), "iat": float64(t0Unix + 300), "auth_time": float64(t0Unix),
		"nonce": "n-0S6_WzA2Mj", "sid": session.ID, "at_hash": atHash(tok.AccessToken),
		"preferred_username": "ada", "name": "Ada Lovelace", "updated_at": float64(t0Unix),
		"email": "ada@example.com", "email_verified": false,
		"tier": "gold", "region": "eu",
	}
	if diff := cmp.Diff(wantID, claimsOf(t, tok.IDToken)); diff != "" {
		t.Errorf("ID token claims (-want +got):\n%s", diff)
	}
}

// TestIssueTokensScopes: unknown scopes are dropped, known ones kept once
// in the order given; the profile and email claims of the ID token come
// only with their scopes; no ID token without openid.
func TestIssueTokensScopes(t *testing.T) {
	profile := map[string]any{"preferred_username": "ada", "name": "Ada Lovelace", "updated_at": float64(t0Unix)}
	email := map[string]any{"email": "ada@example.com", "email_verified": false}
	both := map[string]any{}
	for k, v := range profile {
		both[k] = v
	}
	for k, v := range email {
		both[k] = v
	}
	tests := []struct {
		name      string
		scopes    []string
		verified  bool // ada's email verified
		wantScope []string
		// wantStandard are the standard claims of the ID token; nil: no
		// ID token.
		wantStandard map[string]any
	}{
		{"openid alone", []string{"openid"}, false, []string{"openid"}, map[string]any{}},
		{"openid profile", []string{"openid", "profile"}, false, []string{"openid", "profile"}, profile},
		{"openid email", []string{"openid", "email"}, false, []string{"openid", "email"}, email},
		{"email verified", []string{"openid", "email"}, true, []string{"openid", "email"}, map[string]any{"email": "ada@example.com", "email_verified": true}},
		{"all, in another order", []string{"email", "profile", "openid"}, false, []string{"email", "profile", "openid"}, both},
		{"unknown and repeated dropped", []string{"phone", "openid", "Openid", "profile", "profile", "offline_access"}, false, []string{"openid", "profile"}, profile},
		{"no openid: no ID token", []string{"profile", "email"}, false, []string{"profile", "email"}, nil},
		{"no scopes", nil, false, []string{}, nil},
		{"unknown only", []string{"address"}, false, []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			if tt.verified {
				err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
					u, err := tx.User("acme", e.ada.ID)
					if err != nil {
						return err
					}
					u.EmailVerified = true
					return tx.PutUser("acme", u)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: tt.scopes})
			if diff := cmp.Diff(tt.wantScope, tok.Scopes); diff != "" {
				t.Errorf("Scopes (-want +got):\n%s", diff)
			}
			if got, want := claimsOf(t, tok.AccessToken)["scope"], strings.Join(tt.wantScope, " "); got != want {
				t.Errorf("scope claim %q, want %q", got, want)
			}
			if tt.wantStandard == nil {
				if tok.IDToken != "" {
					t.Errorf("ID token issued without openid: %v", claimsOf(t, tok.IDToken))
				}
				return
			}
			id := claimsOf(t, tok.IDToken)
			for _, c := range []string{"iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "at_hash"} {
				delete(id, c)
			}
			if diff := cmp.Diff(tt.wantStandard, id); diff != "" {
				t.Errorf("ID token standard claims (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIssueTokensMappedClaims: a mapper's claim goes into the access token
// with IncludeInAccess, into the ID token with IncludeInID, into both with
// both, and nowhere when the user lacks the attribute.
func TestIssueTokensMappedClaims(t *testing.T) {
	tests := []struct {
		name       string
		access, id bool
		has        bool // ada has the attribute
		inAccess   bool
		inID       bool
	}{
		{"access only", true, false, true, true, false},
		{"ID only", false, true, true, false, true},
		{"both", true, true, true, true, true},
		{"neither", false, false, true, false, false},
		{"attribute missing", true, true, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			e.mapper("dept", "department", tt.access, tt.id)
			bob := e.user("bob")
			e.attr(bob.ID, "dept", "Sales")
			if tt.has {
				e.attr(e.ada.ID, "dept", "R&D")
			}
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			for _, c := range []struct {
				what  string
				token string
				want  bool
			}{{"access", tok.AccessToken, tt.inAccess}, {"ID", tok.IDToken, tt.inID}} {
				got, ok := claimsOf(t, c.token)["department"]
				switch {
				case c.want && got != "R&D":
					t.Errorf("%s token department = %v, want R&D", c.what, got)
				case !c.want && ok:
					t.Errorf("%s token has department = %v, want none", c.what, got)
				}
			}
			wantClaims := map[string]any{}
			if tt.inAccess {
				wantClaims["department"] = "R&D"
			}
			if diff := cmp.Diff(wantClaims, e.wantActive(tok.AccessToken).Claims); diff != "" {
				t.Errorf("VerifiedToken.Claims (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIssueTokensAfterDeleteClaimMapper: once a mapper is deleted the next
// tokens lack its claim, while a token issued before still verifies with
// it.
func TestIssueTokensAfterDeleteClaimMapper(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.withMappers()
	req := identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}}
	before := e.issue(req)
	if err := e.ws.DeleteClaimMapper(e.ctx, "region"); err != nil {
		t.Fatal(err)
	}
	after := e.issue(req)
	for _, tc := range []struct {
		what  string
		token string
		want  map[string]any
	}{
		{"access token after", after.AccessToken, map[string]any{"department": "R&D"}},
		{"ID token after", after.IDToken, map[string]any{"tier": "gold"}},
		{"access token before", before.AccessToken, map[string]any{"department": "R&D", "region": "eu"}},
		{"ID token before", before.IDToken, map[string]any{"tier": "gold", "region": "eu"}},
	} {
		got := map[string]any{}
		for _, name := range []string{"department", "tier", "region", "handle"} {
			if v, ok := claimsOf(t, tc.token)[name]; ok {
				got[name] = v
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: mapped claims (-want +got):\n%s", tc.what, diff)
		}
	}
	if diff := cmp.Diff(map[string]any{"department": "R&D", "region": "eu"}, e.wantActive(before.AccessToken).Claims); diff != "" {
		t.Errorf("earlier token's verified claims (-want +got):\n%s", diff)
	}
}

// TestIssueTokensWithoutSession: without SessionID, Nonce and AuthTime
// the tokens carry no sid and no nonce, and auth_time is the time of
// issue.
func TestIssueTokensWithoutSession(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
	access := claimsOf(t, tok.AccessToken)
	takeShaped(t, access, "jti", jtiPattern)
	wantAccess := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "client_id": e.web.ID, "scope": "openid",
		"exp": float64(t0Unix + 600), "iat": float64(t0Unix), "auth_time": float64(t0Unix),
	}
	if diff := cmp.Diff(wantAccess, access); diff != "" {
		t.Errorf("access claims (-want +got):\n%s", diff)
	}
	wantID := map[string]any{
		"iss": acmeIssuer, "sub": "1", "aud": e.web.ID, "azp": e.web.ID,
		"exp": float64(t0Unix + 600), "iat": float64(t0Unix), "auth_time": float64(t0Unix), "at_hash": atHash(tok.AccessToken),
	}
	if diff := cmp.Diff(wantID, claimsOf(t, tok.IDToken)); diff != "" {
		t.Errorf("ID claims (-want +got):\n%s", diff)
	}
}

// TestIssueTokensLifetimes: Options.TokenLifetimes set the access and ID
// token lifetimes apart.
func TestIssueTokensLifetimes(t *testing.T) {
	tests := []struct {
		name             string
		lifetimes        *identity.TokenLifetimes
		accessExp, idExp int64
		expiresAt        time.Time
	}{
		{"defaults: 10 minutes each", nil, t0Unix + 600, t0Unix + 600, at(10 * time.Minute)},
		{"zero fields keep defaults", &identity.TokenLifetimes{}, t0Unix + 600, t0Unix + 600, at(10 * time.Minute)},
		{"negative fields keep defaults", &identity.TokenLifetimes{Access: -time.Minute, ID: -time.Minute}, t0Unix + 600, t0Unix + 600, at(10 * time.Minute)},
		{"access 5 minutes, ID 20", &identity.TokenLifetimes{Access: 5 * time.Minute, ID: 20 * time.Minute}, t0Unix + 300, t0Unix + 1200, at(5 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.TokenLifetimes = tt.lifetimes
			e := newOIDCEnv(t, opts)
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			got := []any{claimsOf(t, tok.AccessToken)["exp"], claimsOf(t, tok.IDToken)["exp"], tok.ExpiresAt}
			want := []any{float64(tt.accessExp), float64(tt.idExp), tt.expiresAt}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("access exp, ID exp, ExpiresAt (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIssueTokensRefreshOnlyWithGrant: a refresh token only for a client
// that may use the refresh_token grant.
func TestIssueTokensRefreshOnlyWithGrant(t *testing.T) {
	tests := []struct {
		name        string
		grants      []identity.GrantType
		wantRefresh bool
	}{
		{"default grants", nil, true},
		{"authorization_code and refresh_token", []identity.GrantType{identity.GrantAuthorizationCode, identity.GrantRefreshToken}, true},
		{"authorization_code only", []identity.GrantType{identity.GrantAuthorizationCode}, false},
		{"client_credentials only", []identity.GrantType{identity.GrantClientCredentials}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			c := e.client(identity.NewClient{RedirectURIs: []string{webRedirect}, GrantTypes: tt.grants}).Client
			tok := e.issue(identity.TokenRequest{ClientID: c.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			if got := refreshPattern.MatchString(tok.RefreshToken); got != tt.wantRefresh || !tt.wantRefresh && tok.RefreshToken != "" {
				t.Errorf("RefreshToken %q, want one: %v", tok.RefreshToken, tt.wantRefresh)
			}
		})
	}
}

// TestIssueTokensErrors: who cannot get tokens, and a Service that
// cannot issue any.
func TestIssueTokensErrors(t *testing.T) {
	tests := []struct {
		name string
		opts func(*identity.Options)
		req  func(e *oidcEnv) identity.TokenRequest
		code identity.Code
	}{
		{"disabled user", nil, func(e *oidcEnv) identity.TokenRequest {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}}
		}, identity.CodeForbidden},
		{"unknown client", nil, func(e *oidcEnv) identity.TokenRequest {
			return identity.TokenRequest{ClientID: "idc_0000000000000000", UserID: e.ada.ID}
		}, identity.CodeNotFound},
		{"deleted client", nil, func(e *oidcEnv) identity.TokenRequest {
			if err := e.ws.DeleteClient(e.ctx, e.web.ID); err != nil {
				e.t.Fatal(err)
			}
			return identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID}
		}, identity.CodeNotFound},
		{"unknown user", nil, func(e *oidcEnv) identity.TokenRequest {
			return identity.TokenRequest{ClientID: e.web.ID, UserID: 99}
		}, identity.CodeNotFound},
		{"negative user id", nil, func(e *oidcEnv) identity.TokenRequest {
			return identity.TokenRequest{ClientID: e.web.ID, UserID: -1}
		}, identity.CodeNotFound},
		{"no IssuerBase", func(o *identity.Options) { o.IssuerBase = "" }, func(e *oidcEnv) identity.TokenRequest {
			return identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID}
		}, identity.CodeInternal},
		{"no TokenSigner", func(o *identity.Options) { o.TokenSigner = nil }, func(e *oidcEnv) identity.TokenRequest {
			return identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID}
		}, identity.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			if tt.opts != nil {
				tt.opts(opts)
			}
			e := newOIDCEnv(t, opts)
			_, err := e.ws.IssueTokens(e.ctx, tt.req(e))
			identitytest.WantCode(t, err, tt.code)
		})
	}
}

// TestIssueTokensWithoutUser: IssueTokens is for a user ("the user must be
// enabled"; "an unknown ... user is CodeNotFound"): a request without one
// must not become a client's own token, which would hand any client,
// public ones included, a client_credentials token it may not have.
func TestIssueTokensWithoutUser(t *testing.T) {
	e := newOIDCEnv(t, nil)
	for _, c := range []identity.OAuthClient{e.web, e.spa} {
		tok, err := e.ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: c.ID, Scopes: []string{"openid"}})
		if err == nil {
			t.Fatalf("IssueTokens with UserID 0 succeeded for client %s (sub %v), want CodeNotFound", c.Name, claimsOf(t, tok.AccessToken)["sub"])
		}
		identitytest.WantCode(t, err, identity.CodeNotFound)
	}
}

// TestTokenMethodsNeedIssuerAndSigner: every token method of a Service
// without IssuerBase or TokenSigner is CodeInternal.
func TestTokenMethodsNeedIssuerAndSigner(t *testing.T) {
	for _, mod := range []struct {
		name string
		fn   func(*identity.Options)
	}{
		{"no IssuerBase", func(o *identity.Options) { o.IssuerBase = "" }},
		{"no TokenSigner", func(o *identity.Options) { o.TokenSigner = nil }},
	} {
		t.Run(mod.name, func(t *testing.T) {
			opts := tokenOpts()
			mod.fn(opts)
			e := newOIDCEnv(t, opts)
			calls := map[string]func() error{
				"VerifyAccessToken": func() error { _, err := e.ws.VerifyAccessToken(e.ctx, "x"); return err },
				"Authorize":         func() error { _, err := e.ws.Provider().Authorize(e.ctx, e.webRequest(), ""); return err },
				"ExchangeCode": func() error {
					_, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, "x", webRedirect, "")
					return err
				},
				"RefreshTokens":           func() error { _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, "x", nil); return err },
				"ClientCredentialsTokens": func() error { _, err := e.ws.Provider().ExchangeClientCredentials(e.ctx, e.machine, nil); return err },
				"RevokeToken":             func() error { return e.ws.Provider().RevokeToken(e.ctx, e.web, "x") },
				"IntrospectToken":         func() error { _, err := e.ws.Provider().IntrospectToken(e.ctx, e.web, "x"); return err },
				"UserInfo":                func() error { _, err := e.ws.Provider().GetUserInfo(e.ctx, "x"); return err },
				"EndSession":              func() error { _, err := e.ws.Provider().EndSession(e.ctx, identity.EndSessionRequest{}); return err },
			}
			for name, call := range calls {
				if got := identity.ErrorCode(call()); got != identity.CodeInternal {
					t.Errorf("%s: code %q, want internal", name, got)
				}
			}
			identitytest.WantCode(t, e.svc.TokensReady(), identity.CodeInternal)
			if got := e.ws.Issuer(); mod.name == "no IssuerBase" && got != "" || mod.name == "no TokenSigner" && got != acmeIssuer {
				t.Errorf("Issuer() = %q", got)
			}
		})
	}
}

// TestTokensReady: a Service with IssuerBase and TokenSigner is ready.
func TestTokensReady(t *testing.T) {
	e := newOIDCEnv(t, nil)
	if err := e.svc.TokensReady(); err != nil {
		t.Errorf("TokensReady = %v", err)
	}
	if got := e.ws.Issuer(); got != acmeIssuer {
		t.Errorf("Issuer() = %q, want %q", got, acmeIssuer)
	}
}

// TestVerifyAccessToken: a valid token's VerifiedToken, field by field.
func TestVerifyAccessToken(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.withMappers()
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	session := created.Session
	tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid", "profile", "email"}, SessionID: session.ID})
	e.clock.Advance(time.Minute)
	got := e.wantActive(tok.AccessToken)
	jti := claimsOf(t, tok.AccessToken)["jti"].(string)
	if !jtiPattern.MatchString(jti) {
		t.Fatalf("jti %q", jti)
	}
	want := identity.VerifiedToken{
		ID: jti, Subject: "1", UserID: 1, ClientID: e.web.ID, Scopes: []string{"openid", "profile", "email"},
		SessionID: session.ID, GrantID: tok.GrantID,
		IssuedAt: time.Unix(t0Unix, 0).UTC(), ExpiresAt: time.Unix(t0Unix+600, 0).UTC(),
		Claims: map[string]any{"department": "R&D", "region": "eu"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VerifiedToken (-want +got):\n%s", diff)
	}
	if !got.HasScope("email") || got.HasScope("phone") {
		t.Errorf("HasScope(email), HasScope(phone) = %v, %v", got.HasScope("email"), got.HasScope("phone"))
	}
}

// reencode replaces a compact JWS's payload, keeping its header and
// signature.
func reencode(t *testing.T, token string, mod func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	c := claimsOf(t, token)
	mod(c)
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2]
}

// TestVerifyAccessTokenRefusals: every token VerifyAccessToken must refuse
// is CodeUnauthenticated, and the boundaries are tried from both sides.
// Forged tokens are signed with the workspace's own active key, so only
// the claim or header that differs can be the reason.
func TestVerifyAccessTokenRefusals(t *testing.T) {
	// exp + leeway of a token issued at t0: (t0Unix + 600) + 30 s.
	expiry := time.Unix(t0Unix+630, 0).UTC()
	tests := []struct {
		name string
		// token returns the token to verify, given the access and ID
		// tokens issued at t0 to ada for the web client.
		token func(e *oidcEnv, tok identity.Tokens) string
		now   time.Time // when set, the clock's time at verification
		code  identity.Code
	}{
		{"valid", func(_ *oidcEnv, tok identity.Tokens) string { return tok.AccessToken }, time.Time{}, ""},
		{"1µs before exp + 30 s", func(_ *oidcEnv, tok identity.Tokens) string { return tok.AccessToken }, expiry.Add(-time.Microsecond), ""},
		{"at exp + 30 s", func(_ *oidcEnv, tok identity.Tokens) string { return tok.AccessToken }, expiry, identity.CodeUnauthenticated},
		{"tampered payload (sub)", func(_ *oidcEnv, tok identity.Tokens) string {
			return reencode(t, tok.AccessToken, func(c map[string]any) { c["sub"] = "2" })
		}, time.Time{}, identity.CodeUnauthenticated},
		{"tampered payload (scope)", func(_ *oidcEnv, tok identity.Tokens) string {
			return reencode(t, tok.AccessToken, func(c map[string]any) { c["scope"] = "openid admin" })
		}, time.Time{}, identity.CodeUnauthenticated},
		{"tampered signature", func(_ *oidcEnv, tok identity.Tokens) string {
			parts := strings.Split(tok.AccessToken, ".")
			sig := []byte(parts[2])
			if sig[0] == 'A' {
				sig[0] = 'B'
			} else {
				sig[0] = 'A'
			}
			return parts[0] + "." + parts[1] + "." + string(sig)
		}, time.Time{}, identity.CodeUnauthenticated},
		{"ID token presented as access token", func(_ *oidcEnv, tok identity.Tokens) string { return tok.IDToken }, time.Time{}, identity.CodeUnauthenticated},
		{"token of workspace beta", func(e *oidcEnv, _ identity.Tokens) string {
			beta, err := e.svc.CreateWorkspace(e.ctx, "beta", nil)
			if err != nil {
				e.t.Fatal(err)
			}
			u, err := beta.CreateUser(e.ctx, newUserNamed("ada2"))
			if err != nil {
				e.t.Fatal(err)
			}
			c, err := beta.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{webRedirect}})
			if err != nil {
				e.t.Fatal(err)
			}
			other, err := beta.IssueTokens(e.ctx, identity.TokenRequest{ClientID: c.Client.ID, UserID: u.ID, Scopes: []string{"openid"}})
			if err != nil {
				e.t.Fatal(err)
			}
			if _, err := beta.VerifyAccessToken(e.ctx, other.AccessToken); err != nil {
				e.t.Fatalf("beta's own token at beta: %v", err)
			}
			return other.AccessToken
		}, time.Time{}, identity.CodeUnauthenticated},
		{"revoked grant", func(e *oidcEnv, tok identity.Tokens) string {
			if err := e.ws.Provider().RevokeToken(e.ctx, e.web, tok.RefreshToken); err != nil {
				e.t.Fatal(err)
			}
			return tok.AccessToken
		}, time.Time{}, identity.CodeUnauthenticated},
		{"disabled user", func(e *oidcEnv, tok identity.Tokens) string {
			if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
				e.t.Fatal(err)
			}
			return tok.AccessToken
		}, time.Time{}, identity.CodeUnauthenticated},
		{"user disabled in the store, grant not revoked", func(e *oidcEnv, tok identity.Tokens) string {
			err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
				u, err := tx.User("acme", e.ada.ID)
				if err != nil {
					return err
				}
				u.Enabled = false
				return tx.PutUser("acme", u)
			})
			if err != nil {
				e.t.Fatal(err)
			}
			return tok.AccessToken
		}, time.Time{}, identity.CodeUnauthenticated},
		{"garbage", func(*oidcEnv, identity.Tokens) string { return "not.a.token" }, time.Time{}, identity.CodeUnauthenticated},
		{"empty", func(*oidcEnv, identity.Tokens) string { return "" }, time.Time{}, identity.CodeUnauthenticated},
		{"refresh token", func(_ *oidcEnv, tok identity.Tokens) string { return tok.RefreshToken }, time.Time{}, identity.CodeUnauthenticated},
	}
	// Forged tokens: the claims of the real access token with one change.
	forged := func(typ string, mod func(c map[string]any)) func(e *oidcEnv, tok identity.Tokens) string {
		return func(e *oidcEnv, tok identity.Tokens) string {
			c := claimsOf(t, tok.AccessToken)
			mod(c)
			return e.forge(typ, c)
		}
	}
	same := func(map[string]any) {}
	grantEnd := at(90 * 24 * time.Hour).Add(30 * time.Second) // the grant's ExpiresAt + leeway
	for _, f := range []struct {
		name string
		typ  string
		mod  func(map[string]any)
		now  time.Time
		code identity.Code
	}{
		{"forged, claims unchanged", "at+jwt", same, time.Time{}, ""},
		{"forged, typ application/at+jwt", "application/at+jwt", same, time.Time{}, ""},
		{"forged, typ AT+JWT", "AT+JWT", same, time.Time{}, ""},
		{"forged, typ JWT", "JWT", same, time.Time{}, identity.CodeUnauthenticated},
		{"forged, typ application/jwt", "application/jwt", same, time.Time{}, identity.CodeUnauthenticated},
		{"forged, no typ", "", same, time.Time{}, identity.CodeUnauthenticated},
		{"forged, another issuer", "at+jwt", func(c map[string]any) { c["iss"] = "https://id.example.com/t/beta" }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, issuer with a trailing slash", "at+jwt", func(c map[string]any) { c["iss"] = acmeIssuer + "/" }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, no exp", "at+jwt", func(c map[string]any) { delete(c, "exp") }, time.Time{}, identity.CodeUnauthenticated},
		// now is t0 = t0Unix + 0.535897 s; now + leeway is before t0Unix+31.
		{"forged, nbf 31 s ahead", "at+jwt", func(c map[string]any) { c["nbf"] = t0Unix + 31 }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, nbf 30 s ahead", "at+jwt", func(c map[string]any) { c["nbf"] = t0Unix + 30 }, time.Time{}, ""},
		{"forged, iat 31 s ahead", "at+jwt", func(c map[string]any) { c["iat"] = t0Unix + 31 }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, iat 30 s ahead", "at+jwt", func(c map[string]any) { c["iat"] = t0Unix + 30 }, time.Time{}, ""},
		// A NumericDate may have a fraction: exp + leeway is t0Unix + 0.5 s,
		// before now, or t0Unix + 0.6 s, after it.
		{"forged, exp 29.5 s ago", "at+jwt", func(c map[string]any) { c["exp"] = float64(t0Unix) - 29.5 }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, exp 29.4 s ago", "at+jwt", func(c map[string]any) { c["exp"] = float64(t0Unix) - 29.4 }, time.Time{}, ""},
		{"forged, no iat", "at+jwt", func(c map[string]any) { delete(c, "iat") }, time.Time{}, ""},
		{"forged, jti without grant", "at+jwt", func(c map[string]any) { c["jti"] = "0123456789abcdef" }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, jti of an unknown grant", "at+jwt", func(c map[string]any) { c["jti"] = "0000000000000000.0123456789abcdef" }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, another client_id", "at+jwt", func(c map[string]any) { c["client_id"] = "idc_0000000000000000" }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, no client_id", "at+jwt", func(c map[string]any) { delete(c, "client_id") }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, another sub", "at+jwt", func(c map[string]any) { c["sub"] = "2" }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, no sub", "at+jwt", func(c map[string]any) { delete(c, "sub") }, time.Time{}, identity.CodeUnauthenticated},
		{"forged, long exp, 1µs before the grant ends + 30 s", "at+jwt", func(c map[string]any) { c["exp"] = t0Unix + 100*24*3600 }, grantEnd.Add(-time.Microsecond), ""},
		{"forged, long exp, the grant ended + 30 s", "at+jwt", func(c map[string]any) { c["exp"] = t0Unix + 100*24*3600 }, grantEnd, identity.CodeUnauthenticated},
	} {
		tests = append(tests, struct {
			name  string
			token func(e *oidcEnv, tok identity.Tokens) string
			now   time.Time
			code  identity.Code
		}{f.name, forged(f.typ, f.mod), f.now, f.code})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			token := tt.token(e, tok)
			if !tt.now.IsZero() {
				e.clock.Set(tt.now)
			}
			_, err := e.ws.VerifyAccessToken(e.ctx, token)
			identitytest.WantCode(t, err, tt.code)
		})
	}
}

// TestVerifyAccessTokenOfAnotherSignerKey: a token signed by a key the
// workspace does not publish is refused, even with the right claims.
func TestVerifyAccessTokenOfAnotherSignerKey(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
	other := newOIDCEnv(t, nil)
	other.issue(identity.TokenRequest{ClientID: other.web.ID, UserID: other.ada.ID})
	// The same claims, signed by other's active key under that key's id.
	c := claimsOf(t, tok.AccessToken)
	forged := other.forge("at+jwt", c)
	e.wantRefused(forged)
	// And under the kid of e's active key: the signature does not verify.
	parts := strings.Split(forged, ".")
	h := headerOf(t, forged)
	h["kid"] = e.keyByState()[identity.KeyActive].ID
	raw, _ := json.Marshal(h)
	e.wantRefused(base64.RawURLEncoding.EncodeToString(raw) + "." + parts[1] + "." + parts[2])
}
