package boltstore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// bulkBatch is the number of keys BulkLoadAudit writes per transaction.
const bulkBatch = 500_000

// BulkLoadAudit writes n audit records, record(0) to record(n-1), whose
// ids must ascend with i, into the existing workspace slug of the closed
// file at path: the records first, then audit_index, each bucket's keys
// in ascending order, bulkBatch keys per transaction. It is how a
// benchmark builds a trail of millions of records (exported for the
// package's external tests): PutAuditRecord would write them one by one,
// each touching a page of every index, and the entries of the indexes by
// target and by actor land all over their buckets when written in id
// order. The buckets split as the store's own writes split them (see
// appendOrder); record is called five times for each i.
func BulkLoadAudit(path, slug string, n int, record func(i int) store.AuditRecord) error {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{FreelistType: bbolt.FreelistMapType, NoFreelistSync: true, InitialMmapSize: 1 << 30})
	if err != nil {
		return err
	}
	defer db.Close()
	// batches calls put with each batch's share of keys in a
	// transaction of its own, with the bucket n of the workspace.
	batches := func(bucket nested, count int, put func(b *bbolt.Bucket, from, to int) error) error {
		for from := 0; from < count; from += bulkBatch {
			err := db.Update(func(btx *bbolt.Tx) error {
				ws := btx.Bucket(bucketSpaces).Bucket([]byte(slug))
				if ws == nil {
					return fmt.Errorf("no workspace %q", slug)
				}
				return put((&space{b: ws}).bucket(bucket), from, min(from+bulkBatch, count))
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	var last []byte
	err = batches(bucketAudit, n, func(b *bbolt.Bucket, from, to int) error {
		for i := from; i < to; i++ {
			r := record(i)
			if last != nil && r.ID <= string(last) {
				return fmt.Errorf("record %d: id %s is not above %s", i, r.ID, last)
			}
			last = []byte(r.ID)
			if err := putRecord(b, []byte(r.ID), r, encodeAudit); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// One index at a time, its keys sorted: as the indexes' bytes
	// ascend, audit_index is written in key order.
	for _, ix := range auditIndexes {
		keys := make([][]byte, n)
		for i := range n {
			r := record(i)
			keys[i] = auditEntry(ix, &r)
		}
		slices.SortFunc(keys, bytes.Compare)
		err := batches(bucketAuditIndex, n, func(b *bbolt.Bucket, from, to int) error {
			for _, k := range keys[from:to] {
				if err := b.Put(k, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s by %s: %w", nestedNames[bucketAuditIndex], auditIndexNames[ix], err)
		}
	}
	if last == nil {
		return nil
	}
	// Every record is indexed: the watermark is the last.
	return db.Update(func(btx *bbolt.Tx) error {
		sp := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte(slug))}
		return sp.bucket(bucketAuditFolded).Put(keyAuditFolded, last)
	})
}

// TestBulkLoadAudit: the buckets BulkLoadAudit fills hold what
// PutAuditRecord writes for the same records, and the store reads them.
func TestBulkLoadAudit(t *testing.T) {
	const n = 2_000
	actions := []string{"sign_in.succeeded", "user.updated", "token.issued"}
	record := func(i int) store.AuditRecord {
		return store.AuditRecord{
			ID: fmt.Sprintf("%016x%016x", 1_700_000_000_000_000+i*1000, i*7919), Time: time.UnixMicro(int64(1_700_000_000_000_000 + i*1000)).UTC(),
			ActorKind: "user", ActorID: strconv.Itoa(i % 7), Action: actions[i%3],
			TargetKind: "user", TargetID: strconv.Itoa(i % 13), Outcome: []string{"success", "failure"}[i%5/4],
			Changes: []byte(`{"n":` + strconv.Itoa(i) + `}`),
		}
	}
	build := func(bulk bool) (*Store, string) {
		path := filepath.Join(t.TempDir(), "db")
		s, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutWorkspace(store.Workspace{Slug: "acme"}); err != nil || bulk {
				return err
			}
			for i := range n {
				if err := tx.PutAuditRecord("acme", record(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if bulk {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := BulkLoadAudit(path, "acme", n, record); err != nil {
				t.Fatalf("BulkLoadAudit: %v", err)
			}
			if s, err = Open(path, nil); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { s.Close() })
		return s, path
	}
	one, _ := build(false)
	if err := foldEveryAudit(one.db); err != nil {
		t.Fatal(err)
	}
	bulk, _ := build(true)
	want := auditIndexDump(t, one, "acme")
	if len(want) != 5*n+1 {
		t.Fatalf("%d lines written one by one, want %d", len(want), 5*n+1)
	}
	if diff := cmp.Diff(want, auditIndexDump(t, bulk, "acme")); diff != "" {
		t.Errorf("the buckets of the bulk load (-one by one +bulk):\n%s", diff)
	}
	err := bulk.View(t.Context(), func(tx store.Tx) error {
		got, err := tx.AuditRecords("acme", store.AuditQuery{TargetKind: "user", TargetID: "3", Limit: 2})
		if diff := cmp.Diff([]store.AuditRecord{record(1992), record(1979)}, got); err == nil && diff != "" {
			t.Errorf("AuditRecords of the bulk load (-want +got):\n%s", diff)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
