package identity

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// PasswordResetTokenLifetime is how long the link of a password reset
// email works after the email is sent.
const PasswordResetTokenLifetime = time.Hour

// resetPrefix starts every password reset token; see newToken.
const resetPrefix = "idr_"

// Reasons sessions and grants end, as session.revoked and the grant
// records say.
const revokedPasswordReset = "password_reset"

// PasswordResetOptions are the optional parts of RequestPasswordReset.
type PasswordResetOptions struct {
	// Link is the template of the link in the email ("{token}" replaced
	// by the reset token), checked like SMTPSettings.ResetURL; empty means
	// the workspace's ResetURL.
	Link string
}

// RequestPasswordReset asks for a password reset email to the address:
// when an enabled user has it, the email holds a link with a single-use
// token, valid for PasswordResetTokenLifetime from sending, that
// ResetPassword takes. The email goes through the workspace's mail queue
// like verification emails (PasswordResetJob).
//
// The caller learns nothing about the address: whether a user has it or
// not, RequestPasswordReset does the same work (it queues a job; the
// user is looked up only when the job is sent, and a job for an address
// no enabled user has fails there, unsent, visible to administrators in
// ListEmailJobs) and returns the same result. What it can refuse depends only
// on the input and the workspace: an address that is not a plain email
// address is CodeInvalid (field "email"), a workspace without SMTP
// settings or without a link (SMTPSettings.ResetURL or opts.Link)
// CodeConflict, an invalid opts.Link CodeInvalid (field "link").
//
// Under the workspace's ThrottlePolicy an address gets at most one reset
// email per MailInterval: a request sooner queues nothing and returns
// nil all the same, since the email queued first holds a link that works.
//
// A job queued for an address a user has is recorded in the audit trail
// (password.reset_requested, the user as the target); one for an address
// nobody has is not: the trail holds what happened to users.
func (w *Workspace) RequestPasswordReset(ctx context.Context, email string, opts *PasswordResetOptions) error {
	var p problems
	checkEmail(&p, "email", email)
	if opts != nil && opts.Link != "" {
		validateLinkTemplate(&p, "link", opts.Link)
	}
	if err := p.err("invalid password reset request"); err != nil {
		return err
	}
	var settings Settings
	err := w.view(ctx, func(tx store.Tx) (err error) { settings, err = w.settings(tx); return err })
	if err != nil {
		return fromStore(err, "workspace")
	}
	link, err := w.resetLink(settings, opts)
	if err != nil {
		return err
	}
	retry, err := w.takeMail(ctx, settings.Throttle, MailPasswordReset, email)
	if err != nil || retry > 0 {
		return err
	}
	locale := RequestInfoFrom(ctx).Locale
	err = w.update(ctx, func(tx store.Tx) error {
		settings, err := w.settings(tx)
		if err != nil {
			return err
		}
		if link, err = w.resetLink(settings, opts); err != nil {
			return err
		}
		if err := w.enqueueEmailJob(tx, emailJob{Kind: MailPasswordReset, Email: email, Link: link, Locale: locale}); err != nil {
			return err
		}
		id, err := tx.UserIDByEmail(w.slug, email)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		u, err := w.user(tx, id)
		if err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditPasswordResetRequested, target: userTarget(u)})
	})
	return fromStore(err, "workspace")
}

// resetLink returns the link template of a reset email under the
// settings, or why there is none.
func (w *Workspace) resetLink(settings Settings, opts *PasswordResetOptions) (string, error) {
	if settings.SMTP == nil {
		return "", errorf(CodeConflict, "workspace %q has no SMTP settings", w.slug)
	}
	link := settings.SMTP.ResetURL
	if opts != nil && opts.Link != "" {
		link = opts.Link
	}
	if link == "" {
		return "", errorf(CodeConflict, "workspace %q has no password reset link (smtp.resetUrl)", w.slug)
	}
	return link, nil
}

// ResetPassword sets a new password with the token of a password reset
// email: the workspace's password policy applies (CodeInvalid, and the
// token stays usable), the token becomes used, every session and refresh
// token of the user is revoked (someone else may have known the old
// password), a lockout of the user ends (with user.unlocked, by
// "password_reset") and its count of failures starts again, and
// user.password.changed is emitted, all in one transaction, with the
// audit record password.reset (counting the sessions revoked, one record
// for them all) and account.unlocked (reason "password_reset") when it
// ended a lockout; the throttle's counts of the user's username and
// email are cleared too.
// The reset proves control of the mailbox, which is what a lockout waits
// for, so that the new password works at once. It returns the user.
//
// A malformed or unknown token, or one sent to an address that is no
// longer the user's, is CodeTokenInvalid; an expired one CodeTokenExpired;
// a used one CodeTokenUsed. A disabled user's token is CodeTokenInvalid.
// The hash waits for room in the Service's hashing budget; if ctx ends
// meanwhile, ResetPassword returns ctx.Err() as it is and changes
// nothing.
func (w *Workspace) ResetPassword(ctx context.Context, token, password string) (User, error) {
	id, secret, err := passwordReset.parse(token)
	if err != nil {
		return User{}, err
	}
	check := func(tx store.Tx) (store.VerificationToken, store.User, error) {
		t, _, err := w.checkSingleUse(tx, passwordReset, id, secret, w.svc.timestamp())
		if err != nil {
			return t, store.User{}, err
		}
		u, err := w.checkNewPassword(tx, t.UserID, password)
		return t, u, err
	}
	// Check before hashing: a bad token or password costs no hash.
	err = w.view(ctx, func(tx store.Tx) error { _, _, err := check(tx); return err })
	if err != nil {
		return User{}, fromStore(err, "password reset token")
	}
	encoded, err := w.svc.newPasswordHash(ctx, password, nil)
	if err != nil {
		return User{}, err
	}
	var u store.User
	err = w.update(ctx, func(tx store.Tx) error {
		t, user, err := check(tx)
		if err != nil {
			return err
		}
		now := w.svc.timestamp()
		if err := w.useSingleUse(tx, t, now); err != nil {
			return err
		}
		user.PasswordHash, user.UpdatedAt, user.Version = encoded, now, newVersion(user.Version)
		if err := tx.PutUser(w.slug, user); err != nil {
			return err
		}
		u = user
		return w.passwordReplaced(ctx, tx, user, revokedPasswordReset, now, func(revoked int) auditEntry {
			return auditEntry{action: AuditPasswordReset, target: userTarget(user),
				changes: auditChanges{}.set("sessionsRevoked", nil, revoked)}
		})
	})
	if err != nil {
		return User{}, fromStore(err, "password reset token")
	}
	w.forgetSignInFailures(ctx, u.Username, u.Email)
	return userFromRecord(u), nil
}

// passwordReplaced does what follows a password set through a single-use
// link (a reset or an account setup), in its transaction: the user's
// grants and sessions revoked for reason, the audit record that record
// builds from the number of sessions revoked, the lockout ended, and
// user.password_changed emitted.
func (w *Workspace) passwordReplaced(ctx context.Context, tx store.Tx, user store.User, reason string, now time.Time, record func(revoked int) auditEntry) error {
	if err := w.revokeUserGrants(tx, user.ID, "", reason, now); err != nil {
		return err
	}
	revoked, err := w.revokeUserSessions(tx, user.ID, reason, now)
	if err != nil {
		return err
	}
	if err := w.audit(ctx, tx, record(revoked)); err != nil {
		return err
	}
	if err := w.endLockout(ctx, tx, user, unlockedByPasswordReset, now); err != nil {
		return err
	}
	return w.emit(tx, EventUserPasswordChanged, userIDEvent{UserID: user.ID})
}

// CheckPasswordResetToken reports whether a password reset token can
// still be used, with the errors ResetPassword would return for it, so
// that a reset page can say a link is over before the user types a new
// password. It changes nothing.
func (w *Workspace) CheckPasswordResetToken(ctx context.Context, token string) error {
	id, secret, err := passwordReset.parse(token)
	if err != nil {
		return err
	}
	err = w.view(ctx, func(tx store.Tx) error {
		_, _, err := w.checkSingleUse(tx, passwordReset, id, secret, w.svc.timestamp())
		return err
	})
	return fromStore(err, "password reset token")
}

func errResetTokenInvalid() *Error { return errorf(CodeTokenInvalid, "invalid password reset token") }

// ChangePassword replaces a signed-in user's password, given the current
// one: a wrong current password is CodeUnauthenticated and counts toward
// the workspace's lockout like a failed login (CodeLocked while locked);
// the new one must satisfy the password policy (CodeInvalid, checked
// first, so that a policy mistake costs no attempt). It emits
// user.password.changed. Sessions and tokens stay: the user changed the
// password knowing the old one. A user without a password is
// CodeUnauthenticated too (it has none to give); an unknown user
// CodeNotFound.
//
// The audit trail records password.changed, or, for a current password
// refused, password.changed as a failure with the reason of login.failed
// (wrong_password, locked, no_password), with what the refusal counts.
func (w *Workspace) ChangePassword(ctx context.Context, userID int64, current, password string) error {
	var rec store.User
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = w.checkNewPassword(tx, userID, password)
		return err
	})
	if err != nil {
		return fromStore(err, "user")
	}
	who := attempter{login: rec.Username, user: rec, action: AuditPasswordChanged}
	hash, err := parsePasswordHash(rec.PasswordHash)
	if rec.PasswordHash == "" || err != nil {
		err := w.update(ctx, func(tx store.Tx) error { return w.auditRefused(ctx, tx, who, loginNoPassword) })
		if err != nil {
			return fromStore(err, "user")
		}
		return errInvalidCredentials()
	}
	if err := w.verifyCurrentPassword(ctx, who, hash, current); err != nil {
		return err
	}
	return w.setPassword(ctx, userID, password, AuditPasswordChanged)
}

// verifyCurrentPassword checks the password of the user who.user under
// the lockout policy, as Authenticate does, without the second factor:
// the user is signed in already.
func (w *Workspace) verifyCurrentPassword(ctx context.Context, who attempter, hash passwordHash, password string) error {
	var set Settings
	err := w.view(ctx, func(tx store.Tx) (err error) { set, err = w.settings(tx); return err })
	if err != nil {
		return fromStore(err, "workspace")
	}
	var att *attempt
	if !set.Lockout.Disabled {
		if att, err = w.reserveAttempt(ctx, who, nil); err != nil {
			return err
		}
	}
	matches := false
	if utf8.ValidString(password) && utf8.RuneCountInString(password) <= MaxPasswordPolicyLength {
		matches, err = w.svc.passwordMatches(ctx, hash, password)
	}
	if err != nil {
		_ = att.abandoned(context.WithoutCancel(ctx))
		return err
	}
	if !matches {
		if att == nil {
			return w.loginFailed(ctx, who, loginWrongPassword)
		}
		return att.failed(ctx, loginWrongPassword)
	}
	return att.succeeded(ctx, nil)
}
