package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// auditID returns the id of the n-th record of a test: time-ordered, as
// the identity package makes them (16 hex digits of microseconds, 16 of
// anything).
func auditID(n int) string { return fmt.Sprintf("%016x%016x", 1700000000000000+n, n) }

// TestAuditRecordFields checks what the conformance suite leaves to each
// store: the fields kept as bytea (the actor's and target's ids and names,
// the request id, the changes) round-trip any bytes, NUL and invalid UTF-8
// included, and are filtered on byte for byte; times come back in UTC to
// the microsecond; empty changes come back nil; a write deferred to the
// COMMIT (in a workspace the transaction has read) and a write of its own
// store the same; a replacement replaces every field; and a value that a
// text field cannot hold is refused with an error of its own that leaves
// the transaction usable.
func TestAuditRecordFields(t *testing.T) {
	s := withWorkspace(t, nil)
	local := time.Date(2024, 5, 6, 9, 8, 9, 123456789, time.FixedZone("CEST", 2*3600))
	odd := store.AuditRecord{
		ID: auditID(1), Time: local, ActorKind: "client", ActorID: "app\x00\xff", ActorDisplay: "App \xc3(",
		Action: "client.authentication_failed", TargetKind: "client", TargetID: "\x00", TargetDisplay: "bob\x00\xfe",
		Outcome: "failure", Reason: "wrong_secret", Address: "2001:db8::1", UserAgent: "curl/8.0 ✓",
		RequestID: "req\x80\x00", Changes: []byte{0, 1, 2, 0xff, '{'},
	}
	plain := store.AuditRecord{
		ID: auditID(2), Time: t0, ActorKind: "system", Action: "retention.swept", TargetKind: "workspace",
		TargetID: "acme", Outcome: "success",
	}
	empty := plain
	empty.ID, empty.Changes = auditID(3), []byte{}
	replaced := store.AuditRecord{
		ID: auditID(4), Time: t0, ActorKind: "user", ActorID: "1", ActorDisplay: "alice", Action: "user.updated",
		TargetKind: "user", TargetID: "1", TargetDisplay: "alice", Outcome: "success", Address: "192.0.2.1",
		UserAgent: "Mozilla/5.0", RequestID: "r-1", Changes: []byte(`{"email":{"before":"a@example.com"}}`),
	}
	replacement := store.AuditRecord{
		ID: auditID(4), Time: t0.Add(time.Second), ActorKind: "api_key", ActorID: "k-1", ActorDisplay: "ci",
		Action: "user.deleted", TargetKind: "group", TargetID: "7", TargetDisplay: "eng", Outcome: "failure",
		Reason: "r", Address: "192.0.2.2", UserAgent: "Go", RequestID: "r-2", Changes: []byte(`{}`),
	}
	for _, c := range []struct {
		name string
		// read has the transaction read the workspace first, which
		// defers the write to the COMMIT.
		read    bool
		records []store.AuditRecord
	}{
		{"a write of its own", false, []store.AuditRecord{odd, empty}},
		{"deferred to the COMMIT", true, []store.AuditRecord{plain, replaced}},
		{"a replacement, deferred", true, []store.AuditRecord{replacement}},
	} {
		update(t, s, func(tx store.Tx) error {
			if c.read {
				if _, err := tx.Workspace("acme"); err != nil {
					return err
				}
			}
			for _, r := range c.records {
				if err := tx.PutAuditRecord("acme", r); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
			}
			return nil
		})
	}
	wantOdd := odd
	wantOdd.Time = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	wantEmpty := empty
	wantEmpty.Changes = nil
	for _, c := range []struct {
		name string
		q    store.AuditQuery
		want []store.AuditRecord
	}{
		{"all, oldest first", store.AuditQuery{Ascending: true, Limit: 10},
			[]store.AuditRecord{wantOdd, plain, wantEmpty, replacement}},
		{"an actor id of any bytes", store.AuditQuery{ActorKind: "client", ActorID: "app\x00\xff", Limit: 10},
			[]store.AuditRecord{wantOdd}},
		{"an actor id that is a prefix", store.AuditQuery{ActorKind: "client", ActorID: "app", Limit: 10}, nil},
		{"a target id of NUL", store.AuditQuery{TargetKind: "client", TargetID: "\x00", Limit: 10},
			[]store.AuditRecord{wantOdd}},
		{"the system's actor, with no id", store.AuditQuery{ActorKind: "system", Limit: 10},
			[]store.AuditRecord{wantEmpty, plain}},
		{"the replaced record by its new target", store.AuditQuery{TargetKind: "group", TargetID: "7", Limit: 10},
			[]store.AuditRecord{replacement}},
		{"the replaced record by its old target", store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 10}, nil},
		{"a kind text cannot hold", store.AuditQuery{ActorKind: "client\x00", ActorID: "app\x00\xff", Limit: 10}, nil},
		{"an action text cannot hold", store.AuditQuery{Actions: []string{"\xff"}, Limit: 10}, nil},
		{"an outcome text cannot hold", store.AuditQuery{Outcome: "failure\x00", Limit: 10}, nil},
	} {
		view(t, s, func(tx store.Tx) error {
			got, err := tx.AuditRecords("acme", c.q)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				return nil
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s: mismatch (-want +got):\n%s", c.name, diff)
			}
			if len(got) > 0 && got[0].Time.Location() != time.UTC {
				t.Errorf("%s: time in %v, want UTC", c.name, got[0].Time.Location())
			}
			return nil
		})
	}

	// A text field that cannot hold the value refuses it; the
	// transaction goes on and commits what follows.
	later := plain
	later.ID = auditID(5)
	var refused []error
	update(t, s, func(tx store.Tx) error {
		refused = nil
		for _, r := range []store.AuditRecord{
			{ID: auditID(6), ActorKind: "user\x00", Action: "a", TargetKind: "user", Outcome: "success"},
			{ID: auditID(7), ActorKind: "user", Action: "a\xff", TargetKind: "user", Outcome: "success"},
			{ID: "id\x00", ActorKind: "user", Action: "a", TargetKind: "user", Outcome: "success"},
			{ID: auditID(8), ActorKind: "user", Action: "a", TargetKind: "user", Outcome: "success", UserAgent: "\xff"},
		} {
			refused = append(refused, tx.PutAuditRecord("acme", r))
		}
		return tx.PutAuditRecord("acme", later)
	})
	for i, err := range refused {
		if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
			t.Errorf("refused write %d: error = %v, want a refusal of its own", i, err)
		}
	}
	view(t, s, func(tx store.Tx) error {
		got, err := tx.AuditRecords("acme", store.AuditQuery{After: auditID(4), Limit: 10})
		if diff := cmp.Diff([]store.AuditRecord{later}, got); err == nil && diff != "" {
			t.Errorf("after the refusals (-want +got):\n%s", diff)
		}
		return err
	})
}

// TestAuditUnknownWorkspace checks that every method reports a workspace
// that does not exist, or whose slug text cannot hold, as
// store.ErrNotFound, and leaves the transaction usable.
func TestAuditUnknownWorkspace(t *testing.T) {
	s := withWorkspace(t, nil)
	r := store.AuditRecord{ID: auditID(1), Time: t0, ActorKind: "system", Action: "backup", TargetKind: "workspace", Outcome: "success"}
	update(t, s, func(tx store.Tx) error {
		for _, slug := range []string{"nowhere", "acme\x00", "\xff"} {
			if err := tx.PutAuditRecord(slug, r); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("PutAuditRecord(%q): %v, want ErrNotFound", slug, err)
			}
			if _, err := tx.AuditRecords(slug, store.AuditQuery{Limit: 10}); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("AuditRecords(%q): %v, want ErrNotFound", slug, err)
			}
			if _, err := tx.AuditRecords(slug, store.AuditQuery{Actions: []string{"\xff"}, Limit: 10}); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("AuditRecords(%q) of an action text cannot hold: %v, want ErrNotFound", slug, err)
			}
			if n, err := tx.DeleteAuditRecords(slug, auditID(9), 10); n != 0 || !errors.Is(err, store.ErrNotFound) {
				t.Errorf("DeleteAuditRecords(%q): %d, %v, want ErrNotFound", slug, n, err)
			}
		}
		return tx.PutAuditRecord("acme", r)
	})
	view(t, s, func(tx store.Tx) error {
		got, err := tx.AuditRecords("acme", store.AuditQuery{Limit: 10})
		if diff := cmp.Diff([]store.AuditRecord{r}, got); err == nil && diff != "" {
			t.Errorf("the write after the refusals (-want +got):\n%s", diff)
		}
		return err
	})
}

// TestTextCeil checks the bound that replaces one text cannot hold.
func TestTextCeil(t *testing.T) {
	for _, c := range []struct {
		s    string
		want string
		ok   bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{"a\U0010FFFF", "a\U0010FFFF", true},
		{"\x00", "\x01", true},
		{"a\x00z", "a\x01", true},
		{"a\x80", "a\u0080", true},
		{"a\xc1\xbf", "a\u0080", true},
		{"a\xc3", "a\u00c0", true},
		{"a\xc3\x28", "a\u00c0", true},
		{"a\xe0\x80\x80", "a\u0800", true},
		{"a\xed\xa0\x80", "a\ue000", true},
		{"a\xf4\x8f\xbf", "a\U0010FFC0", true},
		{"a\xf4\x90\x80\x80", "b", true},
		{"a\xff", "b", true},
		{"a\U0010FFFF\xff", "b", true},
		{"\xff", "", false},
		{"\U0010FFFF\xf5", "", false},
	} {
		got, ok := pgstore.TextCeil(c.s)
		if got != c.want || ok != c.ok {
			t.Errorf("textCeil(%+q) = %+q, %t; want %+q, %t", c.s, got, ok, c.want, c.ok)
		}
	}

	// For random strings, the ceiling is a string text holds, not below
	// the string, and selects what the string selects of the strings
	// text holds.
	rng := rand.New(rand.NewPCG(3, 4))
	bytes := []byte{0x00, 0x01, 'a', 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff}
	runes := []rune{1, 'a', 0x7f, 0x80, 0xc0, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x10ffff}
	var texts []string
	for range 400 {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		texts = append(texts, b.String())
	}
	for range 4000 {
		var b []byte
		for range rng.IntN(6) {
			if rng.IntN(2) == 0 {
				b = append(b, bytes[rng.IntN(len(bytes))])
			} else {
				b = utf8.AppendRune(b, runes[rng.IntN(len(runes))])
			}
		}
		s := string(b)
		ceil, ok := pgstore.TextCeil(s)
		if ok && (!utf8.ValidString(ceil) || strings.IndexByte(ceil, 0) >= 0 || ceil < s) {
			t.Fatalf("textCeil(%+q) = %+q: not text, or below it", s, ceil)
		}
		for _, x := range texts {
			if below := x < s; below != (!ok || x < ceil) {
				t.Fatalf("textCeil(%+q) = %+q, %t: %+q < s is %t", s, ceil, ok, x, below)
			}
		}
	}
}

// TestAuditBoundsText checks that AuditRecords and DeleteAuditRecords take
// bounds that text cannot hold as the same bytes compared in Go would.
func TestAuditBoundsText(t *testing.T) {
	s := withWorkspace(t, nil)
	ids := []string{"a", "a\u0080", "a\u00c0", "a\ue000", "b", "\U0010FFFF"}
	put := func() {
		update(t, s, func(tx store.Tx) error {
			for _, id := range ids {
				r := store.AuditRecord{ID: id, Time: t0, ActorKind: "system", Action: "backup", TargetKind: "workspace", Outcome: "success"}
				if err := tx.PutAuditRecord("acme", r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	put()
	for _, c := range []struct {
		after, before string
		want          []string
	}{
		{"a\x00", "", []string{"a\u0080", "a\u00c0", "a\ue000", "b", "\U0010FFFF"}},
		{"a\xc3", "", []string{"a\u00c0", "a\ue000", "b", "\U0010FFFF"}},
		{"a\xc3\x80\x00", "b\xff", []string{"a\ue000", "b"}},
		{"", "a\xed\xa0\x80", []string{"a", "a\u0080", "a\u00c0"}},
		{"a\xff", "\xff", []string{"b", "\U0010FFFF"}},
		{"\xff", "", nil},
	} {
		view(t, s, func(tx store.Tx) error {
			recs, err := tx.AuditRecords("acme", store.AuditQuery{After: c.after, Before: c.before, Ascending: true, Limit: 10})
			var got []string
			for _, r := range recs {
				got = append(got, r.ID)
			}
			if diff := cmp.Diff(c.want, got); err == nil && diff != "" {
				t.Errorf("after %+q, before %+q (-want +got):\n%s", c.after, c.before, diff)
			}
			return err
		})
	}
	for _, c := range []struct {
		before string
		want   int
	}{{"a\x00", 1}, {"a\xc3", 2}, {"a\xff", 4}, {"\xff", 6}} {
		var n int
		update(t, s, func(tx store.Tx) (err error) { n, err = tx.DeleteAuditRecords("acme", c.before, 10); return err })
		if n != c.want {
			t.Errorf("DeleteAuditRecords before %+q removed %d, want %d", c.before, n, c.want)
		}
		put()
	}
}

// TestUpgradeToAuditTrail brings a schema of migration 0012 holding a
// workspace up to date with Open, and checks the audit trail's table and
// indexes as migration 0013 makes them, that the workspace keeps records,
// and that deleting it deletes them.
func TestUpgradeToAuditTrail(t *testing.T) {
	url := pgtest.URL(t)
	conn := connect(t, url)
	if _, err := pgstore.Migrate(t.Context(), conn, migrationsUpTo(t, 12)); err != nil {
		t.Fatalf("Migrate to migration 0012: %v", err)
	}
	if _, err := conn.Exec(t.Context(), "INSERT INTO workspaces (slug, created_at, settings) VALUES ('acme', $1, '')", t0); err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })

	indexes, err := pgx.CollectRows(must(conn.Query(t.Context(), `SELECT replace(indexdef, current_schema() || '.', '')
		FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'audit_records' ORDER BY indexname`)),
		pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{
		"CREATE INDEX audit_records_action ON audit_records USING btree (workspace, action, id)",
		"CREATE INDEX audit_records_actor ON audit_records USING btree (workspace, actor_kind, actor_id, id)",
		"CREATE INDEX audit_records_outcome ON audit_records USING btree (workspace, outcome, id)",
		"CREATE UNIQUE INDEX audit_records_pkey ON audit_records USING btree (workspace, id)",
		"CREATE INDEX audit_records_target ON audit_records USING btree (workspace, target_kind, target_id, id)",
	}, indexes); diff != "" {
		t.Errorf("indexes of audit_records (-want +got):\n%s", diff)
	}
	var collation string
	if err := conn.QueryRow(t.Context(), `SELECT collation_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'audit_records' AND column_name = 'id'`).Scan(&collation); err != nil {
		t.Fatal(err)
	}
	if collation != "C" {
		t.Errorf("audit_records.id has collation %q, want C", collation)
	}

	r := store.AuditRecord{ID: auditID(1), Time: t0, ActorKind: "system", Action: "backup", TargetKind: "workspace", TargetID: "acme", Outcome: "success"}
	update(t, s, func(tx store.Tx) error { return tx.PutAuditRecord("acme", r) })
	view(t, s, func(tx store.Tx) error {
		got, err := tx.AuditRecords("acme", store.AuditQuery{Limit: 10})
		if diff := cmp.Diff([]store.AuditRecord{r}, got); err == nil && diff != "" {
			t.Errorf("AuditRecords after the upgrade (-want +got):\n%s", diff)
		}
		return err
	})
	update(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace("acme") })
	var left int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM audit_records").Scan(&left); err != nil || left != 0 {
		t.Errorf("audit_records after DeleteWorkspace: %d rows, %v; want none", left, err)
	}
}

// auditFillSQL writes n records into workspace $1 (which must exist),
// ids auditID(1) to auditID(n): actors are users 0-999 but every tenth
// record an API key and the next the system; actions cycle through
// action.0 to action.39, but every 20,000th is "rare"; targets are users
// 0-9999; one in 20 fails.
const auditFillSQL = `INSERT INTO audit_records (workspace, id, time, actor_kind, actor_id, actor_display, action,
	target_kind, target_id, target_display, outcome, reason, address, user_agent, request_id, changes)
SELECT $1, lpad(to_hex(1700000000000000 + g), 16, '0') || lpad(to_hex(g), 16, '0'), now(),
	CASE g % 10 WHEN 0 THEN 'api_key' WHEN 1 THEN 'system' ELSE 'user' END,
	CASE g % 10 WHEN 0 THEN convert_to('key-' || g % 5, 'UTF8') WHEN 1 THEN '' ELSE convert_to((g % 1000)::text, 'UTF8') END,
	'', CASE WHEN g % 20000 = 7 THEN 'rare' ELSE 'action.' || g % 40 END,
	'user', convert_to((g % 10000)::text, 'UTF8'), '', CASE WHEN g % 20 = 0 THEN 'failure' ELSE 'success' END,
	'', '192.0.2.1', 'Mozilla/5.0', '', '{}'
FROM generate_series(1, $2::int) g`

// fillAudit writes the records of auditFillSQL, counts[slug] of them,
// into each workspace slug (which must exist) of the schema of conn, and
// analyzes the table. The indexes by filter are built after the rows are
// written, from their definitions as the migration made them: a few
// times faster than entry by entry.
func fillAudit(tb testing.TB, conn *pgx.Conn, counts map[string]int) {
	tb.Helper()
	ctx := context.Background()
	defs, err := pgx.CollectRows(must(conn.Query(ctx, `SELECT indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'audit_records' AND indexname <> 'audit_records_pkey'`)),
		pgx.RowTo[string])
	if err != nil || len(defs) != 4 {
		tb.Fatalf("indexes of audit_records: %q, %v", defs, err)
	}
	if _, err := conn.Exec(ctx, "DROP INDEX audit_records_actor, audit_records_target, audit_records_action, audit_records_outcome"); err != nil {
		tb.Fatal(err)
	}
	for slug, n := range counts {
		if _, err := conn.Exec(ctx, auditFillSQL, slug, n); err != nil {
			tb.Fatal(err)
		}
	}
	for _, sql := range append(defs, "ANALYZE audit_records") {
		if _, err := conn.Exec(ctx, sql); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestAuditPagesUseTheirIndex checks on a trail of 200,000 records (and
// another workspace's 50,000) that each filter's page reads its own
// index in id order and stops at the page's end: no sort, no row read
// and thrown away, no more rows than the page holds from each index
// scan, with the plan PostgreSQL makes for the arguments (custom) and
// the one it makes for any (generic, which the plan cache may settle
// on), as EXPLAIN ANALYZE reports them.
func TestAuditPagesUseTheirIndex(t *testing.T) {
	url := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0}); err != nil {
			return err
		}
		return tx.PutWorkspace(store.Workspace{Slug: "beta", CreatedAt: t0})
	})
	conn := connect(t, url)
	fillAudit(t, conn, map[string]int{"acme": 200000, "beta": 50000})

	const limit = 10
	for _, c := range []struct {
		name    string
		q       store.AuditQuery
		indexes []string
		rows    int
	}{
		{"everything, newest first", store.AuditQuery{}, []string{"audit_records_pkey"}, limit},
		{"everything, oldest first", store.AuditQuery{Ascending: true}, []string{"audit_records_pkey"}, limit},
		{"a window", store.AuditQuery{After: auditID(1000), Before: auditID(1100)}, []string{"audit_records_pkey"}, limit},
		{"an actor", store.AuditQuery{ActorKind: "user", ActorID: "42"}, []string{"audit_records_actor"}, limit},
		{"the system", store.AuditQuery{ActorKind: "system", Ascending: true}, []string{"audit_records_actor"}, limit},
		{"an actor, a page on", store.AuditQuery{ActorKind: "user", ActorID: "42", Before: auditID(150042)},
			[]string{"audit_records_actor"}, limit},
		{"a target", store.AuditQuery{TargetKind: "user", TargetID: "42"}, []string{"audit_records_target"}, limit},
		{"a target, oldest first after", store.AuditQuery{TargetKind: "user", TargetID: "42", After: auditID(50042), Ascending: true},
			[]string{"audit_records_target"}, limit},
		{"an action", store.AuditQuery{Actions: []string{"action.3"}}, []string{"audit_records_action"}, limit},
		{"a rare action", store.AuditQuery{Actions: []string{"rare"}, Before: auditID(100000)}, []string{"audit_records_action"}, 5},
		{"failures", store.AuditQuery{Outcome: "failure"}, []string{"audit_records_outcome"}, limit},
		{"three actions", store.AuditQuery{Actions: []string{"action.3", "rare", "action.7"}},
			[]string{"audit_records_action", "audit_records_action", "audit_records_action"}, limit},
		{"two actions, oldest first, one twice", store.AuditQuery{Actions: []string{"action.3", "action.7", "action.3"}, Ascending: true},
			[]string{"audit_records_action", "audit_records_action"}, limit},
	} {
		q := c.q
		q.Limit = limit
		sql, args, ok := pgstore.AuditPageSQL("acme", q)
		if !ok {
			t.Fatalf("%s: no statement", c.name)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			plan := explainAudit(t, conn, mode, sql, args)
			var indexes []string
			var walk func(n map[string]any)
			walk = func(n map[string]any) {
				switch typ, _ := n["Node Type"].(string); {
				case typ == "Sort" || typ == "Incremental Sort" || typ == "Seq Scan" || typ == "Bitmap Heap Scan":
					t.Errorf("%s, %s: a %s in the plan", c.name, mode, typ)
				case strings.HasPrefix(typ, "Index"):
					indexes = append(indexes, n["Index Name"].(string))
					scanned := int(n["Actual Rows"].(float64) * n["Actual Loops"].(float64))
					if scanned > limit {
						t.Errorf("%s, %s: %s read %d rows, more than the page", c.name, mode, n["Index Name"], scanned)
					}
					if removed, _ := n["Rows Removed by Filter"].(float64); removed > 0 {
						t.Errorf("%s, %s: %s read %v rows and threw them away", c.name, mode, n["Index Name"], removed)
					}
				}
				subs, _ := n["Plans"].([]any)
				for _, sub := range subs {
					walk(sub.(map[string]any))
				}
			}
			walk(plan)
			if diff := cmp.Diff(c.indexes, indexes); diff != "" {
				t.Errorf("%s, %s: indexes read (-want +got):\n%s", c.name, mode, diff)
			}
			if rows := int(plan["Actual Rows"].(float64)); rows != c.rows {
				t.Errorf("%s, %s: %d records, want %d", c.name, mode, rows, c.rows)
			}
		}
	}
}

// explainAudit runs EXPLAIN ANALYZE of sql, prepared, with args, in plan
// cache mode mode, and returns the top node of the plan.
func explainAudit(t *testing.T, conn *pgx.Conn, mode, sql string, args []any) map[string]any {
	t.Helper()
	ctx := t.Context()
	simple := pgx.QueryExecModeSimpleProtocol
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode, simple); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "PREPARE page AS "+sql, simple); err != nil {
		t.Fatalf("PREPARE %s: %v", sql, err)
	}
	defer func() {
		if _, err := conn.Exec(ctx, "DEALLOCATE page", simple); err != nil {
			t.Fatal(err)
		}
	}()
	params := make([]string, len(args))
	for i := range args {
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	var out string
	err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE page("+strings.Join(params, ", ")+")",
		append([]any{simple}, args...)...).Scan(&out)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", sql, err)
	}
	var plans []struct {
		Plan map[string]any
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN's output %s: %v", out, err)
	}
	return plans[0].Plan
}

// TestAuditAppendsSideBySide runs transactions that each append to one
// workspace's trail, all open at once (each waits for the others to have
// written before it commits), with no retries allowed: none fails to
// serialize and none waits for another's lock, whether its write is the
// first statement of its transaction or deferred to its COMMIT after a
// read of the workspace.
func TestAuditAppendsSideBySide(t *testing.T) {
	const writers, rounds = 8, 5
	s := pgtest.Open(t, &pgstore.Options{MaxConns: writers, MaxAttempts: 1, QueueWait: -1})
	update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0}) })
	n := 0
	for _, readFirst := range []bool{false, true} {
		for range rounds {
			var wrote sync.WaitGroup
			wrote.Add(writers)
			allWrote := make(chan struct{})
			go func() { wrote.Wait(); close(allWrote) }()
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				n++
				r := store.AuditRecord{
					ID: auditID(n), Time: t0, ActorKind: "user", ActorID: fmt.Sprint(i), Action: "user.updated",
					TargetKind: "user", TargetID: fmt.Sprint(i), Outcome: "success",
				}
				wg.Go(func() {
					errs[i] = s.Update(context.Background(), func(tx store.Tx) error {
						err := func() error {
							if readFirst {
								if _, err := tx.Workspace("acme"); err != nil {
									return err
								}
							}
							return tx.PutAuditRecord("acme", r)
						}()
						wrote.Done()
						select {
						case <-allWrote:
						case <-time.After(2 * time.Minute): // a bound on a wait that should not happen, not on speed
							return errors.New("the other appends did not write: one waits for another")
						}
						return err
					})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("read first %t, writer %d: %v", readFirst, i, err)
				}
			}
		}
	}
	if st := s.Stats(); st.Retries != 0 || st.Commits != uint64(1+n) {
		t.Errorf("stats %+v: want %d commits and no retries", st, 1+n)
	}
	view(t, s, func(tx store.Tx) error {
		recs, err := tx.AuditRecords("acme", store.AuditQuery{Limit: 1000})
		if err == nil && len(recs) != n {
			t.Errorf("%d records, want %d", len(recs), n)
		}
		return err
	})
}
