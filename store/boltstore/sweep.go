package boltstore

import (
	"bytes"
	"fmt"
	"time"

	"github.com/identitylib/identity/store"
)

// Retention: the sweep index.
//
// One index bucket of a workspace, sweep, orders every record a sweep may
// remove by the time it becomes removable:
//
//	sweep    class byte + time (like an id) + record id -> empty
//
// The classes are finished jobs (one per kind and status, at
// store.Delivery.FinishedAt, keyed by the delivery id key), sessions (at
// store.Session.EndedAt), and single-use tokens, authorization requests,
// refresh tokens and grants (at their ExpiresAt), keyed by their string
// ids. Pending jobs have no entry. Every write of such a record moves its
// entry in the same transaction, every deletion (DeleteUser,
// DeleteWebhook, a sweep) removes it, and a file written before the
// bucket existed has it built from its records when it is opened. So the
// Delete* methods of a sweep walk the index from the start of a class and
// stop at the first entry after their time: they cost in proportion to
// what they remove.

// The classes of the sweep index.
const (
	sweepWebhookSucceeded byte = iota + 1
	sweepWebhookFailed
	sweepMailSucceeded
	sweepMailFailed
	sweepSession
	sweepToken
	sweepAuthRequest
	sweepRefreshToken
	sweepGrant
)

// sweepKey returns the key of a record in the sweep index.
func sweepKey(class byte, at time.Time, id []byte) []byte {
	k := appendID(append(make([]byte, 0, 1+idKeyLen+len(id)), class), toMicros(at))
	return append(k, id...)
}

// deliveryClass returns the class of finished jobs of the kind and status,
// or 0 for pending ones, which are never swept.
func deliveryClass(kind store.JobKind, status store.DeliveryStatus) byte {
	switch {
	case kind == store.JobWebhook && status == store.DeliverySucceeded:
		return sweepWebhookSucceeded
	case kind == store.JobWebhook && status == store.DeliveryFailed:
		return sweepWebhookFailed
	case kind == store.JobMail && status == store.DeliverySucceeded:
		return sweepMailSucceeded
	case kind == store.JobMail && status == store.DeliveryFailed:
		return sweepMailFailed
	}
	return 0
}

// deliverySweepKey returns the sweep entry of d, or nil when it has none.
func deliverySweepKey(d store.Delivery) []byte {
	c := deliveryClass(d.Kind, d.Status)
	if c == 0 {
		return nil
	}
	return sweepKey(c, d.FinishedAt(), idKey(d.ID))
}

// sweepKeyOf returns the sweep entry of the record v stored under k in the
// bucket n (nil v: no record, no entry).
func sweepKeyOf(n nested, k, v []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	switch n {
	case bucketDeliveries:
		d, err := decodeDelivery(k, v)
		if err != nil {
			return nil, err
		}
		return deliverySweepKey(d), nil
	case bucketSessions:
		s, err := decodeSession(k, v)
		if err != nil {
			return nil, err
		}
		return sweepKey(sweepSession, s.EndedAt(), k), nil
	case bucketTokens:
		r, err := decodeToken(k, v)
		if err != nil {
			return nil, err
		}
		return sweepKey(sweepToken, r.ExpiresAt, k), nil
	case bucketAuthRequests:
		r, err := decodeAuthRequest(k, v)
		if err != nil {
			return nil, err
		}
		return sweepKey(sweepAuthRequest, r.ExpiresAt, k), nil
	case bucketRefreshTokens:
		r, err := decodeRefreshToken(k, v)
		if err != nil {
			return nil, err
		}
		return sweepKey(sweepRefreshToken, r.ExpiresAt, k), nil
	case bucketGrants:
		r, err := decodeGrant(k, v)
		if err != nil {
			return nil, err
		}
		return sweepKey(sweepGrant, r.ExpiresAt, k), nil
	}
	return nil, fmt.Errorf("boltstore: bucket %s has no sweep entries", nestedNames[n])
}

// resweep makes the sweep index hold next instead of the entry of prev,
// the record stored under k in the bucket n before this write (nil if
// none).
func (sp *space) resweep(n nested, k, prev, next []byte) error {
	old, err := sweepKeyOf(n, k, prev)
	if err != nil {
		return err
	}
	return moveEntry(sp.bucket(bucketSweep), old, next)
}

// unsweep removes the sweep entry of the record stored under k in the
// bucket n, if any; the caller deletes the record.
func (sp *space) unsweep(n nested, k []byte) error {
	return sp.resweep(n, k, sp.bucket(n).Get(k), nil)
}

// buildSweepIndex fills the sweep bucket, created just now in a workspace
// whose records predate it, from the records.
func buildSweepIndex(sp *space) error {
	for _, n := range []nested{bucketDeliveries, bucketSessions, bucketTokens, bucketAuthRequests, bucketRefreshTokens, bucketGrants} {
		err := sp.bucket(n).ForEach(func(k, v []byte) error {
			key, err := sweepKeyOf(n, k, v)
			if err != nil {
				return err
			}
			return moveEntry(sp.bucket(bucketSweep), nil, key)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// due returns up to limit record ids of the class whose time is at or
// before before, earliest first, with their sweep keys.
func (sp *space) due(class byte, before time.Time, limit int) (keys, ids [][]byte) {
	end := toMicros(before)
	c := sp.bucket(bucketSweep).Cursor()
	prefix := []byte{class}
	for k, _ := c.Seek(prefix); len(keys) < limit && bytes.HasPrefix(k, prefix) && decodeID(k[1:]) <= end; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
		ids = append(ids, bytes.Clone(k[1+idKeyLen:]))
	}
	return keys, ids
}

// DeleteFinishedDeliveries implements store.Tx: it walks the sweep index
// from the start of the class of kind and status.
func (t *tx) DeleteFinishedDeliveries(slug string, kind store.JobKind, status store.DeliveryStatus, before time.Time, limit int) (int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	class := deliveryClass(kind, status)
	if class == 0 || limit <= 0 {
		return 0, nil
	}
	keys, ids := sp.due(class, before, limit)
	byID := sp.bucket(bucketDeliveryEndpoint)
	for i, idk := range ids {
		link, ok, err := readLink(byID, idk)
		if err != nil {
			return 0, err
		}
		if ok {
			d, err := sp.delivery(link.endpoint, decodeID(idk))
			if err != nil {
				return 0, err
			}
			if err := sp.bucket(bucketDeliveries).Delete(pairKey(link.endpoint, d.ID)); err != nil {
				return 0, err
			}
			if err := byID.Delete(idk); err != nil {
				return 0, err
			}
			if d.Kind == store.JobMail {
				if err := moveEntry(sp.bucket(bucketUserMail), userMailKey(d.UserID, d.ID), nil); err != nil {
					return 0, err
				}
			}
			if err := t.moveDue(slug, d.ID, link, deliveryLink{}); err != nil {
				return 0, err
			}
		}
		if err := sp.bucket(bucketSweep).Delete(keys[i]); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// DeleteEndedSessions implements store.Tx: it walks the sweep index from
// the start of the sessions.
func (t *tx) DeleteEndedSessions(slug string, before time.Time, limit int) (int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	if limit <= 0 {
		return 0, nil
	}
	keys, ids := sp.due(sweepSession, before, limit)
	for i, id := range ids {
		if _, err := deleteIndexed(sp.bucket(bucketSessions), sp.bucket(bucketUserSessions), id, decodeSession, sessionEntry); err != nil {
			return 0, err
		}
		if err := sp.bucket(bucketSweep).Delete(keys[i]); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// DeleteExpiredTokens implements store.Tx: it walks the sweep index from
// the start of each class in turn (refresh tokens before their grants).
func (t *tx) DeleteExpiredTokens(slug string, before time.Time, limit int) (int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, class := range []byte{sweepToken, sweepAuthRequest, sweepRefreshToken, sweepGrant} {
		if n >= limit {
			break
		}
		keys, ids := sp.due(class, before, limit-n)
		for i, id := range ids {
			removed, err := sp.deleteExpired(class, id)
			if err != nil {
				return n, err
			}
			n += removed
			if err := sp.bucket(bucketSweep).Delete(keys[i]); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// deleteExpired deletes the record id of the class with its index entries
// (but its own sweep entry, which the caller deletes) and returns how
// many records it removed.
func (sp *space) deleteExpired(class byte, id []byte) (int, error) {
	switch class {
	case sweepToken:
		return deleteIndexed(sp.bucket(bucketTokens), sp.bucket(bucketUserTokens), id, decodeToken, tokenEntry)
	case sweepAuthRequest:
		return deleteIndexed(sp.bucket(bucketAuthRequests), sp.bucket(bucketUserAuthRequests), id, decodeAuthRequest, authRequestEntry)
	case sweepRefreshToken:
		return deleteIndexed(sp.bucket(bucketRefreshTokens), sp.bucket(bucketGrantRefreshTokens), id, decodeRefreshToken, refreshTokenEntry)
	case sweepGrant:
		v := sp.bucket(bucketGrants).Get(id)
		if v == nil {
			return 0, nil
		}
		g, err := decodeGrant(id, v)
		if err != nil {
			return 0, err
		}
		n := 1
		tokens := sp.bucket(bucketGrantRefreshTokens)
		tokenKeys := prefixKeys(tokens, appendString(nil, g.ID))
		for _, tk := range tokenKeys {
			_, tokenID, _ := readString(tk)
			if err := sp.unsweep(bucketRefreshTokens, []byte(tokenID)); err != nil {
				return 0, err
			}
			if err := sp.bucket(bucketRefreshTokens).Delete([]byte(tokenID)); err != nil {
				return 0, err
			}
			n++
		}
		if err := deleteKeys(tokens, tokenKeys); err != nil {
			return 0, err
		}
		if err := moveEntry(sp.bucket(bucketUserGrants), grantEntry(g), nil); err != nil {
			return 0, err
		}
		return n, sp.bucket(bucketGrants).Delete(id)
	}
	return 0, fmt.Errorf("boltstore: unknown sweep class %d", class)
}
