package boltstore_test

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/identitylib/identity/store"
)

// BenchmarkSubscribers compares, in a workspace with 0 or 3,000 endpoints
// subscribed to user.created, finding the endpoints of user.role.assigned
// (none) through WebhooksForEvent with reading every endpoint (Webhooks),
// which the outbox did before.
func BenchmarkSubscribers(b *testing.B) {
	for _, n := range []int{0, 3000} {
		s := openStore(b, filepath.Join(b.TempDir(), "db"), nil)
		mustUpdate(b, s, func(tx store.Tx) error {
			if err := tx.PutWorkspace(store.Workspace{Slug: testSlug}); err != nil {
				return err
			}
			for id := int64(1); id <= int64(n); id++ {
				if err := tx.PutWebhook(testSlug, store.Webhook{ID: id, URL: "https://hooks.example.com/a", Events: []string{"user.created"}, Enabled: true}); err != nil {
					return err
				}
			}
			return nil
		})
		b.Run(fmt.Sprint("WebhooksForEvent/", n), func(b *testing.B) {
			for b.Loop() {
				mustView(b, s, func(tx store.Tx) error {
					_, err := tx.WebhooksForEvent(testSlug, "user.role.assigned")
					return err
				})
			}
		})
		b.Run(fmt.Sprint("AllWebhooks/", n), func(b *testing.B) {
			for b.Loop() {
				mustView(b, s, func(tx store.Tx) error {
					_, _, err := tx.Webhooks(testSlug, 0, math.MaxInt)
					return err
				})
			}
		})
	}
}
