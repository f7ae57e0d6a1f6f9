package boltstore

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/identitylib/identity/store"
)

// The records of the OpenID Provider live in their workspace's
// signing_keys, auth_requests, grants and refresh_tokens buckets under
// their ids; user_grants indexes the grants of each user as user_sessions
// does the sessions, user_auth_requests the requests a user signed in to,
// and grant_refresh_tokens the refresh tokens of each grant (see
// erasure.go). The store front never passes on an empty id (bbolt
// cannot store an empty key), nor a refresh token without a grant; the
// puts refuse an empty id all the same, as PutOAuthClient does.

// errEmptyID returns the error of a put of a record without an id.
func errEmptyID(what string) error {
	return fmt.Errorf("boltstore: the %s id is empty", what)
}

// Signing keys.

// PutSigningKey implements store.Tx.
func (t *tx) PutSigningKey(slug string, k store.SigningKey) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if k.ID == "" {
		return errEmptyID("signing key")
	}
	return putRecord(sp.bucket(bucketSigningKeys), []byte(k.ID), k, encodeSigningKey)
}

// SigningKeys implements store.Tx. The bucket is in id order; the keys
// are sorted by creation time after decoding: a workspace has few.
func (t *tx) SigningKeys(slug string) ([]store.SigningKey, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	out, err := listRecords(sp.bucket(bucketSigningKeys), decodeSigningKey)
	if err != nil {
		return nil, err
	}
	// Stable, over keys in id order: ties keep id order.
	slices.SortStableFunc(out, func(a, b store.SigningKey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// DeleteSigningKey implements store.Tx.
func (t *tx) DeleteSigningKey(slug, id string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return deleteRecord(sp.bucket(bucketSigningKeys), []byte(id), "signing key %q", id)
}

// Authorization requests.

// PutAuthRequest implements store.Tx.
func (t *tx) PutAuthRequest(slug string, r store.AuthRequest) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if r.ID == "" {
		return errEmptyID("authorization request")
	}
	v, err := encodeAuthRequest(r)
	if err != nil {
		return err
	}
	requests, k := sp.bucket(bucketAuthRequests), []byte(r.ID)
	if err := moveIndexEntry(requests, sp.bucket(bucketUserAuthRequests), k, r, decodeAuthRequest, authRequestEntry); err != nil {
		return err
	}
	if err := sp.resweep(bucketAuthRequests, k, requests.Get(k), sweepKey(sweepAuthRequest, r.ExpiresAt, k)); err != nil {
		return err
	}
	return requests.Put(k, v)
}

// AuthRequest implements store.Tx.
func (t *tx) AuthRequest(slug, id string) (store.AuthRequest, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.AuthRequest{}, err
	}
	return getRecord(sp.bucket(bucketAuthRequests), []byte(id), decodeAuthRequest, "authorization request %q", id)
}

// Grants.

// PutGrant implements store.Tx.
func (t *tx) PutGrant(slug string, g store.Grant) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if g.ID == "" {
		return errEmptyID("grant")
	}
	v, err := encodeGrant(g)
	if err != nil {
		return err
	}
	grants, k := sp.bucket(bucketGrants), []byte(g.ID)
	if err := moveIndexEntry(grants, sp.bucket(bucketUserGrants), k, g, decodeGrant, grantEntry); err != nil {
		return err
	}
	if err := sp.resweep(bucketGrants, k, grants.Get(k), sweepKey(sweepGrant, g.ExpiresAt, k)); err != nil {
		return err
	}
	return grants.Put(k, v)
}

// Grant implements store.Tx.
func (t *tx) Grant(slug, id string) (store.Grant, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Grant{}, err
	}
	return getRecord(sp.bucket(bucketGrants), []byte(id), decodeGrant, "grant %q", id)
}

// UserGrants implements store.Tx: a prefix scan of user_grants, whose
// keys order a user's grants by creation time, then id. A user without
// grants, or unknown, has none; that is not an error. User 0 has no
// entries, so none either.
func (t *tx) UserGrants(slug string, userID int64) ([]store.Grant, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	out, _, err := userRecords(sp, bucketUserGrants, bucketGrants, idKey(userID), 0, math.MaxInt, "grant", decodeGrant)
	return out, err
}

// Refresh tokens.

// errEmptyGrantID is returned by PutRefreshToken for a token that names
// no grant, which the store front never passes on.
var errEmptyGrantID = errors.New("boltstore: the refresh token's grant id is empty")

// PutRefreshToken implements store.Tx.
func (t *tx) PutRefreshToken(slug string, r store.RefreshToken) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if r.ID == "" {
		return errEmptyID("refresh token")
	}
	if r.GrantID == "" {
		return errEmptyGrantID
	}
	v, err := encodeRefreshToken(r)
	if err != nil {
		return err
	}
	tokens, k := sp.bucket(bucketRefreshTokens), []byte(r.ID)
	if err := moveIndexEntry(tokens, sp.bucket(bucketGrantRefreshTokens), k, r, decodeRefreshToken, refreshTokenEntry); err != nil {
		return err
	}
	if err := sp.resweep(bucketRefreshTokens, k, tokens.Get(k), sweepKey(sweepRefreshToken, r.ExpiresAt, k)); err != nil {
		return err
	}
	return tokens.Put(k, v)
}

// RefreshToken implements store.Tx.
func (t *tx) RefreshToken(slug, id string) (store.RefreshToken, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.RefreshToken{}, err
	}
	return getRecord(sp.bucket(bucketRefreshTokens), []byte(id), decodeRefreshToken, "refresh token %q", id)
}
