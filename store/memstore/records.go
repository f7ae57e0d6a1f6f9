package memstore

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// OAuth clients.

func copyClient(c store.OAuthClient) store.OAuthClient {
	c.CreatedAt = normTime(c.CreatedAt)
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	c.PostLogoutRedirectURIs = slices.Clone(c.PostLogoutRedirectURIs)
	c.GrantTypes = slices.Clone(c.GrantTypes)
	c.SecretHash = slices.Clone(c.SecretHash)
	return c
}

// PutOAuthClient implements store.Tx.
func (t *tx) PutOAuthClient(slug string, c store.OAuthClient) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.clients, c.ID, copyClient(c))
	return nil
}

// OAuthClient implements store.Tx.
func (t *tx) OAuthClient(slug, id string) (store.OAuthClient, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.OAuthClient{}, err
	}
	return getRecord(n.clients, id, copyClient)
}

// OAuthClients implements store.Tx. It sorts the workspace's clients on
// each call: a workspace has few.
func (t *tx) OAuthClients(slug string) ([]store.OAuthClient, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	out := make([]store.OAuthClient, 0, len(n.clients))
	for _, id := range slices.Sorted(maps.Keys(n.clients)) {
		out = append(out, copyClient(n.clients[id]))
	}
	return out, nil
}

// DeleteOAuthClient implements store.Tx.
func (t *tx) DeleteOAuthClient(slug, id string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.clients, id)
}

// Verification tokens.

func copyToken(v store.VerificationToken) store.VerificationToken {
	v.CreatedAt = normTime(v.CreatedAt)
	v.ExpiresAt = normTime(v.ExpiresAt)
	v.UsedAt = normTime(v.UsedAt)
	v.SecretHash = slices.Clone(v.SecretHash)
	return v
}

// PutVerificationToken implements store.Tx.
func (t *tx) PutVerificationToken(slug string, v store.VerificationToken) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.tokens, v.ID, copyToken(v))
	return nil
}

// VerificationToken implements store.Tx.
func (t *tx) VerificationToken(slug, id string) (store.VerificationToken, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.VerificationToken{}, err
	}
	return getRecord(n.tokens, id, copyToken)
}

// Assets.

func copyAsset(a store.Asset) store.Asset {
	a.Data = slices.Clone(a.Data)
	a.UpdatedAt = normTime(a.UpdatedAt)
	return a
}

// PutAsset implements store.Tx.
func (t *tx) PutAsset(slug string, a store.Asset) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.assets, a.Name, copyAsset(a))
	return nil
}

// Asset implements store.Tx.
func (t *tx) Asset(slug, name string) (store.Asset, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Asset{}, err
	}
	return getRecord(n.assets, name, copyAsset)
}

// DeleteAsset implements store.Tx.
func (t *tx) DeleteAsset(slug, name string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.assets, name)
}

// Idempotency records.

// idemKey identifies an idempotency record within its workspace.
type idemKey struct{ scope, key string }

func copyIdempotency(r store.IdempotencyRecord) store.IdempotencyRecord {
	r.CreatedAt = normTime(r.CreatedAt)
	r.ExpiresAt = normTime(r.ExpiresAt)
	r.LockedUntil = normTime(r.LockedUntil)
	r.Fingerprint = slices.Clone(r.Fingerprint)
	r.Result = slices.Clone(r.Result)
	return r
}

// PutIdempotency implements store.Tx.
func (t *tx) PutIdempotency(r store.IdempotencyRecord) error {
	n, err := t.ns(r.Workspace)
	if err != nil {
		return err
	}
	setRecord(t, n.idem, idemKey{r.Scope, r.Key}, copyIdempotency(r))
	return nil
}

// Idempotency implements store.Tx.
func (t *tx) Idempotency(slug, scope, key string) (store.IdempotencyRecord, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.IdempotencyRecord{}, err
	}
	return getRecord(n.idem, idemKey{scope, key}, copyIdempotency)
}

// DeleteIdempotency implements store.Tx.
func (t *tx) DeleteIdempotency(slug, scope, key string) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	return deleteRecord(t, n.idem, idemKey{scope, key})
}

// DeleteExpiredIdempotency implements store.Tx. It scans every record of
// every workspace, so it is linear in their number.
func (t *tx) DeleteExpiredIdempotency(now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	now = normTime(now)
	var expired []store.IdempotencyRecord
	for _, n := range t.s.ws {
		for _, r := range n.idem {
			if !r.ExpiresAt.After(now) {
				expired = append(expired, r)
			}
		}
	}
	slices.SortFunc(expired, func(a, b store.IdempotencyRecord) int {
		return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.Workspace, b.Workspace),
			cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Key, b.Key))
	})
	expired = expired[:min(limit, len(expired))]
	for _, r := range expired {
		if err := t.DeleteIdempotency(r.Workspace, r.Scope, r.Key); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}
