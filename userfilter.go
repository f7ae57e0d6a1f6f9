package identity

import (
	"context"
	"strconv"
	"time"

	"github.com/identitylib/identity/store"
)

// UserFilter selects users by their state, for ListUsersFiltered. The
// conditions that are set must all hold; the zero value keeps every
// user.
type UserFilter struct {
	// Search, when set, narrows the scan to the users ListUsers finds
	// with it: a case-insensitive prefix of username, email or full name.
	Search string
	// Disabled keeps the disabled users.
	Disabled bool
	// Locked keeps the users whose account is locked now (see
	// GetLockState). Alone, ListLockedUsers finds them without a scan.
	Locked bool
	// MFAEnrolled keeps the users with a confirmed second factor.
	MFAEnrolled bool
	// EmailUnverified keeps the users whose email is not verified.
	EmailUnverified bool
}

// UserScanPage is one call of ListUsersFiltered.
type UserScanPage struct {
	// Items are the users of the examined stretch that the filter keeps,
	// in ascending id order, never nil.
	Items []User `json:"items"`
	// Examined counts the users this call looked at: at most
	// UserScanBatch.
	Examined int `json:"examined"`
	// Total counts the users the scan goes over: the workspace's, or the
	// search's matches.
	Total int `json:"total"`
	// HasMore reports that users are left to examine: call again with
	// NextCursor, even when Items is short or empty.
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// UserScanBatch is how many users one call of ListUsersFiltered examines
// at most.
const UserScanBatch = 1000

// userScanChunk is how many users ListUsersFiltered reads from the store
// at once, so that a page filled early reads little past it.
const userScanChunk = 200

// ListUsersFiltered returns the users that match filter, in ascending id
// order, by a paged scan: the stores index users by id, username, email,
// full name and attribute value, not by state (disabled, locked, second
// factor, verified email), and an index kept for each state would cost
// every write of a user; so the scan walks the users (or the search's
// matches) in id order and examines at most UserScanBatch (1,000) of
// them per call, whatever the workspace's size (a call costs about what
// a page of 1,000 users does). A call returns the matches among the
// users it examined, up to the page's Limit, which may be fewer than the
// limit or none at all while HasMore says that users are left: call
// again with NextCursor. The cursor is a position in the list in id
// order, like an offset: users created meanwhile are reached at the end,
// and a deletion before the cursor moves the scan by one user. An
// invalid filter or page is CodeInvalid naming "search", "cursor" or
// "limit".
func (w *Workspace) ListUsersFiltered(ctx context.Context, filter UserFilter, page *ScanOptions) (UserScanPage, error) {
	var p problems
	limit := page.resolve(&p)
	offset := 0
	if page != nil && page.Cursor != "" {
		n, err := strconv.Atoi(page.Cursor)
		if err != nil || n < 0 || strconv.Itoa(n) != page.Cursor {
			p.add("cursor", RuleFormat, "must be the nextCursor of a page")
		}
		offset = n
	}
	checkUTF8(&p, "search", filter.Search)
	if err := p.err("invalid user scan"); err != nil {
		return UserScanPage{}, err
	}
	var out UserScanPage
	err := w.view(ctx, func(tx store.Tx) error {
		out = UserScanPage{Items: []User{}}
		var policy *LockoutPolicy
		if filter.Locked {
			set, err := w.settings(tx)
			if err != nil {
				return err
			}
			policy = &set.Lockout
		}
		now := w.svc.timestamp()
		pos := offset
		for out.Examined < UserScanBatch && len(out.Items) < limit {
			n := min(userScanChunk, UserScanBatch-out.Examined)
			users, total, err := tx.Users(w.slug, store.UserQuery{Prefix: filter.Search, Offset: pos, Limit: n})
			if err != nil {
				return err
			}
			out.Total = total
			for _, u := range users {
				if len(out.Items) == limit {
					break
				}
				out.Examined++
				pos++
				ok, err := w.keeps(tx, filter, policy, u, now)
				if err != nil {
					return err
				}
				if ok {
					out.Items = append(out.Items, userFromRecord(u))
				}
			}
			if len(users) < n {
				break
			}
		}
		if pos < out.Total {
			out.HasMore, out.NextCursor = true, strconv.Itoa(pos)
		}
		return nil
	})
	if err != nil {
		return UserScanPage{}, fromStore(err, "workspace")
	}
	return out, nil
}

// keeps reports whether filter keeps the user u at now; policy is the
// workspace's lockout policy when filter.Locked is set.
func (w *Workspace) keeps(tx store.Tx, filter UserFilter, policy *LockoutPolicy, u store.User, now time.Time) (bool, error) {
	switch {
	case filter.Disabled && u.Enabled,
		filter.MFAEnrolled && !u.MFAEnabled,
		filter.EmailUnverified && u.EmailVerified:
		return false, nil
	case !filter.Locked:
		return true, nil
	case policy.Disabled:
		return false, nil
	}
	st, _, err := w.loginAttempts(tx, u.ID, now)
	if err != nil {
		return false, err
	}
	return now.Before(st.LockedUntil), nil
}
