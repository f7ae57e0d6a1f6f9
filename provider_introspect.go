package identity

import (
	"context"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// Introspection is what IntrospectToken tells of a token (RFC 7662).
// Only Active is set for a token that is not active.
type Introspection struct {
	Active bool
	// TokenType is "access_token" or "refresh_token".
	TokenType string
	Scopes    []string
	ClientID  string
	Subject   string
	UserID    int64
	Issuer    string
	// ID is an access token's jti.
	ID        string
	Audience  string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// IntrospectToken tells a confidential client whether a token of the
// workspace is active (RFC 7662): an access token as VerifyAccessToken
// checks it, a refresh token unused, unexpired and of a live grant. A
// public client is CodeForbidden. A token of another workspace, malformed
// or unknown, is simply not active.
func (p *Provider) IntrospectToken(ctx context.Context, client OAuthClient, token string) (Introspection, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return Introspection{}, err
	}
	if client.Public {
		return Introspection{}, errorf(CodeForbidden, "a public client may not introspect tokens")
	}
	var in Introspection
	err := w.view(ctx, func(tx store.Tx) (err error) {
		in, err = w.introspect(tx, token, w.svc.timestamp())
		return err
	})
	if err != nil {
		return Introspection{}, fromStore(err, "token")
	}
	return in, nil
}

func (w *Workspace) introspect(tx store.Tx, token string, now time.Time) (Introspection, error) {
	if id, secret, ok := parseToken(refreshPrefix, token); ok {
		rt, err := tx.RefreshToken(w.slug, id)
		if isNotFound(err) || err == nil && (!secretMatches(secret, rt.SecretHash) || !rt.UsedAt.IsZero() || !now.Before(rt.ExpiresAt)) {
			return Introspection{}, nil
		}
		if err != nil {
			return Introspection{}, err
		}
		g, err := w.liveGrant(tx, rt.GrantID, now)
		if ErrorCode(err) == CodeUnauthenticated {
			return Introspection{}, nil
		}
		if err != nil {
			return Introspection{}, err
		}
		return Introspection{
			Active: true, TokenType: "refresh_token", Scopes: slices.Clone(g.Scopes), ClientID: g.ClientID,
			Subject: subject(g), UserID: g.UserID, Issuer: w.Issuer(), Audience: g.ClientID,
			IssuedAt: rt.CreatedAt, ExpiresAt: rt.ExpiresAt,
		}, nil
	}
	at, err := w.verifyAccess(tx, token, now)
	if ErrorCode(err) == CodeUnauthenticated {
		return Introspection{}, nil
	}
	if err != nil {
		return Introspection{}, err
	}
	return Introspection{
		Active: true, TokenType: "access_token", Scopes: at.Scopes, ClientID: at.ClientID, Subject: at.Subject,
		UserID: at.UserID, Issuer: w.Issuer(), ID: at.ID, Audience: at.ClientID, IssuedAt: at.IssuedAt, ExpiresAt: at.ExpiresAt,
	}, nil
}
