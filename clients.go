package identity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// GrantType is an OAuth 2.0 grant type: a way an OAuthClient may obtain
// tokens at a token endpoint.
type GrantType string

// The grant types a client may be allowed.
const (
	// GrantAuthorizationCode is the code flow (RFC 6749, 4.1): a user
	// signs in and the client redeems the code it is sent back with.
	GrantAuthorizationCode GrantType = "authorization_code"
	// GrantRefreshToken lets the client renew the tokens of a code flow
	// (RFC 6749, 6). It is allowed only together with
	// GrantAuthorizationCode.
	GrantRefreshToken GrantType = "refresh_token"
	// GrantClientCredentials lets a confidential client obtain tokens for
	// itself with its secret, no user involved (RFC 6749, 4.4). A public
	// client, which has no secret, may not have it.
	GrantClientCredentials GrantType = "client_credentials"
)

// GrantTypes returns every grant type in a stable order.
func GrantTypes() []GrantType {
	return []GrantType{GrantAuthorizationCode, GrantRefreshToken, GrantClientCredentials}
}

// DefaultGrantTypes returns the grant types of a client created without
// any: authorization_code and refresh_token.
func DefaultGrantTypes() []GrantType {
	return []GrantType{GrantAuthorizationCode, GrantRefreshToken}
}

// Known reports whether g is one of GrantTypes.
func (g GrantType) Known() bool { return slices.Contains(GrantTypes(), g) }

// Limits of OAuth clients. Lengths count Unicode code points.
const (
	// MaxOAuthClients is the most clients a workspace may have.
	MaxOAuthClients = 100
	// MaxClientNameLength bounds OAuthClient.Name.
	MaxClientNameLength = 255
	// MaxRedirectURIs bounds the redirect URIs and, separately, the
	// post-logout redirect URIs of a client.
	MaxRedirectURIs = 20
	// MaxRedirectURILength bounds each redirect URI.
	MaxRedirectURILength = 2048
)

// The shapes of client ids and secrets: a prefix, then 16 lowercase hex
// digits (64 random bits) for an id, 43 characters of unpadded base64url
// (256 random bits) for a secret. Both are made of characters that need
// no escaping in a URL, a form body or HTTP Basic authentication.
const (
	clientIDPrefix     = "idc_"
	clientSecretPrefix = "idcs_"
)

// OAuthClient is an application that may sign users in through a
// workspace (and, later, obtain tokens from its OpenID Provider): a
// confidential client, which keeps a secret (a server-side web
// application, a service), or a public one, which cannot (a browser or
// native application) and proves itself with PKCE instead. The secret is
// returned once, by CreateClient; only its SHA-256 hash is stored.
//
// Redirect URIs are matched exactly, as registered. The methods
// ResponseTypes, TokenEndpointAuthMethod and HasGrantType derive what an
// OpenID Provider needs to know of a client beyond its fields.
type OAuthClient struct {
	// ID is the client_id: "idc_" and 16 lowercase hex digits, unique in
	// the workspace, safe to show and log.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Public is true for a client without a secret.
	Public bool `json:"public"`
	// RedirectURIs are where an authorization may send the user back to:
	// 1 to MaxRedirectURIs, never nil.
	RedirectURIs []string `json:"redirectUris"`
	// PostLogoutRedirectURIs are where a logout the client starts may send
	// the user: 0 to MaxRedirectURIs, never nil.
	PostLogoutRedirectURIs []string `json:"postLogoutRedirectUris"`
	// GrantTypes are the grant types the client may use, in the order
	// given at creation; never empty.
	GrantTypes []GrantType `json:"grantTypes"`
	// Claims are the claims of the user's access ("groups", "roles") that
	// the client's tokens carry whatever scopes it asks for, for relying
	// parties that cannot ask for more scopes; never nil.
	Claims    []string  `json:"claims"`
	CreatedAt time.Time `json:"createdAt"`
}

// HasGrantType reports whether the client may use g.
func (c OAuthClient) HasGrantType(g GrantType) bool { return slices.Contains(c.GrantTypes, g) }

// ResponseTypes returns the OAuth response types the client may ask for
// at an authorization endpoint: "code" when it has the authorization_code
// grant, else none (a client_credentials client never sends a user
// there). It never returns nil.
func (c OAuthClient) ResponseTypes() []string {
	if c.HasGrantType(GrantAuthorizationCode) {
		return []string{"code"}
	}
	return []string{}
}

// TokenEndpointAuthMethod returns how the client authenticates at a token
// endpoint, as OAuth client metadata (RFC 7591) names it: "none" for a
// public client, "client_secret_basic" for a confidential one. A
// confidential client may send its secret in the form body
// (client_secret_post) as well: AuthenticateClient checks a secret
// however it was sent.
func (c OAuthClient) TokenEndpointAuthMethod() string {
	if c.Public {
		return "none"
	}
	return "client_secret_basic"
}

// NewClient is the input of CreateClient.
type NewClient struct {
	// Name: optional, at most MaxClientNameLength characters, no control
	// characters.
	Name string
	// Public makes a client without a secret.
	Public bool
	// RedirectURIs: 1 to MaxRedirectURIs, no duplicates. Each is an
	// absolute URI of at most MaxRedirectURILength characters with a host
	// and no user information, white space, control characters or
	// fragment ("#"), whose scheme is https, or http only when the host is
	// localhost or a loopback IP address (for development and native
	// applications): the rule of SMTPSettings.VerifyURL's links.
	RedirectURIs []string
	// PostLogoutRedirectURIs: 0 to MaxRedirectURIs, each under the rule
	// of RedirectURIs, no duplicates.
	PostLogoutRedirectURIs []string
	// GrantTypes: each known, no duplicates; none means
	// DefaultGrantTypes. client_credentials needs a confidential client,
	// refresh_token needs authorization_code too.
	GrantTypes []GrantType
	// Claims: the claims of the user's access the client's tokens always
	// carry, each one of AccessClaims, no duplicates; none means only
	// those its scopes ask for.
	Claims []string
}

// CreatedClient is the result of CreateClient: the client and, for a
// confidential client, its secret, which is shown only here.
type CreatedClient struct {
	Client OAuthClient `json:"client"`
	// Secret is "idcs_" and 43 characters of base64url (256 random bits),
	// or empty for a public client.
	Secret string `json:"secret,omitempty"`
}

func clientFromRecord(r store.OAuthClient) OAuthClient {
	grants := make([]GrantType, len(r.GrantTypes))
	for i, g := range r.GrantTypes {
		grants[i] = GrantType(g)
	}
	return OAuthClient{
		ID: r.ID, Name: r.Name, Public: r.Public,
		RedirectURIs:           append([]string{}, r.RedirectURIs...),
		PostLogoutRedirectURIs: append([]string{}, r.PostLogoutRedirectURIs...),
		GrantTypes:             grants, Claims: append([]string{}, r.Claims...), CreatedAt: r.CreatedAt,
	}
}

// CreateClient registers an OAuth client and returns it with its secret
// (none for a public client). Input that breaks a rule of NewClient is a
// CodeInvalid error naming every problem ("name", "redirectUris",
// "redirectUris[1]", "postLogoutRedirectUris[0]", "grantTypes[2]", ...);
// a workspace that has MaxOAuthClients clients already is
// CodeLimitReached, checked in the transaction that writes, so the limit
// holds under concurrent calls.
func (w *Workspace) CreateClient(ctx context.Context, nc NewClient) (CreatedClient, error) {
	grants, err := nc.validate()
	if err != nil {
		return CreatedClient{}, err
	}
	idHex, secretPart, _, err := newToken("")
	if err != nil {
		return CreatedClient{}, &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	rec := store.OAuthClient{
		ID: clientIDPrefix + idHex, Name: nc.Name, Public: nc.Public,
		RedirectURIs:           slices.Clone(nc.RedirectURIs),
		PostLogoutRedirectURIs: slices.Clone(nc.PostLogoutRedirectURIs),
		Claims:                 slices.Clone(nc.Claims),
		CreatedAt:              w.svc.timestamp(),
	}
	for _, g := range grants {
		rec.GrantTypes = append(rec.GrantTypes, string(g))
	}
	var secret string
	if !nc.Public {
		secret = clientSecretPrefix + secretPart
		rec.SecretHash = hashSecret(secret)
	}
	err = w.update(ctx, func(tx store.Tx) error {
		existing, err := tx.OAuthClients(w.slug)
		if err != nil {
			return err
		}
		if len(existing) >= MaxOAuthClients {
			return errorf(CodeLimitReached, "the workspace already has the maximum of %d OAuth clients", MaxOAuthClients)
		}
		for _, c := range existing {
			if c.ID == rec.ID {
				return fmt.Errorf("OAuth client id collision") // 64 random bits: never in practice
			}
		}
		if err := tx.PutOAuthClient(w.slug, rec); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditClientCreated, target: clientTarget(rec.ID, rec.Name), changes: clientChanges(rec)})
	})
	if err != nil {
		return CreatedClient{}, fromStore(err, "workspace")
	}
	return CreatedClient{Client: clientFromRecord(rec), Secret: secret}, nil
}

// clientTarget is the client as the target of an audit record.
func clientTarget(id, name string) AuditTarget {
	return AuditTarget{Kind: TargetClient, ID: id, Display: name}
}

// clientChanges are the fields of a new client as its audit record
// keeps them: never its secret.
func clientChanges(rec store.OAuthClient) auditChanges {
	changes := auditChanges{}.set("public", nil, rec.Public).set("redirectUris", nil, rec.RedirectURIs).
		set("grantTypes", nil, rec.GrantTypes)
	if rec.Name != "" {
		changes = changes.set("name", nil, rec.Name)
	}
	if len(rec.PostLogoutRedirectURIs) > 0 {
		changes = changes.set("postLogoutRedirectUris", nil, rec.PostLogoutRedirectURIs)
	}
	if len(rec.Claims) > 0 {
		changes = changes.set("claims", nil, rec.Claims)
	}
	return changes
}

// validate checks nc and returns the grant types the client gets.
func (nc NewClient) validate() ([]GrantType, error) {
	var p problems
	if checkText(&p, "name", nc.Name, 0, MaxClientNameLength) {
		checkNoControl(&p, "name", nc.Name)
	}
	checkRedirectURIs(&p, "redirectUris", nc.RedirectURIs, 1)
	checkRedirectURIs(&p, "postLogoutRedirectUris", nc.PostLogoutRedirectURIs, 0)
	grants := nc.GrantTypes
	if len(grants) == 0 {
		grants = DefaultGrantTypes()
	}
	for i, g := range grants {
		field := fmt.Sprintf("grantTypes[%d]", i)
		switch {
		case !g.Known():
			p.add(field, RuleUnknown, "unknown grant type %q (known: %s, %s, %s)", g,
				GrantAuthorizationCode, GrantRefreshToken, GrantClientCredentials)
		case slices.Index(grants, g) < i:
			p.add(field, RuleDuplicate, "grant type %q is listed twice", g)
		case g == GrantClientCredentials && nc.Public:
			p.add(field, RuleNotAllowed, "%q needs a confidential client: a public client has no secret", g)
		case g == GrantRefreshToken && !slices.Contains(grants, GrantAuthorizationCode):
			p.add(field, RuleNotAllowed, "%q needs %q as well", g, GrantAuthorizationCode)
		}
	}
	for i, c := range nc.Claims {
		field := fmt.Sprintf("claims[%d]", i)
		switch {
		case !slices.Contains(accessClaims, c):
			p.add(field, RuleUnknown, "unknown claim %q (known: %s)", c, strings.Join(accessClaims, ", "))
		case slices.Index(nc.Claims, c) < i:
			p.add(field, RuleDuplicate, "claim %q is listed twice", c)
		}
	}
	return grants, p.err("invalid client")
}

// checkRedirectURIs checks a list of redirect URIs of at least min
// entries: every entry, and duplicates among the valid ones.
func checkRedirectURIs(p *problems, field string, uris []string, min int) {
	switch {
	case len(uris) < min:
		p.add(field, RuleRequired, "must list at least %d URI", min)
	case len(uris) > MaxRedirectURIs:
		p.add(field, RuleRange, "must list at most %d URIs", MaxRedirectURIs)
	}
	for i, uri := range uris {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !checkText(p, f, uri, 1, MaxRedirectURILength) || checkLinkURL(p, f, uri) == nil {
			continue
		}
		switch {
		case strings.Contains(uri, "#"):
			p.add(f, RuleFormat, "must not contain a fragment")
		case slices.Index(uris, uri) < i:
			p.add(f, RuleDuplicate, "URI %q is listed twice", uri)
		}
	}
}

// ListClients returns the workspace's OAuth clients, without secrets, in
// ascending id order (never nil).
func (w *Workspace) ListClients(ctx context.Context) ([]OAuthClient, error) {
	var recs []store.OAuthClient
	err := w.view(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.OAuthClients(w.slug)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return mapAll(recs, clientFromRecord), nil
}

// GetClient returns the OAuth client with the id, without its secret, or a
// not-found error.
func (w *Workspace) GetClient(ctx context.Context, id string) (OAuthClient, error) {
	var rec store.OAuthClient
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = tx.OAuthClient(w.slug, id)
		if isNotFound(err) {
			return notFound("OAuth client %q not found", id)
		}
		return err
	})
	if err != nil {
		return OAuthClient{}, fromStore(err, "workspace")
	}
	return clientFromRecord(rec), nil
}

// DeleteClient removes the OAuth client with the id; its secret stops
// working at once. A missing client is a not-found error.
func (w *Workspace) DeleteClient(ctx context.Context, id string) error {
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.OAuthClient(w.slug, id)
		if isNotFound(err) {
			return notFound("OAuth client %q not found", id)
		} else if err != nil {
			return err
		}
		if err := tx.DeleteOAuthClient(w.slug, id); err != nil {
			return err
		}
		if err := tx.DeleteAsset(w.slug, clientLogo(id)); err != nil && !isNotFound(err) {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditClientDeleted, target: clientTarget(rec.ID, rec.Name)})
	})
	return fromStore(err, "workspace")
}

// AuthenticateClient checks a confidential client's credentials, as a
// token endpoint receives them (HTTP Basic or the form body), and returns
// the client. An unknown client, a wrong secret and a public client
// (which has no secret to present) are the same CodeUnauthenticated
// error. The secret's hash is compared in constant time, and computed
// whether or not the client exists.
//
// A refusal is recorded in the audit trail (client.authentication_failed,
// see clientAuthFailed): one write, the only one it makes.
func (w *Workspace) AuthenticateClient(ctx context.Context, id, secret string) (OAuthClient, error) {
	var rec store.OAuthClient
	var known bool
	err := w.view(ctx, func(tx store.Tx) (err error) {
		rec, err = tx.OAuthClient(w.slug, id)
		if err != nil && !isNotFound(err) {
			return err
		}
		known = err == nil
		// rec is the zero record, without a hash, when the client is unknown.
		if !secretMatches(secret, rec.SecretHash) || err != nil || rec.Public {
			return errInvalidClientCredentials()
		}
		return nil
	})
	if ErrorCode(err) == CodeUnauthenticated {
		target := clientTarget(triedClientID(id), "")
		if known {
			target = clientTarget(rec.ID, rec.Name)
		}
		return OAuthClient{}, w.clientAuthFailed(ctx, target, err)
	}
	if err != nil {
		return OAuthClient{}, fromStore(err, "workspace")
	}
	return clientFromRecord(rec), nil
}

func errInvalidClientCredentials() error {
	return errorf(CodeUnauthenticated, "invalid client credentials")
}

// clientAuthFailed records a client's failed authentication on target
// and returns refusal, the error the caller answers with. The record is
// written alone (auditAlone): a flood of bad secrets costs one small
// write each (the id tried is cut by triedClientID, the secret is never
// kept) and nothing else: no event, no counter, no wake-up of the
// queue's watchers. A workspace deleted meanwhile has no trail to write
// to; the refusal stands.
func (w *Workspace) clientAuthFailed(ctx context.Context, target AuditTarget, refusal error) error {
	err := w.auditAlone(ctx, auditEntry{action: AuditClientAuthFailed, target: target, failure: true})
	if err != nil && !isNotFound(err) {
		return err
	}
	return refusal
}

// maxTriedClientID bounds, in bytes, the id of an unknown client that a
// record of client.authentication_failed keeps: a client id is 20
// characters, and whoever calls the token endpoint chooses what it sends.
const maxTriedClientID = 128

// triedClientID is what the audit trail keeps of a client id that names
// no client: valid UTF-8, cut at a character boundary to
// maxTriedClientID bytes.
func triedClientID(id string) string {
	id = strings.ToValidUTF8(id, "\uFFFD")
	if len(id) <= maxTriedClientID {
		return id
	}
	cut := maxTriedClientID
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return id[:cut]
}
