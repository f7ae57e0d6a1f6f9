package identity

import (
	"time"

	"github.com/identitylib/identity/store"
)

// Reasons a grant is revoked, as token.refresh_reused and the store
// record them.
const (
	revokedByClient      = "revoked"
	revokedCodeReused    = "code_reused"
	revokedRefreshReused = "refresh_reused"
	revokedUserDisabled  = "user_disabled"
	revokedLogout        = "logout"
)

// revokeGrant revokes a grant that is not revoked; an empty id or an
// unknown grant is nothing to do.
func (w *Workspace) revokeGrant(tx store.Tx, id, reason string, now time.Time) error {
	if id == "" {
		return nil
	}
	g, err := tx.Grant(w.slug, id)
	if isNotFound(err) {
		return nil
	}
	if err != nil || !g.RevokedAt.IsZero() {
		return err
	}
	g.RevokedAt, g.RevokeReason = now, reason
	return tx.PutGrant(w.slug, g)
}

// revokeUserGrants revokes every live grant of a user, or only those of
// one session when sessionID is set.
func (w *Workspace) revokeUserGrants(tx store.Tx, userID int64, sessionID, reason string, now time.Time) error {
	grants, err := tx.UserGrants(w.slug, userID)
	if err != nil {
		return err
	}
	for _, g := range grants {
		if g.RevokedAt.IsZero() && now.Before(g.ExpiresAt) && (sessionID == "" || g.SessionID == sessionID) {
			if err := w.revokeGrant(tx, g.ID, reason, now); err != nil {
				return err
			}
		}
	}
	return nil
}
