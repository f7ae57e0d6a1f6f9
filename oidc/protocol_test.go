package oidc_test

import (
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/oidc"
)

// send sends a request with a form body (none when form is nil), the
// headers given as name, value pairs.
func send(t testing.TB, method, u string, form url.Values, header ...string) reply {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, http.DefaultClient, req)
}

// basic is the Authorization header of HTTP Basic authentication.
func basic(user, password string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
}

// TestQueryRefused: the token, introspection, revocation and userinfo
// endpoints refuse any query string, the credentials and tokens it may
// carry above all, with 400 invalid_request (userinfo with the Bearer
// challenge of RFC 6750, 3.1), before doing anything: the refused
// revocation revokes nothing, and the refused token request with a valid
// secret in the query issues nothing.
func TestQueryRefused(t *testing.T) {
	p := newProvider(t)
	tok := p.tokens()
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	web, secret := p.web.Client.ID, p.web.Secret
	auth := basic(web, secret)
	cc := url.Values{"grant_type": {"client_credentials"}}
	tests := []struct {
		name      string
		method    string
		url       string
		form      url.Values
		header    []string
		challenge string
	}{
		{"client_secret in the token request's query", http.MethodPost,
			p.issuer + "/token?client_secret=" + url.QueryEscape(secret), url.Values{"grant_type": {"client_credentials"}, "client_id": {web}}, nil, ""},
		{"client id and secret in the token request's query", http.MethodPost,
			p.issuer + "/token?" + url.Values{"client_id": {web}, "client_secret": {secret}}.Encode(), cc, nil, ""},
		{"grant in the token request's query", http.MethodPost,
			p.issuer + "/token?grant_type=refresh_token&refresh_token=" + url.QueryEscape(refresh), url.Values{}, []string{"Authorization", auth}, ""},
		{"a harmless parameter in the token request's query", http.MethodPost, p.issuer + "/token?lang=en", cc, []string{"Authorization", auth}, ""},
		{"a parameter without a value", http.MethodPost, p.issuer + "/token?x", cc, []string{"Authorization", auth}, ""},
		{"token in the introspection request's query", http.MethodPost,
			p.issuer + "/introspect?token=" + url.QueryEscape(access), url.Values{}, []string{"Authorization", auth}, ""},
		{"token in the revocation request's query", http.MethodPost,
			p.issuer + "/revoke?token=" + url.QueryEscape(access), url.Values{}, []string{"Authorization", auth}, ""},
		{"access_token in the userinfo query (GET)", http.MethodGet,
			p.issuer + "/userinfo?access_token=" + url.QueryEscape(access), nil, nil, `Bearer error="invalid_request"`},
		{"access_token in the userinfo query (POST)", http.MethodPost,
			p.issuer + "/userinfo?access_token=" + url.QueryEscape(access), url.Values{}, nil, `Bearer error="invalid_request"`},
		{"any parameter at userinfo, the token in the header", http.MethodGet,
			p.issuer + "/userinfo?schema=openid", nil, []string{"Authorization", "Bearer " + access}, `Bearer error="invalid_request"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, tt.method, tt.url, tt.form, tt.header...)
			if got, want := errorOf(t, r), (oauthError{400, "invalid_request", true}); got != want {
				t.Errorf("got %+v, want %+v (%s)", got, want, r.body)
			}
			if got := r.header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
			if got := r.header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q", got)
			}
		})
	}
	// Nothing was revoked or issued by the refused requests.
	for _, token := range []string{access, refresh} {
		if in := p.introspect(token); in["active"] != true {
			t.Errorf("after the refused revocation: %v", in)
		}
	}

	// Without a query, and with an empty one, the same requests work.
	for _, u := range []string{p.issuer + "/token", p.issuer + "/token?"} {
		if r := send(t, http.MethodPost, u, cc, "Authorization", auth); r.status != http.StatusOK {
			t.Errorf("POST %s: %d %s", u, r.status, r.body)
		}
	}
	if r := send(t, http.MethodGet, p.issuer+"/userinfo", nil, "Authorization", "Bearer "+access); r.status != http.StatusOK {
		t.Errorf("userinfo with the token in the header: %d %s", r.status, r.body)
	}
	if r := send(t, http.MethodPost, p.issuer+"/userinfo", url.Values{"access_token": {access}}); r.status != http.StatusOK {
		t.Errorf("userinfo with the token in the body: %d %s", r.status, r.body)
	}
	// The discovery document and the keys take queries (a cache buster).
	if r := get(t, http.DefaultClient, p.issuer+"/.well-known/openid-configuration?v=1"); r.status != http.StatusOK {
		t.Errorf("discovery with a query: %d", r.status)
	}
}

// TestQueryRefusedCORS: a browser application reads the refusal (it has
// the CORS headers of every JSON answer), and its preflight is answered
// as usual.
func TestQueryRefusedCORS(t *testing.T) {
	p := newProvider(t)
	const origin = "https://spa.example"
	u := p.issuer + "/token?client_id=" + p.spa.Client.ID
	r := send(t, http.MethodPost, u, url.Values{"grant_type": {"authorization_code"}}, "Origin", origin)
	if r.status != http.StatusBadRequest || r.header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("refusal: %d, Access-Control-Allow-Origin %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	pre := send(t, http.MethodOptions, u, nil, "Origin", origin, "Access-Control-Request-Method", http.MethodPost)
	if pre.status >= 300 || pre.header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("preflight: %d, Access-Control-Allow-Origin %q", pre.status, pre.header.Get("Access-Control-Allow-Origin"))
	}
}

// userAgent is a RoundTripper that sends every request with a
// User-Agent, and optionally an X-Forwarded-For.
type userAgent struct {
	ua, forwardedFor string
}

func (u userAgent) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", u.ua)
	if u.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", u.forwardedFor)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestRequestInfo: the library calls of a request carry its
// identity.RequestInfo, so a session started through the sign-in page
// records the browser's User-Agent and address: the peer's, or, when the
// peer is a trusted proxy, the address it forwarded.
func TestRequestInfo(t *testing.T) {
	const ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	tests := []struct {
		name         string
		trusted      []netip.Prefix
		forwardedFor string
		want         identity.Session
	}{
		{"no proxy", nil, "", identity.Session{UserAgent: ua, Address: "127.0.0.1", AMR: []string{"pwd"}}},
		{"an untrusted peer's X-Forwarded-For is ignored", nil, "203.0.113.9",
			identity.Session{UserAgent: ua, Address: "127.0.0.1", AMR: []string{"pwd"}}},
		{"a trusted proxy's X-Forwarded-For", []netip.Prefix{loopback}, "198.51.100.4, 203.0.113.9",
			identity.Session{UserAgent: ua, Address: "203.0.113.9", AMR: []string{"pwd"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProviderWith(t, func(o *identity.Options) { o.TrustedProxies = tt.trusted }, nil)
			c := p.browser()
			c.Transport = userAgent{ua: ua, forwardedFor: tt.forwardedFor}
			p.signedIn(c)
			list, err := p.ws.ListSessions(t.Context(), p.ada.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 {
				t.Fatalf("sessions: %+v", list.Items)
			}
			s := list.Items[0]
			got := identity.Session{UserAgent: s.UserAgent, Address: s.Address, AMR: s.AMR}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("session (-want +got):\n%s", diff)
			}
		})
	}
}

// accessLine matches one request line of the handler's log.
var accessLine = regexp.MustCompile(`(?m)^level=INFO msg="http request" method=(\S+) route=(\S+) status=(\d+) duration=\S+ bytes=\d+(?: client_id=(\S+))?$`)

// logged is what a request line says.
type logged struct {
	method, route, status, clientID string
}

// TestRequestLog: one line per request, with the method, the route
// pattern (not the path), the status and the client when the request
// names it; never a secret, code, token or password, wherever the request
// carried it.
func TestRequestLog(t *testing.T) {
	var buf testutil.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	p := newProviderWith(t, nil, &oidc.Options{Logger: logger})
	web, spa := p.web.Client.ID, p.spa.Client.ID
	c := p.browser()
	code := p.signedIn(c) // authorize, login page, login POST
	tok := p.exchange(code).json(t)
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	send(t, http.MethodGet, p.issuer+"/userinfo", nil, "Authorization", "Bearer "+access)
	send(t, http.MethodPost, p.issuer+"/introspect", url.Values{"token": {refresh}, "client_id": {web}, "client_secret": {p.web.Secret}})
	send(t, http.MethodGet, p.issuer+"/userinfo?access_token="+access, nil)
	send(t, http.MethodPost, p.issuer+"/token?client_id="+spa+"&client_secret=idcs_guess", url.Values{"grant_type": {"client_credentials"}})
	send(t, http.MethodPost, p.issuer+"/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {p.web.Secret}})
	send(t, http.MethodPost, p.issuer+"/token", url.Values{"grant_type": {"client_credentials"}}, "Authorization", basic(web, "idcs_wrong"))
	get(t, http.DefaultClient, p.issuer+"/keys")
	get(t, http.DefaultClient, p.srv.URL+"/t/nobody/keys")
	get(t, http.DefaultClient, p.srv.URL+"/t/acme/nothing-here")

	var got []logged
	for _, m := range accessLine.FindAllStringSubmatch(buf.String(), -1) {
		got = append(got, logged{m[1], m[2], m[3], m[4]})
	}
	want := []logged{
		{"GET", "/t/:slug/authorize", "302", web},
		{"GET", "/t/:slug/login", "200", ""},
		{"POST", "/t/:slug/login", "302", ""},
		{"POST", "/t/:slug/token", "200", web},
		{"GET", "/t/:slug/userinfo", "200", ""},
		{"POST", "/t/:slug/introspect", "200", web},
		{"GET", "/t/:slug/userinfo", "400", ""},
		// The client the query named, though the query is refused.
		{"POST", "/t/:slug/token", "400", spa},
		// A secret sent as the client id is no client's id.
		{"POST", "/t/:slug/token", "401", ""},
		// A wrong secret: the client is named.
		{"POST", "/t/:slug/token", "401", web},
		{"GET", "/t/:slug/keys", "200", ""},
		{"GET", "/t/:slug/keys", "404", ""},
		{"GET", `""`, "404", ""},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(logged{})); diff != "" {
		t.Errorf("request lines (-want +got):\n%s\nlog:\n%s", diff, buf.String())
	}
	for name, secret := range map[string]string{
		"client secret": p.web.Secret, "code": code, "access token": access, "refresh token": refresh,
		"password": adaPassword, "guessed secret": "idcs_guess", "state": "st-1",
	} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("the log holds the %s", name)
		}
	}
}
