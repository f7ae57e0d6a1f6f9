package identity

import (
	"context"
	"strconv"
	"strings"
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

// grantTarget is the target of an audit record about a grant's tokens:
// its user, or its client for a client's own grant (no user). A user or
// client gone meanwhile is named by its id alone.
func (w *Workspace) grantTarget(tx store.Tx, userID int64, clientID string) (AuditTarget, error) {
	if userID == 0 {
		c, err := tx.OAuthClient(w.slug, clientID)
		if isNotFound(err) {
			return clientTarget(clientID, ""), nil
		}
		if err != nil {
			return AuditTarget{}, err
		}
		return clientTarget(c.ID, c.Name), nil
	}
	u, err := tx.User(w.slug, userID)
	if isNotFound(err) {
		return AuditTarget{Kind: TargetUser, ID: strconv.FormatInt(userID, 10)}, nil
	}
	if err != nil {
		return AuditTarget{}, err
	}
	return userTarget(u), nil
}

// auditGrant records action on the tokens of a grant in tx: on the
// grant's target (grantTarget), with its client and id, and its scopes
// (space-separated, as OAuth writes them) when withScope and it has any.
func (w *Workspace) auditGrant(ctx context.Context, tx store.Tx, action AuditAction, g store.Grant, withScope, failure bool) error {
	target, err := w.grantTarget(tx, g.UserID, g.ClientID)
	if err != nil {
		return err
	}
	changes := auditChanges{}.set("clientId", nil, g.ClientID).set("grantId", nil, g.ID)
	if withScope && len(g.Scopes) > 0 {
		changes = changes.set("scope", nil, strings.Join(g.Scopes, " "))
	}
	return w.audit(ctx, tx, auditEntry{action: action, target: target, changes: changes, failure: failure})
}
