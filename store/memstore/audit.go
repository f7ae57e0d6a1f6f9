package memstore

import (
	"slices"
	"strings"

	"github.com/identitylib/identity/store"
)

// The audit trail is one map by id; AuditRecords and DeleteAuditRecords
// sort its ids on each call, which is linear in the workspace's records:
// memstore is built for tests.

// PutAuditRecord implements store.Tx.
func (t *tx) PutAuditRecord(slug string, r store.AuditRecord) error {
	n, err := t.ns(slug)
	if err != nil {
		return err
	}
	setRecord(t, n.audit, r.ID, copyAuditRecord(r))
	return nil
}

// AuditRecords implements store.Tx.
func (t *tx) AuditRecords(slug string, q store.AuditQuery) ([]store.AuditRecord, error) {
	n, err := t.ns(slug)
	if err != nil {
		return nil, err
	}
	ids := sortedAuditIDs(n)
	if !q.Ascending {
		slices.Reverse(ids)
	}
	var out []store.AuditRecord
	for _, id := range ids {
		if len(out) >= q.Limit {
			break
		}
		if r := n.audit[id]; q.Matches(&r) {
			out = append(out, copyAuditRecord(r))
		}
	}
	return out, nil
}

// DeleteAuditRecords implements store.Tx.
func (t *tx) DeleteAuditRecords(slug, beforeID string, limit int) (int, error) {
	n, err := t.ns(slug)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, id := range sortedAuditIDs(n) {
		if removed >= limit || id >= beforeID {
			break
		}
		if err := deleteRecord(t, n.audit, id); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

func sortedAuditIDs(n *namespace) []string {
	ids := make([]string, 0, len(n.audit))
	for id := range n.audit {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, strings.Compare)
	return ids
}

func copyAuditRecord(r store.AuditRecord) store.AuditRecord {
	r.Time = normTime(r.Time)
	r.Changes = slices.Clone(r.Changes)
	return r
}
