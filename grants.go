package identity

import (
	"context"
	"net/url"
	"slices"
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
// copy.
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
		return w.rotateRefresh(tx, client, id, secret, scopes)
	})
}

// rotateRefresh does RefreshTokens' work in tx. Its refusals commit, so
// that what it wrote (a reuse's revocation) stays.
func (w *Workspace) rotateRefresh(tx store.Tx, client OAuthClient, id, secret string, scopes []string) (issuance, error) {
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
	switch {
	case g.ClientID != client.ID:
		return issuance{}, refuse(errInvalidGrant("another client's refresh token"))
	case !rt.UsedAt.IsZero():
		if err := w.refreshReused(tx, g, now); err != nil {
			return issuance{}, err
		}
		return issuance{}, refuse(errInvalidGrant("refresh token used before"))
	case !g.RevokedAt.IsZero() || !now.Before(g.ExpiresAt) || !now.Before(rt.ExpiresAt):
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
	is, err := w.gatherUser(tx, issuance{grant: g, now: now})
	if ErrorCode(err) == CodeForbidden || ErrorCode(err) == CodeNotFound {
		return issuance{}, refuse(errInvalidGrant("user disabled or gone"))
	}
	if err != nil {
		return issuance{}, err
	}
	rt.UsedAt = now
	if err := tx.PutRefreshToken(w.slug, rt); err != nil {
		return issuance{}, err
	}
	is.refresh, err = w.newRefreshToken(tx, g, now)
	return is, err
}

// refreshReused revokes a grant whose refresh token came back after it
// was used, and emits token.refresh_reused.
func (w *Workspace) refreshReused(tx store.Tx, g store.Grant, now time.Time) error {
	if !g.RevokedAt.IsZero() {
		return nil
	}
	if err := w.revokeGrant(tx, g.ID, revokedRefreshReused, now); err != nil {
		return err
	}
	return w.emit(tx, EventTokenRefreshReused, refreshReusedEvent{GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID})
}

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

// ExchangeClientCredentials issues a confidential client an access token
// for itself (the client_credentials grant): no user, no user claims, no
// ID or refresh token, sub is the client's id. The client must have the
// grant (CodeForbidden). Scopes name user data, so none is granted:
// scopes is accepted for the protocol's sake and ignored.
func (p *Provider) ExchangeClientCredentials(ctx context.Context, client OAuthClient, scopes []string) (Tokens, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return Tokens{}, err
	}
	if client.Public || !client.HasGrantType(GrantClientCredentials) {
		return Tokens{}, errorf(CodeForbidden, "the client may not use the client_credentials grant")
	}
	key, err := w.activeKey(ctx)
	if err != nil {
		return Tokens{}, err
	}
	var is issuance
	err = w.update(ctx, func(tx store.Tx) (err error) {
		if _, err := tx.OAuthClient(w.slug, client.ID); err != nil {
			return err
		}
		is, err = w.newGrant(tx, client, store.Grant{ClientID: client.ID, Scopes: []string{}}, w.svc.timestamp())
		return err
	})
	if err != nil {
		return Tokens{}, fromStore(err, "client")
	}
	return w.sign(key, is)
}

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
		return w.revokeGrant(tx, g.ID, revokedByClient, now)
	})
	return fromStore(err, "token")
}

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

// GetUserInfo returns the claims of the user an access token speaks for
// (the OpenID Connect GetUserInfo endpoint), as they are now: sub; name,
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
		_, mapped, err := w.mappedClaims(tx, u.ID)
		if err != nil {
			return err
		}
		info = map[string]any{}
		for k, v := range mapped {
			info[k] = v
		}
		for k, v := range standardClaims(u, at.Scopes) {
			info[k] = v
		}
		info["sub"] = at.Subject
		return nil
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return info, nil
}

// EndSessionRequest is an RP-initiated logout request (OpenID Connect
// RP-Initiated Logout 1.0), with the session token of the provider's
// cookie if the browser sent one.
type EndSessionRequest struct {
	IDTokenHint           string
	ClientID              string
	PostLogoutRedirectURI string
	State                 string
	SessionToken          string
}

// EndSession logs a user out: it revokes the session of the cookie's
// token, or else the one the ID token hint names, with session.revoked,
// and revokes the grants issued in that session. It returns where to send
// the browser: PostLogoutRedirectURI with State when given, which must be
// registered exactly for the client (ClientID or the hint's audience;
// CodeInvalid on "post_logout_redirect_uri" otherwise: show it, do not
// redirect), or "" for a signed-out page. Logging out without a session
// succeeds.
//
// A hint must verify against the workspace's published keys (CodeInvalid
// on "id_token_hint" otherwise): it may have expired, but a hint signed
// by a key retired and then removed (when every token it signed had
// expired) no longer verifies, and neither does an unsigned or forged
// one, since its sid would name a session to end. A client then logs out
// without a hint: the browser's cookie still names the session.
func (p *Provider) EndSession(ctx context.Context, req EndSessionRequest) (string, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return "", err
	}
	var redirect string
	err := w.update(ctx, func(tx store.Tx) error {
		now := w.svc.timestamp()
		clientID, sessionID, err := w.logoutHint(tx, req, now)
		if err != nil {
			return err
		}
		if redirect, err = w.logoutRedirect(tx, clientID, req); err != nil {
			return err
		}
		if id, secret, ok := parseToken(sessionPrefix, req.SessionToken); ok {
			if rec, err := tx.Session(w.slug, id); err == nil && secretMatches(secret, rec.SecretHash) {
				sessionID = rec.ID
			}
		}
		if sessionID == "" {
			return nil
		}
		rec, err := tx.Session(w.slug, sessionID)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := w.revokeSession(tx, rec, revokedLogout, now); err != nil {
			return err
		}
		return w.revokeUserGrants(tx, rec.UserID, rec.ID, revokedLogout, now)
	})
	if err != nil {
		return "", fromStore(err, "session")
	}
	return redirect, nil
}

// logoutHint checks an ID token hint, if any, and returns its client and
// session. A ClientID that is not the hint's audience is CodeInvalid.
func (w *Workspace) logoutHint(tx store.Tx, req EndSessionRequest, now time.Time) (clientID, sessionID string, err error) {
	if req.IDTokenHint == "" {
		return req.ClientID, "", nil
	}
	c, err := w.verifySignature(tx, req.IDTokenHint, idTokenType, time.Time{})
	if err != nil {
		if ErrorCode(err) == CodeUnauthenticated {
			var pr problems
			pr.add("id_token_hint", RuleFormat, "is not an ID token of this workspace")
			return "", "", pr.err("invalid id_token_hint")
		}
		return "", "", err
	}
	aud := c.str("aud")
	if aud == "" || req.ClientID != "" && req.ClientID != aud {
		var pr problems
		pr.add("client_id", RuleUnknown, "is not the audience of id_token_hint")
		return "", "", pr.err("client_id does not match id_token_hint")
	}
	return aud, c.str("sid"), nil
}

// logoutRedirect returns the post-logout redirect, checked against the
// client's registered URIs.
func (w *Workspace) logoutRedirect(tx store.Tx, clientID string, req EndSessionRequest) (string, error) {
	if req.PostLogoutRedirectURI == "" {
		return "", nil
	}
	var p problems
	c, err := tx.OAuthClient(w.slug, clientID)
	if err != nil && !isNotFound(err) {
		return "", err
	}
	if err != nil || !slices.Contains(c.PostLogoutRedirectURIs, req.PostLogoutRedirectURI) {
		p.add("post_logout_redirect_uri", RuleUnknown, "is not registered for the client")
		return "", p.err("post_logout_redirect_uri is not registered for the client")
	}
	return withQuery(req.PostLogoutRedirectURI, url.Values{"state": {req.State}}), nil
}

// withQuery returns uri with the non-empty params added to its query.
func withQuery(uri string, params url.Values) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Add(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
