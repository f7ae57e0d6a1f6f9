package identity

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity/store"
)

// TestAuditQuery: what a filter and a page ask the store for, and which
// of them are refused, field by field.
func TestAuditQuery(t *testing.T) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC) // 1795773600000000 µs: 0006613f1f866800
	until := since.Add(time.Hour)
	const cursor = "0006613f80000000aaaaaaaaaaaaaaaa"
	for _, c := range []struct {
		name   string
		filter *AuditFilter
		page   *AuditPageOptions
		want   store.AuditQuery
		fields []string
	}{
		{name: "nothing", want: store.AuditQuery{Limit: 20}},
		{name: "limit 1", page: &AuditPageOptions{Limit: 1}, want: store.AuditQuery{Limit: 1}},
		{name: "limit 100", page: &AuditPageOptions{Limit: 100}, want: store.AuditQuery{Limit: 100}},
		{name: "limit 101", page: &AuditPageOptions{Limit: 101}, fields: []string{"limit"}},
		{name: "limit -1", page: &AuditPageOptions{Limit: -1}, fields: []string{"limit"}},
		{name: "oldest", page: &AuditPageOptions{Oldest: true}, want: store.AuditQuery{Limit: 20, Ascending: true}},
		{
			name: "actor", filter: &AuditFilter{ActorKind: ActorAPIKey, ActorID: "k1"},
			want: store.AuditQuery{ActorKind: "api_key", ActorID: "k1", Limit: 20},
		},
		{name: "system actor", filter: &AuditFilter{ActorKind: ActorSystem}, want: store.AuditQuery{ActorKind: "system", Limit: 20}},
		{name: "unknown actor kind", filter: &AuditFilter{ActorKind: "robot", ActorID: "1"}, fields: []string{"actor"}},
		{name: "actor id without kind", filter: &AuditFilter{ActorID: "1"}, fields: []string{"actor"}},
		{
			name: "target", filter: &AuditFilter{TargetKind: TargetUser, TargetID: "42"},
			want: store.AuditQuery{TargetKind: "user", TargetID: "42", Limit: 20},
		},
		{name: "unknown target kind", filter: &AuditFilter{TargetKind: "planet", TargetID: "1"}, fields: []string{"target"}},
		{name: "target id without kind", filter: &AuditFilter{TargetID: "42"}, fields: []string{"target"}},
		{
			name: "one action", filter: &AuditFilter{Action: "user.created"},
			want: store.AuditQuery{Actions: []string{"user.created"}, Limit: 20},
		},
		{
			name: "action prefix", filter: &AuditFilter{Action: "token."},
			want: store.AuditQuery{Actions: []string{
				"token.issued", "token.refreshed", "token.refresh_reused", "token.code_reused", "token.revoked",
			}, Limit: 20},
		},
		{name: "prefix without its dot", filter: &AuditFilter{Action: "token"}, fields: []string{"action"}},
		{name: "unknown action", filter: &AuditFilter{Action: "user.teleported"}, fields: []string{"action"}},
		{name: "outcome failure", filter: &AuditFilter{Outcome: OutcomeFailure}, want: store.AuditQuery{Outcome: "failure", Limit: 20}},
		{name: "outcome success", filter: &AuditFilter{Outcome: OutcomeSuccess}, want: store.AuditQuery{Outcome: "success", Limit: 20}},
		{name: "unknown outcome", filter: &AuditFilter{Outcome: "maybe"}, fields: []string{"outcome"}},
		{
			name: "since and until", filter: &AuditFilter{Since: since, Until: until},
			want: store.AuditQuery{After: "0006613f1f8667ffffffffffffffffff", Before: "0006613ff61a0c000000000000000000", Limit: 20},
		},
		{
			name: "cursor newest first", page: &AuditPageOptions{Cursor: cursor},
			want: store.AuditQuery{Before: cursor, Limit: 20},
		},
		{
			name: "cursor oldest first", page: &AuditPageOptions{Cursor: cursor, Oldest: true},
			want: store.AuditQuery{After: cursor, Ascending: true, Limit: 20},
		},
		{
			name: "cursor past until keeps until", filter: &AuditFilter{Until: since},
			page: &AuditPageOptions{Cursor: "ffff" + cursor[4:]},
			want: store.AuditQuery{Before: "0006613f1f8668000000000000000000", Limit: 20},
		},
		{
			name: "cursor before since keeps since", filter: &AuditFilter{Since: until},
			page: &AuditPageOptions{Cursor: cursor, Oldest: true},
			want: store.AuditQuery{After: "0006613ff61a0bffffffffffffffffff", Ascending: true, Limit: 20},
		},
		{name: "short cursor", page: &AuditPageOptions{Cursor: "abc"}, fields: []string{"cursor"}},
		{name: "upper-case cursor", page: &AuditPageOptions{Cursor: "0006613F80000000AAAAAAAAAAAAAAAA"}, fields: []string{"cursor"}},
		{
			name: "every problem at once", filter: &AuditFilter{ActorKind: "robot", TargetKind: "planet", Action: "x", Outcome: "maybe"},
			page: &AuditPageOptions{Limit: 1000, Cursor: "z"}, fields: []string{"limit", "actor", "target", "action", "outcome", "cursor"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := auditQuery(c.filter, c.page)
			if c.fields != nil {
				e, ok := errors.AsType[*Error](err)
				if !ok || e.Code != CodeInvalid {
					t.Fatalf("err = %v, want CodeInvalid", err)
				}
				var fields []string
				for _, f := range e.Fields {
					fields = append(fields, f.Field)
				}
				if diff := cmp.Diff(c.fields, fields); diff != "" {
					t.Errorf("fields (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuditIDs: an id is the time's microseconds in 16 hex digits and 16
// random ones, so ids sort as their times do.
func TestAuditIDs(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	id, err := newAuditID(at)
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 32 || id[:16] != "0006613f1f866800" || !validAuditID(id) {
		t.Errorf("id = %q, want 32 hex digits starting 0006613f1f866800", id)
	}
	other, _ := newAuditID(at)
	if other == id {
		t.Errorf("two ids of one microsecond are equal: %q", id)
	}
	later, _ := newAuditID(at.Add(time.Microsecond))
	if later[:16] != "0006613f1f866801" || later <= id {
		t.Errorf("an id a microsecond later = %q, want above %q", later, id)
	}
	if got := auditIDPrefix(time.Unix(-5, 0)); got != "0000000000000000" {
		t.Errorf("before 1970: %q", got)
	}
	if early, _ := newAuditID(time.Unix(-5, 0)); early[:16] != "0000000000000000" || !validAuditID(early) {
		t.Errorf("an id before 1970 = %q, want 32 hex digits starting 0000000000000000", early)
	}
	if got := auditIDBefore(time.Unix(0, 0)); got != "" {
		t.Errorf("the id before 1970 = %q, want none", got)
	}
}

// TestAuditIDBounds: the id below every record of a time starts with the
// microsecond before it, from the first microsecond of 1970 on; an id is
// 32 digits of 0-9 and a-f, nothing around them.
func TestAuditIDBounds(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Unix(0, 0), ""},
		{time.Unix(0, 1000), "0000000000000000ffffffffffffffff"},
		{time.Unix(0, 2000), "0000000000000001ffffffffffffffff"},
	} {
		if got := auditIDBefore(c.at); got != c.want {
			t.Errorf("auditIDBefore(%d µs) = %q, want %q", c.at.UnixMicro(), got, c.want)
		}
	}
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"0123456789abcdef0123456789abcdef", true},
		{"99999999999999999999999999999999", true},
		{"ffffffffffffffffffffffffffffffff", true},
		{"0123456789abcdef0123456789abcde", false},
		{"0123456789abcdef0123456789abcdef0", false},
		{"0123456789abcdef0123456789abcde/", false}, // the byte before 0
		{"0123456789abcdef0123456789abcde:", false}, // after 9
		{"0123456789abcdef0123456789abcde`", false}, // before a
		{"0123456789abcdef0123456789abcdeg", false}, // after f
		{"0123456789ABCDEF0123456789abcdef", false},
	} {
		if got := validAuditID(c.id); got != c.want {
			t.Errorf("validAuditID(%q) = %t, want %t", c.id, got, c.want)
		}
	}
}
