package identity

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// errInvalidCredentials is the one answer to every failed login, so a
// caller cannot tell an unknown user from a wrong password or a disabled
// account.
func errInvalidCredentials() *Error {
	return errorf(CodeUnauthenticated, "invalid credentials")
}

// Authenticate checks password for the user named by login: an email
// address when login contains '@' (usernames cannot), otherwise a username,
// either matched ignoring case. It returns the user on success and a
// CodeUnauthenticated error for an unknown user, a wrong password, a user
// without a password and a disabled user alike. A password over
// MaxPasswordPolicyLength characters or not valid UTF-8 is refused without
// being hashed, whoever the user. Every refusal emits login.failed.
//
// Every outcome is in the audit trail: sign_in.succeeded (the user its
// actor, method "password") or sign_in.failed with the reason of
// login.failed (or email_unverified), the user as the target, or, for a
// login no user has, the login tried. A refusal's record commits with
// what it counts (the lockout's failure); one that counts nothing is a
// write of its own. A right password that asks for the second factor
// writes no record: VerifySecondFactor writes the sign-in's.
//
// Every refusal (CodeUnauthenticated, CodeLocked, CodeRateLimited) takes
// at least as long as the slowest refusal the Service made in the last ten
// minutes, waiting on a timer (the refusal floor, at most a second), so
// that its time does not tell an unknown login from a wrong password, a
// locked account or an account with a slow imported hash.
//
// The workspace's ThrottlePolicy applies first: a sign-in from a client
// address (RequestInfo in ctx) or naming a login that failed too often
// lately is refused with CodeRateLimited and Error.RetryAfter, before the
// password is looked at; a refusal counts toward both, a success toward
// neither.
//
// The workspace's LockoutPolicy applies to existing users: a locked user
// is refused with CodeLocked (Error.LockedUntil says when the lock ends)
// without a verification, a wrong password counts toward the threshold,
// and an attempt waits while the attempts in flight fill the room the
// threshold leaves (ctx bounds the wait; its error is returned as it is).
// Programs should show CodeLocked as they show CodeUnauthenticated: the
// difference tells that the account exists.
//
// A successful login with a hash that is not argon2id at the Service's
// current parameters (an imported bcrypt or PBKDF2 hash, or older argon2id
// parameters) replaces the stored hash with a current one.
//
// The verification waits for room in the Service's hashing budget (see
// Options.PasswordHashingBudget); if ctx ends meanwhile, Authenticate
// returns ctx.Err() as it is and records nothing.
//
// Under Settings.RequireVerifiedEmail, a right password of a user whose
// email is not verified is CodeEmailUnverified, and a new verification
// email goes to the address (at most one per ThrottlePolicy.MailInterval).
//
// A user who needs a second factor (one with MFAEnabled, or every user
// under MFARequired) is not signed in by a right password alone: the
// error is CodeMFARequired, or CodeMFAEnrollmentRequired for a user
// without a confirmed factor, with Error.Challenge, and VerifySecondFactor
// completes the sign-in. Such a password success does not reset the
// lockout count; the second factor's does.
func (w *Workspace) Authenticate(ctx context.Context, login, password string) (User, error) {
	return w.authenticate(ctx, login, password, "")
}

// authenticate is Authenticate for the sign-in of an authorization
// request, when requestID is set: the verification email an unverified
// user gets under RequireVerifiedEmail leads back to it, and a success
// writes no audit record, since completing the request writes the
// sign-in's, with the client (completeRequest).
func (w *Workspace) authenticate(ctx context.Context, login, password, requestID string) (User, error) {
	timing := w.svc.startRefusalTiming()
	rec, hash, err := w.checkPassword(ctx, login, password, timing, requestID)
	if timing.decided {
		w.svc.verified(timing)
	}
	switch ErrorCode(err) {
	case "":
	case CodeUnauthenticated, CodeLocked, CodeRateLimited:
		return User{}, w.svc.refused(ctx, timing, err)
	default:
		return User{}, err
	}
	if !hash.current(w.svc.argon2) {
		// The login has succeeded; a failed upgrade only means the next
		// login tries again.
		_ = w.rehash(ctx, rec, password)
	}
	w.svc.signedIn(SignInSucceeded)
	return userFromRecord(rec), nil
}

// signInState is what a sign-in reads before it verifies a password.
type signInState struct {
	found       bool
	rec         store.User
	set         Settings
	lockedUntil time.Time
	needsFactor bool
	enrolled    bool
	// needsPasskey: the workspace requires passkeys and the user has none.
	needsPasskey bool
}

// readSignIn reads the settings and the user login names, with what the
// sign-in needs to know of it.
func (w *Workspace) readSignIn(ctx context.Context, login string) (signInState, error) {
	var st signInState
	err := w.view(ctx, func(tx store.Tx) (err error) {
		st = signInState{}
		if st.set, err = w.settings(tx); err != nil {
			return err
		}
		lookup := tx.UserIDByUsername
		if strings.Contains(login, "@") {
			lookup = tx.UserIDByEmail
		}
		id, err := lookup(w.slug, login)
		if isNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if st.rec, err = tx.User(w.slug, id); err != nil {
			return err
		}
		st.found = true
		if st.needsFactor = st.set.MFA == MFARequired || st.rec.MFAEnabled; st.needsFactor {
			f, err := tx.SecondFactor(w.slug, id)
			if err != nil && !isNotFound(err) {
				return err
			}
			st.enrolled = err == nil && f.Confirmed
		}
		if st.set.Passkeys == PasskeysRequired {
			have, err := tx.UserPasskeys(w.slug, id)
			if err != nil {
				return err
			}
			st.needsPasskey = len(have) == 0
		}
		if st.set.Lockout.Disabled {
			return nil
		}
		a, err := tx.LoginAttempts(w.slug, id)
		if err == nil {
			st.lockedUntil = a.LockedUntil
		} else if !isNotFound(err) {
			return err
		}
		return nil
	})
	return st, fromStore(err, "user")
}

// checkPassword does Authenticate's work but the refusal floor and the
// upgrade of the hash: it returns the user and the hash that matched, or
// the error. timing.decided is set once a verification decided.
func (w *Workspace) checkPassword(ctx context.Context, login, password string, timing *refusalTiming, requestID string) (store.User, passwordHash, error) {
	// A password no policy can accept is never hashed, for any login
	// alike, so that it costs no more work than a real one; it is refused,
	// and reported, like a wrong one.
	acceptable := utf8.ValidString(password) && utf8.RuneCountInString(password) <= MaxPasswordPolicyLength
	st, err := w.readSignIn(ctx, login)
	if err != nil {
		return store.User{}, nil, err
	}
	who := attempter{login: login, action: AuditSignInFailed}
	if st.found {
		who.user = st.rec
	}
	taken, err := w.takeSignIn(ctx, st.set.Throttle, login)
	if ErrorCode(err) == CodeRateLimited {
		// Refused at the cost of a read and of its record, like a locked
		// account.
		if ferr := w.loginFailed(ctx, who, loginThrottled); ErrorCode(ferr) != CodeUnauthenticated {
			return store.User{}, nil, ferr
		}
		return store.User{}, nil, err
	}
	if err != nil {
		return store.User{}, nil, err
	}
	rec := st.rec
	var hash passwordHash
	if st.found && rec.PasswordHash != "" {
		hash, _ = parsePasswordHash(rec.PasswordHash)
	}
	if hash == nil {
		if acceptable {
			if _, err := w.svc.passwordMatches(ctx, w.svc.dummy(), password); err != nil {
				taken.undo()
				return store.User{}, nil, err
			}
		}
		reason := loginUnknownUser
		if st.found {
			reason = loginNoPassword
		}
		err := w.loginFailed(ctx, who, reason)
		timing.decided = true
		return store.User{}, nil, err
	}
	// The attempt is reserved under the lockout policy before the
	// password is verified: a locked account costs no hash.
	if w.svc.timestamp().Before(st.lockedUntil) {
		// Locked: refused at the cost of a read and of the refusal's
		// record (with login.failed when an endpoint subscribes to it).
		if err := w.loginFailed(ctx, who, loginLocked); ErrorCode(err) != CodeUnauthenticated {
			return store.User{}, nil, err
		}
		return store.User{}, nil, errLocked(st.lockedUntil)
	}
	var att *attempt
	if !st.set.Lockout.Disabled {
		if att, err = w.reserveAttempt(ctx, who, &timing.paused); err != nil {
			if ErrorCode(err) != CodeLocked {
				taken.undo()
			}
			return store.User{}, nil, err
		}
	}
	matches := false
	if acceptable {
		if matches, err = w.svc.passwordMatches(ctx, hash, password); err != nil {
			// Nothing was verified: give the reservations back.
			_ = att.abandoned(context.WithoutCancel(ctx))
			taken.undo()
			return store.User{}, nil, err
		}
	}
	timing.decided = true
	if !matches {
		if att == nil { // lockout off: nothing to count
			return store.User{}, nil, w.loginFailed(ctx, who, loginWrongPassword)
		}
		return store.User{}, nil, att.failed(ctx, loginWrongPassword)
	}
	if !rec.Enabled {
		err := w.passed(ctx, att, func(tx store.Tx) error { return w.attemptFailed(ctx, tx, who, loginDisabled) })
		if err != nil {
			return store.User{}, nil, err
		}
		return store.User{}, nil, errInvalidCredentials()
	}
	// The password was right: whatever follows, the attempt was no
	// guess, and the failures naming the login were the user's own, as
	// the lockout's count takes them.
	taken.undo()
	w.forgetSignInFailures(ctx, login)
	if st.set.RequireVerifiedEmail && !rec.EmailVerified {
		err := w.passed(ctx, att, func(tx store.Tx) error { return w.auditRefused(ctx, tx, who, loginEmailUnverified) })
		if err != nil {
			return store.User{}, nil, err
		}
		return store.User{}, nil, w.refuseUnverified(ctx, rec, st.set, requestID)
	}
	if st.needsFactor {
		return store.User{}, nil, w.challengeSecondFactor(ctx, att, rec, !st.enrolled)
	}
	if st.needsPasskey {
		err := w.challengePasskeyEnrollment(ctx, att, rec)
		if ErrorCode(err) == CodePasskeyEnrollmentRequired {
			w.svc.signedIn(SignInPasskeyEnrollmentRequired)
		}
		return store.User{}, nil, err
	}
	var record func(tx store.Tx) error
	if requestID == "" {
		record = func(tx store.Tx) error { return w.auditSignedIn(ctx, tx, rec, signInChanges(methodPassword, "", "")) }
	}
	if err := w.passed(ctx, att, record); err != nil {
		return store.User{}, nil, err
	}
	return rec, hash, nil
}

// loginEmailUnverified is the reason of the audit record of a right
// password refused under RequireVerifiedEmail (login.failed is not
// emitted for it).
const loginEmailUnverified = string(SignInEmailUnverified)

// loginFailed records a refused attempt that counts nothing, in a
// transaction of its own: its audit record, and login.failed when an
// endpoint subscribes to it. It returns the one error every failed login
// gets: the caller learns nothing of the reason; the trail and the
// event's subscribers do. A failure to record is returned instead, since
// it is a server failure.
func (w *Workspace) loginFailed(ctx context.Context, who attempter, reason string) error {
	err := w.update(ctx, func(tx store.Tx) error { return w.attemptFailed(ctx, tx, who, reason) })
	if err != nil {
		return fromStore(err, "workspace")
	}
	return errInvalidCredentials()
}

// auditSignedIn writes the audit record of the user's sign-in in tx:
// sign_in.succeeded, the user its actor and its target.
func (w *Workspace) auditSignedIn(ctx context.Context, tx store.Tx, u store.User, changes auditChanges) error {
	return w.audit(ctx, tx, auditEntry{action: AuditSignInSucceeded, target: userTarget(u), actor: userActor(u), changes: changes})
}

// signInChanges are the changes of a sign_in.succeeded record: how the
// user authenticated (method; "" for none), and the client and the
// session of a sign-in at the provider.
func signInChanges(method, clientID, sessionID string) auditChanges {
	var c auditChanges
	if method != "" {
		c = c.set("method", nil, method)
	}
	if clientID != "" {
		c = c.set("clientId", nil, clientID)
	}
	if sessionID != "" {
		c = c.set("sessionId", nil, sessionID)
	}
	return c
}

// The methods of sign_in.succeeded.
const (
	methodPassword     = "password"
	methodSecondFactor = "password+totp"
	methodRecoveryCode = "recovery_code"
)

// signInMethod names how a user authenticated, from the AMR of the
// sign-in: "password", "password+totp", or the methods the program gave
// joined by "+" ("" for none).
func signInMethod(amr []string) string {
	switch {
	case slices.Equal(amr, amrPassword):
		return methodPassword
	case slices.Equal(amr, amrSecondFactor):
		return methodSecondFactor
	}
	return strings.Join(amr, "+")
}

// triedLogin is what login.failed and the audit record of a refused
// login no user has keep of the identifier tried, whatever its length:
// its invalid UTF-8 and its NUL characters each become U+FFFD (no
// identifier has either, and a consumer of the event or the record may
// not take them), and no more than MaxUsernameLength characters of it
// are kept, since no user's identifier is longer than an email may be,
// so a refused login cannot fill the queue.
func triedLogin(login string) string {
	login = strings.ReplaceAll(strings.ToValidUTF8(login, "\uFFFD"), "\x00", "\uFFFD")
	if runes := []rune(login); len(runes) > MaxUsernameLength {
		return string(runes[:MaxUsernameLength])
	}
	return login
}

// dummy returns a hash at the current parameters to verify against when
// there is no user, made once. Its salt and key are random bytes rather
// than the hash of some password: verifying against it costs exactly what
// a real verification costs, no password matches it, and making it costs
// no hash (so no room in the hashing budget either).
func (s *Service) dummy() passwordHash {
	s.dummyOnce.Do(func() {
		h := argon2Hash{params: s.argon2, salt: make([]byte, argon2SaltLen), key: make([]byte, argon2KeyLen)}
		rand.Read(h.salt) // never fails (crypto/rand)
		rand.Read(h.key)
		s.dummyHash = h
	})
	return s.dummyHash
}

// rehash stores a current hash of password for the user, unless the hash
// changed since rec was read.
func (w *Workspace) rehash(ctx context.Context, rec store.User, password string) error {
	encoded, err := w.svc.newPasswordHash(ctx, password, nil)
	if err != nil {
		return err
	}
	return w.update(ctx, func(tx store.Tx) error {
		cur, err := w.user(tx, rec.ID)
		if err != nil || cur.PasswordHash != rec.PasswordHash {
			return err
		}
		cur.PasswordHash, cur.Version = encoded, newVersion(cur.Version)
		return tx.PutUser(w.slug, cur)
	})
}

// SetPassword replaces the user's password, subject to the workspace's
// password policy, for an administrator: the audit trail records
// password.set, without any value. It works for disabled users too. The
// hash waits for room in the Service's hashing budget; if ctx ends
// meanwhile, SetPassword returns ctx.Err() as it is and changes nothing.
func (w *Workspace) SetPassword(ctx context.Context, userID int64, password string) error {
	return w.setPassword(ctx, userID, password, AuditPasswordSet)
}

// setPassword is SetPassword, recorded as action.
func (w *Workspace) setPassword(ctx context.Context, userID int64, password string, action AuditAction) error {
	// Check before hashing, to fail fast, and again in the writing
	// transaction, in case the policy or the user's email changed between.
	err := w.view(ctx, func(tx store.Tx) error {
		_, err := w.checkNewPassword(tx, userID, password)
		return err
	})
	if err != nil {
		return fromStore(err, "user")
	}
	encoded, err := w.svc.newPasswordHash(ctx, password, nil)
	if err != nil {
		return err
	}
	now := w.svc.timestamp()
	err = w.update(ctx, func(tx store.Tx) error {
		rec, err := w.checkNewPassword(tx, userID, password)
		if err != nil {
			return err
		}
		rec.PasswordHash, rec.UpdatedAt, rec.Version = encoded, now, newVersion(rec.Version)
		if err := tx.PutUser(w.slug, rec); err != nil {
			return err
		}
		// That the password changed, never to what: no changes at all.
		if err := w.audit(ctx, tx, auditEntry{action: action, target: userTarget(rec)}); err != nil {
			return err
		}
		return w.emit(tx, EventUserPasswordChanged, userIDEvent{UserID: userID})
	})
	return fromStore(err, "user")
}

// checkNewPassword returns the user's record if password satisfies the
// workspace's policy for that user.
func (w *Workspace) checkNewPassword(tx store.Tx, userID int64, password string) (store.User, error) {
	rec, err := w.user(tx, userID)
	if err != nil {
		return store.User{}, err
	}
	settings, err := w.settings(tx)
	if err != nil {
		return store.User{}, err
	}
	var p problems
	if password == "" {
		p.add("password", RuleRequired, "is required")
	} else {
		settings.PasswordPolicy.check(&p, password, rec.Username, rec.Email)
	}
	return rec, p.err("invalid password")
}
