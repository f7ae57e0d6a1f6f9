package console

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/store/memstore"
)

// consoleJSSHA256 is the SHA-256 of static/console.js: the one script of
// the console, served same-origin. A change to it must change this line,
// in review.
const consoleJSSHA256 = "aa4aea9b0ae0ee64fabc9cadd3bd98c8660c7abf3cd8703cbc8eaa9f98f12d96"

func TestConsoleJSHash(t *testing.T) {
	b, err := staticFS.ReadFile("static/console.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != consoleJSSHA256 {
		t.Errorf("console.js has SHA-256 %s, want %s", got, consoleJSSHA256)
	}
}

func newTestHandler(t *testing.T, opts *Options) (*Handler, error) {
	t.Helper()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := identity.New(st, &identity.Options{IssuerBase: "https://id.example.com", TokenSigner: jws.Signer{}})
	if err != nil {
		t.Fatal(err)
	}
	return New(svc, opts)
}

// TestOptions: the defaults, and the options New refuses.
func TestOptions(t *testing.T) {
	h, err := newTestHandler(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"base": h.base, "public": h.publicURL, "ops": h.opSlug, "limits": h.limits, "secure": h.secure}
	want := map[string]any{"base": "/console/", "public": "https://id.example.com/console/", "ops": "operators",
		"limits": identity.SessionLimits{MaxAge: DefaultSessionLifetime, IdleTimeout: DefaultIdleTimeout}, "secure": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	h, err = newTestHandler(t, &Options{BasePath: "/admin/", PublicURL: "http://localhost:8080/admin/"})
	if err != nil || h.publicURL != "http://localhost:8080/admin/" || h.secure {
		t.Errorf("PublicURL http: %+v, %v", h, err)
	}
	for _, opts := range []Options{
		{BasePath: "console/"}, {BasePath: "/console"}, {BasePath: "/a//b/"}, {BasePath: "/{x}/"},
		{PublicURL: "ftp://x/console/"}, {PublicURL: "https://x/console"}, {PublicURL: "/console/"}, {PublicURL: "https://x/console/?q"},
		{OperatorWorkspace: "Not A Slug"}, {SessionLifetime: -1}, {IdleTimeout: -1},
	} {
		if _, err := newTestHandler(t, &opts); err == nil {
			t.Errorf("New(%+v) accepted", opts)
		}
	}
	st := memstore.New()
	defer st.Close()
	noTokens, err := identity.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(noTokens, nil); err == nil {
		t.Error("New over a Service without tokens accepted")
	}
}

// TestCookies: the session cookie is HttpOnly, SameSite=Strict, scoped to
// the base path and Secure under https; the login cookie Lax.
func TestCookies(t *testing.T) {
	h, err := newTestHandler(t, &Options{BasePath: "/admin/"})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.setCookie(rec, sessionCookie, "v", 0, http.SameSiteStrictMode)
	h.setCookie(rec, loginCookie, "w", loginCookieAge, http.SameSiteLaxMode)
	want := []string{
		"identity_console=v; Path=/admin/; HttpOnly; Secure; SameSite=Strict",
		"identity_console_login=w; Path=/admin/; Max-Age=600; HttpOnly; Secure; SameSite=Lax",
	}
	if diff := cmp.Diff(want, rec.Result().Header.Values("Set-Cookie")); diff != "" {
		t.Errorf("cookies (-want +got):\n%s", diff)
	}
}

// TestSafeNext: only a path of the console is a page to come back to.
func TestSafeNext(t *testing.T) {
	h, err := newTestHandler(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"/console/":                       "/console/",
		"/console/workspaces?offset=50":   "/console/workspaces?offset=50",
		"/console/workspaces/acme/delete": "/console/workspaces/acme/delete",
		"":                                "/console/",
		"/elsewhere":                      "/console/",
		"https://evil.example/console/":   "/console/",
		"//evil.example/console/":         "/console/",
		"/console//evil.example":          "/console/",
		"/console/../t/acme/account":      "/console/",
		"/console/./x":                    "/console/",
		"/console/\\evil":                 "/console/",
		"/console/x\r\nSet-Cookie: a=b":   "/console/",
		"/console/x#frag":                 "/console/",
	}
	for next, want := range tests {
		if got := h.safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// TestLibraryError: the one table from the library's codes to the
// console's pages.
func TestLibraryError(t *testing.T) {
	codes := []identity.Code{
		identity.CodeInvalid, identity.CodeNotFound, identity.CodeConflict, identity.CodeReservedClaim,
		identity.CodeLimitReached, identity.CodeForbidden, identity.CodePreconditionFailed, identity.CodeTokenInvalid,
		identity.CodeTokenExpired, identity.CodeTokenUsed, identity.CodeInvalidGrant, identity.CodeRateLimited,
		identity.CodeLocked, identity.CodeUnauthenticated, identity.CodeInternal,
	}
	got := map[identity.Code]string{}
	for _, c := range codes {
		status, title, _ := libraryError(&identity.Error{Code: c, Message: "msg"})
		got[c] = fmt.Sprint(status, " ", title)
	}
	want := map[identity.Code]string{
		identity.CodeInvalid: "422 Check the form", identity.CodeNotFound: "404 Not found", identity.CodeConflict: "409 Already taken",
		identity.CodeReservedClaim: "422 Not possible", identity.CodeLimitReached: "422 Not possible", identity.CodeForbidden: "403 Not allowed",
		identity.CodePreconditionFailed: "409 Changed meanwhile", identity.CodeTokenInvalid: "400 Link not valid",
		identity.CodeTokenExpired: "400 Link not valid", identity.CodeTokenUsed: "400 Link not valid", identity.CodeInvalidGrant: "400 Link not valid",
		identity.CodeRateLimited: "429 Too many attempts", identity.CodeLocked: "409 Locked", identity.CodeUnauthenticated: "403 Not signed in",
		identity.CodeInternal: "500 Server error",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A library message is shown; an internal one, or a foreign error, never.
	if _, _, m := libraryError(&identity.Error{Code: identity.CodeConflict, Message: "slug taken"}); m != "slug taken" {
		t.Errorf("conflict message %q", m)
	}
	for _, err := range []error{&identity.Error{Code: identity.CodeInternal, Message: "disk at /var/x failed"}, errors.New("secret cause")} {
		if _, _, m := libraryError(err); m != "Something failed on the server; the log says what. Try again later." {
			t.Errorf("%v shows %q", err, m)
		}
	}
}
