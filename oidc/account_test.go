package oidc_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// accountGet loads the account page in browser c.
func (p *provider) accountGet(c *http.Client) reply {
	p.t.Helper()
	return get(p.t, c, p.issuer+"/account")
}

// accountSignIn signs in on the account page in browser c and returns the
// answer to the password.
func (p *provider) accountSignIn(c *http.Client, login, password string) reply {
	p.t.Helper()
	form := p.accountGet(c)
	if hiddenFields(form.body).Get("step") != "signin" {
		p.t.Fatalf("account page without a session: %d, want the sign-in form:\n%s", form.status, form.body)
	}
	return p.submit(c, "/account", form, map[string]string{"login": login, "password": password})
}

// signedInAccount signs ada in on the account page in a new browser and
// returns the browser and the account page.
func (p *provider) signedInAccount() (*http.Client, reply) {
	p.t.Helper()
	c := p.browser()
	r := p.accountSignIn(c, "ada", adaPassword)
	if r.status != http.StatusFound || r.location() != p.issuer+"/account" {
		p.t.Fatalf("account sign-in: %d %q, want a redirect to the account page:\n%s", r.status, r.location(), r.body)
	}
	return c, p.accountOf(c)
}

// accountOf loads the account page of a signed-in browser.
func (p *provider) accountOf(c *http.Client) reply {
	p.t.Helper()
	page := p.accountGet(c)
	if page.status != http.StatusOK || titleOf(page.body) != "Your account" {
		p.t.Fatalf("account page: %d %q, want the account:\n%s", page.status, titleOf(page.body), page.body)
	}
	return page
}

// accountPost posts one of the account page's forms: the step, with the
// page's CSRF token, and the fields.
func (p *provider) accountPost(c *http.Client, page reply, step string, fields map[string]string) reply {
	p.t.Helper()
	form := map[string][]string{"step": {step}, "csrf": {hiddenFields(page.body).Get("csrf")}}
	for k, v := range fields {
		form[k] = []string{v}
	}
	return postForm(p.t, c, p.issuer+"/account", form, "", "")
}

var (
	recoveryCode = regexp.MustCompile(`<li><code>([a-z2-7]{5}-[a-z2-7]{5})</code></li>`)
	secretText   = regexp.MustCompile(`id="secret">([^<]*)<`)
	codesLeft    = regexp.MustCompile(`<span id="codes-left">(\d+)</span>`)
	rowPattern   = regexp.MustCompile(`(?s)<tr><td>([^<]*)(<small class="current">This browser</small>)?</td><td>([^<]*)</td>` +
		`<td><time datetime="[^"]*">([^<]*)</time><small>([^<]*)</small></td>.*?name="session" value="([^"]*)"`)
	// pageCSP is the CSP of a page without images of its own and whose
	// forms post to the page itself.
	pageCSP = regexp.MustCompile(`^default-src 'none'; img-src 'self'; style-src 'sha256-[A-Za-z0-9+/]{43}='; base-uri 'none'; frame-ancestors 'none'; form-action 'self'$`)
)

// listed is a session as the account page lists it.
type listed struct {
	id, device, address, created, ago string
	current                           bool
}

// sessionsListed returns the sessions the account page lists, in order.
func sessionsListed(body string) []listed {
	var out []listed
	for _, m := range rowPattern.FindAllStringSubmatch(body, -1) {
		out = append(out, listed{id: m[6], device: m[1], address: m[3], created: m[4], ago: m[5], current: m[2] != ""})
	}
	return out
}

// formSteps returns the hidden steps of a page's forms, in order.
func formSteps(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`name="step" value="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// recoveryCodes returns the recovery codes a page shows.
func recoveryCodes(body string) []string {
	var out []string
	for _, m := range recoveryCode.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// mfaShown is what the account page says of the second factor: "off", or
// the number of recovery codes left.
func mfaShown(body string) string {
	if m := codesLeft.FindStringSubmatch(body); m != nil {
		return m[1] + " codes left"
	}
	if strings.Contains(body, "Off: you sign in with your password alone.") {
		return "off"
	}
	return "?"
}

func TestAccountSignInForm(t *testing.T) {
	p := newProvider(t)
	revoked := p.sessionOf()
	sessions, err := listItems(p.ws.ListSessions(t.Context(), p.ada.ID, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ws.RevokeSession(t.Context(), sessions[0].ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cookie string
	}{
		{"no cookie", ""},
		{"garbage cookie", "identity_session=nope"},
		{"revoked session", "identity_session=" + revoked},
		{"too long", "identity_session=ids_" + strings.Repeat("x", 600)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, p.issuer+"/account", nil)
			if tt.cookie != "" {
				req.Header.Set("Cookie", tt.cookie)
			}
			r := do(t, http.DefaultClient, req)
			got := map[string]any{"status": r.status, "title": titleOf(r.body), "step": hiddenFields(r.body).Get("step"),
				"for": strings.Contains(r.body, "to manage your account"), "forgot": strings.Contains(r.body, "Forgot your password?"),
				"csp": pageCSP.MatchString(r.header.Get("Content-Security-Policy"))}
			want := map[string]any{"status": 200, "title": "Sign in", "step": "signin", "for": true, "forgot": false, "csp": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.body)
			}
		})
	}
}

func TestAccountSignIn(t *testing.T) {
	p := newProvider(t)
	c, page := p.signedInAccount()
	for _, s := range []string{`<strong id="username">ada</strong>`, `<span id="email">ada@example.com</span>`, `<small class="current">This browser</small>`} {
		if !strings.Contains(page.body, s) {
			t.Errorf("account page lacks %q:\n%s", s, page.body)
		}
	}
	// The account's session signs in at the authorization endpoint too.
	p.codeFrom(p.authorize(c, p.authParams(nil)), appURI)

	tests := []struct {
		name, login, password string
		message               string
	}{
		{"wrong password", "ada", "wrong password", "The username, email or password is not right."},
		{"unknown user", "nobody", adaPassword, "The username, email or password is not right."},
		{"empty password", "ada", "", "Enter your password."},
		{"login too long", strings.Repeat("a", 1021), adaPassword, "The username or email is too long."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.accountSignIn(p.browser(), tt.login, tt.password)
			_, session := cookie(r, "identity_session")
			got := map[string]any{"status": r.status, "session": session, "errors": errorsOf(r.body), "step": hiddenFields(r.body).Get("step")}
			want := map[string]any{"status": 400, "session": false, "errors": []string{tt.message}, "step": "signin"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAccountSignInSecondFactor: a user with a factor gives a code to sign
// in on the account page; under MFARequired one without enrols there.
func TestAccountSignInSecondFactor(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.accountSignIn(c, "ada", adaPassword)
	if page.status != http.StatusOK || hiddenFields(page.body).Get("challenge") == "" {
		t.Fatalf("password: %d, want the code form:\n%s", page.status, page.body)
	}
	again := p.submit(c, "/account", page, map[string]string{"code": wrong(p.totpCode(secret))})
	if diff := cmp.Diff([]string{"The code is not valid."}, errorsOf(again.body)); again.status != http.StatusBadRequest || diff != "" {
		t.Errorf("wrong code: %d (-want +got):\n%s", again.status, diff)
	}
	r := p.submit(c, "/account", again, map[string]string{"code": p.totpCode(secret)})
	if r.status != http.StatusFound || r.location() != p.issuer+"/account" {
		t.Fatalf("code: %d %q:\n%s", r.status, r.location(), r.body)
	}
	if got := mfaShown(p.accountOf(c).body); got != "10 codes left" {
		t.Errorf("second factor shown as %q", got)
	}

	bob, err := p.ws.CreateUser(t.Context(), identity.NewUser{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "bob's long password"})
	if err != nil {
		t.Fatal(err)
	}
	p.setPolicy(func(s *identity.Settings) { s.MFA = identity.MFARequired })
	c2 := p.browser()
	enrol := p.accountSignIn(c2, "bob", "bob's long password")
	m := secretText.FindStringSubmatch(enrol.body)
	if enrol.status != http.StatusOK || m == nil {
		t.Fatalf("bob's password: %d, want the enrolment:\n%s", enrol.status, enrol.body)
	}
	codes := p.submit(c2, "/account", enrol, map[string]string{"code": p.totpCode(m[1])})
	if n := len(recoveryCodes(codes.body)); codes.status != http.StatusOK || n != 10 || hiddenFields(codes.body).Get("step") != "saved" {
		t.Fatalf("bob's first code: %d, %d codes:\n%s", codes.status, n, codes.body)
	}
	if r := p.submit(c2, "/account", codes, map[string]string{"saved": "1"}); r.status != http.StatusFound || r.location() != p.issuer+"/account?done=codes-saved" {
		t.Errorf("the codes saved: %d %q", r.status, r.location())
	}
	if page := p.accountOf(c2); !strings.Contains(page.body, `id="username">bob<`) || mfaShown(page.body) != "10 codes left" {
		t.Errorf("bob's account:\n%s", page.body)
	}
	if st, err := p.ws.GetMFAStatus(t.Context(), bob.ID); err != nil || !st.Enabled {
		t.Errorf("bob's MFAStatus = %+v, %v", st, err)
	}
}

// TestAccountSecondFactor enrols, regenerates the recovery codes and
// removes the factor on the account page.
func TestAccountSecondFactor(t *testing.T) {
	p := newProvider(t)
	c, page := p.signedInAccount()
	if got := mfaShown(page.body); got != "off" {
		t.Fatalf("before: %q", got)
	}
	if diff := cmp.Diff([]string{"enroll", "password", "revoke", "signout"}, formSteps(page.body)); diff != "" {
		t.Errorf("the forms without a factor (-want +got):\n%s", diff)
	}

	enrol := p.accountPost(c, page, "enroll", nil)
	m := secretText.FindStringSubmatch(enrol.body)
	if enrol.status != http.StatusOK || m == nil || !strings.Contains(enrol.header.Get("Content-Security-Policy"), "img-src 'self' data:;") {
		t.Fatalf("enrol: %d %q, want the QR code and key:\n%s", enrol.status, enrol.header.Get("Content-Security-Policy"), enrol.body)
	}
	secret := m[1]
	if again := p.accountPost(c, page, "enroll", nil); secretText.FindStringSubmatch(again.body)[1] != secret {
		t.Error("a second Set up shows another key")
	}
	wrongCode := p.submit(c, "/account", enrol, map[string]string{"code": wrong(p.totpCode(secret))})
	if diff := cmp.Diff([]string{"The code is not valid."}, errorsOf(wrongCode.body)); wrongCode.status != http.StatusBadRequest || diff != "" ||
		secretText.FindStringSubmatch(wrongCode.body)[1] != secret {
		t.Errorf("wrong first code: %d (-want +got):\n%s", wrongCode.status, diff)
	}
	confirmed := p.submit(c, "/account", enrol, map[string]string{"code": p.totpCode(secret)})
	first := recoveryCodes(confirmed.body)
	if confirmed.status != http.StatusOK || len(first) != 10 {
		t.Fatalf("confirm: %d, %d codes:\n%s", confirmed.status, len(first), confirmed.body)
	}
	page = p.accountOf(c)
	if got := mfaShown(page.body); got != "10 codes left" {
		t.Errorf("after enrolling: %q", got)
	}
	if diff := cmp.Diff([]string{"recovery", "password", "revoke", "signout"}, formSteps(page.body)); diff != "" {
		t.Errorf("the forms with a factor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"confirm"}, formSteps(enrol.body)); diff != "" {
		t.Errorf("the enrolment's form (-want +got):\n%s", diff)
	}
	if r := p.accountPost(c, page, "enroll", nil); r.status != http.StatusConflict || errorsOf(r.body)[0] != "Two-step verification is on already." {
		t.Errorf("Set up with a factor: %d %v", r.status, errorsOf(r.body))
	}

	for _, bad := range []map[string]string{nil, {"code": "000000"}, {"code": strings.Repeat("1", 100)}} {
		if r := p.accountPost(c, page, "recovery", bad); r.status != http.StatusBadRequest || len(recoveryCodes(r.body)) != 0 {
			t.Errorf("new recovery codes with code %q: %d, %d codes", bad["code"], r.status, len(recoveryCodes(r.body)))
		}
	}
	regenerated := p.accountPost(c, page, "recovery", map[string]string{"code": first[9]})
	second := recoveryCodes(regenerated.body)
	if regenerated.status != http.StatusOK || len(second) != 10 || second[0] == first[0] {
		t.Fatalf("regenerate: %d, codes %v after %v", regenerated.status, second, first)
	}

	tests := []struct {
		name, code string
		status     int
		errors     []string
		shown      string
	}{
		{"no code", "", 400, []string{"Enter the code from your authenticator app."}, "10 codes left"},
		{"a recovery code replaced", first[0], 400, []string{"The code is not valid."}, "10 codes left"},
		{"wrong TOTP code", wrong(p.totpCode(secret)), 400, []string{"The code is not valid."}, "10 codes left"},
		{"a new recovery code", second[5], 302, nil, "off"},
		{"no factor left", second[6], 409, []string{"Two-step verification is not on."}, "off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.accountPost(c, page, "remove", map[string]string{"code": tt.code})
			got := map[string]any{"status": r.status, "errors": errorsOf(r.body), "shown": mfaShown(p.accountOf(c).body)}
			want := map[string]any{"status": tt.status, "errors": tt.errors, "shown": tt.shown}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if r.status == http.StatusFound && r.location() != p.issuer+"/account?done=mfa-off" {
				t.Errorf("Location %q", r.location())
			}
		})
	}
	done := get(t, c, p.issuer+"/account?done=mfa-off")
	if !strings.Contains(done.body, `<p class="notice" role="status">Two-step verification is off`) {
		t.Errorf("no notice after removing:\n%s", done.body)
	}
	if r := p.accountPost(c, page, "recovery", map[string]string{"code": second[7]}); r.status != http.StatusConflict {
		t.Errorf("new recovery codes without a factor: %d", r.status)
	}
}

func TestAccountChangePassword(t *testing.T) {
	p := newProvider(t)
	c, page := p.signedInAccount()
	const newPassword = "difference engine"
	tests := []struct {
		name                      string
		current, password, repeat string
		status                    int
		errors                    []string
	}{
		{"wrong current", "wrong password", newPassword, newPassword, 400, []string{"The current password is not right."}},
		{"repeat differs", adaPassword, newPassword, newPassword + "!", 400, []string{"The new passwords do not match."}},
		{"missing", "", "", "", 400, []string{"Enter your current password.", "Enter a new password.", "Enter the new password again."}},
		{"too long for the form", adaPassword, strings.Repeat("p", 4*4096+1), strings.Repeat("p", 4*4096+1), 400, []string{"This password is too long.", "This password is too long."}},
		{"policy: too short", adaPassword, "short", "short", 400, []string{"The new password must have at least 8 characters."}},
		{"policy: too long", adaPassword, strings.Repeat("p", 1025), strings.Repeat("p", 1025), 400, []string{"The new password must have at most 1024 characters."}},
		{"right", adaPassword, newPassword, newPassword, 302, nil},
		{"old password now wrong", adaPassword, "another password", "another password", 400, []string{"The current password is not right."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.accountPost(c, page, "password", map[string]string{"current": tt.current, "password": tt.password, "repeat": tt.repeat})
			got := map[string]any{"status": r.status, "errors": errorsOf(r.body)}
			want := map[string]any{"status": tt.status, "errors": tt.errors}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := p.ws.Authenticate(t.Context(), "ada", newPassword); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if r := get(t, c, p.issuer+"/account?done=password"); !strings.Contains(r.body, ">Your password was changed.<") {
		t.Errorf("no notice:\n%s", r.body)
	}
	// Still signed in: a change keeps the sessions.
	p.accountOf(c)
}

func TestAccountSessions(t *testing.T) {
	p := newProvider(t)
	other, _ := p.signedInAccount()
	p.clock.Advance(time.Minute)
	c, page := p.signedInAccount()
	bob, err := p.ws.CreateUser(t.Context(), identity.NewUser{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "bob's long password"})
	if err != nil {
		t.Fatal(err)
	}
	created, err := p.ws.CreateSession(t.Context(), bob.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	bobSession := created.Session
	list := sessionsListed(page.body)
	if len(list) != 2 {
		t.Fatalf("the account lists %d sessions, want 2:\n%s", len(list), page.body)
	}
	current, older := list[0].id, list[1].id
	// Newest first: this browser's. Go's HTTP client is no browser the
	// page knows; the sessions started from the test's loopback address.
	want := []listed{
		{current, "Unknown browser", "127.0.0.1", "2026-03-01 12:01 UTC", "just now", true},
		{older, "Unknown browser", "127.0.0.1", "2026-03-01 12:00 UTC", "1 minute ago", false},
	}
	if diff := cmp.Diff(want, list, cmp.AllowUnexported(listed{})); diff != "" {
		t.Errorf("sessions listed (-want +got):\n%s", diff)
	}

	tests := []struct {
		name, id string
		errors   []string
	}{
		{"another user's session", bobSession.ID, []string{"That session was not found."}},
		{"unknown session", "ids_nope", []string{"That session was not found."}},
		{"no session", "", []string{"That session was not found."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.accountPost(c, page, "revoke", map[string]string{"session": tt.id})
			if diff := cmp.Diff(tt.errors, errorsOf(r.body)); r.status != http.StatusBadRequest || diff != "" {
				t.Errorf("%d (-want +got):\n%s", r.status, diff)
			}
		})
	}
	if s, err := p.ws.GetSession(t.Context(), bobSession.ID); err != nil || s.RevokedAt != nil {
		t.Errorf("bob's session = %+v, %v; want it active", s, err)
	}

	r := p.accountPost(c, page, "revoke", map[string]string{"session": older})
	if r.status != http.StatusFound || r.location() != p.issuer+"/account?done=revoked" {
		t.Fatalf("revoke: %d %q", r.status, r.location())
	}
	if got := hiddenFields(p.accountGet(other).body).Get("step"); got != "signin" {
		t.Errorf("the revoked browser's account page: step %q, want the sign-in form", got)
	}
	page = p.accountOf(c)
	if n := len(sessionsListed(page.body)); n != 1 {
		t.Errorf("after revoking: %d sessions listed, want 1", n)
	}

	// Revoking this browser's session signs it out.
	r = p.accountPost(c, page, "revoke", map[string]string{"session": current})
	if r.status != http.StatusFound || r.location() != p.issuer+"/account?done=signed-out" ||
		!strings.Contains(strings.Join(r.header.Values("Set-Cookie"), "\n"), "identity_session=; Path=/t/acme/; Max-Age=0; HttpOnly; SameSite=Lax") {
		t.Errorf("revoke the current session: %d %q %q", r.status, r.location(), r.header.Values("Set-Cookie"))
	}
	out := get(t, c, r.location())
	if hiddenFields(out.body).Get("step") != "signin" || !strings.Contains(out.body, ">You are signed out.<") {
		t.Errorf("after signing out:\n%s", out.body)
	}
	// A form of the old page now asks to sign in again.
	r = p.accountPost(c, page, "recovery", nil)
	if diff := cmp.Diff([]string{"Your session has ended. Sign in again."}, errorsOf(r.body)); r.status != http.StatusForbidden || diff != "" {
		t.Errorf("a form after signing out: %d (-want +got):\n%s", r.status, diff)
	}
}

func TestAccountSignOut(t *testing.T) {
	p := newProvider(t)
	c, page := p.signedInAccount()
	r := p.accountPost(c, page, "signout", nil)
	if r.status != http.StatusFound || r.location() != p.issuer+"/account?done=signed-out" {
		t.Fatalf("sign out: %d %q", r.status, r.location())
	}
	sessions, err := listItems(p.ws.ListSessions(t.Context(), p.ada.ID, nil))
	if err != nil || len(sessions) != 1 || sessions[0].RevokedAt == nil {
		t.Errorf("sessions after signing out: %+v, %v", sessions, err)
	}
	// The next authorization shows the sign-in form.
	p.loginForm(c, p.authorize(c, p.authParams(nil)))
}

// TestAccountCSRF: no form of the account page works without its CSRF
// token, or cross-site.
func TestAccountCSRF(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	form := p.accountSignIn(c, "ada", adaPassword)
	p.submit(c, "/account", form, map[string]string{"code": p.totpCode(secret)})
	page := p.accountOf(c)
	sessions, err := listItems(p.ws.ListSessions(t.Context(), p.ada.ID, nil))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		step   string
		fields map[string]string
	}{
		{"signin", map[string]string{"login": "ada", "password": adaPassword}},
		{"remove", map[string]string{"code": p.totpCode(secret)}},
		{"recovery", nil},
		{"enroll", nil},
		{"confirm", map[string]string{"code": "123456"}},
		{"password", map[string]string{"current": adaPassword, "password": "x" + adaPassword, "repeat": "x" + adaPassword}},
		{"revoke", map[string]string{"session": sessions[0].ID}},
		{"signout", nil},
		{"saved", map[string]string{"saved": "1", "codes": "abcde-fghij"}},
		{"verify-email", nil},
		{"nope", nil},
	}
	attacks := []struct {
		name   string
		client *http.Client
		csrf   string
		header string
	}{
		{"no token", c, "", ""},
		{"wrong token", c, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", ""},
		{"cross-site", c, hiddenFields(page.body).Get("csrf"), "cross-site"},
	}
	for _, s := range steps {
		for _, a := range attacks {
			t.Run(s.step+"/"+a.name, func(t *testing.T) {
				form := map[string][]string{"step": {s.step}, "csrf": {a.csrf}}
				for k, v := range s.fields {
					form[k] = []string{v}
				}
				req, _ := http.NewRequest(http.MethodPost, p.issuer+"/account", strings.NewReader(url.Values(form).Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if a.header != "" {
					req.Header.Set("Sec-Fetch-Site", a.header)
				}
				r := do(t, a.client, req)
				got := map[string]any{"status": r.status, "location": r.location(), "cookies": r.header.Values("Set-Cookie"),
					"message": strings.Contains(r.body, "did not come from this site")}
				want := map[string]any{"status": 403, "location": "", "cookies": []string(nil), "message": true}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
	if got := mfaShown(p.accountOf(c).body); got != "10 codes left" {
		t.Errorf("second factor after the attacks: %q", got)
	}
	if _, err := p.ws.Authenticate(t.Context(), "ada", adaPassword); identity.ErrorCode(err) != identity.CodeMFARequired {
		t.Errorf("the password after the attacks: %v", err)
	}
}
