package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// The users by attribute value. Two buckets of a workspace serve
// UsersByAttribute:
//
//	attr_values        uvarint length + key + uvarint length + value
//	                   + user id -> empty, one entry per attribute
//	attr_value_counts  uvarint length + key + uvarint length + value
//	                   -> uint64 number of its entries in attr_values,
//	                   for the values at least two users have
//
// The length-prefixed key and value (attrValuePrefix) are prefix-free:
// no (key, value) pair's prefix starts another pair's, whatever bytes
// they hold (0x00 and 0xFF included), so a prefix scan finds exactly the
// users with that value, in id order. PutUserAttribute,
// DeleteUserAttribute and DeleteUser move a user's entries and counts in
// the transaction that writes the attribute, so the total is one Get and
// a page costs a seek, a step per user it skips, and a read per user it
// returns, whatever the number of users. A value one user has has no
// count (its total is the one entry the seek finds): unique values, an
// employee number say, would otherwise double the index. A file written before the
// buckets existed gets them built from user_attrs when it is opened (see
// ensureLayout and buildAttrIndex).

// attrValuePrefix returns the attr_values prefix, and the
// attr_value_counts key, of an attribute value.
func attrValuePrefix(key, value string) []byte {
	k := make([]byte, 0, 2*binary.MaxVarintLen64+len(key)+len(value)+idKeyLen)
	return appendString(appendString(k, key), value)
}

// attrValueKey returns the attr_values key of a user's attribute value.
func attrValueKey(key, value string, userID int64) []byte {
	return appendID(attrValuePrefix(key, value), userID)
}

// getValue returns the value of k in b and whether b holds k. It seeks
// rather than calling Get, which cannot tell an empty value from a
// missing key.
func getValue(b *bbolt.Bucket, k []byte) ([]byte, bool) {
	found, v := b.Cursor().Seek(k)
	if found == nil || !bytes.Equal(found, k) {
		return nil, false
	}
	return v, true
}

// moveAttrValue makes attr_values and attr_value_counts hold the user's
// attribute key with the value next instead of prev; a nil prev stands
// for no attribute before, a nil next for none after. Equal values move
// nothing.
func (sp *space) moveAttrValue(userID int64, key string, prev, next []byte) error {
	if prev != nil && next != nil && bytes.Equal(prev, next) {
		return nil
	}
	entries, counts := sp.bucket(bucketAttrValues), sp.bucket(bucketAttrValueCounts)
	if prev != nil {
		if err := entries.Delete(attrValueKey(key, string(prev), userID)); err != nil {
			return err
		}
		if err := addAttrCount(counts, entries, attrValuePrefix(key, string(prev)), -1); err != nil {
			return err
		}
	}
	if next != nil {
		if err := entries.Put(attrValueKey(key, string(next), userID), nil); err != nil {
			return err
		}
		if err := addAttrCount(counts, entries, attrValuePrefix(key, string(next)), +1); err != nil {
			return err
		}
	}
	return nil
}

// addAttrCount adds delta to the count under the value prefix k in
// attr_value_counts, after the entry that changes it was put into or
// deleted from entries. Only counts of two or more are kept: a value
// without a count has at most one entry, so its count is found by
// stepping over at most two.
func addAttrCount(counts, entries *bbolt.Bucket, k []byte, delta int64) error {
	stored := counts.Get(k)
	var n int64
	if stored != nil {
		n = int64(readCount(stored)) + delta
	} else {
		n = int64(countEntries(entries, k, 2))
	}
	switch {
	case n < 0:
		return fmt.Errorf("boltstore: attribute value count %q below zero: %w", k, errAttrCountMismatch)
	case n < 2:
		if stored == nil {
			return nil
		}
		return counts.Delete(k)
	default:
		return counts.Put(k, binary.BigEndian.AppendUint64(nil, uint64(n)))
	}
}

// countEntries returns the number of entries with the prefix k, counting
// no further than most.
func countEntries(entries *bbolt.Bucket, k []byte, most int) int {
	n := 0
	c := entries.Cursor()
	for e, _ := c.Seek(k); n < most && bytes.HasPrefix(e, k); e, _ = c.Next() {
		n++
	}
	return n
}

// attrTotal returns the number of users with the value prefix k.
func attrTotal(counts, entries *bbolt.Bucket, k []byte) int {
	if stored := counts.Get(k); stored != nil {
		return int(readCount(stored))
	}
	return countEntries(entries, k, 1)
}

// errAttrCountMismatch reports an attribute value count that disagrees
// with attr_values.
var errAttrCountMismatch = errors.New("boltstore: attribute value counts disagree with the attribute index")

// unindexAttributes removes the entries and counts of every attribute of
// the user (DeleteUser removes the attributes themselves).
func (sp *space) unindexAttributes(userID int64) error {
	prefix := idKey(userID)
	type attr struct{ key, value []byte }
	var attrs []attr
	c := sp.bucket(bucketUserAttrs).Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		attrs = append(attrs, attr{bytes.Clone(k[idKeyLen:]), bytes.Clone(v)})
	}
	for _, a := range attrs {
		if err := sp.moveAttrValue(userID, string(a.key), nonNil(a.value), nil); err != nil {
			return err
		}
	}
	return nil
}

// nonNil returns v, or an empty non-nil slice for nil: an attribute's
// empty value, which moveAttrValue must not take for no attribute.
func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

// buildAttrIndex fills the empty bucket n (attr_values or
// attr_value_counts) of a workspace whose attributes predate it:
// attr_values from user_attrs, the counts from attr_values, whose
// entries of one value are adjacent, so that no count is held in memory
// but the one being summed. ensureLayout builds attr_values first (its
// bucket comes first in nestedNames).
func buildAttrIndex(sp *space, n nested) error {
	if n == bucketAttrValues {
		entries := sp.bucket(bucketAttrValues)
		return sp.bucket(bucketUserAttrs).ForEach(func(k, v []byte) error {
			if len(k) < idKeyLen {
				return fmt.Errorf("user_attrs key %x is too short", k)
			}
			return entries.Put(attrValueKey(string(k[idKeyLen:]), string(v), decodeID(k)), nil)
		})
	}
	counts := sp.bucket(bucketAttrValueCounts)
	var prefix []byte
	var count uint64
	flush := func() error {
		if count < 2 {
			return nil
		}
		return counts.Put(prefix, binary.BigEndian.AppendUint64(nil, count))
	}
	c := sp.bucket(bucketAttrValues).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < idKeyLen {
			return fmt.Errorf("attr_values key %x is too short", k)
		}
		p := k[:len(k)-idKeyLen]
		if count > 0 && bytes.Equal(p, prefix) {
			count++
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		prefix, count = bytes.Clone(p), 1
	}
	return flush()
}

// UsersByAttribute implements store.Tx: the total from
// attr_value_counts, the page from a prefix scan of attr_values, which
// orders the users of one value by id.
func (t *tx) UsersByAttribute(slug string, q store.AttributeQuery) ([]store.User, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	prefix := attrValuePrefix(q.Key, q.Value)
	total := attrTotal(sp.bucket(bucketAttrValueCounts), sp.bucket(bucketAttrValues), prefix)
	offset := max(q.Offset, 0)
	if q.Limit <= 0 || offset >= total {
		return nil, total, nil
	}
	users := make([]store.User, 0, min(q.Limit, total-offset))
	records := sp.bucket(bucketUsers)
	c := sp.bucket(bucketAttrValues).Cursor()
	k, _ := c.Seek(prefix)
	for skip := offset; skip > 0 && bytes.HasPrefix(k, prefix); skip-- {
		k, _ = c.Next()
	}
	for ; bytes.HasPrefix(k, prefix) && len(users) < q.Limit; k, _ = c.Next() {
		idk := k[len(prefix):]
		v := records.Get(idk)
		if v == nil {
			return nil, 0, fmt.Errorf("boltstore: attr_values names user %d, which does not exist", decodeID(idk))
		}
		u, err := decodeUser(idk, v)
		if err != nil {
			return nil, 0, err
		}
		users = append(users, u)
	}
	return users, total, nil
}
