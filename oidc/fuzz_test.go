package oidc_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// serve runs one request through the handler, in process.
func (p *provider) serve(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, req)
	return rec
}

// sessionOf signs ada in for the web client and returns the browser's
// session token.
func (p *provider) sessionOf() string {
	p.t.Helper()
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	r := p.signIn(c, form, "ada", adaPassword)
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == "identity_session" {
			return ck.Value
		}
	}
	p.t.Fatalf("no session cookie: %d %q", r.status, r.header.Values("Set-Cookie"))
	return ""
}

// FuzzAuthorize sends authorization requests with arbitrary parameters,
// for one of the clients or none, with or without a session: the answer
// is never a 5xx, and a redirect goes to the sign-in page or to a
// redirect URI registered for the client asked for, exactly.
func FuzzAuthorize(f *testing.F) {
	p := newProvider(f)
	session := p.sessionOf()
	clients := []struct{ id, redirectURI string }{{p.web.Client.ID, appURI}, {p.spa.Client.ID, spaURI}, {p.otherApp.Client.ID, ""}, {"", ""}}
	valid := p.authParams(map[string]string{"client_id": "", "redirect_uri": ""}).Encode()
	f.Add(uint8(0), appURI, valid, false)
	f.Add(uint8(0), appURI, valid, true)
	f.Add(uint8(0), appURI, valid+"&prompt=none", false)
	f.Add(uint8(0), appURI, valid+"&prompt=login", true)
	f.Add(uint8(1), spaURI, "response_type=code&scope=openid&state=x", false)
	f.Add(uint8(1), spaURI, valid+"&code_challenge_method=plain", true)
	f.Add(uint8(0), appURI+"?x=1", valid, false)
	f.Add(uint8(0), "https://app.example/callback/", valid, false)
	f.Add(uint8(0), appURI, "response_type=token&scope=openid&state=%ff%fe", false)
	f.Add(uint8(0), appURI, "request=a.b.c&response_mode=form_post&redirect_uri=https://evil.example/", false)
	f.Add(uint8(2), appURI, valid, false)
	f.Add(uint8(3), "", "client_id=idc_0&client_id=idc_1", false)
	f.Add(uint8(0), appURI, "scope=openid&scope=profile&state=%zz", true)
	f.Fuzz(func(t *testing.T, which uint8, redirectURI, rest string, withSession bool) {
		c := clients[int(which)%len(clients)]
		query := "client_id=" + url.QueryEscape(c.id) + "&redirect_uri=" + url.QueryEscape(redirectURI) + "&" + rest
		req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/t/acme/authorize", RawQuery: query},
			Header: http.Header{}, Host: "127.0.0.1"}
		req = req.WithContext(t.Context())
		if withSession {
			req.Header.Set("Cookie", "identity_session="+session)
		}
		rec := p.serve(req)
		if rec.Code >= 500 {
			t.Fatalf("GET ?%s: %d %s", query, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusFound {
			if loc := rec.Header().Get("Location"); loc != "" {
				t.Fatalf("GET ?%s: %d with Location %q", query, rec.Code, loc)
			}
			return
		}
		loc := rec.Header().Get("Location")
		base, _, _ := strings.Cut(loc, "?")
		if base != p.issuer+"/login" && (c.redirectURI == "" || base != c.redirectURI || redirectURI != c.redirectURI) {
			t.Fatalf("GET ?%s: redirect to %q", query, loc)
		}
	})
}

// FuzzSignInForm posts arbitrary bodies to the sign-in page, with or
// without the CSRF cookie: the answer is never a 5xx, a redirect goes to
// the client's redirect URI, and a sign-in never happens without the
// form's CSRF token matching the cookie.
func FuzzSignInForm(f *testing.F) {
	p := newProvider(f)
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	csrf := form.Get("csrf")
	good := func(set map[string]string) string {
		v := cloneValues(form)
		v.Set("login", "ada")
		v.Set("password", adaPassword)
		for k, val := range set {
			v.Set(k, val)
		}
		return v.Encode()
	}
	const formType = "application/x-www-form-urlencoded"
	f.Add(good(nil), formType, true)
	f.Add(good(nil), formType, false)
	f.Add(good(map[string]string{"password": "wrong"}), formType, true)
	f.Add(good(map[string]string{"login": "ada@example.com"}), formType, true)
	f.Add(good(map[string]string{"request": "nope"}), formType, true)
	f.Add(good(map[string]string{"csrf": ""}), formType, true)
	f.Add(good(map[string]string{"login": strings.Repeat("é", 600)}), formType, true)
	f.Add(good(nil)+"&login=bob&csrf=x", formType, true)
	f.Add(good(map[string]string{"step": "code", "challenge": "idc_0123456789abcdef_x", "code": "123456"}), formType, true)
	f.Add(good(map[string]string{"step": "code", "challenge": "", "code": "abcde-fghij", "enrolling": "1"}), formType, true)
	f.Add(good(map[string]string{"step": "continue"}), formType, true)
	f.Add(good(map[string]string{"step": "nope"}), formType, true)
	f.Add("login=%zz&password=%", formType, true)
	f.Add(good(nil), "multipart/form-data; boundary=x", true)
	f.Add(good(nil), "text/plain", true)
	f.Add("", "", false)
	f.Fuzz(func(t *testing.T, body, contentType string, withCookie bool) {
		req := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/t/acme/login"}, Host: "127.0.0.1",
			Header: http.Header{"Content-Type": {contentType}}, Body: http.NoBody}
		if body != "" {
			req.Body = stringBody(body)
			req.ContentLength = int64(len(body))
		}
		req = req.WithContext(t.Context())
		if withCookie {
			req.Header.Set("Cookie", "identity_csrf="+csrf)
		}
		rec := p.serve(req)
		if rec.Code >= 500 {
			t.Fatalf("POST %q (%s): %d %s", body, contentType, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusFound {
			base, _, _ := strings.Cut(rec.Header().Get("Location"), "?")
			sent, err := url.ParseQuery(body)
			if base != appURI || !withCookie || err != nil || sent.Get("csrf") != csrf {
				t.Fatalf("POST %q (%s, cookie %v): redirect to %q", body, contentType, withCookie, rec.Header().Get("Location"))
			}
		}
	})
}

// FuzzAccountForm posts arbitrary bodies to the account page, with or
// without the CSRF cookie and a session: the answer is never a 5xx, a
// redirect goes to the account page, and no form is taken without its
// CSRF token matching the cookie.
func FuzzAccountForm(f *testing.F) {
	p := newProvider(f)
	c, page := p.signedInAccount()
	csrf := hiddenFields(page.body).Get("csrf")
	var session string
	for _, ck := range c.Jar.Cookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(p.srv.URL, "http://"), Path: "/t/acme/account"}) {
		if ck.Name == "identity_session" {
			session = ck.Value
		}
	}
	if session == "" {
		f.Fatal("no session cookie in the browser")
	}
	form := func(step string, set ...string) string {
		v := url.Values{"step": {step}, "csrf": {csrf}}
		for i := 0; i+1 < len(set); i += 2 {
			v.Set(set[i], set[i+1])
		}
		return v.Encode()
	}
	const formType = "application/x-www-form-urlencoded"
	f.Add(form("signin", "login", "ada", "password", adaPassword), formType, true, false)
	f.Add(form("signin", "login", "ada", "password", "wrong"), formType, true, false)
	f.Add(form("code", "challenge", "idc_0123456789abcdef_x", "code", "123 456"), formType, true, false)
	f.Add(form("enroll"), formType, true, true)
	f.Add(form("confirm", "code", "000000"), formType, true, true)
	f.Add(form("remove", "code", "abcde-fghij"), formType, true, true)
	f.Add(form("recovery"), formType, true, true)
	f.Add(form("password", "current", "x", "password", "yyyyyyyy", "repeat", "yyyyyyyz"), formType, true, true)
	f.Add(form("revoke", "session", "ids_nope"), formType, true, true)
	f.Add(form("signout"), formType, false, true)
	f.Add(form("nope"), formType, true, true)
	f.Add(form("enroll")+"&csrf=x", formType, true, true)
	f.Add("step=%zz&csrf=%", formType, true, true)
	f.Add(form("recovery"), "multipart/form-data; boundary=x", true, true)
	f.Add("", "", false, false)
	f.Fuzz(func(t *testing.T, body, contentType string, withCSRF, withSession bool) {
		req := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/t/acme/account"}, Host: "127.0.0.1",
			Header: http.Header{"Content-Type": {contentType}}, Body: http.NoBody}
		if body != "" {
			req.Body = stringBody(body)
			req.ContentLength = int64(len(body))
		}
		req = req.WithContext(t.Context())
		var cookies []string
		if withCSRF {
			cookies = append(cookies, "identity_csrf="+csrf)
		}
		if withSession {
			cookies = append(cookies, "identity_session="+session)
		}
		if len(cookies) > 0 {
			req.Header.Set("Cookie", strings.Join(cookies, "; "))
		}
		rec := p.serve(req)
		if rec.Code >= 500 {
			t.Fatalf("POST %q (%s): %d %s", body, contentType, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusFound && !strings.HasPrefix(rec.Header().Get("Location"), p.issuer+"/account") {
			t.Fatalf("POST %q: redirect to %q", body, rec.Header().Get("Location"))
		}
		// Refused before any form: not the site's (403), or unreadable.
		refused := rec.Code == http.StatusForbidden || rec.Code == http.StatusRequestEntityTooLarge ||
			rec.Code == http.StatusBadRequest && strings.Contains(rec.Body.String(), "The request could not be read.")
		sent, err := url.ParseQuery(body)
		if !refused && (!withCSRF || err != nil || sent.Get("csrf") != csrf) {
			t.Fatalf("POST %q (%s, CSRF cookie %v): %d, a form taken without its CSRF token", body, contentType, withCSRF, rec.Code)
		}
	})
}

// stringBody is a request body reading s.
func stringBody(s string) *readCloser { return &readCloser{strings.NewReader(s)} }

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
