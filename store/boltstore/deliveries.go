package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// errPendingNegative reports a pending delivery count that would drop
// below zero: the count and the due index disagree.
var errPendingNegative = errors.New("boltstore: the pending delivery count would drop below zero")

// deliveryLink is what the delivery_endpoint entry of a delivery holds:
// the endpoint it belongs to and, while it is pending, when it is due
// (unix microseconds). PutDelivery and DeleteWebhook find the delivery_due
// entry to remove from it without decoding the delivery record.
//
// It is stored as the endpoint's id key, followed by the due time encoded
// like an id when the delivery is pending. A file written before the due
// index existed holds the endpoint alone: not pending, like its records,
// which have no status.
type deliveryLink struct {
	endpoint int64
	pending  bool
	due      int64
}

// linkOf returns the link of d.
func linkOf(d store.Delivery) deliveryLink {
	if d.Status != store.DeliveryPending {
		return deliveryLink{endpoint: d.EndpointID}
	}
	return deliveryLink{endpoint: d.EndpointID, pending: true, due: toMicros(d.DueAt())}
}

// encode returns the stored form of l.
func (l deliveryLink) encode() []byte {
	v := appendID(make([]byte, 0, 2*idKeyLen), l.endpoint)
	if l.pending {
		v = appendID(v, l.due)
	}
	return v
}

// readLink reads the delivery_endpoint entry under the delivery id key idk
// and reports whether there is one.
func readLink(byID *bbolt.Bucket, idk []byte) (deliveryLink, bool, error) {
	v := byID.Get(idk)
	switch len(v) {
	case 0:
		return deliveryLink{}, false, nil
	case idKeyLen:
		return deliveryLink{endpoint: decodeID(v)}, true, nil
	case 2 * idKeyLen:
		return deliveryLink{endpoint: decodeID(v), pending: true, due: decodeID(v[idKeyLen:])}, true, nil
	default:
		return deliveryLink{}, false, fmt.Errorf("boltstore: delivery %d: corrupt delivery_endpoint entry", decodeID(idk))
	}
}

// PutDelivery implements store.Tx. A delivery is known by its id alone:
// delivery_endpoint finds the copy to replace when d moves to another
// endpoint, and the due entry to replace.
func (t *tx) PutDelivery(slug string, d store.Delivery) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	if d.Kind == store.JobWebhook && sp.bucket(bucketWebhooks).Get(idKey(d.EndpointID)) == nil {
		return notFound("webhook %d", d.EndpointID)
	}
	v, err := encodeDelivery(d)
	if err != nil {
		return err
	}
	byID, idk := sp.bucket(bucketDeliveryEndpoint), idKey(d.ID)
	prev, existed, err := readLink(byID, idk)
	if err != nil {
		return err
	}
	deliveries := sp.bucket(bucketDeliveries)
	if err := sp.moveUserMail(existed, prev.endpoint, d); err != nil {
		return err
	}
	if existed && prev.endpoint != d.EndpointID {
		if err := deliveries.Delete(pairKey(prev.endpoint, d.ID)); err != nil {
			return err
		}
	}
	var prevRecord []byte
	if existed && !prev.pending {
		prevRecord = deliveries.Get(pairKey(prev.endpoint, d.ID))
	}
	if err := sp.resweep(bucketDeliveries, pairKey(prev.endpoint, d.ID), prevRecord, deliverySweepKey(d)); err != nil {
		return err
	}
	if err := deliveries.Put(pairKey(d.EndpointID, d.ID), v); err != nil {
		return err
	}
	next := linkOf(d)
	if err := byID.Put(idk, next.encode()); err != nil {
		return err
	}
	return t.moveDue(slug, d.ID, prev, next)
}

// moveUserMail points user_mail at d instead of at the job stored before
// under d's id, if any (existed), under the endpoint prevEndpoint. Only a
// mail job (endpoint 0) has an entry, so only one is decoded here.
func (sp *space) moveUserMail(existed bool, prevEndpoint int64, d store.Delivery) error {
	var prev, next []byte
	if existed && prevEndpoint == 0 {
		old, err := sp.delivery(0, d.ID)
		if err != nil {
			return err
		}
		prev = userMailKey(old.UserID, d.ID)
	}
	if d.Kind == store.JobMail {
		next = userMailKey(d.UserID, d.ID)
	}
	if prev == nil && next == nil {
		return nil
	}
	return moveEntry(sp.bucket(bucketUserMail), prev, next)
}

// moveDue brings the delivery_due entry of a delivery, and the pending
// count, from the link prev to the link next; the zero link stands for no
// delivery.
func (t *tx) moveDue(slug string, id int64, prev, next deliveryLink) error {
	due := t.btx.Bucket(bucketDeliveryDue)
	if prev.pending && !(next.pending && next.due == prev.due) {
		if err := due.Delete(dueKey(prev.due, id, slug)); err != nil {
			return err
		}
	}
	if next.pending {
		// Written even when the key stays: the endpoint may have changed.
		if err := due.Put(dueKey(next.due, id, slug), idKey(next.endpoint)); err != nil {
			return err
		}
	}
	return t.addPending(boolInt(next.pending) - boolInt(prev.pending))
}

// WorkspaceQueue implements store.Tx by walking delivery_due from its
// start, the way DueDeliveries does, over at most limit keys: the slug
// ends each key, so the walk decodes no job.
func (t *tx) WorkspaceQueue(slug string, limit int) (store.WorkspaceQueue, error) {
	if _, err := t.space(slug); err != nil {
		return store.WorkspaceQueue{}, err
	}
	var out store.WorkspaceQueue
	c := t.btx.Bucket(bucketDeliveryDue).Cursor()
	k, _ := c.First()
	for n := 0; k != nil && n < limit; n++ {
		if len(k) <= dueKeyLen {
			return store.WorkspaceQueue{}, fmt.Errorf("boltstore: corrupt delivery_due entry %x", k)
		}
		if string(k[dueKeyLen:]) == slug {
			if out.Pending == 0 {
				out.NextDue = decodeTime(k)
			}
			out.Pending++
		}
		k, _ = c.Next()
	}
	out.Complete = k == nil
	return out, nil
}

// boolInt returns 1 for true and 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addPending adds delta to the pending delivery count.
func (t *tx) addPending(delta int) error {
	if delta == 0 {
		return nil
	}
	meta := t.btx.Bucket(bucketGlobalMeta)
	n := int64(readCount(meta.Get(keyPendingDeliveries))) + int64(delta)
	if n < 0 {
		return errPendingNegative
	}
	return meta.Put(keyPendingDeliveries, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// deleteDeliveriesOf deletes every job of the endpoint with the key
// endpointKey in the workspace slug, their entries in delivery_endpoint
// and delivery_due, and counts the pending ones out.
func (t *tx) deleteDeliveriesOf(slug string, sp *space, endpointKey []byte) error {
	deliveries := sp.bucket(bucketDeliveries)
	keys := prefixKeys(deliveries, endpointKey)
	for _, k := range keys {
		if err := sp.unsweep(bucketDeliveries, k); err != nil {
			return err
		}
	}
	if err := deleteKeys(deliveries, keys); err != nil {
		return err
	}
	byID := sp.bucket(bucketDeliveryEndpoint)
	for _, k := range keys {
		idk := k[idKeyLen:]
		link, _, err := readLink(byID, idk)
		if err != nil {
			return err
		}
		if err := byID.Delete(idk); err != nil {
			return err
		}
		if err := t.moveDue(slug, decodeID(idk), link, deliveryLink{}); err != nil {
			return err
		}
	}
	return nil
}

// Delivery implements store.Tx.
func (t *tx) Delivery(slug string, id int64) (store.Delivery, error) {
	sp, err := t.space(slug)
	if err != nil {
		return store.Delivery{}, err
	}
	link, ok, err := readLink(sp.bucket(bucketDeliveryEndpoint), idKey(id))
	if err != nil {
		return store.Delivery{}, err
	}
	if !ok {
		return store.Delivery{}, notFound("delivery %d", id)
	}
	return sp.delivery(link.endpoint, id)
}

// ClaimDelivery implements store.Tx: bbolt runs one read-write transaction
// at a time, so no delivery is ever held by another, and it reads the
// delivery as Delivery does.
func (t *tx) ClaimDelivery(slug string, id int64) (store.Delivery, bool, error) {
	d, err := t.Delivery(slug, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := t.space(slug); err != nil {
			return store.Delivery{}, false, err
		}
		return store.Delivery{}, false, nil
	}
	return d, err == nil, err
}

// delivery reads the delivery with the id, which an index says belongs to
// the endpoint.
func (sp *space) delivery(endpoint, id int64) (store.Delivery, error) {
	k := pairKey(endpoint, id)
	v := sp.bucket(bucketDeliveries).Get(k)
	if v == nil {
		return store.Delivery{}, fmt.Errorf("boltstore: an index puts delivery %d under webhook %d, which does not hold it", id, endpoint)
	}
	return decodeDelivery(k, v)
}

// Deliveries implements store.Tx. An endpoint that does not exist has no
// deliveries; that is not an error.
func (t *tx) Deliveries(slug string, endpointID int64) ([]store.Delivery, error) {
	if endpointID < 1 {
		return nil, nil // mail jobs are no endpoint's
	}
	return t.jobs(slug, endpointID)
}

// MailJobs implements store.Tx: mail jobs are stored under endpoint 0.
func (t *tx) MailJobs(slug string) ([]store.Delivery, error) {
	return t.jobs(slug, 0)
}

// jobs returns the jobs stored under the endpoint, in ascending id order.
func (t *tx) jobs(slug string, endpointID int64) ([]store.Delivery, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	prefix := idKey(endpointID)
	var out []store.Delivery
	c := sp.bucket(bucketDeliveries).Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		d, err := decodeDelivery(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DueDeliveries implements store.Tx. It walks delivery_due from its start,
// so it costs in proportion to the deliveries it returns, however many are
// pending. Ties in DueAt come in ascending id order, then slug order.
func (t *tx) DueDeliveries(now time.Time, limit int) ([]store.QueuedDelivery, error) {
	end := toMicros(now) // floors, so DueAt <= now exactly when its micros <= end
	var out []store.QueuedDelivery
	c := t.btx.Bucket(bucketDeliveryDue).Cursor()
	for k, v := c.First(); k != nil && len(out) < limit && decodeID(k) <= end; k, v = c.Next() {
		q, err := t.queued(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// queued reads the delivery that the delivery_due entry k, v names.
func (t *tx) queued(k, v []byte) (store.QueuedDelivery, error) {
	if len(k) <= dueKeyLen || len(v) != idKeyLen {
		return store.QueuedDelivery{}, fmt.Errorf("boltstore: corrupt delivery_due entry %x", k)
	}
	slug, id := string(k[dueKeyLen:]), decodeID(k[idKeyLen:])
	sp, err := t.space(slug)
	if err != nil {
		// Not wrapped: a broken index is not the caller's ErrNotFound.
		return store.QueuedDelivery{}, fmt.Errorf("boltstore: delivery_due names delivery %d of workspace %q: %v", id, slug, err)
	}
	d, err := sp.delivery(decodeID(v), id)
	if err != nil {
		return store.QueuedDelivery{}, err
	}
	return store.QueuedDelivery{Workspace: slug, Delivery: d}, nil
}

// NextDueAt implements store.Tx: the time of the first delivery_due key.
func (t *tx) NextDueAt() (time.Time, bool, error) {
	k, _ := t.btx.Bucket(bucketDeliveryDue).Cursor().First()
	if k == nil {
		return time.Time{}, false, nil
	}
	return decodeTime(k), true, nil
}

// PendingDeliveries implements store.Tx by reading the count that every
// write keeps in step.
func (t *tx) PendingDeliveries() (int, error) {
	return int(readCount(t.btx.Bucket(bucketGlobalMeta).Get(keyPendingDeliveries))), nil
}

// DeliveriesPage implements store.Tx. It walks the keys of the endpoint's
// jobs to count them and decodes only the page's.
func (t *tx) DeliveriesPage(slug string, endpointID int64, offset, limit int) ([]store.Delivery, int, error) {
	if endpointID < 1 {
		_, err := t.space(slug)
		return nil, 0, err // mail jobs are no endpoint's
	}
	return t.jobsPage(slug, endpointID, offset, limit)
}

// MailJobsPage implements store.Tx.
func (t *tx) MailJobsPage(slug string, offset, limit int) ([]store.Delivery, int, error) {
	return t.jobsPage(slug, 0, offset, limit)
}

// jobsPage returns one page of the jobs stored under the endpoint, in
// ascending id order, and how many there are.
func (t *tx) jobsPage(slug string, endpointID int64, offset, limit int) ([]store.Delivery, int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, 0, err
	}
	prefix := idKey(endpointID)
	var out []store.Delivery
	total := 0
	c := sp.bucket(bucketDeliveries).Cursor()
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if total >= offset && len(out) < limit {
			d, err := decodeDelivery(k, v)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, d)
		}
		total++
	}
	return out, total, nil
}
