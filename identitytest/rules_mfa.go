package identitytest

import (
	"regexp"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
)

// enrolTOTP enrols a TOTP factor for the user (code from the pquerna/otp
// library, on the env's clock), moves the clock to the next step (the
// code used is spent) and returns the secret and the recovery codes.
func (e *env) enrolTOTP(userID int64) (string, []string) {
	e.t.Helper()
	en, err := e.ws.BeginTOTPEnrollment(e.ctx, userID)
	if err != nil {
		e.t.Fatalf("BeginTOTPEnrollment: %v", err)
	}
	codes, err := e.ws.ConfirmTOTPEnrollment(e.ctx, userID, e.totpCode(en.Secret))
	if err != nil {
		e.t.Fatalf("ConfirmTOTPEnrollment: %v", err)
	}
	e.clock.Advance(30 * time.Second)
	return en.Secret, codes
}

// totpCode returns the secret's current code.
func (e *env) totpCode(secret string) string {
	e.t.Helper()
	c, err := totp.GenerateCode(secret, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// challenge signs the user in with the suite's password and returns the
// challenge of the second factor it must ask for.
func (e *env) challenge(username string) string {
	e.t.Helper()
	_, err := e.ws.Authenticate(e.ctx, username, "s3cret-passphrase")
	WantCode(e.t, err, identity.CodeMFARequired)
	return err.(*identity.Error).Challenge
}

// testRuleSecondFactor: a TOTP factor and its recovery codes survive the
// store: a sign-in takes a current code once and a recovery code once,
// and ResetMFA clears them, whatever the store.
func testRuleSecondFactor(t *testing.T, e *env) {
	ada := e.user("ada")
	secret, codes := e.enrolTOTP(ada.ID)
	if _, err := e.ws.VerifySecondFactor(e.ctx, e.challenge("ada"), e.totpCode(secret)); err != nil {
		t.Fatalf("a current code: %v", err)
	}
	_, err := e.ws.VerifySecondFactor(e.ctx, e.challenge("ada"), e.totpCode(secret))
	WantCode(t, err, identity.CodeUnauthenticated) // replay
	if _, err := e.ws.VerifySecondFactor(e.ctx, e.challenge("ada"), codes[9]); err != nil {
		t.Fatalf("a recovery code: %v", err)
	}
	_, err = e.ws.VerifySecondFactor(e.ctx, e.challenge("ada"), codes[9])
	WantCode(t, err, identity.CodeUnauthenticated)
	if st, err := e.ws.GetMFAStatus(e.ctx, ada.ID); err != nil || st.RecoveryCodesLeft != 9 || !st.Enabled {
		t.Errorf("MFAStatus = %+v, %v; want enabled with 9 codes left", st, err)
	}
	if err := e.ws.ResetMFA(e.ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	if u, err := e.ws.Authenticate(e.ctx, "ada", "s3cret-passphrase"); err != nil || u.MFAEnabled {
		t.Errorf("after ResetMFA: %+v, %v; want signed in by the password", u, err)
	}
}

// testRuleConcurrentCodeReplay: one TOTP code presented at once for
// several sign-ins completes exactly one of them, whatever the store: the
// step accepted is recorded in the transaction that accepts it.
func testRuleConcurrentCodeReplay(t *testing.T, e *env) {
	ada := e.user("ada")
	secret, _ := e.enrolTOTP(ada.ID)
	challenges := make(chan string, 8)
	for range 8 {
		challenges <- e.challenge("ada")
	}
	code := e.totpCode(secret)
	ok, codes := race(8, func() error {
		_, err := e.ws.VerifySecondFactor(e.ctx, <-challenges, code)
		return err
	})
	if ok != 1 || !allCode(codes, identity.CodeUnauthenticated) {
		t.Fatalf("one code for 8 sign-ins at once: %d succeeded, %v; want 1, the others unauthenticated", ok, codes)
	}
}

// testRuleConcurrentWrongCodes: wrong codes sent at once against a
// threshold are counted exactly threshold times, whatever the store;
// the others are refused for the lock, and so is a right code.
func testRuleConcurrentWrongCodes(t *testing.T, e *env) {
	e.lockAfterThree()
	ada := e.user("ada")
	secret, _ := e.enrolTOTP(ada.ID)
	ch := e.challenge("ada")
	ok, codes := race(12, func() error {
		_, err := e.ws.VerifySecondFactor(e.ctx, ch, "000000")
		return err
	})
	wantThreeCounted(t, "wrong codes", ok, codes)
	_, err := e.ws.VerifySecondFactor(e.ctx, ch, e.totpCode(secret))
	WantCode(t, err, identity.CodeLocked)
}

// resetLink matches the link of a password reset email of the suite.
var resetLink = regexp.MustCompile(`^https://app\.example\.com/reset\?token=(idr_[0-9a-f]{16}_[A-Za-z0-9_-]{43})$`)

// testRulePasswordReset: a reset token, made when its email is sent,
// keeps its purpose in the store: it resets the password once and
// verifies no email, whatever the store.
func testRulePasswordReset(t *testing.T, e *env) {
	e.user("ada")
	err := e.ws.UpdateSettings(e.ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: &identity.SMTPSettings{
		Host: "smtp.example.com", Port: 587, From: "noreply@example.com",
		VerifyURL: "https://app.example.com/verify?token={token}", ResetURL: "https://app.example.com/reset?token={token}",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil); err != nil {
		t.Fatal(err)
	}
	q, err := e.svc.Queue(nil)
	if err != nil {
		t.Fatal(err)
	}
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("Due = %+v, %v; want the reset email", due, err)
	}
	leased, err := q.Lease(e.ctx, "suite", q.Now(), time.Minute, due)
	if err != nil || len(leased.Jobs) != 1 {
		t.Fatalf("Lease = %+v, %v", leased, err)
	}
	att, err := q.Begin(e.ctx, "suite", leased.Jobs[0])
	if err != nil || att.Mail == nil || att.Mail.Kind != identity.MailPasswordReset {
		t.Fatalf("Begin = %+v, %v; want a reset email", att, err)
	}
	m := resetLink.FindStringSubmatch(att.Mail.Link)
	if m == nil {
		t.Fatalf("link %q does not match %s", att.Mail.Link, resetLink)
	}
	_, err = e.ws.ConfirmEmail(e.ctx, "idv_"+m[1][4:])
	WantCode(t, err, identity.CodeTokenInvalid)
	if _, err := e.ws.ResetPassword(e.ctx, m[1], "a brand new passphrase"); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.ResetPassword(e.ctx, m[1], "another new passphrase")
	WantCode(t, err, identity.CodeTokenUsed)
	if _, err := e.ws.Authenticate(e.ctx, "ada", "a brand new passphrase"); err != nil {
		t.Errorf("the new password: %v", err)
	}
}
