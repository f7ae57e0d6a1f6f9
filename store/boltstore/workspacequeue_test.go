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

// TestWorkspaceQueueInOlderFiles: a file whose workspace lacks its own
// due index (written before WorkspaceQueue) has it built from its jobs
// when it opens: the pending ones counted, the earliest first, the
// finished ones left out; and the index then moves with the jobs.
func TestWorkspaceQueueInOlderFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openStore(t, path, nil)
	job := func(id int64, status store.DeliveryStatus, due time.Duration) store.Delivery {
		return store.Delivery{ID: id, Kind: store.JobWebhook, EndpointID: 1, EventID: "evt", EventType: "user.created",
			Payload: []byte("{}"), CreatedAt: testTime, Status: status, NextAttemptAt: testTime.Add(due)}
	}
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}),
			tx.PutWebhook(testSlug, store.Webhook{ID: 1, URL: "https://hooks.example.com/", Events: []string{"user.created"}, Enabled: true, CreatedAt: testTime}),
			tx.PutDelivery(testSlug, job(1, store.DeliveryPending, time.Hour)),
			tx.PutDelivery(testSlug, job(2, store.DeliveryPending, time.Minute)),
			tx.PutDelivery(testSlug, job(3, store.DeliverySucceeded, time.Second)),
		)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	boltstore.DropBuckets(t, path, testSlug, "due")
	s = openStore(t, path, nil)
	queue := func() store.WorkspaceQueue {
		var q store.WorkspaceQueue
		mustView(t, s, func(tx store.Tx) (err error) {
			q, err = tx.WorkspaceQueue(testSlug)
			return err
		})
		return q
	}
	if diff := cmp.Diff(store.WorkspaceQueue{Pending: 2, NextDue: testTime.Add(time.Minute)}, queue()); diff != "" {
		t.Errorf("built (-want +got):\n%s", diff)
	}
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutDelivery(testSlug, job(2, store.DeliveryFailed, time.Minute)) })
	if diff := cmp.Diff(store.WorkspaceQueue{Pending: 1, NextDue: testTime.Add(time.Hour)}, queue()); diff != "" {
		t.Errorf("after a job failed (-want +got):\n%s", diff)
	}
}
