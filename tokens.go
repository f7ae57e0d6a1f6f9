package identity

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// TokenSigner signs and verifies compact JSON Web Signatures (RFC 7515),
// the form of every token the library issues. Package jws implements it;
// the identity package declares it so that no JOSE library is imported
// here.
type TokenSigner interface {
	// Sign returns the compact serialization of payload signed with key
	// under the JWS algorithm alg ("RS256" or "ES256"), with the header
	// parameters kid and typ.
	Sign(key crypto.Signer, alg, kid, typ string, payload []byte) (string, error)
	// Verify checks a compact JWS. It calls key with the header's kid and
	// alg to find the public key (an error from key is returned as it
	// is), verifies the signature, and returns the header's typ and the
	// payload. A token that is malformed, names an algorithm other than
	// RS256 or ES256, has more than one signature, or whose signature does
	// not verify is an error.
	Verify(token string, key func(kid, alg string) (crypto.PublicKey, error)) (typ string, payload []byte, err error)
	// PublicJWK returns the JSON Web Key (RFC 7517) of the verification
	// key pub, as JSON, for the provider's key set: key ID kid, algorithm
	// alg and use "sig". A key Verify would refuse for alg, and a private
	// key, is an error.
	PublicJWK(kid, alg string, pub crypto.PublicKey) ([]byte, error)
}

// TokenLifetimes are how long the tokens a workspace issues live. A zero
// field means its default.
type TokenLifetimes struct {
	// Access is the lifetime of an access token. Default 10 minutes.
	Access time.Duration
	// ID is the lifetime of an ID token. Default 10 minutes.
	ID time.Duration
	// Refresh is how long a refresh token may wait to be used; each use
	// returns a new one with a new wait (sliding). Default 30 days.
	Refresh time.Duration
	// RefreshMax is the absolute lifetime of a grant: no refresh token of
	// an authorization outlives it. Default 90 days.
	RefreshMax time.Duration
	// RefreshReuse is how long after a refresh token was exchanged it may
	// be exchanged again, for a client that lost the answer (a crash or a
	// dropped connection after the exchange committed) and holds only the
	// used token: within it, and while the successor has not been used,
	// the used token gets a new successor and the first successor stops
	// working (presenting it later counts as reuse); past it, a used token
	// revokes its grant (see Provider.RefreshTokens). At most
	// MaxRefreshReuse. Default 0: off, since every second of it is a
	// second in which a stolen copy of a used token is not detected.
	RefreshReuse time.Duration
}

// MaxRefreshReuse bounds TokenLifetimes.RefreshReuse.
const MaxRefreshReuse = 5 * time.Minute

// DefaultTokenLifetimes returns the lifetimes used when Options sets none.
func DefaultTokenLifetimes() TokenLifetimes {
	return TokenLifetimes{Access: 10 * time.Minute, ID: 10 * time.Minute, Refresh: 30 * 24 * time.Hour, RefreshMax: 90 * 24 * time.Hour}
}

// Lifetimes of the steps of a code flow, and the clock leeway of token
// checks.
const (
	// AuthorizationCodeLifetime is how long an authorization code may
	// wait to be redeemed.
	AuthorizationCodeLifetime = 60 * time.Second
	// AuthorizationRequestLifetime is how long a user may take to sign in
	// for an authorization request.
	AuthorizationRequestLifetime = 10 * time.Minute
	// TokenLeeway is the clock difference tolerated when checking a
	// token's exp, nbf and iat.
	TokenLeeway = 30 * time.Second
)

// The typ header of access tokens (RFC 9068) and of ID tokens.
const (
	accessTokenType = "at+jwt"
	idTokenType     = "JWT"
)

// Scopes the provider knows (ProviderScopes). Others are ignored, as
// OpenID Connect asks.
const (
	ScopeOpenID  = "openid"
	ScopeProfile = "profile"
	ScopeEmail   = "email"
	// ScopeGroups asks for the groups claim: the names of the user's
	// groups, sorted.
	ScopeGroups = "groups"
	// ScopeRoles asks for the roles claim: the names of the roles the user
	// holds, directly or through a group, sorted.
	ScopeRoles = "roles"
)

// setTokenOptions checks and keeps the token options.
func (s *Service) setTokenOptions(opts *Options) error {
	if opts.IssuerBase != "" {
		var p problems
		u := checkLinkURL(&p, "IssuerBase", opts.IssuerBase)
		if u != nil && (strings.ContainsAny(opts.IssuerBase, "?#") || strings.HasSuffix(u.Path, "/")) {
			p.add("IssuerBase", RuleFormat, "must have no query, fragment or trailing slash")
		}
		if err := p.err("invalid Options.IssuerBase"); err != nil {
			return err
		}
	}
	s.issuerBase = opts.IssuerBase
	s.tokenSigner = opts.TokenSigner
	s.passkeys = opts.PasskeyCeremony
	for i, o := range opts.PasskeyOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
			return errorf(CodeInvalid, "Options.PasskeyOrigins[%d] %q must be scheme://host[:port]", i, o)
		}
	}
	s.passkeyOrigins = slices.Clone(opts.PasskeyOrigins)
	switch opts.SigningAlgorithm {
	case "":
		s.signingAlgorithm = RS256
	case RS256, ES256:
		s.signingAlgorithm = opts.SigningAlgorithm
	default:
		return errorf(CodeInvalid, "Options.SigningAlgorithm must be %s or %s", RS256, ES256)
	}
	s.keyRotationPeriod = opts.KeyRotationPeriod
	if s.keyRotationPeriod <= 0 {
		s.keyRotationPeriod = DefaultKeyRotationPeriod
	}
	kek, err := newKEK(opts.KeyEncryptionKey)
	if err != nil {
		return err
	}
	s.kek = kek
	s.lifetimes = DefaultTokenLifetimes()
	if l := opts.TokenLifetimes; l != nil {
		for _, f := range []struct{ set, into *time.Duration }{
			{&l.Access, &s.lifetimes.Access}, {&l.ID, &s.lifetimes.ID},
			{&l.Refresh, &s.lifetimes.Refresh}, {&l.RefreshMax, &s.lifetimes.RefreshMax},
		} {
			if *f.set > 0 {
				*f.into = *f.set
			}
		}
		if l.RefreshReuse < 0 || l.RefreshReuse > MaxRefreshReuse {
			var p problems
			p.add("TokenLifetimes.RefreshReuse", RuleRange, "must be between 0 and %s", MaxRefreshReuse)
			return p.err("invalid Options.TokenLifetimes")
		}
		s.lifetimes.RefreshReuse = l.RefreshReuse
	}
	return nil
}

// longestSignedLifetime is how long a signed token may live after it was
// signed, leeway included: how long a retired key stays published.
func (s *Service) longestSignedLifetime() time.Duration {
	return max(s.lifetimes.Access, s.lifetimes.ID) + TokenLeeway
}

// Issuer returns the workspace's issuer identifier, IssuerBase + "/t/" +
// slug, or "" when the Service has no IssuerBase.
func (w *Workspace) Issuer() string {
	if w.svc.issuerBase == "" {
		return ""
	}
	return w.svc.issuerBase + "/t/" + w.slug
}

// TokensReady returns nil when the Service can issue and verify tokens,
// else a CodeInternal error naming the option that is missing
// (Options.IssuerBase, Options.TokenSigner). An OpenID Provider checks it
// once when it is made.
func (s *Service) TokensReady() error {
	switch {
	case s.issuerBase == "":
		return errorf(CodeInternal, "tokens need Options.IssuerBase")
	case s.tokenSigner == nil:
		return errorf(CodeInternal, "tokens need Options.TokenSigner (jws.Signer{})")
	}
	return nil
}

// tokensReady is TokensReady for the Workspace's methods.
func (w *Workspace) tokensReady() error { return w.svc.TokensReady() }

// TokenRequest asks IssueTokens for tokens for a user.
type TokenRequest struct {
	// ClientID is the client the tokens are for (their audience).
	ClientID string
	// UserID is the user the tokens speak for; the user must be enabled.
	UserID int64
	// Scopes are granted as given, except that scopes the provider does
	// not know are dropped. An ID token is issued when they hold "openid".
	Scopes []string
	// Nonce, SessionID, AuthTime and AMR go into the ID token (nonce,
	// sid, auth_time, amr) when set; AMR as SessionOptions.AMR takes it.
	Nonce     string
	SessionID string
	AuthTime  time.Time
	AMR       []string
}

// Tokens are the tokens issued for one grant.
type Tokens struct {
	// AccessToken is a JWT (RFC 9068) for resource servers.
	AccessToken string `json:"accessToken"`
	// TokenType is "Bearer".
	TokenType string `json:"tokenType"`
	// ExpiresAt is when the access token expires.
	ExpiresAt time.Time `json:"expiresAt"`
	// IDToken is the OpenID Connect ID token; empty without the openid
	// scope.
	IDToken string `json:"idToken,omitempty"`
	// RefreshToken renews the tokens; empty when the client may not use
	// the refresh_token grant.
	RefreshToken string `json:"refreshToken,omitempty"`
	// Scopes are the scopes granted.
	Scopes []string `json:"scopes"`
	// GrantID identifies the grant: every token of one authorization.
	GrantID string `json:"grantId"`
}

// IssueTokens issues tokens for an enabled user and a client of the
// workspace, for a program that authenticated the user itself: an access
// token carrying every claim mapper with IncludeInAccess whose attribute
// the user has, an ID token (with the openid scope) carrying every mapper
// with IncludeInID, and a refresh token when the client may use the
// refresh_token grant. An unknown client or user is CodeNotFound, a
// disabled user CodeForbidden.
func (w *Workspace) IssueTokens(ctx context.Context, req TokenRequest) (Tokens, error) {
	if err := w.tokensReady(); err != nil {
		return Tokens{}, err
	}
	if req.UserID <= 0 {
		// A grant without a user is a client's own (client_credentials),
		// which only Provider.ExchangeClientCredentials may make.
		return Tokens{}, errorf(CodeNotFound, "user not found")
	}
	if err := (&SessionOptions{AMR: req.AMR}).validate(); err != nil {
		return Tokens{}, err
	}
	key, err := w.activeKey(ctx)
	if err != nil {
		return Tokens{}, err
	}
	scopes := knownScopes(req.Scopes)
	var is issuance
	err = w.update(ctx, func(tx store.Tx) error {
		now := w.svc.timestamp()
		client, err := tx.OAuthClient(w.slug, req.ClientID)
		if err != nil {
			return fromStore(err, "client")
		}
		g := store.Grant{ClientID: client.ID, UserID: req.UserID, SessionID: req.SessionID, Scopes: scopes, AuthTime: req.AuthTime.UTC().Truncate(time.Microsecond), AMR: slices.Clone(req.AMR)}
		is, err = w.newGrant(ctx, tx, clientFromRecord(client), g, now)
		is.nonce = req.Nonce
		return err
	})
	if err != nil {
		return Tokens{}, fromStore(err, "user")
	}
	return w.sign(key, is)
}

// issuance is what a transaction gathered for tokens to be signed after
// it commits.
type issuance struct {
	grant  store.Grant
	user   store.User // zero for a client's own grant
	access map[string]string
	id     map[string]string
	// mapperOf is the attribute key of the mapper of each mapped claim.
	mapperOf map[string]string
	nonce    string
	refresh  string
	now      time.Time
	// carry says which access claims (groups, roles) the tokens carry,
	// holds what the user holds, and claimLimit how many names a claim
	// may carry (Limits.ClaimNames).
	carry      carried
	holds      store.UserAccess
	claimLimit int
}

// newGrant stores g (a fresh id, its times) with its first refresh token
// when the client may refresh, and gathers what its tokens carry, with
// the record token.issued. A user grant needs an enabled user.
func (w *Workspace) newGrant(ctx context.Context, tx store.Tx, client OAuthClient, g store.Grant, now time.Time) (issuance, error) {
	id, err := randomHex(8)
	if err != nil {
		return issuance{}, internal(err)
	}
	g.ID = id
	g = w.grantTimes(g, now)
	is := issuance{grant: g, now: now}
	if g.UserID != 0 {
		if is, err = w.gatherUser(tx, is, client); err != nil {
			return issuance{}, err
		}
	}
	if err := tx.PutGrant(w.slug, g); err != nil {
		return issuance{}, err
	}
	if g.UserID != 0 && client.HasGrantType(GrantRefreshToken) {
		if is.refresh, _, err = w.newRefreshToken(tx, g, now); err != nil {
			return issuance{}, err
		}
	}
	return is, w.auditGrant(ctx, tx, AuditTokenIssued, g, true, false)
}

// grantTimes sets the times of a grant made at now: its creation, its
// end (the refresh tokens' absolute lifetime for a user's grant, an
// access token's for a client's own) and, for a user's grant that has
// none, the time of authentication.
func (w *Workspace) grantTimes(g store.Grant, now time.Time) store.Grant {
	g.CreatedAt = now
	g.ExpiresAt = now.Add(w.svc.lifetimes.RefreshMax)
	if g.UserID == 0 {
		g.ExpiresAt = now.Add(w.svc.lifetimes.Access)
	}
	if g.AuthTime.IsZero() && g.UserID != 0 {
		g.AuthTime = now
	}
	return g
}

// gatherUser reads the grant's user, which must be enabled, the claims
// its mappers give the tokens, and what the user holds when the tokens
// carry it (the grant's scopes or the client ask for groups or roles).
func (w *Workspace) gatherUser(tx store.Tx, is issuance, client OAuthClient) (issuance, error) {
	u, err := w.user(tx, is.grant.UserID)
	if err != nil {
		return issuance{}, err
	}
	if !u.Enabled {
		return issuance{}, errorf(CodeForbidden, "user %d is disabled", u.ID)
	}
	is.user = u
	if is.access, is.id, is.mapperOf, err = w.mappedClaims(tx, u.ID); err != nil {
		return issuance{}, err
	}
	if is.carry = carriedClaims(is.grant.Scopes, client.Claims); !is.carry.any() {
		return is, nil
	}
	set, err := w.settings(tx)
	if err != nil {
		return issuance{}, err
	}
	is.claimLimit = set.Limits.claimNames()
	is.holds, err = w.userAccess(tx, u.ID)
	return is, err
}

// mappedClaims returns the claims the workspace's mappers give a user's
// access and ID tokens, and the attribute key of the mapper of each
// (nil when there is none).
func (w *Workspace) mappedClaims(tx store.Tx, userID int64) (access, id, mapperOf map[string]string, err error) {
	access, id = map[string]string{}, map[string]string{}
	mappers, err := tx.ClaimMappers(w.slug)
	if err != nil || len(mappers) == 0 {
		return access, id, nil, err
	}
	attrs, err := tx.UserAttributes(w.slug, userID)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, m := range mappers {
		value, ok := attrs[m.AttributeKey]
		if !ok {
			continue
		}
		if m.IncludeInAccess {
			access[m.ClaimName] = value
		}
		if m.IncludeInID {
			id[m.ClaimName] = value
		}
		if m.IncludeInAccess || m.IncludeInID {
			if mapperOf == nil {
				mapperOf = map[string]string{}
			}
			mapperOf[m.ClaimName] = m.AttributeKey
		}
	}
	return access, id, mapperOf, nil
}

// refreshPrefix starts every refresh token; the rest is a token's id and
// secret (see newToken).
const refreshPrefix = "idrt_"

// newRefreshToken stores a fresh refresh token of the grant and returns
// it. It expires after the sliding lifetime, never after the grant.
func (w *Workspace) newRefreshToken(tx store.Tx, g store.Grant, now time.Time) (token, id string, err error) {
	id, secret, token, err := newToken(refreshPrefix)
	if err != nil {
		return "", "", internal(err)
	}
	expires := earliest(now.Add(w.svc.lifetimes.Refresh), g.ExpiresAt)
	rec := store.RefreshToken{ID: id, GrantID: g.ID, SecretHash: hashSecret(secret), CreatedAt: now, ExpiresAt: expires}
	if err := tx.PutRefreshToken(w.slug, rec); err != nil {
		return "", "", err
	}
	return token, id, nil
}

// signingKey is the active key, opened.
type signingKey struct {
	rec    store.SigningKey
	signer crypto.Signer
}

// activeKey returns the workspace's active signing key, opened.
func (w *Workspace) activeKey(ctx context.Context) (signingKey, error) {
	keys, err := w.keyring(ctx)
	if err != nil {
		return signingKey{}, err
	}
	active, ok := findKey(keys, KeyActive)
	if !ok {
		return signingKey{}, errorf(CodeInternal, "workspace %q has no active signing key", w.slug)
	}
	signer, err := w.svc.signer(w.slug, active)
	if err != nil {
		return signingKey{}, err
	}
	return signingKey{rec: active, signer: signer}, nil
}

// sign signs the tokens of an issuance with key.
func (w *Workspace) sign(key signingKey, is issuance) (Tokens, error) {
	jti, err := randomHex(8)
	if err != nil {
		return Tokens{}, internal(err)
	}
	p := w.payloads(is, is.grant.ID+"."+jti, false)
	t := Tokens{TokenType: "Bearer", ExpiresAt: p.accessExp, RefreshToken: is.refresh, Scopes: p.scopes, GrantID: is.grant.ID}
	if t.AccessToken, err = w.signClaims(key, accessTokenType, p.access.claims); err != nil {
		return Tokens{}, err
	}
	if p.id.claims == nil {
		return t, nil
	}
	p.id.claims["at_hash"] = leftHalfHash(t.AccessToken)
	if t.IDToken, err = w.signClaims(key, idTokenType, p.id.claims); err != nil {
		return Tokens{}, err
	}
	return t, nil
}

// tokenPayloads are the payloads of a grant's tokens before they are
// signed.
type tokenPayloads struct {
	// access and id are the access token's and the ID token's; id.claims
	// is nil when there is no ID token (no openid scope, or a client's
	// own grant).
	access, id payload
	accessExp  time.Time
	scopes     []string
}

// payloads builds the payloads of the tokens of the issuance is: the one
// place that decides which claims a token carries and their values, for
// sign and for GetClaimsPreview, which sets record to learn where each
// claim comes from. jti is the access token's id (nil in a preview). The
// ID token's at_hash is set to nil here: sign sets its value once the
// access token is signed.
func (w *Workspace) payloads(is issuance, jti any, record bool) tokenPayloads {
	g := is.grant
	// No token outlives its grant.
	accessExp := earliest(is.now.Add(w.svc.lifetimes.Access), g.ExpiresAt)
	idExp := earliest(is.now.Add(w.svc.lifetimes.ID), g.ExpiresAt)
	scopes := slices.Clone(g.Scopes)
	if scopes == nil {
		scopes = []string{}
	}
	out := tokenPayloads{accessExp: accessExp, scopes: scopes}
	access := newPayload(is.access, is.mapperOf, record)
	access.setFrom("iss", w.Issuer(), fromProtocol("the workspace's issuer"))
	access.setFrom("sub", subject(g), fromProtocol("the user's id"))
	access.setNonEmpty("aud", g.ClientID, fromProtocol("the client"))
	access.setFrom("exp", accessExp.Unix(), fromProtocol("the access token's lifetime"))
	access.setFrom("iat", is.now.Unix(), fromProtocol("the time of issue"))
	access.setFrom("jti", jti, fromProtocol("unique to each token"))
	access.setNonEmpty("client_id", g.ClientID, fromProtocol("the client"))
	access.setFrom("scope", strings.Join(scopes, " "), fromProtocol("the scopes granted"))
	if g.UserID != 0 {
		access.setFrom("auth_time", g.AuthTime.Unix(), fromProtocol("the time of sign-in"))
		access.setNonEmpty("sid", g.SessionID, fromProtocol("the session"))
		is.carry.setAccessClaims(access, is.holds, is.claimLimit)
	}
	out.access = access
	if g.UserID == 0 || !slices.Contains(scopes, ScopeOpenID) {
		return out
	}
	id := newPayload(is.id, is.mapperOf, record)
	setStandardClaims(id, is.user, scopes)
	id.setFrom("iss", w.Issuer(), fromProtocol("the workspace's issuer"))
	id.setFrom("sub", subject(g), fromProtocol("the user's id"))
	id.setNonEmpty("aud", g.ClientID, fromProtocol("the client"))
	id.setNonEmpty("azp", g.ClientID, fromProtocol("the client"))
	id.setFrom("exp", idExp.Unix(), fromProtocol("the ID token's lifetime"))
	id.setFrom("iat", is.now.Unix(), fromProtocol("the time of issue"))
	id.setFrom("auth_time", g.AuthTime.Unix(), fromProtocol("the time of sign-in"))
	id.setNonEmpty("nonce", is.nonce, fromProtocol("the authorization request"))
	id.setNonEmpty("sid", g.SessionID, fromProtocol("the session"))
	if len(g.AMR) > 0 {
		id.setFrom("amr", g.AMR, fromProtocol("how the user signed in"))
	}
	id.setFrom("at_hash", nil, fromProtocol("a hash of the access token"))
	is.carry.setAccessClaims(id, is.holds, is.claimLimit)
	out.id = id
	return out
}

// earliest returns the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// claims is the payload of a token.
type claims map[string]any

// claimSetter is what the claim rules set claims on: a token's payload
// being built, or userinfo's answer (claims), which has no use for the
// claims' sources.
type claimSetter interface {
	setFrom(name string, value any, src ClaimSource)
}

func (c claims) setFrom(name string, value any, _ ClaimSource) { c[name] = value }

// payload is a token's claims being built and, in a preview, where each
// comes from.
type payload struct {
	claims claims
	// from is nil unless the payload records sources.
	from map[string]ClaimSource
}

// newPayload starts a payload with the mapped claims (mapperOf names the
// attribute key of each claim's mapper), recording their sources when
// record is set. Reserved claims are set after them, so a mapped claim
// can never replace one (and mappers cannot name one in the first
// place).
func newPayload(mapped, mapperOf map[string]string, record bool) payload {
	p := payload{claims: make(claims, len(mapped)+12)}
	if record {
		p.from = make(map[string]ClaimSource, len(mapped)+12)
	}
	for k, v := range mapped {
		p.setFrom(k, v, ClaimSource{Kind: ClaimFromMapper, Detail: mapperOf[k]})
	}
	return p
}

func (p payload) setFrom(name string, value any, src ClaimSource) {
	p.claims[name] = value
	if p.from != nil {
		p.from[name] = src
	}
}

func (p payload) setNonEmpty(name, value string, src ClaimSource) {
	if value != "" {
		p.setFrom(name, value, src)
	}
}

// signClaims encodes and signs a payload.
func (w *Workspace) signClaims(key signingKey, typ string, c claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", internal(err)
	}
	token, err := w.svc.tokenSigner.Sign(key.signer, key.rec.Algorithm, key.rec.ID, typ, payload)
	if err != nil {
		return "", internal(err)
	}
	return token, nil
}

// subject is the sub of a grant's tokens: the user's id in decimal, or
// the client's id for a client's own grant (RFC 9068, 2.2).
func subject(g store.Grant) string {
	if g.UserID == 0 {
		return g.ClientID
	}
	return strconv.FormatInt(g.UserID, 10)
}

// idTokenClaims are the claims payloads and setStandardClaims may put in an ID
// token (and GetUserInfo in its answer) besides the mapped ones, as
// ProviderMetadata.Claims lists them.
var idTokenClaims = []string{
	"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "sid", "azp", "at_hash", "amr",
	"name", "preferred_username", "updated_at", "email", "email_verified",
	"groups", "roles", "groups_overage", "roles_overage",
}

// setStandardClaims sets the OpenID Connect claims the scopes ask for:
// name, preferred_username and updated_at for profile; email and
// email_verified for email.
func setStandardClaims(set claimSetter, u store.User, scopes []string) {
	if slices.Contains(scopes, ScopeProfile) {
		from := ClaimSource{Kind: ClaimFromScope, Detail: ScopeProfile}
		set.setFrom("preferred_username", u.Username, from)
		set.setFrom("updated_at", u.UpdatedAt.Unix(), from)
		if u.FullName != "" {
			set.setFrom("name", u.FullName, from)
		}
	}
	if slices.Contains(scopes, ScopeEmail) && u.Email != "" {
		from := ClaimSource{Kind: ClaimFromScope, Detail: ScopeEmail}
		set.setFrom("email", u.Email, from)
		set.setFrom("email_verified", u.EmailVerified, from)
	}
}

// leftHalfHash is the at_hash of an access token signed with a SHA-256
// algorithm (OpenID Connect Core, 3.1.3.6).
func leftHalfHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

// knownScopes keeps the scopes the provider knows, once each, in the
// order given; never nil.
func knownScopes(scopes []string) []string {
	out := []string{}
	for _, s := range scopes {
		if IsProviderScope(s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
