package identity

import (
	"context"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// RefreshTokens exchanges a refresh token for new tokens, for the client
// VerifyClient returned (refresh token rotation): the token presented is
// used up and the result carries its successor. The tokens carry the
// claims the mappers give now: a mapper or attribute deleted since is not
// in them. scopes may narrow the grant's scopes (none means all of them;
// a scope the grant lacks is CodeInvalid on "scope").
//
// A refresh token that is unknown, another client's, expired, of a
// revoked or expired grant, or whose user is disabled is
// CodeInvalidGrant. A refresh token used before is CodeInvalidGrant too,
// and it revokes its grant, every token of the family, and emits
// token.refresh_reused: either the client or an attacker holds a stolen
// copy. The one exception is TokenLifetimes.RefreshReuse (off by
// default): within it of the first exchange, and while the successor has
// not been used, a used token is exchanged again for a new successor, for
// a client whose first answer was lost; the earlier successor then counts
// as used.
func (p *Provider) RefreshTokens(ctx context.Context, client OAuthClient, refreshToken string, scopes []string) (Tokens, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return Tokens{}, err
	}
	if !client.HasGrantType(GrantRefreshToken) {
		return Tokens{}, errorf(CodeForbidden, "the client may not use the refresh_token grant")
	}
	id, secret, ok := parseToken(refreshPrefix, refreshToken)
	if !ok {
		return Tokens{}, errInvalidGrant("malformed refresh token")
	}
	return w.redeem(ctx, "refresh token", func(tx store.Tx) (issuance, error) {
		return w.rotateRefresh(ctx, tx, client, id, secret, scopes)
	})
}

// rotateRefresh does RefreshTokens' work in tx, with the record
// token.refreshed. Its refusals commit, so that what it wrote (a reuse's
// revocation and its record, token.refresh_reused) stays.
func (w *Workspace) rotateRefresh(ctx context.Context, tx store.Tx, client OAuthClient, id, secret string, scopes []string) (issuance, error) {
	now := w.svc.timestamp()
	rt, err := tx.RefreshToken(w.slug, id)
	switch {
	case isNotFound(err):
		return issuance{}, refuse(errInvalidGrant("unknown refresh token"))
	case err != nil:
		return issuance{}, err
	case !secretMatches(secret, rt.SecretHash):
		return issuance{}, refuse(errInvalidGrant("wrong refresh token secret"))
	}
	g, err := tx.Grant(w.slug, rt.GrantID)
	if err != nil {
		return issuance{}, err
	}
	if g.ClientID != client.ID {
		return issuance{}, refuse(errInvalidGrant("another client's refresh token"))
	}
	var superseded *store.RefreshToken // the successor a retry replaces
	if !rt.UsedAt.IsZero() {
		if superseded, err = w.lostAnswer(tx, rt, now); err != nil {
			return issuance{}, err
		}
		if superseded == nil {
			if err := w.refreshReused(ctx, tx, g, now); err != nil {
				return issuance{}, err
			}
			return issuance{}, refuse(errInvalidGrant("refresh token used before"))
		}
	}
	if !g.RevokedAt.IsZero() || !now.Before(g.ExpiresAt) || !now.Before(rt.ExpiresAt) {
		return issuance{}, refuse(errInvalidGrant("grant revoked or expired"))
	}
	if len(scopes) > 0 {
		narrowed := knownScopes(scopes)
		for _, s := range scopes {
			if !slices.Contains(g.Scopes, s) {
				var p problems
				p.add("scope", RuleUnknown, "asks for more than the grant holds")
				return issuance{}, refuse(p.err("scope exceeds the grant"))
			}
		}
		g.Scopes = narrowed
	}
	is, err := w.gatherUser(tx, issuance{grant: g, now: now}, client)
	if ErrorCode(err) == CodeForbidden || ErrorCode(err) == CodeNotFound {
		return issuance{}, refuse(errInvalidGrant("user disabled or gone"))
	}
	if err != nil {
		return issuance{}, err
	}
	if superseded != nil {
		superseded.UsedAt = now
		if err := tx.PutRefreshToken(w.slug, *superseded); err != nil {
			return issuance{}, err
		}
	}
	if rt.UsedAt.IsZero() {
		rt.UsedAt = now
	}
	if is.refresh, rt.SuccessorID, err = w.newRefreshToken(tx, g, now); err != nil {
		return issuance{}, err
	}
	if err := tx.PutRefreshToken(w.slug, rt); err != nil {
		return issuance{}, err
	}
	return is, w.auditGrant(ctx, tx, AuditTokenRefreshed, g, true, false)
}

// lostAnswer returns the successor of a used refresh token when the token
// may be exchanged again because its first answer may have been lost:
// within TokenLifetimes.RefreshReuse of its use, while the successor has
// not been used; nil otherwise. The exchange then supersedes the
// successor (marks it used, so that presenting it later counts as reuse:
// the client retrying is not the one holding it).
func (w *Workspace) lostAnswer(tx store.Tx, rt store.RefreshToken, now time.Time) (*store.RefreshToken, error) {
	if rt.SuccessorID == "" || !now.Before(rt.UsedAt.Add(w.svc.lifetimes.RefreshReuse)) {
		return nil, nil
	}
	next, err := tx.RefreshToken(w.slug, rt.SuccessorID)
	switch {
	case isNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !next.UsedAt.IsZero():
		return nil, nil
	}
	return &next, nil
}

// refreshReused records a refresh token that came back after it was
// used (token.refresh_reused, a failure: every time one comes back), and
// revokes its grant and emits token.refresh_reused unless the grant was
// revoked already.
func (w *Workspace) refreshReused(ctx context.Context, tx store.Tx, g store.Grant, now time.Time) error {
	if err := w.auditGrant(ctx, tx, AuditTokenRefreshReused, g, false, true); err != nil {
		return err
	}
	if !g.RevokedAt.IsZero() {
		return nil
	}
	if err := w.revokeGrant(tx, g.ID, revokedRefreshReused, now); err != nil {
		return err
	}
	return w.emit(tx, EventTokenRefreshReused, refreshReusedEvent{GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID})
}
