package oidc_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/store/memstore"
)

// The test provider's fixed values.
const (
	adaPassword = "analytical engine"
	appURI      = "https://app.example/callback"
	spaURI      = "http://127.0.0.1:9999/cb"
	logoutURI   = "https://app.example/signed-out"
	verifier    = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"
)

// challenge is the S256 challenge of verifier.
var challenge = func() string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}()

// provider is an OpenID Provider over a fresh in-memory store on a fake
// clock, served by httptest, with workspaces "acme" and "other", acme's
// user "ada" and three clients.
type provider struct {
	t      testing.TB
	srv    *httptest.Server
	h      *oidc.Handler
	clock  *testutil.Clock
	svc    *identity.Service
	ws     *identity.Workspace
	other  *identity.Workspace
	issuer string
	ada    identity.User
	// web is confidential (authorization_code, refresh_token,
	// client_credentials), spa public; otherApp is web's twin in
	// workspace "other".
	web, spa, otherApp identity.CreatedClient
}

func newProvider(t testing.TB) *provider {
	t.Helper()
	return newProviderWith(t, nil, nil)
}

// newProviderWith is newProvider whose Service options svcOpts may change
// (when not nil) and whose Handler has the options hOpts.
func newProviderWith(t testing.TB, svcOpts func(*identity.Options), hOpts *oidc.Options) *provider {
	t.Helper()
	ctx := t.Context()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	opts := &identity.Options{
		Now: clock.Now, PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
		IssuerBase: srv.URL, TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256,
	}
	if svcOpts != nil {
		svcOpts(opts)
	}
	svc, err := identity.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := oidc.New(svc, hOpts)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/t/", h)
	p := &provider{t: t, srv: srv, h: h, clock: clock, svc: svc, issuer: srv.URL + "/t/acme"}
	if p.ws, err = svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		t.Fatal(err)
	}
	if p.other, err = svc.CreateWorkspace(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	p.ada, err = p.ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: adaPassword})
	if err != nil {
		t.Fatal(err)
	}
	all := []identity.GrantType{identity.GrantAuthorizationCode, identity.GrantRefreshToken, identity.GrantClientCredentials}
	if p.web, err = p.ws.CreateClient(ctx, identity.NewClient{Name: "Web App", RedirectURIs: []string{appURI},
		PostLogoutRedirectURIs: []string{logoutURI}, GrantTypes: all}); err != nil {
		t.Fatal(err)
	}
	if p.spa, err = p.ws.CreateClient(ctx, identity.NewClient{Name: "Single Page", Public: true, RedirectURIs: []string{spaURI}}); err != nil {
		t.Fatal(err)
	}
	if p.otherApp, err = p.other.CreateClient(ctx, identity.NewClient{Name: "Other", RedirectURIs: []string{appURI}, GrantTypes: all}); err != nil {
		t.Fatal(err)
	}
	return p
}

// browser returns a client with a cookie jar that does not follow
// redirects, as a test drives a browser.
func (p *provider) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) location() string { return r.header.Get("Location") }

// json decodes the body as a JSON object.
func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

func do(t testing.TB, c *http.Client, req *http.Request) reply {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(body)}
}

func get(t testing.TB, c *http.Client, u string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

// postForm posts a form, with HTTP Basic credentials when user is set.
func postForm(t testing.TB, c *http.Client, u string, form url.Values, user, password string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	return do(t, c, req)
}

// authParams returns an authorization request of the web client with
// PKCE, state and nonce; set overrides parameters ("" deletes one).
func (p *provider) authParams(set map[string]string) url.Values {
	v := url.Values{
		"client_id": {p.web.Client.ID}, "redirect_uri": {appURI}, "response_type": {"code"},
		"scope": {"openid profile email"}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}
	for k, val := range set {
		if val == "" {
			v.Del(k)
		} else {
			v.Set(k, val)
		}
	}
	return v
}

func (p *provider) authorize(c *http.Client, params url.Values) reply {
	p.t.Helper()
	return get(p.t, c, p.issuer+"/authorize?"+params.Encode())
}

var (
	hiddenRequest = regexp.MustCompile(`name="request" value="([^"]*)"`)
	hiddenCSRF    = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
)

// loginForm follows an authorization's redirect to the sign-in page and
// returns the form's hidden fields.
func (p *provider) loginForm(c *http.Client, auth reply) url.Values {
	p.t.Helper()
	if auth.status != http.StatusFound || !strings.HasPrefix(auth.location(), p.issuer+"/login?request=") {
		p.t.Fatalf("authorize: %d %q, want a redirect to the sign-in page", auth.status, auth.location())
	}
	page := get(p.t, c, auth.location())
	if page.status != http.StatusOK {
		p.t.Fatalf("sign-in page: %d %s", page.status, page.body)
	}
	req, csrf := hiddenRequest.FindStringSubmatch(page.body), hiddenCSRF.FindStringSubmatch(page.body)
	if req == nil || csrf == nil {
		p.t.Fatalf("sign-in page without hidden fields: %s", page.body)
	}
	return url.Values{"request": {req[1]}, "csrf": {csrf[1]}}
}

// signIn submits the sign-in form.
func (p *provider) signIn(c *http.Client, form url.Values, login, password string) reply {
	p.t.Helper()
	form = cloneValues(form)
	form.Set("login", login)
	form.Set("password", password)
	return postForm(p.t, c, p.issuer+"/login", form, "", "")
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// codeFrom returns the code and state of a redirect to the client.
func (p *provider) codeFrom(r reply, redirectURI string) (code, state string) {
	p.t.Helper()
	if r.status != http.StatusFound || !strings.HasPrefix(r.location(), redirectURI+"?") {
		p.t.Fatalf("got %d %q (%s), want a redirect to %s", r.status, r.location(), r.body, redirectURI)
	}
	u, _ := url.Parse(r.location())
	return u.Query().Get("code"), u.Query().Get("state")
}

// signedIn runs the code flow of the web client in browser c up to the
// code, signing in as ada.
func (p *provider) signedIn(c *http.Client) string {
	p.t.Helper()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	code, _ := p.codeFrom(p.signIn(c, form, "ada", adaPassword), appURI)
	return code
}

// token posts to the token endpoint as the web client.
func (p *provider) token(form url.Values) reply {
	p.t.Helper()
	return postForm(p.t, http.DefaultClient, p.issuer+"/token", form, p.web.Client.ID, p.web.Secret)
}

// exchange redeems a code of the web client.
func (p *provider) exchange(code string) reply {
	p.t.Helper()
	return p.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {appURI}, "code_verifier": {verifier}})
}

// tokens runs the whole code flow and returns the token response.
func (p *provider) tokens() map[string]any {
	p.t.Helper()
	r := p.exchange(p.signedIn(p.browser()))
	if r.status != http.StatusOK {
		p.t.Fatalf("token: %d %s", r.status, r.body)
	}
	return r.json(p.t)
}

// claimsOf decodes a JWT's payload without checking it.
func claimsOf(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// oauthError is an RFC 6749 error body with its status.
type oauthError struct {
	Status      int
	Error       string
	Description bool
}

func errorOf(t testing.TB, r reply) oauthError {
	t.Helper()
	m := r.json(t)
	e, _ := m["error"].(string)
	d, _ := m["error_description"].(string)
	return oauthError{Status: r.status, Error: e, Description: d != ""}
}

func TestDiscovery(t *testing.T) {
	p := newProvider(t)
	if _, err := p.ws.SetClaimMapper(t.Context(), "department", identity.ClaimMapperSpec{ClaimName: "dept", IncludeInAccess: new(false), IncludeInID: new(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ws.SetClaimMapper(t.Context(), "level", identity.ClaimMapperSpec{ClaimName: "lvl", IncludeInAccess: new(true), IncludeInID: new(false)}); err != nil {
		t.Fatal(err)
	}
	r := get(t, http.DefaultClient, p.issuer+"/.well-known/openid-configuration")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("discovery: %d %q", r.status, r.header.Get("Content-Type"))
	}
	iss := p.issuer
	want := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"introspection_endpoint":                         iss + "/introspect",
		"userinfo_endpoint":                              iss + "/userinfo",
		"revocation_endpoint":                            iss + "/revoke",
		"end_session_endpoint":                           iss + "/end_session",
		"jwks_uri":                                       iss + "/keys",
		"scopes_supported":                               []any{"openid", "profile", "email", "groups", "roles"},
		"response_types_supported":                       []any{"code"},
		"response_modes_supported":                       []any{"query"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token", "client_credentials"},
		"subject_types_supported":                        []any{"public"},
		"id_token_signing_alg_values_supported":          []any{"RS256", "ES256"},
		"token_endpoint_auth_methods_supported":          []any{"client_secret_basic", "client_secret_post", "none"},
		"revocation_endpoint_auth_methods_supported":     []any{"client_secret_basic", "client_secret_post", "none"},
		"introspection_endpoint_auth_methods_supported":  []any{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":               []any{"S256"},
		"request_uri_parameter_supported":                false,
		"authorization_response_iss_parameter_supported": true,
		"ui_locales_supported":                           []any{"en", "de"},
		"claims_supported": []any{"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "sid", "azp", "at_hash", "amr",
			"name", "preferred_username", "updated_at", "email", "email_verified",
			"groups", "roles", "groups_overage", "roles_overage", "dept"},
	}
	if diff := cmp.Diff(want, r.json(t)); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}
}

func TestKeys(t *testing.T) {
	p := newProvider(t)
	r := get(t, http.DefaultClient, p.issuer+"/keys")
	if r.status != http.StatusOK {
		t.Fatalf("keys: %d %s", r.status, r.body)
	}
	keys, err := p.ws.ListSigningKeys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, k := range keys {
		jwk, err := jws.PublicJWK(k.ID, k.Algorithm, k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := jwk.MarshalJSON()
		var m map[string]any
		json.Unmarshal(b, &m)
		want = append(want, m)
	}
	if len(want) != 2 {
		t.Fatalf("workspace has %d published keys, want 2 (active and next)", len(want))
	}
	if diff := cmp.Diff(map[string]any{"keys": want}, r.json(t)); diff != "" {
		t.Errorf("JWKS (-want +got):\n%s", diff)
	}
	for _, k := range r.json(t)["keys"].([]any) {
		m := k.(map[string]any)
		if m["use"] != "sig" || m["alg"] != "ES256" || m["kid"] == "" || m["d"] != nil {
			t.Errorf("key %v: want use sig, alg ES256, a kid and no private part", m)
		}
	}
}

func TestCodeFlow(t *testing.T) {
	p := newProvider(t)
	if _, err := p.ws.SetAttribute(t.Context(), p.ada.ID, "department", "engines", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ws.SetClaimMapper(t.Context(), "department", identity.ClaimMapperSpec{ClaimName: "dept", IncludeInAccess: new(false), IncludeInID: new(true)}); err != nil {
		t.Fatal(err)
	}
	c := p.browser()
	auth := p.authorize(c, p.authParams(nil))
	page := get(t, c, auth.location())
	for _, s := range []string{">acme<", "to continue to Web App", `name="login"`, `type="password"`} {
		if !strings.Contains(page.body, s) {
			t.Errorf("sign-in page lacks %q", s)
		}
	}
	if strings.Contains(page.body, "<script") {
		t.Error("sign-in page has a script")
	}
	csp := regexp.MustCompile(`^default-src 'none'; img-src 'self'; style-src 'sha256-[A-Za-z0-9+/]{43}='; base-uri 'none'; frame-ancestors 'none'; form-action 'self' https://app\.example$`)
	if got := page.header.Get("Content-Security-Policy"); !csp.MatchString(got) {
		t.Errorf("sign-in page Content-Security-Policy = %q, want %s", got, csp)
	}
	wantHeaders := map[string]string{
		"X-Frame-Options": "DENY",
		"Cache-Control":   "no-store",
		"Referrer-Policy": "no-referrer",
		"Content-Type":    "text/html; charset=utf-8",
	}
	for k, v := range wantHeaders {
		if got := page.header.Get(k); got != v {
			t.Errorf("sign-in page %s = %q, want %q", k, got, v)
		}
	}
	form := p.loginForm(c, auth)
	r := p.signIn(c, form, "ada@example.com", adaPassword)
	code, state := p.codeFrom(r, appURI)
	if state != "st-1" || !strings.HasPrefix(code, "idac_") {
		t.Errorf("code %q state %q, want idac_... and st-1", code, state)
	}
	var session *http.Cookie
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == "identity_session" {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.Secure || session.SameSite != http.SameSiteLaxMode || session.Path != "/t/acme/" {
		t.Errorf("session cookie %+v, want HttpOnly, SameSite=Lax, Path=/t/acme/, not Secure over http", session)
	}

	tr := p.exchange(code)
	if tr.status != http.StatusOK || tr.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token: %d %q %s", tr.status, tr.header.Get("Cache-Control"), tr.body)
	}
	tok := tr.json(t)
	got := map[string]any{"token_type": tok["token_type"], "expires_in": tok["expires_in"], "scope": tok["scope"],
		"has_refresh": tok["refresh_token"] != nil, "has_id": tok["id_token"] != nil}
	want := map[string]any{"token_type": "Bearer", "expires_in": 600.0, "scope": "openid profile email", "has_refresh": true, "has_id": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token response (-want +got):\n%s", diff)
	}
	id := claimsOf(t, tok["id_token"].(string))
	gotID := map[string]any{"iss": id["iss"], "aud": id["aud"], "sub": id["sub"], "nonce": id["nonce"], "dept": id["dept"], "email": id["email"]}
	wantID := map[string]any{"iss": p.issuer, "aud": p.web.Client.ID, "sub": "1", "nonce": "n-1", "dept": "engines", "email": "ada@example.com"}
	if diff := cmp.Diff(wantID, gotID); diff != "" {
		t.Errorf("ID token (-want +got):\n%s", diff)
	}
	at, err := p.ws.VerifyAccessToken(t.Context(), tok["access_token"].(string))
	if err != nil || at.UserID != p.ada.ID || at.ClientID != p.web.Client.ID {
		t.Errorf("VerifyAccessToken = %+v, %v", at, err)
	}

	// Single sign-on: the next authorization gets a code at once.
	sso := p.authorize(c, p.authParams(map[string]string{"state": "st-2"}))
	code2, state2 := p.codeFrom(sso, appURI)
	if state2 != "st-2" || code2 == "" || code2 == code {
		t.Errorf("single sign-on: code %q state %q", code2, state2)
	}
	if r := p.exchange(code2); r.status != http.StatusOK {
		t.Errorf("single sign-on code: %d %s", r.status, r.body)
	}
	// prompt=login shows the form despite the session.
	p.loginForm(c, p.authorize(c, p.authParams(map[string]string{"prompt": "login"})))
	// prompt=none with the session: a code at once.
	p.codeFrom(p.authorize(c, p.authParams(map[string]string{"prompt": "none"})), appURI)
}

func TestPublicClientPKCE(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	params := p.authParams(map[string]string{"client_id": p.spa.Client.ID, "redirect_uri": spaURI})
	code, _ := p.codeFrom(p.signIn(c, p.loginForm(c, p.authorize(c, params)), "ada", adaPassword), spaURI)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {spaURI}, "client_id": {p.spa.Client.ID}}
	form.Set("code_verifier", verifier[:len(verifier)-1]+"X")
	if got := errorOf(t, postForm(t, http.DefaultClient, p.issuer+"/token", form, "", "")); got != (oauthError{400, "invalid_grant", true}) {
		t.Errorf("wrong code_verifier: %+v", got)
	}
	c2 := p.browser()
	code, _ = p.codeFrom(p.signIn(c2, p.loginForm(c2, p.authorize(c2, params)), "ada", adaPassword), spaURI)
	form.Set("code", code)
	form.Set("code_verifier", verifier)
	r := postForm(t, http.DefaultClient, p.issuer+"/token", form, "", "")
	if r.status != http.StatusOK || r.json(t)["access_token"] == nil {
		t.Errorf("public client's exchange: %d %s", r.status, r.body)
	}
}

func TestAuthorizeErrorPages(t *testing.T) {
	p := newProvider(t)
	tests := []struct {
		name  string
		query string
		title string
	}{
		{"unknown client", p.authParams(map[string]string{"client_id": "idc_0000000000000000"}).Encode(), "Unknown application"},
		{"missing client_id", p.authParams(map[string]string{"client_id": ""}).Encode(), "Unknown application"},
		{"wrong redirect URI", p.authParams(map[string]string{"redirect_uri": "https://evil.example/cb"}).Encode(), "Invalid sign-in request"},
		{"redirect URI with another query", p.authParams(map[string]string{"redirect_uri": appURI + "?x=1"}).Encode(), "Invalid sign-in request"},
		{"missing redirect URI", p.authParams(map[string]string{"redirect_uri": ""}).Encode(), "Invalid sign-in request"},
		{"another workspace's client", p.authParams(map[string]string{"client_id": p.otherApp.Client.ID}).Encode(), "Unknown application"},
		{"redirect_uri twice", p.authParams(nil).Encode() + "&redirect_uri=https%3A%2F%2Fevil.example%2F", "Invalid sign-in request"},
		{"bad query", "client_id=%zz", "Invalid request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, p.browser(), p.issuer+"/authorize?"+tt.query)
			got := map[string]any{"status": r.status, "location": r.location(), "type": r.header.Get("Content-Type"),
				"title": strings.Contains(r.body, "<h1>"+tt.title+"</h1>")}
			want := map[string]any{"status": 400, "location": "", "type": "text/html; charset=utf-8", "title": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.body)
			}
		})
	}
}

func TestAuthorizeErrorRedirects(t *testing.T) {
	p := newProvider(t)
	spa := map[string]string{"client_id": p.spa.Client.ID, "redirect_uri": spaURI}
	with := func(base map[string]string, set map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range set {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name     string
		params   map[string]string
		redirect string
		want     url.Values // without error_description
	}{
		{"missing PKCE on a public client", with(spa, map[string]string{"code_challenge": "", "code_challenge_method": ""}), spaURI,
			url.Values{"error": {"invalid_request"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"plain PKCE", map[string]string{"code_challenge_method": "plain"}, appURI,
			url.Values{"error": {"invalid_request"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"response_type token", map[string]string{"response_type": "token"}, appURI,
			url.Values{"error": {"unsupported_response_type"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"no openid scope", map[string]string{"scope": "profile"}, appURI,
			url.Values{"error": {"invalid_scope"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"prompt none without a session", map[string]string{"prompt": "none"}, appURI,
			url.Values{"error": {"login_required"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"prompt none with login", map[string]string{"prompt": "none login"}, appURI,
			url.Values{"error": {"invalid_request"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"request object", map[string]string{"request": "eyJ.eyJ.sig"}, appURI,
			url.Values{"error": {"request_not_supported"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"request_uri", map[string]string{"request_uri": "https://app.example/r"}, appURI,
			url.Values{"error": {"request_uri_not_supported"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"response_mode fragment", map[string]string{"response_mode": "fragment"}, appURI,
			url.Values{"error": {"invalid_request"}, "state": {"st-1"}, "iss": {p.issuer}}},
		{"state too long is not echoed", map[string]string{"state": strings.Repeat("s", 2049)}, appURI,
			url.Values{"error": {"invalid_request"}, "iss": {p.issuer}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.authorize(p.browser(), p.authParams(tt.params))
			if r.status != http.StatusFound || !strings.HasPrefix(r.location(), tt.redirect+"?") {
				t.Fatalf("got %d %q, want a redirect to %s", r.status, r.location(), tt.redirect)
			}
			u, _ := url.Parse(r.location())
			q := u.Query()
			if q.Get("error_description") == "" {
				t.Errorf("no error_description in %s", r.location())
			}
			q.Del("error_description")
			if diff := cmp.Diff(tt.want, q); diff != "" {
				t.Errorf("redirect query (-want +got):\n%s", diff)
			}
		})
	}
	// A parameter given twice.
	r := get(t, p.browser(), p.issuer+"/authorize?"+p.authParams(nil).Encode()+"&scope=openid")
	if want := appURI + "?error=invalid_request&error_description=scope+is+given+more+than+once&state=st-1&iss=" + url.QueryEscape(p.issuer); r.location() != want {
		t.Errorf("scope twice: Location %q, want %q", r.location(), want)
	}
}

func TestAuthorizePost(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	r := postForm(t, c, p.issuer+"/authorize", p.authParams(nil), "", "")
	p.loginForm(c, r)
}

func TestSignInRefusals(t *testing.T) {
	p := newProvider(t)
	ctx := t.Context()
	bob, err := p.ws.CreateUser(ctx, identity.NewUser{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "bob's long password"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ws.DisableUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		login, password string
		message         string
	}{
		{"wrong password", "ada", "wrong password", "The username, email or password is not right."},
		{"unknown user", "nobody", adaPassword, "The username, email or password is not right."},
		{"unknown email", "nobody@example.com", adaPassword, "The username, email or password is not right."},
		{"disabled user", "bob", "bob's long password", "The username, email or password is not right."},
		{"empty password", "ada", "", "Enter your password."},
		{"login too long", strings.Repeat("a", 1021), adaPassword, "The username or email is too long."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := p.browser()
			r := p.signIn(c, p.loginForm(c, p.authorize(c, p.authParams(nil))), tt.login, tt.password)
			got := map[string]any{"status": r.status, "location": r.location(), "cookies": r.header.Values("Set-Cookie"),
				"errors": errorsOf(r.body)}
			want := map[string]any{"status": 400, "location": "", "cookies": []string(nil), "errors": []string{tt.message}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.body)
			}
		})
	}
	sessions, err := listItems(p.ws.ListSessions(ctx, p.ada.ID, nil))
	if err != nil || len(sessions) != 0 {
		t.Errorf("ada's sessions = %v, %v; want none", sessions, err)
	}
}

func TestSignInCSRF(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	attacker := p.browser() // another browser: no CSRF cookie
	tests := []struct {
		name   string
		client *http.Client
		form   url.Values
	}{
		{"cross-site: no cookie", attacker, form},
		{"no token in the form", c, url.Values{"request": form["request"]}},
		{"wrong token", c, url.Values{"request": form["request"], "csrf": {base64.RawURLEncoding.EncodeToString(make([]byte, 32))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.signIn(tt.client, tt.form, "ada", adaPassword)
			got := map[string]any{"status": r.status, "location": r.location(), "cookies": r.header.Values("Set-Cookie"),
				"message": strings.Contains(r.body, "did not come from this site")}
			want := map[string]any{"status": 403, "location": "", "cookies": []string(nil), "message": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodPost, p.issuer+"/login", strings.NewReader(url.Values{"request": form["request"], "csrf": form["csrf"],
		"login": {"ada"}, "password": {adaPassword}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := do(t, c, req); r.status != http.StatusForbidden {
		t.Errorf("Sec-Fetch-Site cross-site: %d", r.status)
	}
	sessions, err := listItems(p.ws.ListSessions(t.Context(), p.ada.ID, nil))
	if err != nil || len(sessions) != 0 {
		t.Errorf("ada's sessions = %v, %v; want none", sessions, err)
	}
	// The real form still works.
	p.codeFrom(p.signIn(c, form, "ada", adaPassword), appURI)
}

func TestSignInExpired(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	auth := p.authorize(c, p.authParams(nil))
	form := p.loginForm(c, auth)
	for _, u := range []string{p.issuer + "/login", p.issuer + "/login?request=nope", p.issuer + "/login?request=" + strings.Repeat("x", 200)} {
		if r := get(t, c, u); r.status != 400 || !strings.Contains(r.body, "This sign-in has expired") {
			t.Errorf("GET %s: %d %s", u, r.status, r.body)
		}
	}
	p.clock.Advance(identity.AuthorizationRequestLifetime)
	if r := get(t, c, auth.location()); r.status != 400 || !strings.Contains(r.body, "This sign-in has expired") {
		t.Errorf("expired request's page: %d %s", r.status, r.body)
	}
	if r := p.signIn(c, form, "ada", adaPassword); r.status != 400 || r.location() != "" || !strings.Contains(r.body, "This sign-in has expired") {
		t.Errorf("expired request's sign-in: %d %q %s", r.status, r.location(), r.body)
	}
	// A completed request cannot be signed in again.
	p.clock.Advance(-identity.AuthorizationRequestLifetime)
	c2 := p.browser()
	form2 := p.loginForm(c2, p.authorize(c2, p.authParams(nil)))
	p.codeFrom(p.signIn(c2, form2, "ada", adaPassword), appURI)
	if r := p.signIn(c2, form2, "ada", adaPassword); r.status != 400 || r.location() != "" {
		t.Errorf("completed request's sign-in: %d %q", r.status, r.location())
	}
}

func TestTokenErrors(t *testing.T) {
	p := newProvider(t)
	code := p.signedIn(p.browser())
	first := p.exchange(code)
	if first.status != http.StatusOK {
		t.Fatalf("exchange: %d %s", first.status, first.body)
	}
	access := first.json(t)["access_token"].(string)
	expired := p.signedIn(p.browser())
	p.clock.Advance(identity.AuthorizationCodeLifetime)
	tests := []struct {
		name string
		r    reply
		want oauthError
	}{
		{"replayed code", p.exchange(code), oauthError{400, "invalid_grant", true}},
		{"expired code", p.exchange(expired), oauthError{400, "invalid_grant", true}},
		{"garbage code", p.exchange("idac_nope"), oauthError{400, "invalid_grant", true}},
		{"wrong secret", postForm(t, http.DefaultClient, p.issuer+"/token", url.Values{"grant_type": {"client_credentials"}}, p.web.Client.ID, "idcs_wrong"),
			oauthError{401, "invalid_client", true}},
		{"unknown client", postForm(t, http.DefaultClient, p.issuer+"/token", url.Values{"grant_type": {"client_credentials"}}, "idc_nope", "x"),
			oauthError{401, "invalid_client", true}},
		{"grant type the client lacks", postForm(t, http.DefaultClient, p.issuer+"/token",
			url.Values{"grant_type": {"client_credentials"}, "client_id": {p.spa.Client.ID}}, "", ""), oauthError{400, "unauthorized_client", true}},
		{"unsupported grant type", p.token(url.Values{"grant_type": {"password"}}), oauthError{400, "unsupported_grant_type", true}},
		{"no grant type", p.token(url.Values{}), oauthError{400, "invalid_request", true}},
		{"code without redirect_uri", p.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}}), oauthError{400, "invalid_request", true}},
		{"client assertion", postForm(t, http.DefaultClient, p.issuer+"/token", url.Values{"grant_type": {"client_credentials"},
			"client_assertion": {"x.y.z"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}}, "", ""),
			oauthError{401, "invalid_client", true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorOf(t, tt.r); got != tt.want {
				t.Errorf("got %+v, want %+v (%s)", got, tt.want, tt.r.body)
			}
		})
	}
	// The replay revoked the tokens of the code's first redemption.
	if in := p.introspect(access); in["active"] != false {
		t.Errorf("access token after the code's replay: %v", in)
	}
	if r := get(t, http.DefaultClient, p.issuer+"/token"); r.status != http.StatusMethodNotAllowed {
		t.Errorf("GET /token: %d", r.status)
	}
	// Refused on its declared length, before the body is read.
	if r := p.token(url.Values{"grant_type": {"client_credentials"}, "pad": {strings.Repeat("x", oidc.MaxRequestBytes)}}); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized token request: %d %s", r.status, r.body)
	}
}

// introspect asks the web client's question about token.
func (p *provider) introspect(token string) map[string]any {
	p.t.Helper()
	r := postForm(p.t, http.DefaultClient, p.issuer+"/introspect", url.Values{"token": {token}}, p.web.Client.ID, p.web.Secret)
	if r.status != http.StatusOK {
		p.t.Fatalf("introspect: %d %s", r.status, r.body)
	}
	return r.json(p.t)
}

func TestRefresh(t *testing.T) {
	p := newProvider(t)
	tok := p.tokens()
	old := tok["refresh_token"].(string)
	wider := p.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "scope": {"openid offline_access"}})
	if got := errorOf(t, wider); got != (oauthError{400, "invalid_scope", true}) {
		t.Errorf("refresh asking for a scope the grant lacks: %+v", got)
	}
	r := p.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "scope": {"openid profile"}})
	if r.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	rotated := r.json(t)["refresh_token"].(string)
	if rotated == "" || rotated == old || r.json(t)["scope"] != "openid profile" {
		t.Fatalf("refresh: %s", r.body)
	}
	// Replaying the used token is refused and revokes the family: the
	// rotated token fails as well.
	for _, rt := range []string{old, rotated} {
		if got := errorOf(t, p.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})); got != (oauthError{400, "invalid_grant", true}) {
			t.Errorf("refresh after reuse: %+v", got)
		}
	}
	if got := errorOf(t, p.token(url.Values{"grant_type": {"refresh_token"}})); got != (oauthError{400, "invalid_request", true}) {
		t.Errorf("refresh without a token: %+v", got)
	}
}

func TestIntrospection(t *testing.T) {
	p := newProvider(t)
	tok := p.tokens()
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	at := claimsOf(t, access)
	want := map[string]any{
		"active": true, "scope": "openid profile email", "client_id": p.web.Client.ID, "token_type": "Bearer", "token_use": "access_token",
		"exp": at["exp"], "iat": at["iat"], "sub": "1", "aud": []any{p.web.Client.ID}, "iss": p.issuer, "jti": at["jti"],
	}
	if diff := cmp.Diff(want, p.introspect(access)); diff != "" {
		t.Errorf("access token (-want +got):\n%s", diff)
	}
	in := p.introspect(refresh)
	if in["active"] != true || in["token_use"] != "refresh_token" || in["token_type"] != nil {
		t.Errorf("refresh token: %v", in)
	}
	// Workspace other's client asks about acme's token at its own issuer.
	r := postForm(t, http.DefaultClient, p.srv.URL+"/t/other/introspect", url.Values{"token": {access}}, p.otherApp.Client.ID, p.otherApp.Secret)
	if diff := cmp.Diff(map[string]any{"active": false}, r.json(t)); r.status != 200 || diff != "" {
		t.Errorf("token of acme at other: %d (-want +got):\n%s", r.status, diff)
	}
	if diff := cmp.Diff(map[string]any{"active": false}, p.introspect(access+"x")); diff != "" {
		t.Errorf("tampered token (-want +got):\n%s", diff)
	}
	// A public client may not introspect.
	r = postForm(t, http.DefaultClient, p.issuer+"/introspect", url.Values{"token": {access}, "client_id": {p.spa.Client.ID}}, "", "")
	if got := errorOf(t, r); got.Error != "invalid_client" || r.status < 400 || r.status >= 500 {
		t.Errorf("public client: %+v", got)
	}
}

func TestUserInfo(t *testing.T) {
	p := newProvider(t)
	ctx := t.Context()
	if _, err := p.ws.SetAttribute(ctx, p.ada.ID, "department", "engines", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept", IncludeInAccess: new(false), IncludeInID: new(true)}); err != nil {
		t.Fatal(err)
	}
	access := p.tokens()["access_token"].(string)
	bearer := func(method, token string) reply {
		req, _ := http.NewRequest(method, p.issuer+"/userinfo", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return do(t, http.DefaultClient, req)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		r := bearer(method, access)
		info := r.json(t)
		delete(info, "updated_at")
		want := map[string]any{"sub": "1", "name": "Ada Lovelace", "preferred_username": "ada", "email": "ada@example.com",
			"email_verified": false, "dept": "engines"}
		if diff := cmp.Diff(want, info); r.status != 200 || diff != "" {
			t.Errorf("%s userinfo: %d (-want +got):\n%s", method, r.status, diff)
		}
	}
	cc := p.token(url.Values{"grant_type": {"client_credentials"}}).json(t)["access_token"].(string)
	tests := []struct {
		name, token string
		want        oauthError
		challenge   string
	}{
		{"client's own token: no user, no openid", cc, oauthError{403, "insufficient_scope", true}, `Bearer error="insufficient_scope"`},
		{"bad token", "nope", oauthError{401, "invalid_token", true}, `Bearer error="invalid_token"`},
		{"no token", "", oauthError{401, "invalid_request", true}, "Bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bearer(http.MethodGet, tt.token)
			if got := errorOf(t, r); got != tt.want || r.header.Get("WWW-Authenticate") != tt.challenge {
				t.Errorf("got %+v %q, want %+v %q", got, r.header.Get("WWW-Authenticate"), tt.want, tt.challenge)
			}
		})
	}
}

func TestRevocation(t *testing.T) {
	p := newProvider(t)
	tok := p.tokens()
	access := tok["access_token"].(string)
	revoke := func(token, user, secret string) reply {
		return postForm(t, http.DefaultClient, p.issuer+"/revoke", url.Values{"token": {token}}, user, secret)
	}
	if r := revoke("unknown", p.web.Client.ID, p.web.Secret); r.status != 200 {
		t.Errorf("unknown token: %d %s", r.status, r.body)
	}
	if got := errorOf(t, revoke(access, p.otherApp.Client.ID, p.otherApp.Secret)); got.Error != "invalid_client" {
		t.Errorf("another workspace's client: %+v", got)
	}
	c2, err := p.ws.CreateClient(t.Context(), identity.NewClient{RedirectURIs: []string{appURI}})
	if err != nil {
		t.Fatal(err)
	}
	if got := errorOf(t, revoke(access, c2.Client.ID, c2.Secret)); got != (oauthError{400, "unauthorized_client", true}) {
		t.Errorf("another client's token: %+v", got)
	}
	if r := revoke(access, p.web.Client.ID, p.web.Secret); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	for _, token := range []string{access, tok["refresh_token"].(string)} {
		if in := p.introspect(token); in["active"] != false {
			t.Errorf("after revocation: %v", in)
		}
	}
}

func TestClientCredentials(t *testing.T) {
	p := newProvider(t)
	r := p.token(url.Values{"grant_type": {"client_credentials"}, "scope": {"openid"}})
	if r.status != 200 {
		t.Fatalf("client_credentials: %d %s", r.status, r.body)
	}
	tok := r.json(t)
	if tok["refresh_token"] != nil || tok["id_token"] != nil || tok["token_type"] != "Bearer" || tok["expires_in"] != 600.0 {
		t.Errorf("token response %v", tok)
	}
	at := claimsOf(t, tok["access_token"].(string))
	if at["sub"] != p.web.Client.ID || at["client_id"] != p.web.Client.ID {
		t.Errorf("access token claims %v", at)
	}
	// client_secret_post works as well as Basic.
	r = postForm(t, http.DefaultClient, p.issuer+"/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {p.web.Client.ID}, "client_secret": {p.web.Secret}}, "", "")
	if r.status != 200 {
		t.Errorf("client_secret_post: %d %s", r.status, r.body)
	}
}

func TestEndSession(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	code := p.signedIn(c)
	idToken := p.exchange(code).json(t)["id_token"].(string)

	r := get(t, c, p.issuer+"/end_session?"+url.Values{"id_token_hint": {idToken}, "post_logout_redirect_uri": {"https://evil.example/"}}.Encode())
	if r.status != 400 || r.location() != "" || !strings.Contains(r.body, "not registered") {
		t.Errorf("unregistered post_logout_redirect_uri: %d %q %s", r.status, r.location(), r.body)
	}
	// Still signed in: single sign-on works.
	p.codeFrom(p.authorize(c, p.authParams(nil)), appURI)

	r = get(t, c, p.issuer+"/end_session?"+url.Values{"id_token_hint": {idToken}, "post_logout_redirect_uri": {logoutURI}, "state": {"bye"}}.Encode())
	if r.status != http.StatusFound || r.location() != logoutURI+"?state=bye" {
		t.Errorf("end_session: %d %q %s", r.status, r.location(), r.body)
	}
	if !strings.Contains(strings.Join(r.header.Values("Set-Cookie"), "\n"), "identity_session=; Path=/t/acme/; Max-Age=0; HttpOnly; SameSite=Lax") {
		t.Errorf("session cookie not cleared: %q", r.header.Values("Set-Cookie"))
	}
	sessions, err := listItems(p.ws.ListSessions(t.Context(), p.ada.ID, nil))
	if err != nil || len(sessions) != 1 || sessions[0].RevokedAt == nil {
		t.Errorf("sessions after logout: %+v, %v", sessions, err)
	}
	// Signed out: the next authorization shows the form.
	p.loginForm(c, p.authorize(c, p.authParams(nil)))
	// Without a redirect URI: the signed-out page.
	r = postForm(t, c, p.issuer+"/end_session", url.Values{}, "", "")
	if r.status != 200 || !strings.Contains(r.body, "You are signed out.") {
		t.Errorf("signed-out page: %d %s", r.status, r.body)
	}
}

func TestNotFound(t *testing.T) {
	p := newProvider(t)
	for _, path := range []string{"/t/nope/.well-known/openid-configuration", "/t/acme/nope", "/t/acme/", "/t/Bad%20Slug/keys", "/t/acme/x/keys", "/t//keys"} {
		if r := get(t, http.DefaultClient, p.srv.URL+path); r.status != http.StatusNotFound || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("GET %s: %d %q", path, r.status, r.header.Get("Content-Type"))
		}
	}
}

func TestUnderPrefix(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	svc, err := identity.New(memstore.New(), &identity.Options{IssuerBase: srv.URL + "/idp", TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(t.Context(), "acme", nil); err != nil {
		t.Fatal(err)
	}
	h, err := oidc.New(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/idp/t/", h)
	mux.Handle("/stripped/", http.StripPrefix("/stripped", h))
	for _, path := range []string{"/idp/t/acme/.well-known/openid-configuration", "/stripped/t/acme/.well-known/openid-configuration"} {
		r := get(t, http.DefaultClient, srv.URL+path)
		if r.status != 200 || r.json(t)["token_endpoint"] != srv.URL+"/idp/t/acme/token" {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
}

func TestNewWithoutService(t *testing.T) {
	if _, err := oidc.New(nil, nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// TestNewNeedsTokenOptions checks that New refuses a Service that cannot
// issue tokens, naming the missing option.
func TestNewNeedsTokenOptions(t *testing.T) {
	for _, c := range []struct {
		opts *identity.Options
		want string
	}{
		{&identity.Options{TokenSigner: jws.Signer{}}, "identity: tokens need Options.IssuerBase"},
		{&identity.Options{IssuerBase: "https://id.example"}, "identity: tokens need Options.TokenSigner (jws.Signer{})"},
	} {
		svc, err := identity.New(memstore.New(), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = oidc.New(svc, nil)
		if identity.ErrorCode(err) != identity.CodeInternal || err.Error() != c.want {
			t.Errorf("New over %+v: %v, want %q", c.opts, err, c.want)
		}
		svc.Close()
	}
}

func TestLoginHint(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	auth := p.authorize(c, p.authParams(map[string]string{"login_hint": `ada"<x>`}))
	if r := get(t, c, auth.location()); !strings.Contains(r.body, `name="login" value="ada&#34;&lt;x&gt;"`) {
		t.Errorf("login_hint not filled in, escaped: %s", r.body)
	}
}

func TestCORSPreflight(t *testing.T) {
	p := newProvider(t)
	req, _ := http.NewRequest(http.MethodOptions, p.issuer+"/userinfo", nil)
	req.Header.Set("Origin", "https://spa.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "authorization")
	r := do(t, http.DefaultClient, req)
	got := map[string]any{"status": r.status, "origin": r.header.Get("Access-Control-Allow-Origin"),
		"credentials": r.header.Get("Access-Control-Allow-Credentials")}
	want := map[string]any{"status": 204, "origin": "https://spa.example", "credentials": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preflight (-want +got):\n%s", diff)
	}
	req, _ = http.NewRequest(http.MethodOptions, p.issuer+"/login", nil)
	if r := do(t, http.DefaultClient, req); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, POST" {
		t.Errorf("OPTIONS /login: %d %q", r.status, r.header.Get("Allow"))
	}
}

// TestSecureCookies runs a sign-in in process under an https issuer: the
// cookies are Secure.
func TestSecureCookies(t *testing.T) {
	ctx := t.Context()
	svc, err := identity.New(memstore.New(), &identity.Options{IssuerBase: "https://idp.example", TokenSigner: jws.Signer{},
		SigningAlgorithm: identity.ES256, PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: adaPassword}); err != nil {
		t.Fatal(err)
	}
	cl, err := ws.CreateClient(ctx, identity.NewClient{RedirectURIs: []string{appURI}})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := ws.Provider().Authorize(ctx, identity.AuthorizationRequest{ClientID: cl.Client.ID, RedirectURI: appURI, ResponseType: "code", Scopes: []string{"openid"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	h, err := oidc.New(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://idp.example/t/acme/login?request="+auth.RequestID, nil))
	csrf := rec.Result().Cookies()
	if len(csrf) != 1 || !csrf[0].Secure || !csrf[0].HttpOnly || csrf[0].Path != "/t/acme/" || csrf[0].SameSite != http.SameSiteLaxMode {
		t.Fatalf("CSRF cookie %+v", csrf)
	}
	form := url.Values{"request": {auth.RequestID}, "csrf": {csrf[0].Value}, "login": {"ada"}, "password": {adaPassword}}
	req := httptest.NewRequest(http.MethodPost, "https://idp.example/t/acme/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(csrf[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	session := rec.Result().Cookies()
	if rec.Code != http.StatusFound || len(session) != 1 || session[0].Name != "identity_session" || !session[0].Secure ||
		session[0].MaxAge != int(identity.DefaultSessionLifetime/time.Second) {
		t.Errorf("sign-in: %d, cookies %+v", rec.Code, session)
	}
}

// TestMaxAge checks max_age: a session signed in longer ago than it asks
// is not used (the form again; with prompt=none, login_required), one
// within it is, and a malformed value is invalid_request.
func TestMaxAge(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	p.signedIn(c)
	p.clock.Advance(100 * time.Second)
	p.codeFrom(p.authorize(c, p.authParams(map[string]string{"max_age": "101"})), appURI)
	p.loginForm(c, p.authorize(c, p.authParams(map[string]string{"max_age": "100"})))
	p.loginForm(c, p.authorize(c, p.authParams(map[string]string{"max_age": "0"})))
	refused := p.authorize(c, p.authParams(map[string]string{"max_age": "100", "prompt": "none"}))
	if e := redirectedError(t, refused); e != "login_required" {
		t.Errorf("max_age passed with prompt=none: error %q, want login_required", e)
	}
	for _, bad := range []string{"-1", "1.5", "ten", "99999999999"} {
		r := p.authorize(c, p.authParams(map[string]string{"max_age": bad}))
		if e := redirectedError(t, r); e != "invalid_request" {
			t.Errorf("max_age=%s: error %q, want invalid_request", bad, e)
		}
	}
}

// redirectedError returns the error parameter of a redirect to the web
// client.
func redirectedError(t *testing.T, r reply) string {
	t.Helper()
	u, err := url.Parse(r.location())
	if r.status != http.StatusFound || err != nil || !strings.HasPrefix(r.location(), appURI+"?") {
		t.Fatalf("got %d %q, want a redirect to %s", r.status, r.location(), appURI)
	}
	return u.Query().Get("error")
}

// TestSignInLocked: a locked account gets the very page a wrong password
// gets, and no session.
func TestSignInLocked(t *testing.T) {
	p := newProvider(t)
	s, err := p.ws.GetSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Lockout = identity.LockoutPolicy{Threshold: 2}
	if err := p.ws.UpdateSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	p.signIn(c, form, "ada", "wrong password 1")
	wrong := p.signIn(c, form, "ada", "wrong password 2")
	locked := p.signIn(c, form, "ada", adaPassword)
	if locked.status != http.StatusBadRequest || locked.body != wrong.body || locked.header.Get("Set-Cookie") != "" {
		t.Errorf("locked account: %d, Set-Cookie %q, body:\n%s\nwant 400, no cookie, the body of a wrong password:\n%s",
			locked.status, locked.header.Get("Set-Cookie"), locked.body, wrong.body)
	}
}
