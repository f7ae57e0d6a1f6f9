package identitytest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
)

// tokenEnv is e's workspace through a second Service over the same store
// that issues tokens (ES256 keys, cheap to make), with the user "ada"
// and a confidential client that may refresh.
type tokenEnv struct {
	*env
	ws     *identity.Workspace
	client identity.OAuthClient
	ada    identity.User
}

func newTokenEnv(t *testing.T, e *env) *tokenEnv {
	t.Helper()
	svc, err := identity.New(e.store, &identity.Options{
		Now: e.clock.Now, PasswordHashing: &testArgon2,
		IssuerBase: "https://id.example.com", TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.GetWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	return &tokenEnv{env: e, ws: ws, client: c.Client, ada: e.user("ada")}
}

// race runs fn n times at once and returns how many calls succeeded and
// the codes of those that failed.
func race(n int, fn func() error) (ok int, codes []identity.Code) {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			codes = append(codes, identity.ErrorCode(err))
		}
	}
	return ok, codes
}

// allCode reports whether every code is want.
func allCode(codes []identity.Code, want identity.Code) bool {
	for _, c := range codes {
		if c != want {
			return false
		}
	}
	return true
}

// testRuleConcurrentCodeRedemption: a code redeemed by several callers at
// once gives tokens to exactly one; the others are invalid_grant, and
// since a code presented twice revokes what its first redemption issued,
// the winner's tokens are revoked too, whatever the store.
func testRuleConcurrentCodeRedemption(t *testing.T, e *env) {
	te := newTokenEnv(t, e)
	created, err := te.ws.CreateSession(e.ctx, te.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := created.Secret
	auth, err := te.ws.Provider().Authorize(e.ctx, identity.AuthorizationRequest{
		ClientID: te.client.ID, RedirectURI: "https://app.example.com/cb", ResponseType: "code", Scopes: []string{"openid"},
	}, token)
	if err != nil || auth.Code == "" {
		t.Fatalf("Authorize = %+v, %v; want a code", auth, err)
	}
	var mu sync.Mutex
	var won identity.Tokens
	ok, codes := race(8, func() error {
		tok, err := te.ws.Provider().ExchangeCode(e.ctx, te.client, auth.Code, "https://app.example.com/cb", "")
		if err == nil {
			mu.Lock()
			won = tok
			mu.Unlock()
		}
		return err
	})
	if ok != 1 || len(codes) != 7 || !allCode(codes, identity.CodeInvalidGrant) {
		t.Fatalf("8 redemptions of one code: %d succeeded, the others %v; want 1 and 7 invalid_grant", ok, codes)
	}
	_, err = te.ws.VerifyAccessToken(e.ctx, won.AccessToken)
	WantCode(t, err, identity.CodeUnauthenticated)
	_, err = te.ws.Provider().RefreshTokens(e.ctx, te.client, won.RefreshToken, nil)
	WantCode(t, err, identity.CodeInvalidGrant)
}

// testRuleConcurrentRefresh: a refresh token used by several callers at
// once is exchanged for exactly one successor; every other use is reuse,
// which revokes the family, so the successor is refused as well.
func testRuleConcurrentRefresh(t *testing.T, e *env) {
	te := newTokenEnv(t, e)
	first, err := te.ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: te.client.ID, UserID: te.ada.ID, Scopes: []string{"openid"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var successor string
	ok, codes := race(8, func() error {
		tok, err := te.ws.Provider().RefreshTokens(e.ctx, te.client, first.RefreshToken, nil)
		if err == nil {
			mu.Lock()
			successor = tok.RefreshToken
			mu.Unlock()
		}
		return err
	})
	if ok != 1 || len(codes) != 7 || !allCode(codes, identity.CodeInvalidGrant) {
		t.Fatalf("8 refreshes with one token: %d succeeded, the others %v; want 1 and 7 invalid_grant", ok, codes)
	}
	_, err = te.ws.Provider().RefreshTokens(e.ctx, te.client, successor, nil)
	WantCode(t, err, identity.CodeInvalidGrant)
}

// testRuleConcurrentFirstKeys: the first token requests of a workspace,
// made at once, agree on one active signing key: every token verifies
// and the workspace publishes exactly two keys (active and next).
func testRuleConcurrentFirstKeys(t *testing.T, e *env) {
	te := newTokenEnv(t, e)
	tokens := make([]string, 8)
	var i int
	var mu sync.Mutex
	ok, codes := race(len(tokens), func() error {
		tok, err := te.ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: te.client.ID, UserID: te.ada.ID})
		mu.Lock()
		defer mu.Unlock()
		tokens[i] = tok.AccessToken
		i++
		return err
	})
	if ok != len(tokens) {
		t.Fatalf("%d of %d first issuances succeeded: %v", ok, len(tokens), codes)
	}
	for n, tok := range tokens {
		if _, err := te.ws.VerifyAccessToken(e.ctx, tok); err != nil {
			t.Errorf("token %d: %v", n, err)
		}
	}
	keys, err := te.ws.ListSigningKeys(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, k := range keys {
		states = append(states, fmt.Sprintf("%s %s", k.State, k.Algorithm))
	}
	if len(keys) != 2 || states[0] == states[1] {
		t.Errorf("keys after concurrent first issuances: %v, want one active and one next ES256 key", states)
	}
}
