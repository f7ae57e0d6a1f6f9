package boltstore

import (
	"bytes"
	"errors"
	"fmt"
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

// getByID returns the value stored under id in the workspace's bucket n,
// or nil; the empty id, which no record has, finds nothing.
func (sp *space) getByID(n nested, id string) []byte {
	if id == "" {
		return nil
	}
	return sp.bucket(n).Get([]byte(id))
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
	v, err := encodeSigningKey(k)
	if err != nil {
		return err
	}
	return sp.bucket(bucketSigningKeys).Put([]byte(k.ID), v)
}

// SigningKeys implements store.Tx. The bucket is in id order; the keys
// are sorted by creation time after decoding: a workspace has few.
func (t *tx) SigningKeys(slug string) ([]store.SigningKey, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	var out []store.SigningKey
	err = sp.bucket(bucketSigningKeys).ForEach(func(k, v []byte) error {
		key, err := decodeSigningKey(k, v)
		out = append(out, key)
		return err
	})
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
	if sp.getByID(bucketSigningKeys, id) == nil { // a record is never empty
		return notFound("signing key %q", id)
	}
	return sp.bucket(bucketSigningKeys).Delete([]byte(id))
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
	var prev []byte
	if old := requests.Get(k); old != nil {
		o, err := decodeAuthRequest(k, old)
		if err != nil {
			return err
		}
		prev = userRecordKey(o.UserID, o.ID)
	}
	if err := moveEntry(sp.bucket(bucketUserAuthRequests), prev, userRecordKey(r.UserID, r.ID)); err != nil {
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
	v := sp.getByID(bucketAuthRequests, id)
	if v == nil {
		return store.AuthRequest{}, notFound("authorization request %q", id)
	}
	return decodeAuthRequest([]byte(id), v)
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
	if err := sp.moveUserGrant(k, grants.Get(k), g); err != nil {
		return err
	}
	if err := sp.resweep(bucketGrants, k, grants.Get(k), sweepKey(sweepGrant, g.ExpiresAt, k)); err != nil {
		return err
	}
	return grants.Put(k, v)
}

// moveUserGrant points user_grants at g instead of at prev, the record
// stored under the grant key k (nil if none). A grant of user 0 belongs
// to no user and has no entry.
func (sp *space) moveUserGrant(k, prev []byte, g store.Grant) error {
	index := sp.bucket(bucketUserGrants)
	var next []byte
	if g.UserID != 0 {
		next = userGrantKey(g.UserID, g.CreatedAt, g.ID)
	}
	if prev != nil {
		old, err := decodeGrant(k, prev)
		if err != nil {
			return err
		}
		if old.UserID != 0 {
			if prevKey := userGrantKey(old.UserID, old.CreatedAt, old.ID); !bytes.Equal(prevKey, next) {
				if err := index.Delete(prevKey); err != nil {
					return err
				}
			}
		}
	}
	if next == nil {
		return nil
	}
	return index.Put(next, nil)
}

// Grant implements store.Tx.
func (t *tx) Grant(slug, id string) (store.Grant, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Grant{}, err
	}
	v := sp.getByID(bucketGrants, id)
	if v == nil {
		return store.Grant{}, notFound("grant %q", id)
	}
	return decodeGrant([]byte(id), v)
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
	grants, prefix := sp.bucket(bucketGrants), idKey(userID)
	var out []store.Grant
	c := sp.bucket(bucketUserGrants).Cursor()
	for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := k[2*idKeyLen:]
		v := grants.Get(id)
		if v == nil {
			return nil, fmt.Errorf("boltstore: user_grants names grant %q, which does not exist", id)
		}
		g, err := decodeGrant(id, v)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
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
	var prev []byte
	if old := tokens.Get(k); old != nil {
		o, err := decodeRefreshToken(k, old)
		if err != nil {
			return err
		}
		prev = grantTokenKey(o.GrantID, o.ID)
	}
	if err := moveEntry(sp.bucket(bucketGrantRefreshTokens), prev, grantTokenKey(r.GrantID, r.ID)); err != nil {
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
	v := sp.getByID(bucketRefreshTokens, id)
	if v == nil {
		return store.RefreshToken{}, notFound("refresh token %q", id)
	}
	return decodeRefreshToken([]byte(id), v)
}
