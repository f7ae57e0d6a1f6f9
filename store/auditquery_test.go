package store_test

import (
	"testing"

	"github.com/identitylib/identity/store"
)

// TestAuditQueryMatches: every field of AuditQuery, on both sides.
func TestAuditQueryMatches(t *testing.T) {
	r := store.AuditRecord{
		ID: "0000000000000005aaaaaaaaaaaaaaaa", ActorKind: "api_key", ActorID: "k1", Action: "user.created",
		TargetKind: "user", TargetID: "42", Outcome: "success",
	}
	for _, c := range []struct {
		name string
		q    store.AuditQuery
		want bool
	}{
		{"nothing", store.AuditQuery{}, true},
		{"after below", store.AuditQuery{After: "0000000000000004ffffffffffffffff"}, true},
		{"after equal", store.AuditQuery{After: r.ID}, false},
		{"before above", store.AuditQuery{Before: "00000000000000060000000000000000"}, true},
		{"before equal", store.AuditQuery{Before: r.ID}, false},
		{"actor", store.AuditQuery{ActorKind: "api_key", ActorID: "k1"}, true},
		{"actor of another id", store.AuditQuery{ActorKind: "api_key", ActorID: "k2"}, false},
		{"actor of another kind", store.AuditQuery{ActorKind: "user", ActorID: "k1"}, false},
		{"actor id alone is no filter", store.AuditQuery{ActorID: "k2"}, true},
		{"target", store.AuditQuery{TargetKind: "user", TargetID: "42"}, true},
		{"target of another id", store.AuditQuery{TargetKind: "user", TargetID: "43"}, false},
		{"target of another kind", store.AuditQuery{TargetKind: "role", TargetID: "42"}, false},
		{"one of the actions", store.AuditQuery{Actions: []string{"user.updated", "user.created"}}, true},
		{"none of the actions", store.AuditQuery{Actions: []string{"user.updated"}}, false},
		{"outcome", store.AuditQuery{Outcome: "success"}, true},
		{"another outcome", store.AuditQuery{Outcome: "failure"}, false},
		{"all at once", store.AuditQuery{
			After: "0000000000000004ffffffffffffffff", Before: "00000000000000060000000000000000",
			ActorKind: "api_key", ActorID: "k1", TargetKind: "user", TargetID: "42",
			Actions: []string{"user.created"}, Outcome: "success",
		}, true},
	} {
		if got := c.q.Matches(&r); got != c.want {
			t.Errorf("%s: Matches = %t, want %t", c.name, got, c.want)
		}
	}
}
