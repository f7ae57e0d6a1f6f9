package boltstore

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// tx is the store.Tx of one View or one Update function call. View and
// Update pass it to the function through store.RunView and
// store.RunUpdate, which refuse writes in a View and any use after the
// function returned (reading a finished bbolt transaction could touch
// unmapped memory).
type tx struct {
	btx *bbolt.Tx
	// last is the workspace last used, named lastSlug.
	last     *space
	lastSlug string
	// unfolded counts, per workspace, the audit records written and left
	// to the fold (see foldAudit); nil in a View. The committer adds it to
	// the store's count once the transaction commits.
	unfolded map[string]int
}

var _ store.Tx = (*tx)(nil)

// space is the bucket of one workspace and the nested buckets opened so
// far. Opening a nested bucket costs a B+tree descent and an allocation, so
// each is opened once per transaction. bbolt keeps a *Bucket valid for the
// whole transaction, and no nested bucket is ever deleted except with its
// workspace's bucket, by DeleteWorkspace, which forgets the space.
type space struct {
	b      *bbolt.Bucket
	opened [numNested]*bbolt.Bucket
}

// bucket returns one of the workspace's nested buckets.
func (sp *space) bucket(n nested) *bbolt.Bucket {
	if sp.opened[n] == nil {
		sp.opened[n] = sp.b.Bucket(nestedNames[n])
		if appendOrder[n] && sp.opened[n] != nil {
			sp.opened[n].FillPercent = appendFill
		}
	}
	return sp.opened[n]
}

// appendOrder marks the buckets whose new keys mostly come after every key
// they hold: users and their attributes, keyed by ascending id, and the
// audit trail, keyed by time-ordered ids. bbolt splits a full page at
// FillPercent (default half), which for keys written in order leaves
// every page half empty: users and user_attrs took twice their data.
// Splitting them at appendFill keeps their pages nearly full; a page that
// a later update outgrows splits again, as any page does. The trail's
// audit_index is not one of them: its entries by actor and by target
// land all over it, where pages split nearly full would split again at
// the next few writes.
var appendOrder = [numNested]bool{
	bucketUsers: true, bucketUserAttrs: true, bucketUserChunks: true,
	bucketAudit: true,
}

// appendFill is the FillPercent of the appendOrder buckets.
const appendFill = 0.9

// space returns the workspace's bucket. It keeps the last workspace
// used, as nearly every transaction works in just one.
func (t *tx) space(slug string) (*space, error) {
	if t.last != nil && t.lastSlug == slug {
		return t.last, nil
	}
	b := t.btx.Bucket(bucketSpaces).Bucket([]byte(slug))
	if b == nil {
		return nil, notFound("workspace %q", slug)
	}
	t.last, t.lastSlug = &space{b: b}, slug
	return t.last, nil
}

// notFound returns store.ErrNotFound wrapped with what was not found.
func notFound(format string, args ...any) error {
	return fmt.Errorf("boltstore: "+format+": %w", append(args, store.ErrNotFound)...)
}

// Records. Every kind of record is stored whole under its key, encoded
// by its encode function and decoded by its decode function (codec.go),
// and never empty, so that a nil Get means no record. These helpers are
// the reads and writes that every kind shares; a record that indexes
// follow moves its entries before it is put.

// getRecord returns the record stored under k in b, or an error wrapping
// store.ErrNotFound that names it as format and args do. The empty key,
// which bbolt cannot store, finds nothing: Get returns nil for it.
func getRecord[T any](b *bbolt.Bucket, k []byte, decode func(k, v []byte) (T, error), format string, args ...any) (T, error) {
	v := b.Get(k)
	if v == nil {
		var zero T
		return zero, notFound(format, args...)
	}
	return decode(k, v)
}

// putRecord stores r under k in b.
func putRecord[T any](b *bbolt.Bucket, k []byte, r T, encode func(T) ([]byte, error)) error {
	v, err := encode(r)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// deleteRecord deletes the record stored under k in b, or returns an
// error wrapping store.ErrNotFound that names it as format and args do.
func deleteRecord(b *bbolt.Bucket, k []byte, format string, args ...any) error {
	if len(k) == 0 || b.Get(k) == nil {
		return notFound(format, args...)
	}
	return b.Delete(k)
}

// listRecords returns every record of b, in key order.
func listRecords[T any](b *bbolt.Bucket, decode func(k, v []byte) (T, error)) ([]T, error) {
	var out []T
	err := b.ForEach(func(k, v []byte) error {
		r, err := decode(k, v)
		out = append(out, r)
		return err
	})
	return out, err
}

// moveIndexEntry makes index hold the entry of r, which entryOf returns
// (nil for none), instead of the entry of the record stored under k in
// records before r replaces it, if there is one.
func moveIndexEntry[T any](records, index *bbolt.Bucket, k []byte, r T, decode func(k, v []byte) (T, error), entryOf func(T) []byte) error {
	var prev []byte
	if v := records.Get(k); v != nil {
		old, err := decode(k, v)
		if err != nil {
			return err
		}
		prev = entryOf(old)
	}
	return moveEntry(index, prev, entryOf(r))
}

// deleteIndexed deletes the record stored under k in records with its
// entry in index, which entryOf returns, and returns 1; with no record
// there it returns 0. The record's sweep entry is the caller's.
func deleteIndexed[T any](records, index *bbolt.Bucket, k []byte, decode func(k, v []byte) (T, error), entryOf func(T) []byte) (int, error) {
	v := records.Get(k)
	if v == nil {
		return 0, nil
	}
	r, err := decode(k, v)
	if err != nil {
		return 0, err
	}
	if err := moveEntry(index, entryOf(r), nil); err != nil {
		return 0, err
	}
	return 1, records.Delete(k)
}

// Workspaces.

// PutWorkspace implements store.Tx.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.createSpace(w.Slug); err != nil {
		return fmt.Errorf("boltstore: workspace %q: %w", w.Slug, err)
	}
	return putRecord(t.btx.Bucket(bucketWorkspaces), []byte(w.Slug), w, encodeWorkspace)
}

// createSpace creates the workspace's bucket and its nested buckets unless
// it exists.
func (t *tx) createSpace(slug string) error {
	spaces := t.btx.Bucket(bucketSpaces)
	if spaces.Bucket([]byte(slug)) != nil {
		return nil
	}
	b, err := spaces.CreateBucket([]byte(slug))
	if err != nil {
		return err
	}
	return createSpaceBuckets(b)
}

// Workspace implements store.Tx.
func (t *tx) Workspace(slug string) (store.Workspace, error) {
	return getRecord(t.btx.Bucket(bucketWorkspaces), []byte(slug), decodeWorkspace, "workspace %q", slug)
}

// Workspaces implements store.Tx.
func (t *tx) Workspaces() ([]store.Workspace, error) {
	return listRecords(t.btx.Bucket(bucketWorkspaces), decodeWorkspace)
}

// NextID implements store.Tx with the bbolt sequence of a bucket per
// sequence: it is part of the transaction, so an id handed out by a
// transaction that rolls back is handed out again, never seen twice.
func (t *tx) NextID(slug string, seq store.Sequence) (int64, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	b, err := sp.bucket(bucketSeq).CreateBucketIfNotExists([]byte(seq))
	if err != nil {
		return 0, fmt.Errorf("boltstore: sequence %q: %w", seq, err)
	}
	n, err := b.NextSequence()
	return int64(n), err
}

// Attributes.

// attrKey returns the key of a user's attribute.
func attrKey(userID int64, key string) []byte {
	return append(appendID(make([]byte, 0, idKeyLen+len(key)), userID), key...)
}

// UserAttributes implements store.Tx.
func (t *tx) UserAttributes(slug string, userID int64) (map[string]string, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	attrs := make(map[string]string)
	prefix := idKey(userID)
	c := sp.bucket(bucketUserAttrs).Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		attrs[string(k[idKeyLen:])] = string(v)
	}
	return attrs, nil
}

// PutUserAttribute implements store.Tx. It moves the attribute's entry
// in attr_values (see attrindex.go) from its old value to the new one.
func (t *tx) PutUserAttribute(slug string, userID int64, key, value string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	b, k := sp.bucket(bucketUserAttrs), attrKey(userID, key)
	var prev []byte
	if v, had := getValue(b, k); had {
		prev = nonNil(v)
	}
	if err := sp.moveAttrValue(userID, key, prev, []byte(value)); err != nil {
		return err
	}
	return b.Put(k, []byte(value))
}

// DeleteUserAttribute implements store.Tx.
func (t *tx) DeleteUserAttribute(slug string, userID int64, key string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	b, k := sp.bucket(bucketUserAttrs), attrKey(userID, key)
	v, had := getValue(b, k)
	if !had {
		return notFound("attribute %q of user %d", key, userID)
	}
	if err := sp.moveAttrValue(userID, key, nonNil(v), nil); err != nil {
		return err
	}
	return b.Delete(k)
}

// Claim mappers.

// ClaimMappers implements store.Tx.
func (t *tx) ClaimMappers(slug string) ([]store.ClaimMapper, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	return listRecords(sp.bucket(bucketMappers), decodeMapper)
}

// PutClaimMapper implements store.Tx.
func (t *tx) PutClaimMapper(slug string, m store.ClaimMapper) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return putRecord(sp.bucket(bucketMappers), []byte(m.AttributeKey), m, encodeMapper)
}

// DeleteClaimMapper implements store.Tx.
func (t *tx) DeleteClaimMapper(slug, attributeKey string) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	return deleteRecord(sp.bucket(bucketMappers), []byte(attributeKey), "claim mapper %q", attributeKey)
}

// Webhooks.

// PutWebhook implements store.Tx.
func (t *tx) PutWebhook(slug string, w store.Webhook) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	v, err := encodeWebhook(w)
	if err != nil {
		return err
	}
	hooks, k := sp.bucket(bucketWebhooks), idKey(w.ID)
	if err := sp.moveWebhookEvents(k, hooks.Get(k), w.Events); err != nil {
		return err
	}
	return hooks.Put(k, v)
}

// Webhook implements store.Tx.
func (t *tx) Webhook(slug string, id int64) (store.Webhook, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Webhook{}, err
	}
	return getRecord(sp.bucket(bucketWebhooks), idKey(id), decodeWebhook, "webhook %d", id)
}

// Webhooks implements store.Tx. It walks every endpoint to count them:
// a workspace has few.
func (t *tx) Webhooks(slug string, offset, limit int) ([]store.Webhook, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	offset = max(offset, 0)
	var hooks []store.Webhook
	total := 0
	c := sp.bucket(bucketWebhooks).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if total >= offset && len(hooks) < limit {
			w, err := decodeWebhook(k, v)
			if err != nil {
				return nil, 0, err
			}
			hooks = append(hooks, w)
		}
		total++
	}
	return hooks, total, nil
}

// DeleteWebhook implements store.Tx.
func (t *tx) DeleteWebhook(slug string, id int64) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	hooks, k := sp.bucket(bucketWebhooks), idKey(id)
	prev := hooks.Get(k)
	if prev == nil {
		return notFound("webhook %d", id)
	}
	if err := sp.moveWebhookEvents(k, prev, nil); err != nil {
		return err
	}
	if err := hooks.Delete(k); err != nil {
		return err
	}
	return t.deleteDeliveriesOf(slug, sp, k)
}

// API keys.

// PutAPIKey implements store.Tx.
func (t *tx) PutAPIKey(k store.APIKey) error {
	if _, err := t.space(k.Workspace); err != nil {
		return err
	}
	return putRecord(t.btx.Bucket(bucketAPIKeys), []byte(k.ID), k, encodeAPIKey)
}

// APIKey implements store.Tx.
func (t *tx) APIKey(id string) (store.APIKey, error) {
	return getRecord(t.btx.Bucket(bucketAPIKeys), []byte(id), decodeAPIKey, "api key %q", id)
}

// APIKeys implements store.Tx. It decodes every key of every workspace:
// keys are few.
func (t *tx) APIKeys(slug string) ([]store.APIKey, error) {
	if _, err := t.space(slug); err != nil {
		return nil, err
	}
	var out []store.APIKey
	err := t.btx.Bucket(bucketAPIKeys).ForEach(func(k, v []byte) error {
		key, err := decodeAPIKey(k, v)
		if err == nil && key.Workspace == slug {
			out = append(out, key)
		}
		return err
	})
	return out, err
}

// DeleteAPIKey implements store.Tx.
func (t *tx) DeleteAPIKey(id string) error {
	return deleteRecord(t.btx.Bucket(bucketAPIKeys), []byte(id), "api key %q", id)
}
