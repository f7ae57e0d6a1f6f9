package boltstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// fourIndexesFile is a file written by the release whose trail kept a
// bucket per index (see testdata/README.md): workspace acme with the
// records fourIndexesRecords.
const fourIndexesFile = "testdata/four-audit-indexes.db"

// The ids of the records of fourIndexesFile, oldest first.
const (
	fourID1 = "000650a4b7d2a2c0a1f3c5d7e9b2d4f6"
	fourID2 = "000650a4b7e1e500b3d5f7a9c1e3a5c7"
	fourID3 = "000650a4b7f12740c5e7a9b1d3f5b7d9"
	fourID4 = "000650a4b8006980d7f9b1c3e5a7c9eb"
	fourID5 = "000650a4b80fabc0e9b1c3d5f7b9d1fd"
)

// fourIndexesRecords are the records of fourIndexesFile, by id.
var fourIndexesRecords = map[string]store.AuditRecord{
	fourID1: {ID: fourID1, Time: time.Date(2026, 5, 6, 7, 8, 1, 0, time.UTC),
		ActorKind: "api_key", ActorID: "k_deploy", ActorDisplay: "deploy key",
		Action: "user.created", TargetKind: "user", TargetID: "1", TargetDisplay: "ada",
		Outcome: "success", Address: "192.0.2.1", UserAgent: "curl/8.0", RequestID: "req-1",
		Changes: []byte(`{"username":{"after":"ada"}}`)},
	fourID2: {ID: fourID2, Time: time.Date(2026, 5, 6, 7, 8, 2, 0, time.UTC),
		ActorKind: "system", Action: "sign_in.failed", TargetKind: "user", TargetID: "1", TargetDisplay: "ada",
		Outcome: "failure", Reason: "wrong_password", Address: "198.51.100.7", UserAgent: "Mozilla/5.0"},
	fourID3: {ID: fourID3, Time: time.Date(2026, 5, 6, 7, 8, 3, 0, time.UTC),
		ActorKind: "user", ActorID: "1", ActorDisplay: "ada",
		Action: "sign_in.succeeded", TargetKind: "user", TargetID: "1", TargetDisplay: "ada",
		Outcome: "success", Address: "198.51.100.7", UserAgent: "Mozilla/5.0"},
	fourID4: {ID: fourID4, Time: time.Date(2026, 5, 6, 7, 8, 4, 0, time.UTC),
		ActorKind: "api_key", ActorID: "k_deploy", ActorDisplay: "deploy key",
		Action: "user.attribute_set", TargetKind: "user", TargetID: "2", TargetDisplay: "bob",
		Outcome: "success", RequestID: "req-2",
		Changes: []byte(`{"attributes.department":{"after":"R&D"}}`)},
	fourID5: {ID: fourID5, Time: time.Date(2026, 5, 6, 7, 8, 5, 0, time.UTC),
		ActorKind: "system", Action: "sign_in.failed", TargetKind: "user", TargetDisplay: "mallory",
		Outcome: "failure", Reason: "unknown_login", Address: "203.0.113.9"},
}

// fourIndexesUpgraded is auditIndexDump of fourIndexesFile upgraded.
var fourIndexesUpgraded = []string{
	"audit: " + fourID1, "audit: " + fourID2, "audit: " + fourID3, "audit: " + fourID4, "audit: " + fourID5,
	"folded through: " + fourID5,
	"actor: user/1/" + fourID3,
	"actor: system//" + fourID2, "actor: system//" + fourID5,
	"actor: api_key/k_deploy/" + fourID1, "actor: api_key/k_deploy/" + fourID4,
	"target: user//" + fourID5,
	"target: user/1/" + fourID1, "target: user/1/" + fourID2, "target: user/1/" + fourID3,
	"target: user/2/" + fourID4,
	"action: user.created/" + fourID1,
	"action: sign_in.failed/" + fourID2, "action: sign_in.failed/" + fourID5,
	"action: sign_in.succeeded/" + fourID3,
	"action: user.attribute_set/" + fourID4,
	"outcome: failure/" + fourID2, "outcome: failure/" + fourID5,
	"outcome: success/" + fourID1, "outcome: success/" + fourID3, "outcome: success/" + fourID4,
}

// copyFourIndexesFile returns the path of a copy of fourIndexesFile.
func copyFourIndexesFile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(fourIndexesFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// auditBucketNames returns the names of the buckets of the workspace slug
// of the closed file at path that start with "audit".
func auditBucketNames(t *testing.T, path, slug string) []string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	err = db.View(func(btx *bbolt.Tx) error {
		return btx.Bucket(bucketSpaces).Bucket([]byte(slug)).ForEachBucket(func(k []byte) error {
			if strings.HasPrefix(string(k), "audit") {
				names = append(names, string(k))
			}
			return nil
		})
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestFourAuditIndexesFile checks the upgrade of a file whose trail kept
// a bucket per index: Open copies their entries into audit_index, two per
// transaction here, and deletes them; the queries through each index
// find the records; the entries move and go with later writes; and a
// file that a release from before audit_index wrote to after the upgrade
// (its buckets back, with entries audit_index lacks and without entries
// it holds) gets audit_index copied again from them.
func TestFourAuditIndexesFile(t *testing.T) {
	defer func(batch int) { auditUpgradeBatch = batch }(auditUpgradeBatch)
	auditUpgradeBatch = 2
	path := copyFourIndexesFile(t)
	if diff := cmp.Diff([]string{"audit", "audit_actions", "audit_actors", "audit_outcomes", "audit_targets"}, auditBucketNames(t, path, "acme")); diff != "" {
		t.Fatalf("the buckets of the old file (-want +got):\n%s", diff)
	}
	open := func() *Store {
		t.Helper()
		s, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(s *Store, step string, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, auditIndexDump(t, s, "acme")); diff != "" {
			t.Errorf("%s: the trail's buckets (-want +got):\n%s", step, diff)
		}
	}

	s := open()
	check(s, "upgraded", fourIndexesUpgraded)
	queries := []struct {
		q    store.AuditQuery
		want []string
	}{
		{store.AuditQuery{Limit: 10}, []string{fourID5, fourID4, fourID3, fourID2, fourID1}},
		{store.AuditQuery{Before: fourID4, Limit: 2}, []string{fourID3, fourID2}},
		{store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 10}, []string{fourID3, fourID2, fourID1}},
		{store.AuditQuery{TargetKind: "user", TargetID: "", Limit: 10}, []string{fourID5}},
		{store.AuditQuery{ActorKind: "api_key", ActorID: "k_deploy", Limit: 10}, []string{fourID4, fourID1}},
		{store.AuditQuery{ActorKind: "user", ActorID: "1", Outcome: "failure", Limit: 10}, nil},
		{store.AuditQuery{Actions: []string{"sign_in.failed", "user.created"}, Ascending: true, Limit: 10}, []string{fourID1, fourID2, fourID5}},
		{store.AuditQuery{Outcome: "failure", After: fourID2, Limit: 10}, []string{fourID5}},
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		for _, tt := range queries {
			recs, err := tx.AuditRecords("acme", tt.q)
			if err != nil {
				return err
			}
			var want []store.AuditRecord
			for _, id := range tt.want {
				want = append(want, fourIndexesRecords[id])
			}
			if diff := cmp.Diff(want, recs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("AuditRecords(%+v) (-want +got):\n%s", tt.q, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	moved := fourIndexesRecords[fourID2]
	moved.TargetID, moved.Outcome = "2", "success"
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.PutAuditRecord("acme", moved); err != nil {
			return err
		}
		n, err := tx.DeleteAuditRecords("acme", fourID2, 10)
		if err == nil && n != 1 {
			t.Errorf("DeleteAuditRecords(%s) = %d, want 1", fourID2, n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	after := []string{
		"audit: " + fourID2, "audit: " + fourID3, "audit: " + fourID4, "audit: " + fourID5,
		"folded through: " + fourID5,
		"actor: user/1/" + fourID3,
		"actor: system//" + fourID2, "actor: system//" + fourID5,
		"actor: api_key/k_deploy/" + fourID4,
		"target: user//" + fourID5,
		"target: user/1/" + fourID3,
		"target: user/2/" + fourID2, "target: user/2/" + fourID4,
		"action: sign_in.failed/" + fourID2, "action: sign_in.failed/" + fourID5,
		"action: sign_in.succeeded/" + fourID3,
		"action: user.attribute_set/" + fourID4,
		"outcome: failure/" + fourID5,
		"outcome: success/" + fourID2, "outcome: success/" + fourID3, "outcome: success/" + fourID4,
	}
	check(s, "a record moved, the oldest deleted", after)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"audit", "audit_folded", "audit_index"}, auditBucketNames(t, path, "acme")); diff != "" {
		t.Errorf("the buckets of the upgraded file (-want +got):\n%s", diff)
	}
	s = open()
	check(s, "opened again", after)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// What a release from before audit_index does to the file: it
	// creates its buckets, builds them from the records, writes a record
	// with its entries there alone, and removes another with its entries
	// there alone.
	sixth := store.AuditRecord{ID: "000650a4b81eee00fbd3e5f7b9d1f3a5", ActorKind: "user", ActorID: "2",
		Action: "sign_in.succeeded", TargetKind: "user", TargetID: "2", Outcome: "success"}
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		ws := btx.Bucket(bucketSpaces).Bucket([]byte("acme"))
		records := ws.Bucket(nestedNames[bucketAudit])
		if err := putRecord(records, []byte(sixth.ID), sixth, encodeAudit); err != nil {
			return err
		}
		if err := records.Delete([]byte(fourID2)); err != nil {
			return err
		}
		for _, ix := range auditIndexes {
			legacy, err := ws.CreateBucket(legacyAuditBuckets[ix])
			if err != nil {
				return err
			}
			err = records.ForEach(func(k, v []byte) error {
				r, err := decodeAudit(k, v)
				if err != nil {
					return err
				}
				return legacy.Put(auditEntry(ix, &r)[1:], nil)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	s = open()
	t.Cleanup(func() { s.Close() })
	check(s, "written to by an older release", []string{
		"audit: " + fourID3, "audit: " + fourID4, "audit: " + fourID5, "audit: " + sixth.ID,
		"folded through: " + sixth.ID,
		"actor: user/1/" + fourID3, "actor: user/2/" + sixth.ID,
		"actor: system//" + fourID5,
		"actor: api_key/k_deploy/" + fourID4,
		"target: user//" + fourID5,
		"target: user/1/" + fourID3,
		"target: user/2/" + fourID4, "target: user/2/" + sixth.ID,
		"action: sign_in.failed/" + fourID5,
		"action: sign_in.succeeded/" + fourID3, "action: sign_in.succeeded/" + sixth.ID,
		"action: user.attribute_set/" + fourID4,
		"outcome: failure/" + fourID5,
		"outcome: success/" + fourID3, "outcome: success/" + fourID4, "outcome: success/" + sixth.ID,
	})
}

// TestFourAuditIndexesFileWithoutOne: an index whose bucket the old file
// lacks is built from the records by the upgrade, beside the others'
// copies.
func TestFourAuditIndexesFileWithoutOne(t *testing.T) {
	path := copyFourIndexesFile(t)
	DropBuckets(t, path, "acme", "audit_targets")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if diff := cmp.Diff(fourIndexesUpgraded, auditIndexDump(t, s, "acme")); diff != "" {
		t.Errorf("the trail's buckets (-want +got):\n%s", diff)
	}
}
