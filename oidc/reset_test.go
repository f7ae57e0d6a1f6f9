package oidc_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// withSMTP gives the workspace SMTP settings (never dialed: the tests
// take the emails' links from the queue).
func (p *provider) withSMTP() {
	p.t.Helper()
	p.setPolicy(func(s *identity.Settings) {
		s.SMTP = &identity.SMTPSettings{Host: "smtp.example", Port: 587, From: "id@example.com",
			VerifyURL: "https://app.example/verify?token={token}"}
	})
}

// resetLinks runs the mail jobs due, as a dispatcher would without
// sending, and returns the link of each password reset email by address,
// and the jobs that were dropped.
func (p *provider) resetLinks() (links map[string]string, dropped int) {
	p.t.Helper()
	links = map[string]string{}
	for _, att := range p.queuedAttempts() {
		switch {
		case att.Drop != nil:
			dropped++
		case att.Mail != nil && att.Mail.Kind == identity.MailPasswordReset:
			links[att.Mail.To.Address] = att.Mail.Link
		}
	}
	return links, dropped
}

// requestReset asks for a reset email to the address in a new browser.
func (p *provider) requestReset(email string) reply {
	p.t.Helper()
	c := p.browser()
	form := get(p.t, c, p.issuer+"/reset")
	if form.status != http.StatusOK {
		p.t.Fatalf("reset form: %d\n%s", form.status, form.body)
	}
	return p.submit(c, "/reset", form, map[string]string{"email": email})
}

func TestResetUnavailable(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	page := get(t, c, p.authorize(c, p.authParams(nil)).location())
	if strings.Contains(page.body, "Forgot your password?") {
		t.Error("the sign-in page links to the reset page of a workspace without SMTP")
	}
	r := get(t, c, p.issuer+"/reset")
	if r.status != http.StatusNotFound || titleOf(r.body) != "Password reset is not available" {
		t.Errorf("reset page: %d %q", r.status, titleOf(r.body))
	}
}

func TestResetRequest(t *testing.T) {
	p := newProvider(t)
	p.withSMTP()
	c := p.browser()
	page := get(t, c, p.authorize(c, p.authParams(nil)).location())
	forgot := p.issuer + "/reset?request=" + hiddenFields(page.body).Get("request")
	if !strings.Contains(page.body, `<a href="`+forgot+`">Forgot your password?</a>`) {
		t.Errorf("the sign-in page does not link to the reset page:\n%s", page.body)
	}
	if r := p.accountGet(p.browser()); !strings.Contains(r.body, "Forgot your password?") {
		t.Error("the account's sign-in form does not link to the reset page")
	}

	known := p.requestReset("ada@example.com")
	unknown := p.requestReset("nobody@example.com")
	if known.status != http.StatusOK || titleOf(known.body) != "Check your email" {
		t.Fatalf("known address: %d %q\n%s", known.status, titleOf(known.body), known.body)
	}
	if known.status != unknown.status || known.body != unknown.body {
		t.Errorf("the answers differ: known %d\n%s\nunknown %d\n%s", known.status, known.body, unknown.status, unknown.body)
	}
	jobs, err := listItems(p.ws.ListEmailJobs(t.Context(), nil))
	if err != nil {
		t.Fatal(err)
	}
	var types []identity.EventType
	for _, j := range jobs {
		types = append(types, j.EventType)
	}
	if diff := cmp.Diff([]identity.EventType{identity.PasswordResetJob, identity.PasswordResetJob}, types); diff != "" {
		t.Errorf("email jobs (-want +got):\n%s", diff)
	}
	links, dropped := p.resetLinks()
	if dropped != 1 || !strings.HasPrefix(links["ada@example.com"], p.issuer+"/reset?token=idr_") {
		t.Errorf("links %v, %d dropped; want ada's link to the reset page and the unknown address dropped", links, dropped)
	}

	tests := []struct {
		name, email string
		errors      []string
	}{
		{"malformed", "not an address", []string{"Enter a valid email address, such as name@example.com."}},
		{"empty", " ", []string{"Enter your email address."}},
		{"too long", strings.Repeat("a", 1021) + "@example.com", []string{"Enter a valid email address, such as name@example.com."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.requestReset(tt.email)
			got := map[string]any{"status": r.status, "errors": errorsOf(r.body), "form": strings.Contains(r.body, `name="email"`)}
			want := map[string]any{"status": 400, "errors": tt.errors, "form": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if jobs, _ := listItems(p.ws.ListEmailJobs(t.Context(), nil)); len(jobs) != 2 {
		t.Errorf("%d email jobs after refused requests, want 2", len(jobs))
	}
}

func TestResetPassword(t *testing.T) {
	p := newProvider(t)
	p.withSMTP()
	session := p.sessionOf()
	p.requestReset("ada@example.com")
	links, _ := p.resetLinks()
	link := links["ada@example.com"]
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")

	c := p.browser()
	form := get(t, c, link)
	if form.status != http.StatusOK || hiddenFields(form.body).Get("token") != token || titleOf(form.body) != "Choose a new password" {
		t.Fatalf("new password form: %d\n%s", form.status, form.body)
	}
	const newPassword = "difference engine"
	tests := []struct {
		name, password, repeat string
		status                 int
		errors                 []string
		title                  string
	}{
		{"repeat differs", newPassword, newPassword + "!", 400, []string{"The new passwords do not match."}, "Choose a new password"},
		{"empty", "", "", 400, []string{"Enter a new password.", "Enter the new password again."}, "Choose a new password"},
		{"policy", "short", "short", 400, []string{"The new password must have at least 8 characters."}, "Choose a new password"},
		{"right", newPassword, newPassword, 200, nil, "Password changed"},
		{"link used", "yet another one", "yet another one", 400, nil, "This link no longer works"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.submit(c, "/reset", form, map[string]string{"password": tt.password, "repeat": tt.repeat})
			_, session := cookie(r, "identity_session")
			got := map[string]any{"status": r.status, "errors": errorsOf(r.body), "title": titleOf(r.body), "clearsSession": session}
			want := map[string]any{"status": tt.status, "errors": tt.errors, "title": tt.title, "clearsSession": tt.status == 200}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.body)
			}
		})
	}
	if _, err := p.ws.Authenticate(t.Context(), "ada", newPassword); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if _, err := p.ws.Authenticate(t.Context(), "ada", adaPassword); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Errorf("the old password: %v", err)
	}
	if _, err := p.ws.VerifySession(t.Context(), session); err == nil {
		t.Error("the reset left a session signed in")
	}
}

// TestResetLinkOver: a link that does not work says why.
func TestResetLinkOver(t *testing.T) {
	p := newProvider(t)
	p.withSMTP()
	p.requestReset("ada@example.com")
	links, _ := p.resetLinks()
	expired := links["ada@example.com"]
	p.clock.Advance(identity.PasswordResetTokenLifetime)
	tests := []struct {
		name, query string
		message     string
	}{
		{"expired", strings.TrimPrefix(expired, p.issuer+"/reset?"), "This link has expired."},
		{"garbage", "token=idr_nope", "This link is not valid. Check that you opened the whole link of the email."},
		{"empty", "token=", "This link is not valid. Check that you opened the whole link of the email."},
		{"twice", "token=a&token=b", "This link is not valid. Check that you opened the whole link of the email."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The link's own page says so, before a password is typed.
			r := get(t, p.browser(), p.issuer+"/reset?"+tt.query)
			again := regexp.MustCompile(`<a href="` + regexp.QuoteMeta(p.issuer) + `/reset(\?ui_locales=en)?">Ask for a new link</a>`)
			got := map[string]any{"status": r.status, "title": titleOf(r.body), "message": strings.Contains(r.body, "<p>"+html.EscapeString(tt.message)+"</p>"),
				"link": again.MatchString(r.body)}
			want := map[string]any{"status": 400, "title": "This link no longer works", "message": true, "link": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.body)
			}
		})
	}
}

// TestResetCSRF: neither reset form works without its CSRF token.
func TestResetCSRF(t *testing.T) {
	p := newProvider(t)
	p.withSMTP()
	for _, form := range []url.Values{{"email": {"ada@example.com"}}, {"token": {"idr_x"}, "password": {"p4ssw0rd!"}, "repeat": {"p4ssw0rd!"}}} {
		r := postForm(t, p.browser(), p.issuer+"/reset", form, "", "")
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "did not come from this site") {
			t.Errorf("POST %v: %d", form, r.status)
		}
	}
	if jobs, _ := listItems(p.ws.ListEmailJobs(t.Context(), nil)); len(jobs) != 0 {
		t.Errorf("%d email jobs, want none", len(jobs))
	}
}
