package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/identitylib/identity"
)

// callbackURL is the redirect URI of the relying party of these tests. It
// is never dialed: the browser stops at the redirect to it.
const callbackURL = "http://127.0.0.1:9/callback"

// relyingParty is a real OpenID Connect client (coreos/go-oidc with
// golang.org/x/oauth2) of workspace acme, with a browser: an HTTP client
// with a cookie jar that stops at the redirect back to the client.
type relyingParty struct {
	provider *gooidc.Provider
	verifier *gooidc.IDTokenVerifier
	config   oauth2.Config
	browser  *http.Client
}

// rpClient registers the relying party's client with identityd client
// create (before serve starts, on a bbolt file: serve holds it).
type rpClient struct{ id, secret string }

func registerRP(t *testing.T, db string, args ...string) rpClient {
	t.Helper()
	id, secret := createClient(t, db, append([]string{"-redirect-uri", callbackURL}, args...)...)
	return rpClient{id, secret}
}

// newRelyingParty discovers acme's provider at base for the client.
func newRelyingParty(t *testing.T, ctx context.Context, base string, c rpClient) *relyingParty {
	t.Helper()
	id, secret := c.id, c.secret
	provider, err := gooidc.NewProvider(ctx, base+"/t/acme")
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return &relyingParty{
		provider: provider,
		verifier: provider.Verifier(&gooidc.Config{ClientID: id}),
		config: oauth2.Config{
			ClientID: id, ClientSecret: secret, Endpoint: provider.Endpoint(),
			RedirectURL: callbackURL, Scopes: []string{gooidc.ScopeOpenID, "profile", "email"},
		},
		browser: newBrowser(t),
	}
}

// newBrowser returns an HTTP client with a cookie jar that follows
// redirects except the one back to the relying party.
func newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: procWait, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), callbackURL) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// flow is one authorization: its PKCE verifier, state and nonce.
type flow struct {
	verifier, state, nonce string
}

func newFlow(n int) flow {
	return flow{verifier: oauth2.GenerateVerifier(), state: fmt.Sprintf("state-%d", n), nonce: fmt.Sprintf("nonce-%d", n)}
}

// authURL is the authorization request of the flow.
func (rp *relyingParty) authURL(f flow, opts ...oauth2.AuthCodeOption) string {
	return rp.config.AuthCodeURL(f.state, append(opts, oauth2.S256ChallengeOption(f.verifier), gooidc.Nonce(f.nonce))...)
}

// formPattern and inputPattern find the sign-in form and its fields.
var (
	formPattern  = regexp.MustCompile(`(?s)<form[^>]*action="([^"]*)"`)
	inputPattern = regexp.MustCompile(`<input[^>]*>`)
	attrPattern  = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// page is a response the browser ended at.
type page struct {
	status   int
	location string // the redirect back to the client, if it ended there
	body     string
	url      *url.URL
}

// get loads a URL in the browser.
func (rp *relyingParty) get(t *testing.T, u string) page {
	t.Helper()
	p, err := rp.tryGet(u)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tryGet is get for any goroutine.
func (rp *relyingParty) tryGet(u string) (page, error) {
	res, err := rp.browser.Get(u)
	if err != nil {
		return page{}, err
	}
	return readPage(res)
}

func readPage(res *http.Response) (page, error) {
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return page{}, err
	}
	return page{status: res.StatusCode, location: res.Header.Get("Location"), body: string(body), url: res.Request.URL}, nil
}

// submit fills the sign-in form of p with login and password, keeping its
// hidden fields, and posts it.
func (rp *relyingParty) submit(t *testing.T, p page, login, password string) page {
	t.Helper()
	next, err := rp.trySubmit(p, login, password)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// trySubmit is submit for any goroutine.
func (rp *relyingParty) trySubmit(p page, login, password string) (page, error) {
	m := formPattern.FindStringSubmatch(p.body)
	if m == nil {
		return page{}, fmt.Errorf("no form on the page (status %d):\n%s", p.status, p.body)
	}
	action, err := p.url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return page{}, err
	}
	form := url.Values{}
	for _, input := range inputPattern.FindAllString(p.body, -1) {
		attrs := map[string]string{}
		for _, a := range attrPattern.FindAllStringSubmatch(input, -1) {
			attrs[a[1]] = html.UnescapeString(a[2])
		}
		switch attrs["type"] {
		case "hidden":
			form.Add(attrs["name"], attrs["value"])
		case "checkbox":
			// The recovery codes' "I have saved them": ticked, as a
			// person who saved them does.
			form.Set(attrs["name"], attrs["value"])
		case "password":
			form.Set(attrs["name"], password)
		case "text", "email", "":
			if attrs["name"] != "" {
				form.Set(attrs["name"], login)
			}
		}
	}
	res, err := rp.browser.PostForm(action.String(), form)
	if err != nil {
		return page{}, err
	}
	return readPage(res)
}

// signIn runs the browser part of a code flow and returns the code.
func (rp *relyingParty) signIn(t *testing.T, f flow, login, password string) string {
	t.Helper()
	p := rp.get(t, rp.authURL(f))
	if p.location == "" {
		p = rp.submit(t, p, login, password)
	}
	return rp.codeOf(t, p, f)
}

// codeOf returns the code of a redirect back to the client, checking its
// state.
func (rp *relyingParty) codeOf(t *testing.T, p page, f flow) string {
	t.Helper()
	back, err := url.Parse(p.location)
	if err != nil || !strings.HasPrefix(p.location, callbackURL) {
		t.Fatalf("ended at status %d, not redirected to the client (Location %q):\n%s", p.status, p.location, p.body)
	}
	q := back.Query()
	if q.Get("state") != f.state || q.Get("code") == "" {
		t.Fatalf("redirect back %s: want a code and state %q", p.location, f.state)
	}
	return q.Get("code")
}

// tokens redeems a code and verifies the ID token as a relying party
// does: signature through discovery and JWKS, issuer, audience, expiry,
// and the nonce.
func (rp *relyingParty) tokens(t *testing.T, ctx context.Context, f flow, code string) (*oauth2.Token, *gooidc.IDToken) {
	t.Helper()
	tok, err := rp.config.Exchange(ctx, code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		t.Fatalf("code exchange: %v", err)
	}
	return tok, rp.verifyID(t, ctx, tok, f.nonce)
}

// verifyID verifies the ID token of tok; nonce "" skips the nonce check
// (a refreshed ID token carries none).
func (rp *relyingParty) verifyID(t *testing.T, ctx context.Context, tok *oauth2.Token, nonce string) *gooidc.IDToken {
	t.Helper()
	raw, _ := tok.Extra("id_token").(string)
	id, err := rp.verifier.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("ID token: %v", err)
	}
	if id.Nonce != nonce {
		t.Fatalf("ID token nonce = %q, want %q", id.Nonce, nonce)
	}
	return id
}

// payload decodes the claims of a JWT without checking it (the checks
// are the relying party's and the provider's).
func payload(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// mapped returns the values of the named claims that c has.
func mapped(c map[string]any, names ...string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		if v, ok := c[n]; ok {
			out[n] = v
		}
	}
	return out
}

// idClaims returns every claim of a verified ID token.
func idClaims(t *testing.T, id *gooidc.IDToken) map[string]any {
	t.Helper()
	var c map[string]any
	if err := id.Claims(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRelyingParty runs the code flow with PKCE of a real relying party
// against identityd serve over loopback and follows the mapped claims
// through mapper and attribute deletion, and a user through disabling.
func TestRelyingParty(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := newDB(t)
	client := registerRP(t, db, "-name", "Relying Party")
	p := startServe(t, db)
	rp := newRelyingParty(t, ctx, p.base, client)
	uid := createUser(t, p.base, key, "ada")
	api := p.base + "/t/acme/api/v1"
	for _, m := range []struct {
		attr, body string
	}{
		{"dept", `{"claimName":"department","includeInAccess":true,"includeInId":true}`},
		{"level", `{"claimName":"level","includeInAccess":true,"includeInId":false}`},
		{"nick", `{"claimName":"nickname_x","includeInAccess":false,"includeInId":true}`},
	} {
		mustCall(t, http.MethodPut, api+"/claim-mappers/"+m.attr, key, json.RawMessage(m.body), http.StatusNoContent)
	}
	for attr, value := range map[string]string{"dept": "math", "level": "7", "nick": "countess"} {
		mustCall(t, http.MethodPut, fmt.Sprintf("%s/users/%d/attributes/%s", api, uid, attr), key, map[string]string{"value": value}, http.StatusNoContent)
	}
	claimNames := []string{"department", "level", "nickname_x"}

	f := newFlow(1)
	tok, id := rp.tokens(t, ctx, f, rp.signIn(t, f, "ada", "correct horse battery"))
	if id.Subject != fmt.Sprint(uid) || id.Issuer != p.base+"/t/acme" {
		t.Errorf("ID token sub %q iss %q, want %d and %s/t/acme", id.Subject, id.Issuer, uid, p.base)
	}
	first := idClaims(t, id)
	if diff := cmp.Diff(map[string]any{"department": "math", "nickname_x": "countess"}, mapped(first, claimNames...)); diff != "" {
		t.Errorf("mapped claims of the ID token (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"department": "math", "level": "7"}, mapped(payload(t, tok.AccessToken), claimNames...)); diff != "" {
		t.Errorf("mapped claims of the access token (-want +got):\n%s", diff)
	}
	if first["email"] != "ada@example.com" || first["preferred_username"] != "ada" {
		t.Errorf("ID token email %v preferred_username %v, want ada@example.com and ada", first["email"], first["preferred_username"])
	}
	userinfo, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	var info map[string]any
	if err := userinfo.Claims(&info); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"department": "math", "nickname_x": "countess"}, mapped(info, claimNames...)); diff != "" {
		t.Errorf("mapped claims of userinfo (-want +got):\n%s", diff)
	}

	// Deleting the mapper takes the claim out of newly issued tokens; the
	// token issued before still verifies, claim and all.
	mustCall(t, http.MethodDelete, api+"/claim-mappers/dept", key, nil, http.StatusNoContent)
	refreshed := rp.refresh(t, ctx, tok)
	if diff := cmp.Diff(map[string]any{"nickname_x": "countess"}, mapped(idClaims(t, rp.verifyID(t, ctx, refreshed, "")), claimNames...)); diff != "" {
		t.Errorf("ID token after the mapper's deletion (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"level": "7"}, mapped(payload(t, refreshed.AccessToken), claimNames...)); diff != "" {
		t.Errorf("access token after the mapper's deletion (-want +got):\n%s", diff)
	}
	again := rp.verifyID(t, ctx, tok, f.nonce)
	if idClaims(t, again)["department"] != "math" {
		t.Error("the ID token issued before the mapper's deletion lost its claim")
	}

	// Deleting the attribute does the same for its claims.
	mustCall(t, http.MethodDelete, fmt.Sprintf("%s/users/%d/attributes/level", api, uid), key, nil, http.StatusNoContent)
	refreshed2 := rp.refresh(t, ctx, refreshed)
	if diff := cmp.Diff(map[string]any{}, mapped(payload(t, refreshed2.AccessToken), claimNames...)); diff != "" {
		t.Errorf("access token after the attribute's deletion (-want +got):\n%s", diff)
	}
	if _, err := rp.verifier.Verify(ctx, refreshed.Extra("id_token").(string)); err != nil {
		t.Errorf("the ID token issued before the attribute's deletion no longer verifies: %v", err)
	}

	// A disabled user cannot sign in and its refresh fails; enabled again,
	// it signs in.
	mustCall(t, http.MethodDelete, fmt.Sprintf("%s/users/%d", api, uid), key, nil, http.StatusNoContent)
	if _, err := rp.config.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshed2.RefreshToken}).Token(); !isInvalidGrant(err) {
		t.Errorf("refresh of a disabled user: %v, want invalid_grant", err)
	}
	rp.browser = newBrowser(t)
	f2 := newFlow(2)
	denied := rp.submit(t, rp.get(t, rp.authURL(f2)), "ada", "correct horse battery")
	if denied.location != "" || !strings.Contains(denied.body, "is not right") {
		t.Errorf("sign-in of a disabled user: status %d, Location %q; want the form again with the generic error:\n%s", denied.status, denied.location, denied.body)
	}
	mustCall(t, http.MethodPost, fmt.Sprintf("%s/users/%d/enable", api, uid), key, nil, http.StatusNoContent)
	f3 := newFlow(3)
	rp.tokens(t, ctx, f3, rp.signIn(t, f3, "ada", "correct horse battery"))

	// Single sign-on: the session cookie skips the form.
	f4 := newFlow(4)
	sso := rp.get(t, rp.authURL(f4))
	rp.tokens(t, ctx, f4, rp.codeOf(t, sso, f4))
}

// refresh exchanges tok's refresh token for new tokens.
func (rp *relyingParty) refresh(t *testing.T, ctx context.Context, tok *oauth2.Token) *oauth2.Token {
	t.Helper()
	next, err := rp.config.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if next.RefreshToken == "" || next.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh returned refresh token %q, want a new one", next.RefreshToken)
	}
	return next
}

// isInvalidGrant reports whether err is an OAuth invalid_grant answer.
func isInvalidGrant(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == "invalid_grant"
}

// mustCall makes a REST call and fails the test unless it answers want.
func mustCall(t *testing.T, method, u, key string, body any, want int) []byte {
	t.Helper()
	status, b, err := send(method, u, key, body)
	if err != nil {
		t.Fatal(err)
	}
	if status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, u, status, want, b)
	}
	return b
}

// TestPostgresProviderTwoProcesses runs two identityd processes on one
// PostgreSQL database: a code issued through one is redeemed through the
// other, and a refresh token rotated in one is refused as reused in the
// other, which revokes the family in both.
func TestPostgresProviderTwoProcesses(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := pgDB(t)
	a, b := startServe(t, db), startServe(t, db)
	uid := createUser(t, a.base, key, "grace")
	rpA := newRelyingParty(t, ctx, a.base, registerRP(t, db))
	rpB := *rpA
	rpB.config.Endpoint = oauth2.Endpoint{
		AuthURL: b.base + "/t/acme/authorize", TokenURL: b.base + "/t/acme/token", AuthStyle: oauth2.AuthStyleInHeader,
	}

	f := newFlow(1)
	code := rpA.signIn(t, f, "grace", "correct horse battery")
	tok, err := rpB.config.Exchange(ctx, code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		t.Fatalf("redeeming through the second process the code issued through the first: %v", err)
	}
	if sub := payload(t, tok.AccessToken)["sub"]; sub != fmt.Sprint(uid) {
		t.Errorf("access token sub %v, want %d", sub, uid)
	}
	if _, err := rpA.config.Exchange(ctx, code, oauth2.VerifierOption(f.verifier)); !isInvalidGrant(err) {
		t.Errorf("the code again through the first process: %v, want invalid_grant", err)
	}

	f2 := newFlow(2)
	tok2, _ := rpA.tokens(t, ctx, f2, rpA.signIn(t, f2, "grace", "correct horse battery"))
	rotated := rpA.refresh(t, ctx, tok2)
	if _, err := rpB.config.TokenSource(ctx, &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); !isInvalidGrant(err) {
		t.Errorf("the rotated refresh token through the second process: %v, want invalid_grant", err)
	}
	if _, err := rpA.config.TokenSource(ctx, &oauth2.Token{RefreshToken: rotated.RefreshToken}).Token(); !isInvalidGrant(err) {
		t.Errorf("its successor after the reuse: %v, want invalid_grant (the family is revoked)", err)
	}
}

// TestSigningKeyRotate rotates acme's keys with identityd signing-key
// rotate while serve runs on PostgreSQL: a token signed before verifies
// after, and the JWKS publishes the old, the active and the next key.
func TestSigningKeyRotate(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := pgDB(t)
	p := startServe(t, db)
	createUser(t, p.base, key, "lin")
	rp := newRelyingParty(t, ctx, p.base, registerRP(t, db))
	f := newFlow(1)
	tok, _ := rp.tokens(t, ctx, f, rp.signIn(t, f, "lin", "correct horse battery"))
	before := kids(t, p.base)
	out := mustRun(t, "-db", db, "signing-key", "rotate", "-workspace", "acme")
	active := strings.TrimSpace(out.stdout)
	after := kids(t, p.base)
	if len(before) != 2 || len(after) != 3 || !containsAll(after, before...) || !containsAll(before, active) {
		t.Errorf("JWKS kids before %v, after %v, active %q: want a key published before active now, and all three published", before, after, active)
	}
	if _, err := rp.verifier.Verify(ctx, tok.Extra("id_token").(string)); err != nil {
		t.Errorf("a token signed before the rotation: %v", err)
	}
	f2 := newFlow(2)
	_, id2 := rp.tokens(t, ctx, f2, rp.signIn(t, f2, "lin", "correct horse battery"))
	if id2 == nil {
		t.Fatal("no ID token after the rotation")
	}
}

// kids returns the key ids acme's JWKS publishes, in its order.
func kids(t *testing.T, base string) []string {
	t.Helper()
	res, err := http.Get(base + "/t/acme/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range set.Keys {
		out = append(out, k.Kid)
	}
	return out
}

func containsAll(set []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, s := range set {
			found = found || s == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestSigningKeyRotateCommand checks identityd signing-key rotate on a
// bbolt file: it prints the id of the key that now signs, which is the
// key published as next before, and -alg picks the new next key's
// algorithm; bad input exits as documented.
func TestSigningKeyRotateCommand(t *testing.T) {
	db, _ := newDB(t)
	kid := regexp.MustCompile(`^[0-9a-f]{16}\n$`)
	var keys []identity.SigningKey
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		var err error
		if keys, err = ws.ListSigningKeys(ctx); err != nil {
			t.Fatal(err)
		}
	})
	var next string
	for _, k := range keys {
		if k.State == identity.KeyNext {
			next = k.ID
		}
	}
	first := mustRun(t, "-db", db, "signing-key", "rotate", "-workspace", "acme", "-alg", "ES256")
	if !kid.MatchString(first.stdout) || strings.TrimSpace(first.stdout) != next {
		t.Errorf("rotate printed %q, want the next key %s", first.stdout, next)
	}
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		keys, err := ws.ListSigningKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, string(k.State)+" "+k.Algorithm)
		}
		slices.Sort(got)
		if diff := cmp.Diff([]string{"active RS256", "next ES256", "retired RS256"}, got); diff != "" {
			t.Errorf("keys after the rotation (-want +got):\n%s", diff)
		}
	})
	usage := "Usage: identityd [-db FILE] signing-key rotate -workspace SLUG [-alg RS256|ES256]\nRun 'identityd -h' for help.\n"
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown workspace", []string{"-workspace", "nope"}, exitError, "identityd: workspace \"nope\" does not exist\n"},
		{"unknown algorithm", []string{"-workspace", "acme", "-alg", "HS256"}, exitError,
			"identityd: open database " + db + ": identity: Options.SigningAlgorithm must be RS256 or ES256\n"},
		{"missing workspace", nil, exitUsage, "identityd: signing-key rotate: -workspace is required\n" + usage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "signing-key", "rotate"}, tt.args...)...)
			if r.code != tt.code || r.stdout != "" || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}
