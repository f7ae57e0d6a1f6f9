package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/identitylib/identity"
)

// step is one run of a command and what it must print.
type step struct {
	args           []string
	code           int
	stdout, stderr string
}

// runSteps runs each step's command line after the prefix and compares
// its exit status and output.
func runSteps(t *testing.T, prefix []string, steps []step) {
	t.Helper()
	for _, s := range steps {
		r := runCmd(t, append(append([]string{}, prefix...), s.args...)...)
		got := step{s.args, r.code, r.stdout, r.stderr}
		if diff := cmp.Diff(s, got, cmp.AllowUnexported(step{})); diff != "" {
			t.Errorf("identityd %s (-want +got):\n%s", strings.Join(s.args, " "), diff)
		}
	}
}

// addUser creates a user of acme in the database, which must not be in
// use, and returns its id.
func addUser(t *testing.T, db, name, email string) (id int64) {
	t.Helper()
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		u, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: email, FullName: "User " + name, Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		id = u.ID
	})
	return id
}

// TestUserVerifyEmail: user verify-email marks an address verified, or
// with -unverified not verified, whichever way the user is named, and
// says so; a repeat changes nothing.
func TestUserVerifyEmail(t *testing.T) {
	db, _ := newDB(t)
	addUser(t, db, "ada", "ada@example.com")
	addUser(t, db, "bob", "bob@example.com")
	usage := "Usage: identityd [-db FILE] user verify-email -workspace SLUG USER [-unverified]\nRun 'identityd -h' for help.\n"
	runSteps(t, []string{"-db", db, "user", "verify-email"}, []step{
		{[]string{"-workspace", "acme", "ada"}, exitOK, "user 1 (ada): email ada@example.com verified\n", ""},
		{[]string{"-workspace", "acme", "1"}, exitOK, "user 1 (ada): email ada@example.com verified\n", ""},
		{[]string{"-workspace", "acme", "BOB@example.com"}, exitOK, "user 2 (bob): email bob@example.com verified\n", ""},
		{[]string{"-workspace", "acme", "ada", "-unverified"}, exitOK, "user 1 (ada): email ada@example.com not verified\n", ""},
		{[]string{"-unverified", "-workspace", "acme", "ada"}, exitOK, "user 1 (ada): email ada@example.com not verified\n", ""},
		{[]string{"-workspace", "acme", "carol"}, exitError, "", "identityd: workspace acme has no user with username \"carol\"\n"},
		{[]string{"-workspace", "nope", "ada"}, exitError, "", "identityd: workspace \"nope\" does not exist\n"},
		{[]string{"-workspace", "acme"}, exitUsage, "", "identityd: user verify-email: missing USER\n" + usage},
		{[]string{"ada"}, exitUsage, "", "identityd: user verify-email: -workspace is required\n" + usage},
	})
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		got := map[string]bool{}
		for _, id := range []int64{1, 2} {
			u, err := ws.GetUser(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			got[u.Username] = u.EmailVerified
		}
		if diff := cmp.Diff(map[string]bool{"ada": false, "bob": true}, got); diff != "" {
			t.Errorf("stored emailVerified (-want +got):\n%s", diff)
		}
	})
}

// TestWorkspaceThrottle: workspace throttle shows the limits, defaults
// filled in, and changes those whose flags are given; the library's
// bounds hold.
func TestWorkspaceThrottle(t *testing.T) {
	db, _ := newDB(t)
	const defaults = "throttle: on\nper address: 50 failed sign-ins in 15m\nper login: 10 failed sign-ins in 15m\nmail interval: 5m\n"
	usage := "Usage: identityd [-db FILE] workspace throttle -workspace SLUG [-throttle=false] [-per-address COUNT/WINDOW] [-per-login COUNT/WINDOW] [-mail-interval D]\nRun 'identityd -h' for help.\n"
	runSteps(t, []string{"-db", db, "workspace", "throttle"}, []step{
		{[]string{"-workspace", "acme"}, exitOK, defaults, ""},
		{[]string{"-workspace", "acme", "-per-address", "20/10m", "-per-login", "5/1h30m"}, exitOK,
			"throttle: on\nper address: 20 failed sign-ins in 10m\nper login: 5 failed sign-ins in 1h30m\nmail interval: 5m\n", ""},
		{[]string{"-workspace", "acme", "-mail-interval", "45s", "-throttle=false"}, exitOK,
			"throttle: off\nper address: 20 failed sign-ins in 10m\nper login: 5 failed sign-ins in 1h30m\nmail interval: 45s\n", ""},
		{[]string{"-workspace", "acme", "-per-login", "0/0", "-throttle"}, exitOK,
			"throttle: on\nper address: 20 failed sign-ins in 10m\nper login: 10 failed sign-ins in 15m\nmail interval: 45s\n", ""},
		{[]string{"-workspace", "acme", "-per-address", "20"}, exitUsage, "",
			"identityd: workspace throttle: -per-address: \"20\" is not COUNT/WINDOW, such as 50/15m\n" + usage},
		{[]string{"-workspace", "acme", "-per-login", "x/15m"}, exitUsage, "",
			"identityd: workspace throttle: -per-login: count \"x\" is not a number\n" + usage},
		{[]string{"-workspace", "acme", "-per-login", "5/soon"}, exitUsage, "",
			"identityd: workspace throttle: -per-login: window \"soon\" is not a duration, such as 15m\n" + usage},
		{[]string{"-workspace", "acme", "-per-address", "5/1500ms"}, exitError, "",
			"identityd: invalid settings: throttle.perAddress.window must be whole seconds between 1s and 24h0m0s (0 for the default)\n"},
		{[]string{"-workspace", "acme", "-per-login", "100001/1m"}, exitError, "",
			"identityd: invalid settings: throttle.perLogin.count must be between 1 and 100000 (0 for the default)\n"},
		{[]string{"-workspace", "acme", "-mail-interval", "25h"}, exitError, "",
			"identityd: invalid settings: throttle.mailInterval must be whole seconds between 1s and 24h0m0s (0 for the default)\n"},
		{[]string{"-workspace", "acme"}, exitOK,
			"throttle: on\nper address: 20 failed sign-ins in 10m\nper login: 10 failed sign-ins in 15m\nmail interval: 45s\n", ""},
	})
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := identity.ThrottlePolicy{PerAddress: identity.Rate{Count: 20, Window: 10 * time.Minute}, MailInterval: 45 * time.Second}
		if diff := cmp.Diff(want, s.Throttle); diff != "" {
			t.Errorf("stored throttle (-want +got):\n%s", diff)
		}
	})
}

// TestWorkspaceBranding: workspace branding shows the display name and
// accent (the defaults marked) and the logo, and changes the name and
// accent; a colour with too little contrast is refused.
func TestWorkspaceBranding(t *testing.T) {
	db, _ := newDB(t)
	runSteps(t, []string{"-db", db, "workspace", "branding"}, []step{
		{[]string{"-workspace", "acme"}, exitOK, "display name: acme (default)\naccent color: #1d5fc9 (default)\nlogo: none\n", ""},
		{[]string{"-workspace", "acme", "-display-name", "Acme Corp"}, exitOK, "display name: Acme Corp\naccent color: #1d5fc9 (default)\nlogo: none\n", ""},
		{[]string{"-workspace", "acme", "-accent-color", "#0b5345"}, exitOK, "display name: Acme Corp\naccent color: #0b5345\nlogo: none\n", ""},
		{[]string{"-workspace", "acme", "-accent-color", "#ffd700"}, exitError, "",
			"identityd: invalid settings: branding.accentColor must have a contrast of at least 4.5:1 against white (#ffd700 has 1.40:1): choose a darker colour\n"},
		{[]string{"-workspace", "acme", "-display-name", ""}, exitOK, "display name: acme (default)\naccent color: #0b5345\nlogo: none\n", ""},
	})
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(identity.Branding{AccentColor: "#0b5345"}, s.Branding); diff != "" {
			t.Errorf("stored branding (-want +got):\n%s", diff)
		}
	})
}

// writePNG writes a w x h PNG to a file in dir and returns its path.
func writePNG(t *testing.T, dir, name string, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.NRGBA{R: 0x1d, G: 0x5f, B: 0xc9, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// logoPattern is what the logo commands print after setting a logo.
var logoPattern = regexp.MustCompile(`^logo: (\d+) bytes image/png, ETag ("[0-9a-f]{32}")\n$`)

// TestLogoCommands: workspace logo and client logo set a PNG (as the
// library stores it, re-encoded) and delete it; a file that is not a PNG,
// too large or too wide, an unknown client and a command line with
// neither or both of -file and -delete are refused.
func TestLogoCommands(t *testing.T) {
	db, _ := newDB(t)
	dir := t.TempDir()
	logo := writePNG(t, dir, "logo.png", 8, 4)
	wide := writePNG(t, dir, "wide.png", 1025, 1)
	text := filepath.Join(dir, "logo.txt")
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(text, []byte("not a picture"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, identity.MaxLogoBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	id, _ := createClient(t, db, "-redirect-uri", callbackURL)

	for _, tt := range []struct {
		name   string
		prefix []string
		get    func(*identity.Workspace, context.Context) (identity.Logo, error)
	}{
		{"workspace", []string{"-db", db, "workspace", "logo", "-workspace", "acme"}, (*identity.Workspace).GetLogo},
		{"client", []string{"-db", db, "client", "logo", "-workspace", "acme", id},
			func(ws *identity.Workspace, ctx context.Context) (identity.Logo, error) {
				return ws.GetClientLogo(ctx, id)
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, append(tt.prefix, "-file", logo)...)
			m := logoPattern.FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("stdout %q", r.stdout)
			}
			inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
				l, err := tt.get(ws, ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got := []string{m[1], m[2], l.ContentType}; !cmp.Equal(got, []string{fmt.Sprint(len(l.Data)), l.ETag, "image/png"}) {
					t.Errorf("printed %q, stored %d bytes, ETag %s", got, len(l.Data), l.ETag)
				}
				img, err := png.Decode(bytes.NewReader(l.Data))
				if err != nil || img.Bounds() != image.Rect(0, 0, 8, 4) {
					t.Errorf("stored logo: %v %v", img, err)
				}
			})
			syn := "identityd [-db FILE] " + strings.Join(tt.prefix[2:4], " ") + " -workspace SLUG "
			if tt.name == "client" {
				syn += "CLIENT_ID "
			}
			usage := "Usage: " + syn + "(-file FILE | -delete)\nRun 'identityd -h' for help.\n"
			runSteps(t, tt.prefix, []step{
				{[]string{"-file", text}, exitError, "", "identityd: invalid logo: logo must be a PNG image\n"},
				{[]string{"-file", wide}, exitError, "", "identityd: invalid logo: logo must be at most 1024 pixels wide and high (it is 1025x1)\n"},
				{[]string{"-file", big}, exitError, "", "identityd: " + big + ": a logo must be at most 102400 bytes\n"},
				{[]string{"-file", filepath.Join(dir, "missing.png")}, exitError, "",
					"identityd: open " + filepath.Join(dir, "missing.png") + ": no such file or directory\n"},
				{nil, exitUsage, "", "identityd: " + strings.Join(tt.prefix[2:4], " ") + ": give either -file or -delete\n" + usage},
				{[]string{"-file", logo, "-delete"}, exitUsage, "", "identityd: " + strings.Join(tt.prefix[2:4], " ") + ": give either -file or -delete\n" + usage},
				{[]string{"-delete"}, exitOK, "deleted logo\n", ""},
				{[]string{"-delete"}, exitError, "", "identityd: no logo\n"},
			})
		})
	}
	runSteps(t, []string{"-db", db, "client", "logo", "-workspace", "acme"}, []step{
		{[]string{"idc_0000000000000000", "-file", logo}, exitError, "", "identityd: OAuth client \"idc_0000000000000000\" not found\n"},
	})
	// workspace branding shows the logo.
	r := mustRun(t, "-db", db, "workspace", "logo", "-workspace", "acme", "-file", logo)
	show := mustRun(t, "-db", db, "workspace", "branding", "-workspace", "acme")
	if want := "display name: acme (default)\naccent color: #1d5fc9 (default)\n" + r.stdout; show.stdout != want {
		t.Errorf("branding:\n%s\nwant:\n%s", show.stdout, want)
	}
}

// TestClientCreatePostLogoutRedirectURIs: client create registers the
// post-logout redirect URIs, each checked by the library's rules.
func TestClientCreatePostLogoutRedirectURIs(t *testing.T) {
	db, _ := newDB(t)
	id, _ := createClient(t, db, "-redirect-uri", callbackURL, "-post-logout-redirect-uri", "https://app.example.com/bye, http://127.0.0.1:9/signed-out")
	if diff := cmp.Diff([]string{"https://app.example.com/bye", "http://127.0.0.1:9/signed-out"}, storedClient(t, db, id).PostLogoutRedirectURIs); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	none, _ := createClient(t, db, "-redirect-uri", callbackURL)
	if got := storedClient(t, db, none).PostLogoutRedirectURIs; len(got) != 0 {
		t.Errorf("without the flag: %q", got)
	}
	r := runCmd(t, "-db", db, "client", "create", "-workspace", "acme", "-redirect-uri", callbackURL, "-post-logout-redirect-uri", "http://app.example.com/bye")
	if r.code != exitError || !strings.Contains(r.stderr, "postLogoutRedirectUris") || r.stdout != "" {
		t.Errorf("an http URI off localhost: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestParsePrefixes: -trusted-proxies takes CIDR prefixes only, IPv4 and
// IPv6, and refuses a bare address and a prefix with host bits.
func TestParsePrefixes(t *testing.T) {
	tests := []struct {
		in   string
		want []netip.Prefix
		err  string
	}{
		{"", nil, ""},
		{" ", nil, ""},
		{"10.0.0.0/8", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, ""},
		{"10.0.0.0/8, 2001:db8::/32,127.0.0.1/32", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("127.0.0.1/32")}, ""},
		{"10.0.0.1", nil, `"10.0.0.1" is not a CIDR prefix such as 10.0.0.0/8 or 2001:db8::/32`},
		{"10.0.0.0/33", nil, `"10.0.0.0/33" is not a CIDR prefix such as 10.0.0.0/8 or 2001:db8::/32`},
		{"10.0.0.0/8,", nil, `"" is not a CIDR prefix such as 10.0.0.0/8 or 2001:db8::/32`},
		{"10.1.2.3/8", nil, `"10.1.2.3/8" has bits set past its length: did you mean 10.0.0.0/8?`},
	}
	for _, tt := range tests {
		got, err := parsePrefixes(tt.in)
		var msg string
		if err != nil {
			msg = err.Error()
		}
		if !cmp.Equal(tt.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })) || msg != tt.err {
			t.Errorf("parsePrefixes(%q) = %v, %q; want %v, %q", tt.in, got, msg, tt.want, tt.err)
		}
	}
}

// TestServeFlagErrors: serve refuses a bad -trusted-proxies and a
// -refresh-reuse out of range before it listens.
func TestServeFlagErrors(t *testing.T) {
	db, _ := newDB(t)
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-trusted-proxies", "10.0.0.1"}, "identityd: serve: -trusted-proxies: \"10.0.0.1\" is not a CIDR prefix such as 10.0.0.0/8 or 2001:db8::/32\n"},
		{[]string{"-refresh-reuse", "6m"}, "identityd: serve: -refresh-reuse must be between 0 and 5m0s\n"},
		{[]string{"-refresh-reuse", "-1s"}, "identityd: serve: -refresh-reuse must be between 0 and 5m0s\n"},
	} {
		r := runCmd(t, append([]string{"-db", db, "serve", "-addr", "127.0.0.1:0"}, tt.args...)...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tt.stderr) {
			t.Errorf("serve %q: exit %d, stderr %q; want %d, %q", tt.args, r.code, r.stderr, exitUsage, tt.stderr)
		}
	}
}

// forwarding is a RoundTripper that sends every request with an
// X-Forwarded-For header.
type forwarding struct{ addr string }

func (f forwarding) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Forwarded-For", f.addr)
	return http.DefaultTransport.RoundTrip(req)
}

// TestServeTrustedProxies: the session of a sign-in through the hosted
// page records the address a proxy forwarded only when serve trusts the
// proxy (here the loopback address the test connects from).
func TestServeTrustedProxies(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"no trusted proxy", nil, "127.0.0.1"},
		{"another network trusted", []string{"-trusted-proxies", "10.0.0.0/8"}, "127.0.0.1"},
		{"loopback trusted", []string{"-trusted-proxies", "10.0.0.0/8,127.0.0.0/8"}, "203.0.113.9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, key := newDB(t)
			c := registerRP(t, db)
			base, _, stop := serveInProcess(t, db, tt.flags...)
			uid := createUser(t, base, key, "ada")
			rp := newRelyingParty(t, ctx, base, c)
			rp.browser.Transport = forwarding{"198.51.100.7, 203.0.113.9"}
			f := newFlow(1)
			rp.signIn(t, f, "ada", "correct horse battery")
			if code := stop(); code != exitOK {
				t.Fatalf("serve: exit %d", code)
			}
			inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
				list, err := ws.ListSessions(ctx, uid, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, s := range list.Items {
					got = append(got, s.Address)
				}
				if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
					t.Errorf("session addresses (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestServeRefreshReuse: with -refresh-reuse, a refresh token presented
// again soon after its exchange (an answer the client lost) gets new
// tokens; without it, the repeat is refused and revokes the grant.
func TestServeRefreshReuse(t *testing.T) {
	for _, tt := range []struct {
		name   string
		flags  []string
		reused bool
	}{
		{"off by default", nil, false},
		{"a minute", []string{"-refresh-reuse", "1m"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, key := newDB(t)
			c := registerRP(t, db)
			base, _, _ := serveInProcess(t, db, tt.flags...)
			createUser(t, base, key, "ada")
			rp := newRelyingParty(t, ctx, base, c)
			f := newFlow(1)
			tok, _ := rp.tokens(t, ctx, f, rp.signIn(t, f, "ada", "correct horse battery"))
			first := rp.refresh(t, ctx, tok) // its answer "lost"
			again, err := rp.config.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if tt.reused {
				if err != nil || again.RefreshToken == "" || again.RefreshToken == first.RefreshToken {
					t.Fatalf("the repeat within the interval: %v, %+v", err, again)
				}
				rp.refresh(t, ctx, again) // the new successor works
				return
			}
			if !isInvalidGrant(err) {
				t.Fatalf("the repeat without an interval: %v, want invalid_grant", err)
			}
			if _, err := rp.config.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken}).Token(); !isInvalidGrant(err) {
				t.Errorf("the successor after the reuse: %v, want invalid_grant (the grant is revoked)", err)
			}
		})
	}
}

// providerLine is a provider request line of serve's log.
var providerLine = regexp.MustCompile(`(?m)^time=\S+ level=INFO msg="http request" method=(\S+) route=(/t/:slug/\S*) status=(\d+) duration=\S+ bytes=\d+(?: client_id=(\S+))?$`)

// TestServeProviderRequestLog: serve logs one line per provider and page
// request like the REST access log (method, route pattern, status,
// duration, client id), and no line holds a token, code, secret or
// password, wherever the request carried it.
func TestServeProviderRequestLog(t *testing.T) {
	ctx := context.Background()
	db, key := newDB(t)
	c := registerRP(t, db, "-grant-types", "authorization_code,refresh_token,client_credentials")
	base, log, stop := serveInProcess(t, db)
	createUser(t, base, key, "ada")
	rp := newRelyingParty(t, ctx, base, c)
	f := newFlow(1)
	code := rp.signIn(t, f, "ada", "correct horse battery")
	tok, _ := rp.tokens(t, ctx, f, code)
	// A client credentials grant with the secret in the form body, and a
	// refused one with the secret in the query.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.id}, "client_secret": {c.secret}}
	for _, u := range []string{base + "/t/acme/token", base + "/t/acme/token?client_secret=" + url.QueryEscape(c.secret)} {
		res, err := client.PostForm(u, form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve: exit %d", code)
	}
	type line struct{ Method, Route, Status, ClientID string }
	var got []line
	for _, m := range providerLine.FindAllStringSubmatch(log.String(), -1) {
		if m[2] == "/t/:slug/.well-known/openid-configuration" || strings.HasPrefix(m[2], "/t/:slug/api/") {
			continue // discovery, as many times as the client library reads it, and the REST API
		}
		got = append(got, line{m[1], m[2], m[3], m[4]})
	}
	want := []line{
		{"GET", "/t/:slug/authorize", "302", c.id},
		{"GET", "/t/:slug/login", "200", ""},
		{"POST", "/t/:slug/login", "302", ""},
		{"POST", "/t/:slug/token", "200", c.id},
		{"GET", "/t/:slug/keys", "200", ""},
		{"POST", "/t/:slug/token", "200", c.id},
		// Refused before the body is read: the client is not known.
		{"POST", "/t/:slug/token", "400", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("provider request lines (-want +got):\n%s\nlog:\n%s", diff, log)
	}
	for name, secret := range map[string]string{"client secret": c.secret, "code": code, "access token": tok.AccessToken,
		"refresh token": tok.RefreshToken, "password": "correct horse battery", "API key": key, "PKCE verifier": f.verifier} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("the log holds the %s", name)
		}
	}
}
