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

// attempt is a reserved password attempt of a user, to be ended with its
// outcome. A nil *attempt (lockout off) ends without writing.
type attempt struct {
	w        *Workspace
	userID   int64
	login    string
	policy   LockoutPolicy
	reserved time.Time // the reservation's lapse time: its identity in Pending
}

// errAttemptsBusy reports that an account has as many attempts in flight
// as its failures leave room for: the caller waits for one to end.
var errAttemptsBusy = errors.New("identity: attempts in flight fill the lockout threshold")

// beginAttempt reserves a password attempt for the user under the
// workspace's lockout policy, before the password is verified. A locked
// user is refused with CodeLocked and login.failed (reason "locked"), in
// the transaction that decides it. When the failures counted and the
// attempts in flight reach the threshold, it returns errAttemptsBusy and
// reserves nothing: the attempts in flight may lock the account, or
// succeed and reset the count, and the caller waits to see which. A lock
// that has ended is cleared here, with user.unlocked (by "expiry"). With
// lockout off it returns nil.
func (w *Workspace) beginAttempt(ctx context.Context, userID int64, login string) (*attempt, error) {
	var a *attempt
	err := w.update(ctx, func(tx store.Tx) error {
		a = nil
		set, err := w.settings(tx)
		if err != nil || set.Lockout.Disabled {
			return err
		}
		now := w.svc.timestamp()
		st, changed, err := w.admitAttempt(tx, userID, login, set.Lockout, now)
		switch {
		case err == nil:
			a = &attempt{w: w, userID: userID, login: login, policy: set.Lockout, reserved: now.Add(attemptReservation)}
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

// admitAttempt reads the user's lockout state in tx for an attempt at now
// (reservations that lapsed dropped, a lock whose time is over cleared
// with user.unlocked) and says whether the attempt may go on: nil, or a
// refusal (see refuse) that keeps what was written: errLocked, with
// login.failed (reason "locked"), for a locked user; errAttemptsBusy while
// the failures counted and the attempts in flight fill the threshold. Any
// other error fails the transaction. changed reports whether st differs
// from what is stored; the caller stores it.
func (w *Workspace) admitAttempt(tx store.Tx, userID int64, login string, policy LockoutPolicy, now time.Time) (st store.LoginAttempts, changed bool, err error) {
	if st, changed, err = w.loginAttempts(tx, userID, now); err != nil {
		return st, false, err
	}
	if !st.LockedUntil.IsZero() && !now.Before(st.LockedUntil) {
		if st, err = w.endExpiredLock(tx, st, now); err != nil {
			return st, false, err
		}
		changed = true
	}
	switch {
	case now.Before(st.LockedUntil):
		if err := w.emitLoginFailed(tx, login, loginLocked, userID); err != nil {
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
func (w *Workspace) reserveAttempt(ctx context.Context, userID int64, login string, waited *time.Duration) (*attempt, error) {
	var a *attempt
	err := waitForRoom(ctx, waited, func() (err error) {
		a, err = w.beginAttempt(ctx, userID, login)
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

// endExpiredLock clears a lock whose time is over, with user.unlocked.
func (w *Workspace) endExpiredLock(tx store.Tx, st store.LoginAttempts, now time.Time) (store.LoginAttempts, error) {
	if st.LockedUntil.IsZero() || now.Before(st.LockedUntil) {
		return st, nil
	}
	st.Failures, st.LockedUntil = 0, time.Time{}
	return st, w.emit(tx, EventUserUnlocked, userUnlockedEvent{UserID: st.UserID, By: unlockedByExpiry})
}

// succeeded ends an attempt whose password was right: the count resets.
// If the account was locked meanwhile (by attempts that failed while this
// one was verified), the attempt is refused for the lock after all.
func (a *attempt) succeeded(ctx context.Context) error {
	return a.end(ctx, func(tx store.Tx, st *store.LoginAttempts, now time.Time) error {
		if now.Before(st.LockedUntil) {
			return refuse(errLocked(st.LockedUntil))
		}
		st.Failures = 0
		return nil
	})
}

// failed ends an attempt whose password was wrong (reason says how, for
// login.failed): the count grows, and reaching the threshold locks the
// account, with user.locked. It returns the error the login gets.
func (a *attempt) failed(ctx context.Context, reason string) error {
	err := a.end(ctx, func(tx store.Tx, st *store.LoginAttempts, now time.Time) error {
		return a.w.countFailure(tx, st, a.policy, a.login, reason, now)
	})
	if err != nil {
		return err
	}
	return errInvalidCredentials()
}

// countFailure counts a failed attempt in st (reason says how it failed,
// for login.failed): reaching the threshold locks the account, with
// user.locked.
func (w *Workspace) countFailure(tx store.Tx, st *store.LoginAttempts, policy LockoutPolicy, login, reason string, now time.Time) error {
	st.Failures++
	if st.Failures >= policy.threshold() && !now.Before(st.LockedUntil) {
		st.LockedUntil = now.Add(policy.duration())
		noteLocked(tx)
		if err := w.emit(tx, EventUserLocked, userLockedEvent{UserID: st.UserID, Until: st.LockedUntil}); err != nil {
			return err
		}
	}
	return w.emitLoginFailed(tx, login, reason, st.UserID)
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
		st, _, err := a.w.loginAttempts(tx, a.userID, now)
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

// emitLoginFailed records login.failed in tx.
func (w *Workspace) emitLoginFailed(tx store.Tx, login, reason string, userID int64) error {
	noteSignIn(tx, reason)
	return w.emit(tx, EventLoginFailed, loginFailedEvent{Login: triedLogin(login), Reason: reason, UserID: userID})
}

// UnlockUser ends the user's lock at once and clears its count of failed
// attempts, with user.unlocked (by "admin") when it was locked. Unlocking
// a user that is not locked succeeds and emits nothing. An unknown user is
// CodeNotFound.
func (w *Workspace) UnlockUser(ctx context.Context, userID int64) error {
	err := w.update(ctx, func(tx store.Tx) error {
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		return w.endLockout(tx, userID, unlockedByAdmin, w.svc.timestamp())
	})
	return fromStore(err, "user")
}

// endLockout ends the user's lock in tx and clears its count of failed
// attempts, with user.unlocked (by the reason) when it was locked.
// Attempts in flight keep their reservations.
func (w *Workspace) endLockout(tx store.Tx, userID int64, by string, now time.Time) error {
	st, _, err := w.loginAttempts(tx, userID, now)
	if err != nil {
		return err
	}
	locked := now.Before(st.LockedUntil)
	if st.Failures == 0 && st.LockedUntil.IsZero() {
		return nil
	}
	if st, err = w.endExpiredLock(tx, st, now); err != nil {
		return err
	}
	st.Failures, st.LockedUntil = 0, time.Time{}
	if err := tx.PutLoginAttempts(w.slug, st); err != nil {
		return err
	}
	if !locked {
		return nil
	}
	return w.emit(tx, EventUserUnlocked, userUnlockedEvent{UserID: userID, By: by})
}
