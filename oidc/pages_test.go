package oidc_test

import (
	"bytes"
	"html"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// withHostedSMTP gives the workspace SMTP settings without a VerifyURL:
// the verification emails link to the hosted page.
func (p *provider) withHostedSMTP() {
	p.t.Helper()
	p.setPolicy(func(s *identity.Settings) {
		s.SMTP = &identity.SMTPSettings{Host: "smtp.example", Port: 587, From: "id@example.com"}
	})
}

// queuedAttempts begins an attempt of every mail job due, as a
// dispatcher would without sending, and returns them.
func (p *provider) queuedAttempts() []identity.Attempt {
	p.t.Helper()
	ctx := p.t.Context()
	q, err := p.svc.Queue(nil)
	if err != nil {
		p.t.Fatal(err)
	}
	due, err := q.ListDue(ctx, p.clock.Now(), 100)
	if err != nil {
		p.t.Fatal(err)
	}
	leased, err := q.Lease(ctx, "test", p.clock.Now(), time.Minute, due)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []identity.Attempt
	for _, job := range leased.Jobs {
		att, err := q.Begin(ctx, "test", job)
		if err != nil {
			p.t.Fatal(err)
		}
		out = append(out, att)
	}
	return out
}

// queuedMails returns the emails of the mail jobs due (queuedAttempts).
func (p *provider) queuedMails() []identity.VerificationMail {
	p.t.Helper()
	var out []identity.VerificationMail
	for _, att := range p.queuedAttempts() {
		if att.Mail != nil {
			out = append(out, *att.Mail)
		}
	}
	return out
}

// pngOf returns a w×h PNG of one colour.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: 0x7b, G: 0x2d, B: 0x8b, A: 0xff})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var (
	htmlLang   = regexp.MustCompile(`<html lang="([^"]*)">`)
	h1Text     = regexp.MustCompile(`<h1>([^<]*)</h1>`)
	alertText  = regexp.MustCompile(`<p class="error" role="alert">([^<]*)</p>`)
	wayLink    = regexp.MustCompile(`<p class="way"><a href="([^"]*)">([^<]*)</a></p>`)
	noticeText = regexp.MustCompile(`<p class="notice" role="status">([^<]*)</p>`)
)

// firstMatch returns the first group of re in body, unescaped, or "".
func firstMatch(re *regexp.Regexp, body string) string {
	if m := re.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// TestPageLanguage: the sign-in page speaks the language of ui_locales,
// else of Accept-Language, else English; the authorization request keeps
// ui_locales for the forms that follow, and an email the page queues is
// written in its language.
func TestPageLanguage(t *testing.T) {
	p := newProvider(t)
	tests := []struct {
		name, uiLocales, acceptLanguage string
		lang, title                     string
	}{
		{"nothing", "", "", "en", "Sign in"},
		{"accept-language", "", "de-DE,de;q=0.9,en;q=0.5", "de", "Anmelden"},
		{"ui_locales wins", "de", "en-US", "de", "Anmelden"},
		{"ui_locales without a known tag", "fr it", "de", "de", "Anmelden"},
		{"ui_locales first known tag", "fr en de", "de", "en", "Sign in"},
		{"unknown everything", "fr", "es, it;q=0.5", "en", "Sign in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := p.browser()
			req, _ := http.NewRequest(http.MethodGet, p.issuer+"/authorize?"+p.authParams(map[string]string{"ui_locales": tt.uiLocales}).Encode(), nil)
			req.Header.Set("Accept-Language", tt.acceptLanguage)
			auth := do(t, c, req)
			req, _ = http.NewRequest(http.MethodGet, auth.location(), nil)
			req.Header.Set("Accept-Language", tt.acceptLanguage)
			page := do(t, c, req)
			got := []string{firstMatch(htmlLang, page.body), page.header.Get("Content-Language"), firstMatch(h1Text, page.body)}
			if diff := cmp.Diff([]string{tt.lang, tt.lang, tt.title}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The wrong password's answer, posted without the header:
			// the request's ui_locales still speaks.
			if tt.uiLocales == "de" {
				r := p.signIn(c, p.loginForm(c, auth), "ada", "wrong password")
				if diff := cmp.Diff([]string{"Benutzername, E-Mail-Adresse oder Passwort stimmen nicht."}, errorsOf(r.body)); diff != "" {
					t.Errorf("wrong password (-want +got):\n%s", diff)
				}
			}
		})
	}

	// The reset email of a German page is German, and its link opens the
	// page in German.
	p.withSMTP()
	c := p.browser()
	req, _ := http.NewRequest(http.MethodGet, p.issuer+"/reset", nil)
	req.Header.Set("Accept-Language", "de")
	form := do(t, c, req)
	post := hiddenFields(form.body)
	post.Set("email", "ada@example.com")
	req, _ = http.NewRequest(http.MethodPost, p.issuer+"/reset", strings.NewReader(post.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "de")
	if r := do(t, c, req); firstMatch(htmlLang, r.body) != "de" {
		t.Fatalf("reset sent: %d %s", r.status, r.body)
	}
	mails := p.queuedMails()
	if len(mails) != 1 || mails[0].Locale != "de" || !strings.Contains(mails[0].Link, "ui_locales=de") {
		t.Fatalf("reset mails %+v, want one in German", mails)
	}
	if page := get(t, p.browser(), mails[0].Link); firstMatch(h1Text, page.body) != "Neues Passwort wählen" {
		t.Errorf("the German reset link's page: %d %s", page.status, page.body)
	}
}

// TestSignInThrottled: the attempt after the per-login limit is refused
// with 429, Retry-After and the minutes to wait, even with the right
// password; the window's end lets the user in again.
func TestSignInThrottled(t *testing.T) {
	p := newProvider(t)
	p.setPolicy(func(s *identity.Settings) {
		s.Throttle.PerLogin = identity.Rate{Count: 3, Window: 10 * time.Minute}
	})
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	for i := range 3 {
		if r := p.signIn(c, form, "ada", "wrong password"); r.status != http.StatusBadRequest {
			t.Fatalf("wrong password %d: %d, want 400", i+1, r.status)
		}
	}
	for _, password := range []string{"wrong password", adaPassword} {
		r := p.signIn(c, form, "ada", password)
		got := map[string]any{"status": r.status, "retry": r.header.Get("Retry-After"), "alert": firstMatch(alertText, r.body),
			"cookies": r.header.Values("Set-Cookie")}
		want := map[string]any{"status": 429, "retry": "600", "alert": "Too many attempts. Try again in 10 minutes.", "cookies": []string(nil)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("password %q after the limit (-want +got):\n%s", password, diff)
		}
	}
	// The German page says it in German.
	cde := p.browser()
	formDE := p.loginForm(cde, p.authorize(cde, p.authParams(map[string]string{"ui_locales": "de"})))
	p.clock.Advance(4*time.Minute + 30*time.Second)
	if r := p.signIn(cde, formDE, "ada", adaPassword); r.header.Get("Retry-After") != "330" ||
		firstMatch(alertText, r.body) != "Zu viele Versuche. Versuchen Sie es in 6 Minuten erneut." {
		t.Errorf("German throttled page: %d %q %q", r.status, r.header.Get("Retry-After"), firstMatch(alertText, r.body))
	}
	p.clock.Advance(5*time.Minute + 30*time.Second)
	p.signedIn(c)
}

// TestEmailVerification: under RequireVerifiedEmail a right password of
// an unverified user gets no code but a verification email; its link
// (the hosted page by default) verifies the address and leads back to
// the sign-in, whose ID token then says email_verified.
func TestEmailVerification(t *testing.T) {
	p := newProvider(t)
	p.withHostedSMTP()
	p.setPolicy(func(s *identity.Settings) { s.RequireVerifiedEmail = true })
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	r := p.signIn(c, form, "ada", adaPassword)
	got := map[string]any{"status": r.status, "location": r.location(), "alert": firstMatch(alertText, r.body)}
	want := map[string]any{"status": 403, "location": "",
		"alert": "Your email address is not verified yet. We sent a link to it; open it, then sign in."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unverified sign-in (-want +got):\n%s", diff)
	}
	mails := p.queuedMails()
	if len(mails) != 1 || mails[0].Kind != identity.MailVerifyEmail {
		t.Fatalf("mails %+v, want one verification", mails)
	}
	link, err := url.Parse(mails[0].Link)
	if err != nil || link.Scheme+"://"+link.Host+link.Path != p.issuer+"/verify" || link.Query().Get("request") != form.Get("request") {
		t.Fatalf("verification link %q, want %s/verify?token=…&request=%s", mails[0].Link, p.issuer, form.Get("request"))
	}

	page := get(t, p.browser(), link.String())
	got = map[string]any{"status": page.status, "title": firstMatch(h1Text, page.body), "way": firstMatch(wayLink, page.body),
		"text": wayLink.FindStringSubmatch(page.body)[2]}
	want = map[string]any{"status": 200, "title": "Email address verified", "way": p.issuer + "/login?request=" + form.Get("request"),
		"text": "Continue to Web App"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verification page (-want +got):\n%s", diff)
	}
	code, _ := p.codeFrom(p.signIn(c, form, "ada", adaPassword), appURI)
	idToken := p.exchange(code).json(t)["id_token"].(string)
	if v := claimsOf(t, idToken)["email_verified"]; v != true {
		t.Errorf("email_verified %v, want true", v)
	}

	// The link once more: used. Without a live request: the account page.
	page = get(t, p.browser(), p.issuer+"/verify?token="+url.QueryEscape(link.Query().Get("token")))
	got = map[string]any{"status": page.status, "message": strings.Contains(page.body, "This verification link was used already."),
		"way": firstMatch(wayLink, page.body)}
	want = map[string]any{"status": 400, "message": true, "way": p.issuer + "/account"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("used link (-want +got):\n%s", diff)
	}
	for _, q := range []string{"", "?token=", "?token=nonsense", "?token=a&token=b"} {
		page := get(t, p.browser(), p.issuer+"/verify"+q)
		if page.status != 400 || !strings.Contains(page.body, "This verification link is not valid.") {
			t.Errorf("GET /verify%s: %d %s", q, page.status, page.body)
		}
	}
	if r := postForm(t, p.browser(), p.issuer+"/verify", url.Values{"token": {"x"}}, "", ""); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /verify: %d", r.status)
	}
}

// TestVerifiedWithoutMail: a workspace that sends no email says that an
// administrator must verify the address.
func TestVerifiedWithoutMail(t *testing.T) {
	p := newProvider(t)
	p.setPolicy(func(s *identity.Settings) { s.RequireVerifiedEmail = true })
	c := p.browser()
	r := p.signIn(c, p.loginForm(c, p.authorize(c, p.authParams(nil))), "ada", adaPassword)
	if want := "Your email address is not verified yet, and this service cannot send email. Ask your administrator to verify it."; r.status != 403 || firstMatch(alertText, r.body) != want {
		t.Errorf("%d %q, want 403 %q", r.status, firstMatch(alertText, r.body), want)
	}
}

// TestAccountVerificationEmail: the account page of an unverified address
// sends a new verification email, once per mail interval.
func TestAccountVerificationEmail(t *testing.T) {
	p := newProvider(t)
	c, acc := p.signedInAccount()
	if slices.Contains(formSteps(acc.body), "verify-email") {
		t.Errorf("a workspace without email offers a verification email: %q", formSteps(acc.body))
	}
	p.withHostedSMTP()
	acc = p.accountOf(c)
	if !slices.Contains(formSteps(acc.body), "verify-email") {
		t.Fatalf("no verification form: %q", formSteps(acc.body))
	}
	r := p.accountPost(c, acc, "verify-email", nil)
	if r.status != http.StatusFound || r.location() != p.issuer+"/account?done=verify-sent" {
		t.Fatalf("verify-email: %d %q", r.status, r.location())
	}
	if n := firstMatch(noticeText, get(t, c, r.location()).body); n != "We sent a verification email. Open its link to verify your address." {
		t.Errorf("notice %q", n)
	}
	p.clock.Advance(time.Minute)
	r = p.accountPost(c, acc, "verify-email", nil)
	got := map[string]any{"status": r.status, "retry": r.header.Get("Retry-After"), "alert": firstMatch(alertText, r.body)}
	want := map[string]any{"status": 429, "retry": "240",
		"alert": "A verification email went out moments ago, and its link works. You can ask for another in 4 minutes."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second verification email (-want +got):\n%s", diff)
	}
	mails := p.queuedMails()
	if len(mails) != 1 {
		t.Fatalf("%d mails, want 1", len(mails))
	}
	if page := get(t, c, mails[0].Link); page.status != 200 {
		t.Fatalf("verification link: %d %s", page.status, page.body)
	}
	if acc = p.accountOf(c); strings.Contains(acc.body, `id="email-section"`) {
		t.Errorf("a verified address still offers a verification email")
	}
}

// TestLogoutConfirmation: end_session without a hint naming the cookie's
// session changes nothing and asks; only the confirmation's own form,
// with its CSRF token, signs out.
func TestLogoutConfirmation(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	p.signedIn(c)
	ask := get(t, c, p.issuer+"/end_session?"+url.Values{"client_id": {p.web.Client.ID}, "post_logout_redirect_uri": {logoutURI}, "state": {"bye"}}.Encode())
	got := map[string]any{"status": ask.status, "title": firstMatch(h1Text, ask.body), "cookies": len(ask.header.Values("Set-Cookie")) <= 1,
		"asks": strings.Contains(ask.body, "Web App asks to sign you out."), "stay": firstMatch(wayLink, ask.body),
		"fields": hiddenFields(ask.body)}
	want := map[string]any{"status": 200, "title": "Sign out of acme?", "cookies": true, "asks": true, "stay": p.issuer + "/account",
		"fields": url.Values{"csrf": hiddenFields(ask.body)["csrf"], "confirm": {"1"}, "client_id": {p.web.Client.ID},
			"post_logout_redirect_uri": {logoutURI}, "state": {"bye"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("confirmation page (-want +got):\n%s", diff)
	}
	if _, set := cookie(ask, "identity_session"); set {
		t.Error("asking cleared the session cookie")
	}
	// Still signed in.
	p.codeFrom(p.authorize(c, p.authParams(nil)), appURI)

	// A forged confirmation (no CSRF token) changes nothing.
	forged := hiddenFields(ask.body)
	forged.Del("csrf")
	if r := postForm(t, c, p.issuer+"/end_session", forged, "", ""); r.status != http.StatusForbidden {
		t.Errorf("confirmation without CSRF: %d", r.status)
	}
	p.codeFrom(p.authorize(c, p.authParams(nil)), appURI)

	r := p.submit(c, "/end_session", ask, nil)
	if r.status != http.StatusFound || r.location() != logoutURI+"?state=bye" {
		t.Fatalf("confirmed: %d %q %s", r.status, r.location(), r.body)
	}
	p.loginForm(c, p.authorize(c, p.authParams(nil)))
}

// TestSignInAMR: the ID token's amr says which factors signed in.
func TestSignInAMR(t *testing.T) {
	p := newProvider(t)
	if amr := claimsOf(t, p.tokens()["id_token"].(string))["amr"]; !cmp.Equal(amr, []any{"pwd"}) {
		t.Errorf("password only: amr %v, want [pwd]", amr)
	}
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.codeStep(c)
	code, _ := p.codeFrom(p.postCode(c, page, p.totpCode(secret)), appURI)
	if amr := claimsOf(t, p.exchange(code).json(t)["id_token"].(string))["amr"]; !cmp.Equal(amr, []any{"pwd", "otp", "mfa"}) {
		t.Errorf("with a second factor: amr %v, want [pwd otp mfa]", amr)
	}
}

// TestBranding: the workspace's display name and accent on its pages,
// its logo and the client's on the sign-in page, served with their ETag.
func TestBranding(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	page := get(t, c, p.authorize(c, p.authParams(nil)).location())
	if strings.Contains(page.body, `class="logo"`) || !strings.Contains(page.body, `<p class="workspace">acme</p>`) {
		t.Errorf("without branding: %s", page.body)
	}
	for _, path := range []string{"/logo", "/logo?client=" + p.web.Client.ID, "/logo?client="} {
		if r := get(t, c, p.issuer+path); r.status != 404 {
			t.Errorf("GET %s without a logo: %d", path, r.status)
		}
	}
	p.setPolicy(func(s *identity.Settings) {
		s.Branding = identity.Branding{DisplayName: "Acme Corp", AccentColor: "#7b2d8b"}
	})
	logo, err := p.ws.SetLogo(t.Context(), pngOf(t, 40, 20))
	if err != nil {
		t.Fatal(err)
	}
	clientLogo, err := p.ws.SetClientLogo(t.Context(), p.web.Client.ID, pngOf(t, 20, 20))
	if err != nil {
		t.Fatal(err)
	}
	page = get(t, c, p.authorize(c, p.authParams(nil)).location())
	for _, want := range []string{
		`<title>Sign in · Acme Corp</title>`,
		`<img class="logo" src="` + p.issuer + `/logo" alt=""><p class="workspace">Acme Corp</p>`,
		`<img class="logo" src="` + p.issuer + `/logo?client=` + p.web.Client.ID + `" alt=""><span>to continue to Web App</span>`,
		`background:#7b2d8b`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("sign-in page lacks %s:\n%s", want, page.body)
		}
	}
	// Every page shows the workspace: the reset page too.
	p.withSMTP()
	if r := get(t, c, p.issuer+"/reset"); !strings.Contains(r.body, `<p class="workspace">Acme Corp</p>`) || !strings.Contains(r.body, `background:#7b2d8b`) {
		t.Errorf("reset page without the branding: %s", r.body)
	}
	for _, tt := range []struct {
		path string
		logo identity.Logo
	}{{"/logo", logo}, {"/logo?client=" + p.web.Client.ID, clientLogo}} {
		r := get(t, c, p.issuer+tt.path)
		got := map[string]any{"status": r.status, "type": r.header.Get("Content-Type"), "etag": r.header.Get("ETag"),
			"cache": r.header.Get("Cache-Control"), "body": r.body == string(tt.logo.Data)}
		want := map[string]any{"status": 200, "type": "image/png", "etag": tt.logo.ETag, "cache": "public, max-age=300", "body": true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tt.path, diff)
		}
		req, _ := http.NewRequest(http.MethodGet, p.issuer+tt.path, nil)
		req.Header.Set("If-None-Match", tt.logo.ETag)
		if r := do(t, c, req); r.status != http.StatusNotModified || r.body != "" {
			t.Errorf("GET %s If-None-Match: %d", tt.path, r.status)
		}
		req.Header.Set("If-None-Match", `"other"`)
		if r := do(t, c, req); r.status != http.StatusOK {
			t.Errorf("GET %s with another ETag: %d", tt.path, r.status)
		}
	}
}

// TestResetEndsLockout: after a reset through the emailed link the new
// password signs in at once, though the account was locked, and the page
// after the reset leads to the sign-in it was started from.
func TestResetEndsLockout(t *testing.T) {
	p := newProvider(t)
	p.withSMTP()
	p.setPolicy(func(s *identity.Settings) {
		s.Lockout = identity.LockoutPolicy{Threshold: 3, Duration: time.Hour}
	})
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	for range 3 {
		p.signIn(c, form, "ada", "wrong password")
	}
	start := get(t, c, p.issuer+"/reset?request="+url.QueryEscape(form.Get("request")))
	p.submit(c, "/reset", start, map[string]string{"email": "ada@example.com"})
	links, _ := p.resetLinks()
	page := get(t, c, links["ada@example.com"])
	done := p.submit(c, "/reset", page, map[string]string{"password": "a new long password", "repeat": "a new long password"})
	got := map[string]any{"status": done.status, "title": firstMatch(h1Text, done.body), "way": firstMatch(wayLink, done.body)}
	want := map[string]any{"status": 200, "title": "Password changed", "way": p.issuer + "/login?request=" + form.Get("request")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reset done (-want +got):\n%s", diff)
	}
	p.codeFrom(p.signIn(c, form, "ada", "a new long password"), appURI)
}

// TestAccountRevokeCutsTokens: revoking a session on the account page
// revokes the tokens issued in it: its refresh token no longer refreshes
// and its access token is no longer active.
func TestAccountRevokeCutsTokens(t *testing.T) {
	p := newProvider(t)
	app := p.browser()
	tokens := p.exchange(p.signedIn(app)).json(t)
	access, refresh := tokens["access_token"].(string), tokens["refresh_token"].(string)
	c, page := p.signedInAccount()
	var appSession string
	for _, s := range sessionsListed(page.body) {
		if !s.current {
			appSession = s.id
		}
	}
	if appSession == "" {
		t.Fatalf("the application's session is not listed:\n%s", page.body)
	}
	if r := p.accountPost(c, page, "revoke", map[string]string{"session": appSession}); r.status != http.StatusFound {
		t.Fatalf("revoke: %d", r.status)
	}
	r := p.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
	got := map[string]any{"refresh": errorOf(t, r), "active": p.introspect(access)["active"]}
	want := map[string]any{"refresh": oauthError{Status: 400, Error: "invalid_grant", Description: true}, "active": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the revoke (-want +got):\n%s", diff)
	}
}

var removeLink = regexp.MustCompile(`<a href="([^"]*)" id="remove-link">Turn off two-step verification</a>`)

// TestRemoveFactorConfirmation: turning the second factor off goes
// through a page that warns and asks for a code; a workspace that
// requires a second factor neither offers nor allows it.
func TestRemoveFactorConfirmation(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	p.clock.Advance(time.Minute)
	c := p.browser()
	r := p.accountSignIn(c, "ada", adaPassword)
	if r = p.submit(c, "/account", r, map[string]string{"code": p.totpCode(secret)}); r.status != http.StatusFound {
		t.Fatalf("sign-in with the code: %d", r.status)
	}
	page := p.accountOf(c)
	link := firstMatch(removeLink, page.body)
	if link != p.issuer+"/account?confirm=remove" || slices.Contains(formSteps(page.body), "remove") {
		t.Fatalf("the account page offers removal at %q with forms %q, want a link to the confirmation", link, formSteps(page.body))
	}
	confirm := get(t, c, link)
	got := map[string]any{"status": confirm.status, "title": titleOf(confirm.body), "steps": formSteps(confirm.body),
		"warning": strings.Contains(confirm.body, `<p class="warning" id="remove-warning">Without two-step verification, anyone who learns your password can sign in as you.</p>`),
		"cancel":  firstMatch(wayLink, confirm.body)}
	want := map[string]any{"status": 200, "title": "Turn off two-step verification?", "steps": []string{"remove"}, "warning": true,
		"cancel": p.issuer + "/account"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("confirmation (-want +got):\n%s", diff)
	}

	p.setPolicy(func(s *identity.Settings) { s.MFA = identity.MFARequired })
	page = p.accountOf(c)
	if firstMatch(removeLink, page.body) != "" || !strings.Contains(page.body, "This workspace requires two-step verification, so it cannot be turned off.") {
		t.Errorf("under MFARequired the account page offers removal:\n%s", page.body)
	}
	p.clock.Advance(time.Minute)
	for name, r := range map[string]reply{
		"GET":  get(t, c, link),
		"POST": p.submit(c, "/account", confirm, map[string]string{"code": p.totpCode(secret)}),
	} {
		if r.status != http.StatusForbidden || firstMatch(alertText, r.body) != "This workspace requires two-step verification, so it cannot be turned off." {
			t.Errorf("%s under MFARequired: %d %q", name, r.status, firstMatch(alertText, r.body))
		}
	}
	if st, err := p.ws.GetMFAStatus(t.Context(), p.ada.ID); err != nil || !st.Enabled {
		t.Errorf("the factor after the refusals: %+v, %v", st, err)
	}
}

// TestAccessibleMarkup: the attributes that tie errors to inputs and
// help people type, on the pages that have them.
func TestAccessibleMarkup(t *testing.T) {
	p := newProvider(t)
	states := map[string]string{}
	for _, s := range pageStates(t, p, "en") {
		states[s.name] = s.page.body
	}
	tests := []struct {
		state string
		want  []string
	}{
		{"signin", []string{
			`<input type="text" id="login" name="login" value="" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="255" required autofocus>`,
			`<input type="password" id="password" name="password" autocomplete="current-password" maxlength="4096" required >`,
		}},
		{"signin-wrong", []string{
			`<p class="error field-error" id="password-error">The username, email or password is not right.</p>`,
			`id="login" name="login" value="ada" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="255" required aria-invalid="true" aria-describedby="password-error">`,
			`id="password" name="password" autocomplete="current-password" maxlength="4096" required aria-invalid="true" aria-describedby="password-error" autofocus>`,
		}},
		{"signin-empty", []string{
			`<p class="error field-error" id="login-error">Enter your username or email.</p>`,
			`required aria-invalid="true" aria-describedby="login-error" autofocus>`,
			`required aria-invalid="true" aria-describedby="password-error">`,
		}},
		{"factor", []string{`<input type="text" id="code" name="code" inputmode="numeric" pattern=" *[0-9]{3} ?[0-9]{3} *" autocomplete="one-time-code"`}},
		{"enrol", []string{`<a href="otpauth://totp/`, `<input type="text" id="otpauth-uri" value="otpauth://totp/`, `inputmode="numeric"`}},
		{"recovery-codes", []string{`<a href="data:text/plain;charset=utf-8,`, `download="recovery-codes.txt" id="download">`,
			`<input type="checkbox" id="saved" name="saved" value="1" required autofocus><label for="saved">`}},
		{"recovery-codes-unsaved", []string{`<input type="checkbox" id="saved" name="saved" value="1" required aria-invalid="true" aria-describedby="saved-error" autofocus>`}},
		{"reset-new-password", []string{`<ul class="rules" id="password-rules" aria-labelledby="password-rules-title">`,
			`<li>at least 8 characters</li>`, `<li>a digit</li>`, `aria-describedby="password-rules" autofocus>`}},
		{"account", []string{`<label for="current">`, `<label for="password">`, `<label for="repeat">`,
			`<th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last active</th><th scope="col"><span class="visually-hidden">Action</span></th>`}},
		{"account-password-errors", []string{`id="repeat" name="repeat" autocomplete="new-password" maxlength="4096" required aria-invalid="true" aria-describedby="repeat-error" autofocus>`}},
	}
	for _, tt := range tests {
		body, ok := states[tt.state]
		if !ok {
			t.Errorf("no page state %s", tt.state)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %s", tt.state, w)
			}
		}
	}
	// Labels are distinct on every page: no two inputs read alike.
	label := regexp.MustCompile(`<label for="[^"]*">([^<]*)</label>`)
	for name, body := range states {
		var seen []string
		for _, m := range label.FindAllStringSubmatch(body, -1) {
			if slices.Contains(seen, m[1]) {
				t.Errorf("%s: two inputs labelled %q", name, m[1])
			}
			seen = append(seen, m[1])
		}
	}
}
