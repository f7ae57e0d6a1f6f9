package identity_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestQueueStats: the depth of the queue and its earliest due time, and
// the age of that job by a clock.
func TestQueueStats(t *testing.T) {
	e := newTestEnv(t, nil)
	st, err := e.svc.GetQueueStats(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.QueueStats{}, st); diff != "" {
		t.Errorf("empty queue (-want +got):\n%s", diff)
	}
	if age := st.OldestDueAge(e.clock.Now()); age != 0 {
		t.Errorf("empty queue: age %v, want 0", age)
	}

	e.hook(identity.EventUserCreated)
	first := e.clock.Now().UTC().Truncate(time.Microsecond)
	e.user("grace")
	e.clock.Advance(time.Minute)
	e.user("alan")
	e.clock.Advance(time.Minute)
	st, err = e.svc.GetQueueStats(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.QueueStats{Pending: 2, NextDue: first}, st); diff != "" {
		t.Errorf("two jobs (-want +got):\n%s", diff)
	}
	if age := st.OldestDueAge(e.clock.Now()); age != 2*time.Minute {
		t.Errorf("age %v, want 2m", age)
	}
	if age := st.OldestDueAge(first.Add(-time.Second)); age != 0 {
		t.Errorf("age before the job is due: %v, want 0", age)
	}

	e.st.set(true, false)
	if _, err := e.svc.GetQueueStats(e.ctx); identity.ErrorCode(err) != identity.CodeInternal {
		t.Errorf("a failing store: %v, want CodeInternal", err)
	}
}
