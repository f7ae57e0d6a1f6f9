package boltstore

import (
	"bytes"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// The audit trail. A workspace keeps its records by id, which the
// identity package makes time-ordered, and four indexes whose entries
// are a prefix naming what they select followed by the record's id, so
// that the records of one actor, one target, one action or one outcome
// are one range of keys in id order:
//
//	audit            record id -> audit record (binary, see encodeAudit)
//	audit_actors     uvarint length + actor kind + uvarint length +
//	                 actor id + record id -> empty
//	audit_targets    uvarint length + target kind + uvarint length +
//	                 target id + record id -> empty
//	audit_actions    uvarint length + action + record id -> empty
//	audit_outcomes   uvarint length + outcome + record id -> empty
//
// The strings of a prefix are length-prefixed, as in every composite key
// of the file: with a separator byte instead, an id holding that byte
// would run into the next field, and two records of different targets
// could share an entry. PutAuditRecord moves a record's entries in the
// transaction that writes it, and DeleteAuditRecords removes them with
// it; DeleteWorkspace deletes the workspace's bucket, these five inside.
//
// AuditRecords walks one index, or the records themselves when the query
// names none: the target's when it names one, else the actor's, else the
// actions' (one range per action, merged in id order), else the
// outcome's. It reads the record of each entry between the bounds and
// checks the query's other fields on it, so a page costs the entries it
// walks: its length when the index is the query's only field, times the
// number of actions for several, never the workspace's records.

// auditIndexes are the indexes of the trail.
var auditIndexes = [...]nested{bucketAuditActors, bucketAuditTargets, bucketAuditActions, bucketAuditOutcomes}

// pairPrefix returns the prefix of a kind and an id in audit_actors or
// audit_targets.
func pairPrefix(kind, id string) []byte {
	return appendString(appendString(make([]byte, 0, 2+len(kind)+len(id)+auditIDCap), kind), id)
}

// valuePrefix returns the prefix of an action in audit_actions or of an
// outcome in audit_outcomes.
func valuePrefix(value string) []byte {
	return appendString(make([]byte, 0, 1+len(value)+auditIDCap), value)
}

// auditIDCap is the room left after a prefix for the record's id: the
// identity package's ids are 32 bytes.
const auditIDCap = 32

// auditEntry returns the entry of r in the index n.
func auditEntry(n nested, r *store.AuditRecord) []byte {
	var prefix []byte
	switch n {
	case bucketAuditActors:
		prefix = pairPrefix(r.ActorKind, r.ActorID)
	case bucketAuditTargets:
		prefix = pairPrefix(r.TargetKind, r.TargetID)
	case bucketAuditActions:
		prefix = valuePrefix(r.Action)
	case bucketAuditOutcomes:
		prefix = valuePrefix(r.Outcome)
	default:
		panic(fmt.Sprintf("boltstore: %s is not an index of the audit trail", nestedNames[n]))
	}
	return append(prefix, r.ID...)
}

// PutAuditRecord implements store.Tx. A replaced record's entries that
// change are moved; those that stay are left alone, so rewriting a
// record's displays (as erasure does) writes the record alone.
func (t *tx) PutAuditRecord(slug string, r store.AuditRecord) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	records, k := sp.bucket(bucketAudit), []byte(r.ID)
	var old *store.AuditRecord
	if v := records.Get(k); v != nil {
		prev, err := decodeAudit(k, v)
		if err != nil {
			return err
		}
		old = &prev
	}
	for _, n := range auditIndexes {
		next := auditEntry(n, &r)
		if old != nil {
			prev := auditEntry(n, old)
			if bytes.Equal(prev, next) {
				continue
			}
			if err := sp.bucket(n).Delete(prev); err != nil {
				return err
			}
		}
		if err := sp.bucket(n).Put(next, nil); err != nil {
			return err
		}
	}
	return putRecord(records, k, r, encodeAudit)
}

// AuditRecords implements store.Tx.
func (t *tx) AuditRecords(slug string, q store.AuditQuery) ([]store.AuditRecord, error) {
	sp, err := t.space(slug)
	if err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		return nil, nil
	}
	records := sp.bucket(bucketAudit)
	var walks []*auditWalk
	switch {
	case q.TargetKind != "":
		walks = []*auditWalk{newAuditWalk(sp.bucket(bucketAuditTargets), pairPrefix(q.TargetKind, q.TargetID), q)}
	case q.ActorKind != "":
		walks = []*auditWalk{newAuditWalk(sp.bucket(bucketAuditActors), pairPrefix(q.ActorKind, q.ActorID), q)}
	case len(q.Actions) > 0:
		for i, action := range q.Actions {
			if slices.Contains(q.Actions[:i], action) {
				continue // one range per action, or its records come twice
			}
			walks = append(walks, newAuditWalk(sp.bucket(bucketAuditActions), valuePrefix(action), q))
		}
	case q.Outcome != "":
		walks = []*auditWalk{newAuditWalk(sp.bucket(bucketAuditOutcomes), valuePrefix(q.Outcome), q)}
	default:
		walks = []*auditWalk{newAuditWalk(records, nil, q)}
	}
	// A page is usually what a console shows at once; a larger Limit
	// grows the slice as it fills.
	out := make([]store.AuditRecord, 0, min(q.Limit, 100))
	for len(out) < q.Limit {
		w := nextWalk(walks, q.Ascending)
		if w == nil {
			break
		}
		id := w.id()
		v := w.value
		if w.prefix != nil {
			if v = records.Get(id); v == nil {
				return nil, fmt.Errorf("boltstore: audit record %q: indexed but missing", id)
			}
		}
		r, err := decodeAudit(id, v)
		if err != nil {
			return nil, err
		}
		if q.Matches(&r) { // the walk keeps to its bounds and index; this checks every field
			out = append(out, r)
		}
		w.advance()
	}
	return out, nil
}

// nextWalk returns the walk whose current id comes next in the order of
// the query, the highest for newest first, or nil when every walk has
// ended. A query walks one range, or one per action, which is why this
// looks at each.
func nextWalk(walks []*auditWalk, ascending bool) *auditWalk {
	var best *auditWalk
	for _, w := range walks {
		if w.key == nil {
			continue
		}
		if best == nil {
			best = w
			continue
		}
		c := bytes.Compare(w.id(), best.id())
		if (ascending && c < 0) || (!ascending && c > 0) {
			best = w
		}
	}
	return best
}

// auditWalk walks the keys of one range of b, those that start with
// prefix (every key for a nil prefix: the records themselves), whose id
// (the key after the prefix) lies between the query's After and Before,
// in the query's order.
type auditWalk struct {
	c          *bbolt.Cursor
	prefix     []byte
	after      []byte // nil for no bound
	before     []byte // nil for no bound
	ascending  bool
	key, value []byte // the current entry; key nil once the walk ended
}

// newAuditWalk returns a walk of the range of b that prefix names,
// positioned on its first key in the bounds of q.
func newAuditWalk(b *bbolt.Bucket, prefix []byte, q store.AuditQuery) *auditWalk {
	w := &auditWalk{c: b.Cursor(), prefix: prefix, ascending: q.Ascending}
	if q.After != "" {
		w.after = []byte(q.After)
	}
	if q.Before != "" {
		w.before = []byte(q.Before)
	}
	var k, v []byte
	if w.ascending {
		switch {
		case w.after != nil:
			// The first key above prefix + After: keys equal to it hold
			// After itself, which the bound excludes.
			k, v = w.c.Seek(append(slices.Clip(prefix), w.after...))
			if k != nil && bytes.HasPrefix(k, prefix) && bytes.Equal(k[len(prefix):], w.after) {
				k, v = w.c.Next()
			}
		case len(prefix) > 0:
			k, v = w.c.Seek(prefix)
		default:
			k, v = w.c.First()
		}
	} else {
		// The last key below prefix + Before, or below the first key
		// past the range.
		var end []byte
		if w.before != nil {
			end = append(slices.Clip(prefix), w.before...)
		} else {
			end = prefixEnd(prefix)
		}
		if end != nil {
			k, _ = w.c.Seek(end)
		}
		if k == nil {
			k, v = w.c.Last()
		} else {
			k, v = w.c.Prev()
		}
	}
	w.set(k, v)
	return w
}

// prefixEnd returns the first key past every key that starts with
// prefix, or nil when there is none (an empty prefix, or one of 0xFF
// bytes only).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// id returns the record id of the current key.
func (w *auditWalk) id() []byte { return w.key[len(w.prefix):] }

// advance moves the walk to its next key.
func (w *auditWalk) advance() {
	if w.ascending {
		w.set(w.c.Next())
	} else {
		w.set(w.c.Prev())
	}
}

// set makes k the current key, or ends the walk when k is past the range
// or its bound.
func (w *auditWalk) set(k, v []byte) {
	w.key, w.value = nil, nil
	if k == nil || !bytes.HasPrefix(k, w.prefix) || len(k) == len(w.prefix) {
		return
	}
	id := k[len(w.prefix):]
	if w.ascending && w.before != nil && bytes.Compare(id, w.before) >= 0 {
		return
	}
	if !w.ascending && w.after != nil && bytes.Compare(id, w.after) <= 0 {
		return
	}
	w.key, w.value = k, v
}

// DeleteAuditRecords implements store.Tx. It walks the records from the
// lowest id, so a sweep costs what it removes.
func (t *tx) DeleteAuditRecords(slug, beforeID string, limit int) (int, error) {
	sp, err := t.space(slug)
	if err != nil {
		return 0, err
	}
	if limit <= 0 {
		return 0, nil
	}
	records, before := sp.bucket(bucketAudit), []byte(beforeID)
	var doomed []store.AuditRecord
	c := records.Cursor()
	for k, v := c.First(); k != nil && len(doomed) < limit && bytes.Compare(k, before) < 0; k, v = c.Next() {
		r, err := decodeAudit(k, v)
		if err != nil {
			return 0, err
		}
		doomed = append(doomed, r)
	}
	// Deleted after the walk: deleting while a cursor walks the bucket can
	// skip keys in bbolt.
	for i := range doomed {
		for _, n := range auditIndexes {
			if err := sp.bucket(n).Delete(auditEntry(n, &doomed[i])); err != nil {
				return 0, err
			}
		}
		if err := records.Delete([]byte(doomed[i].ID)); err != nil {
			return 0, err
		}
	}
	return len(doomed), nil
}

// buildAuditIndex fills the index n, created just now beside records that
// predate it, from the records.
func buildAuditIndex(sp *space, n nested) error {
	index := sp.bucket(n)
	return sp.bucket(bucketAudit).ForEach(func(k, v []byte) error {
		r, err := decodeAudit(k, v)
		if err != nil {
			return err
		}
		return index.Put(auditEntry(n, &r), nil)
	})
}
