package identity

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// VerifiedToken is what VerifyAccessToken learned from a valid access
// token.
type VerifiedToken struct {
	// ID is the token's jti.
	ID string
	// Subject is the sub claim: the user's id in decimal, or the client's
	// id for a token a client obtained for itself.
	Subject string
	// UserID is the user the token speaks for; 0 for a client's own
	// token.
	UserID    int64
	ClientID  string
	Scopes    []string
	SessionID string
	GrantID   string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Groups and Roles are the names the token's groups and roles claims
	// carry (the scopes groups and roles, or the client's Claims), sorted;
	// nil when the token carries no such claim. GroupsOverage and
	// RolesOverage report a token that carries the overage indication
	// instead, for a user with more than Limits.ClaimNames of them: the
	// whole list is then userinfo's.
	Groups        []string
	Roles         []string
	GroupsOverage bool
	RolesOverage  bool
	// Claims are the token's other claims: those of the claim mappers.
	Claims map[string]any
}

// HasScope reports whether the token grants scope.
func (t VerifiedToken) HasScope(scope string) bool { return slices.Contains(t.Scopes, scope) }

// VerifyAccessToken checks an access token issued by the workspace, for
// a program that is its own resource server: the signature against the
// workspace's published keys, the typ header (at+jwt), the issuer, exp
// and nbf (with TokenLeeway), and that its grant is not revoked and its
// user is enabled. Anything else is a CodeUnauthenticated error. A token
// of another workspace fails (another issuer, keys unknown here).
func (w *Workspace) VerifyAccessToken(ctx context.Context, token string) (VerifiedToken, error) {
	if err := w.tokensReady(); err != nil {
		return VerifiedToken{}, err
	}
	var at VerifiedToken
	err := w.view(ctx, func(tx store.Tx) (err error) {
		at, err = w.verifyAccess(tx, token, w.svc.timestamp())
		return err
	})
	if err != nil {
		return VerifiedToken{}, fromStore(err, "token")
	}
	return at, nil
}

// errInvalidToken is what every failed token check returns: the reason
// is not the caller's business.
func errInvalidToken(cause error) error {
	return &Error{Code: CodeUnauthenticated, Message: "invalid token", Err: cause}
}

// verifyAccess checks an access token in tx.
func (w *Workspace) verifyAccess(tx store.Tx, token string, now time.Time) (VerifiedToken, error) {
	c, err := w.verifySignature(tx, token, accessTokenType, now)
	if err != nil {
		return VerifiedToken{}, err
	}
	jti, clientID, sub := c.str("jti"), c.str("client_id"), c.str("sub")
	grantID, _, ok := strings.Cut(jti, ".")
	if !ok || clientID == "" || sub == "" {
		return VerifiedToken{}, errInvalidToken(errors.New("jti, client_id or sub malformed"))
	}
	g, err := w.liveGrant(tx, grantID, now)
	if err != nil {
		return VerifiedToken{}, err
	}
	if g.ClientID != clientID || subject(g) != sub {
		return VerifiedToken{}, errInvalidToken(errors.New("token does not match its grant"))
	}
	at := VerifiedToken{
		ID: jti, Subject: sub, UserID: g.UserID, ClientID: clientID, Scopes: strings.Fields(c.str("scope")),
		SessionID: c.str("sid"), GrantID: g.ID, IssuedAt: c.time("iat"), ExpiresAt: c.time("exp"), Claims: map[string]any{},
	}
	if at.Scopes == nil {
		at.Scopes = []string{}
	}
	at.Groups, at.Roles = c.strings(ScopeGroups), c.strings(ScopeRoles)
	at.GroupsOverage, _ = c["groups_overage"].(bool)
	at.RolesOverage, _ = c["roles_overage"].(bool)
	for k, v := range c {
		if !IsReservedClaim(k) {
			at.Claims[k] = v
		}
	}
	return at, nil
}

// liveGrant returns the grant if it is neither revoked nor expired and
// its user, if any, is enabled.
func (w *Workspace) liveGrant(tx store.Tx, id string, now time.Time) (store.Grant, error) {
	g, err := tx.Grant(w.slug, id)
	if isNotFound(err) {
		return store.Grant{}, errInvalidToken(err)
	}
	if err != nil {
		return store.Grant{}, err
	}
	if !g.RevokedAt.IsZero() || !now.Before(g.ExpiresAt.Add(TokenLeeway)) {
		return store.Grant{}, errInvalidToken(errors.New("grant revoked or expired"))
	}
	if g.UserID != 0 {
		u, err := tx.User(w.slug, g.UserID)
		if isNotFound(err) || err == nil && !u.Enabled {
			return store.Grant{}, errInvalidToken(errors.New("user disabled or gone"))
		}
		if err != nil {
			return store.Grant{}, err
		}
	}
	return g, nil
}

// verifySignature checks a token's signature against the workspace's
// published keys, its typ, issuer and times, and returns its claims. A
// zero now skips the time checks: revocation and logout hints recognize
// expired tokens.
func (w *Workspace) verifySignature(tx store.Tx, token, typ string, now time.Time) (claims, error) {
	keys, err := tx.SigningKeys(w.slug)
	if err != nil {
		return nil, err
	}
	keyFor := func(kid, alg string) (crypto.PublicKey, error) {
		for _, k := range keys {
			if k.ID == kid && k.Algorithm == alg && published(k, now) {
				return w.svc.publicKey(w.slug, k)
			}
		}
		return nil, errors.New("unknown key")
	}
	gotTyp, payload, err := w.svc.tokenSigner.Verify(token, keyFor)
	if err != nil {
		return nil, errInvalidToken(err)
	}
	if !typeIs(gotTyp, typ) {
		return nil, errInvalidToken(errors.New("typ " + gotTyp))
	}
	var c claims
	if json.Unmarshal(payload, &c) != nil || c == nil {
		return nil, errInvalidToken(errors.New("payload is not a JSON object"))
	}
	exp, hasExp := c.number("exp")
	nbf, hasNbf := c.number("nbf")
	iat, hasIat := c.number("iat")
	switch {
	case c.str("iss") != w.Issuer():
		return nil, errInvalidToken(errors.New("issuer"))
	case now.IsZero():
		// The caller asked for no time checks.
	case !hasExp || !now.Before(exp.Add(TokenLeeway)):
		return nil, errInvalidToken(errors.New("expired"))
	case hasNbf && now.Add(TokenLeeway).Before(nbf):
		return nil, errInvalidToken(errors.New("not yet valid"))
	case hasIat && now.Add(TokenLeeway).Before(iat):
		return nil, errInvalidToken(errors.New("issued in the future"))
	}
	return c, nil
}

// strings returns a claim that is an array of strings, or nil when it is
// absent or anything else.
func (c claims) strings(name string) []string {
	list, ok := c[name].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// str returns a string claim, or "" when it is absent or not a string.
func (c claims) str(name string) string {
	s, _ := c[name].(string)
	return s
}

// number returns a NumericDate claim, and false when it is absent or not
// a number.
func (c claims) number(name string) (time.Time, bool) {
	f, ok := c[name].(float64)
	if !ok {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), true
}

// time returns a NumericDate claim, or the zero time.
func (c claims) time(name string) time.Time {
	t, _ := c.number(name)
	return t
}

// typeIs compares a typ header with want as RFC 9068 asks: without case,
// and with or without the "application/" prefix.
func typeIs(got, want string) bool {
	got = strings.ToLower(got)
	return got == strings.ToLower(want) || got == "application/"+strings.ToLower(want)
}

// publicKey returns a key's public half, parsed once.
func (s *Service) publicKey(slug string, k store.SigningKey) (crypto.PublicKey, error) {
	if v, ok := s.publicKeys.Load(signerKey{slug, k.ID}); ok {
		return v.(crypto.PublicKey), nil
	}
	sk, err := signingKeyFromRecord(k)
	if err != nil {
		return nil, err
	}
	s.publicKeys.Store(signerKey{slug, k.ID}, sk.PublicKey)
	return sk.PublicKey, nil
}
