package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// testWebhooksForEvent checks that WebhooksForEvent follows PutWebhook
// (new endpoints, changed events) and DeleteWebhook, per workspace.
func testWebhooksForEvent(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	hook := func(id int64, events ...string) store.Webhook {
		w := webhook(id)
		w.Events = events
		return w
	}
	put := func(slug string, ws ...store.Webhook) {
		t.Helper()
		update(t, s, func(tx store.Tx) error {
			for _, w := range ws {
				if err := tx.PutWebhook(slug, w); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// ids returns, for each event type, the ids WebhooksForEvent returns
	// in the workspace, and checks the first endpoint whole.
	ids := func(slug string, want map[int64]store.Webhook) map[string][]int64 {
		t.Helper()
		out := map[string][]int64{}
		view(t, s, func(tx store.Tx) error {
			for _, e := range []string{"user.created", "user.updated", "session.created", "user.deleted"} {
				ws, err := tx.WebhooksForEvent(slug, e)
				if err != nil {
					return err
				}
				for _, w := range ws {
					out[e] = append(out[e], w.ID)
					if diff := cmp.Diff(want[w.ID], w); diff != "" {
						t.Errorf("WebhooksForEvent(%q, %q): endpoint %d (-want +got):\n%s", slug, e, w.ID, diff)
					}
				}
			}
			return nil
		})
		return out
	}
	h1, h2, h3 := hook(1, "user.created", "user.updated"), hook(2, "user.updated"), hook(3, "user.created")
	h3.Enabled = false
	put(slugA, h1, h2, h3)
	put(slugB, hook(1, "user.deleted"))
	check := func(step string, slug string, hooks map[int64]store.Webhook, want map[string][]int64) {
		t.Helper()
		if diff := cmp.Diff(want, ids(slug, hooks)); diff != "" {
			t.Errorf("%s: endpoints by event in %q (-want +got):\n%s", step, slug, diff)
		}
	}
	check("created", slugA, map[int64]store.Webhook{1: h1, 2: h2, 3: h3},
		map[string][]int64{"user.created": {1, 3}, "user.updated": {1, 2}})
	h1b := hook(1, "session.created", "user.updated")
	put(slugA, h1b)
	check("events of 1 changed", slugA, map[int64]store.Webhook{1: h1b, 2: h2, 3: h3},
		map[string][]int64{"user.created": {3}, "user.updated": {1, 2}, "session.created": {1}})
	update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 3) })
	update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 2) })
	check("2 and 3 deleted", slugA, map[int64]store.Webhook{1: h1b},
		map[string][]int64{"user.updated": {1}, "session.created": {1}})
	check("the other workspace", slugB, map[int64]store.Webhook{1: hook(1, "user.deleted")},
		map[string][]int64{"user.deleted": {1}})
	view(t, s, func(tx store.Tx) error {
		_, err := tx.WebhooksForEvent(slugMissing, "user.created")
		checkErr(t, "WebhooksForEvent in a missing workspace", err, store.ErrNotFound)
		return nil
	})
}
