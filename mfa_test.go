package identity_test

import (
	"bytes"
	"encoding/base32"
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// TOTP second factors, on the fake clock: enrolment, sign-in with a code
// or a recovery code, replay, the lockout, MFARequired, removal and the
// administrator's reset.

// code returns the TOTP code of secret at the env's clock plus offset,
// computed by the pquerna/otp library rather than by the code under test.
func (e *testEnv) code(secret string, offset time.Duration) string {
	e.t.Helper()
	c, err := totp.GenerateCode(secret, e.clock.Now().Add(offset))
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// enrol enrols a TOTP factor for the user and returns its secret and
// recovery codes.
func (e *testEnv) enrol(userID int64) (string, []string) {
	e.t.Helper()
	en, err := e.ws.BeginTOTPEnrollment(e.ctx, userID)
	if err != nil {
		e.t.Fatalf("BeginTOTPEnrollment: %v", err)
	}
	codes, err := e.ws.ConfirmTOTPEnrollment(e.ctx, userID, e.code(en.Secret, 0))
	if err != nil {
		e.t.Fatalf("ConfirmTOTPEnrollment: %v", err)
	}
	// The code just used is spent: move to the next step.
	e.clock.Advance(30 * time.Second)
	return en.Secret, codes
}

// challenge signs ada in with her password and returns the challenge of
// the error, which must have the code.
func (e *testEnv) challenge(code identity.Code) string {
	e.t.Helper()
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(e.t, err, code)
	return err.(*identity.Error).Challenge
}

var (
	secretPattern       = regexp.MustCompile(`^[A-Z2-7]{32}$`)
	recoveryCodePattern = regexp.MustCompile(`^[a-z2-7]{5}-[a-z2-7]{5}$`)
	challengePattern    = regexp.MustCompile(`^idc_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`)
)

// TestTOTPEnrollment: the enrolment's secret, URI and QR code; the same
// secret while it waits, a new one after PendingEnrollmentLifetime; a
// wrong code changes nothing; the right one turns MFA on, emits
// user.mfa.enrolled and gives ten recovery codes.
func TestTOTPEnrollment(t *testing.T) {
	e := newTestEnv(t, nil)
	hook := e.hook(identity.EventUserMFAEnrolled)
	en, err := e.ws.BeginTOTPEnrollment(e.ctx, e.ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !secretPattern.MatchString(en.Secret) {
		t.Errorf("secret %q: want 32 base32 characters (160 bits)", en.Secret)
	}
	wantURI := "otpauth://totp/acme:ada?algorithm=SHA1&digits=6&issuer=acme&period=30&secret=" + en.Secret
	if en.URI != wantURI {
		t.Errorf("URI = %q, want %q", en.URI, wantURI)
	}
	if st, _ := e.ws.GetMFAStatus(e.ctx, e.ada.ID); st != (identity.MFAStatus{Pending: true}) {
		t.Errorf("MFAStatus while pending = %+v", st)
	}

	e.clock.Advance(identity.PendingEnrollmentLifetime - time.Microsecond)
	again, err := e.ws.BeginTOTPEnrollment(e.ctx, e.ada.ID)
	if err != nil || again.Secret != en.Secret {
		t.Errorf("BeginTOTPEnrollment within the hour: %q, %v; want the same secret %q", again.Secret, err, en.Secret)
	}
	e.clock.Advance(time.Microsecond)
	_, err = e.ws.ConfirmTOTPEnrollment(e.ctx, e.ada.ID, e.code(en.Secret, 0))
	identitytest.WantCode(t, err, identity.CodeConflict) // expired
	fresh, err := e.ws.BeginTOTPEnrollment(e.ctx, e.ada.ID)
	if err != nil || fresh.Secret == en.Secret {
		t.Fatalf("BeginTOTPEnrollment after the hour: %q, %v; want a new secret", fresh.Secret, err)
	}

	_, err = e.ws.ConfirmTOTPEnrollment(e.ctx, e.ada.ID, e.code(fresh.Secret, time.Minute))
	identitytest.WantFields(t, err, field("code", identity.RuleFormat))
	if u, _ := e.ws.GetUser(e.ctx, e.ada.ID); u.MFAEnabled {
		t.Error("a wrong code turned MFA on")
	}
	enrolledAt := e.clock.Now()
	codes, err := e.ws.ConfirmTOTPEnrollment(e.ctx, e.ada.ID, e.code(fresh.Secret, 0))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !recoveryCodePattern.MatchString(c) || seen[c] {
			t.Errorf("recovery code %q: want xxxxx-xxxxx, each once", c)
		}
		seen[c] = true
	}
	if len(codes) != 10 {
		t.Errorf("%d recovery codes, want 10", len(codes))
	}
	if u, _ := e.ws.GetUser(e.ctx, e.ada.ID); !u.MFAEnabled {
		t.Error("MFAEnabled false after the enrolment")
	}
	want := identity.MFAStatus{Enabled: true, EnrolledAt: enrolledAt, RecoveryCodesLeft: 10}
	if st, err := e.ws.GetMFAStatus(e.ctx, e.ada.ID); err != nil || st != want {
		t.Errorf("MFAStatus = %+v, %v; want %+v", st, err, want)
	}
	if diff := cmp.Diff([]string{`{"type":"user.mfa.enrolled","data":{"userId":1}}`}, eventsOf(t, e, hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	_, err = e.ws.BeginTOTPEnrollment(e.ctx, e.ada.ID)
	identitytest.WantCode(t, err, identity.CodeConflict)
	_, err = e.ws.ConfirmTOTPEnrollment(e.ctx, e.ada.ID, e.code(fresh.Secret, 0))
	identitytest.WantCode(t, err, identity.CodeConflict)
	_, err = e.ws.BeginTOTPEnrollment(e.ctx, 99)
	identitytest.WantCode(t, err, identity.CodeNotFound)
}

// eventsOf returns the endpoint's deliveries as {"type","data"} JSON.
func eventsOf(t *testing.T, e *testEnv, hook int64) []string {
	t.Helper()
	var out []string
	for _, p := range e.payloads(hook) {
		out = append(out, typeAndData(t, p))
	}
	return out
}

// TestSignInWithTOTP: the password alone gives a challenge, not the
// user; a current code completes the sign-in and uses the challenge up;
// a code of the step before or after is accepted, two steps off is not;
// a code whose step was accepted already is refused (replay).
func TestSignInWithTOTP(t *testing.T) {
	e := newTestEnv(t, nil)
	secret, _ := e.enrol(e.ada.ID)

	ch := e.challenge(identity.CodeMFARequired)
	if !challengePattern.MatchString(ch) {
		t.Errorf("challenge %q", ch)
	}
	_, err := e.ws.Login(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeMFARequired)

	verified, err := e.ws.VerifySecondFactor(e.ctx, ch, e.code(secret, 0))
	u, codes := verified.User, verified.RecoveryCodes
	if err != nil || u.ID != e.ada.ID || !u.MFAEnabled || codes != nil {
		t.Fatalf("VerifySecondFactor = %+v, %v, %v", u, codes, err)
	}
	_, err = e.ws.VerifySecondFactor(e.ctx, ch, e.code(secret, 30*time.Second))
	identitytest.WantCode(t, err, identity.CodeTokenUsed)

	steps := []struct {
		name   string
		offset time.Duration
		want   identity.Code
	}{
		{"the step accepted already (replay)", 0, identity.CodeUnauthenticated},
		{"the step before it (older than the last accepted)", -30 * time.Second, identity.CodeUnauthenticated},
		{"two steps ahead", 60 * time.Second, identity.CodeUnauthenticated},
		{"one step ahead", 30 * time.Second, ""},
	}
	for _, s := range steps {
		_, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), e.code(secret, s.offset))
		if identity.ErrorCode(err) != s.want {
			t.Errorf("%s: %v, want %q", s.name, err, s.want)
		}
	}
	// Two steps on, the step behind the current one is newer than the
	// last accepted (one ahead of the old current) only if it is later.
	e.clock.Advance(90 * time.Second)
	if _, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), e.code(secret, -30*time.Second)); err != nil {
		t.Errorf("a code of the step before the current one: %v", err)
	}

	e.clock.Advance(identity.MFAChallengeLifetime)
	old := e.challenge(identity.CodeMFARequired)
	e.clock.Advance(identity.MFAChallengeLifetime)
	_, err = e.ws.VerifySecondFactor(e.ctx, old, e.code(secret, 0))
	identitytest.WantCode(t, err, identity.CodeTokenExpired)
	_, err = e.ws.VerifySecondFactor(e.ctx, "idc_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", e.code(secret, 0))
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	_, err = e.ws.VerifySecondFactor(e.ctx, "garbage", e.code(secret, 0))
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)

	ch = e.challenge(identity.CodeMFARequired)
	if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.VerifySecondFactor(e.ctx, ch, e.code(secret, 0))
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
}

// TestRecoveryCodeSignIn: a recovery code completes a sign-in once,
// however it is typed; then it is refused, and the count drops.
func TestRecoveryCodeSignIn(t *testing.T) {
	e := newTestEnv(t, nil)
	_, codes := e.enrol(e.ada.ID)
	if _, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), codes[3]); err != nil {
		t.Fatalf("a recovery code: %v", err)
	}
	_, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), codes[3])
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	typed := bytes.ToUpper([]byte(codes[4][:5] + " " + codes[4][6:]))
	if _, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), string(typed)); err != nil {
		t.Errorf("a recovery code in capitals with a space: %v", err)
	}
	if st, _ := e.ws.GetMFAStatus(e.ctx, e.ada.ID); st.RecoveryCodesLeft != 8 {
		t.Errorf("RecoveryCodesLeft = %d, want 8", st.RecoveryCodesLeft)
	}

	_, err = e.ws.RegenerateRecoveryCodes(e.ctx, e.ada.ID, "000000")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	_, err = e.ws.RegenerateRecoveryCodes(e.ctx, e.ada.ID, codes[3]) // used already
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	fresh, err := e.ws.RegenerateRecoveryCodes(e.ctx, e.ada.ID, codes[6])
	if err != nil || len(fresh) != 10 {
		t.Fatalf("RegenerateRecoveryCodes = %v, %v", fresh, err)
	}
	if st, _ := e.ws.GetMFAStatus(e.ctx, e.ada.ID); st.RecoveryCodesLeft != 10 {
		t.Errorf("RecoveryCodesLeft after regenerating = %d, want 10", st.RecoveryCodesLeft)
	}
	_, err = e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), codes[5])
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), fresh[5]); err != nil {
		t.Errorf("a regenerated code: %v", err)
	}
	bob := e.user("bob")
	_, err = e.ws.RegenerateRecoveryCodes(e.ctx, bob.ID, "000000")
	identitytest.WantCode(t, err, identity.CodeConflict)
}

// TestWrongCodesLock: wrong codes count toward the lockout like wrong
// passwords; a right password in between does not reset the count (only
// a right code does), so the fifth wrong code locks; then even a right
// code is refused.
func TestWrongCodesLock(t *testing.T) {
	e := newLockoutEnv(t)
	secret, _ := e.enrol(e.ada.ID)
	for range 3 {
		_, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), "000000")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	ch := e.challenge(identity.CodeMFARequired) // a right password: no reset
	_, err := e.ws.VerifySecondFactor(e.ctx, ch, "000001")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	_, err = e.ws.VerifySecondFactor(e.ctx, ch, "000002")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	until := e.clock.Now().Add(10 * time.Minute)
	_, err = e.ws.VerifySecondFactor(e.ctx, ch, e.code(secret, 0))
	wantLocked(t, err, until)
	want := []string{
		"login.failed wrong_code", "login.failed wrong_code", "login.failed wrong_code",
		"login.failed wrong_code", "user.locked " + until.Format(time.RFC3339Nano), "login.failed wrong_code",
		"login.failed locked",
	}
	if diff := cmp.Diff(want, e.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A right code resets the count.
	if err := e.ws.UnlockUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		_, err := e.ws.VerifySecondFactor(e.ctx, ch, "000000")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	if _, err := e.ws.VerifySecondFactor(e.ctx, ch, e.code(secret, 0)); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		_, err := e.ws.VerifySecondFactor(e.ctx, e.challenge(identity.CodeMFARequired), "000000")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
}

// TestMFARequired: under MFARequired a user without a factor is taken
// through enrolment by the sign-in's challenge, which the enrolment's
// first code completes (with the recovery codes); the next sign-in asks
// for a code.
func TestMFARequired(t *testing.T) {
	e := newTestEnv(t, nil)
	set, _ := e.ws.GetSettings(e.ctx)
	set.MFA = identity.MFARequired
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	ch := e.challenge(identity.CodeMFAEnrollmentRequired)
	_, err := e.ws.VerifySecondFactor(e.ctx, ch, "123456")
	identitytest.WantCode(t, err, identity.CodeConflict) // nothing to confirm yet
	en, err := e.ws.BeginChallengeEnrollment(e.ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.VerifySecondFactor(e.ctx, ch, e.code(en.Secret, time.Minute))
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	verified, err := e.ws.VerifySecondFactor(e.ctx, ch, e.code(en.Secret, 0))
	u, codes := verified.User, verified.RecoveryCodes
	if err != nil || !u.MFAEnabled || len(codes) != 10 {
		t.Fatalf("VerifySecondFactor = %+v, %d codes, %v", u, len(codes), err)
	}
	_, err = e.ws.BeginChallengeEnrollment(e.ctx, ch)
	identitytest.WantCode(t, err, identity.CodeTokenUsed)
	e.clock.Advance(30 * time.Second)
	ch = e.challenge(identity.CodeMFARequired)
	_, err = e.ws.BeginChallengeEnrollment(e.ctx, ch)
	identitytest.WantCode(t, err, identity.CodeConflict)
	if _, err := e.ws.VerifySecondFactor(e.ctx, ch, e.code(en.Secret, 0)); err != nil {
		t.Fatal(err)
	}

	set.MFA = "sometimes"
	identitytest.WantFields(t, e.ws.UpdateSettings(e.ctx, set), field("mfa", identity.RuleUnknown))
	// Under MFAOptional a user with mfaEnabled but no factor (imported so)
	// enrols too.
	set.MFA = identity.MFAOptional
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "bob", "correct horse battery"); !errors.Is(err, &identity.Error{Code: identity.CodeUnauthenticated}) {
		t.Fatalf("unknown bob: %v", err)
	}
	e.user("bob")
	if _, err := e.ws.Authenticate(e.ctx, "bob", "correct horse battery"); err != nil {
		t.Errorf("bob without MFA under MFAOptional: %v", err)
	}
}

// TestRemoveAndResetMFA: the user removes the factor with a code (a wrong
// one counts as a failure); the administrator's ResetMFA clears it
// without one; either way the password alone signs in again.
func TestRemoveAndResetMFA(t *testing.T) {
	e := newLockoutEnv(t)
	hook := e.hook(identity.EventUserMFARemoved, identity.EventUserMFAReset)
	secret, _ := e.enrol(e.ada.ID)
	identitytest.WantCode(t, e.ws.RemoveSecondFactor(e.ctx, e.ada.ID, "000000"), identity.CodeUnauthenticated)
	if err := e.ws.RemoveSecondFactor(e.ctx, e.ada.ID, e.code(secret, 0)); err != nil {
		t.Fatal(err)
	}
	if u, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil || u.MFAEnabled {
		t.Errorf("after removal: %+v, %v", u, err)
	}
	identitytest.WantCode(t, e.ws.RemoveSecondFactor(e.ctx, e.ada.ID, e.code(secret, 0)), identity.CodeConflict)

	e.enrol(e.ada.ID)
	if err := e.ws.ResetMFA(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.ws.GetMFAStatus(e.ctx, e.ada.ID); st != (identity.MFAStatus{}) {
		t.Errorf("MFAStatus after reset = %+v", st)
	}
	if u, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil || u.MFAEnabled {
		t.Errorf("after reset: %+v, %v", u, err)
	}
	if err := e.ws.ResetMFA(e.ctx, e.ada.ID); err != nil { // nothing to reset: no event
		t.Fatal(err)
	}
	identitytest.WantCode(t, e.ws.ResetMFA(e.ctx, 99), identity.CodeNotFound)
	want := []string{`{"type":"user.mfa.removed","data":{"userId":1}}`, `{"type":"user.mfa.reset","data":{"userId":1}}`}
	if diff := cmp.Diff(want, eventsOf(t, e.testEnv, hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantEv := []string{"login.failed wrong_code"}
	if diff := cmp.Diff(wantEv, e.events()); diff != "" {
		t.Errorf("lockout events (-want +got):\n%s", diff)
	}
}

// TestTOTPSecretSealed: with a key-encryption key the stored secret is
// sealed (its bytes are not in the record), and a Service with another
// key cannot check codes.
func TestTOTPSecretSealed(t *testing.T) {
	kek := bytes.Repeat([]byte{7}, identity.KeyEncryptionKeySize)
	e := newTestEnv(t, &identity.Options{KeyEncryptionKey: kek})
	secret, _ := e.enrol(e.ada.ID)
	var rec store.SecondFactor
	err := e.st.View(e.ctx, func(tx store.Tx) (err error) {
		rec, err = tx.SecondFactor("acme", e.ada.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := totpEncodingForTest.DecodeString(secret)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Secret[0] != 1 || bytes.Contains(rec.Secret, raw) || len(rec.Secret) != 1+12+20+16 {
		t.Errorf("stored secret %x: want 1, a nonce, and the sealed secret with its tag", rec.Secret)
	}

	other, err := identity.New(e.st, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2,
		KeyEncryptionKey: bytes.Repeat([]byte{8}, identity.KeyEncryptionKeySize)})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := other.GetWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.Authenticate(e.ctx, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeMFARequired)
	_, err = ws.VerifySecondFactor(e.ctx, err.(*identity.Error).Challenge, e.code(secret, 0))
	identitytest.WantCode(t, err, identity.CodeInternal)
}

// totpEncodingForTest decodes the secrets enrolments show.
var totpEncodingForTest = base32.StdEncoding.WithPadding(base32.NoPadding)

// typeAndData returns an event payload without its timestamp:
// {"type":…,"data":…}.
func typeAndData(t *testing.T, payload string) string {
	t.Helper()
	var ev struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestSignInForAuthorizationWithMFA: SignIn asks for the code; after
// VerifySecondFactor, CompleteSignIn completes the request with a
// session; ResumeSignIn completes another with an existing session.
// Under MFARequired a session of a user without a factor gives no single
// sign-on.
func TestSignInForAuthorizationWithMFA(t *testing.T) {
	e := newOIDCEnv(t, nil)
	hook := e.hook(identity.EventLoginSucceeded)
	secret, _ := e.enrol(e.ada.ID)
	a := e.authorize(e.webRequest(), "")
	_, err := e.ws.Provider().SignIn(e.ctx, a.RequestID, "ada", adaPassword)
	identitytest.WantCode(t, err, identity.CodeMFARequired)
	if _, err := e.ws.Provider().GetPendingAuthorization(e.ctx, a.RequestID); err != nil {
		t.Fatalf("the request after the password: %v", err)
	}
	verified, err := e.ws.VerifySecondFactor(e.ctx, err.(*identity.Error).Challenge, e.code(secret, 0))
	if err != nil {
		t.Fatal(err)
	}
	u := verified.User
	signIn, err := e.ws.Provider().CompleteSignIn(e.ctx, a.RequestID, u.ID, nil)
	auth, token, session := signIn.Authorization, signIn.Secret, signIn.Session
	if err != nil || !codePattern.MatchString(auth.Code) || auth.RedirectURI != webRedirect || session.UserID != u.ID {
		t.Fatalf("CompleteSignIn = %+v, %q, %+v, %v", auth, token, session, err)
	}
	_, err = e.ws.Provider().CompleteSignIn(e.ctx, a.RequestID, u.ID, nil)
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)

	b := e.authorize(e.webRequest(), "")
	_, err = e.ws.Provider().ResumeSignIn(e.ctx, b.RequestID, "ids_nope")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	resumed, err := e.ws.Provider().ResumeSignIn(e.ctx, b.RequestID, token)
	if err != nil || !codePattern.MatchString(resumed.Code) {
		t.Fatalf("ResumeSignIn = %+v, %v", resumed, err)
	}
	_, err = e.ws.Provider().ResumeSignIn(e.ctx, b.RequestID, token)
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	want := []string{
		`{"type":"login.succeeded","data":{"userId":1,"clientId":"` + e.web.ID + `","sessionId":"` + session.ID + `"}}`,
		`{"type":"login.succeeded","data":{"userId":1,"clientId":"` + e.web.ID + `","sessionId":"` + session.ID + `"}}`,
	}
	if diff := cmp.Diff(want, eventsOf(t, e.testEnv, hook)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Bob signed in before MFA became required: his session no longer
	// signs him in without the page (and its enrolment); ada's does.
	bob := e.user("bob")
	created, err := e.ws.CreateSession(e.ctx, bob.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	bobToken := created.Secret
	set, _ := e.ws.GetSettings(e.ctx)
	set.MFA = identity.MFARequired
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	if got := e.authorize(e.webRequest(), bobToken); got.RequestID == "" || got.Code != "" {
		t.Errorf("bob's session under MFARequired = %+v, want the sign-in page", got)
	}
	if got := e.authorize(e.webRequest(), token); got.Code == "" {
		t.Errorf("ada's session under MFARequired = %+v, want a code", got)
	}
}

// TestRevokeUserSession: a user revokes their own session; another
// user's session is not found for them and stays active.
func TestRevokeUserSession(t *testing.T) {
	e := newTestEnv(t, nil)
	bob := e.user("bob")
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	adas := created.Session
	created, err = e.ws.CreateSession(e.ctx, bob.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	bobs := created.Session
	identitytest.WantCode(t, e.ws.RevokeUserSession(e.ctx, e.ada.ID, bobs.ID), identity.CodeNotFound)
	identitytest.WantCode(t, e.ws.RevokeUserSession(e.ctx, e.ada.ID, "nope"), identity.CodeNotFound)
	if s, _ := e.ws.GetSession(e.ctx, bobs.ID); s.RevokedAt != nil {
		t.Error("ada revoked bob's session")
	}
	if err := e.ws.RevokeUserSession(e.ctx, e.ada.ID, adas.ID); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.ws.GetSession(e.ctx, adas.ID); s.RevokedAt == nil {
		t.Error("ada's own session is still active")
	}
}
