package oidc_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/i18n"
)

// speaker sends Accept-Language with every request, and a User-Agent,
// as a browser does.
type speaker struct {
	lang string
	next http.RoundTripper
}

func (s speaker) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept-Language", s.lang)
	r.Header.Set("User-Agent", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:128.0) Gecko/20100101 Firefox/128.0")
	return s.next.RoundTrip(r)
}

// browserIn returns a browser (see browser) whose language is lang.
func (p *provider) browserIn(lang string) *http.Client {
	c := p.browser()
	c.Transport = speaker{lang: lang, next: http.DefaultTransport}
	return c
}

// pageState is a hosted page as a browser got it: the name of what it
// shows and the answer.
type pageState struct {
	name string
	page reply
}

// pageStates walks a branded workspace through every page the package
// shows, in a browser speaking lang, and returns each page state: the
// sign-in with its refusals, the second factor, the account page and its
// forms, the enrolment and recovery codes, the password reset, the email
// verification, the logout confirmation and the error pages.
func pageStates(t *testing.T, p *provider, lang string) []pageState {
	t.Helper()
	ctx := t.Context()
	p.withHostedSMTP()
	p.setPolicy(func(s *identity.Settings) {
		s.Branding = identity.Branding{DisplayName: "Acme Corp", AccentColor: "#7b2d8b"}
		s.PasswordPolicy.RequireDigit = true
	})
	if _, err := p.ws.SetLogo(ctx, pngOf(t, 120, 40)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ws.SetClientLogo(ctx, p.web.Client.ID, pngOf(t, 32, 32)); err != nil {
		t.Fatal(err)
	}
	carol, err := p.ws.CreateUser(ctx, identity.NewUser{Username: "carol", Email: "carol@example.com", FullName: "Carol Shaw", Password: "carol's long password 1"})
	if err != nil {
		t.Fatal(err)
	}
	carolSecret, _ := p.enrol(carol.ID)
	var out []pageState
	add := func(name string, r reply) {
		t.Helper()
		if r.status == http.StatusFound || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %q, want a page", name, r.status, r.location())
		}
		out = append(out, pageState{name, r})
	}
	submit := func(c *http.Client, path string, page reply, set map[string]string) reply {
		t.Helper()
		form := hiddenFields(page.body)
		for k, v := range set {
			form.Set(k, v)
		}
		return postForm(t, c, p.issuer+path, form, "", "")
	}

	// The sign-in page and its refusals.
	c := p.browserIn(lang)
	auth := p.authorize(c, p.authParams(nil))
	signIn := get(t, c, auth.location())
	add("signin", signIn)
	form := p.loginForm(c, auth)
	add("signin-wrong", p.signIn(c, form, "ada", "wrong password"))
	add("signin-empty", p.signIn(c, form, "", ""))
	add("signin-expired", get(t, c, p.issuer+"/login?request=nonsense"))
	forged := cloneValues(form)
	forged.Set("csrf", "forged")
	add("csrf-refused", postForm(t, c, p.issuer+"/login", forged, "", ""))
	add("not-found", get(t, c, p.issuer+"/nope"))

	// The second factor at sign-in.
	cc := p.browserIn(lang)
	factor := p.signIn(cc, p.loginForm(cc, p.authorize(cc, p.authParams(nil))), "carol", "carol's long password 1")
	add("factor", factor)
	add("factor-wrong", submit(cc, "/login", factor, map[string]string{"code": wrong(p.totpCode(carolSecret))}))

	// Logout.
	cl := p.browserIn(lang)
	p.signedIn(cl)
	logout := get(t, cl, p.issuer+"/end_session?"+url.Values{"client_id": {p.web.Client.ID}}.Encode())
	add("logout-confirm", logout)
	add("signed-out", submit(cl, "/end_session", logout, nil))

	// The account page: its sign-in, then ada's account, an unverified
	// address among it.
	ca := p.browserIn(lang)
	accountForm := get(t, ca, p.issuer+"/account")
	add("account-signin", accountForm)
	if r := submit(ca, "/account", accountForm, map[string]string{"login": "ada", "password": adaPassword}); r.status != http.StatusFound {
		t.Fatalf("account sign-in: %d", r.status)
	}
	account := get(t, ca, p.issuer+"/account")
	add("account", account)
	add("account-password-errors", p.accountPost(ca, account, "password", map[string]string{"current": "x", "password": "short", "repeat": "other"}))
	enrol := p.accountPost(ca, account, "enroll", nil)
	add("enrol", enrol)
	add("enrol-wrong", submit(ca, "/account", enrol, map[string]string{"code": "000000"}))
	secret := strings.ReplaceAll(secretText.FindStringSubmatch(enrol.body)[1], " ", "")
	codes := submit(ca, "/account", enrol, map[string]string{"code": p.totpCode(secret)})
	add("recovery-codes", codes)
	add("recovery-codes-unsaved", submit(ca, "/account", codes, nil))
	if r := submit(ca, "/account", codes, map[string]string{"saved": "1"}); r.status != http.StatusFound {
		t.Fatalf("codes saved: %d", r.status)
	} else {
		add("account-mfa-on", get(t, ca, r.location()))
	}
	add("remove-factor", get(t, ca, p.issuer+"/account?confirm=remove"))

	// Email verification from the account page.
	if r := p.accountPost(ca, account, "verify-email", nil); r.status != http.StatusFound {
		t.Fatalf("verify-email: %d", r.status)
	}
	add("account-verify-throttled", p.accountPost(ca, account, "verify-email", nil))
	var verifyLink string
	for _, m := range p.queuedMails() {
		if m.Kind == identity.MailVerifyEmail && m.To.Address == "ada@example.com" {
			verifyLink = m.Link
		}
	}
	add("verify-done", get(t, ca, verifyLink))
	add("verify-used", get(t, ca, verifyLink))

	// The password reset, from the sign-in page.
	cr := p.browserIn(lang)
	resetForm := get(t, cr, p.issuer+"/reset?request="+url.QueryEscape(form.Get("request")))
	add("reset", resetForm)
	add("reset-sent", submit(cr, "/reset", resetForm, map[string]string{"email": "ada@example.com"}))
	links, _ := p.resetLinks()
	newPassword := get(t, cr, links["ada@example.com"])
	add("reset-new-password", newPassword)
	add("reset-new-password-errors", submit(cr, "/reset", newPassword, map[string]string{"password": "nodigits here", "repeat": "nodigits here"}))
	add("reset-done", submit(cr, "/reset", newPassword, map[string]string{"password": "new password 2", "repeat": "new password 2"}))
	add("reset-link-over", get(t, cr, links["ada@example.com"]))

	// A sign-in that needs a verified address, and one throttled.
	p.setPolicy(func(s *identity.Settings) {
		s.RequireVerifiedEmail = true
		s.Throttle.PerLogin = identity.Rate{Count: 1, Window: 15 * time.Minute}
	})
	cu := p.browserIn(lang)
	add("signin-unverified", p.signIn(cu, p.loginForm(cu, p.authorize(cu, p.authParams(nil))), "carol", "carol's long password 1"))
	ct := p.browserIn(lang)
	throttledForm := p.loginForm(ct, p.authorize(ct, p.authParams(nil)))
	p.signIn(ct, throttledForm, "mallory", "wrong password")
	add("signin-throttled", p.signIn(ct, throttledForm, "mallory", "wrong password"))
	return out
}

// englishFragments returns the English page texts' parts between their
// arguments that are long enough to tell English apart: a German page
// that shows one has an untranslated text.
func englishFragments() []string {
	verb := regexp.MustCompile(`%\[\d+\][a-z]`)
	de := i18n.Messages("de")
	var out []string
	for key, text := range i18n.Messages("en") {
		if !strings.HasPrefix(key, "page.") {
			continue
		}
		for _, f := range verb.Split(text, -1) {
			f = strings.TrimSpace(f)
			if len(f) >= 10 && strings.Contains(f, " ") && !strings.Contains(de[key], f) {
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// visibleText is the text of a page a reader meets: its markup and style
// sheet removed, entities unescaped, attributes a reader hears kept (alt,
// aria-label, title, the value of a button).
func visibleText(body string) string {
	body = regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(body, " ")
	var b strings.Builder
	for _, m := range regexp.MustCompile(`(?:alt|aria-label)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		b.WriteString(m[1] + "\n")
	}
	b.WriteString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(body, "\n"))
	return html.UnescapeString(b.String())
}

// englishWord matches common English words that are no German words.
var englishWord = regexp.MustCompile(`(?i)\b(the|your|you|and|with|is|not|of|this|was|are|has|for|enter|sign|please|will|again|here|to)\b`)

// lineOf returns the line of text that holds s.
func lineOf(text, s string) string {
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestPagesTranslated: every page state in German shows no English text
// and no missing key ("!key!"), and in English no missing key either;
// each page says its language.
func TestPagesTranslated(t *testing.T) {
	english := englishFragments()
	if len(english) < 100 {
		t.Fatalf("only %d English fragments: the scan is broken", len(english))
	}
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			p := newProvider(t)
			states := pageStates(t, p, lang)
			if len(states) < 30 {
				t.Errorf("%d page states, want every page", len(states))
			}
			for _, s := range states {
				text := visibleText(s.page.body)
				if m := regexp.MustCompile(`![a-z_.]+!`).FindString(text); m != "" {
					t.Errorf("%s: missing key %s", s.name, m)
				}
				if got := []string{firstMatch(htmlLang, s.page.body), s.page.header.Get("Content-Language")}; got[0] != lang || got[1] != lang {
					t.Errorf("%s: lang %q, Content-Language %q, want %s", s.name, got[0], got[1], lang)
				}
				if lang != "de" {
					continue
				}
				for _, f := range english {
					if strings.Contains(text, f) {
						t.Errorf("%s: English text %q", s.name, f)
					}
				}
				// Text written into the template rather than the
				// catalogue: English words German does not have.
				for _, w := range englishWord.FindAllString(text, -1) {
					t.Errorf("%s: English word %q in %q", s.name, w, lineOf(text, w))
				}
			}
		})
	}
}
