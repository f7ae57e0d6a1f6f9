package delivery_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
)

// attemptLog is a delivery.Observer that keeps what it is told.
type attemptLog struct {
	mu       sync.Mutex
	attempts []string // "kind outcome sent"
}

func (l *attemptLog) AttemptDone(kind identity.JobKind, outcome delivery.AttemptOutcome, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent := "sent"
	if d <= 0 {
		sent = "not sent"
	}
	l.attempts = append(l.attempts, string(kind)+" "+string(outcome)+" "+sent)
}

func (l *attemptLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.attempts)
}

// TestObserverTold: the observer is told of each attempt once, with its
// kind and outcome: a 2xx succeeds, a 502 with a retry left is retried,
// a 410 disables the endpoint and fails for good.
func TestObserverTold(t *testing.T) {
	env := newDlvEnv(t, newDlvClock())
	ok := newDlvReceiver(t, nil)
	bad := newDlvReceiver(t, failWith(http.StatusBadGateway))
	gone := newDlvReceiver(t, failWith(http.StatusGone))
	var ids []int64
	for _, rc := range []*dlvReceiver{ok, bad, gone} {
		ids = append(ids, env.hook(rc.url("/hook")).Endpoint.ID)
	}
	log := new(attemptLog)
	opts := env.options(dlvRoots(ok))
	opts.Retries = []time.Duration{time.Hour} // the fake clock never gets there
	opts.Observer = log
	env.start(opts)
	env.user("ada")
	for _, id := range ids {
		env.waitDeliveries(id, "one attempt", attempted(1))
	}
	waitFor(t, "three attempts observed", func() bool { return len(log.list()) >= 3 })
	got := log.list()
	slices.Sort(got)
	want := []string{
		"webhook failed_permanent sent",
		"webhook failed_retry sent",
		"webhook succeeded sent",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts observed (-want +got):\n%s", diff)
	}
}
