package identity

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/identitylib/identity/store"
)

// Second factors.
const (
	// MFAChallengeLifetime is how long a sign-in that passed its password
	// waits for its second factor (Error.Challenge).
	MFAChallengeLifetime = 5 * time.Minute
	// PendingEnrollmentLifetime is how long a TOTP enrolment waits for its
	// first code: BeginTOTPEnrollment shows the same secret again within
	// it (a page reloaded, a QR code scanned late) and a new one after it.
	PendingEnrollmentLifetime = time.Hour
	// challengePrefix starts every challenge token; see newToken.
	challengePrefix = "idc_"
)

// MFAStatus is the state of a user's second factor.
type MFAStatus struct {
	// Enabled reports a confirmed TOTP factor.
	Enabled bool
	// EnrolledAt is when the factor was confirmed (zero without one).
	EnrolledAt time.Time
	// RecoveryCodesLeft is how many recovery codes are unused.
	RecoveryCodesLeft int
	// Pending reports an enrolment waiting for its first code.
	Pending bool
}

// errInvalidCode is the answer to a wrong second-factor code, whatever
// made it wrong (a typo, a replay, a used recovery code).
func errInvalidCode() *Error { return errorf(CodeUnauthenticated, "invalid code") }

// totpAAD binds a sealed TOTP secret to its workspace and user.
func totpAAD(slug string, userID int64) []byte {
	return []byte("identity totp secret " + slug + "/" + strconv.FormatInt(userID, 10))
}

// GetMFAStatus returns the state of the user's second factor. An unknown
// user is CodeNotFound.
func (w *Workspace) GetMFAStatus(ctx context.Context, userID int64) (MFAStatus, error) {
	var st MFAStatus
	err := w.view(ctx, func(tx store.Tx) error {
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		f, err := tx.SecondFactor(w.slug, userID)
		if isNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if f.Confirmed {
			st = MFAStatus{Enabled: true, EnrolledAt: f.ConfirmedAt, RecoveryCodesLeft: len(f.RecoveryCodes)}
		} else {
			st.Pending = w.svc.timestamp().Sub(f.CreatedAt) < PendingEnrollmentLifetime
		}
		return nil
	})
	return st, fromStore(err, "user")
}

// BeginTOTPEnrollment starts (or, within PendingEnrollmentLifetime,
// resumes) the enrolment of a TOTP second factor for the user: it stores
// a new secret, sealed when the Service has a key-encryption key, and
// returns what the user's authenticator app needs. The enrolment takes
// effect when ConfirmTOTPEnrollment receives a code of it. A new secret
// is recorded in the audit trail (second_factor.enrollment_started, never
// the secret); a resumed enrolment changes nothing. A user with a
// confirmed factor is CodeConflict (remove it first); an unknown user
// CodeNotFound.
func (w *Workspace) BeginTOTPEnrollment(ctx context.Context, userID int64) (TOTPEnrollment, error) {
	fresh, err := newTOTPSecret()
	if err != nil {
		return TOTPEnrollment{}, internal(err)
	}
	var secret []byte
	var username string
	err = w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		username = u.Username
		now := w.svc.timestamp()
		f, err := tx.SecondFactor(w.slug, userID)
		switch {
		case err == nil && f.Confirmed:
			return errorf(CodeConflict, "user %d has a second factor already: remove it first", userID)
		case err == nil && now.Sub(f.CreatedAt) < PendingEnrollmentLifetime:
			secret, err = w.svc.open(totpAAD(w.slug, userID), f.Secret)
			return err
		case err != nil && !isNotFound(err):
			return err
		}
		sealed, err := w.svc.seal(totpAAD(w.slug, userID), fresh)
		if err != nil {
			return err
		}
		secret = fresh
		if err := tx.PutSecondFactor(w.slug, store.SecondFactor{UserID: userID, Secret: sealed, CreatedAt: now}); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditSecondFactorEnrollStarted, target: userTarget(u)})
	})
	if err != nil {
		return TOTPEnrollment{}, fromStore(err, "user")
	}
	return totpEnrollment(w.slug, username, secret), nil
}

// ConfirmTOTPEnrollment completes the user's pending TOTP enrolment with
// a code of its secret: the factor takes effect, the user's MFAEnabled
// becomes true, user.mfa.enrolled is emitted, and RecoveryCodeCount
// single-use recovery codes are returned, shown only here (only their
// hashes are stored). A wrong code is CodeInvalid (field "code") and
// changes nothing; no pending enrolment (or one older than
// PendingEnrollmentLifetime), or a confirmed factor, is CodeConflict.
func (w *Workspace) ConfirmTOTPEnrollment(ctx context.Context, userID int64, code string) ([]string, error) {
	var codes []string
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		f, err := w.pendingEnrollment(tx, userID)
		if err != nil {
			return err
		}
		var ok bool
		if codes, ok, err = w.confirmEnrollment(ctx, tx, f, u, code); err != nil {
			return err
		}
		if !ok {
			return errWrongEnrollmentCode()
		}
		return nil
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return codes, nil
}

func errWrongEnrollmentCode() error {
	var p problems
	p.add("code", RuleFormat, "is not a current code of the authenticator")
	return p.err("invalid code")
}

// pendingEnrollment returns the user's enrolment waiting for its first
// code.
func (w *Workspace) pendingEnrollment(tx store.Tx, userID int64) (store.SecondFactor, error) {
	f, err := tx.SecondFactor(w.slug, userID)
	switch {
	case isNotFound(err):
		return f, errorf(CodeConflict, "user %d has no TOTP enrolment in progress", userID)
	case err != nil:
		return f, err
	case f.Confirmed:
		return f, errorf(CodeConflict, "user %d has a second factor already", userID)
	case w.svc.timestamp().Sub(f.CreatedAt) >= PendingEnrollmentLifetime:
		return f, errorf(CodeConflict, "the TOTP enrolment of user %d has expired: begin it again", userID)
	}
	return f, nil
}

// confirmEnrollment confirms the pending factor f of user u in tx if code
// is one of its current codes (ok), with new recovery codes, and records
// second_factor.enrolled.
func (w *Workspace) confirmEnrollment(ctx context.Context, tx store.Tx, f store.SecondFactor, u store.User, code string) (codes []string, ok bool, err error) {
	secret, err := w.svc.open(totpAAD(w.slug, u.ID), f.Secret)
	if err != nil {
		return nil, false, err
	}
	now := w.svc.timestamp()
	step, ok := matchTOTP(secret, code, now, 0)
	if !ok {
		return nil, false, nil
	}
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return nil, false, err
	}
	f.Confirmed, f.ConfirmedAt, f.LastStep, f.RecoveryCodes = true, now, step, hashes
	if err := tx.PutSecondFactor(w.slug, f); err != nil {
		return nil, false, err
	}
	if err := w.setMFAEnabled(tx, u, true, now); err != nil {
		return nil, false, err
	}
	if err := w.audit(ctx, tx, auditEntry{action: AuditSecondFactorEnrolled, target: userTarget(u)}); err != nil {
		return nil, false, err
	}
	return codes, true, w.emit(tx, EventUserMFAEnrolled, userIDEvent{UserID: u.ID})
}

// setMFAEnabled stores the user's MFAEnabled flag if it changes.
func (w *Workspace) setMFAEnabled(tx store.Tx, u store.User, on bool, now time.Time) error {
	if u.MFAEnabled == on {
		return nil
	}
	u.MFAEnabled, u.UpdatedAt, u.Version = on, now, newVersion(u.Version)
	return tx.PutUser(w.slug, u)
}

// useCode checks a code against the confirmed factor f of the user u in
// tx: a TOTP code of a step later than the last one accepted, or an
// unused recovery code. A code that matches is used up (the factor is
// written; a recovery code with its audit record,
// second_factor.recovery_code_used, counting the codes left); method
// says which matched (methodSecondFactor or methodRecoveryCode), "" for
// none.
func (w *Workspace) useCode(ctx context.Context, tx store.Tx, u store.User, f store.SecondFactor, code string, now time.Time) (method string, err error) {
	secret, err := w.svc.open(totpAAD(w.slug, f.UserID), f.Secret)
	if err != nil {
		return "", err
	}
	if step, ok := matchTOTP(secret, code, now, f.LastStep); ok {
		f.LastStep = step
		return methodSecondFactor, tx.PutSecondFactor(w.slug, f)
	}
	if i := matchRecoveryCode(f.RecoveryCodes, code); i >= 0 {
		f.RecoveryCodes = slices.Delete(slices.Clone(f.RecoveryCodes), i, i+1)
		if err := tx.PutSecondFactor(w.slug, f); err != nil {
			return "", err
		}
		err := w.audit(ctx, tx, auditEntry{action: AuditSecondFactorRecoveryUsed, target: userTarget(u),
			changes: auditChanges{}.set("codesLeft", nil, len(f.RecoveryCodes))})
		return methodRecoveryCode, err
	}
	return "", nil
}

// confirmedFactor returns the user's confirmed second factor.
func (w *Workspace) confirmedFactor(tx store.Tx, userID int64) (store.SecondFactor, error) {
	f, err := tx.SecondFactor(w.slug, userID)
	if isNotFound(err) || err == nil && !f.Confirmed {
		return f, errorf(CodeConflict, "user %d has no second factor", userID)
	}
	return f, err
}

// RegenerateRecoveryCodes replaces the user's recovery codes with
// RecoveryCodeCount new ones, returned (shown only here), for the user
// themselves: code must be a current TOTP code or an unused recovery
// code, so that a stolen session cannot mint codes that pass the second
// factor; a wrong one counts toward the lockout like a wrong password
// (CodeUnauthenticated; CodeLocked while locked). A user without a
// confirmed factor is CodeConflict. ResetMFA is the administrator's way.
// The audit trail records second_factor.recovery_codes_regenerated
// (never a code), a failure with the reason of login.failed for a code
// refused.
func (w *Workspace) RegenerateRecoveryCodes(ctx context.Context, userID int64, code string) ([]string, error) {
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return nil, internal(err)
	}
	err = w.withCode(ctx, userID, code, AuditSecondFactorCodesRenewed, func(tx store.Tx, u store.User, f store.SecondFactor, _ time.Time) error {
		// useCode stored the factor with the code used up; read it again.
		f, err := tx.SecondFactor(w.slug, f.UserID)
		if err != nil {
			return err
		}
		f.RecoveryCodes = hashes
		if err := tx.PutSecondFactor(w.slug, f); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditSecondFactorCodesRenewed, target: userTarget(u)})
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// withCode checks a code of the user's confirmed factor under the lockout
// (see codeAttempt; a refusal is recorded as action, a failure) and, when
// it matches, runs then in the same transaction.
func (w *Workspace) withCode(ctx context.Context, userID int64, code string, action AuditAction, then func(tx store.Tx, u store.User, f store.SecondFactor, now time.Time) error) error {
	var rec store.User
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = w.user(tx, userID)
		return err
	})
	if err != nil {
		return fromStore(err, "user")
	}
	who := attempter{login: rec.Username, user: rec, action: action}
	return w.codeAttempt(ctx, who, func(tx store.Tx, now time.Time) (bool, error) {
		u, err := w.user(tx, userID)
		if err != nil {
			return false, err
		}
		f, err := w.confirmedFactor(tx, userID)
		if err != nil {
			return false, err
		}
		if method, err := w.useCode(ctx, tx, u, f, code, now); method == "" || err != nil {
			return false, err
		}
		return true, then(tx, u, f, now)
	})
}

// RemoveSecondFactor removes the user's TOTP factor and recovery codes,
// for the user themselves: code must be a current TOTP code or an unused
// recovery code, and a wrong one counts toward the workspace's lockout
// like a wrong password (CodeUnauthenticated; CodeLocked while locked).
// MFAEnabled becomes false and user.mfa.removed is emitted. A user
// without a confirmed factor is CodeConflict. Under MFARequired the user
// enrols again at the next sign-in. The audit trail records
// second_factor.removed, or, for a code refused, second_factor.removed as
// a failure with the reason of login.failed (wrong_code, locked).
func (w *Workspace) RemoveSecondFactor(ctx context.Context, userID int64, code string) error {
	return w.withCode(ctx, userID, code, AuditSecondFactorRemoved, func(tx store.Tx, u store.User, _ store.SecondFactor, now time.Time) error {
		if err := tx.DeleteSecondFactor(w.slug, userID); err != nil {
			return err
		}
		if err := w.setMFAEnabled(tx, u, false, now); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{action: AuditSecondFactorRemoved, target: userTarget(u)}); err != nil {
			return err
		}
		return w.emit(tx, EventUserMFARemoved, userIDEvent{UserID: userID})
	})
}

// ResetMFA clears the user's second factor and recovery codes, and its
// MFAEnabled, for an administrator (a user who lost their authenticator
// and their recovery codes), with user.mfa.reset and the audit record
// second_factor.reset when the user had MFA on. A user without any
// succeeds and emits nothing; an unknown user is CodeNotFound. Under
// MFARequired the user enrols again at the next sign-in.
func (w *Workspace) ResetMFA(ctx context.Context, userID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		f, err := tx.SecondFactor(w.slug, userID)
		switch {
		case err == nil:
			if err := tx.DeleteSecondFactor(w.slug, userID); err != nil {
				return err
			}
		case !isNotFound(err):
			return err
		}
		had := err == nil && f.Confirmed || u.MFAEnabled
		if !had {
			return nil
		}
		if err := w.setMFAEnabled(tx, u, false, w.svc.timestamp()); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{action: AuditSecondFactorReset, target: userTarget(u)}); err != nil {
			return err
		}
		return w.emit(tx, EventUserMFAReset, userIDEvent{UserID: userID})
	})
	return fromStore(err, "user")
}

// challengeSecondFactor ends a sign-in whose password was right for a
// user who needs a second factor: it stores a challenge (the sign-in
// waiting for its code) and returns CodeMFARequired, or
// CodeMFAEnrollmentRequired when the user has no confirmed factor, with
// the challenge's token. The attempt's reservation is released without
// resetting the count of failures: only the second factor completes the
// sign-in, so a known password cannot be used to reset the count between
// guesses of the code.
func (w *Workspace) challengeSecondFactor(ctx context.Context, att *attempt, u store.User, enrol bool) error {
	token, err := w.issueSignInChallenge(ctx, att, secondFactorChallenge, u)
	if err != nil {
		return err
	}
	w.svc.challenged(enrol)
	if enrol {
		return &Error{Code: CodeMFAEnrollmentRequired, Message: "enrol a second factor to sign in", Challenge: token}
	}
	return &Error{Code: CodeMFARequired, Message: "a second-factor code is required", Challenge: token}
}

// issueSignInChallenge stores a single-use challenge of kind for the
// user of a sign-in whose password was right and returns its token: in
// the transaction that ends the attempt att (refused if a lock began
// meanwhile), or in one of its own without an attempt.
func (w *Workspace) issueSignInChallenge(ctx context.Context, att *attempt, kind singleUse, u store.User) (string, error) {
	var token string
	put := func(tx store.Tx, now time.Time) (err error) {
		token, err = w.issueSingleUse(tx, kind, u, now, MFAChallengeLifetime)
		return err
	}
	if att != nil {
		err := att.end(ctx, func(tx store.Tx, st *store.LoginAttempts, now time.Time) error {
			if now.Before(st.LockedUntil) {
				return refuse(errLocked(st.LockedUntil))
			}
			return put(tx, now)
		})
		return token, err
	}
	err := w.update(ctx, func(tx store.Tx) error { return put(tx, w.svc.timestamp()) })
	return token, fromStore(err, "user")
}

func errChallengeInvalid() *Error { return errorf(CodeTokenInvalid, "unknown sign-in challenge") }

// challengeUser returns the user of a challenge that may still be used.
func (w *Workspace) challengeUser(ctx context.Context, challenge string) (store.User, string, string, error) {
	id, secret, err := secondFactorChallenge.parse(challenge)
	if err != nil {
		return store.User{}, "", "", err
	}
	var u store.User
	err = w.view(ctx, func(tx store.Tx) (err error) {
		_, u, err = w.checkSingleUse(tx, secondFactorChallenge, id, secret, w.svc.timestamp())
		return err
	})
	return u, id, secret, fromStore(err, "user")
}

// BeginChallengeEnrollment begins (or resumes) the TOTP enrolment of the user
// of a sign-in that ended with CodeMFAEnrollmentRequired, like
// BeginTOTPEnrollment; VerifySecondFactor with a code of it completes
// both the enrolment and the sign-in. A challenge that is unknown, used
// or expired is CodeTokenInvalid, CodeTokenUsed or CodeTokenExpired.
func (w *Workspace) BeginChallengeEnrollment(ctx context.Context, challenge string) (TOTPEnrollment, error) {
	u, _, _, err := w.challengeUser(ctx, challenge)
	if err != nil {
		return TOTPEnrollment{}, err
	}
	return w.BeginTOTPEnrollment(ctx, u.ID)
}

// VerifiedSecondFactor is a sign-in whose second factor was verified.
type VerifiedSecondFactor struct {
	// User is the user signed in.
	User User
	// RecoveryCodes are the recovery codes of a factor enrolled by this
	// verification (CodeMFAEnrollmentRequired), shown only here; nil for
	// a user who had a factor already.
	RecoveryCodes []string
	// AMR is how the user authenticated: a password and a one-time code,
	// ["pwd", "otp", "mfa"]; pass it on in SessionOptions (see
	// SessionOptions).
	AMR []string
	// method is how the audit trail names the sign-in: password+totp,
	// or recovery_code.
	method string
}

// SessionOptions returns the options that start the session of the
// sign-in (CreateSession, Provider.CompleteSignIn): its AMR, and, for the
// audit record of a sign-in completed at the provider, which of a TOTP
// code or a recovery code was given, which the AMR does not say.
func (v VerifiedSecondFactor) SessionOptions() *SessionOptions {
	return &SessionOptions{AMR: slices.Clone(v.AMR), method: v.method}
}

// VerifySecondFactor completes a sign-in that ended with CodeMFARequired
// or CodeMFAEnrollmentRequired (challenge is Error.Challenge) and returns
// its user; the program then starts a session (CreateSession). A sign-in
// at the provider takes Provider.VerifySecondFactor instead, then
// Provider.CompleteSignIn. The challenge is used up.
//
// For a user with a confirmed factor, code is a current TOTP code (6
// digits; the steps just before and after the current one are accepted,
// and a code is refused once a code of its step or a later one was
// accepted) or an unused recovery code, which is used up. For a user
// enrolling (CodeMFAEnrollmentRequired, after BeginChallengeEnrollment), code
// is a code of the new secret: the enrolment is confirmed as by
// ConfirmTOTPEnrollment and its recovery codes are returned (shown only
// here; nil otherwise).
//
// A wrong code is CodeUnauthenticated and counts toward the workspace's
// lockout like a wrong password (login.failed with reason "wrong_code");
// a locked user is CodeLocked; the challenge stays usable until it
// expires. A right code resets the count. A challenge that is unknown,
// used or expired is CodeTokenInvalid, CodeTokenUsed or CodeTokenExpired;
// a user disabled meanwhile is CodeUnauthenticated.
//
// Under PasskeysRequired, a user without a passkey whose code is right
// gets CodePasskeyEnrollmentRequired with a new challenge instead (the
// code used up, the count reset, no sign_in.succeeded yet):
// BeginChallengePasskeyRegistration and ConfirmChallengePasskeyRegistration
// register a passkey and complete the sign-in with this one's AMR and
// method. A user who enrolled their second factor in this sign-in
// completes it here (its recovery codes are shown once) and is asked for
// a passkey at their next sign-in.
//
// The audit trail records the sign-in: sign_in.succeeded (the user its
// actor; method "password+totp", or "recovery_code" with
// second_factor.recovery_code_used), or sign_in.failed (reason wrong_code
// or locked), with what it counts.
func (w *Workspace) VerifySecondFactor(ctx context.Context, challenge, code string) (VerifiedSecondFactor, error) {
	return w.verifySecondFactor(ctx, challenge, code, true)
}

// VerifySecondFactor is Workspace.VerifySecondFactor for a sign-in at the
// provider, for the stored authorization request requestID (its
// SignIn asked for the code): the request must still be pending
// (CodeTokenInvalid or CodeTokenExpired otherwise, the challenge left
// unused). It writes no sign_in.succeeded: the sign-in ends, and its one
// record is written, when the request is completed, by CompleteSignIn
// with the VerifiedSecondFactor's SessionOptions (method password+totp
// or recovery_code) or, after an enrolment whose recovery codes are shown
// first, by ResumeSignIn. Refusals are recorded as by
// Workspace.VerifySecondFactor.
func (p *Provider) VerifySecondFactor(ctx context.Context, requestID, challenge, code string) (VerifiedSecondFactor, error) {
	if _, err := p.GetPendingAuthorization(ctx, requestID); err != nil {
		return VerifiedSecondFactor{}, err
	}
	return p.w.verifySecondFactor(ctx, challenge, code, false)
}

// verifySecondFactor verifies the second factor of a sign-in; record
// says whether the sign-in ends here, and writes its sign_in.succeeded.
func (w *Workspace) verifySecondFactor(ctx context.Context, challenge, code string, record bool) (VerifiedSecondFactor, error) {
	// Refuse a bad challenge in a read, so that guessing costs no write.
	u, id, secret, err := w.challengeUser(ctx, challenge)
	if err != nil {
		return VerifiedSecondFactor{}, err
	}
	var codes []string
	var method, enrol string
	who := attempter{login: u.Username, user: u, action: AuditSignInFailed}
	err = w.codeAttempt(ctx, who, func(tx store.Tx, now time.Time) (bool, error) {
		codes, enrol = nil, ""
		t, user, err := w.checkSingleUse(tx, secondFactorChallenge, id, secret, now)
		if err != nil {
			return false, err
		}
		f, err := tx.SecondFactor(w.slug, user.ID)
		if isNotFound(err) {
			return false, errorf(CodeConflict, "the user has no second factor: enrol one for the challenge first")
		} else if err != nil {
			return false, err
		}
		method = ""
		if f.Confirmed {
			method, err = w.useCode(ctx, tx, user, f, code, now)
		} else {
			if f, err = w.pendingEnrollment(tx, user.ID); err != nil {
				return false, err
			}
			var ok bool
			if codes, ok, err = w.confirmEnrollment(ctx, tx, f, user, code); ok {
				method = methodSecondFactor
			}
			user.MFAEnabled = true
		}
		if method == "" || err != nil {
			return false, err
		}
		u = user
		if err := w.useSingleUse(tx, t, now); err != nil {
			return false, err
		}
		if codes == nil {
			// Recovery codes just made are shown by the sign-in they
			// complete: a user enrolling a second factor is asked for a
			// passkey at their next sign-in.
			if enrol, err = w.passkeyEnrollmentAfter(tx, user, method, now); err != nil || enrol != "" {
				return true, err
			}
		}
		if !record {
			return true, nil
		}
		return true, w.auditSignedIn(ctx, tx, user, auditChanges{}.set("method", nil, method))
	})
	if err != nil {
		return VerifiedSecondFactor{}, err
	}
	if enrol != "" {
		w.svc.signedIn(SignInPasskeyEnrollmentRequired)
		return VerifiedSecondFactor{}, errPasskeyEnrollmentRequired(enrol)
	}
	w.svc.signedIn(SignInSucceeded)
	return VerifiedSecondFactor{User: userFromRecord(u), RecoveryCodes: codes, AMR: slices.Clone(amrSecondFactor), method: method}, nil
}

// codeAttempt checks a second-factor code of the user under the
// workspace's lockout policy, in one transaction: check reports whether
// the code matched, having written what a match changes (an error of
// check aborts the transaction and is returned). A match resets the count
// of failures; a miss counts as a failure (login.failed, reason
// "wrong_code"; user.locked at the threshold) and is errInvalidCode. A
// locked user is refused without a check. Checking a code costs no hash,
// so there is no reservation to hold; but while the failures counted and
// the password attempts in flight fill the threshold, the attempt waits
// like a password attempt, so no more than the threshold are evaluated
// per lock window.
func (w *Workspace) codeAttempt(ctx context.Context, who attempter, check func(tx store.Tx, now time.Time) (bool, error)) error {
	return waitForRoom(ctx, nil, func() error {
		err := w.update(ctx, func(tx store.Tx) error {
			set, err := w.settings(tx)
			if err != nil {
				return err
			}
			now := w.svc.timestamp()
			if set.Lockout.Disabled {
				ok, err := check(tx, now)
				if err != nil || ok {
					return err
				}
				if err := w.attemptFailed(ctx, tx, who, who.failReason()); err != nil {
					return err
				}
				return refuse(errInvalidCode())
			}
			st, _, err := w.admitAttempt(ctx, tx, who, set.Lockout, now)
			if err == nil {
				err = w.checkCode(ctx, tx, &st, set.Lockout, who, now, check)
			}
			if err != nil && !isRefusal(err) {
				return err
			}
			if err := tx.PutLoginAttempts(w.slug, st); err != nil {
				return err
			}
			return err
		})
		return attemptError(err)
	})
}

// checkCode runs codeAttempt's check of an admitted attempt in tx: a match
// resets the count of failures in st; a miss counts as one and is the
// refusal errInvalidCode.
func (w *Workspace) checkCode(ctx context.Context, tx store.Tx, st *store.LoginAttempts, policy LockoutPolicy, who attempter, now time.Time, check func(tx store.Tx, now time.Time) (bool, error)) error {
	ok, err := check(tx, now)
	switch {
	case err != nil:
		return err
	case ok:
		st.Failures = 0
		return nil
	}
	if err := w.countFailure(ctx, tx, st, policy, who, who.failReason(), now); err != nil {
		return err
	}
	return refuse(errInvalidCode())
}

// failReason is the reason a failed check of the attempter's codeAttempt
// is recorded with.
func (a attempter) failReason() string {
	if a.reason == "" {
		return loginWrongCode
	}
	return a.reason
}
