package identity_test

import (
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// Password reset through the mail queue, and ChangePassword, on the fake
// clock.

var resetLinkPattern = regexp.MustCompile(`^https://app\.example\.com/reset\?token=(idr_[0-9a-f]{16}_[A-Za-z0-9_-]{43})$`)

// resetSMTP are testSMTP with a reset link.
func resetSMTP() *identity.SMTPSettings {
	m := testSMTP()
	m.ResetURL = "https://app.example.com/reset?token={token}"
	return &m
}

// sendReset sends the mail job with the id and returns its attempt.
func (e *testEnv) sendReset(q *identity.Queue, id int64) identity.Attempt {
	e.t.Helper()
	job := e.leaseOne(q, id)
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil {
		e.t.Fatalf("Begin: %v", err)
	}
	res := identity.Result{At: att.At, Status: 250}
	if att.Drop != nil {
		res = identity.Result{At: att.At, Err: att.Drop, Permanent: true}
	}
	if _, err := q.Record(e.ctx, owner, job, res); err != nil {
		e.t.Fatalf("Record: %v", err)
	}
	return att
}

// resetToken requests a reset for ada and returns the token of its email.
func (e *testEnv) resetToken(q *identity.Queue) string {
	e.t.Helper()
	if err := e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil); err != nil {
		e.t.Fatal(err)
	}
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil {
		e.t.Fatal(err)
	}
	att := e.sendReset(q, jobs[len(jobs)-1].ID)
	if att.Mail == nil {
		e.t.Fatalf("reset email dropped: %v", att.Drop)
	}
	m := resetLinkPattern.FindStringSubmatch(att.Mail.Link)
	if m == nil {
		e.t.Fatalf("link %q does not match %s", att.Mail.Link, resetLinkPattern)
	}
	return m[1]
}

// TestRequestPasswordReset: a known and an unknown address get the same
// answer and the same job; the known one's email holds a reset link valid
// an hour, the unknown one fails unsent; refusals depend on the input and
// the workspace only.
func TestRequestPasswordReset(t *testing.T) {
	e := newTestEnv(t, nil)
	identitytest.WantCode(t, e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil), identity.CodeConflict) // no SMTP
	e.setSMTP(new(testSMTP()))
	identitytest.WantCode(t, e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil), identity.CodeConflict) // no link
	e.setSMTP(resetSMTP())
	q := e.queue(nil)

	if err := e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.RequestPasswordReset(e.ctx, "nobody@example.com", nil); err != nil {
		t.Fatal(err)
	}
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	want := []identity.Delivery{
		{ID: 1, EventID: jobs[0].EventID, EventType: "email.password_reset", Status: "pending", NextAttemptAt: now, CreatedAt: now},
		{ID: 2, EventID: jobs[1].EventID, EventType: "email.password_reset", Status: "pending", NextAttemptAt: now, CreatedAt: now},
	}
	if diff := cmp.Diff(want, jobs); diff != "" {
		t.Errorf("EmailJobs (-want +got):\n%s", diff)
	}

	att := e.sendReset(q, 1)
	server := *resetSMTP()
	server.TLS = "starttls"
	wantAtt := identity.Attempt{At: q.Now(), Mail: &identity.VerificationMail{Kind: identity.MailPasswordReset,
		Server: server, From: mail.Address{Name: "Acme", Address: "noreply@example.com"},
		To: mail.Address{Name: "Ada Lovelace", Address: "ada@example.com"}, Link: att.Mail.Link,
		Lifetime: time.Hour, Date: q.Now(), Workspace: "acme", Accent: "#1d5fc9",
	}}
	if diff := cmp.Diff(wantAtt, att); diff != "" {
		t.Errorf("attempt (-want +got):\n%s", diff)
	}
	if !resetLinkPattern.MatchString(att.Mail.Link) {
		t.Errorf("link %q does not match %s", att.Mail.Link, resetLinkPattern)
	}
	unknown := e.sendReset(q, 2)
	if unknown.Mail != nil || unknown.Drop == nil || unknown.Drop.Error() != "no enabled user has this address" {
		t.Errorf("the unknown address's attempt = %+v, want dropped", unknown)
	}

	// A link of the caller's own, instead of the workspace's, once the
	// mail interval since the first request to the address is over.
	e.clock.Advance(5 * time.Minute)
	err = e.ws.RequestPasswordReset(e.ctx, "ada@example.com", &identity.PasswordResetOptions{Link: "https://login.example.com/t/acme/reset?token={token}"})
	if err != nil {
		t.Fatal(err)
	}
	if att := e.sendReset(q, 3); att.Mail == nil || att.Mail.Link[:44] != "https://login.example.com/t/acme/reset?token" {
		t.Errorf("with a link of its own: %+v", att.Mail)
	}

	refusals := []struct {
		name, email string
		opts        *identity.PasswordResetOptions
		want        []identity.FieldError
	}{
		{"not an address", "ada", nil, field("email", identity.RuleFormat)},
		{"a name and an address", "Ada <ada@example.com>", nil, field("email", identity.RuleFormat)},
		{"empty", "", nil, field("email", identity.RuleRequired)},
		{"a link without {token}", "ada@example.com", &identity.PasswordResetOptions{Link: "https://a.example.com/reset"}, field("link", identity.RuleFormat)},
		{"a plain http link", "ada@example.com", &identity.PasswordResetOptions{Link: "http://a.example.com/reset?t={token}"}, field("link", identity.RuleLoopbackOnly)},
	}
	for _, r := range refusals {
		err := e.ws.RequestPasswordReset(e.ctx, r.email, r.opts)
		identitytest.WantFields(t, err, r.want)
	}
	if jobs, _ := listItems(e.ws.ListEmailJobs(e.ctx, nil)); len(jobs) != 3 {
		t.Errorf("%d jobs after the refusals, want 3", len(jobs))
	}
}

// TestResetPassword: the token sets a password the policy accepts, once,
// within the hour; it revokes the user's sessions and emits
// user.password.changed.
func TestResetPassword(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(resetSMTP())
	q := e.queue(nil)
	hook := e.hook(identity.EventUserPasswordChanged, identity.EventSessionRevoked)
	created, err := e.ws.Login(e.ctx, "ada", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	session := created.Session
	token := e.resetToken(q)

	_, err = e.ws.ResetPassword(e.ctx, token, "short")
	identitytest.WantFields(t, err, field("password", identity.RulePasswordMinLength))
	e.clock.Advance(time.Hour - time.Microsecond)
	if err := e.ws.CheckPasswordResetToken(e.ctx, token); err != nil {
		t.Errorf("CheckPasswordResetToken of a usable token: %v", err)
	}
	u, err := e.ws.ResetPassword(e.ctx, token, "a brand new password")
	if err != nil || u.ID != e.ada.ID {
		t.Fatalf("ResetPassword = %+v, %v", u, err)
	}
	_, err = e.ws.ResetPassword(e.ctx, token, "another new password")
	identitytest.WantCode(t, err, identity.CodeTokenUsed)
	identitytest.WantCode(t, e.ws.CheckPasswordResetToken(e.ctx, token), identity.CodeTokenUsed)
	_, err = e.ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := e.ws.Authenticate(e.ctx, "ada", "a brand new password"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if s, _ := e.ws.GetSession(e.ctx, session.ID); s.RevokedAt == nil {
		t.Error("the session outlived the reset")
	}
	want := []string{
		`{"type":"session.revoked","data":{"sessionId":"` + session.ID + `","userId":1,"reason":"password_reset"}}`,
		`{"type":"user.password.changed","data":{"userId":1}}`,
	}
	if diff := cmp.Diff(want, eventsOf(t, e, hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	expired := e.resetToken(q)
	e.clock.Advance(time.Hour)
	_, err = e.ws.ResetPassword(e.ctx, expired, "a brand new password 2")
	identitytest.WantCode(t, err, identity.CodeTokenExpired)
	identitytest.WantCode(t, e.ws.CheckPasswordResetToken(e.ctx, expired), identity.CodeTokenExpired)

	changed := e.resetToken(q)
	if _, err := e.ws.UpdateUser(e.ctx, e.ada.ID, identity.UserUpdate{Email: "countess@example.com", FullName: "Ada Lovelace"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.ResetPassword(e.ctx, changed, "a brand new password 3")
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)

	for _, bad := range []string{"", "idr_", "idv_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "idr_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		_, err := e.ws.ResetPassword(e.ctx, bad, "a brand new password 4")
		identitytest.WantCode(t, err, identity.CodeTokenInvalid)
		identitytest.WantCode(t, e.ws.CheckPasswordResetToken(e.ctx, bad), identity.CodeTokenInvalid)
	}
}

// TestSingleUseTokensHaveOneKind: a verification link's token, a reset
// link's token and a second-factor challenge each work for their own step
// only, even when the prefix is changed to another kind's.
func TestSingleUseTokensHaveOneKind(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(resetSMTP())
	q := e.queue(nil)
	bob := e.user("bob") // queues job 1, bob's verification email
	verify := e.sendMail(q, 1)
	if err := e.ws.RequestPasswordReset(e.ctx, bob.Email, nil); err != nil {
		t.Fatal(err)
	}
	att := e.sendReset(q, 2)
	reset := resetLinkPattern.FindStringSubmatch(att.Mail.Link)[1]
	e.enrol(e.ada.ID)
	challenge := e.challenge(identity.CodeMFARequired)

	// Each kind's step, given a token of another kind under its prefix.
	steps := map[string]func(token string) error{
		"idv_": func(token string) error { _, err := e.ws.ConfirmEmail(e.ctx, token); return err },
		"idr_": func(token string) error { return e.ws.CheckPasswordResetToken(e.ctx, token) },
		"idc_": func(token string) error {
			_, err := e.ws.VerifySecondFactor(e.ctx, token, "000000")
			return err
		},
	}
	tokens := []string{verify, reset, challenge}
	for _, token := range tokens {
		for prefix, step := range steps {
			if strings.HasPrefix(token, prefix) {
				continue
			}
			identitytest.WantCode(t, step(prefix+token[4:]), identity.CodeTokenInvalid)
		}
	}
	if _, err := e.ws.ConfirmEmail(e.ctx, verify); err != nil {
		t.Errorf("the verification token itself: %v", err)
	}
	if _, err := e.ws.ResetPassword(e.ctx, reset, "a brand new password"); err != nil {
		t.Errorf("the reset token itself: %v", err)
	}
	// Ada's challenge itself, with a wrong code: refused for the code, not
	// for the challenge.
	_, err := e.ws.VerifySecondFactor(e.ctx, challenge, "000000")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
}

// TestChangePassword: the current password is needed and a wrong one
// counts toward the lockout; the policy is checked first, at no attempt's
// cost.
func TestChangePassword(t *testing.T) {
	e := newLockoutEnv(t)
	err := e.ws.ChangePassword(e.ctx, e.ada.ID, adaPassword, "short")
	identitytest.WantFields(t, err, field("password", identity.RulePasswordMinLength))
	identitytest.WantCode(t, e.ws.ChangePassword(e.ctx, e.ada.ID, "wrong", "a brand new password"), identity.CodeUnauthenticated)
	if diff := cmp.Diff([]string{"login.failed wrong_password"}, e.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if err := e.ws.ChangePassword(e.ctx, e.ada.ID, adaPassword, "a brand new password"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", "a brand new password"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	// Four more wrong ones lock: the right one above reset the count.
	for range 5 {
		identitytest.WantCode(t, e.ws.ChangePassword(e.ctx, e.ada.ID, "wrong", "another new password"), identity.CodeUnauthenticated)
	}
	wantLocked(t, e.ws.ChangePassword(e.ctx, e.ada.ID, "a brand new password", "another new password"), e.clock.Now().Add(10*time.Minute))
	identitytest.WantCode(t, e.ws.ChangePassword(e.ctx, 99, "x", "a brand new password"), identity.CodeNotFound)
}
