package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// webhook returns an endpoint record with every field set.
func webhook(id int64) store.Webhook {
	return store.Webhook{
		ID:          id,
		URL:         fmt.Sprintf("https://hooks.example.com/%d", id),
		Description: fmt.Sprintf("endpoint %d", id),
		Events:      []string{"user.created", "user.updated"},
		Enabled:     id%2 == 1,
		CreatedAt:   at(int(id)),
		Secret:      fmt.Sprintf("whsec_%d", id),
	}
}

// delivery returns a delivery record with every field set.
func delivery(id, endpointID int64) store.Delivery {
	return store.Delivery{
		ID:            id,
		EndpointID:    endpointID,
		EventID:       fmt.Sprintf("evt_%d", id),
		EventType:     "user.created",
		Payload:       []byte(fmt.Sprintf(`{"id":%d}`, id)),
		CreatedAt:     at(int(id)),
		Attempts:      int(id % 4),
		NextAttemptAt: at(int(id) + 60),
	}
}

// testWebhooks checks PutWebhook, Webhook, Webhooks and DeleteWebhook.
func testWebhooks(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		bare := store.Webhook{ID: 2, URL: "http://localhost:8080/hook"} // nil events, zero time
		want := []store.Webhook{webhook(1), bare, webhook(3)}
		want[2].Events = []string{}
		update(t, s, func(tx store.Tx) error {
			for _, w := range want {
				if err := tx.PutWebhook(slugA, w); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			for _, w := range want {
				got, err := tx.Webhook(slugA, w.ID)
				if err != nil {
					t.Errorf("Webhook(%d): %v", w.ID, err)
					continue
				}
				if diff := cmp.Diff(w, got, equateEmpty); diff != "" {
					t.Errorf("Webhook(%d) mismatch (-want +got):\n%s", w.ID, diff)
				}
			}
			got, total, err := tx.Webhooks(slugA, 0, 10)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" || total != 3 {
				t.Errorf("Webhooks total = %d, want 3; mismatch (-want +got):\n%s", total, diff)
			}
			return nil
		})
	})

	t.Run("Replace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, webhook(1)) })
		changed := store.Webhook{
			ID:          1,
			URL:         "https://new.example.com/",
			Description: "",
			Events:      []string{"user.deleted"},
			Enabled:     false,
			CreatedAt:   at(1),
			Secret:      "rotated",
		}
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, changed) })
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Webhook(slugA, 1)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(changed, got); diff != "" {
				t.Errorf("Webhook(1) mismatch (-want +got):\n%s", diff)
			}
			_, total, err := tx.Webhooks(slugA, 0, 10)
			if err != nil || total != 1 {
				t.Errorf("Webhooks total = %d, %v; want 1", total, err)
			}
			return nil
		})
	})

	t.Run("Paging", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		ids := []int64{21, 3, 34, 2, 13, 8, 5}
		update(t, s, func(tx store.Tx) error {
			for _, id := range ids[:4] {
				if err := tx.PutWebhook(slugA, webhook(id)); err != nil {
					return err
				}
			}
			return tx.PutWebhook(slugB, webhook(100))
		})
		update(t, s, func(tx store.Tx) error {
			for _, id := range ids[4:] {
				if err := tx.PutWebhook(slugA, webhook(id)); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			for _, c := range []struct {
				offset, limit int
				want          []int64
			}{
				{0, 3, []int64{2, 3, 5}},
				{3, 3, []int64{8, 13, 21}},
				{6, 3, []int64{34}},
				{2, 1, []int64{5}},
				{0, 7, []int64{2, 3, 5, 8, 13, 21, 34}},
				{0, 100, []int64{2, 3, 5, 8, 13, 21, 34}},
				{1, 100, []int64{3, 5, 8, 13, 21, 34}},
				{7, 3, nil},
				{100, 5, nil},
				{0, 0, nil},
				{3, 0, nil},
			} {
				got, total, err := tx.Webhooks(slugA, c.offset, c.limit)
				if err != nil {
					return fmt.Errorf("Webhooks(%d, %d): %w", c.offset, c.limit, err)
				}
				var gotIDs []int64
				var want []store.Webhook
				for i, w := range got {
					gotIDs = append(gotIDs, w.ID)
					if i < len(c.want) {
						want = append(want, webhook(c.want[i]))
					}
				}
				if diff := cmp.Diff(c.want, gotIDs, equateEmpty); diff != "" {
					t.Errorf("Webhooks(%d, %d) ids mismatch (-want +got):\n%s", c.offset, c.limit, diff)
				} else if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
					t.Errorf("Webhooks(%d, %d) mismatch (-want +got):\n%s", c.offset, c.limit, diff)
				}
				if total != 7 {
					t.Errorf("Webhooks(%d, %d) total = %d, want 7", c.offset, c.limit, total)
				}
			}
			got, total, err := tx.Webhooks(slugB, 0, 10)
			if err != nil || total != 1 || len(got) != 1 || got[0].ID != 100 {
				t.Errorf("Webhooks(%q) = %v, %d, %v; want endpoint 100 alone", slugB, got, total, err)
			}
			return nil
		})
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error {
			for _, id := range []int64{1, 2, 3} {
				if err := tx.PutWebhook(slugA, webhook(id)); err != nil {
					return err
				}
			}
			return tx.PutWebhook(slugB, webhook(2))
		})
		update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 2) })
		view(t, s, func(tx store.Tx) error {
			_, err := tx.Webhook(slugA, 2)
			checkErr(t, "Webhook(deleted)", err, store.ErrNotFound)
			got, total, err := tx.Webhooks(slugA, 0, 10)
			if err != nil {
				return err
			}
			if diff := cmp.Diff([]store.Webhook{webhook(1), webhook(3)}, got); diff != "" || total != 2 {
				t.Errorf("Webhooks total = %d, want 2; mismatch (-want +got):\n%s", total, diff)
			}
			if _, err := tx.Webhook(slugB, 2); err != nil {
				t.Errorf("Webhook(%q, 2) of another workspace: %v", slugB, err)
			}
			return nil
		})
		for _, c := range []struct {
			slug string
			id   int64
		}{{slugA, 2}, {slugA, 99}, {slugB, 1}} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.DeleteWebhook(c.slug, c.id)
				return nil
			})
			checkErr(t, fmt.Sprintf("DeleteWebhook(%q, %d)", c.slug, c.id), err, store.ErrNotFound)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugB, webhook(1)) })
		view(t, s, func(tx store.Tx) error {
			_, err := tx.Webhook(slugA, 1)
			checkErr(t, "Webhook of another workspace", err, store.ErrNotFound)
			_, err = tx.Webhook(slugA, 0)
			checkErr(t, "Webhook(0)", err, store.ErrNotFound)
			got, total, err := tx.Webhooks(slugA, 0, 10)
			if err != nil || total != 0 || len(got) != 0 {
				t.Errorf("Webhooks of an empty workspace = %v, %d, %v; want none", got, total, err)
			}
			return nil
		})
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		w := webhook(1)
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, w) })
		w.Events[0] = "changed.by.caller"
		var got store.Webhook
		var list []store.Webhook
		view(t, s, func(tx store.Tx) error {
			var err error
			if got, err = tx.Webhook(slugA, 1); err != nil {
				return err
			}
			list, _, err = tx.Webhooks(slugA, 0, 10)
			return err
		})
		if diff := cmp.Diff(webhook(1), got); diff != "" {
			t.Fatalf("Webhook after the caller changed its Events (-want +got):\n%s", diff)
		}
		got.Events[0] = "changed.after.read"
		list[0].Events[1] = "changed.after.list"
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.Webhook(slugA, 1)
			return err
		})
		if diff := cmp.Diff(webhook(1), got); diff != "" {
			t.Errorf("Webhook after the caller changed returned Events (-want +got):\n%s", diff)
		}
	})
}

// testDeliveries checks PutDelivery and Deliveries, and that DeleteWebhook
// removes the endpoint's deliveries.
func testDeliveries(t *testing.T, newStore func(t *testing.T) store.Store) {
	// deliveries reads the endpoint's deliveries.
	deliveries := func(t *testing.T, s store.Store, slug string, endpointID int64) []store.Delivery {
		t.Helper()
		var got []store.Delivery
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.Deliveries(slug, endpointID)
			return err
		})
		return got
	}
	check := func(t *testing.T, s store.Store, slug string, endpointID int64, want []store.Delivery) {
		t.Helper()
		if diff := cmp.Diff(want, deliveries(t, s, slug, endpointID), equateEmpty); diff != "" {
			t.Errorf("Deliveries(%q, %d) mismatch (-want +got):\n%s", slug, endpointID, diff)
		}
	}
	// setup creates endpoints 1, 2 and 3 in slugA (5, 2, 9 queued for 1;
	// 3, 7 for 2; none for 3) and endpoint 1 in slugB with delivery 4.
	setup := func(t *testing.T) store.Store {
		t.Helper()
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error {
			for _, id := range []int64{1, 2, 3} {
				if err := tx.PutWebhook(slugA, webhook(id)); err != nil {
					return err
				}
			}
			if err := tx.PutWebhook(slugB, webhook(1)); err != nil {
				return err
			}
			for _, d := range []store.Delivery{delivery(5, 1), delivery(3, 2), delivery(2, 1)} {
				if err := tx.PutDelivery(slugA, d); err != nil {
					return err
				}
			}
			return tx.PutDelivery(slugB, delivery(4, 1))
		})
		update(t, s, func(tx store.Tx) error {
			for _, d := range []store.Delivery{delivery(9, 1), delivery(7, 2)} {
				if err := tx.PutDelivery(slugA, d); err != nil {
					return err
				}
			}
			return nil
		})
		return s
	}

	t.Run("RoundTripAscending", func(t *testing.T) {
		s := setup(t)
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), delivery(5, 1), delivery(9, 1)})
		check(t, s, slugA, 2, []store.Delivery{delivery(3, 2), delivery(7, 2)})
		check(t, s, slugA, 3, nil)
		check(t, s, slugB, 1, []store.Delivery{delivery(4, 1)})
	})

	t.Run("ZeroValues", func(t *testing.T) {
		s := setup(t)
		bare := store.Delivery{ID: 11, EndpointID: 3} // nil payload, zero times
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, bare) })
		check(t, s, slugA, 3, []store.Delivery{bare})
	})

	t.Run("Replace", func(t *testing.T) {
		s := setup(t)
		retried := delivery(5, 1)
		retried.Attempts = 3
		retried.NextAttemptAt = at(3600)
		retried.Payload = []byte(`{"id":5,"retry":true}`)
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, retried) })
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), retried, delivery(9, 1)})
	})

	t.Run("ReplaceMovesBetweenEndpoints", func(t *testing.T) {
		// A delivery is identified by its id alone.
		s := setup(t)
		moved := delivery(5, 2)
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, moved) })
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), delivery(9, 1)})
		check(t, s, slugA, 2, []store.Delivery{delivery(3, 2), moved, delivery(7, 2)})
	})

	t.Run("EndpointMustExist", func(t *testing.T) {
		s := setup(t)
		for _, c := range []struct {
			slug string
			d    store.Delivery
		}{
			{slugA, delivery(20, 4)},  // no endpoint 4
			{slugB, delivery(21, 2)},  // endpoint 2 only in another workspace
			{slugA, delivery(5, 99)},  // replacing onto a missing endpoint
			{slugA, delivery(22, 0)},  // zero endpoint
			{slugA, delivery(23, -1)}, // negative endpoint
		} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.PutDelivery(c.slug, c.d)
				return nil // commit: the refused PutDelivery must have written nothing
			})
			checkErr(t, fmt.Sprintf("PutDelivery(%q, endpoint %d)", c.slug, c.d.EndpointID), err, store.ErrNotFound)
		}
		// Creating the endpoints afterwards shows nothing was queued for them.
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutWebhook(slugA, webhook(4)); err != nil {
				return err
			}
			if err := tx.PutWebhook(slugA, webhook(99)); err != nil {
				return err
			}
			return tx.PutWebhook(slugB, webhook(2))
		})
		check(t, s, slugA, 4, nil)
		check(t, s, slugA, 99, nil)
		check(t, s, slugB, 2, nil)
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), delivery(5, 1), delivery(9, 1)})
	})

	t.Run("DeleteWebhookRemovesDeliveries", func(t *testing.T) {
		s := setup(t)
		update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 1) })
		view(t, s, func(tx store.Tx) error {
			got, err := tx.Deliveries(slugA, 1)
			if len(got) != 0 || (err != nil && !errors.Is(err, store.ErrNotFound)) {
				t.Errorf("Deliveries of a deleted endpoint = %v, %v; want none", got, err)
			}
			return nil
		})
		check(t, s, slugA, 2, []store.Delivery{delivery(3, 2), delivery(7, 2)})
		check(t, s, slugB, 1, []store.Delivery{delivery(4, 1)})
		// A new endpoint with the same id starts with an empty queue.
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, webhook(1)) })
		check(t, s, slugA, 1, nil)
		// The deleted deliveries' ids are free: putting one again creates it
		// on its new endpoint only.
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, delivery(5, 3)) })
		check(t, s, slugA, 3, []store.Delivery{delivery(5, 3)})
		check(t, s, slugA, 1, nil)
	})

	t.Run("Copies", func(t *testing.T) {
		s := setup(t)
		d := delivery(30, 3)
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, d) })
		d.Payload[0] = 'X'
		got := deliveries(t, s, slugA, 3)
		if diff := cmp.Diff([]store.Delivery{delivery(30, 3)}, got); diff != "" {
			t.Fatalf("Deliveries after the caller changed its Payload (-want +got):\n%s", diff)
		}
		got[0].Payload[0] = 'Y'
		check(t, s, slugA, 3, []store.Delivery{delivery(30, 3)})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := setup(t)
		d := delivery(31, 3)
		d.NextAttemptAt = at(100).In(time.FixedZone("UTC-7", -7*3600))
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, d) })
		got := deliveries(t, s, slugA, 3)
		if len(got) != 1 || !got[0].NextAttemptAt.Equal(at(100)) || got[0].NextAttemptAt.Location() != time.UTC {
			t.Errorf("Deliveries = %v; want NextAttemptAt %v in UTC", got, at(100))
		}
	})
}
