package console

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCan is the console's authorization rule, role by role, for the
// service (""), an ordinary workspace, another one and the operator
// workspace, reading and writing.
func TestCan(t *testing.T) {
	type access struct{ Read, Write bool }
	targets := []string{"", "acme", "other", "operators"}
	tests := []struct {
		roles []string
		want  map[string]access
	}{
		{nil, map[string]access{"": {}, "acme": {}, "other": {}, "operators": {}}},
		{[]string{"console.admin"}, map[string]access{"": {true, true}, "acme": {true, true}, "other": {true, true}, "operators": {true, true}}},
		{[]string{"console.viewer"}, map[string]access{"": {true, false}, "acme": {true, false}, "other": {true, false}, "operators": {true, false}}},
		{[]string{"console.admin:acme"}, map[string]access{"": {}, "acme": {true, true}, "other": {}, "operators": {}}},
		{[]string{"console.viewer:acme"}, map[string]access{"": {}, "acme": {true, false}, "other": {}, "operators": {}}},
		{[]string{"console.viewer:acme", "console.admin:other"}, map[string]access{"": {}, "acme": {true, false}, "other": {true, true}, "operators": {}}},
		{[]string{"console.viewer", "console.admin:acme"}, map[string]access{"": {true, false}, "acme": {true, true}, "other": {true, false}, "operators": {true, false}}},
		// A per-workspace role of the operator workspace grants nothing
		// there: only console.admin administers the operators.
		{[]string{"console.admin:operators"}, map[string]access{"": {}, "acme": {}, "other": {}, "operators": {}}},
		{[]string{"console.viewer:operators"}, map[string]access{"": {}, "acme": {}, "other": {}, "operators": {}}},
		// Other roles and look-alikes grant nothing.
		{[]string{"admin", "console.admins", "console.admin.acme", "console.adminacme"}, map[string]access{"": {}, "acme": {}, "other": {}, "operators": {}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.roles), func(t *testing.T) {
			g := grantsOf("operators", tt.roles)
			got := map[string]access{}
			for _, slug := range targets {
				got[slug] = access{g.can(slug, false), g.can(slug, true)}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("can (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGrantsAny: an operator without a console role is refused every
// page; any console role lets them in.
func TestGrantsAny(t *testing.T) {
	tests := []struct {
		roles []string
		want  bool
	}{
		{nil, false},
		{[]string{"console.admins", "other"}, false},
		{[]string{"console.viewer"}, true},
		{[]string{"console.admin"}, true},
		{[]string{"console.viewer:acme"}, true},
		{[]string{"console.admin:acme"}, true},
	}
	for _, tt := range tests {
		if got := grantsOf("operators", tt.roles).any(); got != tt.want {
			t.Errorf("grantsOf(%q).any() = %v, want %v", tt.roles, got, tt.want)
		}
	}
}
