package identity

import (
	"context"
	"encoding/json"
	"slices"
)

// Provider is the engine of a workspace's OpenID Provider: one method per
// step of the protocol (the authorization endpoint, the sign-in page's
// form, the token endpoint's grants, introspection, revocation, userinfo,
// logout, discovery and the keys), each deciding every rule of its step.
// Package oidc serves it over HTTP; a program that serves the protocol
// another way calls it too. Workspace.Provider returns it.
//
// It is apart from Workspace because its audience is a protocol adapter,
// not a program managing its users: Workspace keeps what an embedder
// calls, including IssueTokens and VerifyAccessToken for a program that
// is its own token issuer or resource server, and the second-factor steps
// that follow Authenticate and Login.
type Provider struct {
	w *Workspace
}

// Provider returns the workspace's OpenID Provider engine. Like the
// Workspace, it holds nothing but the workspace.
func (w *Workspace) Provider() *Provider { return &Provider{w: w} }

// providerScopes are the scopes the provider knows; see ProviderScopes.
var providerScopes = []string{ScopeOpenID, ScopeProfile, ScopeEmail, ScopeGroups, ScopeRoles}

// ProviderScopes returns the scopes the OpenID Provider knows, in a
// stable order: openid, profile, email, groups and roles. An
// authorization request's other scopes are dropped, as OpenID Connect
// asks.
func ProviderScopes() []string { return slices.Clone(providerScopes) }

// IsProviderScope reports whether scope is one of ProviderScopes.
func IsProviderScope(scope string) bool { return slices.Contains(providerScopes, scope) }

// ProviderMetadata is what a workspace's OpenID Provider supports, for
// its discovery document (OpenID Connect Discovery 1.0, section 3).
type ProviderMetadata struct {
	// Issuer is the workspace's issuer identifier (Workspace.Issuer).
	Issuer string
	// Scopes are ProviderScopes.
	Scopes []string
	// Claims are the claims the provider's ID tokens and userinfo may
	// carry: the registered claims it sets, the standard claims of the
	// profile and email scopes, and the claim of every claim mapper with
	// IncludeInID, once each.
	Claims []string
	// SigningAlgorithms are the algorithms of the workspace's signing
	// keys: RS256 and ES256.
	SigningAlgorithms []string
	// AuthorizationResponseIss says that every authorization response,
	// success or error, carries the issuer as iss (RFC 9207): every
	// workspace is an issuer of its own on one host, and a client talking
	// to several checks it against mix-up attacks. Always true; the
	// adapter adds the parameter.
	AuthorizationResponseIss bool
}

// GetMetadata returns what the workspace's provider supports.
func (p *Provider) GetMetadata(ctx context.Context) (ProviderMetadata, error) {
	mappers, err := p.w.ListClaimMappers(ctx)
	if err != nil {
		return ProviderMetadata{}, err
	}
	claims := slices.Clone(idTokenClaims)
	for _, m := range mappers {
		if m.IncludeInID && !slices.Contains(claims, m.ClaimName) {
			claims = append(claims, m.ClaimName)
		}
	}
	return ProviderMetadata{
		Issuer: p.w.Issuer(), Scopes: ProviderScopes(), Claims: claims,
		SigningAlgorithms: []string{RS256, ES256}, AuthorizationResponseIss: true,
	}, nil
}

// GetKeySet returns the workspace's JSON Web Key Set (RFC 7517, section
// 5): the public half of every published signing key (Workspace.
// ListSigningKeys), each as Options.TokenSigner writes it (its
// PublicJWK), which refuses a key it would not verify with. Serve it as
// it is, with the content type application/json.
func (p *Provider) GetKeySet(ctx context.Context) (json.RawMessage, error) {
	if err := p.w.tokensReady(); err != nil {
		return nil, err
	}
	keys, err := p.w.ListSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	set := struct {
		Keys []json.RawMessage `json:"keys"`
	}{Keys: make([]json.RawMessage, 0, len(keys))}
	for _, k := range keys {
		jwk, err := p.w.svc.tokenSigner.PublicJWK(k.ID, k.Algorithm, k.PublicKey)
		if err != nil {
			return nil, internal(err)
		}
		set.Keys = append(set.Keys, jwk)
	}
	out, err := json.Marshal(set)
	if err != nil {
		return nil, internal(err)
	}
	return out, nil
}
