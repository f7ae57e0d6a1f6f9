package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// dueDelivery returns delivery(id, endpointID), pending, without a lease,
// and due at at(due).
func dueDelivery(id, endpointID int64, due int) store.Delivery {
	d := delivery(id, endpointID)
	d.NextAttemptAt = at(due)
	d.LeaseUntil, d.LeaseOwner = time.Time{}, ""
	return d
}

// withStatus returns d with the status.
func withStatus(d store.Delivery, status store.DeliveryStatus) store.Delivery {
	d.Status = status
	return d
}

// inWorkspace returns d as DueDeliveries returns it for the workspace.
func inWorkspace(slug string, d store.Delivery) store.QueuedDelivery {
	return store.QueuedDelivery{Workspace: slug, Delivery: d}
}

// forever is later than every time the suite writes.
var forever = at(1 << 30)

// dueState is the due index as the Tx reads it.
type dueState struct {
	Due     []store.QueuedDelivery // every delivery due by forever
	Next    time.Time
	HasNext bool
	Pending int
}

// readDueState reads the due index inside tx.
func readDueState(tx store.Tx) (dueState, error) {
	var st dueState
	var err error
	if st.Due, err = tx.DueDeliveries(forever, 1<<30); err != nil {
		return st, fmt.Errorf("DueDeliveries: %w", err)
	}
	if st.Next, st.HasNext, err = tx.NextDueAt(); err != nil {
		return st, fmt.Errorf("NextDueAt: %w", err)
	}
	if st.Pending, err = tx.PendingDeliveries(); err != nil {
		return st, fmt.Errorf("PendingDeliveries: %w", err)
	}
	return st, nil
}

// due reads DueDeliveries(now, limit) in a View.
func due(t *testing.T, s store.Store, now time.Time, limit int) []store.QueuedDelivery {
	t.Helper()
	var got []store.QueuedDelivery
	view(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.DueDeliveries(now, limit)
		return err
	})
	return got
}

// dueNames names queued deliveries "slug/id", for short messages.
func dueNames(qs []store.QueuedDelivery) []string {
	var names []string
	for _, q := range qs {
		names = append(names, fmt.Sprintf("%s/%d", q.Workspace, q.ID))
	}
	return names
}

// checkDue checks DueDeliveries(now, limit) against want, record by record.
func checkDue(t *testing.T, s store.Store, now time.Time, limit int, want []store.QueuedDelivery) {
	t.Helper()
	got := due(t, s, now, limit)
	if diff := cmp.Diff(dueNames(want), dueNames(got)); diff != "" {
		t.Errorf("DueDeliveries(%v, %d) mismatch (-want +got):\n%s", now, limit, diff)
	} else if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("DueDeliveries(%v, %d) records mismatch (-want +got):\n%s", now, limit, diff)
	}
}

// checkNextDue checks NextDueAt: want, or none when want is nil.
func checkNextDue(t *testing.T, s store.Store, want *time.Time) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		got, ok, err := tx.NextDueAt()
		switch {
		case err != nil:
			t.Errorf("NextDueAt: %v", err)
		case want == nil && ok:
			t.Errorf("NextDueAt = %v, true; want none", got)
		case want != nil && (!ok || !got.Equal(*want) || got.Location() != time.UTC):
			t.Errorf("NextDueAt = %v, %t; want %v in UTC, true", got, ok, *want)
		}
		return nil
	})
}

// checkPending checks PendingDeliveries.
func checkPending(t *testing.T, s store.Store, want int) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		got, err := tx.PendingDeliveries()
		if err != nil || got != want {
			t.Errorf("PendingDeliveries = %d, %v; want %d", got, err, want)
		}
		return nil
	})
}

// putDeliveries writes the deliveries into the workspace in one
// transaction.
func putDeliveries(t *testing.T, s store.Store, slug string, ds ...store.Delivery) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, d := range ds {
			if err := tx.PutDelivery(slug, d); err != nil {
				return fmt.Errorf("PutDelivery(%q, %d): %w", slug, d.ID, err)
			}
		}
		return nil
	})
}

// putWebhooks writes endpoints with the ids into the workspace.
func putWebhooks(t *testing.T, s store.Store, slug string, ids ...int64) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, id := range ids {
			if err := tx.PutWebhook(slug, webhook(id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// testDueIndex checks DueDeliveries, NextDueAt and PendingDeliveries: the
// due index that PutDelivery and DeleteWebhook keep in step.
func testDueIndex(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Empty", func(t *testing.T) {
		for _, slugs := range [][]string{nil, {slugA}} {
			s := newStoreWith(t, newStore, slugs...)
			checkDue(t, s, forever, 10, nil)
			checkNextDue(t, s, nil)
			checkPending(t, s, 0)
		}
	})
	t.Run("OrderAndLimit", func(t *testing.T) { testDueOrder(t, newStore) })
	t.Run("Ties", func(t *testing.T) { testDueTies(t, newStore) })
	t.Run("Lease", func(t *testing.T) { testDueLease(t, newStore) })
	t.Run("Transitions", func(t *testing.T) { testDueTransitions(t, newStore) })
	t.Run("DeleteWebhook", func(t *testing.T) { testDueDeleteWebhook(t, newStore) })
	t.Run("Rollback", func(t *testing.T) { testDueRollback(t, newStore) })
	t.Run("ExtremeTimes", func(t *testing.T) { testDueExtremeTimes(t, newStore) })
	t.Run("Copies", func(t *testing.T) { testDueCopies(t, newStore) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testDueConcurrentClaims(t, newStore) })
	t.Run("WorkspaceQueue", func(t *testing.T) { testWorkspaceQueue(t, newStore) })
	t.Run("ClaimDelivery", func(t *testing.T) { testClaimDelivery(t, newStore) })
	t.Run("ConcurrentClaimDelivery", func(t *testing.T) { testConcurrentClaimDelivery(t, newStore) })
}

// testDueOrder checks that DueDeliveries returns the pending deliveries of
// every workspace due by now, in DueAt order, at most limit of them.
func testDueOrder(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putWebhooks(t, s, slugA, 1, 2)
	putWebhooks(t, s, slugB, 1)
	// Delivery ids are per workspace: slugB reuses slugA's.
	a1, a2, a3, a4 := dueDelivery(1, 1, 50), dueDelivery(2, 1, 10), dueDelivery(3, 2, 30), dueDelivery(4, 2, 1000)
	b1, b2 := dueDelivery(1, 1, 20), dueDelivery(2, 1, 40)
	putDeliveries(t, s, slugA, a1, a4,
		withStatus(dueDelivery(5, 1, 5), store.DeliverySucceeded),
		withStatus(dueDelivery(6, 2, 5), store.DeliveryFailed),
		withStatus(dueDelivery(7, 2, 5), ""), // no status: not pending either
	)
	putDeliveries(t, s, slugB, b2, b1, withStatus(dueDelivery(3, 1, 5), store.DeliveryFailed))
	putDeliveries(t, s, slugA, a3, a2)

	all := []store.QueuedDelivery{
		inWorkspace(slugA, a2), inWorkspace(slugB, b1), inWorkspace(slugA, a3),
		inWorkspace(slugB, b2), inWorkspace(slugA, a1),
	}
	for _, c := range []struct {
		name  string
		now   time.Time
		limit int
		want  []store.QueuedDelivery
	}{
		{"all due", at(100), 100, all},
		{"limit", at(100), 2, all[:2]},
		{"limit equal to the due", at(100), 5, all},
		{"limit one", at(100), 1, all[:1]},
		{"limit zero", at(100), 0, nil},
		{"negative limit", at(100), -1, nil},
		{"due at now", at(30), 10, all[:3]},
		{"a microsecond early", at(30).Add(-time.Microsecond), 10, all[:2]},
		{"sub-microsecond late", at(30).Add(999 * time.Nanosecond), 10, all[:3]},
		{"now in another zone", at(30).In(time.FixedZone("UTC+9", 9*3600)), 10, all[:3]},
		{"before everything", at(9), 10, nil},
		{"far future", forever, 100, append(slices.Clone(all), inWorkspace(slugA, a4))},
	} {
		t.Run(c.name, func(t *testing.T) { checkDue(t, s, c.now, c.limit, c.want) })
	}
	next := at(10)
	checkNextDue(t, s, &next)
	checkPending(t, s, 6)
}

// testDueTies checks deliveries due at the same time: each comes once, in
// the same order on every call, and a limit takes a prefix of that order.
func testDueTies(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putWebhooks(t, s, slugA, 1)
	putWebhooks(t, s, slugB, 1)
	putDeliveries(t, s, slugA, dueDelivery(3, 1, 10), dueDelivery(1, 1, 10), dueDelivery(2, 1, 5))
	putDeliveries(t, s, slugB, dueDelivery(2, 1, 10), dueDelivery(1, 1, 10))
	first := due(t, s, at(10), 10)
	names := dueNames(first)
	if len(names) != 5 || names[0] != slugA+"/2" {
		t.Fatalf("DueDeliveries = %v; want %s/2 first, then the four due at the same time", names, slugA)
	}
	want := []string{slugA + "/1", slugA + "/3", slugB + "/1", slugB + "/2"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(names[1:]))); diff != "" {
		t.Errorf("deliveries due at the same time mismatch (-want +got):\n%s", diff)
	}
	if again := dueNames(due(t, s, at(10), 10)); !slices.Equal(names, again) {
		t.Errorf("DueDeliveries order changed between calls: %v, then %v", names, again)
	}
	for limit := 1; limit <= 5; limit++ {
		if got := dueNames(due(t, s, at(10), limit)); !slices.Equal(got, names[:limit]) {
			t.Errorf("DueDeliveries(limit %d) = %v, want the prefix %v", limit, got, names[:limit])
		}
	}
}

// testDueLease checks that a lease pushes DueAt later: a leased delivery
// is not due until its lease ends, and is due again after it.
func testDueLease(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	putWebhooks(t, s, slugA, 1)
	d := dueDelivery(1, 1, 10)
	other := dueDelivery(2, 1, 50)
	putDeliveries(t, s, slugA, d, other)

	// A dispatcher claims d at 15 for 30 seconds.
	claimed := d
	claimed.LeaseUntil, claimed.LeaseOwner = at(45), "dispatcher-a"
	putDeliveries(t, s, slugA, claimed)
	checkDue(t, s, at(20), 10, nil)
	checkDue(t, s, at(44), 10, nil)
	checkDue(t, s, at(45), 10, []store.QueuedDelivery{inWorkspace(slugA, claimed)})
	checkDue(t, s, at(60), 10, []store.QueuedDelivery{inWorkspace(slugA, claimed), inWorkspace(slugA, other)})
	next := at(45)
	checkNextDue(t, s, &next)
	checkPending(t, s, 2)

	// The attempt fails: the dispatcher reports back, schedules a retry
	// and ends its lease early.
	retry := claimed
	retry.Attempts++
	retry.NextAttemptAt, retry.LeaseUntil, retry.LeaseOwner = at(100), at(30), ""
	putDeliveries(t, s, slugA, retry)
	checkDue(t, s, at(99), 10, []store.QueuedDelivery{inWorkspace(slugA, other)})
	checkDue(t, s, at(100), 10, []store.QueuedDelivery{inWorkspace(slugA, other), inWorkspace(slugA, retry)})
	next = at(50)
	checkNextDue(t, s, &next)
	checkPending(t, s, 2)
}

// testDueTransitions checks that only pending deliveries are due, through
// every change of status, due time and endpoint.
func testDueTransitions(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putWebhooks(t, s, slugA, 1, 2)
	putWebhooks(t, s, slugB, 1)
	d1, d2 := dueDelivery(1, 1, 10), dueDelivery(2, 1, 20)
	b1 := dueDelivery(1, 1, 30)
	putDeliveries(t, s, slugA, d1, d2)
	putDeliveries(t, s, slugB, b1)
	checkPending(t, s, 3)

	steps := []struct {
		name    string
		slug    string
		d       store.Delivery
		due     []store.QueuedDelivery // due by forever afterwards
		pending int
	}{
		{"pending to succeeded", slugA, withStatus(d1, store.DeliverySucceeded),
			[]store.QueuedDelivery{inWorkspace(slugA, d2), inWorkspace(slugB, b1)}, 2},
		{"succeeded again", slugA, withStatus(d1, store.DeliverySucceeded),
			[]store.QueuedDelivery{inWorkspace(slugA, d2), inWorkspace(slugB, b1)}, 2},
		{"pending to failed", slugB, withStatus(b1, store.DeliveryFailed),
			[]store.QueuedDelivery{inWorkspace(slugA, d2)}, 1},
		{"failed to pending", slugB, b1,
			[]store.QueuedDelivery{inWorkspace(slugA, d2), inWorkspace(slugB, b1)}, 2},
		{"pending rescheduled later", slugA, dueDelivery(2, 1, 40),
			[]store.QueuedDelivery{inWorkspace(slugB, b1), inWorkspace(slugA, dueDelivery(2, 1, 40))}, 2},
		{"pending replaced as is", slugA, dueDelivery(2, 1, 40),
			[]store.QueuedDelivery{inWorkspace(slugB, b1), inWorkspace(slugA, dueDelivery(2, 1, 40))}, 2},
		{"pending moved to another endpoint", slugA, dueDelivery(2, 2, 40),
			[]store.QueuedDelivery{inWorkspace(slugB, b1), inWorkspace(slugA, dueDelivery(2, 2, 40))}, 2},
		{"succeeded to pending", slugA, dueDelivery(1, 2, 5),
			[]store.QueuedDelivery{inWorkspace(slugA, dueDelivery(1, 2, 5)), inWorkspace(slugB, b1), inWorkspace(slugA, dueDelivery(2, 2, 40))}, 3},
		{"pending to no status", slugA, withStatus(dueDelivery(1, 2, 5), ""),
			[]store.QueuedDelivery{inWorkspace(slugB, b1), inWorkspace(slugA, dueDelivery(2, 2, 40))}, 2},
		{"new delivery failed at once", slugA, withStatus(dueDelivery(3, 1, 1), store.DeliveryFailed),
			[]store.QueuedDelivery{inWorkspace(slugB, b1), inWorkspace(slugA, dueDelivery(2, 2, 40))}, 2},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			putDeliveries(t, s, step.slug, step.d)
			checkDelivery(t, s, step.slug, step.d)
			checkDue(t, s, forever, 100, step.due)
			checkPending(t, s, step.pending)
			// A rescheduled delivery is not due at its old time.
			checkDue(t, s, at(35), 100, slices.DeleteFunc(slices.Clone(step.due), func(q store.QueuedDelivery) bool {
				return q.DueAt().After(at(35))
			}))
		})
	}
	checkNextDue(t, s, &steps[len(steps)-1].due[0].NextAttemptAt)
}

// testDueDeleteWebhook checks that DeleteWebhook takes the endpoint's
// deliveries out of the due index and the pending count, and nothing else.
func testDueDeleteWebhook(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putWebhooks(t, s, slugA, 1, 2, 3)
	putWebhooks(t, s, slugB, 1)
	a1, a2, a3 := dueDelivery(1, 1, 10), dueDelivery(2, 1, 20), withStatus(dueDelivery(3, 1, 5), store.DeliverySucceeded)
	a4 := dueDelivery(4, 2, 15)
	b1, b2 := dueDelivery(1, 1, 12), dueDelivery(2, 1, 20) // the same ids, another workspace
	putDeliveries(t, s, slugA, a1, a2, a3, a4)
	putDeliveries(t, s, slugB, b1, b2)
	checkPending(t, s, 5)

	update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 1) })
	for _, id := range []int64{1, 2, 3} {
		checkNoDelivery(t, s, slugA, id)
	}
	checkDelivery(t, s, slugA, a4)
	checkDelivery(t, s, slugB, b1)
	checkDue(t, s, forever, 100, []store.QueuedDelivery{
		inWorkspace(slugB, b1), inWorkspace(slugA, a4), inWorkspace(slugB, b2),
	})
	next := at(12)
	checkNextDue(t, s, &next)
	checkPending(t, s, 3)

	// An endpoint without deliveries changes nothing.
	update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 3) })
	checkPending(t, s, 3)

	// Deleting the last endpoints empties the index.
	update(t, s, func(tx store.Tx) error {
		if err := tx.DeleteWebhook(slugA, 2); err != nil {
			return err
		}
		return tx.DeleteWebhook(slugB, 1)
	})
	checkDue(t, s, forever, 100, nil)
	checkNextDue(t, s, nil)
	checkPending(t, s, 0)

	// The ids can be queued again.
	putWebhooks(t, s, slugA, 1)
	putDeliveries(t, s, slugA, a1)
	checkDue(t, s, forever, 100, []store.QueuedDelivery{inWorkspace(slugA, a1)})
	checkPending(t, s, 1)
}

// testDueRollback checks that an Update that fails leaves the due index
// and the pending count as they were, and that the Update saw its own
// writes in them meanwhile.
func testDueRollback(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putWebhooks(t, s, slugA, 1, 2)
	putWebhooks(t, s, slugB, 1)
	putDeliveries(t, s, slugA, dueDelivery(1, 1, 10), dueDelivery(2, 1, 20),
		withStatus(dueDelivery(3, 2, 5), store.DeliveryFailed), dueDelivery(4, 2, 30))
	putDeliveries(t, s, slugB, dueDelivery(1, 1, 15))
	var before dueState
	view(t, s, func(tx store.Tx) (err error) { before, err = readDueState(tx); return err })

	var during dueState
	err := s.Update(t.Context(), func(tx store.Tx) error {
		succeeded := withStatus(dueDelivery(1, 1, 10), store.DeliverySucceeded)
		steps := []func() error{
			func() error { return tx.PutDelivery(slugA, dueDelivery(9, 1, 1)) },  // new, earliest
			func() error { return tx.PutDelivery(slugA, succeeded) },             // leaves
			func() error { return tx.PutDelivery(slugA, dueDelivery(2, 2, 50)) }, // rescheduled, moved
			func() error { return tx.PutDelivery(slugA, dueDelivery(3, 2, 3)) },  // failed to pending
			func() error { return tx.DeleteWebhook(slugB, 1) },
			func() error { return tx.PutWebhook(slugB, webhook(1)) },
			func() error { return tx.PutDelivery(slugB, dueDelivery(1, 1, 99)) },
		}
		for i, step := range steps {
			if err := step(); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
		}
		var err error
		during, err = readDueState(tx)
		if err != nil {
			return err
		}
		return errBoom
	})
	if err != errBoom {
		t.Fatalf("Update error = %v, want errBoom", err)
	}
	wantDuring := []string{slugA + "/9", slugA + "/3", slugA + "/4", slugA + "/2", slugB + "/1"}
	if diff := cmp.Diff(wantDuring, dueNames(during.Due)); diff != "" || during.Pending != 5 || !during.Next.Equal(at(1)) {
		t.Errorf("inside the Update: pending %d, next %v, due mismatch (-want +got):\n%s; want pending 5, next %v",
			during.Pending, during.Next, diff, at(1))
	}
	var after dueState
	view(t, s, func(tx store.Tx) (err error) { after, err = readDueState(tx); return err })
	if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
		t.Errorf("due index changed by a failed Update (-before +after):\n%s", diff)
	}
	checkNoDelivery(t, s, slugA, 9)
	checkDelivery(t, s, slugA, dueDelivery(1, 1, 10))
	checkDelivery(t, s, slugB, dueDelivery(1, 1, 15))
}

// testDueExtremeTimes checks due times at the edges: the zero time (due
// whatever now is) and times before 1970, which must sort first.
func testDueExtremeTimes(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	putWebhooks(t, s, slugA, 1)
	zero := dueDelivery(1, 1, 0)
	zero.NextAttemptAt = time.Time{}
	old := dueDelivery(2, 1, 0)
	old.NextAttemptAt = time.Date(1960, 1, 1, 0, 0, 0, 1000, time.UTC)
	epoch := dueDelivery(3, 1, 0)
	epoch.NextAttemptAt = time.Unix(0, 0).UTC()
	putDeliveries(t, s, slugA, epoch, old, zero, dueDelivery(4, 1, 10))
	checkDue(t, s, time.Time{}, 10, []store.QueuedDelivery{inWorkspace(slugA, zero)})
	checkDue(t, s, at(0), 10, []store.QueuedDelivery{
		inWorkspace(slugA, zero), inWorkspace(slugA, old), inWorkspace(slugA, epoch),
	})
	var next time.Time
	checkNextDue(t, s, &next)
}

// testDueCopies checks that DueDeliveries returns copies.
func testDueCopies(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	putWebhooks(t, s, slugA, 1)
	d := dueDelivery(1, 1, 10)
	putDeliveries(t, s, slugA, d)
	got := due(t, s, at(10), 1)
	if len(got) != 1 {
		t.Fatalf("DueDeliveries = %v, want one", dueNames(got))
	}
	got[0].Payload[0] = 'X'
	checkDue(t, s, at(10), 1, []store.QueuedDelivery{inWorkspace(slugA, d)})
}

// testDueConcurrentClaims runs concurrent dispatchers that each claim due
// deliveries one Update at a time, by leasing the first due one: since
// Update is serializable, every delivery is claimed exactly once.
func testDueConcurrentClaims(t *testing.T, newStore func(t *testing.T) store.Store) {
	const workers, perWorkspace = 8, 20
	s := newStoreWith(t, newStore, slugA, slugB)
	for _, slug := range []string{slugA, slugB} {
		putWebhooks(t, s, slug, 1)
		var ds []store.Delivery
		for id := int64(1); id <= perWorkspace; id++ {
			ds = append(ds, dueDelivery(id, 1, int(id)))
		}
		putDeliveries(t, s, slug, ds...)
	}
	now := at(1000)
	var mu sync.Mutex
	claims := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owner := fmt.Sprintf("worker-%d", w)
			// A store that returned a claimed delivery again would keep a
			// worker busy forever: no worker can claim more than exist.
			for range 2*perWorkspace + 1 {
				var claimed []store.QueuedDelivery
				err := s.Update(context.Background(), func(tx store.Tx) error {
					var err error
					if claimed, err = tx.DueDeliveries(now, 1); err != nil || len(claimed) == 0 {
						return err
					}
					d := claimed[0].Delivery
					d.LeaseUntil, d.LeaseOwner = forever, owner
					return tx.PutDelivery(claimed[0].Workspace, d)
				})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(claimed) == 0 {
					return
				}
				mu.Lock()
				claims[dueNames(claimed)[0]]++
				mu.Unlock()
			}
			t.Errorf("%s claimed more deliveries than were queued", owner)
		})
	}
	wg.Wait()
	if len(claims) != 2*perWorkspace {
		t.Errorf("%d deliveries claimed, want %d", len(claims), 2*perWorkspace)
	}
	for name, n := range claims {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times", name, n)
		}
	}
	checkDue(t, s, now, 100, nil)
	checkPending(t, s, 2*perWorkspace)
	next := forever
	checkNextDue(t, s, &next)
}

// testClaimDelivery checks ClaimDelivery outside contention: it reads the
// delivery as Delivery does, reports a missing one as not claimable, and
// is a write.
func testClaimDelivery(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putWebhooks(t, s, slugA, 1)
	putWebhooks(t, s, slugB, 1)
	d, done := dueDelivery(1, 1, 10), withStatus(dueDelivery(2, 1, 10), store.DeliverySucceeded)
	mail := asMail(dueDelivery(3, 0, 5))
	putDeliveries(t, s, slugA, d, done, mail)
	other := dueDelivery(7, 1, 10)
	putDeliveries(t, s, slugB, other)

	for _, c := range []struct {
		name   string
		slug   string
		id     int64
		want   store.Delivery
		wantOK bool
	}{
		{"pending", slugA, 1, d, true},
		{"succeeded", slugA, 2, done, true}, // a read: the caller decides
		{"mail job", slugA, 3, mail, true},
		{"missing", slugA, 4, store.Delivery{}, false},
		{"only in another workspace", slugA, 7, store.Delivery{}, false},
		{"zero id", slugA, 0, store.Delivery{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got store.Delivery
			var ok bool
			update(t, s, func(tx store.Tx) (err error) {
				got, ok, err = tx.ClaimDelivery(c.slug, c.id)
				return err
			})
			if ok != c.wantOK {
				t.Errorf("ClaimDelivery(%q, %d) ok = %t, want %t", c.slug, c.id, ok, c.wantOK)
			}
			if diff := cmp.Diff(c.want, got, equateEmpty); diff != "" {
				t.Errorf("ClaimDelivery(%q, %d) mismatch (-want +got):\n%s", c.slug, c.id, diff)
			}
		})
	}

	t.Run("ThenLease", func(t *testing.T) {
		leased := d
		leased.LeaseUntil, leased.LeaseOwner = at(100), "dispatcher-x"
		update(t, s, func(tx store.Tx) error {
			cur, ok, err := tx.ClaimDelivery(slugA, 1)
			if err != nil || !ok {
				return fmt.Errorf("ClaimDelivery = %t, %v; want the delivery", ok, err)
			}
			cur.LeaseUntil, cur.LeaseOwner = leased.LeaseUntil, leased.LeaseOwner
			return tx.PutDelivery(slugA, cur)
		})
		checkDelivery(t, s, slugA, leased)
		checkDue(t, s, at(99), 10, []store.QueuedDelivery{inWorkspace(slugA, mail), inWorkspace(slugB, other)})
	})

	t.Run("Errors", func(t *testing.T) {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			_, _, err := tx.ClaimDelivery(slugMissing, 1)
			return err
		})
		checkErr(t, "ClaimDelivery in a missing workspace", err, store.ErrNotFound)
		err = s.View(t.Context(), func(tx store.Tx) error {
			_, _, err := tx.ClaimDelivery(slugA, 1)
			return err
		})
		checkErr(t, "ClaimDelivery in View", err, store.ErrReadOnly)
	})
}

// testConcurrentClaimDelivery runs concurrent dispatchers that plan from a
// View of the due deliveries, as the identity package's dispatcher does,
// and claim in an Update with ClaimDelivery, skipping what another holds
// or has leased: every delivery is claimed exactly once.
func testConcurrentClaimDelivery(t *testing.T, newStore func(t *testing.T) store.Store) {
	const workers, perWorkspace, window = 6, 15, 4
	s := newStoreWith(t, newStore, slugA, slugB)
	for _, slug := range []string{slugA, slugB} {
		putWebhooks(t, s, slug, 1)
		var ds []store.Delivery
		for id := int64(1); id <= perWorkspace; id++ {
			ds = append(ds, dueDelivery(id, 1, int(id)))
		}
		putDeliveries(t, s, slug, ds...)
	}
	now := at(1000)
	var mu sync.Mutex
	claims := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owner := fmt.Sprintf("worker-%d", w)
			// A round may find its whole plan taken by others still
			// claiming it; a store that kept returning leased deliveries
			// as due would keep a worker busy forever.
			const rounds = 100 * perWorkspace
			for range rounds {
				var plan []store.QueuedDelivery
				if err := s.View(context.Background(), func(tx store.Tx) (err error) {
					plan, err = tx.DueDeliveries(now, window)
					return err
				}); err != nil {
					t.Errorf("plan: %v", err)
					return
				}
				if len(plan) == 0 {
					return
				}
				var claimed []store.QueuedDelivery
				err := s.Update(context.Background(), func(tx store.Tx) error {
					claimed = nil
					for _, q := range plan {
						cur, ok, err := tx.ClaimDelivery(q.Workspace, q.ID)
						if err != nil {
							return err
						}
						if !ok || cur.Status != store.DeliveryPending || cur.DueAt().After(now) {
							continue // taken
						}
						cur.LeaseUntil, cur.LeaseOwner = forever, owner
						if err := tx.PutDelivery(q.Workspace, cur); err != nil {
							return err
						}
						claimed = append(claimed, store.QueuedDelivery{Workspace: q.Workspace, Delivery: cur})
					}
					return nil
				})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				mu.Lock()
				for _, name := range dueNames(claimed) {
					claims[name]++
				}
				mu.Unlock()
				if len(claimed) == 0 {
					time.Sleep(time.Millisecond) // let the others commit
				}
			}
			t.Errorf("%s still found due deliveries after %d rounds", owner, rounds)
		})
	}
	wg.Wait()
	if len(claims) != 2*perWorkspace {
		t.Errorf("%d deliveries claimed, want %d", len(claims), 2*perWorkspace)
	}
	for name, n := range claims {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times", name, n)
		}
	}
	checkDue(t, s, now, 100, nil)
	checkPending(t, s, 2*perWorkspace)
}

// checkWorkspaceQueue checks WorkspaceQueue, with the limit, of each
// workspace of want.
func checkWorkspaceQueue(t *testing.T, s store.Store, limit int, want map[string]store.WorkspaceQueue) {
	t.Helper()
	got := map[string]store.WorkspaceQueue{}
	view(t, s, func(tx store.Tx) error {
		for slug := range want {
			q, err := tx.WorkspaceQueue(slug, limit)
			if err != nil {
				t.Errorf("WorkspaceQueue(%q, %d): %v", slug, limit, err)
				continue
			}
			if !q.NextDue.IsZero() && q.NextDue.Location() != time.UTC {
				t.Errorf("WorkspaceQueue(%q, %d).NextDue = %v, want it in UTC", slug, limit, q.NextDue)
			}
			got[slug] = q
		}
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WorkspaceQueue(_, %d) (-want +got):\n%s", limit, diff)
	}
}

// testWorkspaceQueue checks WorkspaceQueue: a walk of the due index from
// its start over at most limit entries, counting one workspace's pending
// jobs (webhook and mail alike, finished ones never) and taking the
// DueAt of the first (a lease's end when later than the next attempt);
// Complete exactly when the walk reached the index's end. The index moves
// with PutDelivery, DeleteWebhook, DeleteUser and DeleteWorkspace, and not
// with a transaction that fails.
func testWorkspaceQueue(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	empty := store.WorkspaceQueue{Complete: true}
	for _, limit := range []int{100, 1, 0, -1} {
		checkWorkspaceQueue(t, s, limit, map[string]store.WorkspaceQueue{slugA: empty, slugB: empty})
	}
	view(t, s, func(tx store.Tx) error {
		if _, err := tx.WorkspaceQueue(slugMissing, 100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("WorkspaceQueue(%q) = %v, want ErrNotFound", slugMissing, err)
		}
		return nil
	})

	// In due order: a6@3 a2@10 b1@20 a3@30 b3@40 a1@50 b2@70.
	putWebhooks(t, s, slugA, 1, 2)
	putWebhooks(t, s, slugB, 1)
	putUsers(t, s, slugA, user(7, "u7", "u7@example.com", "U Seven"))
	mail := mailJob(6, 7)
	mail.NextAttemptAt, mail.LeaseUntil, mail.LeaseOwner = at(3), time.Time{}, ""
	putDeliveries(t, s, slugA, dueDelivery(1, 1, 50), dueDelivery(2, 1, 10), dueDelivery(3, 2, 30),
		withStatus(dueDelivery(4, 2, 1), store.DeliveryFailed), withStatus(dueDelivery(5, 1, 1), store.DeliverySucceeded),
		mail, withStatus(mailJob(8, 0), store.DeliveryFailed))
	leased := dueDelivery(2, 1, 5)
	leased.LeaseUntil, leased.LeaseOwner = at(70), "dispatcher"
	putDeliveries(t, s, slugB, dueDelivery(1, 1, 20), leased, dueDelivery(3, 1, 40))
	for _, step := range []struct {
		limit int
		want  map[string]store.WorkspaceQueue
	}{
		{100, map[string]store.WorkspaceQueue{
			slugA: {Pending: 4, NextDue: at(3), Complete: true},
			slugB: {Pending: 3, NextDue: at(20), Complete: true}, // b2 is due at its lease's end
		}},
		{7, map[string]store.WorkspaceQueue{ // the walk ends at the index's last entry
			slugA: {Pending: 4, NextDue: at(3), Complete: true},
			slugB: {Pending: 3, NextDue: at(20), Complete: true},
		}},
		{6, map[string]store.WorkspaceQueue{
			slugA: {Pending: 4, NextDue: at(3)},
			slugB: {Pending: 2, NextDue: at(20)},
		}},
		{3, map[string]store.WorkspaceQueue{
			slugA: {Pending: 2, NextDue: at(3)},
			slugB: {Pending: 1, NextDue: at(20)},
		}},
		{2, map[string]store.WorkspaceQueue{
			slugA: {Pending: 2, NextDue: at(3)},
			slugB: {}, // none of b's among the first two
		}},
		{0, map[string]store.WorkspaceQueue{slugA: {}, slugB: {}}},
		{-1, map[string]store.WorkspaceQueue{slugA: {}, slugB: {}}},
	} {
		checkWorkspaceQueue(t, s, step.limit, step.want)
	}

	// A job that succeeds leaves; one rescheduled moves:
	// a6@3 a3@5 b1@20 b3@40 a1@50 b2@70.
	putDeliveries(t, s, slugA, withStatus(dueDelivery(2, 1, 10), store.DeliverySucceeded), dueDelivery(3, 2, 5))
	checkWorkspaceQueue(t, s, 100, map[string]store.WorkspaceQueue{slugA: {Pending: 3, NextDue: at(3), Complete: true}})
	checkWorkspaceQueue(t, s, 3, map[string]store.WorkspaceQueue{
		slugA: {Pending: 2, NextDue: at(3)},
		slugB: {Pending: 1, NextDue: at(20)},
	})

	// A transaction that fails changes nothing.
	err := s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.PutDelivery(slugA, dueDelivery(9, 1, 1)); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want errBoom", err)
	}
	checkWorkspaceQueue(t, s, 100, map[string]store.WorkspaceQueue{slugA: {Pending: 3, NextDue: at(3), Complete: true}})

	// a1@50 alone is left of a's: DeleteUser takes the mail job,
	// DeleteWebhook the endpoint's.
	update(t, s, func(tx store.Tx) error { return tx.DeleteUser(slugA, 7) })
	checkWorkspaceQueue(t, s, 100, map[string]store.WorkspaceQueue{slugA: {Pending: 2, NextDue: at(5), Complete: true}})
	update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 2) })
	checkWorkspaceQueue(t, s, 100, map[string]store.WorkspaceQueue{
		slugA: {Pending: 1, NextDue: at(50), Complete: true},
		slugB: {Pending: 3, NextDue: at(20), Complete: true},
	})
	checkPending(t, s, 4)

	// A workspace deleted leaves the index; created again, it starts
	// empty.
	update(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace(slugB) })
	view(t, s, func(tx store.Tx) error {
		if _, err := tx.WorkspaceQueue(slugB, 100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("WorkspaceQueue of a deleted workspace = %v, want ErrNotFound", err)
		}
		return nil
	})
	update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace(slugB)) })
	checkWorkspaceQueue(t, s, 1, map[string]store.WorkspaceQueue{
		slugA: {Pending: 1, NextDue: at(50), Complete: true},
		slugB: empty,
	})
}
