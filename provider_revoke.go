package identity

import (
	"context"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// grantOfToken finds the grant of an access or refresh token of the
// workspace, and what kind of token it is. A token that is not one of
// the workspace's (malformed, unknown, bad signature) reports false.
// Access tokens are recognized even after they expire, so that revoking
// one revokes its family.
func (w *Workspace) grantOfToken(tx store.Tx, token string, now time.Time) (g store.Grant, kind string, ok bool, err error) {
	if id, secret, isRefresh := parseToken(refreshPrefix, token); isRefresh {
		rt, err := tx.RefreshToken(w.slug, id)
		if isNotFound(err) || err == nil && !secretMatches(secret, rt.SecretHash) {
			return store.Grant{}, "", false, nil
		}
		if err != nil {
			return store.Grant{}, "", false, err
		}
		g, err = tx.Grant(w.slug, rt.GrantID)
		return g, "refresh_token", err == nil, err
	}
	// No time checks: expired tokens are still recognized here (and
	// revoke their grant), but never reported active.
	c, err := w.verifySignature(tx, token, accessTokenType, time.Time{})
	if err != nil {
		if ErrorCode(err) == CodeUnauthenticated {
			return store.Grant{}, "", false, nil
		}
		return store.Grant{}, "", false, err
	}
	grantID, _, _ := strings.Cut(c.str("jti"), ".")
	g, err = tx.Grant(w.slug, grantID)
	if isNotFound(err) {
		return store.Grant{}, "", false, nil
	}
	return g, "access_token", err == nil, err
}

// RevokeToken revokes an access or refresh token (RFC 7009) for the
// client VerifyClient returned, and with it its grant: every token issued
// from the same authorization. A token that is not one of the workspace's
// is nothing to revoke (nil, as RFC 7009 asks); another client's token is
// CodeForbidden.
func (p *Provider) RevokeToken(ctx context.Context, client OAuthClient, token string) error {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return err
	}
	err := w.update(ctx, func(tx store.Tx) error {
		now := w.svc.timestamp()
		g, _, ok, err := w.grantOfToken(tx, token, now)
		if err != nil || !ok {
			return err
		}
		if g.ClientID != client.ID {
			return refuse(errorf(CodeForbidden, "the token was issued to another client"))
		}
		if !g.RevokedAt.IsZero() {
			return nil // revoked before: nothing changes
		}
		if err := w.revokeGrant(tx, g.ID, revokedByClient, now); err != nil {
			return err
		}
		return w.auditGrant(ctx, tx, AuditTokenRevoked, g, false, false)
	})
	return fromStore(err, "token")
}
