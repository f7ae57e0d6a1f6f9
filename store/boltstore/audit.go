package boltstore

import (
	"bytes"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// The audit trail. A workspace keeps its records by id, which the
// identity package makes time-ordered, and four indexes, by actor, by
// target, by action and by outcome, whose entries are a prefix naming
// what they select followed by the record's id, so that the records of
// one actor, one target, one action or one outcome are one range of keys
// in id order. The four share one bucket, each entry's first byte naming
// its index (byActor 1, byTarget 2, byAction 3, byOutcome 4), so that a
// record touches two B+trees, not five: bbolt rewrites every page on the
// path to each key a transaction changed, so each tree a record touches
// adds its root and branch pages to the commit of every change. The four
// entries are in four ranges, so they would still dirty up to four
// leaves of audit_index and the branches above them: they are written by
// the fold (see foldAudit), for many records at once, and a record's own
// commit writes the record alone.
//
//	audit         record id -> audit record (binary, see encodeAudit)
//	audit_index   byActor + uvarint length + actor kind + uvarint
//	              length + actor id + record id -> empty
//	              byTarget + uvarint length + target kind + uvarint
//	              length + target id + record id -> empty
//	              byAction + uvarint length + action + record id -> empty
//	              byOutcome + uvarint length + outcome + record id
//	              -> empty
//
// The strings of a prefix are length-prefixed, as in every composite key
// of the file: with a separator byte instead, an id holding that byte
// would run into the next field, and two records of different targets
// could share an entry. PutAuditRecord moves the entries of a record it
// replaces that the fold has indexed, and DeleteAuditRecords removes a
// record's entries with it; DeleteWorkspace deletes the workspace's
// bucket, these inside.
//
// AuditRecords walks one index, or the records themselves when the query
// names none: the target's when it names one, else the actor's, else the
// actions' (one range per action, merged in id order), else the
// outcome's, up to the fold's watermark; and the records above it, the
// tail, merged in id order (every id of the tail is above every id of the
// index's walk). It reads the record of each entry between the bounds and
// checks the query's other fields on it, so a page costs the entries it
// walks and at most the tail: its length when the index is the query's
// only field, times the number of actions for several, never the
// workspace's records.
//
// Files written before the indexes shared a bucket have one bucket per
// index (audit_actors, audit_targets, audit_actions, audit_outcomes,
// the same keys without the first byte). Open copies their entries into
// audit_index, each behind its index's byte, and deletes them (see
// upgradeAuditIndexes).

// auditIndex names one of the trail's indexes: it is the first byte of
// the index's entries in audit_index.
type auditIndex byte

// The indexes of the trail, in the order of their ranges in audit_index.
const (
	byActor auditIndex = 1 + iota
	byTarget
	byAction
	byOutcome
)

// auditIndexes are the indexes of the trail.
var auditIndexes = [...]auditIndex{byActor, byTarget, byAction, byOutcome}

// legacyAuditBuckets are the buckets the indexes had, one each, in files
// written before they shared audit_index.
var legacyAuditBuckets = [...][]byte{
	byActor:   []byte("audit_actors"),
	byTarget:  []byte("audit_targets"),
	byAction:  []byte("audit_actions"),
	byOutcome: []byte("audit_outcomes"),
}

// pairPrefix returns the prefix of a kind and an id in the index ix, by
// actor or by target.
func pairPrefix(ix auditIndex, kind, id string) []byte {
	b := append(make([]byte, 0, 3+len(kind)+len(id)+auditIDCap), byte(ix))
	return appendString(appendString(b, kind), id)
}

// valuePrefix returns the prefix of a value in the index ix, an action's
// by action or an outcome's by outcome.
func valuePrefix(ix auditIndex, value string) []byte {
	return appendString(append(make([]byte, 0, 2+len(value)+auditIDCap), byte(ix)), value)
}

// auditIDCap is the room left after a prefix for the record's id: the
// identity package's ids are 32 bytes.
const auditIDCap = 32

// auditEntry returns the entry of r in the index ix.
func auditEntry(ix auditIndex, r *store.AuditRecord) []byte {
	var prefix []byte
	switch ix {
	case byActor:
		prefix = pairPrefix(ix, r.ActorKind, r.ActorID)
	case byTarget:
		prefix = pairPrefix(ix, r.TargetKind, r.TargetID)
	case byAction:
		prefix = valuePrefix(ix, r.Action)
	case byOutcome:
		prefix = valuePrefix(ix, r.Outcome)
	default:
		panic(fmt.Sprintf("boltstore: %d is not an index of the audit trail", ix))
	}
	return append(prefix, r.ID...)
}

// PutAuditRecord implements store.Tx. A new record's entries are left to
// foldAudit unless the record sorts at or below the fold's watermark (a
// record with an id from the past). A replaced record's entries that
// change are moved; those that stay are left alone, so rewriting a
// record's displays (as erasure does) writes the record alone.
func (t *tx) PutAuditRecord(slug string, r store.AuditRecord) error {
	sp, err := t.space(slug)
	if err != nil {
		return err
	}
	records, index, k := sp.bucket(bucketAudit), sp.bucket(bucketAuditIndex), []byte(r.ID)
	indexed := bytes.Compare(k, auditFoldedThrough(sp)) <= 0
	var old *store.AuditRecord
	if v := records.Get(k); v != nil {
		prev, err := decodeAudit(k, v)
		if err != nil {
			return err
		}
		old = &prev
	}
	for _, ix := range auditIndexes {
		next := auditEntry(ix, &r)
		if old != nil {
			prev := auditEntry(ix, old)
			if bytes.Equal(prev, next) {
				continue
			}
			// Deleting an entry the record never had changes nothing.
			if err := index.Delete(prev); err != nil {
				return err
			}
		}
		if !indexed {
			continue
		}
		if err := index.Put(next, nil); err != nil {
			return err
		}
	}
	if old == nil && !indexed {
		t.noteUnfolded(slug)
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
	records, index := sp.bucket(bucketAudit), sp.bucket(bucketAuditIndex)
	after, before := boundKey(q.After), boundKey(q.Before)
	// The index holds the entries of the records up to the watermark;
	// those after it, the tail, are walked among the records themselves
	// and checked field by field, as a query that names no index is.
	folded := auditFoldedThrough(sp)
	indexBefore := before
	if folded == nil {
		indexBefore = []byte{} // nothing folded: no entry to walk
	} else if through := append(slices.Clip(folded), 0); before == nil || bytes.Compare(through, before) < 0 {
		indexBefore = through // the first key above the watermark
	}
	tailAfter := after
	if folded != nil && (after == nil || bytes.Compare(folded, after) > 0) {
		tailAfter = folded
	}
	indexWalk := func(prefix []byte) *auditWalk {
		return newAuditWalk(index, prefix, q.Ascending, after, indexBefore)
	}
	var walks []*auditWalk
	switch {
	case q.TargetKind != "":
		walks = []*auditWalk{indexWalk(pairPrefix(byTarget, q.TargetKind, q.TargetID))}
	case q.ActorKind != "":
		walks = []*auditWalk{indexWalk(pairPrefix(byActor, q.ActorKind, q.ActorID))}
	case len(q.Actions) > 0:
		for i, action := range q.Actions {
			if slices.Contains(q.Actions[:i], action) {
				continue // one range per action, or its records come twice
			}
			walks = append(walks, indexWalk(valuePrefix(byAction, action)))
		}
	case q.Outcome != "":
		walks = []*auditWalk{indexWalk(valuePrefix(byOutcome, q.Outcome))}
	default:
		tailAfter = after // every record is walked
	}
	walks = append(walks, newAuditWalk(records, nil, q.Ascending, tailAfter, before))
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

// newAuditWalk returns a walk of the range of b that prefix names, in
// ascending or descending order, of the ids above after and below before
// (nil for no bound; an empty before ends the walk before it starts),
// positioned on its first key.
func newAuditWalk(b *bbolt.Bucket, prefix []byte, ascending bool, after, before []byte) *auditWalk {
	w := &auditWalk{c: b.Cursor(), prefix: prefix, ascending: ascending, after: after, before: before}
	if before != nil && len(before) == 0 {
		return w // an empty range: key stays nil
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
	records, index, before := sp.bucket(bucketAudit), sp.bucket(bucketAuditIndex), []byte(beforeID)
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
		for _, ix := range auditIndexes {
			if err := index.Delete(auditEntry(ix, &doomed[i])); err != nil {
				return 0, err
			}
		}
		if err := records.Delete([]byte(doomed[i].ID)); err != nil {
			return 0, err
		}
	}
	return len(doomed), nil
}

// buildAuditIndex fills audit_index, created just now beside records
// that predate it (a file from before the trail has none), from the
// records.
func buildAuditIndex(sp *space) error {
	index := sp.bucket(bucketAuditIndex)
	return sp.bucket(bucketAudit).ForEach(func(k, v []byte) error {
		r, err := decodeAudit(k, v)
		if err != nil {
			return err
		}
		for _, ix := range auditIndexes {
			if err := index.Put(auditEntry(ix, &r), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// auditUpgradeBatch is the most entries upgradeAuditIndexes copies in one
// transaction: bbolt keeps every page a transaction changes in memory
// until it commits, and a trail of 10,000,000 records has 40,000,000
// entries, some 2.5 GB of them. (A variable for the tests.)
var auditUpgradeBatch = 500_000

// upgradeAuditIndexes gives every workspace of db that holds a bucket of
// legacyAuditBuckets, written by a release from before audit_index, a
// new audit_index and deletes those buckets. For each index in turn it
// copies the entries of the index's bucket, behind the index's byte, or
// when the workspace lacks that bucket builds them from the records,
// auditUpgradeBatch entries per transaction: a source bucket is walked
// in key order, and the next transaction resumes after the last key the
// previous one copied. The copies of an index's bucket come in key order
// and the indexes' bytes ascend, so audit_index is filled from its start
// to its end, its pages split at appendFill, nearly full.
//
// A workspace that holds both audit_index and a bucket of
// legacyAuditBuckets is one whose upgrade was cut short, or one that a
// release from before audit_index wrote to after the upgrade, creating
// the buckets again and keeping them alone: its audit_index may lack
// entries or hold stale ones. It is deleted and copied again from the
// start, so the upgrade is done once it has deleted the old buckets,
// whenever it was interrupted.
func upgradeAuditIndexes(db *bbolt.DB) error {
	var slugs [][]byte
	err := db.View(func(btx *bbolt.Tx) error {
		spaces := btx.Bucket(bucketSpaces)
		if spaces == nil {
			return nil // a new file
		}
		return spaces.ForEachBucket(func(slug []byte) error {
			if hasLegacyAuditBucket(spaces.Bucket(slug)) {
				slugs = append(slugs, bytes.Clone(slug))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, slug := range slugs {
		// update runs fn with the workspace's bucket in a transaction of
		// its own.
		update := func(fn func(ws *bbolt.Bucket) error) error {
			return db.Update(func(btx *bbolt.Tx) error { return fn(btx.Bucket(bucketSpaces).Bucket(slug)) })
		}
		err := update(func(ws *bbolt.Bucket) error {
			if ws.Bucket(nestedNames[bucketAuditIndex]) != nil {
				if err := ws.DeleteBucket(nestedNames[bucketAuditIndex]); err != nil {
					return err
				}
			}
			_, err := ws.CreateBucket(nestedNames[bucketAuditIndex])
			return err
		})
		for _, ix := range auditIndexes {
			var last []byte // the last source key copied
			for done := false; err == nil && !done; {
				err = update(func(ws *bbolt.Bucket) error {
					var err error
					last, done, err = copyAuditEntries(ws, ix, last)
					return err
				})
			}
		}
		if err == nil {
			err = update(func(ws *bbolt.Bucket) error {
				for _, name := range legacyAuditBuckets[byActor:] {
					if ws.Bucket(name) == nil {
						continue
					}
					if err := ws.DeleteBucket(name); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			return fmt.Errorf("workspace %q: audit_index: %w", slug, err)
		}
	}
	return nil
}

// hasLegacyAuditBucket reports whether the workspace bucket ws holds a
// bucket of legacyAuditBuckets.
func hasLegacyAuditBucket(ws *bbolt.Bucket) bool {
	for _, name := range legacyAuditBuckets[byActor:] {
		if ws.Bucket(name) != nil {
			return true
		}
	}
	return false
}

// copyAuditEntries puts into the workspace's audit_index the entries of
// the index ix of up to auditUpgradeBatch keys of their source (see
// upgradeAuditIndexes) that come after last (from the first for nil),
// and returns the last key it read and whether the source ended.
func copyAuditEntries(ws *bbolt.Bucket, ix auditIndex, last []byte) ([]byte, bool, error) {
	index := ws.Bucket(nestedNames[bucketAuditIndex])
	src, fromRecords := ws.Bucket(legacyAuditBuckets[ix]), false
	if src == nil {
		src, fromRecords = ws.Bucket(nestedNames[bucketAudit]), true
	} else {
		// FillPercent belongs to this *Bucket, which bbolt reads when it
		// splits pages at commit.
		index.FillPercent = appendFill
	}
	if src == nil {
		return nil, true, nil // no records either
	}
	c := src.Cursor()
	k, v := c.First()
	if last != nil {
		if k, v = c.Seek(last); bytes.Equal(k, last) {
			k, v = c.Next()
		}
	}
	for n := 0; k != nil && n < auditUpgradeBatch; n++ {
		var entry []byte
		if fromRecords {
			r, err := decodeAudit(k, v)
			if err != nil {
				return nil, false, err
			}
			entry = auditEntry(ix, &r)
		} else {
			entry = append(append(make([]byte, 0, 1+len(k)), byte(ix)), k...)
		}
		if err := index.Put(entry, nil); err != nil {
			return nil, false, err
		}
		last = bytes.Clone(k)
		k, v = c.Next()
	}
	return last, k == nil, nil
}

// boundKey returns the key of a query's bound, nil for none.
func boundKey(id string) []byte {
	if id == "" {
		return nil
	}
	return []byte(id)
}

// The fold. Four index entries per record cost a commit more than the
// record itself: they lie in four ranges of audit_index, so each dirties
// a leaf of its own and the branch pages above it, and every page a
// commit dirties is written and synced (BENCHMARKS.md, "Audit trail: the
// cost on the write path"). So PutAuditRecord writes the record alone,
// and foldAudit writes the entries of many records at once, after the
// commit that took a workspace's tail past auditFoldEvery records, where
// entries of one actor, one action and one outcome share their leaves.
//
// The watermark in audit_folded is the id of the last record whose
// entries are in audit_index (absent: none). Records above it are the
// tail: AuditRecords walks them among the records and checks each, so a
// query reads at most the tail besides its index's range, and the tail
// is kept short: the committer folds it once it holds auditFoldEvery
// records, Open folds what a crash left, and Close folds the rest, so a
// file closed cleanly has every record indexed, as releases before the
// fold expect.

// keyAuditFolded is the key of the watermark in audit_folded.
var keyAuditFolded = []byte("through")

// auditFoldEvery is how many records a workspace's tail holds before the
// committer folds it. A query that names an index reads the tail besides
// its range, and each record costs a read and a decode (a microsecond or
// two), so the bound keeps that under a millisecond; a fold of that many
// records writes their entries in one commit, most of them on leaves
// they share. (A variable for the tests.)
var auditFoldEvery = 256

// auditFoldBatch is the most records one fold transaction indexes: a
// tail that grew while Open or Close was not running (a file written by a
// release whose records were indexed one by one has none) is folded in
// several. (A variable for the tests.)
var auditFoldBatch = 10_000

// auditFoldedThrough returns the workspace's watermark, nil when no
// record has been folded.
func auditFoldedThrough(sp *space) []byte {
	v := sp.bucket(bucketAuditFolded).Get(keyAuditFolded)
	if len(v) == 0 {
		return nil
	}
	return v
}

// markAuditFolded sets the watermark of a workspace from a file without
// audit_folded to its last record: the releases that wrote it indexed
// every record with the record.
func markAuditFolded(sp *space) error {
	last, _ := sp.bucket(bucketAudit).Cursor().Last()
	if last == nil {
		return nil
	}
	return sp.bucket(bucketAuditFolded).Put(keyAuditFolded, bytes.Clone(last))
}

// noteUnfolded counts a new record of the workspace left to the fold in
// the transaction's tally, which the committer adds to the store's once
// the transaction commits.
func (t *tx) noteUnfolded(slug string) {
	if t.unfolded != nil {
		t.unfolded[slug]++
	}
}

// foldAuditTail writes into audit_index the entries of up to
// auditFoldBatch records of the workspace above its watermark, moves the
// watermark past them, and reports whether records remain above it.
func foldAuditTail(ws *bbolt.Bucket) (more bool, err error) {
	sp := &space{b: ws}
	records, index := sp.bucket(bucketAudit), sp.bucket(bucketAuditIndex)
	c := records.Cursor()
	k, v := c.First()
	if folded := auditFoldedThrough(sp); folded != nil {
		if k, v = c.Seek(folded); bytes.Equal(k, folded) {
			k, v = c.Next()
		}
	}
	var last []byte
	for n := 0; k != nil && n < auditFoldBatch; n++ {
		r, err := decodeAudit(k, v)
		if err != nil {
			return false, err
		}
		for _, ix := range auditIndexes {
			if err := index.Put(auditEntry(ix, &r), nil); err != nil {
				return false, err
			}
		}
		last = k
		k, v = c.Next()
	}
	if last == nil {
		return false, nil
	}
	// bbolt's keys are valid only for the transaction; Put copies
	// nothing until commit, so the watermark gets a copy of its own.
	return k != nil, sp.bucket(bucketAuditFolded).Put(keyAuditFolded, bytes.Clone(last))
}

// foldAudit folds the whole tail of the workspace slug, one transaction
// per auditFoldBatch records. A workspace deleted meanwhile has nothing
// to fold.
func foldAudit(db *bbolt.DB, slug []byte) error {
	for more := true; more; {
		err := db.Update(func(btx *bbolt.Tx) error {
			ws := btx.Bucket(bucketSpaces).Bucket(slug)
			if ws == nil {
				more = false
				return nil
			}
			var err error
			more, err = foldAuditTail(ws)
			return err
		})
		if err != nil {
			return fmt.Errorf("workspace %q: fold the audit trail: %w", slug, err)
		}
	}
	return nil
}

// foldEveryAudit folds the tail of every workspace: Open does, for what
// a crash left, and Close, so that a file closed cleanly has every record
// indexed.
func foldEveryAudit(db *bbolt.DB) error {
	var slugs [][]byte // the workspaces with a tail
	err := db.View(func(btx *bbolt.Tx) error {
		spaces := btx.Bucket(bucketSpaces)
		return spaces.ForEachBucket(func(slug []byte) error {
			sp := &space{b: spaces.Bucket(slug)}
			last, _ := sp.bucket(bucketAudit).Cursor().Last()
			if last != nil && bytes.Compare(last, auditFoldedThrough(sp)) > 0 {
				slugs = append(slugs, bytes.Clone(slug))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, slug := range slugs {
		if err := foldAudit(db, slug); err != nil {
			return err
		}
	}
	return nil
}
