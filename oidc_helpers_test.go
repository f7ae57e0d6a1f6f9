package identity_test

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// Shared pieces of the token and code-flow tests (signingkeys_test.go,
// tokens_test.go, authorize_test.go, grants_test.go). Every expected value
// is written out here or in the tests, never taken from the code under
// test; tokens are read by splitting the compact JWS and decoding its parts
// in the test.

const (
	issuerBase = "https://id.example.com"
	acmeIssuer = "https://id.example.com/t/acme"
	// t0Unix is the fake clock's start, 2026-03-14T15:09:26.535897Z, in
	// whole seconds: the iat of a token issued before the clock moves.
	t0Unix = 1773500966
	// t0Stamp is the fake clock's start as an event's timestamp.
	t0Stamp = "2026-03-14T15:09:26.535897Z"

	webRedirect     = "https://app.example.com/callback"
	webLogout       = "https://app.example.com/bye"
	webLogoutQ      = "https://app.example.com/bye?lang=en"
	spaRedirect     = "http://127.0.0.1:8080/cb"
	machineRedirect = "https://native.example.com/cb"

	// pkceVerifier and pkceChallenge are the example of RFC 7636,
	// appendix B.
	pkceVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	pkceChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
)

// t0 is the fake clock's start (newFakeClock).
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// Shapes of the identifiers the tokens carry.
var (
	hex16Pattern   = regexp.MustCompile(`^[0-9a-f]{16}$`)
	jtiPattern     = regexp.MustCompile(`^[0-9a-f]{16}\.[0-9a-f]{16}$`)
	refreshPattern = regexp.MustCompile(`^idrt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`)
	codePattern    = regexp.MustCompile(`^idac_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`)
	sessionPattern = regexp.MustCompile(`^ids_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`)
)

// tokenOpts are the Options of the token tests: an issuer, the jws signer
// and ES256 (fast keys; the RS256 default has tests of its own).
func tokenOpts() *identity.Options {
	return &identity.Options{IssuerBase: issuerBase, TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256}
}

// oidcEnv is a testEnv whose Service issues tokens, with three clients of
// workspace "acme".
type oidcEnv struct {
	*testEnv
	// web is confidential, with the default grants (authorization_code,
	// refresh_token), redirect webRedirect and post-logout webLogout and
	// webLogoutQ.
	web       identity.OAuthClient
	webSecret string
	// spa is public, with the default grants, redirect spaRedirect.
	spa identity.OAuthClient
	// machine is confidential with client_credentials only.
	machine identity.OAuthClient
}

// newOIDCEnv returns an oidcEnv; nil opts means tokenOpts().
func newOIDCEnv(t *testing.T, opts *identity.Options) *oidcEnv {
	t.Helper()
	return newOIDCEnvOver(t, opts, nil)
}

// newOIDCEnvOver is newOIDCEnv over wrap(st), as newTestEnvOver.
func newOIDCEnvOver(t *testing.T, opts *identity.Options, wrap func(store.Store) store.Store) *oidcEnv {
	t.Helper()
	if opts == nil {
		opts = tokenOpts()
	}
	e := &oidcEnv{testEnv: newTestEnvOver(t, opts, wrap)}
	web := e.client(identity.NewClient{Name: "Web", RedirectURIs: []string{webRedirect}, PostLogoutRedirectURIs: []string{webLogout, webLogoutQ}})
	e.web, e.webSecret = web.Client, web.Secret
	e.spa = e.client(identity.NewClient{Name: "SPA", Public: true, RedirectURIs: []string{spaRedirect}}).Client
	e.machine = e.client(identity.NewClient{Name: "Machine", RedirectURIs: []string{machineRedirect},
		GrantTypes: []identity.GrantType{identity.GrantClientCredentials}}).Client
	return e
}

func (e *testEnv) client(nc identity.NewClient) identity.CreatedClient {
	e.t.Helper()
	c, err := e.ws.CreateClient(e.ctx, nc)
	if err != nil {
		e.t.Fatalf("CreateClient(%q): %v", nc.Name, err)
	}
	return c
}

// issue is IssueTokens that must succeed.
func (e *testEnv) issue(req identity.TokenRequest) identity.Tokens {
	e.t.Helper()
	tok, err := e.ws.IssueTokens(e.ctx, req)
	if err != nil {
		e.t.Fatalf("IssueTokens(%+v): %v", req, err)
	}
	return tok
}

// mapper puts a claim mapper that must be accepted.
func (e *testEnv) mapper(attr, claim string, access, id bool) {
	e.t.Helper()
	if _, err := e.ws.SetClaimMapper(e.ctx, attr, identity.ClaimMapperSpec{ClaimName: claim, IncludeInAccess: &access, IncludeInID: &id}); err != nil {
		e.t.Fatalf("PutClaimMapper(%q): %v", attr, err)
	}
}

// attr sets an attribute of a user.
func (e *testEnv) attr(userID int64, key, value string) {
	e.t.Helper()
	if _, err := e.ws.SetAttribute(e.ctx, userID, key, value, nil); err != nil {
		e.t.Fatalf("SetAttribute(%q): %v", key, err)
	}
}

// jwtParts splits a compact JWS and decodes its header and payload as
// JSON objects (numbers as float64).
func jwtParts(t *testing.T, token string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts, want 3", token, len(parts))
	}
	decode := func(part string) map[string]any {
		raw, err := base64.RawURLEncoding.DecodeString(part)
		if err != nil {
			t.Fatalf("token part %q: %v", part, err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("token part %s: %v", raw, err)
		}
		return m
	}
	return decode(parts[0]), decode(parts[1])
}

// claimsOf returns a token's payload.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	_, p := jwtParts(t, token)
	return p
}

// headerOf returns a token's protected header.
func headerOf(t *testing.T, token string) map[string]any {
	t.Helper()
	h, _ := jwtParts(t, token)
	return h
}

// takeShaped checks that claim name of c is a string matching re, and
// removes it from c so that the rest can be compared literally.
func takeShaped(t *testing.T, c map[string]any, name string, re *regexp.Regexp) string {
	t.Helper()
	v, ok := c[name].(string)
	if !ok || !re.MatchString(v) {
		t.Errorf("claim %s = %#v, want a string matching %s", name, c[name], re)
	}
	delete(c, name)
	return v
}

// atHash is the at_hash of an access token signed with a SHA-256
// algorithm, computed here from OpenID Connect Core 3.1.3.6: the
// base64url of the left half of the SHA-256 of the token's ASCII.
func atHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// s256 is the S256 code challenge of a verifier (RFC 7636, 4.2).
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// storedKeys reads a workspace's signing keys straight from the store.
func (e *testEnv) storedKeys(slug string) []store.SigningKey {
	e.t.Helper()
	var keys []store.SigningKey
	err := e.st.Store.View(e.ctx, func(tx store.Tx) (err error) {
		keys, err = tx.SigningKeys(slug)
		return err
	})
	if err != nil {
		e.t.Fatalf("store SigningKeys(%q): %v", slug, err)
	}
	return keys
}

// storedGrant reads a grant straight from the store.
func (e *testEnv) storedGrant(id string) store.Grant {
	e.t.Helper()
	var g store.Grant
	err := e.st.Store.View(e.ctx, func(tx store.Tx) (err error) {
		g, err = tx.Grant("acme", id)
		return err
	})
	if err != nil {
		e.t.Fatalf("store Grant(%q): %v", id, err)
	}
	return g
}

// keyByState returns the workspace's published keys by state; it fails
// the test if two share a state.
func (e *testEnv) keyByState() map[identity.KeyState]identity.SigningKey {
	e.t.Helper()
	keys, err := e.ws.ListSigningKeys(e.ctx)
	if err != nil {
		e.t.Fatalf("SigningKeys: %v", err)
	}
	m := map[identity.KeyState]identity.SigningKey{}
	for _, k := range keys {
		if _, dup := m[k.State]; dup {
			e.t.Fatalf("two %s keys: %+v", k.State, keys)
		}
		m[k.State] = k
	}
	return m
}

// forge signs claims as the workspace's active key would; see forgeWith.
func (e *testEnv) forge(typ string, claims map[string]any) string {
	e.t.Helper()
	return e.forgeWith(e.keyByState()[identity.KeyActive].ID, typ, claims)
}

// forgeWith signs claims with the key kid of workspace "acme", its private
// half read from the store (stored plain: the Service has no
// key-encryption key), so that a test can present a token the library
// never issued.
func (e *testEnv) forgeWith(kid, typ string, claims map[string]any) string {
	e.t.Helper()
	var priv crypto.Signer
	var alg string
	for _, k := range e.storedKeys("acme") {
		if k.ID != kid {
			continue
		}
		if len(k.PrivateKey) == 0 || k.PrivateKey[0] != 0 {
			e.t.Fatalf("key %s is not stored plain", k.ID)
		}
		p, err := x509.ParsePKCS8PrivateKey(k.PrivateKey[1:])
		if err != nil {
			e.t.Fatalf("ParsePKCS8PrivateKey: %v", err)
		}
		priv, alg = p.(crypto.Signer), k.Algorithm
	}
	if priv == nil {
		e.t.Fatalf("key %s not in the store", kid)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		e.t.Fatal(err)
	}
	token, err := jws.Signer{}.Sign(priv, alg, kid, typ, payload)
	if err != nil {
		e.t.Fatalf("jws Sign: %v", err)
	}
	return token
}

// authorize is Authorize that must succeed.
func (e *testEnv) authorize(req identity.AuthorizationRequest, sessionToken string) identity.Authorization {
	e.t.Helper()
	a, err := e.ws.Provider().Authorize(e.ctx, req, sessionToken)
	if err != nil {
		e.t.Fatalf("Authorize(%+v): %v", req, err)
	}
	return a
}

// webRequest is an authorization request of the web client with PKCE.
func (e *oidcEnv) webRequest(scopes ...string) identity.AuthorizationRequest {
	if len(scopes) == 0 {
		scopes = []string{"openid", "profile", "email"}
	}
	return identity.AuthorizationRequest{
		ClientID: e.web.ID, RedirectURI: webRedirect, ResponseType: "code", Scopes: scopes,
		State: "af0ifjsldkj", Nonce: "n-0S6_WzA2Mj", CodeChallenge: pkceChallenge, CodeChallengeMethod: "S256",
	}
}

// signedIn is the outcome of a sign-in for an authorization request.
type signedIn struct {
	auth         identity.Authorization
	sessionToken string
	session      identity.Session
}

// signIn authorizes req and signs ada in for it.
func (e *testEnv) signIn(req identity.AuthorizationRequest) signedIn {
	e.t.Helper()
	pending := e.authorize(req, "")
	if pending.RequestID == "" {
		e.t.Fatalf("Authorize = %+v, want a request to sign in for", pending)
	}
	signIn, err := e.ws.Provider().SignIn(e.ctx, pending.RequestID, "ada", adaPassword)
	if err != nil {
		e.t.Fatalf("SignIn: %v", err)
	}
	auth, token, session := signIn.Authorization, signIn.Secret, signIn.Session
	return signedIn{auth, token, session}
}

// codeTokens runs the code flow of the web client to the end: authorize,
// sign in, exchange.
func (e *oidcEnv) codeTokens(scopes ...string) (identity.Tokens, signedIn) {
	e.t.Helper()
	s := e.signIn(e.webRequest(scopes...))
	tok, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, s.auth.Code, webRedirect, pkceVerifier)
	if err != nil {
		e.t.Fatalf("ExchangeCode: %v", err)
	}
	return tok, s
}

// wantActive fails the test unless the access token verifies.
func (e *testEnv) wantActive(token string) identity.VerifiedToken {
	e.t.Helper()
	at, err := e.ws.VerifyAccessToken(e.ctx, token)
	if err != nil {
		e.t.Fatalf("VerifyAccessToken: %v", err)
	}
	return at
}

// wantRefused fails the test unless the access token is refused with
// CodeUnauthenticated.
func (e *testEnv) wantRefused(token string) {
	e.t.Helper()
	_, err := e.ws.VerifyAccessToken(e.ctx, token)
	if got := identity.ErrorCode(err); got != identity.CodeUnauthenticated {
		e.t.Fatalf("VerifyAccessToken: code %q (%v), want %q", got, err, identity.CodeUnauthenticated)
	}
}

// at returns the fake clock's start moved by d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// newMemStore returns an empty in-memory store closed when the test ends.
func newMemStore(t *testing.T) store.Store {
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	return st
}

// otherSecret returns token with its secret's first character changed:
// the same id, a wrong secret. (The first character, not the last: the
// last of 32 bytes in base64url carries padding bits, and a change there
// may decode to the same bytes.)
func otherSecret(token string) string {
	i := strings.LastIndex(token, "_") + 1
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}
