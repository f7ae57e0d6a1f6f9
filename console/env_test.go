package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/store/memstore"
)

// env is a Service over a fresh in-memory store on a fake clock, with the
// OpenID Provider mounted at /t/ and the console at its base path, served
// by httptest on one origin, and the operator workspace prepared.
type env struct {
	t     testing.TB
	srv   *httptest.Server
	clock *testutil.Clock
	svc   *identity.Service
	// st is the store under svc, for a test to fill in bulk what the
	// library would take long to write.
	st      *memstore.Store
	console *console.Handler
	ops     *identity.Workspace
	// base is the console's base path.
	base string
}

// newEnv starts an env whose console is mounted at /console/.
func newEnv(t testing.TB) *env { return newEnvAt(t, "/console/", nil) }

// newEnvAt starts an env whose console is mounted at base, with opts
// (BasePath is set from base).
func newEnvAt(t testing.TB, base string, opts *console.Options) *env {
	t.Helper()
	return newEnvFrom(t, base, opts, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// newEnvFrom is newEnvAt whose clock starts at start (a browser test
// starts it at the real time, which the browser's cookies follow).
func newEnvFrom(t testing.TB, base string, opts *console.Options, start time.Time) *env {
	t.Helper()
	ctx := t.Context()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	clock := testutil.NewClock(start)
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := identity.New(st, &identity.Options{
		Now: clock.Now, PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
		IssuerBase: srv.URL, TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256,
	})
	if err != nil {
		t.Fatal(err)
	}
	provider, err := oidc.New(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/t/", provider)
	if opts == nil {
		opts = &console.Options{}
	}
	opts.BasePath = base
	h, err := console.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	mux.Handle(base, h)
	ops, err := svc.GetWorkspace(ctx, console.DefaultOperatorWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, clock: clock, svc: svc, st: st, console: h, ops: ops, base: base}
}

// url returns the absolute URL of a console path (relative to the base).
func (e *env) url(path string) string { return e.srv.URL + e.base + path }

// workspace creates a workspace.
func (e *env) workspace(slug string) *identity.Workspace {
	e.t.Helper()
	ws, err := e.svc.CreateWorkspace(e.t.Context(), slug, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return ws
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, as a test drives a browser.
type browser struct {
	t testing.TB
	c *http.Client
	// csrf is the CSRF token the last page read held, if any.
	csrf string
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{t: e.t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// operator returns a browser signed in to the console as a new operator
// holding the roles (created in the operator workspace when missing),
// without going through the provider: a session of the operator
// workspace, as the sign-in would make, in the console's cookie.
func (e *env) operator(username string, roles ...string) *browser {
	e.t.Helper()
	ctx := e.t.Context()
	u, err := e.ops.CreateUser(ctx, identity.NewUser{Username: username, Email: username + "@example.com",
		FullName: "Operator " + username, Password: "correct horse battery"})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, name := range roles {
		r, err := e.ops.GetRoleByName(ctx, name)
		if identity.ErrorCode(err) == identity.CodeNotFound {
			r, err = e.ops.CreateRole(ctx, identity.NewRole{Name: name})
		}
		if err != nil {
			e.t.Fatal(err)
		}
		if err := e.ops.AssignRole(ctx, u.ID, r.ID); err != nil {
			e.t.Fatal(err)
		}
	}
	s, err := e.ops.CreateSession(ctx, u.ID, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	b := e.browser()
	base, _ := url.Parse(e.url(""))
	b.c.Jar.SetCookies(base, []*http.Cookie{{Name: "identity_console", Value: s.Secret, Path: e.base}})
	b.get(e.url("")) // every page holds the CSRF token in its sign-out form
	if b.csrf == "" {
		e.t.Fatal("no CSRF token on the console's home page")
	}
	return b
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) location() string { return r.header.Get("Location") }

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) reply {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if m := csrfField.FindStringSubmatch(string(body)); m != nil {
		b.csrf = m[1]
	}
	return reply{resp.StatusCode, resp.Header, string(body)}
}

func (b *browser) get(u string) reply {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form as a same-origin page of the console would, with
// the CSRF token of the last page read unless form sets "csrf".
func (b *browser) post(u string, form url.Values) reply {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok && b.csrf != "" {
		form.Set("csrf", b.csrf)
	}
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}
