package identity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProblemsCapped: problems keeps the first MaxFieldErrors and counts
// the rest, whether added one by one or taken from another check's Error.
func TestProblemsCapped(t *testing.T) {
	var p problems
	for range MaxFieldErrors - 1 {
		p.add("f", RuleRequired, "is required")
	}
	p.addFrom(&Error{Code: CodeInvalid, Fields: []FieldError{{Field: "a"}, {Field: "b"}, {Field: "c"}}, Omitted: 4})
	p.add("g", RuleRequired, "is required")
	got := []any{len(p.list), p.list[MaxFieldErrors-1].Field, p.omitted, p.full()}
	if diff := cmp.Diff([]any{100, "a", 7, true}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOrText: the account setup checks the password against the user's
// new username and email, or their current ones where none is given.
func TestOrText(t *testing.T) {
	got := []string{orText("new", "old"), orText("", "old")}
	if diff := cmp.Diff([]string{"new", "old"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
