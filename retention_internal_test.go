package identity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSweepResultArithmetic: Total adds every count, and minus (what one
// workspace's sweep removed, for its retention.swept record) subtracts
// every count of what was removed before.
func TestSweepResultArithmetic(t *testing.T) {
	r := SweepResult{Deliveries: 1, MailJobs: 2, Sessions: 4, Tokens: 8, AuditRecords: 16}
	if got := r.Total(); got != 31 {
		t.Errorf("Total = %d, want 31", got)
	}
	after := SweepResult{Deliveries: 10, MailJobs: 20, Sessions: 30, Tokens: 40, AuditRecords: 50}
	want := SweepResult{Deliveries: 9, MailJobs: 18, Sessions: 26, Tokens: 32, AuditRecords: 34}
	if diff := cmp.Diff(want, after.minus(r)); diff != "" {
		t.Errorf("minus (-want +got):\n%s", diff)
	}
}
