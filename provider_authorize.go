package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// AuthorizationRequest is an OAuth 2.0 authorization request of the
// OpenID Connect code flow, as a client sent it.
type AuthorizationRequest struct {
	ClientID     string
	RedirectURI  string
	ResponseType string
	Scopes       []string
	// State and Nonce are returned to the client as they came: State with
	// the code, Nonce in the ID token. Each at most MaxStateLength bytes.
	State string
	Nonce string
	// CodeChallenge and CodeChallengeMethod are PKCE (RFC 7636): required
	// of a public client, accepted from any; the method must be S256.
	CodeChallenge       string
	CodeChallengeMethod string
	// Prompt holds the prompt values: "none" (never show a page: a code
	// from an existing session or login_required), "login" (sign in again
	// even with a session); "consent" and "select_account" are accepted
	// and change nothing.
	Prompt []string
	// MaxAge, when set, is the max_age parameter: a session whose sign-in
	// is older is not used (the user signs in again; with prompt=none it is
	// login_required). Zero acts as prompt=login. Negative is invalid.
	MaxAge *time.Duration
	// UILocales is the ui_locales parameter: language tags,
	// space-separated, the preferred first, for the hosted pages. A hint
	// only: tags that are not well formed are dropped, and at most
	// maxUILocales are kept.
	UILocales string
}

// Limits of an authorization request.
const (
	// MaxStateLength bounds the state and nonce parameters.
	MaxStateLength = 2048
	// maxUILocales bounds the tags of ui_locales kept.
	maxUILocales = 8
)

// cleanUILocales returns the well-formed tags of a ui_locales value
// (letters, digits and '-', at most 35 characters, as BCP 47 allows), at
// most maxUILocales of them, space-separated.
func cleanUILocales(s string) string {
	var tags []string
	for _, tag := range strings.Fields(s) {
		if len(tags) == maxUILocales {
			break
		}
		if len(tag) <= 35 && strings.Trim(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == "" {
			tags = append(tags, tag)
		}
	}
	return strings.Join(tags, " ")
}

// The prompt values of an authorization request.
const (
	PromptNone          = "none"
	PromptLogin         = "login"
	PromptConsent       = "consent"
	PromptSelectAccount = "select_account"
)

// Authorization is the outcome of an authorization request: either the
// user must sign in (RequestID), or a code goes back to the client.
type Authorization struct {
	// RequestID, when set, names the stored request the sign-in page
	// completes with SignIn.
	RequestID string
	// Code, when set, is sent to RedirectURI with State.
	Code        string
	RedirectURI string
	State       string
}

// PendingAuthorization is a stored authorization request waiting for the
// user to sign in: what a sign-in page shows.
type PendingAuthorization struct {
	RequestID   string
	ClientID    string
	ClientName  string
	RedirectURI string
	State       string
	ExpiresAt   time.Time
	// UILocales is the request's ui_locales, as AuthorizationRequest
	// kept it.
	UILocales string
}

// codePrefix starts every authorization code; the rest is the request's
// id and a secret (see newToken).
const codePrefix = "idac_"

// GetAuthorizationClient returns the client of an authorization request
// when it exists and redirectURI is one of its redirect URIs, compared
// exactly. Its errors (CodeNotFound, CodeInvalid on "redirect_uri") must
// be shown to the user and never sent to the redirect URI: it is not
// known to be the client's.
func (p *Provider) GetAuthorizationClient(ctx context.Context, clientID, redirectURI string) (OAuthClient, error) {
	w := p.w
	var c store.OAuthClient
	err := w.view(ctx, func(tx store.Tx) (err error) {
		c, err = w.authorizationClient(tx, clientID, redirectURI)
		return err
	})
	if err != nil {
		return OAuthClient{}, fromStore(err, "client")
	}
	return clientFromRecord(c), nil
}

func (w *Workspace) authorizationClient(tx store.Tx, clientID, redirectURI string) (store.OAuthClient, error) {
	if clientID == "" {
		return store.OAuthClient{}, errorf(CodeNotFound, "client_id is missing")
	}
	c, err := tx.OAuthClient(w.slug, clientID)
	if isNotFound(err) {
		return store.OAuthClient{}, errorf(CodeNotFound, "client not found")
	}
	if err != nil {
		return store.OAuthClient{}, err
	}
	if !slices.Contains(c.RedirectURIs, redirectURI) {
		var p problems
		p.add("redirect_uri", RuleUnknown, "is not registered for the client")
		return store.OAuthClient{}, p.err("redirect_uri is not registered for the client")
	}
	return c, nil
}

// Authorize decides what an authorization request leads to. It checks
// the client and redirect URI again (CodeNotFound when the client is
// gone: show it, do not redirect), then the rest, whose errors go back to
// the client: response_type must be "code" (CodeInvalid on
// "response_type"), the scopes must hold "openid" (CodeInvalid on
// "scope"; scopes the provider does not know are dropped), the client
// must have the authorization_code grant (CodeForbidden), PKCE as
// AuthorizationRequest says (CodeInvalid on "code_challenge" or
// "code_challenge_method"), prompt values known and "none" alone
// (CodeInvalid on "prompt").
//
// With a valid session token, no prompt=login and a sign-in no older than
// MaxAge the user is signed in already: the result carries a code (single
// sign-on). With prompt=none
// and no valid session it is CodeLoginRequired. Otherwise the request is
// stored for AuthorizationRequestLifetime and the result names it.
func (p *Provider) Authorize(ctx context.Context, req AuthorizationRequest, sessionToken string) (Authorization, error) {
	w := p.w
	if err := w.tokensReady(); err != nil {
		return Authorization{}, err
	}
	client, err := p.GetAuthorizationClient(ctx, req.ClientID, req.RedirectURI)
	if err != nil {
		return Authorization{}, err
	}
	if err := req.validate(client); err != nil {
		return Authorization{}, err
	}
	var session *Session
	if sessionToken != "" && !slices.Contains(req.Prompt, PromptLogin) {
		if session, err = w.ssoSession(ctx, sessionToken, req.MaxAge); err != nil {
			return Authorization{}, err
		}
	}
	if session == nil && slices.Contains(req.Prompt, PromptNone) {
		return Authorization{}, errorf(CodeLoginRequired, "the user is not signed in")
	}
	id, _, _, err := newToken("")
	if err != nil {
		return Authorization{}, internal(err)
	}
	now := w.svc.timestamp()
	rec := store.AuthRequest{
		ID: id, ClientID: client.ID, RedirectURI: req.RedirectURI, Scopes: knownScopes(req.Scopes),
		State: req.State, Nonce: req.Nonce, CodeChallenge: req.CodeChallenge, CodeChallengeMethod: req.CodeChallengeMethod,
		Prompt: strings.Join(req.Prompt, " "), UILocales: cleanUILocales(req.UILocales), CreatedAt: now, ExpiresAt: now.Add(AuthorizationRequestLifetime),
	}
	if session == nil {
		err = w.update(ctx, func(tx store.Tx) error { return tx.PutAuthRequest(w.slug, rec) })
		if err != nil {
			return Authorization{}, fromStore(err, "workspace")
		}
		return Authorization{RequestID: id}, nil
	}
	var code string
	err = w.update(ctx, func(tx store.Tx) (err error) {
		code, err = w.issueCode(tx, rec, *session, now)
		return err
	})
	if err != nil {
		return Authorization{}, fromStore(err, "session")
	}
	return Authorization{Code: code, RedirectURI: rec.RedirectURI, State: rec.State}, nil
}

// ssoSession returns the session of a session token if it signs its user
// in for a request without a sign-in page: valid, no older than maxAge,
// and, under MFARequired, of a user with a second factor (a session
// started before the policy was turned on does not skip the enrolment).
// Otherwise it returns nil.
func (w *Workspace) ssoSession(ctx context.Context, token string, maxAge *time.Duration) (*Session, error) {
	v, err := w.VerifySession(ctx, token)
	s := v.Session
	switch {
	case ErrorCode(err) == CodeUnauthenticated:
		return nil, nil
	case err != nil:
		return nil, err
	case maxAge != nil && !w.svc.timestamp().Before(s.CreatedAt.Add(*maxAge)):
		return nil, nil
	case v.User.MFAEnabled:
		return &s, nil
	}
	set, err := w.GetSettings(ctx)
	if err != nil || set.MFA == MFARequired {
		return nil, err
	}
	return &s, nil
}

// validate checks what Authorize checks after the client.
func (req AuthorizationRequest) validate(c OAuthClient) error {
	var p problems
	if req.ResponseType != "code" {
		p.add("response_type", RuleUnknown, "must be code")
		return p.err("unsupported response_type")
	}
	if !c.HasGrantType(GrantAuthorizationCode) {
		return errorf(CodeForbidden, "the client may not use the authorization code flow")
	}
	if !slices.Contains(req.Scopes, ScopeOpenID) {
		p.add("scope", RuleRequired, "must include openid")
	}
	switch {
	case req.CodeChallenge == "" && c.Public:
		p.add("code_challenge", RuleRequired, "is required of a public client (PKCE with S256)")
	case req.CodeChallenge == "" && req.CodeChallengeMethod != "":
		p.add("code_challenge", RuleRequired, "is required with code_challenge_method")
	case req.CodeChallenge == "":
	case req.CodeChallengeMethod != "S256":
		p.add("code_challenge_method", RuleUnknown, "must be S256")
	case !isS256Challenge(req.CodeChallenge):
		p.add("code_challenge", RuleFormat, "must be 43 characters of base64url (an S256 challenge)")
	}
	for _, v := range req.Prompt {
		if !slices.Contains([]string{PromptNone, PromptLogin, PromptConsent, PromptSelectAccount}, v) {
			p.add("prompt", RuleUnknown, "has an unknown value")
		}
	}
	if slices.Contains(req.Prompt, PromptNone) && len(req.Prompt) > 1 {
		p.add("prompt", RuleUnknown, "none cannot be combined with other values")
	}
	if req.MaxAge != nil && *req.MaxAge < 0 {
		p.add("max_age", RuleRange, "must not be negative")
	}
	for _, f := range []struct{ name, value string }{{"state", req.State}, {"nonce", req.Nonce}} {
		if len(f.value) > MaxStateLength {
			p.add(f.name, RuleMaxLength, "must be at most %d bytes", MaxStateLength)
		} else if !utf8.ValidString(f.value) {
			p.add(f.name, RuleUTF8, "must be valid UTF-8")
		}
	}
	if p.empty() {
		return nil
	}
	return p.err(p.list[0].Field + " " + p.list[0].Message)
}

// isS256Challenge reports whether s has the form of an S256 challenge:
// the unpadded base64url of 32 bytes.
func isS256Challenge(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// issueCode completes a request for a signed-in session: the code's
// secret is hashed into the request, which now expires with the code.
func (w *Workspace) issueCode(tx store.Tx, rec store.AuthRequest, s Session, now time.Time) (string, error) {
	_, secret, _, err := newToken("")
	if err != nil {
		return "", internal(err)
	}
	rec.UserID, rec.SessionID, rec.AuthTime, rec.AMR = s.UserID, s.ID, s.CreatedAt, s.AMR
	rec.CodeHash, rec.ExpiresAt = hashSecret(secret), now.Add(AuthorizationCodeLifetime)
	if err := tx.PutAuthRequest(w.slug, rec); err != nil {
		return "", err
	}
	return codePrefix + rec.ID + "_" + secret, nil
}

// pendingRequest returns a stored request that still waits for its user.
func (w *Workspace) pendingRequest(tx store.Tx, requestID string, now time.Time) (store.AuthRequest, error) {
	rec, err := tx.AuthRequest(w.slug, requestID)
	switch {
	case isNotFound(err) || err == nil && len(rec.CodeHash) > 0:
		return store.AuthRequest{}, errorf(CodeTokenInvalid, "this sign-in request is unknown or was completed already")
	case err != nil:
		return store.AuthRequest{}, err
	case !now.Before(rec.ExpiresAt):
		return store.AuthRequest{}, errorf(CodeTokenExpired, "this sign-in request has expired")
	}
	return rec, nil
}

// GetPendingAuthorization returns a stored request that waits for its user
// to sign in. An unknown or completed request is CodeTokenInvalid, an
// expired one CodeTokenExpired: the user should start again from the
// application.
func (p *Provider) GetPendingAuthorization(ctx context.Context, requestID string) (PendingAuthorization, error) {
	w := p.w
	var rec store.AuthRequest
	var client store.OAuthClient
	err := w.view(ctx, func(tx store.Tx) (err error) {
		if rec, err = w.pendingRequest(tx, requestID, w.svc.timestamp()); err != nil {
			return err
		}
		client, err = tx.OAuthClient(w.slug, rec.ClientID)
		return err
	})
	if err != nil {
		return PendingAuthorization{}, fromStore(err, "client")
	}
	return PendingAuthorization{
		RequestID: rec.ID, ClientID: rec.ClientID, ClientName: client.Name,
		RedirectURI: rec.RedirectURI, State: rec.State, ExpiresAt: rec.ExpiresAt, UILocales: rec.UILocales,
	}, nil
}
