package oidc_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
)

// hiddenInput finds the hidden fields of a page.
var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

// hiddenFields returns the hidden fields of the first form of a page.
func hiddenFields(body string) url.Values {
	form, _, _ := strings.Cut(body, "</form>")
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(form, -1) {
		v.Add(m[1], html.UnescapeString(m[2]))
	}
	return v
}

// submit posts the first form of page to path with its hidden fields and
// the fields set.
func (p *provider) submit(c *http.Client, path string, page reply, set map[string]string) reply {
	p.t.Helper()
	form := hiddenFields(page.body)
	for k, v := range set {
		form.Set(k, v)
	}
	return postForm(p.t, c, p.issuer+path, form, "", "")
}

// setPolicy changes the workspace's settings.
func (p *provider) setPolicy(change func(*identity.Settings)) {
	p.t.Helper()
	s, err := p.ws.GetSettings(p.t.Context())
	if err != nil {
		p.t.Fatal(err)
	}
	change(&s)
	if err := p.ws.UpdateSettings(p.t.Context(), s); err != nil {
		p.t.Fatal(err)
	}
}

// enrol gives the user a confirmed TOTP factor and returns its secret and
// recovery codes. The enrolment takes the code of the step before the
// clock's, so that the clock's code is new to the factor.
func (p *provider) enrol(userID int64) (string, []string) {
	p.t.Helper()
	e, err := p.ws.BeginTOTPEnrollment(p.t.Context(), userID)
	if err != nil {
		p.t.Fatal(err)
	}
	code, err := totp.GenerateCode(e.Secret, p.clock.Now().Add(-30*time.Second))
	if err != nil {
		p.t.Fatal(err)
	}
	codes, err := p.ws.ConfirmTOTPEnrollment(p.t.Context(), userID, code)
	if err != nil {
		p.t.Fatal(err)
	}
	return e.Secret, codes
}

// totpCode is the code of the secret at the clock's time.
func (p *provider) totpCode(secret string) string {
	p.t.Helper()
	code, err := totp.GenerateCode(strings.ReplaceAll(secret, " ", ""), p.clock.Now())
	if err != nil {
		p.t.Fatal(err)
	}
	return code
}

// wrong returns another code of the same length.
func wrong(code string) string {
	return string('0'+(code[0]-'0'+1)%10) + code[1:]
}

// codeStep runs a sign-in of ada for the web client in browser c up to
// the second factor's page.
func (p *provider) codeStep(c *http.Client) reply {
	p.t.Helper()
	r := p.signIn(c, p.loginForm(c, p.authorize(c, p.authParams(nil))), "ada", adaPassword)
	if r.status != http.StatusOK || hiddenFields(r.body).Get("challenge") == "" {
		p.t.Fatalf("password step: %d %q, want the second factor's page:\n%s", r.status, r.location(), r.body)
	}
	return r
}

// postCode posts the second factor's form of page with code.
func (p *provider) postCode(c *http.Client, page reply, code string) reply {
	p.t.Helper()
	return p.submit(c, "/login", page, map[string]string{"code": code})
}

// cookie returns the value of the cookie a response sets, and whether it
// sets it.
func cookie(r reply, name string) (string, bool) {
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == name {
			return ck.Value, true
		}
	}
	return "", false
}

// errorsOf returns the error messages a page shows.
func errorsOf(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<p class="error[^"]*"[^>]*>([^<]*)</p>`).FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// titleOf returns a page's heading.
func titleOf(body string) string {
	m := regexp.MustCompile(`<h1>([^<]*)</h1>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

func TestSignInSecondFactor(t *testing.T) {
	p := newProvider(t)
	secret, recovery := p.enrol(p.ada.ID)
	right := p.totpCode(secret)
	tests := []struct {
		name string
		code string
		// signedIn: back at the client with a code and a session cookie;
		// otherwise the code page again with the message.
		signedIn bool
		message  string
	}{
		{"wrong code", wrong(right), false, "The code is not valid."},
		{"empty code", "  ", false, "Enter the code from your authenticator app."},
		{"too long", strings.Repeat("1", 65), false, "The code is not valid."},
		{"recovery code of another factor", "abcde-fghij", false, "The code is not valid."},
		{"TOTP code", right, true, ""},
		{"recovery code in upper case with spaces", " " + strings.ToUpper(recovery[0]) + " ", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := p.browser()
			page := p.codeStep(c)
			for _, s := range []string{"<h1>Two-step verification</h1>", "to continue to Web App", `name="code"`} {
				if !strings.Contains(page.body, s) {
					t.Errorf("code page lacks %q:\n%s", s, page.body)
				}
			}
			if _, set := cookie(page, "identity_session"); set {
				t.Error("the password alone set a session cookie")
			}
			r := p.postCode(c, page, tt.code)
			_, session := cookie(r, "identity_session")
			got := map[string]any{"signedIn": r.status == http.StatusFound && strings.HasPrefix(r.location(), appURI+"?code="),
				"session": session, "errors": errorsOf(r.body)}
			want := map[string]any{"signedIn": tt.signedIn, "session": tt.signedIn, "errors": []string(nil)}
			if !tt.signedIn {
				want["errors"] = []string{tt.message}
				got["challenge"] = hiddenFields(r.body).Get("challenge")
				want["challenge"] = hiddenFields(page.body).Get("challenge")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%d %s", diff, r.status, r.body)
			}
			if tt.signedIn {
				code, _ := p.codeFrom(r, appURI)
				if tr := p.exchange(code); tr.status != http.StatusOK {
					t.Errorf("exchange: %d %s", tr.status, tr.body)
				}
			}
		})
	}
}

// TestSecondFactorWrongThenRight: after a wrong code the same challenge
// takes the right one.
func TestSecondFactorWrongThenRight(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.codeStep(c)
	again := p.postCode(c, page, wrong(p.totpCode(secret)))
	if again.status != http.StatusBadRequest {
		t.Fatalf("wrong code: %d", again.status)
	}
	p.codeFrom(p.postCode(c, again, p.totpCode(secret)), appURI)
}

// TestSecondFactorReplay: a code accepted once is refused afterwards, in
// another sign-in; a used recovery code likewise; and a used challenge
// ends its sign-in.
func TestSecondFactorReplay(t *testing.T) {
	p := newProvider(t)
	secret, recovery := p.enrol(p.ada.ID)
	code := p.totpCode(secret)
	tests := []struct {
		name string
		code string
	}{
		{"TOTP code", code},
		{"recovery code", recovery[3]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := p.browser()
			first := p.codeStep(c)
			p.codeFrom(p.postCode(c, first, tt.code), appURI)

			c2 := p.browser()
			replay := p.postCode(c2, p.codeStep(c2), tt.code)
			if diff := cmp.Diff([]string{"The code is not valid."}, errorsOf(replay.body)); replay.status != http.StatusBadRequest || diff != "" {
				t.Errorf("the code again: %d (-want +got):\n%s", replay.status, diff)
			}

			// The first form posted again: its challenge and request were
			// used.
			used := p.postCode(c, first, tt.code)
			got := map[string]any{"status": used.status, "location": used.location(), "title": titleOf(used.body)}
			want := map[string]any{"status": 400, "location": "", "title": "This sign-in has expired"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("used challenge (-want +got):\n%s\n%s", diff, used.body)
			}
		})
	}
	st, err := p.ws.GetMFAStatus(t.Context(), p.ada.ID)
	if err != nil || st.RecoveryCodesLeft != 9 {
		t.Errorf("MFAStatus = %+v, %v; want 9 recovery codes left", st, err)
	}
}

// TestSecondFactorExpired: a challenge past its lifetime ends the sign-in
// with a link to start again.
func TestSecondFactorExpired(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.codeStep(c)
	p.clock.Advance(identity.MFAChallengeLifetime)
	r := p.postCode(c, page, p.totpCode(secret))
	// The request outlives the challenge: the link shows its sign-in form.
	restart := p.issuer + "/login?" + url.Values{"request": {hiddenFields(page.body).Get("request")}}.Encode()
	got := map[string]any{"status": r.status, "title": titleOf(r.body), "link": strings.Contains(r.body, `<a href="`+html.EscapeString(restart)+`">Start again</a>`)}
	want := map[string]any{"status": 400, "title": "This sign-in has expired", "link": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expired challenge (-want +got):\n%s\n%s", diff, r.body)
	}
	p.loginForm(c, reply{status: http.StatusFound, header: http.Header{"Location": {restart}}})
	if _, set := cookie(r, "identity_session"); set {
		t.Error("an expired challenge set a session cookie")
	}
}

// TestSecondFactorLocked: a locked account gets the very page a wrong code
// gets, even for the right code.
func TestSecondFactorLocked(t *testing.T) {
	p := newProvider(t)
	p.setPolicy(func(s *identity.Settings) { s.Lockout = identity.LockoutPolicy{Threshold: 2} })
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.codeStep(c)
	right := p.totpCode(secret)
	p.postCode(c, page, wrong(right))
	wrongPage := p.postCode(c, page, wrong(right))
	locked := p.postCode(c, page, right)
	if locked.status != http.StatusBadRequest || locked.body != wrongPage.body || locked.header.Get("Set-Cookie") != "" {
		t.Errorf("locked account: %d, Set-Cookie %q, body:\n%s\nwant 400, no cookie, the body of a wrong code:\n%s",
			locked.status, locked.header.Get("Set-Cookie"), locked.body, wrongPage.body)
	}
}

// TestEnrolAtSignIn: under MFARequired a user without a factor enrols on
// the way to the client: the enrolment page, a wrong code, the right one,
// ten recovery codes, Continue, and the client gets a code.
func TestEnrolAtSignIn(t *testing.T) {
	p := newProvider(t)
	p.setPolicy(func(s *identity.Settings) { s.MFA = identity.MFARequired })
	c := p.browser()
	page := p.codeStep(c)
	secret := html.UnescapeString(regexp.MustCompile(`id="secret">([^<]*)<`).FindStringSubmatch(page.body)[1])
	uri := html.UnescapeString(regexp.MustCompile(`id="otpauth-uri" value="([^"]*)" readonly`).FindStringSubmatch(page.body)[1])
	link := html.UnescapeString(regexp.MustCompile(`<a href="(otpauth:[^"]*)">Open in an authenticator app on this device</a>`).FindStringSubmatch(page.body)[1])
	csp := regexp.MustCompile(`^default-src 'none'; img-src 'self' data:; style-src 'sha256-[A-Za-z0-9+/]{43}='; base-uri 'none'; frame-ancestors 'none'; form-action 'self' https://app.example$`)
	got := map[string]any{
		"title":     titleOf(page.body),
		"enrolling": hiddenFields(page.body).Get("enrolling"),
		"qr":        strings.Contains(page.body, `<img class="qr" src="data:image/png;base64,iVBOR`),
		"uri":       strings.HasPrefix(uri, "otpauth://totp/acme:ada?"),
		"link":      link == uri,
		"csp":       csp.MatchString(page.header.Get("Content-Security-Policy")),
	}
	want := map[string]any{"title": "Set up two-step verification", "enrolling": "1", "qr": true, "uri": true, "link": true, "csp": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enrolment page (-want +got):\n%s\n%s", diff, page.body)
	}

	again := p.postCode(c, page, wrong(p.totpCode(secret)))
	if diff := cmp.Diff([]string{"The code is not valid."}, errorsOf(again.body)); again.status != http.StatusBadRequest || diff != "" ||
		!strings.Contains(again.body, `id="secret">`+secret+`<`) {
		t.Fatalf("wrong code: %d (-want +got):\n%s\n%s", again.status, diff, again.body)
	}

	codesPage := p.postCode(c, again, p.totpCode(secret))
	codes := regexp.MustCompile(`<li><code>([a-z2-7]{5}-[a-z2-7]{5})</code></li>`).FindAllStringSubmatch(codesPage.body, -1)
	_, session := cookie(codesPage, "identity_session")
	if codesPage.status != http.StatusOK || len(codes) != identity.RecoveryCodeCount || !session || codesPage.location() != "" {
		t.Fatalf("after the first code: %d, %d recovery codes, session cookie %v; want 200, 10 codes, a session:\n%s",
			codesPage.status, len(codes), session, codesPage.body)
	}
	// Continue without ticking that the codes are saved: the codes again,
	// asking for the box.
	notSaved := p.submit(c, "/login", codesPage, nil)
	if diff := cmp.Diff([]string{"Save the codes, then tick this box."}, errorsOf(notSaved.body)); notSaved.status != http.StatusBadRequest ||
		diff != "" || len(recoveryCodes(notSaved.body)) != identity.RecoveryCodeCount || recoveryCodes(notSaved.body)[0] != codes[0][1] {
		t.Errorf("Continue without the box: %d (-want +got):\n%s\n%s", notSaved.status, diff, notSaved.body)
	}
	code, state := p.codeFrom(p.submit(c, "/login", notSaved, map[string]string{"saved": "1"}), appURI)
	if state != "st-1" {
		t.Errorf("state %q", state)
	}
	if tr := p.exchange(code); tr.status != http.StatusOK {
		t.Errorf("exchange: %d %s", tr.status, tr.body)
	}
	st, err := p.ws.GetMFAStatus(t.Context(), p.ada.ID)
	if err != nil || !st.Enabled || st.RecoveryCodesLeft != 10 {
		t.Errorf("MFAStatus = %+v, %v; want enabled with 10 codes", st, err)
	}
	// The page's Continue once more: the request is completed.
	if r := p.submit(c, "/login", codesPage, map[string]string{"saved": "1"}); r.status != http.StatusBadRequest || r.location() != "" {
		t.Errorf("Continue again: %d %q", r.status, r.location())
	}
}

// TestContinueNeedsSession: the recovery codes' Continue completes the
// request only for the session the enrolment started.
func TestContinueNeedsSession(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
	form.Set("step", "continue")
	r := postForm(t, c, p.issuer+"/login", form, "", "")
	if r.status != http.StatusBadRequest || r.location() != "" || titleOf(r.body) != "This sign-in has expired" {
		t.Errorf("Continue without a session: %d %q %s", r.status, r.location(), r.body)
	}
	form.Set("step", "nope")
	if r := postForm(t, c, p.issuer+"/login", form, "", ""); r.status != http.StatusBadRequest || r.location() != "" {
		t.Errorf("unknown step: %d %q", r.status, r.location())
	}
}

// TestSecondFactorCSRF: the code form without its CSRF token signs nobody
// in.
func TestSecondFactorCSRF(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.codeStep(c)
	form := hiddenFields(page.body)
	form.Set("code", p.totpCode(secret))
	tests := []struct {
		name   string
		client *http.Client
		drop   string
	}{
		{"another browser", p.browser(), ""},
		{"no token", c, "csrf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cloneValues(form)
			f.Del(tt.drop)
			r := postForm(t, tt.client, p.issuer+"/login", f, "", "")
			if r.status != http.StatusForbidden || r.location() != "" {
				t.Errorf("%d %q", r.status, r.location())
			}
		})
	}
	p.codeFrom(postForm(t, c, p.issuer+"/login", form, "", ""), appURI)
}
