package memstore

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// dueEntry is the due index entry of a pending delivery.
type dueEntry struct {
	at   time.Time // the delivery's DueAt, normalized
	id   int64
	slug string
}

// compareDue orders due entries by time, then id, then slug.
func compareDue(a, b dueEntry) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	if c := cmp.Compare(a.id, b.id); c != 0 {
		return c
	}
	return cmp.Compare(a.slug, b.slug)
}

// dueEntryOf returns the due index entry of d, a pending delivery of the
// workspace slug.
func dueEntryOf(slug string, d store.Delivery) dueEntry {
	return dueEntry{at: d.DueAt(), id: d.ID, slug: slug}
}

// addDelivery stores d, a normalized copy, in the namespace n and its
// indexes. n must not hold a delivery with its id.
func (s *Store) addDelivery(n *namespace, d store.Delivery) {
	n.delivs[d.ID] = d
	if d.Kind == store.JobMail {
		n.mail[d.ID] = struct{}{}
		if d.UserID != 0 {
			set := n.mailOf[d.UserID]
			if set == nil {
				set = make(map[int64]struct{})
				n.mailOf[d.UserID] = set
			}
			set[d.ID] = struct{}{}
		}
	} else {
		set := n.byTarget[d.EndpointID]
		if set == nil {
			set = make(map[int64]struct{})
			n.byTarget[d.EndpointID] = set
		}
		set[d.ID] = struct{}{}
	}
	if d.Status == store.DeliveryPending {
		e := dueEntryOf(n.rec.Slug, d)
		i, _ := slices.BinarySearchFunc(s.due, e, compareDue)
		s.due = slices.Insert(s.due, i, e)
	}
}

// removeDelivery removes d, as stored, from the namespace n and its
// indexes.
func (s *Store) removeDelivery(n *namespace, d store.Delivery) {
	delete(n.delivs, d.ID)
	if d.Kind == store.JobMail {
		delete(n.mail, d.ID)
		if set := n.mailOf[d.UserID]; set != nil {
			delete(set, d.ID)
			if len(set) == 0 {
				delete(n.mailOf, d.UserID)
			}
		}
	} else {
		set := n.byTarget[d.EndpointID]
		delete(set, d.ID)
		if len(set) == 0 {
			delete(n.byTarget, d.EndpointID)
		}
	}
	if d.Status == store.DeliveryPending {
		if i, found := slices.BinarySearchFunc(s.due, dueEntryOf(n.rec.Slug, d), compareDue); found {
			s.due = slices.Delete(s.due, i, i+1)
		}
	}
}

// PutDelivery implements store.Tx.
func (t *tx) PutDelivery(slug string, d store.Delivery) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	if _, ok := n.hooks[d.EndpointID]; !ok && d.Kind == store.JobWebhook {
		return store.ErrNotFound
	}
	old, had := n.delivs[d.ID]
	add := func(j store.Delivery) { t.s.addDelivery(n, j) }
	remove := func(j store.Delivery) { t.s.removeDelivery(n, j) }
	replaceRecord(t, old, had, copyDelivery(d), add, remove)
	return nil
}

// Delivery implements store.Tx.
func (t *tx) Delivery(slug string, id int64) (store.Delivery, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Delivery{}, err
	}
	return getRecord(n.delivs, id, copyDelivery)
}

// ClaimDelivery implements store.Tx: Update holds the store's write lock,
// so no delivery is ever held by another transaction, and it reads the
// delivery as Delivery does.
func (t *tx) ClaimDelivery(slug string, id int64) (store.Delivery, bool, error) {
	n, err := t.ns(slug)
	if err != nil {
		return store.Delivery{}, false, err
	}
	d, ok := n.delivs[id]
	if !ok {
		return store.Delivery{}, false, nil
	}
	return copyDelivery(d), true, nil
}

// Deliveries implements store.Tx. It returns an empty list, not an error,
// for an endpoint that does not exist.
func (t *tx) Deliveries(slug string, endpointID int64) ([]store.Delivery, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	return n.jobs(n.byTarget[endpointID]), nil
}

// MailJobs implements store.Tx.
func (t *tx) MailJobs(slug string) ([]store.Delivery, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	return n.jobs(n.mail), nil
}

// jobs returns copies of the jobs with the ids, in ascending id order.
func (n *namespace) jobs(ids map[int64]struct{}) []store.Delivery {
	out := make([]store.Delivery, 0, len(ids))
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		out = append(out, copyDelivery(n.delivs[id]))
	}
	return out
}

// DueDeliveries implements store.Tx by reading the start of the due index.
// Ties in DueAt come in ascending id order, then slug order.
func (t *tx) DueDeliveries(now time.Time, limit int) ([]store.QueuedDelivery, error) {
	var out []store.QueuedDelivery
	for _, e := range t.s.due {
		if len(out) >= limit || e.at.After(now) {
			break
		}
		d := t.s.ws[e.slug].delivs[e.id]
		out = append(out, store.QueuedDelivery{Workspace: e.slug, Delivery: copyDelivery(d)})
	}
	return out, nil
}

// NextDueAt implements store.Tx.
func (t *tx) NextDueAt() (time.Time, bool, error) {
	if len(t.s.due) == 0 {
		return time.Time{}, false, nil
	}
	return t.s.due[0].at, true, nil
}

// PendingDeliveries implements store.Tx: the due index holds one entry per
// pending delivery.
func (t *tx) PendingDeliveries() (int, error) {
	return len(t.s.due), nil
}

// WorkspaceQueue implements store.Tx by reading the first limit entries
// of the due index, which is sorted by DueAt.
func (t *tx) WorkspaceQueue(slug string, limit int) (store.WorkspaceQueue, error) {
	if _, err := t.ns(slug); err != nil {
		return store.WorkspaceQueue{}, err
	}
	seen := t.s.due[:max(0, min(limit, len(t.s.due)))]
	out := store.WorkspaceQueue{Complete: len(seen) == len(t.s.due)}
	for _, e := range seen {
		if e.slug != slug {
			continue
		}
		if out.Pending == 0 {
			out.NextDue = e.at
		}
		out.Pending++
	}
	return out, nil
}
