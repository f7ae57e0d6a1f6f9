package identitytest

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// The documented shapes of a client id and a client secret.
var (
	clientIDShape     = regexp.MustCompile(`^idc_[0-9a-f]{16}$`)
	clientSecretShape = regexp.MustCompile(`^idcs_[A-Za-z0-9_-]{43}$`)
)

// client creates a valid client and fails the test otherwise.
func (e *env) client(nc identity.NewClient) identity.CreatedClient {
	e.t.Helper()
	c, err := e.ws.CreateClient(e.ctx, nc)
	if err != nil {
		e.t.Fatalf("CreateClient(%+v): %v", nc, err)
	}
	return c
}

// storedClient reads a client's record straight from the store.
func (e *env) storedClient(id string) store.OAuthClient {
	e.t.Helper()
	var rec store.OAuthClient
	err := e.store.View(e.ctx, func(tx store.Tx) (err error) {
		rec, err = tx.OAuthClient(e.ws.Slug(), id)
		return err
	})
	if err != nil {
		e.t.Fatalf("store OAuthClient(%q): %v", id, err)
	}
	return rec
}

// testRuleClients: creation, the secret and its hash, reading, listing,
// deleting and authenticating OAuth clients.
func testRuleClients(t *testing.T, e *env) {
	nc := identity.NewClient{
		Name:                   "Web app",
		RedirectURIs:           []string{"https://app.example.com/callback", "http://localhost:8080/callback"},
		PostLogoutRedirectURIs: []string{"https://app.example.com/"},
	}
	created := e.client(nc)
	conf := created.Client
	if !clientIDShape.MatchString(conf.ID) || !clientSecretShape.MatchString(created.Secret) {
		t.Errorf("client id %q, secret %q; want idc_ + 16 hex digits, idcs_ + 43 base64url", conf.ID, created.Secret)
	}
	want := identity.OAuthClient{
		ID: conf.ID, Name: "Web app", Public: false,
		RedirectURIs:           []string{"https://app.example.com/callback", "http://localhost:8080/callback"},
		PostLogoutRedirectURIs: []string{"https://app.example.com/"},
		GrantTypes:             []identity.GrantType{"authorization_code", "refresh_token"},
		Claims:                 []string{},
		CreatedAt:              testNow,
	}
	if diff := cmp.Diff(want, conf); diff != "" {
		t.Errorf("CreateClient mismatch (-want +got):\n%s", diff)
	}
	// The caller's slices are not kept.
	nc.RedirectURIs[0] = "https://changed.example.com/"
	got, err := e.ws.GetClient(e.ctx, conf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Client mismatch (-want +got):\n%s", diff)
	}
	if got.ResponseTypes()[0] != "code" || len(got.ResponseTypes()) != 1 || got.TokenEndpointAuthMethod() != "client_secret_basic" ||
		!got.HasGrantType("refresh_token") || got.HasGrantType("client_credentials") {
		t.Errorf("derived: response types %v, auth method %q", got.ResponseTypes(), got.TokenEndpointAuthMethod())
	}

	// Only the SHA-256 of the secret is stored.
	rec := e.storedClient(conf.ID)
	sum := sha256.Sum256([]byte(created.Secret))
	if diff := cmp.Diff(sum[:], rec.SecretHash); diff != "" {
		t.Errorf("stored secret hash (-SHA-256 of the secret +stored):\n%s", diff)
	}

	// A public client has no secret and no hash.
	pub := e.client(identity.NewClient{Public: true, RedirectURIs: []string{"http://127.0.0.1:51234/cb"},
		GrantTypes: []identity.GrantType{"authorization_code"}})
	if pub.Secret != "" || len(e.storedClient(pub.Client.ID).SecretHash) != 0 || !pub.Client.Public {
		t.Errorf("public client: secret %q, stored hash %x", pub.Secret, e.storedClient(pub.Client.ID).SecretHash)
	}
	wantPub := identity.OAuthClient{
		ID: pub.Client.ID, Public: true, RedirectURIs: []string{"http://127.0.0.1:51234/cb"},
		PostLogoutRedirectURIs: []string{}, GrantTypes: []identity.GrantType{"authorization_code"}, Claims: []string{}, CreatedAt: testNow,
	}
	if diff := cmp.Diff(wantPub, pub.Client); diff != "" {
		t.Errorf("public client mismatch (-want +got):\n%s", diff)
	}
	if pub.Client.TokenEndpointAuthMethod() != "none" {
		t.Errorf("public TokenEndpointAuthMethod = %q, want none", pub.Client.TokenEndpointAuthMethod())
	}

	// A machine client: client_credentials alone, no response type.
	machine := e.client(identity.NewClient{RedirectURIs: []string{"https://svc.example.com/unused"},
		GrantTypes: []identity.GrantType{"client_credentials"}})
	if rt := machine.Client.ResponseTypes(); rt == nil || len(rt) != 0 {
		t.Errorf("client_credentials client ResponseTypes = %#v, want empty", rt)
	}

	// Listing: ascending id, without secrets.
	list, err := e.ws.ListClients(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{conf.ID, pub.Client.ID, machine.Client.ID}
	slices.Sort(ids)
	var listed []string
	for _, c := range list {
		listed = append(listed, c.ID)
	}
	if diff := cmp.Diff(ids, listed); diff != "" {
		t.Errorf("Clients order (-want +got):\n%s", diff)
	}

	// Authentication.
	if a, err := e.ws.AuthenticateClient(e.ctx, conf.ID, created.Secret); err != nil || a.ID != conf.ID {
		t.Fatalf("AuthenticateClient with the right secret = %+v, %v", a, err)
	}
	other, err := e.svc.CreateWorkspace(e.ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	flipped := created.Secret[:len(created.Secret)-1] + "A"
	if strings.HasSuffix(created.Secret, "A") {
		flipped = created.Secret[:len(created.Secret)-1] + "B"
	}
	refused := []struct {
		name       string
		ws         *identity.Workspace
		id, secret string
	}{
		{"wrong secret", e.ws, conf.ID, flipped},
		{"empty secret", e.ws, conf.ID, ""},
		{"secret with a suffix", e.ws, conf.ID, created.Secret + "x"},
		{"secret of another client", e.ws, conf.ID, machine.Secret},
		{"unknown client", e.ws, "idc_0000000000000000", created.Secret},
		{"empty id", e.ws, "", created.Secret},
		{"public client, no secret", e.ws, pub.Client.ID, ""},
		{"public client, some secret", e.ws, pub.Client.ID, created.Secret},
		{"another workspace", other, conf.ID, created.Secret},
	}
	var first error
	for _, r := range refused {
		_, err := r.ws.AuthenticateClient(e.ctx, r.id, r.secret)
		WantCode(t, err, identity.CodeUnauthenticated)
		if first == nil {
			first = err
		} else if diff := cmp.Diff(first.Error(), err.Error()); diff != "" {
			t.Errorf("%s: the error differs from the first refusal's (-first +this):\n%s", r.name, diff)
		}
	}

	// A public client never authenticates with a secret, even one whose
	// record holds a hash (written here straight to the store).
	forged := e.storedClient(pub.Client.ID)
	forged.SecretHash = rec.SecretHash
	if err := e.store.Update(e.ctx, func(tx store.Tx) error { return tx.PutOAuthClient(e.ws.Slug(), forged) }); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.AuthenticateClient(e.ctx, pub.Client.ID, created.Secret)
	WantCode(t, err, identity.CodeUnauthenticated)

	// Reading and deleting what does not exist.
	for _, id := range []string{"idc_0000000000000000", "", strings.ToUpper(conf.ID)} {
		_, err := e.ws.GetClient(e.ctx, id)
		WantCode(t, err, identity.CodeNotFound)
		WantCode(t, e.ws.DeleteClient(e.ctx, id), identity.CodeNotFound)
	}
	_, err = other.GetClient(e.ctx, conf.ID)
	WantCode(t, err, identity.CodeNotFound)
	WantCode(t, other.DeleteClient(e.ctx, conf.ID), identity.CodeNotFound) // not its client
	if l, err := other.ListClients(e.ctx); err != nil || l == nil || len(l) != 0 {
		t.Errorf("Clients of an empty workspace = %#v, %v; want empty, not nil", l, err)
	}

	// Deleting: the client and its secret are gone at once.
	if err := e.ws.DeleteClient(e.ctx, conf.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.GetClient(e.ctx, conf.ID)
	WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.AuthenticateClient(e.ctx, conf.ID, created.Secret)
	WantCode(t, err, identity.CodeUnauthenticated)
	WantCode(t, e.ws.DeleteClient(e.ctx, conf.ID), identity.CodeNotFound)
	list, err = e.ws.ListClients(e.ctx)
	if err != nil || len(list) != 2 {
		t.Errorf("Clients after a delete = %d clients, %v; want 2", len(list), err)
	}
}

// testRuleClientValidation tries every documented rule of NewClient on
// both sides of its bounds.
func testRuleClientValidation(t *testing.T, e *env) {
	uris := func(n int, format string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}
	grants := func(g ...identity.GrantType) []identity.GrantType { return g }
	const cb = "https://app.example.com/cb"
	// uri2048 and uri2049 are 2048 and 2049 code points long.
	uri2048 := "https://app.example.com/" + repeat("é", 2048-24)
	uri2049 := "https://app.example.com/" + repeat("é", 2049-24)
	tests := []struct {
		name   string
		nc     identity.NewClient // RedirectURIs nil means {cb}
		grants []identity.GrantType
		fields []identity.FieldError // nil: accepted
	}{
		{"name empty", identity.NewClient{}, nil, nil},
		{"name 255 code points", identity.NewClient{Name: repeat("ü", 255)}, nil, nil},
		{"name 256 code points", identity.NewClient{Name: repeat("ü", 256)}, nil, []identity.FieldError{fe("name", identity.RuleMaxLength)}},
		{"name with a tab", identity.NewClient{Name: "a\tb"}, nil, []identity.FieldError{fe("name", identity.RuleControlCharacter)}},
		{"name with a newline", identity.NewClient{Name: "a\nb"}, nil, []identity.FieldError{fe("name", identity.RuleControlCharacter)}},
		{"name not UTF-8", identity.NewClient{Name: "a\xff"}, nil, []identity.FieldError{fe("name", identity.RuleUTF8)}},

		{"no redirect URI", identity.NewClient{RedirectURIs: []string{}}, nil, []identity.FieldError{fe("redirectUris", identity.RuleRequired)}},
		{"20 redirect URIs", identity.NewClient{RedirectURIs: uris(20, "https://app.example.com/cb/%d")}, nil, nil},
		{"21 redirect URIs", identity.NewClient{RedirectURIs: uris(21, "https://app.example.com/cb/%d")}, nil,
			[]identity.FieldError{fe("redirectUris", identity.RuleRange)}},
		{"redirect URI 2048 code points", identity.NewClient{RedirectURIs: []string{uri2048}}, nil, nil},
		{"redirect URI 2049 code points", identity.NewClient{RedirectURIs: []string{uri2049}}, nil,
			[]identity.FieldError{fe("redirectUris[0]", identity.RuleMaxLength)}},
		{"redirect URI empty", identity.NewClient{RedirectURIs: []string{cb, ""}}, nil, []identity.FieldError{fe("redirectUris[1]", identity.RuleRequired)}},
		{"redirect URI with a query", identity.NewClient{RedirectURIs: []string{cb + "?tenant=a&x=1"}}, nil, nil},
		{"redirect URI with a port", identity.NewClient{RedirectURIs: []string{"https://app.example.com:8443/cb"}}, nil, nil},
		{"redirect URI, scheme in capitals", identity.NewClient{RedirectURIs: []string{"HTTPS://app.example.com/cb"}}, nil, nil},
		{"http on localhost", identity.NewClient{RedirectURIs: []string{"http://localhost:8080/cb"}}, nil, nil},
		{"http on LOCALHOST", identity.NewClient{RedirectURIs: []string{"http://LOCALHOST/cb"}}, nil, nil},
		{"http on 127.0.0.1", identity.NewClient{RedirectURIs: []string{"http://127.0.0.1:51234/cb"}}, nil, nil},
		{"http on 127.255.255.254", identity.NewClient{RedirectURIs: []string{"http://127.255.255.254/cb"}}, nil, nil},
		{"http on [::1]", identity.NewClient{RedirectURIs: []string{"http://[::1]:8080/cb"}}, nil, nil},
		{"http on a public host", identity.NewClient{RedirectURIs: []string{"http://app.example.com/cb"}}, nil,
			[]identity.FieldError{fe("redirectUris[0]", identity.RuleLoopbackOnly)}},
		{"http on 128.0.0.1", identity.NewClient{RedirectURIs: []string{"http://128.0.0.1/cb"}}, nil,
			[]identity.FieldError{fe("redirectUris[0]", identity.RuleLoopbackOnly)}},
		{"http on a private address", identity.NewClient{RedirectURIs: []string{"http://10.0.0.1/cb"}}, nil,
			[]identity.FieldError{fe("redirectUris[0]", identity.RuleLoopbackOnly)}},
		{"http on a name under localhost", identity.NewClient{RedirectURIs: []string{"http://app.localhost/cb"}}, nil,
			[]identity.FieldError{fe("redirectUris[0]", identity.RuleLoopbackOnly)}},
		{"http on a name containing localhost", identity.NewClient{RedirectURIs: []string{"http://localhost.example.com/cb"}}, nil,
			[]identity.FieldError{fe("redirectUris[0]", identity.RuleLoopbackOnly)}},
		{"relative", identity.NewClient{RedirectURIs: []string{"/cb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"no host", identity.NewClient{RedirectURIs: []string{"https:///cb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"a port but no host", identity.NewClient{RedirectURIs: []string{"https://:443/cb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"opaque", identity.NewClient{RedirectURIs: []string{"https:app.example.com"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"custom scheme", identity.NewClient{RedirectURIs: []string{"com.example.app:/cb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"custom scheme with a host", identity.NewClient{RedirectURIs: []string{"myapp://cb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"user information", identity.NewClient{RedirectURIs: []string{"https://u:p@app.example.com/cb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"a space", identity.NewClient{RedirectURIs: []string{"https://app.example.com/c b"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"a control character", identity.NewClient{RedirectURIs: []string{"https://app.example.com/c\x7fb"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"a fragment", identity.NewClient{RedirectURIs: []string{cb + "#top"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"an empty fragment", identity.NewClient{RedirectURIs: []string{cb + "#"}}, nil, []identity.FieldError{fe("redirectUris[0]", identity.RuleFormat)}},
		{"duplicate", identity.NewClient{RedirectURIs: []string{cb, "https://app.example.com/other", cb}}, nil,
			[]identity.FieldError{fe("redirectUris[2]", identity.RuleDuplicate)}},
		{"differing in case only", identity.NewClient{RedirectURIs: []string{cb, "https://app.example.com/CB"}}, nil, nil},

		{"20 post-logout URIs", identity.NewClient{PostLogoutRedirectURIs: uris(20, "https://app.example.com/bye/%d")}, nil, nil},
		{"21 post-logout URIs", identity.NewClient{PostLogoutRedirectURIs: uris(21, "https://app.example.com/bye/%d")}, nil,
			[]identity.FieldError{fe("postLogoutRedirectUris", identity.RuleRange)}},
		{"post-logout URI 2049 code points", identity.NewClient{PostLogoutRedirectURIs: []string{uri2049}}, nil,
			[]identity.FieldError{fe("postLogoutRedirectUris[0]", identity.RuleMaxLength)}},
		{"post-logout URI on http", identity.NewClient{PostLogoutRedirectURIs: []string{"https://app.example.com/", "http://app.example.com/"}}, nil,
			[]identity.FieldError{fe("postLogoutRedirectUris[1]", identity.RuleLoopbackOnly)}},
		{"post-logout URI with a fragment", identity.NewClient{PostLogoutRedirectURIs: []string{"https://app.example.com/#bye"}}, nil,
			[]identity.FieldError{fe("postLogoutRedirectUris[0]", identity.RuleFormat)}},
		{"post-logout URI twice", identity.NewClient{PostLogoutRedirectURIs: []string{"https://app.example.com/", "https://app.example.com/"}}, nil,
			[]identity.FieldError{fe("postLogoutRedirectUris[1]", identity.RuleDuplicate)}},
		{"post-logout URI equal to a redirect URI", identity.NewClient{PostLogoutRedirectURIs: []string{cb}}, nil, nil},

		{"grant types nil: the default", identity.NewClient{}, grants("authorization_code", "refresh_token"), nil},
		{"grant types empty: the default", identity.NewClient{GrantTypes: grants()}, grants("authorization_code", "refresh_token"), nil},
		{"public, default grant types", identity.NewClient{Public: true}, grants("authorization_code", "refresh_token"), nil},
		{"authorization_code alone", identity.NewClient{GrantTypes: grants("authorization_code")}, grants("authorization_code"), nil},
		{"order kept", identity.NewClient{GrantTypes: grants("refresh_token", "authorization_code")}, grants("refresh_token", "authorization_code"), nil},
		{"all three, confidential", identity.NewClient{GrantTypes: grants("client_credentials", "authorization_code", "refresh_token")},
			grants("client_credentials", "authorization_code", "refresh_token"), nil},
		{"client_credentials alone, confidential", identity.NewClient{GrantTypes: grants("client_credentials")}, grants("client_credentials"), nil},
		{"client_credentials, public", identity.NewClient{Public: true, GrantTypes: grants("authorization_code", "client_credentials")}, nil,
			[]identity.FieldError{fe("grantTypes[1]", identity.RuleNotAllowed)}},
		{"refresh_token alone", identity.NewClient{GrantTypes: grants("refresh_token")}, nil,
			[]identity.FieldError{fe("grantTypes[0]", identity.RuleNotAllowed)}},
		{"refresh_token with client_credentials", identity.NewClient{GrantTypes: grants("client_credentials", "refresh_token")}, nil,
			[]identity.FieldError{fe("grantTypes[1]", identity.RuleNotAllowed)}},
		{"unknown grant type", identity.NewClient{GrantTypes: grants("authorization_code", "password")}, nil,
			[]identity.FieldError{fe("grantTypes[1]", identity.RuleUnknown)}},
		{"implicit", identity.NewClient{GrantTypes: grants("implicit")}, nil, []identity.FieldError{fe("grantTypes[0]", identity.RuleUnknown)}},
		{"grant type in capitals", identity.NewClient{GrantTypes: grants("Authorization_Code")}, nil,
			[]identity.FieldError{fe("grantTypes[0]", identity.RuleUnknown)}},
		{"grant type empty", identity.NewClient{GrantTypes: grants("")}, nil, []identity.FieldError{fe("grantTypes[0]", identity.RuleUnknown)}},
		{"grant type twice", identity.NewClient{GrantTypes: grants("authorization_code", "refresh_token", "authorization_code")}, nil,
			[]identity.FieldError{fe("grantTypes[2]", identity.RuleDuplicate)}},

		{"every problem at once", identity.NewClient{
			Name: repeat("n", 256), Public: true, RedirectURIs: []string{"http://app.example.com/cb", cb + "#x"},
			PostLogoutRedirectURIs: []string{"ftp://app.example.com/"}, GrantTypes: grants("client_credentials", "refresh_token", "device_code"),
		}, nil, []identity.FieldError{
			fe("name", identity.RuleMaxLength),
			fe("redirectUris[0]", identity.RuleLoopbackOnly), fe("redirectUris[1]", identity.RuleFormat),
			fe("postLogoutRedirectUris[0]", identity.RuleFormat),
			fe("grantTypes[0]", identity.RuleNotAllowed), fe("grantTypes[1]", identity.RuleNotAllowed), fe("grantTypes[2]", identity.RuleUnknown),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := tt.nc
			if nc.RedirectURIs == nil {
				nc.RedirectURIs = []string{cb}
			}
			created, err := e.ws.CreateClient(e.ctx, nc)
			if tt.fields != nil {
				WantCode(t, err, identity.CodeInvalid)
				WantFields(t, err, tt.fields)
				return
			}
			if err != nil {
				t.Fatalf("CreateClient: %v", err)
			}
			if tt.grants != nil {
				if diff := cmp.Diff(tt.grants, created.Client.GrantTypes); diff != "" {
					t.Errorf("GrantTypes (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(nc.RedirectURIs, created.Client.RedirectURIs); diff != "" {
				t.Errorf("RedirectURIs (-want +got):\n%s", diff)
			}
		})
	}
	// Nothing refused was stored.
	list, err := e.ws.ListClients(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, tt := range tests {
		if tt.fields == nil {
			accepted++
		}
	}
	if len(list) != accepted {
		t.Errorf("%d clients stored, want the %d accepted", len(list), accepted)
	}
}

// testRuleClientLimit: at most 100 clients a workspace; validation comes
// before the limit; a delete makes room again.
func testRuleClientLimit(t *testing.T, e *env) {
	nc := identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}}
	var ids []string
	for i := range 100 {
		c, err := e.ws.CreateClient(e.ctx, nc)
		if err != nil {
			t.Fatalf("client %d of 100: %v", i+1, err)
		}
		ids = append(ids, c.Client.ID)
	}
	_, err := e.ws.CreateClient(e.ctx, nc)
	WantCode(t, err, identity.CodeLimitReached)
	_, err = e.ws.CreateClient(e.ctx, identity.NewClient{})
	WantCode(t, err, identity.CodeInvalid)
	// Another workspace has a limit of its own.
	other, err := e.svc.CreateWorkspace(e.ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateClient(e.ctx, nc); err != nil {
		t.Errorf("first client of another workspace: %v", err)
	}
	if err := e.ws.DeleteClient(e.ctx, ids[42]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.CreateClient(e.ctx, nc); err != nil {
		t.Errorf("client 100 after a delete: %v", err)
	}
	_, err = e.ws.CreateClient(e.ctx, nc)
	WantCode(t, err, identity.CodeLimitReached)
	list, err := e.ws.ListClients(e.ctx)
	if err != nil || len(list) != 100 {
		t.Errorf("Clients = %d, %v; want 100", len(list), err)
	}
}

// testRuleConcurrentClients races 20 creations into a workspace that has
// 90 clients: exactly 10 are created, the rest hit the limit, because the
// count and the write are one transaction.
func testRuleConcurrentClients(t *testing.T, e *env) {
	nc := identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}}
	for i := range 90 {
		if _, err := e.ws.CreateClient(e.ctx, nc); err != nil {
			t.Fatalf("client %d: %v", i+1, err)
		}
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.ws.CreateClient(e.ctx, nc)
		})
	}
	wg.Wait()
	ok, limited := countLimited(t, errs)
	list, err := e.ws.ListClients(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 10 || limited != 10 || len(list) != 100 {
		t.Errorf("%d created, %d limited, %d stored; want 10, 10, 100", ok, limited, len(list))
	}
}
