package identity

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// Lockout defaults and bounds.
const (
	// DefaultLockoutThreshold is how many consecutive failed attempts lock
	// an account when LockoutPolicy.Threshold is zero.
	DefaultLockoutThreshold = 10
	// DefaultLockoutDuration is how long a lock lasts when
	// LockoutPolicy.Duration is zero.
	DefaultLockoutDuration = 15 * time.Minute
	// MaxLockoutThreshold bounds LockoutPolicy.Threshold.
	MaxLockoutThreshold = 1000
	// MaxLockoutDuration bounds LockoutPolicy.Duration.
	MaxLockoutDuration = 30 * 24 * time.Hour
	// attemptReservation is how long a reserved attempt counts while its
	// verification runs. A process that dies mid-verification leaves its
	// reservation, which lapses after this; a verification that waits
	// longer than this for the hashing budget loses its place in the count.
	attemptReservation = 5 * time.Minute
)

// LockoutPolicy is a workspace's rule against password guessing: after
// Threshold consecutive failed attempts (a wrong password) an account is
// locked for Duration; a locked account is refused without computing a
// hash; a success resets the count. The zero value is the default policy:
// on, 10 attempts, 15 minutes.
//
// The count is exact under any concurrency and across processes: an
// attempt is reserved in the store before its password is verified, and
// once the failures counted plus the attempts in flight reach the
// threshold, further attempts wait until one in flight ends (a success
// resets the count, a failure may lock the account), so at most Threshold
// verifications run for an account per lock window however many attempts
// arrive at once, and concurrent right passwords are never refused.
type LockoutPolicy struct {
	// Disabled turns lockout off for the workspace. Default false: on.
	Disabled bool `json:"disabled,omitempty"`
	// Threshold is how many consecutive failed attempts lock an account:
	// 1 to MaxLockoutThreshold; 0 means DefaultLockoutThreshold.
	Threshold int `json:"threshold,omitempty"`
	// Duration is how long a lock lasts: 1 second to MaxLockoutDuration,
	// whole seconds; 0 means DefaultLockoutDuration.
	Duration time.Duration `json:"duration,omitempty"`
}

func (p LockoutPolicy) threshold() int {
	if p.Threshold == 0 {
		return DefaultLockoutThreshold
	}
	return p.Threshold
}

func (p LockoutPolicy) duration() time.Duration {
	if p.Duration == 0 {
		return DefaultLockoutDuration
	}
	return p.Duration
}

// validate adds the policy's problems to pr.
func (p LockoutPolicy) validate(pr *problems) {
	if p.Threshold < 0 || p.Threshold > MaxLockoutThreshold {
		pr.add("lockout.threshold", RuleRange, "must be between 1 and %d (0 for the default, %d)", MaxLockoutThreshold, DefaultLockoutThreshold)
	}
	if p.Duration != 0 && (p.Duration < time.Second || p.Duration > MaxLockoutDuration || p.Duration%time.Second != 0) {
		pr.add("lockout.duration", RuleRange, "must be whole seconds between 1s and %s (0 for the default, %s)", MaxLockoutDuration, DefaultLockoutDuration)
	}
}

// Reasons a lock ends, as user.unlocked reports them.
const (
	unlockedByExpiry        = "expiry"
	unlockedByAdmin         = "admin"
	unlockedByPasswordReset = "password_reset"
)

// errLocked is the error of an attempt refused for the lock.
func errLocked(until time.Time) error {
	return &Error{Code: CodeLocked, Message: "the account is locked after too many failed attempts", LockedUntil: until}
}

// attempter is whom an attempt (a password or a second-factor code) is
// made for, as login.failed and the audit trail name them.
type attempter struct {
	// login is the identifier tried, for login.failed.
	login string
	// user is the user the login names; ID 0 when none does.
	user store.User
	// action is what the audit trail records a refusal as:
	// sign_in.failed for a sign-in, or the action the attempt was for
	// (password.changed for ChangePassword's current password).
	action AuditAction
	// reason is the reason a failed check of codeAttempt is recorded
	// with; "" for wrong_code.
	reason string
}

// target is the target of the attempt's audit records: the user, or,
// when no user has the login, a user without id shown as the login
// tried, cut as login.failed cuts it.
func (a attempter) target() AuditTarget {
	if a.user.ID == 0 {
		return AuditTarget{Kind: TargetUser, Display: triedLogin(a.login)}
	}
	return userTarget(a.user)
}

// attemptFailed records a refused attempt in tx: login.failed with the
// reason (when an endpoint subscribes), the outcome for the observer, and
// the audit record, a failure with the reason.
func (w *Workspace) attemptFailed(ctx context.Context, tx store.Tx, who attempter, reason string) error {
	noteSignIn(tx, reason)
	if err := w.emit(tx, EventLoginFailed, loginFailedEvent{Login: triedLogin(who.login), Reason: reason, UserID: who.user.ID}); err != nil {
		return err
	}
	return w.auditRefused(ctx, tx, who, reason)
}

// auditRefused writes the audit record of a refused attempt in tx.
func (w *Workspace) auditRefused(ctx context.Context, tx store.Tx, who attempter, reason string) error {
	return w.audit(ctx, tx, auditEntry{action: who.action, target: who.target(), failure: true, reason: reason})
}

// attempt is a reserved password attempt of a user, to be ended with its
// outcome. A nil *attempt (lockout off) ends without writing.
type attempt struct {
	w        *Workspace
	who      attempter
	policy   LockoutPolicy
	reserved time.Time // the reservation's lapse time: its identity in Pending
}

// errAttemptsBusy reports that an account has as many attempts in flight
// as its failures leave room for: the caller waits for one to end.
var errAttemptsBusy = errors.New("identity: attempts in flight fill the lockout threshold")

// beginAttempt reserves a password attempt for the user who.user under
// the workspace's lockout policy, before the password is verified. A
// locked user is refused with CodeLocked, login.failed (reason "locked")
// and its audit record, in the transaction that decides it. When the
// failures counted and the attempts in flight reach the threshold, it
// returns errAttemptsBusy and reserves nothing: the attempts in flight
// may lock the account, or succeed and reset the count, and the caller
// waits to see which. A lock that has ended is cleared here, with
// user.unlocked (by "expiry"). With lockout off it returns nil.
func (w *Workspace) beginAttempt(ctx context.Context, who attempter) (*attempt, error) {
	var a *attempt
	err := w.update(ctx, func(tx store.Tx) error {
		a = nil
		set, err := w.settings(tx)
		if err != nil || set.Lockout.Disabled {
			return err
		}
		now := w.svc.timestamp()
		st, changed, err := w.admitAttempt(ctx, tx, who, set.Lockout, now)
		switch {
		case err == nil:
			a = &attempt{w: w, who: who, policy: set.Lockout, reserved: now.Add(attemptReservation)}
			st.Pending = append(st.Pending, a.reserved)
			changed = true
		case !isRefusal(err):
			return err
		}
		if changed {
			if err := tx.PutLoginAttempts(w.slug, st); err != nil {
				return err
			}
		}
		return err
	})
	return a, attemptError(err)
}

// attemptError is the error of a transaction that admits an attempt:
// errAttemptsBusy as it is, for waitForRoom, and the others as the
// library reports them.
func attemptError(err error) error {
	if errors.Is(err, errAttemptsBusy) {
		return err
	}
	return fromStore(err, "user")
}

// admitAttempt reads the lockout state of the user who.user in tx for an
// attempt at now (reservations that lapsed dropped, a lock whose time is
// over cleared with user.unlocked) and says whether the attempt may go
// on: nil, or a refusal (see refuse) that keeps what was written:
// errLocked, with login.failed (reason "locked") and its audit record, for
// a locked user; errAttemptsBusy while the failures counted and the
// attempts in flight fill the threshold. Any other error fails the
// transaction. changed reports whether st differs from what is stored;
// the caller stores it.
func (w *Workspace) admitAttempt(ctx context.Context, tx store.Tx, who attempter, policy LockoutPolicy, now time.Time) (st store.LoginAttempts, changed bool, err error) {
	if st, changed, err = w.loginAttempts(tx, who.user.ID, now); err != nil {
		return st, false, err
	}
	if !st.LockedUntil.IsZero() && !now.Before(st.LockedUntil) {
		if st, err = w.endExpiredLock(ctx, tx, st, who.user, now); err != nil {
			return st, false, err
		}
		changed = true
	}
	switch {
	case now.Before(st.LockedUntil):
		if err := w.attemptFailed(ctx, tx, who, loginLocked); err != nil {
			return st, changed, err
		}
		return st, changed, refuse(errLocked(st.LockedUntil))
	case st.Failures+len(st.Pending) >= policy.threshold():
		return st, changed, refuse(errAttemptsBusy)
	}
	return st, changed, nil
}

// Waits of an attempt for room among the attempts in flight: they end in
// about the time of one verification, and other processes' ends are seen
// only by reading the store again.
const (
	firstAttemptWait = 5 * time.Millisecond
	maxAttemptWait   = 250 * time.Millisecond
)

// reserveAttempt is beginAttempt, waiting while the attempts in flight
// fill the threshold, until one of them ends or ctx does (its error is
// returned as it is). The time waited is added to *waited when waited is
// not nil.
func (w *Workspace) reserveAttempt(ctx context.Context, who attempter, waited *time.Duration) (*attempt, error) {
	var a *attempt
	err := waitForRoom(ctx, waited, func() (err error) {
		a, err = w.beginAttempt(ctx, who)
		return err
	})
	return a, err
}

// waitForRoom calls try until it returns anything but errAttemptsBusy,
// waiting longer between calls each time (up to maxAttemptWait), or until
// ctx ends (its error is returned as it is). The time waited is added to
// *waited when waited is not nil.
func waitForRoom(ctx context.Context, waited *time.Duration, try func() error) error {
	wait := firstAttemptWait
	for {
		err := try()
		if !errors.Is(err, errAttemptsBusy) {
			return err
		}
		began := time.Now()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if waited != nil {
			*waited += time.Since(began)
		}
		wait = min(2*wait, maxAttemptWait)
	}
}

// loginAttempts reads a user's lockout state, without the reservations
// that have lapsed; changed reports whether some had.
func (w *Workspace) loginAttempts(tx store.Tx, userID int64, now time.Time) (st store.LoginAttempts, changed bool, err error) {
	st, err = tx.LoginAttempts(w.slug, userID)
	if isNotFound(err) {
		return store.LoginAttempts{UserID: userID}, false, nil
	}
	if err != nil {
		return store.LoginAttempts{}, false, err
	}
	n := len(st.Pending)
	st.Pending = slices.DeleteFunc(st.Pending, func(t time.Time) bool { return !now.Before(t) })
	return st, len(st.Pending) != n, nil
}

// endExpiredLock clears a lock of the user u whose time is over, with
// user.unlocked and the audit record account.unlocked (reason "expiry",
// the system's doing).
func (w *Workspace) endExpiredLock(ctx context.Context, tx store.Tx, st store.LoginAttempts, u store.User, now time.Time) (store.LoginAttempts, error) {
	if st.LockedUntil.IsZero() || now.Before(st.LockedUntil) {
		return st, nil
	}
	ended := st.LockedUntil
	st.Failures, st.LockedUntil = 0, time.Time{}
	err := w.audit(ctx, tx, auditEntry{action: AuditAccountUnlocked, target: userTarget(u), reason: unlockedByExpiry,
		actor: &Actor{Kind: ActorSystem}, changes: auditChanges{}.set("until", ended, nil)})
	if err != nil {
		return st, err
	}
	return st, w.emit(tx, EventUserUnlocked, userUnlockedEvent{UserID: st.UserID, By: unlockedByExpiry})
}

// succeeded ends an attempt whose password was right: the count resets,
// and then, unless nil, writes in the same transaction what the outcome
// writes (its audit record, or the refusal of a right password). If the
// account was locked meanwhile (by attempts that failed while this one
// was verified), the attempt is refused for the lock after all, with its
// audit record (reason "locked").
func (a *attempt) succeeded(ctx context.Context, then func(tx store.Tx) error) error {
	return a.end(ctx, func(tx store.Tx, st *store.LoginAttempts, now time.Time) error {
		if now.Before(st.LockedUntil) {
			if err := a.w.auditRefused(ctx, tx, a.who, loginLocked); err != nil {
				return err
			}
			return refuse(errLocked(st.LockedUntil))
		}
		st.Failures = 0
		if then == nil {
			return nil
		}
		return then(tx)
	})
}

// passed ends the attempt att, whose password was right, as succeeded
// does; with lockout off (att nil) it runs then, unless nil, in a
// transaction of its own.
func (w *Workspace) passed(ctx context.Context, att *attempt, then func(tx store.Tx) error) error {
	if att != nil {
		return att.succeeded(ctx, then)
	}
	if then == nil {
		return nil
	}
	return fromStore(w.update(ctx, then), "user")
}

// failed ends an attempt whose password was wrong (reason says how, for
// login.failed): the count grows, and reaching the threshold locks the
// account, with user.locked; the refusal's audit record commits with the
// count. It returns the error the login gets.
func (a *attempt) failed(ctx context.Context, reason string) error {
	err := a.end(ctx, func(tx store.Tx, st *store.LoginAttempts, now time.Time) error {
		return a.w.countFailure(ctx, tx, st, a.policy, a.who, reason, now)
	})
	if err != nil {
		return err
	}
	return errInvalidCredentials()
}

// countFailure counts a failed attempt of who in st (reason says how it
// failed, for login.failed and the audit record): reaching the threshold
// locks the account, with user.locked and the audit record
// account.locked.
func (w *Workspace) countFailure(ctx context.Context, tx store.Tx, st *store.LoginAttempts, policy LockoutPolicy, who attempter, reason string, now time.Time) error {
	st.Failures++
	if st.Failures >= policy.threshold() && !now.Before(st.LockedUntil) {
		st.LockedUntil = now.Add(policy.duration())
		noteLocked(tx)
		err := w.audit(ctx, tx, auditEntry{action: AuditAccountLocked, target: who.target(),
			changes: auditChanges{}.set("until", nil, st.LockedUntil)})
		if err != nil {
			return err
		}
		if err := w.emit(tx, EventUserLocked, userLockedEvent{UserID: st.UserID, Until: st.LockedUntil}); err != nil {
			return err
		}
	}
	return w.attemptFailed(ctx, tx, who, reason)
}

// abandoned ends an attempt whose password was never verified (its
// context ended while it waited for the hashing budget): the reservation
// is given back and nothing counts.
func (a *attempt) abandoned(ctx context.Context) error {
	return a.end(ctx, func(store.Tx, *store.LoginAttempts, time.Time) error { return nil })
}

// end releases the attempt's reservation and applies change to the state,
// in one transaction. A refusal of change (see refuse) is returned after
// the release commits; another error fails the transaction.
func (a *attempt) end(ctx context.Context, change func(tx store.Tx, st *store.LoginAttempts, now time.Time) error) error {
	if a == nil {
		return nil
	}
	err := a.w.update(ctx, func(tx store.Tx) error {
		now := a.w.svc.timestamp()
		st, _, err := a.w.loginAttempts(tx, a.who.user.ID, now)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(st.Pending, a.reserved.Equal); i >= 0 {
			st.Pending = slices.Delete(st.Pending, i, i+1)
		}
		err = change(tx, &st, now)
		if err != nil && !isRefusal(err) {
			return err
		}
		if err := tx.PutLoginAttempts(a.w.slug, st); err != nil {
			return err
		}
		return err
	})
	return fromStore(err, "user")
}

// UnlockUser ends the user's lock at once and clears its count of failed
// attempts, with user.unlocked (by "admin") when it was locked, and the
// audit record account.unlocked (reason "admin") when it changed either.
// Unlocking a user that is neither locked nor has failures counted
// succeeds and changes nothing. An unknown user is CodeNotFound.
func (w *Workspace) UnlockUser(ctx context.Context, userID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		return w.endLockout(ctx, tx, u, unlockedByAdmin, w.svc.timestamp())
	})
	return fromStore(err, "user")
}

// endLockout ends the lock of the user u in tx and clears its count of
// failed attempts, with user.unlocked (by the reason) when it was locked,
// and the audit record account.unlocked (the reason, the lock's end and
// the count before) when it changed either. Attempts in flight keep their
// reservations.
func (w *Workspace) endLockout(ctx context.Context, tx store.Tx, u store.User, by string, now time.Time) error {
	st, _, err := w.loginAttempts(tx, u.ID, now)
	if err != nil {
		return err
	}
	locked := now.Before(st.LockedUntil)
	if st.Failures == 0 && st.LockedUntil.IsZero() {
		return nil
	}
	if st, err = w.endExpiredLock(ctx, tx, st, u, now); err != nil {
		return err
	}
	if st.Failures == 0 && !locked {
		// Only an expired lock, which endExpiredLock ended and recorded.
		return tx.PutLoginAttempts(w.slug, st)
	}
	var changes auditChanges
	if locked {
		changes = changes.set("until", st.LockedUntil, nil)
	}
	changes = changes.set("failures", st.Failures, 0)
	st.Failures, st.LockedUntil = 0, time.Time{}
	if err := tx.PutLoginAttempts(w.slug, st); err != nil {
		return err
	}
	if err := w.audit(ctx, tx, auditEntry{action: AuditAccountUnlocked, target: userTarget(u), reason: by, changes: changes}); err != nil {
		return err
	}
	if !locked {
		return nil
	}
	return w.emit(tx, EventUserUnlocked, userUnlockedEvent{UserID: u.ID, By: by})
}
