package boltstore_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// TestOpenDropsWorkspaceDueIndexes: a file of the release whose
// workspaces kept a due index and a pending count of their own (which
// every enqueue wrote) has both deleted when it opens, and WorkspaceQueue
// then answers from delivery_due: the pending jobs of each workspace in
// due order, the finished ones left out, the index moving with the jobs.
func TestOpenDropsWorkspaceDueIndexes(t *testing.T) {
	const other = "globex"
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	job := func(id int64, status store.DeliveryStatus, due time.Duration) store.Delivery {
		return store.Delivery{ID: id, Kind: store.JobWebhook, EndpointID: 1, EventID: "evt", EventType: "user.created",
			Payload: []byte("{}"), CreatedAt: testTime, Status: status, NextAttemptAt: testTime.Add(due)}
	}
	hook := store.Webhook{ID: 1, URL: "https://hooks.example.com/", Events: []string{"user.created"}, Enabled: true, CreatedAt: testTime}
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}),
			tx.PutWorkspace(store.Workspace{Slug: other, CreatedAt: testTime}),
			tx.PutWebhook(testSlug, hook),
			tx.PutWebhook(other, hook),
			tx.PutDelivery(testSlug, job(1, store.DeliveryPending, time.Hour)),
			tx.PutDelivery(testSlug, job(2, store.DeliveryPending, time.Minute)),
			tx.PutDelivery(testSlug, job(3, store.DeliverySucceeded, time.Second)),
			tx.PutDelivery(other, job(1, store.DeliveryPending, 30*time.Second)),
		)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	boltstore.WriteLegacySpaceDue(t, path, testSlug, map[int64]time.Time{1: testTime.Add(time.Hour), 2: testTime.Add(time.Minute)})
	boltstore.WriteLegacySpaceDue(t, path, other, map[int64]time.Time{1: testTime.Add(30 * time.Second)})
	type legacy struct{ Entries, Count int }
	held := func() map[string]legacy {
		out := map[string]legacy{}
		for _, slug := range []string{testSlug, other} {
			e, c := boltstore.LegacySpaceDue(t, path, slug)
			out[slug] = legacy{e, c}
		}
		return out
	}
	if diff := cmp.Diff(map[string]legacy{testSlug: {2, 2}, other: {1, 1}}, held()); diff != "" {
		t.Fatalf("the file of the previous release (-want +got):\n%s", diff)
	}

	s = openStore(t, path, nil)
	queues := func(limit int) map[string]store.WorkspaceQueue {
		out := map[string]store.WorkspaceQueue{}
		mustView(t, s, func(tx store.Tx) error {
			for _, slug := range []string{testSlug, other} {
				q, err := tx.WorkspaceQueue(slug, limit)
				if err != nil {
					return err
				}
				out[slug] = q
			}
			return nil
		})
		return out
	}
	want := map[string]store.WorkspaceQueue{
		testSlug: {Pending: 2, NextDue: testTime.Add(time.Minute), Complete: true},
		other:    {Pending: 1, NextDue: testTime.Add(30 * time.Second), Complete: true},
	}
	if diff := cmp.Diff(want, queues(100)); diff != "" {
		t.Errorf("opened (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]store.WorkspaceQueue{testSlug: {Pending: 1, NextDue: testTime.Add(time.Minute)}, other: {Pending: 1, NextDue: testTime.Add(30 * time.Second)}}, queues(2)); diff != "" {
		t.Errorf("the first two due (-want +got):\n%s", diff)
	}
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutDelivery(testSlug, job(2, store.DeliveryFailed, time.Minute)) })
	want[testSlug] = store.WorkspaceQueue{Pending: 1, NextDue: testTime.Add(time.Hour), Complete: true}
	if diff := cmp.Diff(want, queues(100)); diff != "" {
		t.Errorf("after a job failed (-want +got):\n%s", diff)
	}
	var pending int
	mustView(t, s, func(tx store.Tx) (err error) {
		pending, err = tx.PendingDeliveries()
		return err
	})
	if pending != 2 {
		t.Errorf("PendingDeliveries = %d, want 2", pending)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]legacy{testSlug: {-1, -1}, other: {-1, -1}}, held()); diff != "" {
		t.Errorf("after Open (-want +got):\n%s", diff)
	}
}
