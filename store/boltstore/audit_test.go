package boltstore_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// auditBuckets are the buckets of a workspace's audit trail, and
// auditIndexBuckets the one of them built from the records.
var (
	auditBuckets      = []string{"audit", "audit_index"}
	auditIndexBuckets = auditBuckets[1:]
)

// oldFileRecord is the record the tests of older files write.
var oldFileRecord = store.AuditRecord{
	ID: "0005d9b6c1a2b3c40123456789abcdef", Time: testTime,
	ActorKind: "api_key", ActorID: "key-1", ActorDisplay: "deploy key",
	Action:     "user.updated",
	TargetKind: "user", TargetID: "1", TargetDisplay: "alice",
	Outcome: "success", Address: "192.0.2.1", UserAgent: "curl/8.0", RequestID: "req-1",
	Changes: []byte(`{"email":{"after":"alice@acme.example"}}`),
}

// oldFileQueries find oldFileRecord through each index and without one.
var oldFileQueries = []store.AuditQuery{
	{Limit: 10},
	{TargetKind: "user", TargetID: "1", Limit: 10},
	{ActorKind: "api_key", ActorID: "key-1", Limit: 10},
	{Actions: []string{"user.created", "user.updated"}, Limit: 10},
	{Outcome: "success", Limit: 10},
}

// checkOldFileRecord checks that every query of oldFileQueries finds
// want in testSlug, and nothing else.
func checkOldFileRecord(t *testing.T, s store.Store, want []store.AuditRecord) {
	t.Helper()
	mustView(t, s, func(tx store.Tx) error {
		for _, q := range oldFileQueries {
			got, err := tx.AuditRecords(testSlug, q)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("AuditRecords(%+v) (-want +got):\n%s", q, diff)
			}
		}
		return nil
	})
}

// TestAuditInOlderFiles: a file written before the audit trail (the
// previous release's, the one before roles, and one whose workspace lacks
// the trail's buckets) opens with an empty trail, and a record written
// then is found through every index after a reopening; a file whose
// workspace has records but lacks the indexes gets them built by Open.
func TestAuditInOlderFiles(t *testing.T) {
	withWorkspace := func(t *testing.T, records ...store.AuditRecord) string {
		path := filepath.Join(t.TempDir(), "db")
		s := openStore(t, path, nil)
		mustUpdate(t, s, func(tx store.Tx) error {
			errs := []error{tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime})}
			for _, r := range records {
				errs = append(errs, tx.PutAuditRecord(testSlug, r))
			}
			return errors.Join(errs...)
		})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		file func(t *testing.T) string
	}{
		{"previous release", func(t *testing.T) string { return copyFile(t, previousReleaseFile) }},
		{"before roles", func(t *testing.T) string { return copyFile(t, beforeRolesFile) }},
		{"without the buckets", func(t *testing.T) string {
			path := withWorkspace(t)
			boltstore.DropBuckets(t, path, testSlug, auditBuckets...)
			return path
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file(t)
			s := openStore(t, path, nil)
			checkOldFileRecord(t, s, nil)
			mustUpdate(t, s, func(tx store.Tx) error { return tx.PutAuditRecord(testSlug, oldFileRecord) })
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, path, nil)
			checkOldFileRecord(t, s, []store.AuditRecord{oldFileRecord})
		})
	}

	t.Run("records without indexes", func(t *testing.T) {
		path := withWorkspace(t, oldFileRecord)
		boltstore.DropBuckets(t, path, testSlug, auditIndexBuckets...)
		s := openStore(t, path, nil)
		checkOldFileRecord(t, s, []store.AuditRecord{oldFileRecord})
		// The built entries move with a replace like any other.
		moved := oldFileRecord
		moved.TargetID, moved.Outcome = "2", "failure"
		mustUpdate(t, s, func(tx store.Tx) error { return tx.PutAuditRecord(testSlug, moved) })
		mustView(t, s, func(tx store.Tx) error {
			for _, q := range []store.AuditQuery{
				{TargetKind: "user", TargetID: "1", Limit: 10},
				{Outcome: "success", Limit: 10},
			} {
				got, err := tx.AuditRecords(testSlug, q)
				if err != nil || len(got) != 0 {
					t.Errorf("AuditRecords(%+v) after the replace = %v, %v; want none", q, got, err)
				}
			}
			return nil
		})
	})
}

// TestAuditInBackupAndCompaction: the trail and its indexes are in a
// backup and survive a compaction.
func TestAuditInBackupAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}), tx.PutAuditRecord(testSlug, oldFileRecord))
	})
	var backup bytes.Buffer
	if _, err := s.Backup(t.Context(), &backup); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	checkOldFileRecord(t, restore(t, backup.Bytes()), []store.AuditRecord{oldFileRecord})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := boltstore.Compact(path, nil); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	checkOldFileRecord(t, openStore(t, path, nil), []store.AuditRecord{oldFileRecord})
}
