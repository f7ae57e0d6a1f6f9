package identity

import (
	"context"

	"github.com/identitylib/identity/store"
)

// RevokeUserSessions revokes every active session of the user and the
// grants issued in them, in one transaction, as RevokeSession does for
// each (session.revoked and its audit record per session revoked), and
// returns how many it revoked: an administrator ending everywhere a user
// is signed in (the console's "revoke all"). Sessions already revoked or
// expired are left as they are; a user without an active session
// succeeds with 0. An unknown user is CodeNotFound.
func (w *Workspace) RevokeUserSessions(ctx context.Context, userID int64) (int, error) {
	now := w.svc.timestamp()
	revoked := 0
	err := w.update(ctx, func(tx store.Tx) error {
		revoked = 0
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		sessions, err := tx.UserSessions(w.slug, userID)
		if err != nil {
			return err
		}
		for _, s := range sessions {
			if !sessionFromRecord(s).Active(now) {
				continue
			}
			if err := w.revokeSessionAudited(ctx, tx, s, now); err != nil {
				return err
			}
			revoked++
		}
		return nil
	})
	if err != nil {
		return 0, fromStore(err, "user")
	}
	return revoked, nil
}
