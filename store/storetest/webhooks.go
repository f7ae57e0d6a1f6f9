package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// webhook returns an endpoint record with every field set; FailingSince
// is set for even ids only, so that both states are written.
func webhook(id int64) store.Webhook {
	w := store.Webhook{
		ID:          id,
		URL:         fmt.Sprintf("https://hooks.example.com/%d", id),
		Description: fmt.Sprintf("endpoint %d", id),
		Events:      []string{"user.created", "user.updated"},
		Enabled:     id%2 == 1,
		CreatedAt:   at(int(id)),
		Secret:      fmt.Sprintf("whsec_%d", id),
		Version:     -id, // any value, kept as given
	}
	if id%2 == 0 {
		w.FailingSince = at(int(id) + 500)
	}
	return w
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
	t.Run("FailingSince", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		w := webhook(1) // succeeding: FailingSince is zero
		read := func() store.Webhook {
			t.Helper()
			var got store.Webhook
			view(t, s, func(tx store.Tx) error {
				var err error
				got, err = tx.Webhook(slugA, 1)
				return err
			})
			return got
		}
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, w) })
		if got := read(); !got.FailingSince.IsZero() {
			t.Errorf("FailingSince of a succeeding endpoint = %v, want the zero time", got.FailingSince)
		}
		// Failing since a time given in another zone: it comes back in UTC.
		w.FailingSince = at(90).In(time.FixedZone("UTC+5", 5*3600))
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, w) })
		if got := read(); !got.FailingSince.Equal(at(90)) || got.FailingSince.Location() != time.UTC {
			t.Errorf("FailingSince = %v, want %v in UTC", got.FailingSince, at(90))
		}
		// Before 1970 too.
		w.FailingSince = time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, w) })
		if diff := cmp.Diff(w, read()); diff != "" {
			t.Errorf("Webhook failing since 1969 mismatch (-want +got):\n%s", diff)
		}
		// A success clears it.
		w.FailingSince = time.Time{}
		update(t, s, func(tx store.Tx) error { return tx.PutWebhook(slugA, w) })
		if diff := cmp.Diff(w, read()); diff != "" {
			t.Errorf("Webhook after FailingSince was cleared mismatch (-want +got):\n%s", diff)
		}
	})
}
