package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// TestAuditRecordFormat checks that audit records round-trip whatever
// their strings and Changes hold, that bytes appended after the known
// fields are ignored (the way the format grows), and that an unknown
// version byte and a truncated record are refused.
func TestAuditRecordFormat(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC)
	full := store.AuditRecord{
		ID: "0005d9b6c1a2b3c40123456789abcdef", Time: at,
		ActorKind: "user", ActorID: "42", ActorDisplay: "Émile",
		Action:     "user.updated",
		TargetKind: "user", TargetID: "7", TargetDisplay: "zola",
		Outcome: "failure", Reason: "wrong_password",
		Address: "2001:db8::1", UserAgent: "Mozilla/5.0", RequestID: "req-1",
		Changes: []byte(`{"email":{"before":"a@example.com","after":"b@example.com"}}`),
	}
	tests := []struct {
		name string
		r    store.AuditRecord
	}{
		{"id alone", store.AuditRecord{ID: "x"}},
		{"full", full},
		{"not UTF-8", store.AuditRecord{
			ID: "\xff\x00", Time: time.Unix(0, 0).UTC(), ActorKind: "\xc3", TargetDisplay: "\x00\xff",
			UserAgent: "probe\xe2\x82", Changes: []byte{0x00, 0xff, 0x80},
		}},
		{"before 1970", store.AuditRecord{ID: "old", Time: time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC), Outcome: "success"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := encodeAudit(tt.r)
			if err != nil {
				t.Fatalf("encodeAudit: %v", err)
			}
			got, err := decodeAudit([]byte(tt.r.ID), v)
			if err != nil {
				t.Fatalf("decodeAudit: %v", err)
			}
			if diff := cmp.Diff(tt.r, got); diff != "" {
				t.Errorf("record mismatch (-want +got):\n%s", diff)
			}
			got, err = decodeAudit([]byte(tt.r.ID), append(slices.Clone(v), 0x01, 0x02, 0x03))
			if err != nil {
				t.Errorf("decodeAudit with a field appended: %v", err)
			} else if diff := cmp.Diff(tt.r, got); diff != "" {
				t.Errorf("record with a field appended mismatch (-want +got):\n%s", diff)
			}
		})
	}

	v, err := encodeAudit(full)
	if err != nil {
		t.Fatalf("encodeAudit: %v", err)
	}
	// The version, the time (8 varint bytes for 2024) and thirteen
	// one-byte lengths around the fields' own bytes.
	fields := 0
	for _, s := range auditStrings(&full) {
		fields += len(*s)
	}
	if overhead := len(v) - fields - len(full.Changes); overhead != 1+8+13 {
		t.Errorf("the record takes %d bytes besides its fields, want %d", overhead, 1+8+13)
	}
	newer := slices.Clone(v)
	newer[0] = auditFormatV1 + 1
	if _, err := decodeAudit([]byte(full.ID), newer); err == nil {
		t.Error("decodeAudit accepted an unknown format version")
	}
	for n := range len(v) {
		if _, err := decodeAudit([]byte(full.ID), v[:n]); err == nil {
			t.Errorf("decodeAudit accepted the record cut to %d of %d bytes", n, len(v))
		}
	}
}

// auditIndexNames name the indexes in auditIndexDump.
var auditIndexNames = [...]string{byActor: "actor", byTarget: "target", byAction: "action", byOutcome: "outcome"}

// auditIndexDump returns the ids of the workspace's records, each
// written "audit: record id", then the entries of audit_index, each
// written "actor: kind/id/record id" (and target), or "action:
// value/record id" (and outcome), in key order, then the names of the
// workspace's buckets of legacyAuditBuckets, which Open deletes.
func auditIndexDump(t *testing.T, s *Store, slug string) []string {
	t.Helper()
	var out []string
	err := s.db.View(func(btx *bbolt.Tx) error {
		ws := btx.Bucket(bucketSpaces).Bucket([]byte(slug))
		if err := ws.Bucket(nestedNames[bucketAudit]).ForEach(func(k, _ []byte) error {
			out = append(out, "audit: "+string(k))
			return nil
		}); err != nil {
			return err
		}
		err := ws.Bucket(nestedNames[bucketAuditIndex]).ForEach(func(k, _ []byte) error {
			if len(k) == 0 || k[0] < byte(byActor) || k[0] > byte(byOutcome) {
				return fmt.Errorf("audit_index: bad key %q", k)
			}
			ix := auditIndex(k[0])
			first, rest, ok := readString(k[1:])
			if !ok {
				return fmt.Errorf("audit_index: bad key %q", k)
			}
			if ix == byActor || ix == byTarget {
				var second string
				if second, rest, ok = readString(rest); !ok {
					return fmt.Errorf("audit_index: bad key %q", k)
				}
				first += "/" + second
			}
			out = append(out, fmt.Sprintf("%s: %s/%s", auditIndexNames[ix], first, rest))
			return nil
		})
		if err != nil {
			return err
		}
		for _, name := range legacyAuditBuckets[byActor:] {
			if ws.Bucket(name) != nil {
				out = append(out, "legacy bucket: "+string(name))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAuditIndexEntries checks the entries PutAuditRecord,
// DeleteAuditRecords and DeleteWorkspace leave in the indexes, byte for
// byte: AuditRecords checks every field of the records it reads, so an
// entry left behind would only cost time, which the conformance suite
// cannot see.
func TestAuditIndexEntries(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	update := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(t.Context(), fn); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, auditIndexDump(t, s, "acme")); diff != "" {
			t.Errorf("%s: the trail's buckets (-want +got):\n%s", step, diff)
		}
	}
	rec := func(id, actorKind, actorID, action, targetKind, targetID, outcome string) store.AuditRecord {
		return store.AuditRecord{
			ID: id, ActorKind: actorKind, ActorID: actorID, Action: action,
			TargetKind: targetKind, TargetID: targetID, Outcome: outcome,
		}
	}
	a1 := rec("a1", "user", "1", "sign_in.succeeded", "user", "1", "success")
	a2 := rec("a2", "api_key", "k", "user.created", "user", "12", "success")
	a3 := rec("a3", "system", "", "sign_in.failed", "user", "", "failure")
	update(func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(store.Workspace{Slug: "acme"}),
			tx.PutAuditRecord("acme", a1), tx.PutAuditRecord("acme", a2), tx.PutAuditRecord("acme", a3))
	})
	// Keys order by their index, then by the length of their first
	// string, then its bytes.
	check("three records", []string{
		"audit: a1", "audit: a2", "audit: a3",
		"actor: user/1/a1", "actor: system//a3", "actor: api_key/k/a2",
		"target: user//a3", "target: user/1/a1", "target: user/12/a2",
		"action: user.created/a2", "action: sign_in.failed/a3", "action: sign_in.succeeded/a1",
		"outcome: failure/a3", "outcome: success/a1", "outcome: success/a2",
	})

	moved := rec("a1", "user", "1", "sign_in.failed", "user", "12", "failure")
	moved.ActorDisplay = "alice"
	update(func(tx store.Tx) error { return tx.PutAuditRecord("acme", moved) })
	check("a1 replaced: another target, action and outcome", []string{
		"audit: a1", "audit: a2", "audit: a3",
		"actor: user/1/a1", "actor: system//a3", "actor: api_key/k/a2",
		"target: user//a3", "target: user/12/a1", "target: user/12/a2",
		"action: user.created/a2", "action: sign_in.failed/a1", "action: sign_in.failed/a3",
		"outcome: failure/a1", "outcome: failure/a3", "outcome: success/a2",
	})

	update(func(tx store.Tx) error {
		n, err := tx.DeleteAuditRecords("acme", "a3", 10)
		if err == nil && n != 2 {
			t.Errorf("DeleteAuditRecords(a3) = %d, want 2", n)
		}
		return err
	})
	check("a1 and a2 removed", []string{
		"audit: a3",
		"actor: system//a3",
		"target: user//a3",
		"action: sign_in.failed/a3",
		"outcome: failure/a3",
	})

	update(func(tx store.Tx) error {
		return errors.Join(tx.DeleteWorkspace("acme"), tx.PutWorkspace(store.Workspace{Slug: "acme"}))
	})
	check("the workspace deleted and created again", nil)
}

// TestPrefixEnd checks the first key past a prefix's range.
func TestPrefixEnd(t *testing.T) {
	for _, tt := range []struct {
		prefix, want []byte
	}{
		{nil, nil},
		{[]byte{0xff, 0xff}, nil},
		{[]byte("ab"), []byte("ac")},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{0x04, 'u', 's', 'e', 'r', 0x01, '1'}, []byte{0x04, 'u', 's', 'e', 'r', 0x01, '2'}},
	} {
		if got := prefixEnd(tt.prefix); !slices.Equal(got, tt.want) {
			t.Errorf("prefixEnd(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}
