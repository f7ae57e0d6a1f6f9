package identity

import (
	"context"
	"fmt"
	"strings"

	"github.com/identitylib/identity/store"
)

// ClaimMapper projects one user attribute into access and/or ID tokens
// under a claim name. The attribute key identifies the mapper.
type ClaimMapper struct {
	AttributeKey    string `json:"attributeKey"`
	ClaimName       string `json:"claimName"`
	IncludeInAccess bool   `json:"includeInAccess"`
	IncludeInID     bool   `json:"includeInId"`
	// Version changes on every write of the mapper (see Precondition); the
	// REST adapter serves it as the ETag, not in the JSON.
	Version int64 `json:"-"`
}

func mapperFromRecord(r store.ClaimMapper) ClaimMapper {
	return ClaimMapper{
		AttributeKey: r.AttributeKey, ClaimName: r.ClaimName,
		IncludeInAccess: r.IncludeInAccess, IncludeInID: r.IncludeInID, Version: r.Version,
	}
}

func (m ClaimMapper) record() store.ClaimMapper {
	return store.ClaimMapper{
		AttributeKey: m.AttributeKey, ClaimName: m.ClaimName,
		IncludeInAccess: m.IncludeInAccess, IncludeInID: m.IncludeInID, Version: m.Version,
	}
}

// ClaimMapperSpec is the input of SetClaimMapper. A nil flag takes its
// default: IncludeInAccess true, IncludeInID false.
type ClaimMapperSpec struct {
	// ClaimName: 1-128 characters, not reserved (see ReservedClaims),
	// unique among the workspace's mappers.
	ClaimName       string
	IncludeInAccess *bool
	IncludeInID     *bool
	// Precondition, when not nil, makes the put conditional on the
	// mapper it would replace: IfVersion(m.Version) for a mapper m read
	// before, Precondition{Exists: true} to update only,
	// Precondition{Absent: true} to create only.
	Precondition *Precondition
}

// TokenKind selects the token whose claims Claims returns.
type TokenKind int

// The token kinds.
const (
	AccessToken TokenKind = iota + 1
	IDToken
)

// String returns "access" or "id".
func (k TokenKind) String() string {
	switch k {
	case AccessToken:
		return "access"
	case IDToken:
		return "id"
	}
	return "unknown"
}

// reservedClaims are the claim names a mapper may not use, lower-cased:
// the registered claims of JWT (RFC 7519), OpenID Connect Core 1.0 (ID
// token and standard claims), OpenID Connect session management, OAuth
// token exchange (RFC 8693), proof of possession (RFC 7800), JWT access
// tokens (RFC 9068), security event tokens (RFC 8417), DPoP (RFC 9449),
// aggregated and distributed claims, and the JOSE header names that some
// libraries read from claims.
var reservedClaims = map[string]bool{}

func init() {
	for _, name := range ReservedClaims() {
		reservedClaims[strings.ToLower(name)] = true
	}
}

// ReservedClaims returns every claim name a mapper may not use. The
// comparison ignores case, so "SUB" is reserved too.
func ReservedClaims() []string {
	return []string{
		// RFC 7519.
		"iss", "sub", "aud", "exp", "nbf", "iat", "jti",
		// OpenID Connect Core: ID token claims.
		"azp", "nonce", "auth_time", "acr", "amr", "at_hash", "c_hash", "s_hash", "sub_jwk",
		// OpenID Connect Core: standard claims.
		"name", "given_name", "family_name", "middle_name", "nickname", "preferred_username",
		"profile", "picture", "website", "email", "email_verified", "gender", "birthdate",
		"zoneinfo", "locale", "phone_number", "phone_number_verified", "address", "updated_at",
		// Aggregated and distributed claims.
		"_claim_names", "_claim_sources",
		// Sessions, token exchange, proof of possession, access tokens.
		"sid", "act", "may_act", "cnf", "scope", "client_id", "roles", "groups", "entitlements",
		// The overage indications of this provider's roles and groups.
		"roles_overage", "groups_overage",
		// Security event tokens and DPoP.
		"events", "toe", "txn", "htm", "htu", "ath",
		// Header parameters some libraries accept from claims.
		"typ", "cty", "alg", "kid",
	}
}

// IsReservedClaim reports whether a mapper may not use name.
func IsReservedClaim(name string) bool { return reservedClaims[strings.ToLower(name)] }

// ListClaimMappers returns the workspace's mappers in ascending attribute key
// order (never nil).
func (w *Workspace) ListClaimMappers(ctx context.Context) ([]ClaimMapper, error) {
	var recs []store.ClaimMapper
	err := w.view(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.ClaimMappers(w.slug)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return mapAll(recs, mapperFromRecord), nil
}

// SetClaimMapper creates the mapper for attributeKey, or replaces it whole
// when it exists, and returns it with its new Version. Errors, in the
// order they are checked: an invalid key or a claim name that is empty,
// too long or holds NUL or a bidirectional control (CodeInvalid), a
// reserved claim name (CodeReservedClaim), spec.Precondition
// (CodePreconditionFailed), a claim name another mapper uses
// (CodeConflict), and a new mapper when the workspace has MaxClaimMappers
// (CodeLimitReached). Updating an existing mapper is allowed at the limit.
func (w *Workspace) SetClaimMapper(ctx context.Context, attributeKey string, spec ClaimMapperSpec) (ClaimMapper, error) {
	m := ClaimMapper{
		AttributeKey:    attributeKey,
		ClaimName:       spec.ClaimName,
		IncludeInAccess: spec.IncludeInAccess == nil || *spec.IncludeInAccess,
		IncludeInID:     spec.IncludeInID != nil && *spec.IncludeInID,
	}
	var p problems
	checkAttributeKey(&p, "attributeKey", attributeKey)
	checkClaimName(&p, "claimName", spec.ClaimName)
	if err := p.err("invalid claim mapper"); err != nil {
		return ClaimMapper{}, err
	}
	if IsReservedClaim(m.ClaimName) {
		return ClaimMapper{}, errorf(CodeReservedClaim, "claim name %q is reserved", m.ClaimName)
	}
	err := w.update(ctx, func(tx store.Tx) error {
		existing, err := tx.ClaimMappers(w.slug)
		if err != nil {
			return err
		}
		old, exists := findMapper(existing, attributeKey)
		if err := spec.Precondition.check(exists, old.Version, fmt.Sprintf("claim mapper of attribute %q", attributeKey)); err != nil {
			return err
		}
		if err := checkMapperFits(existing, m); err != nil {
			return err
		}
		m.Version = newVersion(old.Version)
		if err := tx.PutClaimMapper(w.slug, m.record()); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditMapperPut, target: mapperTarget(m.AttributeKey), changes: mapperChanges(old, exists, m)})
	})
	if err != nil {
		return ClaimMapper{}, fromStore(err, "workspace")
	}
	return m, nil
}

// mapperTarget is the mapper of attributeKey as the target of an audit
// record.
func mapperTarget(attributeKey string) AuditTarget {
	return AuditTarget{Kind: TargetMapper, ID: attributeKey, Display: attributeKey}
}

// mapperChanges are the fields SetClaimMapper changed: every field of a
// new mapper, those that differ of one replaced.
func mapperChanges(old store.ClaimMapper, exists bool, m ClaimMapper) auditChanges {
	if !exists {
		return auditChanges{}.set("claimName", nil, m.ClaimName).
			set("includeInAccess", nil, m.IncludeInAccess).set("includeInId", nil, m.IncludeInID)
	}
	return auditChanges{}.setIfChanged("claimName", old.ClaimName, m.ClaimName).
		setIfChanged("includeInAccess", old.IncludeInAccess, m.IncludeInAccess).
		setIfChanged("includeInId", old.IncludeInID, m.IncludeInID)
}

// findMapper returns the mapper of attributeKey among mappers, if any.
func findMapper(mappers []store.ClaimMapper, attributeKey string) (store.ClaimMapper, bool) {
	for _, m := range mappers {
		if m.AttributeKey == attributeKey {
			return m, true
		}
	}
	return store.ClaimMapper{}, false
}

// GetClaimMapper returns the mapper of attributeKey, or a not-found error.
func (w *Workspace) GetClaimMapper(ctx context.Context, attributeKey string) (ClaimMapper, error) {
	var rec store.ClaimMapper
	err := w.view(ctx, func(tx store.Tx) error {
		mappers, err := tx.ClaimMappers(w.slug)
		if err != nil {
			return err
		}
		var ok bool
		if rec, ok = findMapper(mappers, attributeKey); !ok {
			return notFound("no claim mapper for attribute %q", attributeKey)
		}
		return nil
	})
	if err != nil {
		return ClaimMapper{}, fromStore(err, "workspace")
	}
	return mapperFromRecord(rec), nil
}

// checkMapperFits enforces claim name uniqueness and the mapper limit
// against the workspace's existing mappers.
func checkMapperFits(existing []store.ClaimMapper, m ClaimMapper) error {
	replacing := false
	for _, e := range existing {
		if e.AttributeKey == m.AttributeKey {
			replacing = true
		} else if e.ClaimName == m.ClaimName {
			return errorf(CodeConflict, "claim name %q is already used by the mapper of attribute %q", m.ClaimName, e.AttributeKey)
		}
	}
	if !replacing && len(existing) >= MaxClaimMappers {
		return errorf(CodeLimitReached, "the workspace already has the maximum of %d claim mappers", MaxClaimMappers)
	}
	return nil
}

// DeleteClaimMapper removes the mapper of attributeKey; its claim no longer
// appears in Claims (tokens already issued are unchanged). A missing mapper
// is a not-found error.
func (w *Workspace) DeleteClaimMapper(ctx context.Context, attributeKey string) error {
	err := w.update(ctx, func(tx store.Tx) error {
		err := tx.DeleteClaimMapper(w.slug, attributeKey)
		if isNotFound(err) {
			return notFound("no claim mapper for attribute %q", attributeKey)
		}
		if err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditMapperDeleted, target: mapperTarget(attributeKey)})
	})
	return fromStore(err, "workspace")
}

// GetClaims returns the claims the workspace's mappers project for the user
// into a token of the given kind: for each mapper that includes the kind,
// the user's attribute value under the mapper's claim name. A mapper whose
// attribute the user lacks contributes nothing. This is the call a token
// issuer makes for every token; it reads in one transaction and never
// writes. It does not check whether the user is enabled: an issuer
// authenticates the user first (Authenticate refuses disabled users).
func (w *Workspace) GetClaims(ctx context.Context, userID int64, kind TokenKind) (map[string]string, error) {
	if kind != AccessToken && kind != IDToken {
		var p problems
		p.add("token", RuleUnknown, "must be access or id")
		return nil, p.err("invalid token kind")
	}
	claims := map[string]string{}
	err := w.view(ctx, func(tx store.Tx) error {
		clear(claims)
		mappers, attrs, err := w.claimInputs(tx, userID)
		if err != nil {
			return err
		}
		for _, m := range mappers {
			value, ok := attrs[m.AttributeKey]
			if ok && (kind == AccessToken && m.IncludeInAccess || kind == IDToken && m.IncludeInID) {
				claims[m.ClaimName] = value
			}
		}
		return nil
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return claims, nil
}

// claimInputs returns what Claims projects: the workspace's mappers and,
// when there are any, the user's attributes, or a not-found error when
// the user does not exist. A store that implements store.Bulk reads them
// in one request.
func (w *Workspace) claimInputs(tx store.Tx, userID int64) ([]store.ClaimMapper, map[string]string, error) {
	if bulk, ok := bulkOf(tx); ok && userID > 0 {
		_, attrs, mappers, err := bulk.UserWithClaimInputs(w.slug, userID)
		if isNotFound(err) {
			return nil, nil, notFound("user %d not found", userID)
		}
		return mappers, attrs, err
	}
	if _, err := w.user(tx, userID); err != nil {
		return nil, nil, err
	}
	mappers, err := tx.ClaimMappers(w.slug)
	if err != nil || len(mappers) == 0 {
		return nil, nil, err
	}
	attrs, err := tx.UserAttributes(w.slug, userID)
	return mappers, attrs, err
}
