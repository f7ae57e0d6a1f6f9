package storetest

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// auditTime returns the time half of the ids of the records written at
// at(n): 16 hex digits of its unix microseconds, as the identity package
// makes them. A bound of that form stands for a time: every id of the
// records written at or after it is above it.
func auditTime(n int) string { return fmt.Sprintf("%016x", at(n).UnixMicro()) }

// auditID returns the id of record n of the suite: 32 hex digits, time
// first, so that ids order as n does; the rest is the random half.
func auditID(n int) string {
	return auditTime(n) + fmt.Sprintf("%016x", uint64(n)*0x9e3779b97f4a7c15)
}

// auditIDs returns the ids of the records n.
func auditIDs(ns ...int) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = auditID(n)
	}
	return ids
}

// idsOf returns the ids of records, in their order.
func idsOf(recs []store.AuditRecord) []string {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return ids
}

// party is an actor or a target of a record: kind, id, display.
type party struct{ kind, id, display string }

// auditRecord returns record n with every field set. Its Changes, which
// a store keeps as opaque bytes, are JSON with the spacing and key order
// a store must not normalize, or, every third record, bytes that are not
// JSON at all; a fifth of the records have none.
func auditRecord(n int, actor party, action string, target party, outcome, reason string) store.AuditRecord {
	var changes []byte
	switch {
	case n%5 == 0:
	case n%3 == 0:
		changes = []byte{0x00, 0xff, '{', 0xfe, byte(n)}
	default:
		changes = []byte(fmt.Sprintf(`{"fullName":{"after":"Record %d"} , "age":  %d}`, n, n))
	}
	return store.AuditRecord{
		ID:            auditID(n),
		Time:          at(n),
		ActorKind:     actor.kind,
		ActorID:       actor.id,
		ActorDisplay:  actor.display,
		Action:        action,
		TargetKind:    target.kind,
		TargetID:      target.id,
		TargetDisplay: target.display,
		Outcome:       outcome,
		Reason:        reason,
		Address:       fmt.Sprintf("192.0.2.%d", n),
		UserAgent:     fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) probe/%d é", n),
		RequestID:     fmt.Sprintf("req-%d", n),
		Changes:       changes,
	}
}

// The actors and targets of the suite's records. User 1 and user 12
// share a prefix, so does the unknown user of a failed sign-in (id "")
// with every user, and the queries look for key-1 under another kind
// too.
var (
	pAlice   = party{"user", "1", "alice"}
	pBob     = party{"user", "2", "bob"}
	pCarol   = party{"user", "12", "carol"}
	pMallory = party{"user", "", "mallory"}
	pKey     = party{"api_key", "key-1", "deploy key"}
	pSystem  = party{"system", "", ""}
	pAcme    = party{"workspace", "acme", "acme"}
	pGlobex  = party{"workspace", "globex", "globex"}
	pRole7   = party{"role", "7", "auditors"}
)

// auditTrail returns records 1 to 12 of workspace acme, in the order
// written (by id):
//
//	n   actor          action              target        outcome
//	1   alice          sign_in.succeeded   alice         success
//	2   api key-1      user.created        bob           success
//	3   bob            sign_in.failed      bob           failure
//	4   system         retention.swept     acme          success
//	5   api key-1      user.updated        alice         success
//	6   alice          password.changed    alice         failure
//	7   api key-1      role.created        role 7        success
//	8   system         sign_in.failed      user ""       failure
//	9   alice          sign_in.succeeded   alice         success
//	10  api key-1      user.updated        bob           success
//	11  carol          sign_in.succeeded   carol         success
//	12  api key-1      user.disabled       alice         success
func auditTrail() []store.AuditRecord {
	return []store.AuditRecord{
		auditRecord(1, pAlice, "sign_in.succeeded", pAlice, "success", ""),
		auditRecord(2, pKey, "user.created", pBob, "success", ""),
		auditRecord(3, pBob, "sign_in.failed", pBob, "failure", "wrong_password"),
		auditRecord(4, pSystem, "retention.swept", pAcme, "success", ""),
		auditRecord(5, pKey, "user.updated", pAlice, "success", ""),
		auditRecord(6, pAlice, "password.changed", pAlice, "failure", "wrong_password"),
		auditRecord(7, pKey, "role.created", pRole7, "success", ""),
		auditRecord(8, pSystem, "sign_in.failed", pMallory, "failure", "unknown_user"),
		auditRecord(9, pAlice, "sign_in.succeeded", pAlice, "success", ""),
		auditRecord(10, pKey, "user.updated", pBob, "success", ""),
		auditRecord(11, pCarol, "sign_in.succeeded", pCarol, "success", ""),
		auditRecord(12, pKey, "user.disabled", pAlice, "success", ""),
	}
}

// otherTrail returns the records of workspace globex: ids 2, 5 and 9 as
// in acme's trail, with other fields, and 13, which acme lacks.
func otherTrail() []store.AuditRecord {
	zed := party{"user", "1", "zed"}
	return []store.AuditRecord{
		auditRecord(2, pSystem, "retention.swept", pGlobex, "success", ""),
		auditRecord(5, zed, "sign_in.failed", zed, "failure", "wrong_password"),
		auditRecord(9, zed, "sign_in.failed", zed, "failure", "locked"),
		auditRecord(13, pKey, "user.updated", zed, "success", ""),
	}
}

// putAudit writes the records into the workspace in one transaction.
func putAudit(t *testing.T, s store.Store, slug string, recs ...store.AuditRecord) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, r := range recs {
			if err := tx.PutAuditRecord(slug, r); err != nil {
				return fmt.Errorf("PutAuditRecord(%q, %s): %w", slug, r.ID, err)
			}
		}
		return nil
	})
}

// auditStore returns a fresh store whose workspaces acme and globex hold
// auditTrail and otherTrail.
func auditStore(t *testing.T, newStore func(t *testing.T) store.Store) store.Store {
	t.Helper()
	s := newStoreWith(t, newStore, slugA, slugB)
	putAudit(t, s, slugA, auditTrail()...)
	putAudit(t, s, slugB, otherTrail()...)
	return s
}

// readAudit returns AuditRecords' answer in a View of its own, failing
// the test on an error.
func readAudit(t *testing.T, s store.Store, slug string, q store.AuditQuery) []store.AuditRecord {
	t.Helper()
	var got []store.AuditRecord
	view(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.AuditRecords(slug, q)
		if err != nil {
			return fmt.Errorf("AuditRecords(%q, %+v): %w", slug, q, err)
		}
		return nil
	})
	return got
}

// checkAuditIDs checks that q selects the records with the ids want, in
// that order.
func checkAuditIDs(t *testing.T, s store.Store, slug string, q store.AuditQuery, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, idsOf(readAudit(t, s, slug, q)), equateEmpty); diff != "" {
		t.Errorf("AuditRecords(%q, %+v) ids (-want +got):\n%s", slug, q, diff)
	}
}

// deleteAudit runs DeleteAuditRecords in an Update of its own and returns
// how many it removed.
func deleteAudit(t *testing.T, s store.Store, slug, beforeID string, limit int) int {
	t.Helper()
	var n int
	update(t, s, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteAuditRecords(slug, beforeID, limit)
		return err
	})
	return n
}

// all is the query of every record of a workspace.
var auditAll = store.AuditQuery{Limit: 1000}

// testAudit checks PutAuditRecord, AuditRecords and DeleteAuditRecords.
func testAudit(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := auditStore(t, newStore)
		trail := auditTrail()
		want := slices.Clone(trail)
		slices.Reverse(want)
		if diff := cmp.Diff(want, readAudit(t, s, slugA, auditAll), equateEmpty); diff != "" {
			t.Errorf("AuditRecords(%q) mismatch (-want +got):\n%s", slugA, diff)
		}
		// Records 3 and 4 as written, field by field: one with binary
		// Changes, one with none.
		wantThree := store.AuditRecord{
			ID: auditID(3), Time: at(3),
			ActorKind: "user", ActorID: "2", ActorDisplay: "bob",
			Action:     "sign_in.failed",
			TargetKind: "user", TargetID: "2", TargetDisplay: "bob",
			Outcome: "failure", Reason: "wrong_password",
			Address: "192.0.2.3", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) probe/3 é", RequestID: "req-3",
			Changes: []byte{0x00, 0xff, '{', 0xfe, 3},
		}
		wantFive := store.AuditRecord{
			ID: auditID(5), Time: at(5),
			ActorKind: "api_key", ActorID: "key-1", ActorDisplay: "deploy key",
			Action:     "user.updated",
			TargetKind: "user", TargetID: "1", TargetDisplay: "alice",
			Outcome: "success",
			Address: "192.0.2.5", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) probe/5 é", RequestID: "req-5",
		}
		wantSeven := []byte(`{"fullName":{"after":"Record 7"} , "age":  7}`)
		got := readAudit(t, s, slugA, store.AuditQuery{After: auditID(2), Before: auditID(8), Ascending: true, Limit: 10})
		if len(got) != 5 {
			t.Fatalf("AuditRecords(3..7) = %d records, want 5", len(got))
		}
		if diff := cmp.Diff(wantThree, got[0]); diff != "" {
			t.Errorf("record 3 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantFive, got[2], equateEmpty); diff != "" {
			t.Errorf("record 5 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantSeven, got[4].Changes); diff != "" {
			t.Errorf("record 7's Changes, bytes as written (-want +got):\n%s", diff)
		}
		// The same ids in globex are globex's records.
		other := otherTrail()
		wantOther := []store.AuditRecord{other[3], other[2], other[1], other[0]}
		if diff := cmp.Diff(wantOther, readAudit(t, s, slugB, auditAll), equateEmpty); diff != "" {
			t.Errorf("AuditRecords(%q) mismatch (-want +got):\n%s", slugB, diff)
		}
	})

	t.Run("Queries", func(t *testing.T) {
		s := auditStore(t, newStore)
		tests := []struct {
			name string
			q    store.AuditQuery
			want []string
		}{
			{"everything", auditAll, auditIDs(12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)},
			{"ascending", store.AuditQuery{Ascending: true, Limit: 100}, auditIDs(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)},

			{"target alice", store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 100}, auditIDs(12, 9, 6, 5, 1)},
			{"target carol (user 12)", store.AuditQuery{TargetKind: "user", TargetID: "12", Limit: 100}, auditIDs(11)},
			{"target the unknown user", store.AuditQuery{TargetKind: "user", TargetID: "", Limit: 100}, auditIDs(8)},
			{"target bob", store.AuditQuery{TargetKind: "user", TargetID: "2", Limit: 100}, auditIDs(10, 3, 2)},
			{"target role 7", store.AuditQuery{TargetKind: "role", TargetID: "7", Limit: 100}, auditIDs(7)},
			{"target of another kind with the id", store.AuditQuery{TargetKind: "group", TargetID: "1", Limit: 100}, nil},
			{"target nobody", store.AuditQuery{TargetKind: "user", TargetID: "99", Limit: 100}, nil},

			{"actor alice", store.AuditQuery{ActorKind: "user", ActorID: "1", Limit: 100}, auditIDs(9, 6, 1)},
			{"actor carol (user 12)", store.AuditQuery{ActorKind: "user", ActorID: "12", Limit: 100}, auditIDs(11)},
			{"actor the system", store.AuditQuery{ActorKind: "system", ActorID: "", Limit: 100}, auditIDs(8, 4)},
			{"actor key-1", store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(12, 10, 7, 5, 2)},
			{"actor key-1 of another kind", store.AuditQuery{ActorKind: "user", ActorID: "key-1", Limit: 100}, nil},

			{"one action", store.AuditQuery{Actions: []string{"sign_in.succeeded"}, Limit: 100}, auditIDs(11, 9, 1)},
			{"three actions, merged", store.AuditQuery{Actions: []string{"sign_in.failed", "user.updated", "sign_in.succeeded"}, Limit: 100},
				auditIDs(11, 10, 9, 8, 5, 3, 1)},
			{"three actions, merged, ascending", store.AuditQuery{Actions: []string{"user.updated", "sign_in.succeeded", "user.disabled"}, Ascending: true, Limit: 100},
				auditIDs(1, 5, 9, 10, 11, 12)},
			{"an action twice", store.AuditQuery{Actions: []string{"user.updated", "user.updated"}, Limit: 100}, auditIDs(10, 5)},
			{"an action and one without records", store.AuditQuery{Actions: []string{"no.such.action", "role.created"}, Limit: 100}, auditIDs(7)},
			{"an unknown action", store.AuditQuery{Actions: []string{"no.such.action"}, Limit: 100}, nil},
			{"the start of an action's name", store.AuditQuery{Actions: []string{"sign_in"}, Limit: 100}, nil},

			{"failures", store.AuditQuery{Outcome: "failure", Limit: 100}, auditIDs(8, 6, 3)},
			{"successes", store.AuditQuery{Outcome: "success", Limit: 100}, auditIDs(12, 11, 10, 9, 7, 5, 4, 2, 1)},
			{"the start of an outcome", store.AuditQuery{Outcome: "fail", Limit: 100}, nil},

			{"target and actor", store.AuditQuery{TargetKind: "user", TargetID: "1", ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(12, 5)},
			{"target and outcome", store.AuditQuery{TargetKind: "user", TargetID: "1", Outcome: "failure", Limit: 100}, auditIDs(6)},
			{"target and actions", store.AuditQuery{TargetKind: "user", TargetID: "1", Actions: []string{"sign_in.succeeded", "user.disabled"}, Limit: 100},
				auditIDs(12, 9, 1)},
			{"all four", store.AuditQuery{
				TargetKind: "user", TargetID: "2", ActorKind: "user", ActorID: "2",
				Actions: []string{"sign_in.failed", "sign_in.succeeded"}, Outcome: "failure", Limit: 100,
			}, auditIDs(3)},
			{"all four, one not matching", store.AuditQuery{
				TargetKind: "user", TargetID: "2", ActorKind: "user", ActorID: "2",
				Actions: []string{"sign_in.failed"}, Outcome: "success", Limit: 100,
			}, nil},
			{"actor and actions", store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Actions: []string{"user.updated", "user.disabled"}, Limit: 100},
				auditIDs(12, 10, 5)},
			{"actor and outcome", store.AuditQuery{ActorKind: "user", ActorID: "1", Outcome: "success", Limit: 100}, auditIDs(9, 1)},
			{"actions and outcome", store.AuditQuery{Actions: []string{"sign_in.succeeded", "sign_in.failed"}, Outcome: "failure", Limit: 100},
				auditIDs(8, 3)},

			{"between two ids", store.AuditQuery{After: auditID(3), Before: auditID(9), Limit: 100}, auditIDs(8, 7, 6, 5, 4)},
			{"between two ids, ascending", store.AuditQuery{After: auditID(3), Before: auditID(9), Ascending: true, Limit: 100}, auditIDs(4, 5, 6, 7, 8)},
			{"after the last", store.AuditQuery{After: auditID(12), Limit: 100}, nil},
			{"before the first", store.AuditQuery{Before: auditID(1), Ascending: true, Limit: 100}, nil},
			{"between neighbours", store.AuditQuery{After: auditID(4), Before: auditID(5), Limit: 100}, nil},
			{"after a time", store.AuditQuery{After: auditTime(9), Limit: 100}, auditIDs(12, 11, 10, 9)},
			{"before a time", store.AuditQuery{Before: auditTime(5), Limit: 100}, auditIDs(4, 3, 2, 1)},
			{"target, between ids", store.AuditQuery{TargetKind: "user", TargetID: "1", After: auditID(1), Before: auditID(12), Limit: 100},
				auditIDs(9, 6, 5)},
			{"target, after an id, ascending", store.AuditQuery{TargetKind: "user", TargetID: "1", After: auditID(5), Ascending: true, Limit: 100},
				auditIDs(6, 9, 12)},
			{"actor, before a time", store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Before: auditTime(10), Limit: 100}, auditIDs(7, 5, 2)},
			{"outcome, after an id, ascending", store.AuditQuery{Outcome: "failure", After: auditID(3), Ascending: true, Limit: 100}, auditIDs(6, 8)},
			{"actions, between ids, ascending, limit", store.AuditQuery{
				Actions: []string{"sign_in.succeeded", "sign_in.failed"}, After: auditID(1), Before: auditID(11), Ascending: true, Limit: 3,
			}, auditIDs(3, 8, 9)},
			{"actions, before an id, limit", store.AuditQuery{Actions: []string{"sign_in.succeeded", "sign_in.failed"}, Before: auditID(11), Limit: 2},
				auditIDs(9, 8)},

			{"limit", store.AuditQuery{Limit: 3}, auditIDs(12, 11, 10)},
			{"limit, ascending", store.AuditQuery{Ascending: true, Limit: 3}, auditIDs(1, 2, 3)},
			{"limit, target", store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 2}, auditIDs(12, 9)},
			{"limit, actions, ascending", store.AuditQuery{Actions: []string{"user.updated", "sign_in.succeeded", "user.disabled"}, Ascending: true, Limit: 4},
				auditIDs(1, 5, 9, 10)},
			{"limit 0", store.AuditQuery{}, nil},
			{"negative limit", store.AuditQuery{Limit: -1}, nil},
			{"limit 0, target", store.AuditQuery{TargetKind: "user", TargetID: "1"}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { checkAuditIDs(t, s, slugA, tt.q, tt.want) })
		}
		// globex's own records through each index.
		checkAuditIDs(t, s, slugB, auditAll, auditIDs(13, 9, 5, 2))
		checkAuditIDs(t, s, slugB, store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 100}, auditIDs(13, 9, 5))
		checkAuditIDs(t, s, slugB, store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(13))
		checkAuditIDs(t, s, slugB, store.AuditQuery{Actions: []string{"sign_in.failed", "sign_in.succeeded"}, Limit: 100}, auditIDs(9, 5))
		checkAuditIDs(t, s, slugB, store.AuditQuery{Outcome: "success", Limit: 100}, auditIDs(13, 2))
	})

	t.Run("RecordsThroughIndexes", func(t *testing.T) {
		// A record read through an index is the record, every field.
		s := auditStore(t, newStore)
		trail := auditTrail()
		for _, q := range []store.AuditQuery{
			{TargetKind: "user", TargetID: "2", Limit: 100},
			{ActorKind: "user", ActorID: "2", Limit: 100},
			{Actions: []string{"sign_in.failed", "user.created"}, Limit: 100},
			{Outcome: "failure", Limit: 100},
		} {
			want := map[string]store.AuditRecord{}
			for _, r := range readAudit(t, s, slugA, q) {
				want[r.ID] = r
			}
			for _, r := range trail {
				if got, ok := want[r.ID]; ok {
					if diff := cmp.Diff(r, got, equateEmpty); diff != "" {
						t.Errorf("AuditRecords(%+v): record %s (-want +got):\n%s", q, r.ID, diff)
					}
				}
			}
		}
	})

	t.Run("Paging", func(t *testing.T) {
		s := auditStore(t, newStore)
		for _, tt := range []struct {
			name  string
			q     store.AuditQuery
			pages [][]string
		}{
			{"newest first", store.AuditQuery{Limit: 5}, [][]string{auditIDs(12, 11, 10, 9, 8), auditIDs(7, 6, 5, 4, 3), auditIDs(2, 1)}},
			{"oldest first", store.AuditQuery{Ascending: true, Limit: 5}, [][]string{auditIDs(1, 2, 3, 4, 5), auditIDs(6, 7, 8, 9, 10), auditIDs(11, 12)}},
			{"target, newest first", store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 2},
				[][]string{auditIDs(12, 9), auditIDs(6, 5), auditIDs(1)}},
			{"actions, newest first", store.AuditQuery{Actions: []string{"user.updated", "sign_in.failed", "user.created"}, Limit: 2},
				[][]string{auditIDs(10, 8), auditIDs(5, 3), auditIDs(2)}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				q := tt.q
				var pages [][]string
				for range 10 {
					page := idsOf(readAudit(t, s, slugA, q))
					pages = append(pages, page)
					if len(page) < q.Limit {
						break
					}
					if q.Ascending {
						q.After = page[len(page)-1]
					} else {
						q.Before = page[len(page)-1]
					}
				}
				if diff := cmp.Diff(tt.pages, pages); diff != "" {
					t.Errorf("pages (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("Replace", func(t *testing.T) {
		s := auditStore(t, newStore)
		// Record 5 (key-1 updated alice, success) now says bob failed to
		// update role 7.
		moved := auditRecord(5, pBob, "role.updated", party{"role", "7", "auditors, renamed"}, "failure", "conflict")
		moved.Changes = []byte(`{"name":{"before":"auditors","after":"auditors, renamed"}}`)
		// Record 9 (alice signed in) loses alice's name and request, as
		// erasure rewrites it: the same actor, target, action and outcome.
		erased := auditTrail()[8]
		erased.ActorDisplay, erased.TargetDisplay, erased.Address, erased.UserAgent = "erased-0123456789ab", "erased-0123456789ab", "", ""
		putAudit(t, s, slugA, moved, erased)

		for _, tt := range []struct {
			name string
			q    store.AuditQuery
			want []string
		}{
			{"everything, once each", auditAll, auditIDs(12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)},
			{"the old target", store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 100}, auditIDs(12, 9, 6, 1)},
			{"the new target", store.AuditQuery{TargetKind: "role", TargetID: "7", Limit: 100}, auditIDs(7, 5)},
			{"the old actor", store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(12, 10, 7, 2)},
			{"the new actor", store.AuditQuery{ActorKind: "user", ActorID: "2", Limit: 100}, auditIDs(5, 3)},
			{"the old action", store.AuditQuery{Actions: []string{"user.updated"}, Limit: 100}, auditIDs(10)},
			{"the new action", store.AuditQuery{Actions: []string{"role.updated"}, Limit: 100}, auditIDs(5)},
			{"the old outcome", store.AuditQuery{Outcome: "success", Limit: 100}, auditIDs(12, 11, 10, 9, 7, 4, 2, 1)},
			{"the new outcome", store.AuditQuery{Outcome: "failure", Limit: 100}, auditIDs(8, 6, 5, 3)},
			{"the old target and actor", store.AuditQuery{TargetKind: "user", TargetID: "1", ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(12)},
		} {
			t.Run(tt.name, func(t *testing.T) { checkAuditIDs(t, s, slugA, tt.q, tt.want) })
		}
		// The replaced records, through every index that finds them.
		for _, c := range []struct {
			want store.AuditRecord
			qs   []store.AuditQuery
		}{
			{moved, []store.AuditQuery{
				{After: auditID(4), Before: auditID(6), Limit: 1},
				{TargetKind: "role", TargetID: "7", Before: auditID(7), Limit: 1},
				{ActorKind: "user", ActorID: "2", Limit: 1},
				{Actions: []string{"role.updated"}, Limit: 1},
				{Outcome: "failure", After: auditID(3), Ascending: true, Limit: 1},
			}},
			{erased, []store.AuditQuery{
				{After: auditID(8), Before: auditID(10), Limit: 1},
				{TargetKind: "user", TargetID: "1", Before: auditID(12), Limit: 1},
				{ActorKind: "user", ActorID: "1", Limit: 1},
				{Actions: []string{"sign_in.succeeded"}, Before: auditID(11), Limit: 1},
				{Outcome: "success", Before: auditID(10), Limit: 1},
			}},
		} {
			for _, q := range c.qs {
				got := readAudit(t, s, slugA, q)
				if diff := cmp.Diff([]store.AuditRecord{c.want}, got, equateEmpty); diff != "" {
					t.Errorf("AuditRecords(%+v) after the replace (-want +got):\n%s", q, diff)
				}
			}
		}
		checkAuditIDs(t, s, slugB, auditAll, auditIDs(13, 9, 5, 2))
	})

	t.Run("Delete", func(t *testing.T) {
		s := auditStore(t, newStore)
		for _, step := range []struct {
			name   string
			before string
			limit  int
			want   int
			left   []string
		}{
			{"lowest first, up to the limit", auditID(6), 3, 3, auditIDs(12, 11, 10, 9, 8, 7, 6, 5, 4)},
			{"below the bound, which is exclusive", auditID(6), 10, 2, auditIDs(12, 11, 10, 9, 8, 7, 6)},
			{"nothing below the bound left", auditID(6), 10, 0, auditIDs(12, 11, 10, 9, 8, 7, 6)},
			{"limit 0", auditID(12), 0, 0, auditIDs(12, 11, 10, 9, 8, 7, 6)},
			{"negative limit", auditID(12), -1, 0, auditIDs(12, 11, 10, 9, 8, 7, 6)},
			{"nothing is below the empty id", "", 10, 0, auditIDs(12, 11, 10, 9, 8, 7, 6)},
			{"below a time: the record written at it stays", auditTime(8), 100, 2, auditIDs(12, 11, 10, 9, 8)},
		} {
			if n := deleteAudit(t, s, slugA, step.before, step.limit); n != step.want {
				t.Errorf("%s: DeleteAuditRecords(%q, %d) = %d, want %d", step.name, step.before, step.limit, n, step.want)
			}
			checkAuditIDs(t, s, slugA, auditAll, step.left)
		}
		// The index entries of the removed records went with them.
		for _, tt := range []struct {
			q    store.AuditQuery
			want []string
		}{
			{store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 100}, auditIDs(12, 9)},
			{store.AuditQuery{TargetKind: "user", TargetID: "2", Limit: 100}, auditIDs(10)},
			{store.AuditQuery{TargetKind: "role", TargetID: "7", Limit: 100}, nil},
			{store.AuditQuery{TargetKind: "workspace", TargetID: "acme", Limit: 100}, nil},
			{store.AuditQuery{ActorKind: "system", Limit: 100}, auditIDs(8)},
			{store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(12, 10)},
			{store.AuditQuery{ActorKind: "user", ActorID: "1", Ascending: true, Limit: 100}, auditIDs(9)},
			{store.AuditQuery{ActorKind: "user", ActorID: "2", Limit: 100}, nil},
			{store.AuditQuery{Actions: []string{"sign_in.failed", "user.created", "retention.swept", "password.changed", "role.created"}, Limit: 100},
				auditIDs(8)},
			{store.AuditQuery{Actions: []string{"user.updated"}, Ascending: true, Limit: 100}, auditIDs(10)},
			{store.AuditQuery{Outcome: "failure", Limit: 100}, auditIDs(8)},
			{store.AuditQuery{Outcome: "success", Ascending: true, Limit: 100}, auditIDs(9, 10, 11, 12)},
			{store.AuditQuery{Ascending: true, Limit: 2}, auditIDs(8, 9)},
		} {
			checkAuditIDs(t, s, slugA, tt.q, tt.want)
		}
		if n := deleteAudit(t, s, slugA, auditID(12)+"0", 100); n != 5 {
			t.Errorf("DeleteAuditRecords(above 12) = %d, want 5", n)
		}
		for _, q := range []store.AuditQuery{
			auditAll,
			{TargetKind: "user", TargetID: "1", Limit: 100},
			{ActorKind: "api_key", ActorID: "key-1", Limit: 100},
			{Actions: []string{"sign_in.succeeded", "sign_in.failed"}, Limit: 100},
			{Outcome: "success", Limit: 100},
		} {
			checkAuditIDs(t, s, slugA, q, nil)
		}
		if n := deleteAudit(t, s, slugA, "g", 100); n != 0 {
			t.Errorf("DeleteAuditRecords of an empty trail = %d, want 0", n)
		}
		checkAuditIDs(t, s, slugB, auditAll, auditIDs(13, 9, 5, 2))
		checkAuditIDs(t, s, slugB, store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 100}, auditIDs(13, 9, 5))

		// Records written again under removed ids are found again, and
		// alone.
		trail := auditTrail()
		putAudit(t, s, slugA, trail[2], trail[9])
		checkAuditIDs(t, s, slugA, auditAll, auditIDs(10, 3))
		checkAuditIDs(t, s, slugA, store.AuditQuery{TargetKind: "user", TargetID: "2", Limit: 100}, auditIDs(10, 3))
		checkAuditIDs(t, s, slugA, store.AuditQuery{Outcome: "failure", Limit: 100}, auditIDs(3))
		checkAuditIDs(t, s, slugA, store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Limit: 100}, auditIDs(10))
	})

	t.Run("DeleteWorkspace", func(t *testing.T) {
		s := auditStore(t, newStore)
		if err := deleteWorkspace(t, s, slugA); err != nil {
			t.Fatalf("DeleteWorkspace: %v", err)
		}
		var readErr error
		view(t, s, func(tx store.Tx) error {
			_, readErr = tx.AuditRecords(slugA, auditAll)
			return nil
		})
		checkErr(t, "AuditRecords of a deleted workspace", readErr, store.ErrNotFound)
		update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace(slugA)) })
		queries := []store.AuditQuery{
			auditAll,
			{TargetKind: "user", TargetID: "1", Limit: 100},
			{ActorKind: "user", ActorID: "1", Limit: 100},
			{Actions: []string{"sign_in.succeeded", "user.updated"}, Limit: 100},
			{Outcome: "success", Limit: 100},
		}
		for _, q := range queries {
			checkAuditIDs(t, s, slugA, q, nil) // the workspace created again starts empty
		}
		if n := deleteAudit(t, s, slugA, "g", 100); n != 0 {
			t.Errorf("DeleteAuditRecords in the workspace created again = %d, want 0", n)
		}
		putAudit(t, s, slugA, auditTrail()[0])
		for _, q := range queries {
			checkAuditIDs(t, s, slugA, q, auditIDs(1))
		}
		checkAuditIDs(t, s, slugB, auditAll, auditIDs(13, 9, 5, 2))
		checkAuditIDs(t, s, slugB, store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 100}, auditIDs(13, 9, 5))
	})

	t.Run("UnknownWorkspace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var putErr, readErr, readByTargetErr, deleteErr error
		var n int
		update(t, s, func(tx store.Tx) error {
			putErr = tx.PutAuditRecord(slugMissing, auditTrail()[0])
			_, readErr = tx.AuditRecords(slugMissing, auditAll)
			_, readByTargetErr = tx.AuditRecords(slugMissing, store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 10})
			n, deleteErr = tx.DeleteAuditRecords(slugMissing, "g", 10)
			return nil
		})
		checkErr(t, "PutAuditRecord in a missing workspace", putErr, store.ErrNotFound)
		checkErr(t, "AuditRecords of a missing workspace", readErr, store.ErrNotFound)
		checkErr(t, "AuditRecords of a missing workspace by target", readByTargetErr, store.ErrNotFound)
		checkErr(t, "DeleteAuditRecords in a missing workspace", deleteErr, store.ErrNotFound)
		if n != 0 {
			t.Errorf("DeleteAuditRecords in a missing workspace = %d, want 0", n)
		}
		// A workspace without records has an empty trail.
		checkAuditIDs(t, s, slugA, auditAll, nil)
		checkAuditIDs(t, s, slugA, store.AuditQuery{Actions: []string{"user.created", "user.updated"}, Limit: 10}, nil)
		if n := deleteAudit(t, s, slugA, "g", 10); n != 0 {
			t.Errorf("DeleteAuditRecords of an empty trail = %d, want 0", n)
		}
	})

	t.Run("Rollback", func(t *testing.T) {
		s := auditStore(t, newStore)
		failUpdate(t, s, func(tx store.Tx) error {
			moved := auditRecord(5, pBob, "role.updated", pRole7, "failure", "")
			if err := tx.PutAuditRecord(slugA, moved); err != nil {
				return err
			}
			if err := tx.PutAuditRecord(slugA, auditRecord(13, pAlice, "user.updated", pAlice, "success", "")); err != nil {
				return err
			}
			if _, err := tx.DeleteAuditRecords(slugA, auditID(4), 10); err != nil {
				return err
			}
			return errBoom
		})
		trail := auditTrail()
		want := slices.Clone(trail)
		slices.Reverse(want)
		if diff := cmp.Diff(want, readAudit(t, s, slugA, auditAll), equateEmpty); diff != "" {
			t.Errorf("AuditRecords after a failed Update (-want +got):\n%s", diff)
		}
		checkAuditIDs(t, s, slugA, store.AuditQuery{TargetKind: "role", TargetID: "7", Limit: 100}, auditIDs(7))
		checkAuditIDs(t, s, slugA, store.AuditQuery{Actions: []string{"user.updated"}, Limit: 100}, auditIDs(10, 5))
		checkAuditIDs(t, s, slugA, store.AuditQuery{TargetKind: "user", TargetID: "2", Ascending: true, Limit: 100}, auditIDs(2, 3, 10))
	})

	t.Run("UpdateSeesOwnWrites", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		trail := auditTrail()
		var byBob, byBobAfter, byAlice, left []string
		var removed int
		update(t, s, func(tx store.Tx) error {
			read := func(q store.AuditQuery) ([]string, error) {
				recs, err := tx.AuditRecords(slugA, q)
				return idsOf(recs), err
			}
			for _, r := range trail[:3] {
				if err := tx.PutAuditRecord(slugA, r); err != nil {
					return err
				}
			}
			var err error
			if byBob, err = read(store.AuditQuery{TargetKind: "user", TargetID: "2", Limit: 10}); err != nil {
				return err
			}
			if err := tx.PutAuditRecord(slugA, auditRecord(3, pBob, "sign_in.failed", pAlice, "failure", "")); err != nil {
				return err
			}
			if byBobAfter, err = read(store.AuditQuery{TargetKind: "user", TargetID: "2", Limit: 10}); err != nil {
				return err
			}
			if byAlice, err = read(store.AuditQuery{TargetKind: "user", TargetID: "1", Limit: 10}); err != nil {
				return err
			}
			if removed, err = tx.DeleteAuditRecords(slugA, auditID(3), 10); err != nil {
				return err
			}
			left, err = read(auditAll)
			return err
		})
		got := map[string]any{"byBob": byBob, "byBobAfter": byBobAfter, "byAlice": byAlice, "removed": removed, "left": left}
		want := map[string]any{
			"byBob": auditIDs(3, 2), "byBobAfter": auditIDs(2), "byAlice": auditIDs(3, 1), "removed": 2, "left": auditIDs(3),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reads inside the Update (-want +got):\n%s", diff)
		}
	})

	t.Run("CursorUnderConcurrentAppends", func(t *testing.T) {
		testAuditCursorUnderAppends(t, newStore)
	})
}

// testAuditCursorUnderAppends pages newest first through a trail that
// writers append to meanwhile, each page a View of its own whose Before
// is the last id of the page before, with no filter and by actor. No
// record comes twice, the ids only go down, and no record is missed
// that was committed before a page was read with an id below that
// page's cursor: the records written before the paging began, and every
// append that made it in time.
func testAuditCursorUnderAppends(t *testing.T, newStore func(t *testing.T) store.Store) {
	const (
		initial   = 100
		writers   = 4
		perWriter = 40
		pageSize  = 7
	)
	record := func(n int) store.AuditRecord {
		return auditRecord(n, pKey, "token.issued", party{"client", "app", "app"}, "success", "")
	}
	for _, tc := range []struct {
		name string
		q    store.AuditQuery
	}{
		{"unfiltered", store.AuditQuery{Limit: pageSize}},
		{"by actor", store.AuditQuery{ActorKind: "api_key", ActorID: "key-1", Limit: pageSize}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStoreWith(t, newStore, slugA)
			recs := make([]store.AuditRecord, initial)
			for i := range recs {
				recs[i] = record(i + 1)
			}
			putAudit(t, s, slugA, recs...)

			var mu sync.Mutex
			committed := map[string]bool{}
			for _, r := range recs {
				committed[r.ID] = true
			}
			var next int // the appends: 1001, 1002, ...
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			start := make(chan struct{})
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for range perWriter {
						mu.Lock()
						next++
						r := record(1000 + next)
						mu.Unlock()
						err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutAuditRecord(slugA, r) })
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						committed[r.ID] = true
						mu.Unlock()
					}
				}()
			}

			close(start)
			var got []string
			var mustHave []string // committed before a page, below its cursor
			q := tc.q
			for {
				mu.Lock()
				for id := range committed {
					if q.Before == "" || id < q.Before {
						mustHave = append(mustHave, id)
					}
				}
				mu.Unlock()
				page := idsOf(readAudit(t, s, slugA, q))
				got = append(got, page...)
				if len(page) < q.Limit {
					break
				}
				q.Before = page[len(page)-1]
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("an append: %v", err)
			}

			seen := map[string]bool{}
			for i, id := range got {
				if seen[id] {
					t.Errorf("record %s came twice", id)
				}
				seen[id] = true
				if i > 0 && id >= got[i-1] {
					t.Errorf("record %s came after %s: ids must go down", id, got[i-1])
				}
				if !committed[id] {
					t.Errorf("record %s was never written", id)
				}
			}
			var missed []string
			for _, id := range mustHave {
				if !seen[id] {
					missed = append(missed, id)
				}
			}
			slices.Sort(missed)
			missed = slices.Compact(missed)
			if len(missed) > 0 {
				t.Errorf("%d records committed before a page, below its cursor, were missed: %v", len(missed), missed)
			}
			if len(got) < initial {
				t.Errorf("the paging read %d records, want at least the %d written before it", len(got), initial)
			}
			// Once the writers are done, the trail holds every record once.
			final := readAudit(t, s, slugA, store.AuditQuery{Limit: 10_000})
			if len(final) != initial+writers*perWriter {
				t.Errorf("the trail holds %d records, want %d", len(final), initial+writers*perWriter)
			}
			wantIDs := slices.Sorted(maps.Keys(committed))
			slices.Reverse(wantIDs)
			if diff := cmp.Diff(wantIDs, idsOf(final)); diff != "" {
				t.Errorf("the trail after the appends (-want +got):\n%s", diff)
			}
		})
	}
}
