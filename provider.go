package identity

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
