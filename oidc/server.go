package oidc

import (
	"context"
	"net/http"
	"time"

	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/i18n"
)

// server is op.Server over every workspace of the Handler's Service: each
// method finds the workspace in its context (see request) and makes one
// call to it.
type server struct {
	op.UnimplementedServer
	h *Handler
}

// fail turns a library error into what op.Server writes, logging a
// failure of the store or the machine, and sets the headers RFC 6749 and
// RFC 6750 ask of a 401 or 403.
func (s *server) fail(ctx context.Context, kind endpointKind, err error) error {
	rq := requestOf(ctx)
	o := mapError(kind, err)
	if o.internal {
		s.h.logger.ErrorContext(ctx, "oidc: request failed", "issuer", rq.issuer, "error", err)
	}
	if o.retryAfter > 0 {
		rq.header.Set("Retry-After", retryAfterSeconds(o.retryAfter))
	}
	switch {
	case kind == atResource && (o.status == http.StatusUnauthorized || o.status == http.StatusForbidden):
		rq.header.Set("WWW-Authenticate", `Bearer error="`+string(o.err.ErrorType)+`"`)
	case o.status == http.StatusUnauthorized:
		rq.header.Set("WWW-Authenticate", `Basic realm="`+rq.issuer+`"`)
	}
	return o.statusError()
}

// Discovery serves the OpenID Provider Configuration of the workspace.
func (s *server) Discovery(ctx context.Context, _ *op.Request[struct{}]) (*op.Response, error) {
	rq := requestOf(ctx)
	md, err := rq.ws.Provider().GetMetadata(ctx)
	if err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	return op.NewResponse(discovery(rq.issuer, md)), nil
}

// discoveryDocument is the provider configuration: zitadel/oidc's, and
// the members it does not know.
type discoveryDocument struct {
	*zoidc.DiscoveryConfiguration
	// AuthorizationResponseIssParameterSupported says that every
	// authorization response carries iss (RFC 9207, 3).
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
	// UILocalesSupported are the languages of the hosted pages, as
	// i18n.Locales names them. It hides the embedded configuration's
	// member of the same name (encoding/json takes the shallower one),
	// which would take language tags to say the same.
	UILocalesSupported []string `json:"ui_locales_supported"`
}

// discovery returns the configuration of the provider at issuer: the
// endpoints this package serves, what the workspace supports as the
// identity package says (md), and the languages of the hosted pages
// (ui_locales_supported, which the ui_locales parameter chooses from).
func discovery(issuer string, md identity.ProviderMetadata) discoveryDocument {
	clientAuth := []zoidc.AuthMethod{zoidc.AuthMethodBasic, zoidc.AuthMethodPost, zoidc.AuthMethodNone}
	return discoveryDocument{
		AuthorizationResponseIssParameterSupported: md.AuthorizationResponseIss,
		UILocalesSupported:                         i18n.Locales(),
		DiscoveryConfiguration: &zoidc.DiscoveryConfiguration{
			Issuer:                                    issuer,
			AuthorizationEndpoint:                     issuer + "/" + pathAuthorize,
			TokenEndpoint:                             issuer + "/" + pathToken,
			IntrospectionEndpoint:                     issuer + "/" + pathIntrospect,
			UserinfoEndpoint:                          issuer + "/" + pathUserInfo,
			RevocationEndpoint:                        issuer + "/" + pathRevoke,
			EndSessionEndpoint:                        issuer + "/" + pathEndSession,
			JwksURI:                                   issuer + "/" + pathKeys,
			ScopesSupported:                           md.Scopes,
			ResponseTypesSupported:                    []string{string(zoidc.ResponseTypeCode)},
			ResponseModesSupported:                    []string{string(zoidc.ResponseModeQuery)},
			GrantTypesSupported:                       []zoidc.GrantType{zoidc.GrantTypeCode, zoidc.GrantTypeRefreshToken, zoidc.GrantTypeClientCredentials},
			SubjectTypesSupported:                     []string{"public"},
			IDTokenSigningAlgValuesSupported:          md.SigningAlgorithms,
			TokenEndpointAuthMethodsSupported:         clientAuth,
			RevocationEndpointAuthMethodsSupported:    clientAuth,
			IntrospectionEndpointAuthMethodsSupported: []zoidc.AuthMethod{zoidc.AuthMethodBasic, zoidc.AuthMethodPost},
			ClaimsSupported:                           md.Claims,
			CodeChallengeMethodsSupported:             []zoidc.CodeChallengeMethod{zoidc.CodeChallengeMethodS256},
			RequestParameterSupported:                 false,
			RequestURIParameterSupported:              false,
		}}
}

// Keys serves the workspace's JWKS: every published signing key (next,
// active, and retired ones whose tokens may live).
func (s *server) Keys(ctx context.Context, _ *op.Request[struct{}]) (*op.Response, error) {
	set, err := requestOf(ctx).ws.Provider().GetKeySet(ctx)
	if err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	return op.NewResponse(set), nil
}

// VerifyClient authenticates the client of a token, revocation or
// introspection request: with a secret (HTTP Basic or the form), or as a
// public client with its id alone.
func (s *server) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (op.Client, error) {
	if r.Data.ClientAssertion != "" {
		return nil, op.NewStatusError(zoidc.ErrInvalidClient().WithDescription("client assertions are not supported"), http.StatusUnauthorized)
	}
	rq := requestOf(ctx)
	rq.log.setClient(r.Data.ClientID)
	c, err := rq.ws.Provider().VerifyClient(ctx, r.Data.ClientID, r.Data.ClientSecret)
	if err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	rq.log.clientKnown(c.ID)
	return client{c}, nil
}

// oauthClient returns the identity client op.Server verified.
func oauthClient(c op.Client) identity.OAuthClient { return c.(client).OAuthClient }

// asVerified returns ctx whose calls have the client op.Server verified
// as their actor: the client of a token, revocation or introspection
// request.
func asVerified(ctx context.Context, c identity.OAuthClient) context.Context {
	return withClient(ctx, c.ID, c.Name)
}

// CodeExchange redeems an authorization code (grant_type
// authorization_code).
func (s *server) CodeExchange(ctx context.Context, r *op.ClientRequest[zoidc.AccessTokenRequest]) (*op.Response, error) {
	c := oauthClient(r.Client)
	ctx = asVerified(ctx, c)
	t, err := requestOf(ctx).ws.Provider().ExchangeCode(ctx, c, r.Data.Code, r.Data.RedirectURI, r.Data.CodeVerifier)
	return s.tokens(ctx, t, err)
}

// RefreshToken rotates a refresh token (grant_type refresh_token).
func (s *server) RefreshToken(ctx context.Context, r *op.ClientRequest[zoidc.RefreshTokenRequest]) (*op.Response, error) {
	c := oauthClient(r.Client)
	ctx = asVerified(ctx, c)
	t, err := requestOf(ctx).ws.Provider().RefreshTokens(ctx, c, r.Data.RefreshToken, r.Data.Scopes)
	return s.tokens(ctx, t, err)
}

// ClientCredentialsExchange issues a confidential client a token for
// itself (grant_type client_credentials).
func (s *server) ClientCredentialsExchange(ctx context.Context, r *op.ClientRequest[zoidc.ClientCredentialsRequest]) (*op.Response, error) {
	c := oauthClient(r.Client)
	ctx = asVerified(ctx, c)
	t, err := requestOf(ctx).ws.Provider().ExchangeClientCredentials(ctx, c, r.Data.Scope)
	return s.tokens(ctx, t, err)
}

// tokens is the token endpoint's answer (RFC 6749, 5.1).
func (s *server) tokens(ctx context.Context, t identity.Tokens, err error) (*op.Response, error) {
	if err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	resp := op.NewResponse(&zoidc.AccessTokenResponse{
		AccessToken: t.AccessToken, TokenType: zoidc.BearerToken, RefreshToken: t.RefreshToken,
		ExpiresIn: expiresIn(t.ExpiresAt, s.h.svc.Now()), IDToken: t.IDToken, Scope: t.Scopes,
	})
	noStore(resp.Header)
	return resp, nil
}

// expiresIn is the number of whole seconds from now to exp, at least 1.
func expiresIn(exp, now time.Time) uint64 {
	return uint64(max(exp.Sub(now).Round(time.Second)/time.Second, 1))
}

func noStore(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}

// Introspect tells a confidential client about a token (RFC 7662).
func (s *server) Introspect(ctx context.Context, r *op.Request[op.IntrospectionRequest]) (*op.Response, error) {
	rq := requestOf(ctx)
	ws := rq.ws
	rq.log.setClient(r.Data.ClientCredentials.ClientID)
	c, err := ws.Provider().VerifyClient(ctx, r.Data.ClientCredentials.ClientID, r.Data.ClientCredentials.ClientSecret)
	if err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	rq.log.clientKnown(c.ID)
	ctx = asVerified(ctx, c)
	in, err := ws.Provider().IntrospectToken(ctx, c, r.Data.IntrospectionRequest.Token)
	if err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	out := &zoidc.IntrospectionResponse{Active: in.Active}
	if in.Active {
		out.Scope, out.ClientID, out.Subject, out.Issuer, out.JWTID = in.Scopes, in.ClientID, in.Subject, in.Issuer, in.ID
		out.Audience = zoidc.Audience{in.Audience}
		out.IssuedAt, out.Expiration = zoidc.FromTime(in.IssuedAt), zoidc.FromTime(in.ExpiresAt)
		// token_type is the type of RFC 6749, 5.1 (what the token is
		// used as); token_use says which token it is, as Ory Hydra does.
		if in.TokenType == "access_token" {
			out.TokenType = zoidc.BearerToken
		}
		out.Claims = map[string]any{"token_use": in.TokenType}
	}
	resp := op.NewResponse(out)
	noStore(resp.Header)
	return resp, nil
}

// UserInfo returns the claims of the user an access token speaks for.
func (s *server) UserInfo(ctx context.Context, r *op.Request[zoidc.UserInfoRequest]) (*op.Response, error) {
	info, err := requestOf(ctx).ws.Provider().GetUserInfo(ctx, r.Data.AccessToken)
	if err != nil {
		return nil, s.fail(ctx, atResource, err)
	}
	resp := op.NewResponse(info)
	noStore(resp.Header)
	return resp, nil
}

// Revocation revokes a token and its grant (RFC 7009): an unknown token
// is answered 200 as well.
func (s *server) Revocation(ctx context.Context, r *op.ClientRequest[zoidc.RevocationRequest]) (*op.Response, error) {
	c := oauthClient(r.Client)
	if err := requestOf(ctx).ws.Provider().RevokeToken(asVerified(ctx, c), c, r.Data.Token); err != nil {
		return nil, s.fail(ctx, atToken, err)
	}
	return op.NewResponse(nil), nil
}

// client is an identity.OAuthClient as op.Server sees it. op.Server
// consults it only at the token, revocation and introspection endpoints
// (grant types and authentication method); the authorization endpoint is
// this package's own, so redirect URIs and PKCE are identity's rules
// alone.
type client struct{ identity.OAuthClient }

var _ op.Client = client{}

func (c client) GetID() string                    { return c.ID }
func (c client) RedirectURIs() []string           { return c.OAuthClient.RedirectURIs }
func (c client) PostLogoutRedirectURIs() []string { return c.OAuthClient.PostLogoutRedirectURIs }
func (c client) LoginURL(string) string           { return "" }
func (c client) IDTokenLifetime() time.Duration   { return 0 }
func (c client) DevMode() bool                    { return false }
func (c client) ClockSkew() time.Duration         { return 0 }

func (c client) IDTokenUserinfoClaimsAssertion() bool { return false }

func (c client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (c client) ApplicationType() op.ApplicationType {
	if c.Public {
		return op.ApplicationTypeUserAgent
	}
	return op.ApplicationTypeWeb
}

func (c client) AuthMethod() zoidc.AuthMethod { return zoidc.AuthMethod(c.TokenEndpointAuthMethod()) }

func (c client) ResponseTypes() []zoidc.ResponseType {
	var out []zoidc.ResponseType
	for _, t := range c.OAuthClient.ResponseTypes() {
		out = append(out, zoidc.ResponseType(t))
	}
	return out
}

func (c client) GrantTypes() []zoidc.GrantType {
	out := make([]zoidc.GrantType, len(c.OAuthClient.GrantTypes))
	for i, g := range c.OAuthClient.GrantTypes {
		out[i] = zoidc.GrantType(g)
	}
	return out
}

func (c client) IsScopeAllowed(scope string) bool { return identity.IsProviderScope(scope) }

func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}
