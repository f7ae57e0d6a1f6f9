package memstore

import (
	"cmp"
	"slices"

	"github.com/identitylib/identity/store"
)

// The records of the OpenID Provider: signing keys, authorization
// requests, grants (with their per-user index) and refresh tokens. The
// front refuses an empty id for each, and a refresh token without a
// grant, before these methods run.

// Signing keys.

func copySigningKey(k store.SigningKey) store.SigningKey {
	k.PrivateKey = slices.Clone(k.PrivateKey)
	k.PublicKey = slices.Clone(k.PublicKey)
	k.CreatedAt = normTime(k.CreatedAt)
	k.ActivatedAt = normTime(k.ActivatedAt)
	k.RetiredAt = normTime(k.RetiredAt)
	k.RemoveAt = normTime(k.RemoveAt)
	return k
}

// PutSigningKey implements store.Tx.
func (t *tx) PutSigningKey(slug string, k store.SigningKey) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.signingKeys, k.ID, copySigningKey(k))
	return nil
}

// SigningKeys implements store.Tx. It sorts the workspace's keys on each
// call: a workspace has few.
func (t *tx) SigningKeys(slug string) ([]store.SigningKey, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	out := make([]store.SigningKey, 0, len(n.signingKeys))
	for _, k := range n.signingKeys {
		out = append(out, copySigningKey(k))
	}
	slices.SortFunc(out, func(a, b store.SigningKey) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// DeleteSigningKey implements store.Tx.
func (t *tx) DeleteSigningKey(slug, id string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.signingKeys, id)
}

// Authorization requests.

func copyAuthRequest(r store.AuthRequest) store.AuthRequest {
	r.Scopes = slices.Clone(r.Scopes)
	r.AMR = slices.Clone(r.AMR)
	r.CodeHash = slices.Clone(r.CodeHash)
	r.CreatedAt = normTime(r.CreatedAt)
	r.ExpiresAt = normTime(r.ExpiresAt)
	r.AuthTime = normTime(r.AuthTime)
	r.UsedAt = normTime(r.UsedAt)
	return r
}

// PutAuthRequest implements store.Tx.
func (t *tx) PutAuthRequest(slug string, r store.AuthRequest) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.authRequests, r.ID, copyAuthRequest(r))
	return nil
}

// AuthRequest implements store.Tx.
func (t *tx) AuthRequest(slug, id string) (store.AuthRequest, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.AuthRequest{}, err
	}
	return getRecord(n.authRequests, id, copyAuthRequest)
}

// Grants.

func copyGrant(g store.Grant) store.Grant {
	g.Scopes = slices.Clone(g.Scopes)
	g.AMR = slices.Clone(g.AMR)
	g.AuthTime = normTime(g.AuthTime)
	g.CreatedAt = normTime(g.CreatedAt)
	g.ExpiresAt = normTime(g.ExpiresAt)
	g.RevokedAt = normTime(g.RevokedAt)
	return g
}

// PutGrant implements store.Tx.
func (t *tx) PutGrant(slug string, g store.Grant) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	old, had := n.grants[g.ID]
	replaceRecord(t, old, had, copyGrant(g), n.addGrant, n.removeGrant)
	return nil
}

// addGrant stores g in n and, unless it belongs to no user, in the
// per-user index.
func (n *namespace) addGrant(g store.Grant) {
	n.grants[g.ID] = g
	if g.UserID == 0 {
		return
	}
	ids := n.grantsByUser[g.UserID]
	if ids == nil {
		ids = make(map[string]struct{})
		n.grantsByUser[g.UserID] = ids
	}
	ids[g.ID] = struct{}{}
}

// removeGrant removes g, as stored, from n and its per-user index.
func (n *namespace) removeGrant(g store.Grant) {
	delete(n.grants, g.ID)
	if g.UserID == 0 {
		return
	}
	ids := n.grantsByUser[g.UserID]
	delete(ids, g.ID)
	if len(ids) == 0 {
		delete(n.grantsByUser, g.UserID)
	}
}

// Grant implements store.Tx.
func (t *tx) Grant(slug, id string) (store.Grant, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Grant{}, err
	}
	return getRecord(n.grants, id, copyGrant)
}

// UserGrants implements store.Tx. It sorts the user's grants on each
// call. A user without grants, or unknown, has none; that is not an
// error. User id 0 names no user, so it has none either.
func (t *tx) UserGrants(slug string, userID int64) ([]store.Grant, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	out := make([]store.Grant, 0, len(n.grantsByUser[userID]))
	for id := range n.grantsByUser[userID] {
		out = append(out, copyGrant(n.grants[id]))
	}
	slices.SortFunc(out, func(a, b store.Grant) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Refresh tokens.

func copyRefreshToken(r store.RefreshToken) store.RefreshToken {
	r.SecretHash = slices.Clone(r.SecretHash)
	r.CreatedAt = normTime(r.CreatedAt)
	r.ExpiresAt = normTime(r.ExpiresAt)
	r.UsedAt = normTime(r.UsedAt)
	return r
}

// PutRefreshToken implements store.Tx.
func (t *tx) PutRefreshToken(slug string, r store.RefreshToken) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.refreshTokens, r.ID, copyRefreshToken(r))
	return nil
}

// RefreshToken implements store.Tx.
func (t *tx) RefreshToken(slug, id string) (store.RefreshToken, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.RefreshToken{}, err
	}
	return getRecord(n.refreshTokens, id, copyRefreshToken)
}
