package identity

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/identitylib/identity/store"
)

// LockState is a user's lockout state, as the workspace's lockout policy
// reads it now.
type LockState struct {
	// Locked reports a lock in force: attempts are refused until
	// LockedUntil.
	Locked bool `json:"locked"`
	// LockedUntil is when the lock ends; zero when not Locked.
	LockedUntil time.Time `json:"lockedUntil,omitzero"`
	// Failures counts the consecutive failed attempts toward Threshold
	// (a lock that has ended counts none: its next attempt starts over).
	Failures int `json:"failures"`
	// Threshold is the workspace's threshold; 0 when lockout is off, in
	// which case nothing is counted or locked.
	Threshold int `json:"threshold"`
}

// GetLockState returns the user's lockout state: whether a lock is in
// force and until when, and the failed attempts counted. It only reads:
// a lock whose time is over is reported as ended, and cleared (with its
// record) by the user's next attempt or UnlockUser. An unknown user is
// CodeNotFound.
func (w *Workspace) GetLockState(ctx context.Context, userID int64) (LockState, error) {
	var out LockState
	err := w.view(ctx, func(tx store.Tx) error {
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		set, err := w.settings(tx)
		if err != nil || set.Lockout.Disabled {
			out = LockState{}
			return err
		}
		st, _, err := w.loginAttempts(tx, userID, w.svc.timestamp())
		if err != nil {
			return err
		}
		out = lockState(st, set.Lockout, w.svc.timestamp())
		return nil
	})
	return out, fromStore(err, "user")
}

// lockState reads st under policy at now.
func lockState(st store.LoginAttempts, policy LockoutPolicy, now time.Time) LockState {
	out := LockState{Failures: st.Failures, Threshold: policy.threshold()}
	switch {
	case now.Before(st.LockedUntil):
		out.Locked, out.LockedUntil = true, st.LockedUntil
	case !st.LockedUntil.IsZero():
		out.Failures = 0 // the lock ended: the next attempt starts over
	}
	return out
}

// LockedUser is a user whose account is locked.
type LockedUser struct {
	User User `json:"user"`
	// LockedAt and LockedUntil are when the lock began and when it ends.
	LockedAt    time.Time `json:"lockedAt"`
	LockedUntil time.Time `json:"lockedUntil"`
}

// ScanOptions says where a scan goes on and how much it returns: a scan
// examines a bounded number of records per call, so a page may hold
// fewer than Limit items and still not be the last one.
type ScanOptions struct {
	// Cursor, when set, is the NextCursor of the page before.
	Cursor string
	// Limit is 1 to MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
}

// resolve validates the page; it returns the limit.
func (pg *ScanOptions) resolve(p *problems) int {
	if pg == nil || pg.Limit == 0 {
		return DefaultPageLimit
	}
	if pg.Limit < 1 || pg.Limit > MaxPageLimit {
		p.add("limit", RuleRange, "must be between 1 and %d", MaxPageLimit)
	}
	return pg.Limit
}

// LockedUserPage is one page of ListLockedUsers.
type LockedUserPage struct {
	// Items is the page, never nil, the latest lock first.
	Items []LockedUser `json:"items"`
	// HasMore reports that the scan has not reached its end: call again
	// with NextCursor, even when Items is short or empty.
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// lockScanBatch is how many account.locked records one call of
// ListLockedUsers examines at most.
const lockScanBatch = 1000

// ListLockedUsers returns the users whose accounts are locked now, the
// latest lock first, without looking at every user: no index of locks
// is kept; the list is read from the audit trail, whose every lock has
// its account.locked record (written in the transaction that locked the
// account) with the lock's end. The scan walks those records of the last
// MaxLockoutDuration (no lock lasts longer), newest first, skips the
// locks that have ended by their recorded end, and keeps the users whose
// lock in force is the one the record made; a user locked several times
// appears once. One call examines at most 1,000 records, so a page may
// hold fewer than the page's Limit (even none) with HasMore set: call
// again with NextCursor. A workspace whose Retention.AuditDays is
// shorter than its locks last loses a lock from this list when the lock's
// record is swept (GetLockState still reports it). An invalid page is
// CodeInvalid naming "cursor" or "limit".
func (w *Workspace) ListLockedUsers(ctx context.Context, page *ScanOptions) (LockedUserPage, error) {
	var p problems
	limit := page.resolve(&p)
	now := w.svc.timestamp()
	q := store.AuditQuery{
		Actions: []string{string(AuditAccountLocked)}, After: auditIDBefore(now.Add(-MaxLockoutDuration)),
		Limit: lockScanBatch + 1, // one more says whether there is more
	}
	if page != nil && page.Cursor != "" {
		if !validAuditID(page.Cursor) {
			p.add("cursor", RuleFormat, "must be the nextCursor of a page")
		}
		q.Before = page.Cursor
	}
	if err := p.err("invalid page"); err != nil {
		return LockedUserPage{}, err
	}
	out := LockedUserPage{Items: []LockedUser{}}
	err := w.view(ctx, func(tx store.Tx) error {
		out = LockedUserPage{Items: []LockedUser{}}
		set, err := w.settings(tx)
		if err != nil || set.Lockout.Disabled {
			return err
		}
		recs, err := tx.AuditRecords(w.slug, q)
		if err != nil {
			return err
		}
		for i, rec := range recs {
			if i == lockScanBatch || len(out.Items) == limit {
				out.HasMore, out.NextCursor = true, recs[i-1].ID
				return nil
			}
			lu, ok, err := w.lockedBy(tx, rec, now)
			if err != nil {
				return err
			}
			if ok {
				out.Items = append(out.Items, lu)
			}
		}
		return nil
	})
	if err != nil {
		return LockedUserPage{}, fromStore(err, "workspace")
	}
	return out, nil
}

// lockedBy reports whether the lock that the account.locked record rec
// recorded is in force at now, and the user it locked.
func (w *Workspace) lockedBy(tx store.Tx, rec store.AuditRecord, now time.Time) (LockedUser, bool, error) {
	r, err := auditFromRecord(w.slug, rec)
	if err != nil {
		return LockedUser{}, false, err
	}
	end, _ := r.Changes["until"].After.(string)
	until, err := time.Parse(time.RFC3339Nano, end)
	if err != nil || !now.Before(until) {
		return LockedUser{}, false, nil // ended by now
	}
	id, err := strconv.ParseInt(r.Target.ID, 10, 64)
	if err != nil || id <= 0 {
		return LockedUser{}, false, nil // no user had the login tried
	}
	st, _, err := w.loginAttempts(tx, id, now)
	if err != nil || !st.LockedUntil.Equal(until) {
		return LockedUser{}, false, err // unlocked since, or locked again later
	}
	u, err := tx.User(w.slug, id)
	if errors.Is(err, store.ErrNotFound) {
		return LockedUser{}, false, nil
	}
	if err != nil {
		return LockedUser{}, false, err
	}
	return LockedUser{User: userFromRecord(u), LockedAt: r.Time, LockedUntil: until}, true, nil
}
