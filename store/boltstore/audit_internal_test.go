package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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
// written "audit: record id", then the fold's watermark, "folded
// through: record id", when the workspace has one, then the entries of
// audit_index, each
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
		if folded := ws.Bucket(nestedNames[bucketAuditFolded]).Get(keyAuditFolded); folded != nil {
			out = append(out, "folded through: "+string(folded))
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

// TestAuditIndexEntries checks the entries PutAuditRecord, the fold,
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
	fold := func() {
		t.Helper()
		if err := foldAudit(s.db, []byte("acme")); err != nil {
			t.Fatal(err)
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
	check("three records, not folded yet", []string{"audit: a1", "audit: a2", "audit: a3"})

	fold()
	// Keys order by their index, then by the length of their first
	// string, then its bytes.
	check("three records folded", []string{
		"audit: a1", "audit: a2", "audit: a3",
		"folded through: a3",
		"actor: user/1/a1", "actor: system//a3", "actor: api_key/k/a2",
		"target: user//a3", "target: user/1/a1", "target: user/12/a2",
		"action: user.created/a2", "action: sign_in.failed/a3", "action: sign_in.succeeded/a1",
		"outcome: failure/a3", "outcome: success/a1", "outcome: success/a2",
	})

	moved := rec("a1", "user", "1", "sign_in.failed", "user", "12", "failure")
	moved.ActorDisplay = "alice"
	a4 := rec("a4", "user", "2", "user.updated", "user", "2", "success")
	a4moved := rec("a4", "user", "2", "user.updated", "user", "3", "success")
	// a3 is the watermark itself: indexed, so replaced at once too.
	a3moved := rec("a3", "system", "", "sign_in.failed", "user", "5", "failure")
	update(func(tx store.Tx) error {
		return errors.Join(tx.PutAuditRecord("acme", moved), tx.PutAuditRecord("acme", a3moved),
			tx.PutAuditRecord("acme", a4), tx.PutAuditRecord("acme", a4moved))
	})
	check("a1 and a3 replaced at once (another target, action and outcome), a4 written twice and left to the fold", []string{
		"audit: a1", "audit: a2", "audit: a3", "audit: a4",
		"folded through: a3",
		"actor: user/1/a1", "actor: system//a3", "actor: api_key/k/a2",
		"target: user/5/a3", "target: user/12/a1", "target: user/12/a2",
		"action: user.created/a2", "action: sign_in.failed/a1", "action: sign_in.failed/a3",
		"outcome: failure/a1", "outcome: failure/a3", "outcome: success/a2",
	})

	// A record with an id at or below the watermark (one from the past)
	// is indexed with the record: the fold never goes back.
	a0 := rec("a0", "user", "9", "user.deleted", "user", "9", "success")
	update(func(tx store.Tx) error { return tx.PutAuditRecord("acme", a0) })
	fold()
	check("a0 below the watermark, a4 folded", []string{
		"audit: a0", "audit: a1", "audit: a2", "audit: a3", "audit: a4",
		"folded through: a4",
		"actor: user/1/a1", "actor: user/2/a4", "actor: user/9/a0", "actor: system//a3", "actor: api_key/k/a2",
		"target: user/3/a4", "target: user/5/a3", "target: user/9/a0", "target: user/12/a1", "target: user/12/a2",
		"action: user.created/a2", "action: user.deleted/a0", "action: user.updated/a4",
		"action: sign_in.failed/a1", "action: sign_in.failed/a3",
		"outcome: failure/a1", "outcome: failure/a3", "outcome: success/a0", "outcome: success/a2", "outcome: success/a4",
	})

	update(func(tx store.Tx) error {
		n, err := tx.DeleteAuditRecords("acme", "a3", 10)
		if err == nil && n != 3 {
			t.Errorf("DeleteAuditRecords(a3) = %d, want 3", n)
		}
		return err
	})
	check("a0, a1 and a2 removed", []string{
		"audit: a3", "audit: a4",
		"folded through: a4",
		"actor: user/2/a4", "actor: system//a3",
		"target: user/3/a4", "target: user/5/a3",
		"action: user.updated/a4", "action: sign_in.failed/a3",
		"outcome: failure/a3", "outcome: success/a4",
	})

	update(func(tx store.Tx) error {
		return errors.Join(tx.DeleteWorkspace("acme"), tx.PutWorkspace(store.Workspace{Slug: "acme"}))
	})
	check("the workspace deleted and created again", nil)
}

// TestAuditTail checks AuditRecords over records some of which are
// folded (found through audit_index) and some not (found among the
// records): every query's records come once, in order, within its
// bounds, whichever side of the watermark they lie on.
func TestAuditTail(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := func(id, actorID, action, targetID, outcome string) store.AuditRecord {
		return store.AuditRecord{ID: id, ActorKind: "user", ActorID: actorID, Action: action, TargetKind: "user", TargetID: targetID, Outcome: outcome}
	}
	put := func(recs ...store.AuditRecord) {
		t.Helper()
		err := s.Update(t.Context(), func(tx store.Tx) error {
			for _, r := range recs {
				if err := tx.PutAuditRecord("acme", r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "acme"}) }); err != nil {
		t.Fatal(err)
	}
	// b1-b4 folded, b5-b8 the tail.
	put(rec("b1", "1", "sign_in.failed", "7", "failure"), rec("b2", "2", "user.updated", "7", "success"),
		rec("b3", "1", "sign_in.succeeded", "8", "success"), rec("b4", "1", "sign_in.failed", "7", "failure"))
	if err := foldAudit(s.db, []byte("acme")); err != nil {
		t.Fatal(err)
	}
	put(rec("b5", "2", "sign_in.failed", "7", "failure"), rec("b6", "1", "user.updated", "8", "success"),
		rec("b7", "1", "sign_in.failed", "7", "failure"), rec("b8", "3", "user.deleted", "9", "success"))
	if diff := cmp.Diff([]string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "folded through: b4"}, auditDumpHead(t, s, "acme")); diff != "" {
		t.Fatalf("the records and the watermark (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		q    store.AuditQuery
		want string
	}{
		{store.AuditQuery{Limit: 100}, "b8 b7 b6 b5 b4 b3 b2 b1"},
		{store.AuditQuery{Ascending: true, Limit: 100}, "b1 b2 b3 b4 b5 b6 b7 b8"},
		{store.AuditQuery{TargetKind: "user", TargetID: "7", Limit: 100}, "b7 b5 b4 b2 b1"},
		{store.AuditQuery{TargetKind: "user", TargetID: "7", Ascending: true, Limit: 100}, "b1 b2 b4 b5 b7"},
		{store.AuditQuery{TargetKind: "user", TargetID: "7", Limit: 3}, "b7 b5 b4"},
		{store.AuditQuery{TargetKind: "user", TargetID: "7", Ascending: true, Limit: 3}, "b1 b2 b4"},
		{store.AuditQuery{ActorKind: "user", ActorID: "1", Limit: 100}, "b7 b6 b4 b3 b1"},
		{store.AuditQuery{Actions: []string{"sign_in.failed", "user.deleted"}, Limit: 100}, "b8 b7 b5 b4 b1"},
		{store.AuditQuery{Actions: []string{"user.updated"}, Ascending: true, Limit: 100}, "b2 b6"},
		{store.AuditQuery{Outcome: "success", Limit: 100}, "b8 b6 b3 b2"},
		// Bounds on either side of the watermark, and across it.
		{store.AuditQuery{Outcome: "failure", Before: "b7", Limit: 100}, "b5 b4 b1"},
		{store.AuditQuery{Outcome: "failure", Before: "b4", Limit: 100}, "b1"},
		{store.AuditQuery{Outcome: "failure", Before: "b5", After: "b1", Limit: 100}, "b4"},
		{store.AuditQuery{Outcome: "failure", After: "b4", Ascending: true, Limit: 100}, "b5 b7"},
		{store.AuditQuery{Outcome: "failure", After: "b3", Ascending: true, Limit: 100}, "b4 b5 b7"},
		{store.AuditQuery{Outcome: "failure", After: "b5", Limit: 100}, "b7"},
		{store.AuditQuery{Outcome: "failure", After: "b5", Before: "b7", Limit: 100}, ""},
		{store.AuditQuery{TargetKind: "user", TargetID: "8", After: "b2", Before: "b8", Ascending: true, Limit: 100}, "b3 b6"},
		{store.AuditQuery{ActorKind: "user", ActorID: "1", Outcome: "failure", Before: "b8", Limit: 2}, "b7 b4"},
	} {
		if g, err := auditIDs(t, s, "acme", tt.q); err != nil || g != tt.want {
			t.Errorf("AuditRecords(%+v) = %q, %v; want %q", tt.q, g, err, tt.want)
		}
	}
}

// TestAuditTailWithEntries: records above the watermark that have their
// entries already, as a release from before the fold writes them, come
// once, from the tail, whatever the query's bounds.
func TestAuditTailWithEntries(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := func(id, outcome string) store.AuditRecord {
		return store.AuditRecord{ID: id, ActorKind: "system", Action: "user.updated", TargetKind: "user", TargetID: "1", Outcome: outcome}
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(store.Workspace{Slug: "acme"}),
			tx.PutAuditRecord("acme", rec("f1", "success")), tx.PutAuditRecord("acme", rec("f2", "failure")))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := foldAudit(s.db, []byte("acme")); err != nil {
		t.Fatal(err)
	}
	// f3 and f4 written with their entries, the watermark left at f2.
	err = s.db.Update(func(btx *bbolt.Tx) error {
		sp := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte("acme"))}
		for _, r := range []store.AuditRecord{rec("f3", "success"), rec("f4", "success")} {
			for _, ix := range auditIndexes {
				if err := sp.bucket(bucketAuditIndex).Put(auditEntry(ix, &r), nil); err != nil {
					return err
				}
			}
			if err := putRecord(sp.bucket(bucketAudit), []byte(r.ID), r, encodeAudit); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q    store.AuditQuery
		want string
	}{
		{store.AuditQuery{Outcome: "success", Limit: 10}, "f4 f3 f1"},
		{store.AuditQuery{Outcome: "success", Ascending: true, Limit: 10}, "f1 f3 f4"},
		{store.AuditQuery{Outcome: "success", Before: "fz", Limit: 10}, "f4 f3 f1"},
		{store.AuditQuery{Outcome: "success", Before: "f4", Ascending: true, Limit: 10}, "f1 f3"},
		{store.AuditQuery{Outcome: "success", After: "f1", Limit: 10}, "f4 f3"},
		{store.AuditQuery{TargetKind: "user", TargetID: "1", After: "f2", Ascending: true, Limit: 10}, "f3 f4"},
	} {
		if g, err := auditIDs(t, s, "acme", tt.q); err != nil || g != tt.want {
			t.Errorf("AuditRecords(%+v) = %q, %v; want %q", tt.q, g, err, tt.want)
		}
	}
}

// TestAuditWalkBounds: a query reads no record outside its bounds and no
// index entry above the watermark. Every record AuditRecords reads is
// checked against the whole query, so a walk that started too early
// would return the same page, only slower; here the records it must not
// read are unreadable (bytes no release writes) and the entry it must not
// read names a missing record, so reading either is an error.
func TestAuditWalkBounds(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := func(id string) store.AuditRecord {
		return store.AuditRecord{ID: id, ActorKind: "system", Action: "user.updated", TargetKind: "user", TargetID: "1", Outcome: "success"}
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		errs := []error{tx.PutWorkspace(store.Workspace{Slug: "acme"}), tx.PutWorkspace(store.Workspace{Slug: "beta"})}
		for _, id := range []string{"g1", "g2", "g3", "g4", "g5", "g6"} {
			errs = append(errs, tx.PutAuditRecord("acme", rec(id)))
		}
		for _, id := range []string{"h1", "h2", "h3"} {
			errs = append(errs, tx.PutAuditRecord("beta", rec(id)))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Folded through g3, as if g4-g6 had come after the fold; then g2
	// and g5 made unreadable, and an entry above the watermark for a
	// record that does not exist.
	err = s.db.Update(func(btx *bbolt.Tx) error {
		sp := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte("acme"))}
		for _, id := range []string{"g1", "g2", "g3"} {
			r := rec(id)
			for _, ix := range auditIndexes {
				if err := sp.bucket(bucketAuditIndex).Put(auditEntry(ix, &r), nil); err != nil {
					return err
				}
			}
		}
		ghost := rec("g4a")
		beta := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte("beta"))}
		return errors.Join(sp.bucket(bucketAuditFolded).Put(keyAuditFolded, []byte("g3")),
			beta.bucket(bucketAudit).Put([]byte("h2"), []byte{0xee}),
			sp.bucket(bucketAudit).Put([]byte("g2"), []byte{0xee}),
			sp.bucket(bucketAudit).Put([]byte("g5"), []byte{0xee}),
			sp.bucket(bucketAuditIndex).Put(auditEntry(byOutcome, &ghost), nil))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q    store.AuditQuery
		want string
	}{
		{store.AuditQuery{Outcome: "success", After: "g5", Ascending: true, Limit: 10}, "g6"},
		{store.AuditQuery{Outcome: "success", After: "g5", Limit: 10}, "g6"},
		{store.AuditQuery{Outcome: "success", Before: "g2", Limit: 10}, "g1"},
		{store.AuditQuery{Outcome: "success", Before: "g2", Ascending: true, Limit: 10}, "g1"},
		{store.AuditQuery{Outcome: "success", After: "g2", Before: "g5", Ascending: true, Limit: 10}, "g3 g4"},
		{store.AuditQuery{Outcome: "success", After: "g2", Before: "g5", Limit: 10}, "g4 g3"},
		{store.AuditQuery{After: "g5", Limit: 10}, "g6"},
		{store.AuditQuery{Before: "g2", Ascending: true, Limit: 10}, "g1"},
		// beta has nothing folded: its records are all the tail.
		{store.AuditQuery{Outcome: "success", After: "h2", Ascending: true, Limit: 10}, "h3"},
		{store.AuditQuery{Outcome: "success", Before: "h2", Limit: 10}, "h1"},
	} {
		slug := "acme"
		if strings.HasPrefix(tt.want, "h") {
			slug = "beta"
		}
		if g, err := auditIDs(t, s, slug, tt.q); err != nil || g != tt.want {
			t.Errorf("AuditRecords(%+v) = %q, %v; want %q", tt.q, g, err, tt.want)
		}
	}
}

// auditIDs returns the ids of the records q selects in the workspace
// slug, space-separated, in the order AuditRecords gives them.
func auditIDs(t *testing.T, s *Store, slug string, q store.AuditQuery) (string, error) {
	t.Helper()
	var got []string
	err := s.View(t.Context(), func(tx store.Tx) error {
		recs, err := tx.AuditRecords(slug, q)
		for _, r := range recs {
			got = append(got, r.ID)
		}
		return err
	})
	return strings.Join(got, " "), err
}

// auditDumpHead returns the lines of auditIndexDump up to the watermark:
// the records' ids and the watermark.
func auditDumpHead(t *testing.T, s *Store, slug string) []string {
	t.Helper()
	var out []string
	for _, line := range auditIndexDump(t, s, slug) {
		if id, ok := strings.CutPrefix(line, "audit: "); ok {
			out = append(out, id)
			continue
		}
		if strings.HasPrefix(line, "folded through: ") {
			out = append(out, line)
		}
	}
	return out
}

// TestAuditFoldWhen checks when a workspace's tail is folded: by the
// committer once auditFoldEvery records of it have committed (records of
// a transaction rolled back count for nothing), by Close, and by Open for
// records a crash left unfolded.
func TestAuditFoldWhen(t *testing.T) {
	defer func(n int) { auditFoldEvery = n }(auditFoldEvery)
	auditFoldEvery = 3
	path := filepath.Join(t.TempDir(), "db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id string) store.AuditRecord {
		return store.AuditRecord{ID: id, ActorKind: "system", Action: "user.updated", TargetKind: "user", TargetID: "1", Outcome: "success"}
	}
	errRefused := errors.New("refused")
	put := func(slug string, ids ...string) error {
		return s.Update(t.Context(), func(tx store.Tx) error {
			for _, id := range ids {
				if err := tx.PutAuditRecord(slug, rec(id)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	check := func(step string, s *Store, slug string, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, auditDumpHead(t, s, slug)); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", step, slug, diff)
		}
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(store.Workspace{Slug: "acme"}), tx.PutWorkspace(store.Workspace{Slug: "beta"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.PutAuditRecord("acme", rec("c0")); err != nil {
			return err
		}
		return errRefused
	})
	if !errors.Is(err, errRefused) {
		t.Fatalf("the refused Update: %v", err)
	}
	if err := errors.Join(put("acme", "c1"), put("acme", "c2"), put("beta", "d1", "d2")); err != nil {
		t.Fatal(err)
	}
	check("two records each, one rolled back", s, "acme", []string{"c1", "c2"})
	check("two records each, one rolled back", s, "beta", []string{"d1", "d2"})
	// The fold runs after the commit that reached the count, before that
	// Update returns.
	if err := put("acme", "c3"); err != nil {
		t.Fatal(err)
	}
	check("the third record of acme", s, "acme", []string{"c1", "c2", "c3", "folded through: c3"})
	check("the third record of acme", s, "beta", []string{"d1", "d2"})
	// Both workspaces now have a tail for Close to fold; acme's count
	// started again at its fold.
	if err := put("acme", "c4"); err != nil {
		t.Fatal(err)
	}
	check("a record after the fold", s, "acme", []string{"c1", "c2", "c3", "c4", "folded through: c3"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A record written without its entries, as a crash would leave it
	// after the commit and before the fold.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var closed []string
	err = db.Update(func(btx *bbolt.Tx) error {
		sp := &space{b: btx.Bucket(bucketSpaces).Bucket([]byte("acme"))}
		closed = append(closed, "folded through: "+string(auditFoldedThrough(sp)))
		closed = append(closed, "folded through: "+string(auditFoldedThrough(&space{b: btx.Bucket(bucketSpaces).Bucket([]byte("beta"))})))
		return putRecord(sp.bucket(bucketAudit), []byte("c5"), rec("c5"), encodeAudit)
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"folded through: c4", "folded through: d2"}, closed); diff != "" {
		t.Errorf("the watermarks after Close (-want +got):\n%s", diff)
	}
	s, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	check("opened after a crash", s, "acme", []string{"c1", "c2", "c3", "c4", "c5", "folded through: c5"})
	var found []string
	err = s.View(t.Context(), func(tx store.Tx) error {
		// Through the index alone: the watermark is the last record.
		recs, err := tx.AuditRecords("acme", store.AuditQuery{Actions: []string{"user.updated"}, Limit: 10})
		for _, r := range recs {
			found = append(found, r.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c5", "c4", "c3", "c2", "c1"}, found); diff != "" {
		t.Errorf("AuditRecords by action after Open (-want +got):\n%s", diff)
	}
}

// TestAuditFoldNothing: a fold with no tail to fold begins no write
// transaction: Open and Close fold every workspace, and an empty commit
// still writes and syncs a page.
func TestAuditFoldNothing(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(store.Workspace{Slug: "acme"}), tx.PutWorkspace(store.Workspace{Slug: "empty"}),
			tx.PutAuditRecord("acme", store.AuditRecord{ID: "n1", ActorKind: "system", Action: "user.updated", TargetKind: "user", TargetID: "1", Outcome: "success"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	writes := func() int64 { st := s.db.Stats().TxStats; return st.GetWrite() }
	w0 := writes()
	if err := foldEveryAudit(s.db); err != nil {
		t.Fatal(err)
	}
	w1 := writes()
	if err := foldEveryAudit(s.db); err != nil {
		t.Fatal(err)
	}
	if got := []int64{min(w1-w0, 1), writes() - w1}; !slices.Equal(got, []int64{1, 0}) {
		t.Errorf("pages written by a fold with a tail (at least 1) and by one with none = %d, want [1 0]", got)
	}
}

// TestAuditFoldBatches: a tail longer than auditFoldBatch is folded in
// several transactions, each resuming after the last record the one
// before it folded.
func TestAuditFoldBatches(t *testing.T) {
	defer func(n int) { auditFoldBatch = n }(auditFoldBatch)
	auditFoldBatch = 2
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	err = s.Update(t.Context(), func(tx store.Tx) error {
		errs := []error{tx.PutWorkspace(store.Workspace{Slug: "acme"})}
		for _, id := range []string{"e1", "e2", "e3", "e4", "e5"} {
			errs = append(errs, tx.PutAuditRecord("acme", store.AuditRecord{ID: id, ActorKind: "system", Action: "user.updated", TargetKind: "user", TargetID: id, Outcome: "success"}))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for more := true; more && len(steps) < 5; {
		err := s.db.Update(func(btx *bbolt.Tx) error {
			ws := btx.Bucket(bucketSpaces).Bucket([]byte("acme"))
			var err error
			more, err = foldAuditTail(ws)
			steps = append(steps, fmt.Sprintf("%s more=%t", auditFoldedThrough(&space{b: ws}), more))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"e2 more=true", "e4 more=true", "e5 more=false"}, steps); diff != "" {
		t.Errorf("the fold's transactions (-want +got):\n%s", diff)
	}
	want := []string{
		"audit: e1", "audit: e2", "audit: e3", "audit: e4", "audit: e5",
		"folded through: e5",
		"actor: system//e1", "actor: system//e2", "actor: system//e3", "actor: system//e4", "actor: system//e5",
		"target: user/e1/e1", "target: user/e2/e2", "target: user/e3/e3", "target: user/e4/e4", "target: user/e5/e5",
		"action: user.updated/e1", "action: user.updated/e2", "action: user.updated/e3", "action: user.updated/e4", "action: user.updated/e5",
		"outcome: success/e1", "outcome: success/e2", "outcome: success/e3", "outcome: success/e4", "outcome: success/e5",
	}
	if diff := cmp.Diff(want, auditIndexDump(t, s, "acme")); diff != "" {
		t.Errorf("the trail's buckets (-want +got):\n%s", diff)
	}
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

// TestMarkAuditFolded: a workspace of a file written before the fold gets
// its last record as the watermark (every record there has its entries),
// so that Open does not fold the whole trail again; one without records
// gets none.
func TestMarkAuditFolded(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var got []string
	err = db.Update(func(btx *bbolt.Tx) error {
		for _, slug := range []string{"acme", "empty"} {
			ws, err := btx.CreateBucketIfNotExists([]byte(slug))
			if err != nil {
				return err
			}
			if err := createSpaceBuckets(ws); err != nil {
				return err
			}
			sp := &space{b: ws}
			if slug == "acme" {
				for _, id := range []string{"k1", "k3", "k2"} {
					if err := sp.bucket(bucketAudit).Put([]byte(id), []byte{1}); err != nil {
						return err
					}
				}
			}
			if err := markAuditFolded(sp); err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("%s: %q", slug, auditFoldedThrough(sp)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`acme: "k3"`, `empty: ""`}, got); diff != "" {
		t.Errorf("the watermarks (-want +got):\n%s", diff)
	}
}
