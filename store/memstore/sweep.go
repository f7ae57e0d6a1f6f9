package memstore

import (
	"cmp"
	"slices"
	"time"

	"github.com/identitylib/identity/store"
)

// Retention. memstore is built for tests: a sweep scans the workspace's
// records of the kind, sorts the removable ones by time and removes the
// first limit, instead of walking a time index as the durable stores do.

// dueOf returns the keys of the records of m whose time (by at) is at or
// before before, earliest first (ties by key), at most limit of them.
func dueOf[K cmp.Ordered, V any](m map[K]V, at func(V) (time.Time, bool), before time.Time, limit int) []K {
	type entry struct {
		t time.Time
		k K
	}
	var es []entry
	for k, v := range m {
		if t, ok := at(v); ok && !t.After(before) {
			es = append(es, entry{t, k})
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	var out []K
	for _, e := range es {
		if len(out) == max(limit, 0) {
			break
		}
		out = append(out, e.k)
	}
	return out
}

// DeleteFinishedDeliveries implements store.Tx.
func (t *tx) DeleteFinishedDeliveries(slug string, kind store.JobKind, status store.DeliveryStatus, before time.Time, limit int) (int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	if status == store.DeliveryPending {
		return 0, nil
	}
	ids := dueOf(n.delivs, func(d store.Delivery) (time.Time, bool) {
		return d.FinishedAt(), d.Kind == kind && d.Status == status
	}, before, limit)
	for _, id := range ids {
		d := n.delivs[id]
		t.s.removeDelivery(n, d)
		t.onUndo(func() { t.s.addDelivery(n, d) })
	}
	return len(ids), nil
}

// DeleteEndedSessions implements store.Tx.
func (t *tx) DeleteEndedSessions(slug string, before time.Time, limit int) (int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	ids := dueOf(n.sessions, func(s store.Session) (time.Time, bool) { return s.EndedAt(), true }, before, limit)
	for _, id := range ids {
		s := n.sessions[id]
		n.removeSession(s)
		t.onUndo(func() { n.addSession(s) })
	}
	return len(ids), nil
}

// DeleteExpiredTokens implements store.Tx: single-use tokens, then
// authorization requests, refresh tokens and grants (with their refresh
// tokens).
func (t *tx) DeleteExpiredTokens(slug string, before time.Time, limit int) (int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, id := range dueOf(n.tokens, func(v store.VerificationToken) (time.Time, bool) { return v.ExpiresAt, true }, before, limit) {
		t.onUndo(takeKey(n.tokens, id))
		removed++
	}
	for _, id := range dueOf(n.authRequests, func(r store.AuthRequest) (time.Time, bool) { return r.ExpiresAt, true }, before, limit-removed) {
		t.onUndo(takeKey(n.authRequests, id))
		removed++
	}
	for _, id := range dueOf(n.refreshTokens, func(r store.RefreshToken) (time.Time, bool) { return r.ExpiresAt, true }, before, limit-removed) {
		t.onUndo(takeKey(n.refreshTokens, id))
		removed++
	}
	for _, id := range dueOf(n.grants, func(g store.Grant) (time.Time, bool) { return g.ExpiresAt, true }, before, limit-removed) {
		for rid, rt := range n.refreshTokens {
			if rt.GrantID == id {
				t.onUndo(takeKey(n.refreshTokens, rid))
				removed++
			}
		}
		g := n.grants[id]
		n.removeGrant(g)
		t.onUndo(func() { n.addGrant(g) })
		removed++
	}
	return removed, nil
}

// pageOf returns the page [offset, offset+limit) of all and len(all).
func pageOf[T any](all []T, offset, limit int) ([]T, int) {
	lo := min(max(offset, 0), len(all))
	hi := min(lo+max(limit, 0), len(all))
	return all[lo:hi:hi], len(all)
}

// DeliveriesPage implements store.Tx: a page of Deliveries.
func (t *tx) DeliveriesPage(slug string, endpointID int64, offset, limit int) ([]store.Delivery, int, error) {
	all, err := t.Deliveries(slug, endpointID)
	if err != nil {
		return nil, 0, err
	}
	out, total := pageOf(all, offset, limit)
	return out, total, nil
}

// MailJobsPage implements store.Tx: a page of MailJobs.
func (t *tx) MailJobsPage(slug string, offset, limit int) ([]store.Delivery, int, error) {
	all, err := t.MailJobs(slug)
	if err != nil {
		return nil, 0, err
	}
	out, total := pageOf(all, offset, limit)
	return out, total, nil
}

// UserSessionsPage implements store.Tx: a page of UserSessions.
func (t *tx) UserSessionsPage(slug string, userID int64, offset, limit int) ([]store.Session, int, error) {
	all, err := t.UserSessions(slug, userID)
	if err != nil {
		return nil, 0, err
	}
	out, total := pageOf(all, offset, limit)
	return out, total, nil
}
