package identity

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// Scope is a permission an API key carries.
type Scope string

// The scopes of the management API.
const (
	ScopeUsersRead           Scope = "users:read"
	ScopeUsersWrite          Scope = "users:write"
	ScopeUserAttributesRead  Scope = "user_attributes:read"
	ScopeUserAttributesWrite Scope = "user_attributes:write"
	ScopeClaimMappersRead    Scope = "claim_mappers:read"
	ScopeClaimMappersWrite   Scope = "claim_mappers:write"
	ScopeWebhooksRead        Scope = "webhooks:read"
	ScopeWebhooksWrite       Scope = "webhooks:write"
	ScopeRolesRead           Scope = "roles:read"
	ScopeRolesWrite          Scope = "roles:write"
	ScopeGroupsRead          Scope = "groups:read"
	ScopeGroupsWrite         Scope = "groups:write"
	// ScopeClientsRead and ScopeClientsWrite cover the workspace's OAuth
	// clients and their logos.
	ScopeClientsRead  Scope = "clients:read"
	ScopeClientsWrite Scope = "clients:write"
	// ScopeBrandingRead and ScopeBrandingWrite cover the workspace's
	// display name, accent colour and logo.
	ScopeBrandingRead  Scope = "branding:read"
	ScopeBrandingWrite Scope = "branding:write"
	// ScopeAuditRead covers the workspace's audit trail.
	ScopeAuditRead Scope = "audit:read"
)

// Scopes returns every scope in a stable order.
func Scopes() []Scope {
	return []Scope{
		ScopeUsersRead, ScopeUsersWrite, ScopeUserAttributesRead, ScopeUserAttributesWrite,
		ScopeClaimMappersRead, ScopeClaimMappersWrite, ScopeWebhooksRead, ScopeWebhooksWrite,
		ScopeRolesRead, ScopeRolesWrite, ScopeGroupsRead, ScopeGroupsWrite,
		ScopeClientsRead, ScopeClientsWrite, ScopeBrandingRead, ScopeBrandingWrite,
		ScopeAuditRead,
	}
}

// Known reports whether s is one of Scopes.
func (s Scope) Known() bool { return slices.Contains(Scopes(), s) }

// APIKey describes an issued API key. The key itself is never stored: only
// a SHA-256 hash of its random part, so a key that is lost cannot be shown
// again, only revoked and replaced.
type APIKey struct {
	// ID is the key's public identifier; it is part of the key and safe to
	// log and show.
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Name      string    `json:"name"`
	Scopes    []Scope   `json:"scopes"`
	CreatedAt time.Time `json:"createdAt"`
}

// HasScope reports whether the key carries s.
func (k APIKey) HasScope(s Scope) bool { return slices.Contains(k.Scopes, s) }

// apiKeyPrefix starts every API key; see newToken for the rest.
const apiKeyPrefix = "idk_"

func apiKeyFromRecord(r store.APIKey) APIKey {
	scopes := make([]Scope, len(r.Scopes))
	for i, s := range r.Scopes {
		scopes[i] = Scope(s)
	}
	return APIKey{ID: r.ID, Workspace: r.Workspace, Name: r.Name, Scopes: scopes, CreatedAt: r.CreatedAt}
}

// CreatedAPIKey is a key just issued, with the key itself.
type CreatedAPIKey struct {
	APIKey APIKey `json:"apiKey"`
	// Secret is the key itself ("idk_", 16 hex digits of its ID, "_" and
	// 43 characters of base64url): shown only here, since only a hash of
	// it is stored.
	Secret string `json:"secret"`
}

// CreateAPIKey issues a key for the workspace with the given scopes (at
// least one, each known, no duplicates) and an optional name. It returns
// the key's description and the key itself, which is shown only here.
func (w *Workspace) CreateAPIKey(ctx context.Context, name string, scopes []Scope) (CreatedAPIKey, error) {
	if err := checkAPIKeyInput(name, scopes); err != nil {
		return CreatedAPIKey{}, err
	}
	id, secret, key, err := newToken(apiKeyPrefix)
	if err != nil {
		return CreatedAPIKey{}, internal(err)
	}
	rec := store.APIKey{
		ID: id, Workspace: w.slug, Name: name, SecretHash: hashSecret(secret), CreatedAt: w.svc.timestamp(),
	}
	for _, s := range scopes {
		rec.Scopes = append(rec.Scopes, string(s))
	}
	err = w.update(ctx, func(tx store.Tx) error {
		if _, err := tx.APIKey(id); err == nil {
			return fmt.Errorf("api key id collision") // 64 random bits: never in practice
		}
		if err := tx.PutAPIKey(rec); err != nil {
			return err
		}
		changes := auditChanges{}.set("scopes", nil, rec.Scopes)
		if name != "" {
			changes = changes.set("name", nil, name)
		}
		return w.audit(ctx, tx, auditEntry{action: AuditAPIKeyCreated, target: apiKeyTarget(rec), changes: changes})
	})
	if err != nil {
		return CreatedAPIKey{}, fromStore(err, "workspace")
	}
	return CreatedAPIKey{APIKey: apiKeyFromRecord(rec), Secret: key}, nil
}

// apiKeyTarget is the key as the target of an audit record: its id and
// name, never the key.
func apiKeyTarget(rec store.APIKey) AuditTarget {
	return AuditTarget{Kind: TargetAPIKey, ID: rec.ID, Display: rec.Name}
}

func checkAPIKeyInput(name string, scopes []Scope) error {
	var p problems
	if checkText(&p, "name", name, 0, MaxAPIKeyNameLength) {
		checkNoControl(&p, "name", name)
	}
	if len(scopes) == 0 {
		p.add("scopes", RuleRequired, "must name at least one scope")
	}
	for i, s := range scopes {
		field := fmt.Sprintf("scopes[%d]", i)
		switch {
		case !s.Known():
			p.add(field, RuleUnknown, "unknown scope %q", s)
		case slices.Index(scopes, s) < i:
			p.add(field, RuleDuplicate, "scope %q is listed twice", s)
		}
	}
	return p.err("invalid API key request")
}

// ListAPIKeys returns the workspace's keys, without secrets, ascending by id
// (never nil).
func (w *Workspace) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	var recs []store.APIKey
	err := w.view(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.APIKeys(w.slug)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return mapAll(recs, apiKeyFromRecord), nil
}

// RevokeAPIKey deletes the key with the id; it stops working at once. A
// key of another workspace, or none, is a not-found error.
func (w *Workspace) RevokeAPIKey(ctx context.Context, id string) error {
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.APIKey(id)
		if isNotFound(err) || err == nil && rec.Workspace != w.slug {
			return notFound("api key %q not found", id)
		}
		if err != nil {
			return err
		}
		if err := tx.DeleteAPIKey(id); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditAPIKeyRevoked, target: apiKeyTarget(rec)})
	})
	// Forgotten whatever Update returned: a commit may have happened.
	w.svc.keys.forgetKey(id)
	return fromStore(err, "api key")
}

// APIKeyID returns the public id embedded in an API key (APIKey.ID), or
// false if key is not shaped like one. It does not verify the key.
func APIKeyID(key string) (string, bool) {
	id, _, ok := parseToken(apiKeyPrefix, key)
	return id, ok
}

// VerifyAPIKey checks a presented key and returns its description. A
// malformed, unknown, revoked or wrong key is a CodeUnauthenticated error.
// The secret is compared in constant time. A key verified before may be
// answered from the Service's key cache (see Options.KeyCacheTTL).
func (s *Service) VerifyAPIKey(ctx context.Context, key string) (APIKey, error) {
	k, err := s.verifiedKey(ctx, key)
	if err != nil {
		return APIKey{}, err
	}
	return apiKeyFromRecord(k.rec), nil
}

// verifiedKey checks a presented key and returns its record and its
// workspace's creation time: from the key cache when it holds the key,
// else from one read transaction, whose result then fills the cache. The
// presented secret is checked against the record's hash either way. A key
// whose workspace is missing is as invalid as one that is missing.
func (s *Service) verifiedKey(ctx context.Context, key string) (*cachedKey, error) {
	id, secret, ok := parseToken(apiKeyPrefix, key)
	if !ok {
		return nil, invalidAPIKey()
	}
	cache := &s.keys
	var gen uint64
	var now time.Time
	if cache.enabled() {
		now = s.now()
		if k, ok := cache.get(id, now); ok {
			if !secretMatches(secret, k.rec.SecretHash) {
				return nil, invalidAPIKey()
			}
			return k, nil
		}
		gen = cache.generation()
	}
	k := new(cachedKey)
	err := s.store.View(ctx, func(tx store.Tx) error {
		rec, err := tx.APIKey(id)
		if isNotFound(err) {
			return invalidAPIKey()
		}
		if err != nil {
			return err
		}
		if !secretMatches(secret, rec.SecretHash) {
			return invalidAPIKey()
		}
		ws, err := tx.Workspace(rec.Workspace)
		if isNotFound(err) {
			return invalidAPIKey()
		}
		if err != nil {
			return err
		}
		k.rec, k.workspaceCreated = rec, ws.CreatedAt
		return nil
	})
	if err != nil {
		return nil, fromStore(err, "api key")
	}
	if cache.enabled() {
		cache.put(gen, now, k)
	}
	return k, nil
}

// invalidAPIKey is the error of a key that does not verify.
func invalidAPIKey() error { return errorf(CodeUnauthenticated, "invalid api key") }

// AuthorizedAPIKey is what AuthorizeAPIKey returns: the workspace the
// key may act in, and the key.
type AuthorizedAPIKey struct {
	// Workspace is the workspace of the key, for the operation's calls.
	Workspace *Workspace
	// Key describes the key (never the secret): its ID and Name are what
	// an adapter names in the Actor of the calls it makes for the key
	// (kind ActorAPIKey).
	Key APIKey
}

// AuthorizeAPIKey checks that key may perform an operation needing every one of
// scopes in the workspace slug, and returns that workspace with the key's
// description. A bad key is CodeUnauthenticated. A valid key of another
// workspace is CodeForbidden, the same whether slug exists or not; a key
// without one of the scopes is CodeForbidden with Error.Scope set to the
// first it lacks.
//
// A key it verified before may be answered from the Service's key cache
// without reading the store (see Options.KeyCacheTTL); a key revoked
// through this Service, by RevokeAPIKey or DeleteWorkspace, is refused by
// the next call all the same.
func (s *Service) AuthorizeAPIKey(ctx context.Context, key, slug string, scopes ...Scope) (AuthorizedAPIKey, error) {
	k, err := s.verifiedKey(ctx, key)
	if err != nil {
		return AuthorizedAPIKey{}, err
	}
	if k.rec.Workspace != slug {
		return AuthorizedAPIKey{}, errorf(CodeForbidden, "the api key is not valid for this workspace")
	}
	for _, scope := range scopes {
		if !slices.Contains(k.rec.Scopes, string(scope)) {
			return AuthorizedAPIKey{}, &Error{Code: CodeForbidden, Message: fmt.Sprintf("the api key lacks the scope %q", scope), Scope: scope}
		}
	}
	ws := &Workspace{svc: s, slug: k.rec.Workspace, createdAt: k.workspaceCreated}
	return AuthorizedAPIKey{Workspace: ws, Key: apiKeyFromRecord(k.rec)}, nil
}
