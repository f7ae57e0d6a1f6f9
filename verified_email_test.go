package identity_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// Verified addresses: the administrator's SetEmailVerified, the
// workspace policy that sign-in needs one, the hosted verification link
// and the request's locale in the mail; and a reset that ends a lockout.

// hostedSMTP are testSMTP without a verification URL of their own: the
// hosted page's link.
func hostedSMTP() *identity.SMTPSettings {
	m := testSMTP()
	m.VerifyURL = ""
	return &m
}

// requireVerified sets the SMTP settings and the policy.
func (e *testEnv) requireVerified(m *identity.SMTPSettings) {
	e.t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	s.SMTP, s.RequireVerifiedEmail = m, true
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		e.t.Fatalf("UpdateSettings: %v", err)
	}
}

// mailAttempts sends every due mail job and returns their mails in order.
func (e *testEnv) mailAttempts(q *identity.Queue) []*identity.VerificationMail {
	e.t.Helper()
	var out []*identity.VerificationMail
	for _, job := range e.lease(q, owner) {
		att, err := q.Begin(e.ctx, owner, job)
		if err != nil {
			e.t.Fatalf("Begin: %v", err)
		}
		if att.Mail == nil {
			e.t.Fatalf("job %d dropped: %v", job.ID, att.Drop)
		}
		if _, err := q.Record(e.ctx, owner, job, identity.Result{At: att.At, Status: 250}); err != nil {
			e.t.Fatalf("Record: %v", err)
		}
		out = append(out, att.Mail)
	}
	return out
}

var hostedLinkPattern = regexp.MustCompile(`^https://id\.example\.com/t/acme/verify\?token=(idv_[0-9a-f]{16}_[A-Za-z0-9_-]{43})&request=([0-9a-f]{16})$`)

// TestRequireVerifiedEmail: under the policy, the right password of an
// unverified user is CodeEmailUnverified and queues one verification
// mail (not one per attempt) whose link is the hosted page's, naming the
// authorization request, in the language of the request; a wrong
// password is the usual refusal; once confirmed, the sign-in goes
// through and the ID token says email_verified.
func TestRequireVerifiedEmail(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.requireVerified(hostedSMTP())
	q := e.queue(nil)
	p := e.ws.Provider()
	a := e.authorize(e.webRequest(), "")

	_, err := p.SignIn(e.ctx, a.RequestID, "ada", "wrong password")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	ctx := identity.WithRequestInfo(e.ctx, identity.RequestInfo{Locale: "de"})
	_, err = p.SignIn(ctx, a.RequestID, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeEmailUnverified)
	_, err = p.SignIn(ctx, a.RequestID, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeEmailUnverified)
	_, err = e.ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeEmailUnverified)

	mails := e.mailAttempts(q)
	if len(mails) != 1 {
		t.Fatalf("%d mails, want 1", len(mails))
	}
	m := hostedLinkPattern.FindStringSubmatch(mails[0].Link)
	if m == nil {
		t.Fatalf("link %q does not match %s", mails[0].Link, hostedLinkPattern)
	}
	if m[2] != a.RequestID {
		t.Errorf("link names request %q, want %q", m[2], a.RequestID)
	}
	if mails[0].Kind != identity.MailVerifyEmail || mails[0].Locale != "de" {
		t.Errorf("mail kind %q locale %q, want %q %q", mails[0].Kind, mails[0].Locale, identity.MailVerifyEmail, "de")
	}

	if _, err := e.ws.ConfirmEmail(e.ctx, m[1]); err != nil {
		t.Fatalf("ConfirmEmail: %v", err)
	}
	signIn, err := p.SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	if err != nil {
		t.Fatalf("SignIn after confirming: %v", err)
	}
	tok, err := p.ExchangeCode(e.ctx, e.web, signIn.Authorization.Code, webRedirect, pkceVerifier)
	if err != nil {
		t.Fatal(err)
	}
	_, claims := jwtParts(t, tok.IDToken)
	if claims["email_verified"] != true {
		t.Errorf("email_verified = %v, want true", claims["email_verified"])
	}
}

// TestRequireVerifiedEmailOff: by default an unverified user signs in.
func TestRequireVerifiedEmailOff(t *testing.T) {
	e := newTestEnv(t, nil)
	m := testSMTP()
	e.setSMTP(&m)
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
}

// TestVerifyURLNeededWithoutIssuer: without IssuerBase there is no
// hosted page, so a workspace's SMTP settings need their own link.
func TestVerifyURLNeededWithoutIssuer(t *testing.T) {
	e := newTestEnv(t, nil)
	err := e.ws.UpdateSettings(e.ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: hostedSMTP()})
	identitytest.WantFields(t, err, field("smtp.verifyUrl", identity.RuleRequired))
	o := newOIDCEnv(t, nil)
	if err := o.ws.UpdateSettings(o.ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: hostedSMTP()}); err != nil {
		t.Errorf("with an issuer: %v", err)
	}
}

// TestRequireVerifiedEmailWithoutMail: a workspace that cannot send mail
// still refuses the unverified user, and says whom to ask.
func TestRequireVerifiedEmailWithoutMail(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.requireVerified(nil)
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeEmailUnverified)
	want := "the email address is not verified, and no verification email can be sent: ask an administrator"
	if got := err.(*identity.Error).Message; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if jobs, _ := listItems(e.ws.ListEmailJobs(e.ctx, nil)); len(jobs) != 0 {
		t.Errorf("%d mail jobs, want none", len(jobs))
	}
}

// TestSetEmailVerified: the administrator marks an address verified or
// not; user.updated only on a change.
func TestSetEmailVerified(t *testing.T) {
	e := newTestEnv(t, nil)
	hook := e.hook(identity.EventUserUpdated)
	u, err := e.ws.SetEmailVerified(e.ctx, e.ada.ID, true)
	if err != nil || !u.EmailVerified {
		t.Fatalf("SetEmailVerified(true) = %+v, %v", u, err)
	}
	if u.Version == e.ada.Version {
		t.Errorf("version %d unchanged", u.Version)
	}
	if _, err := e.ws.SetEmailVerified(e.ctx, e.ada.ID, true); err != nil {
		t.Fatal(err)
	}
	u, err = e.ws.SetEmailVerified(e.ctx, e.ada.ID, false)
	if err != nil || u.EmailVerified {
		t.Fatalf("SetEmailVerified(false) = %+v, %v", u, err)
	}
	got, err := e.ws.GetUser(e.ctx, e.ada.ID)
	if err != nil || got.EmailVerified {
		t.Errorf("GetUser = %+v, %v: want unverified", got, err)
	}
	var verified []bool
	for _, p := range e.payloads(hook) {
		var ev struct{ Data struct{ EmailVerified bool } }
		if err := json.Unmarshal([]byte(p), &ev); err != nil {
			t.Fatal(err)
		}
		verified = append(verified, ev.Data.EmailVerified)
	}
	if diff := cmp.Diff([]bool{true, false}, verified); diff != "" {
		t.Errorf("user.updated events' emailVerified (-want +got):\n%s", diff)
	}

	_, err = e.ws.SetEmailVerified(e.ctx, 999, true)
	identitytest.WantCode(t, err, identity.CodeNotFound)
}

// TestResetPasswordEndsLockout: the mailbox proved control, so a reset
// through the link unlocks the account and the new password works at
// once, with user.unlocked by password_reset.
func TestResetPasswordEndsLockout(t *testing.T) {
	e := newLockoutEnv(t)
	e.setSMTP(resetSMTP())
	setLockout(t, e.testEnv, identity.LockoutPolicy{Threshold: 5, Duration: 10 * time.Minute})
	q := e.queue(nil)
	for range 5 {
		_, err := e.ws.Authenticate(e.ctx, "ada", "wrong")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeLocked)

	token := e.resetToken(q)
	if _, err := e.ws.ResetPassword(e.ctx, token, "a brand new passphrase"); err != nil {
		t.Fatalf("ResetPassword: %v", err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", "a brand new passphrase"); err != nil {
		t.Errorf("Authenticate after the reset: %v", err)
	}
	evs := e.events()
	if got, want := evs[len(evs)-1], "user.unlocked password_reset"; got != want {
		t.Errorf("last event %q, want %q (all: %q)", got, want, evs)
	}
}

// TestResetPasswordRestartsTheCount: a reset restarts the count of
// failures of an account that was not locked yet.
func TestResetPasswordRestartsTheCount(t *testing.T) {
	e := newLockoutEnv(t)
	e.setSMTP(resetSMTP())
	setLockout(t, e.testEnv, identity.LockoutPolicy{Threshold: 5, Duration: 10 * time.Minute})
	q := e.queue(nil)
	wrong := func(n int) {
		t.Helper()
		for range n {
			_, err := e.ws.Authenticate(e.ctx, "ada", "wrong")
			identitytest.WantCode(t, err, identity.CodeUnauthenticated)
		}
	}
	wrong(4)
	if _, err := e.ws.ResetPassword(e.ctx, e.resetToken(q), "a brand new passphrase"); err != nil {
		t.Fatalf("ResetPassword: %v", err)
	}
	wrong(4)
	_, err := e.ws.Authenticate(e.ctx, "ada", "a brand new passphrase")
	if err != nil {
		t.Errorf("after 4 failures since the reset: %v, want a sign-in", err)
	}
}
