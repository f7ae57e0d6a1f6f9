package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// The sign-in surface's rules that are not the throttle or the refusal
// floor: revocation that cuts tokens off, amr, the refresh reuse
// interval, and the authorization request's ui_locales, on the fake
// clock.

// TestRevokeSessionRevokesItsGrants: revoking a session, by the
// administrator or by the user, stops the access and refresh tokens
// issued in it; a grant of another session of the same user lives on.
func TestRevokeSessionRevokesItsGrants(t *testing.T) {
	revokes := map[string]func(e *oidcEnv, s signedIn) error{
		"RevokeSession": func(e *oidcEnv, s signedIn) error { return e.ws.RevokeSession(e.ctx, s.session.ID) },
		"RevokeUserSession": func(e *oidcEnv, s signedIn) error {
			return e.ws.RevokeUserSession(e.ctx, e.ada.ID, s.session.ID)
		},
	}
	for name, revoke := range revokes {
		t.Run(name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			tok, s := e.codeTokens()
			other, _ := e.codeTokens()
			e.wantActive(tok.AccessToken)
			if err := revoke(e, s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			e.wantRefused(tok.AccessToken)
			_, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			identitytest.WantCode(t, err, identity.CodeInvalidGrant)
			if got := e.storedGrant(tok.GrantID).RevokeReason; got != "revoked" {
				t.Errorf("grant revoked for %q, want %q", got, "revoked")
			}
			e.wantActive(other.AccessToken)
			if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, other.RefreshToken, nil); err != nil {
				t.Errorf("the other session's refresh token: %v", err)
			}
		})
	}
}

// TestRevokeUserSessionOfAnotherUser: a user cannot revoke another's
// session, nor its grants.
func TestRevokeUserSessionOfAnotherUser(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok, s := e.codeTokens()
	bob := e.user("bob")
	identitytest.WantCode(t, e.ws.RevokeUserSession(e.ctx, bob.ID, s.session.ID), identity.CodeNotFound)
	e.wantActive(tok.AccessToken)
}

// amrOf returns the amr claim of an ID token, nil when it has none.
func amrOf(t *testing.T, idToken string) []string {
	t.Helper()
	_, payload := jwtParts(t, idToken)
	raw, ok := payload["amr"].([]any)
	if !ok {
		if _, present := payload["amr"]; present {
			t.Fatalf("amr = %#v, want an array", payload["amr"])
		}
		return nil
	}
	var out []string
	for _, m := range raw {
		out = append(out, m.(string))
	}
	return out
}

// TestAMR: a password sign-in says pwd; one with a second factor pwd,
// otp and mfa; single sign-on keeps the session's amr and auth_time.
func TestAMR(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok, s := e.codeTokens()
	if diff := cmp.Diff([]string{"pwd"}, amrOf(t, tok.IDToken)); diff != "" {
		t.Errorf("password amr (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pwd"}, s.session.AMR); diff != "" {
		t.Errorf("password session AMR (-want +got):\n%s", diff)
	}

	// Single sign-on an hour later: the same amr, auth_time of the
	// sign-in.
	e.clock.Advance(time.Hour)
	sso := e.authorize(e.webRequest(), s.sessionToken)
	if sso.Code == "" {
		t.Fatalf("Authorize with the session = %+v, want a code", sso)
	}
	tok2, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, sso.Code, webRedirect, pkceVerifier)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pwd"}, amrOf(t, tok2.IDToken)); diff != "" {
		t.Errorf("single sign-on amr (-want +got):\n%s", diff)
	}
	_, payload := jwtParts(t, tok2.IDToken)
	if got := payload["auth_time"]; got != float64(t0Unix) {
		t.Errorf("single sign-on auth_time = %v, want %d", got, t0Unix)
	}

	// A second factor.
	secret, _ := e.enrol(e.ada.ID)
	a := e.authorize(e.webRequest(), "")
	_, err = e.ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeMFARequired)
	verified, err := e.ws.VerifySecondFactor(e.ctx, err.(*identity.Error).Challenge, e.code(secret, 0))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pwd", "otp", "mfa"}, verified.AMR); diff != "" {
		t.Errorf("VerifiedSecondFactor.AMR (-want +got):\n%s", diff)
	}
	signIn, err := e.ws.Provider().CompleteSignIn(e.ctx, a.RequestID, e.ada.ID, &identity.SessionOptions{AMR: verified.AMR})
	if err != nil {
		t.Fatal(err)
	}
	tok3, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, signIn.Authorization.Code, webRedirect, pkceVerifier)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pwd", "otp", "mfa"}, amrOf(t, tok3.IDToken)); diff != "" {
		t.Errorf("second factor amr (-want +got):\n%s", diff)
	}
	got, err := e.ws.GetSession(e.ctx, signIn.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pwd", "otp", "mfa"}, got.AMR); diff != "" {
		t.Errorf("stored session AMR (-want +got):\n%s", diff)
	}

	// A session the program started without saying how: no amr.
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if created.Session.AMR != nil {
		t.Errorf("CreateSession without options: AMR %q, want none", created.Session.AMR)
	}
}

// TestSessionOptionsAMR: the methods a program may record.
func TestSessionOptionsAMR(t *testing.T) {
	tests := []struct {
		name   string
		amr    []string
		fields []identity.FieldError
	}{
		{"none", nil, nil},
		{"RFC 8176 values", []string{"pwd", "otp", "mfa", "hwk", "swk", "user", "pin", "sms"}, nil},
		{"nine methods", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, field("amr", identity.RuleMaxLength)},
		{"32 characters", []string{strings.Repeat("x", 32)}, nil},
		{"33 characters", []string{strings.Repeat("x", 33)}, field("amr[0]", identity.RuleMaxLength)},
		{"empty method", []string{"pwd", ""}, field("amr[1]", identity.RuleRequired)},
		{"letters, digits, _ and -", []string{"A-z_09"}, nil},
		{"a space", []string{"pwd otp"}, field("amr[0]", identity.RulePattern)},
		{"a dot", []string{"pwd.otp"}, field("amr[0]", identity.RulePattern)},
		{"a dot first", []string{".pwd"}, field("amr[0]", identity.RulePattern)},
		{"non-ASCII", []string{"pwdé"}, field("amr[0]", identity.RulePattern)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			_, err := e.ws.CreateSession(e.ctx, e.ada.ID, &identity.SessionOptions{AMR: tt.amr})
			wantFieldsOrNil(t, err, tt.fields)
			a := e.authorize(e.webRequest(), "")
			_, err = e.ws.Provider().CompleteSignIn(e.ctx, a.RequestID, e.ada.ID, &identity.SessionOptions{AMR: tt.amr})
			wantFieldsOrNil(t, err, tt.fields)
			_, err = e.ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}, AMR: tt.amr})
			wantFieldsOrNil(t, err, tt.fields)
		})
	}
}

// wantFieldsOrNil is identitytest.WantFields, or no error when fields is
// nil.
func wantFieldsOrNil(t *testing.T, err error, fields []identity.FieldError) {
	t.Helper()
	if fields == nil {
		if err != nil {
			t.Errorf("err = %v, want none", err)
		}
		return
	}
	identitytest.WantFields(t, err, fields)
}

// TestRefreshReuseInterval: with TokenLifetimes.RefreshReuse, a used
// refresh token is exchanged again within the interval while its
// successor is unused, and the earlier successor is then spent; at the
// interval's end, or once the successor was used, it is reuse and
// revokes the grant. Off by default.
func TestRefreshReuseInterval(t *testing.T) {
	tests := []struct {
		name  string
		reuse time.Duration
		// after is how long after the first exchange the used token
		// comes back.
		after time.Duration
		// useSuccessor exchanges the first successor before.
		useSuccessor bool
		code         identity.Code
	}{
		{name: "off by default", reuse: 0, after: 0, code: identity.CodeInvalidGrant},
		{name: "at once", reuse: 10 * time.Second, after: 0},
		{name: "1µs before the end", reuse: 10 * time.Second, after: 10*time.Second - time.Microsecond},
		{name: "at the end", reuse: 10 * time.Second, after: 10 * time.Second, code: identity.CodeInvalidGrant},
		{name: "successor used", reuse: 10 * time.Second, after: time.Second, useSuccessor: true, code: identity.CodeInvalidGrant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.TokenLifetimes = &identity.TokenLifetimes{RefreshReuse: tt.reuse}
			e := newOIDCEnv(t, opts)
			hook := e.hook(identity.EventTokenRefreshReused)
			tok, _ := e.codeTokens()
			first, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.useSuccessor {
				if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, first.RefreshToken, nil); err != nil {
					t.Fatal(err)
				}
			}
			e.clock.Advance(tt.after)
			again, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, tok.RefreshToken, nil)
			identitytest.WantCode(t, err, tt.code)
			if tt.code != "" {
				if got := e.storedGrant(tok.GrantID).RevokeReason; got != "refresh_reused" {
					t.Errorf("grant revoked for %q, want %q", got, "refresh_reused")
				}
				if n := len(e.payloads(hook)); n != 1 {
					t.Errorf("%d token.refresh_reused events, want 1", n)
				}
				return
			}
			if again.RefreshToken == first.RefreshToken || again.GrantID != tok.GrantID {
				t.Errorf("retry = %+v, want a new refresh token of grant %s", again, tok.GrantID)
			}
			e.wantActive(again.AccessToken)
			// The new successor works; the superseded one is spent: it
			// came from an answer the client never saw, so whoever
			// presents it is not the client.
			if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, again.RefreshToken, nil); err != nil {
				t.Fatalf("the new successor: %v", err)
			}
			_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, first.RefreshToken, nil)
			identitytest.WantCode(t, err, identity.CodeInvalidGrant)
			if got := e.storedGrant(tok.GrantID).RevokeReason; got != "refresh_reused" {
				t.Errorf("after the superseded successor: grant revoked for %q, want %q", got, "refresh_reused")
			}
		})
	}
}

// TestRefreshReuseBounds: the interval is between 0 and five minutes.
func TestRefreshReuseBounds(t *testing.T) {
	tests := []struct {
		reuse time.Duration
		ok    bool
	}{
		{-time.Nanosecond, false},
		{0, true},
		{5 * time.Minute, true},
		{5*time.Minute + time.Nanosecond, false},
	}
	for _, tt := range tests {
		opts := tokenOpts()
		opts.TokenLifetimes = &identity.TokenLifetimes{RefreshReuse: tt.reuse}
		_, err := identity.New(newMemStore(t), opts)
		if (err == nil) != tt.ok {
			t.Errorf("RefreshReuse %v: err = %v, want ok %v", tt.reuse, err, tt.ok)
		}
		if err != nil {
			identitytest.WantFields(t, err, field("TokenLifetimes.RefreshReuse", identity.RuleRange))
		}
	}
}

// TestUILocalesKept: the request's ui_locales reach the page, cleaned:
// well-formed tags, at most eight.
func TestUILocalesKept(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"de", "de"},
		{"de-CH fr  en", "de-CH fr en"},
		{"de x_bad en", "de en"},
		{"a b c d e f g h i j", "a b c d e f g h"},
		{"de " + strings.Repeat("x", 35) + " en", "de " + strings.Repeat("x", 35) + " en"},
		{"de " + strings.Repeat("x", 36) + " en", "de en"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e := newOIDCEnv(t, nil)
			req := e.webRequest()
			req.UILocales = tt.in
			a := e.authorize(req, "")
			p, err := e.ws.Provider().GetPendingAuthorization(e.ctx, a.RequestID)
			if err != nil {
				t.Fatal(err)
			}
			if p.UILocales != tt.want {
				t.Errorf("UILocales = %q, want %q", p.UILocales, tt.want)
			}
		})
	}
}
