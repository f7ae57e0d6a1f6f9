package boltstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/identitylib/identity/store"
)

// OAuth clients live in their workspace's oauth_clients bucket under
// their id.

// errEmptyClientID is returned for an OAuth client without an id, which
// the store front never passes on: bbolt cannot store an empty key.
var errEmptyClientID = errors.New("boltstore: the OAuth client id is empty")

// clientRecord is the stored form of store.OAuthClient; the id is the
// key, and empty fields are left out, so that a record written before
// Claims existed reads back without claims.
type clientRecord struct {
	Name         string   `json:"name,omitempty"`
	Public       bool     `json:"public,omitempty"`
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	PostLogout   []string `json:"post_logout_uris,omitempty"`
	GrantTypes   []string `json:"grant_types,omitempty"`
	Claims       []string `json:"claims,omitempty"`
	SecretHash   []byte   `json:"secret_hash,omitempty"`
	CreatedAt    int64    `json:"created_us"`
}

// PutOAuthClient implements store.Tx.
func (t *tx) PutOAuthClient(slug string, c store.OAuthClient) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if c.ID == "" {
		return errEmptyClientID
	}
	return putRecord(sp.bucket(bucketOAuthClients), []byte(c.ID), c, encodeClient)
}

func encodeClient(c store.OAuthClient) ([]byte, error) {
	return json.Marshal(clientRecord{
		Name: c.Name, Public: c.Public, RedirectURIs: c.RedirectURIs, PostLogout: c.PostLogoutRedirectURIs,
		GrantTypes: c.GrantTypes, Claims: c.Claims, SecretHash: c.SecretHash, CreatedAt: toMicros(c.CreatedAt),
	})
}

func decodeClient(id, v []byte) (store.OAuthClient, error) {
	var r clientRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.OAuthClient{}, fmt.Errorf("boltstore: OAuth client %q: %w", id, err)
	}
	return store.OAuthClient{
		ID: string(id), Name: r.Name, Public: r.Public, RedirectURIs: r.RedirectURIs,
		PostLogoutRedirectURIs: r.PostLogout, GrantTypes: r.GrantTypes, Claims: r.Claims, SecretHash: r.SecretHash,
		CreatedAt: fromMicros(r.CreatedAt),
	}, nil
}

// OAuthClient implements store.Tx.
func (t *tx) OAuthClient(slug, id string) (store.OAuthClient, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.OAuthClient{}, err
	}
	return getRecord(sp.bucket(bucketOAuthClients), []byte(id), decodeClient, "OAuth client %q", id)
}

// OAuthClients implements store.Tx: the bucket in key order.
func (t *tx) OAuthClients(slug string) ([]store.OAuthClient, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	return listRecords(sp.bucket(bucketOAuthClients), decodeClient)
}

// DeleteOAuthClient implements store.Tx.
func (t *tx) DeleteOAuthClient(slug, id string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return deleteRecord(sp.bucket(bucketOAuthClients), []byte(id), "OAuth client %q", id)
}

// Verification tokens.

// errEmptyTokenID is returned by PutVerificationToken for a token without
// an id: bbolt cannot store an empty key.
var errEmptyTokenID = errors.New("boltstore: the verification token id is empty")

// PutVerificationToken implements store.Tx. It refuses the empty id.
func (t *tx) PutVerificationToken(slug string, v store.VerificationToken) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if v.ID == "" {
		return errEmptyTokenID
	}
	rec, err := encodeToken(v)
	if err != nil {
		return err
	}
	tokens, k := sp.bucket(bucketTokens), []byte(v.ID)
	if err := moveIndexEntry(tokens, sp.bucket(bucketUserTokens), k, v, decodeToken, tokenEntry); err != nil {
		return err
	}
	if err := sp.resweep(bucketTokens, k, tokens.Get(k), sweepKey(sweepToken, v.ExpiresAt, k)); err != nil {
		return err
	}
	return tokens.Put(k, rec)
}

// VerificationToken implements store.Tx.
func (t *tx) VerificationToken(slug, id string) (store.VerificationToken, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.VerificationToken{}, err
	}
	return getRecord(sp.bucket(bucketTokens), []byte(id), decodeToken, "verification token %q", id)
}

// Idempotency records. A record lives in its workspace's idempotency
// bucket under idemKey(scope, key); the top-level idempotency_expiry
// bucket indexes every record by expiry time, so that
// DeleteExpiredIdempotency walks only what it removes.

// idemRecord is the stored form of store.IdempotencyRecord.
type idemRecord struct {
	Fingerprint []byte `json:"fingerprint,omitempty"`
	CreatedAt   int64  `json:"created_us"`
	ExpiresAt   int64  `json:"expires_us"`
	Done        bool   `json:"done,omitempty"`
	LockedUntil *int64 `json:"locked_until_us,omitempty"`
	Result      []byte `json:"result,omitempty"`
}

// appendString appends s with a uvarint length prefix, so that fields
// concatenated in a key parse back whatever bytes they hold.
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// readString reads a string written by appendString from the start of b
// and returns the rest of b.
func readString(b []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}

// idemKey is the key of a record in its workspace's bucket: never empty,
// as the scope's length comes first.
func idemKey(scope, key string) []byte {
	return append(appendString(nil, scope), key...)
}

// idemExpiryKey is the key of a record's entry in idempotency_expiry.
func idemExpiryKey(expires time.Time, slug, scope, key string) []byte {
	k := appendID(make([]byte, 0, idKeyLen+len(slug)+len(scope)+len(key)+4), toMicros(expires))
	k = appendString(k, slug)
	return append(k, idemKey(scope, key)...)
}

// parseIdemExpiryKey is the inverse of idemExpiryKey, without the time.
func parseIdemExpiryKey(k []byte) (slug string, recordKey []byte, ok bool) {
	if len(k) < idKeyLen {
		return "", nil, false
	}
	slug, rest, ok := readString(k[idKeyLen:])
	return slug, rest, ok
}

func decodeIdem(slug string, recordKey, v []byte) (store.IdempotencyRecord, error) {
	scope, key, ok := readString(recordKey)
	if !ok {
		return store.IdempotencyRecord{}, fmt.Errorf("boltstore: corrupt idempotency key in workspace %q", slug)
	}
	var r idemRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return store.IdempotencyRecord{}, fmt.Errorf("boltstore: idempotency record %q: %w", key, err)
	}
	return store.IdempotencyRecord{
		Workspace: slug, Scope: scope, Key: string(key), Fingerprint: r.Fingerprint,
		CreatedAt: fromMicros(r.CreatedAt), ExpiresAt: fromMicros(r.ExpiresAt),
		Done: r.Done, LockedUntil: fromOptMicros(r.LockedUntil), Result: r.Result,
	}, nil
}

// PutIdempotency implements store.Tx.
func (t *tx) PutIdempotency(r store.IdempotencyRecord) error {
	sp, err := t.space(r.Workspace)
	if err != nil {
		return err
	}
	v, err := json.Marshal(idemRecord{
		Fingerprint: r.Fingerprint, CreatedAt: toMicros(r.CreatedAt), ExpiresAt: toMicros(r.ExpiresAt),
		Done: r.Done, LockedUntil: optMicros(r.LockedUntil), Result: r.Result,
	})
	if err != nil {
		return err
	}
	records, k := sp.bucket(bucketIdempotency), idemKey(r.Scope, r.Key)
	if err := t.unindexIdem(r.Workspace, k, records.Get(k)); err != nil {
		return err
	}
	if err := t.btx.Bucket(bucketIdemExpiry).Put(idemExpiryKey(r.ExpiresAt, r.Workspace, r.Scope, r.Key), nil); err != nil {
		return err
	}
	return records.Put(k, v)
}

// unindexIdem removes the expiry entry of prev, the record stored under
// the record key k (nil if none).
func (t *tx) unindexIdem(slug string, k, prev []byte) error {
	if prev == nil {
		return nil
	}
	old, err := decodeIdem(slug, k, prev)
	if err != nil {
		return err
	}
	return t.btx.Bucket(bucketIdemExpiry).Delete(idemExpiryKey(old.ExpiresAt, slug, old.Scope, old.Key))
}

// Idempotency implements store.Tx.
func (t *tx) Idempotency(slug, scope, key string) (store.IdempotencyRecord, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.IdempotencyRecord{}, err
	}
	decode := func(k, v []byte) (store.IdempotencyRecord, error) { return decodeIdem(slug, k, v) }
	return getRecord(sp.bucket(bucketIdempotency), idemKey(scope, key), decode, "idempotency key %q", key)
}

// DeleteIdempotency implements store.Tx.
func (t *tx) DeleteIdempotency(slug, scope, key string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return t.deleteIdem(sp, slug, idemKey(scope, key))
}

func (t *tx) deleteIdem(sp *space, slug string, k []byte) error {
	records := sp.bucket(bucketIdempotency)
	v := records.Get(k)
	if v == nil {
		return notFound("idempotency key in workspace %q", slug)
	}
	if err := t.unindexIdem(slug, k, v); err != nil {
		return err
	}
	return records.Delete(k)
}

// DeleteExpiredIdempotency implements store.Tx: it walks
// idempotency_expiry from its start, the earliest expiry first.
func (t *tx) DeleteExpiredIdempotency(now time.Time, limit int) (int, error) {
	end := idKey(toMicros(now) + 1)
	var expired [][]byte
	c := t.btx.Bucket(bucketIdemExpiry).Cursor()
	for k, _ := c.First(); k != nil && len(expired) < limit && string(k) < string(end); k, _ = c.Next() {
		expired = append(expired, append([]byte(nil), k...))
	}
	for _, k := range expired {
		slug, recordKey, ok := parseIdemExpiryKey(k)
		if !ok {
			return 0, fmt.Errorf("boltstore: corrupt idempotency expiry entry %x", k)
		}
		sp, err := t.space(slug)
		if err != nil {
			return 0, fmt.Errorf("boltstore: idempotency expiry entry of workspace %q: %w", slug, err)
		}
		if err := t.deleteIdem(sp, slug, recordKey); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}
