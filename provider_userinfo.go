package identity

import (
	"context"
	"math"

	"github.com/identitylib/identity/store"
)

// GetUserInfo returns the claims of the user an access token speaks for
// (the OpenID Connect UserInfo endpoint), as they are now: sub; name,
// preferred_username and updated_at with the profile scope; email and
// email_verified with the email scope; and every claim mapper with
// IncludeInID whose attribute the user has. The token must verify
// (CodeUnauthenticated) and hold the openid scope (CodeForbidden); a
// client's own token has no user (CodeForbidden).
func (p *Provider) GetUserInfo(ctx context.Context, accessToken string) (map[string]any, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return nil, err
	}
	var info map[string]any
	err := w.view(ctx, func(tx store.Tx) error {
		at, err := w.verifyAccess(tx, accessToken, w.svc.timestamp())
		if err != nil {
			return err
		}
		if at.UserID == 0 || !at.HasScope(ScopeOpenID) {
			return errorf(CodeForbidden, "the token does not grant the openid scope for a user")
		}
		u, err := w.user(tx, at.UserID)
		if err != nil {
			return err
		}
		_, mapped, _, err := w.mappedClaims(tx, u.ID)
		if err != nil {
			return err
		}
		info = map[string]any{}
		for k, v := range mapped {
			info[k] = v
		}
		setStandardClaims(claims(info), u, at.Scopes)
		info["sub"] = at.Subject
		return w.userInfoAccess(tx, at, info)
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return info, nil
}

// userInfoAccess adds to info the access claims the token carries (by its
// scopes or its client's setting), whole: userinfo answers what a token
// may not hold for its size.
func (w *Workspace) userInfoAccess(tx store.Tx, at VerifiedToken, info map[string]any) error {
	client, err := tx.OAuthClient(w.slug, at.ClientID)
	if err != nil && !isNotFound(err) {
		return err
	}
	carry := carriedClaims(at.Scopes, client.Claims)
	if !carry.any() {
		return nil
	}
	acc, err := w.userAccess(tx, at.UserID)
	if err != nil {
		return err
	}
	carry.setAccessClaims(claims(info), acc, math.MaxInt)
	return nil
}
