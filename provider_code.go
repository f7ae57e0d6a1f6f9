package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"

	"github.com/identitylib/identity/store"
)

// VerifyClient authenticates a client at a token endpoint: with a secret
// like AuthenticateClient; without one the client must be public. Any
// failure is CodeUnauthenticated; an unknown client, or a confidential
// one without its secret, is recorded in the audit trail as
// AuthenticateClient records a wrong secret.
func (p *Provider) VerifyClient(ctx context.Context, clientID, secret string) (OAuthClient, error) {
	w := p.w
	if secret != "" {
		return w.AuthenticateClient(ctx, clientID, secret)
	}
	c, err := w.GetClient(ctx, clientID)
	switch {
	case err == nil && c.Public:
		return c, nil
	case err == nil:
		return OAuthClient{}, w.clientAuthFailed(ctx, clientTarget(c.ID, c.Name), errorf(CodeUnauthenticated, "invalid client"))
	case ErrorCode(err) == CodeNotFound:
		return OAuthClient{}, w.clientAuthFailed(ctx, clientTarget(triedClientID(clientID), ""),
			&Error{Code: CodeUnauthenticated, Message: "invalid client", Err: err})
	}
	return OAuthClient{}, &Error{Code: CodeUnauthenticated, Message: "invalid client", Err: err}
}

// errInvalidGrant is the error of every refused code or refresh token:
// the reason is logged (Err), not told.
func errInvalidGrant(reason string) error {
	return &Error{Code: CodeInvalidGrant, Message: "the grant is invalid, expired or used", Err: errors.New(reason)}
}

// ExchangeCode redeems an authorization code for tokens, for the client
// VerifyClient returned. The code must be the client's, unexpired
// (AuthorizationCodeLifetime), not redeemed before, sent with the same
// redirect URI, and with the PKCE verifier of its challenge; its user
// enabled and its session active. Any failure is CodeInvalidGrant; a code
// presented again also revokes the grant (every token) its first
// redemption created.
func (p *Provider) ExchangeCode(ctx context.Context, client OAuthClient, code, redirectURI, codeVerifier string) (Tokens, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return Tokens{}, err
	}
	if !client.HasGrantType(GrantAuthorizationCode) {
		return Tokens{}, errorf(CodeForbidden, "the client may not use the authorization_code grant")
	}
	id, secret, ok := parseToken(codePrefix, code)
	if !ok {
		return Tokens{}, errInvalidGrant("malformed code")
	}
	return w.redeem(ctx, "code", func(tx store.Tx) (issuance, error) {
		return w.redeemCode(ctx, tx, client, id, secret, redirectURI, codeVerifier)
	})
}

// redeem signs the tokens of a grant that do finds or makes in one
// transaction. do refuses with refuse, so that what it wrote before
// refusing (a replay's revocation) commits.
func (w *Workspace) redeem(ctx context.Context, what string, do func(tx store.Tx) (issuance, error)) (Tokens, error) {
	key, err := w.activeKey(ctx)
	if err != nil {
		return Tokens{}, err
	}
	var is issuance
	err = w.update(ctx, func(tx store.Tx) (err error) {
		is, err = do(tx)
		return err
	})
	if err != nil {
		return Tokens{}, fromStore(err, what)
	}
	return w.sign(key, is)
}

// redeemCode does ExchangeCode's work in tx. Its refusals commit, so that
// what it wrote (a replayed code's revocation and its record,
// token.code_reused) stays.
func (w *Workspace) redeemCode(ctx context.Context, tx store.Tx, client OAuthClient, id, secret, redirectURI, verifier string) (issuance, error) {
	now := w.svc.timestamp()
	rec, err := tx.AuthRequest(w.slug, id)
	switch {
	case isNotFound(err):
		return issuance{}, refuse(errInvalidGrant("unknown code"))
	case err != nil:
		return issuance{}, err
	case len(rec.CodeHash) == 0 || !secretMatches(secret, rec.CodeHash) || rec.ClientID != client.ID:
		return issuance{}, refuse(errInvalidGrant("code not issued, wrong secret or another client's"))
	case !rec.UsedAt.IsZero():
		if err := w.revokeGrant(tx, rec.GrantID, revokedCodeReused, now); err != nil {
			return issuance{}, err
		}
		reused := store.Grant{ID: rec.GrantID, ClientID: rec.ClientID, UserID: rec.UserID}
		if err := w.auditGrant(ctx, tx, AuditTokenCodeReused, reused, false, true); err != nil {
			return issuance{}, err
		}
		return issuance{}, refuse(errInvalidGrant("code used before"))
	case !now.Before(rec.ExpiresAt):
		return issuance{}, refuse(errInvalidGrant("code expired"))
	case rec.RedirectURI != redirectURI:
		return issuance{}, refuse(errInvalidGrant("redirect_uri differs"))
	case !pkceMatches(rec.CodeChallenge, verifier):
		return issuance{}, refuse(errInvalidGrant("code_verifier does not match"))
	}
	session, err := tx.Session(w.slug, rec.SessionID)
	if err != nil && !isNotFound(err) {
		return issuance{}, err
	}
	if err != nil || !sessionFromRecord(session).Active(now) {
		return issuance{}, refuse(errInvalidGrant("session ended"))
	}
	g := store.Grant{ClientID: client.ID, UserID: rec.UserID, SessionID: rec.SessionID, Scopes: rec.Scopes, AuthTime: rec.AuthTime, AMR: rec.AMR}
	is, err := w.newGrant(ctx, tx, client, g, now)
	if ErrorCode(err) == CodeForbidden || ErrorCode(err) == CodeNotFound {
		return issuance{}, refuse(errInvalidGrant("user disabled or gone"))
	}
	if err != nil {
		return issuance{}, err
	}
	is.nonce = rec.Nonce
	rec.UsedAt, rec.GrantID = now, is.grant.ID
	return is, tx.PutAuthRequest(w.slug, rec)
}

// pkceMatches checks a code_verifier against the request's challenge
// (S256). Without a challenge there must be no verifier either.
func pkceMatches(challenge, verifier string) bool {
	if challenge == "" {
		return verifier == ""
	}
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}
