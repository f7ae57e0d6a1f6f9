package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// testPages checks DeliveriesPage, MailJobsPage and UserSessionsPage
// against literal pages of a workspace with webhook 1 (jobs 1, 2, 4, 6,
// 7), webhook 2 (job 3), mail jobs 5 and 8, and user 1's sessions s-a
// (created at 30), s-b (10) and s-c (20).
func testPages(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"))
	update(t, s, func(tx store.Tx) error {
		for _, w := range []int64{1, 2} {
			if err := tx.PutWebhook(slugA, webhook(w)); err != nil {
				return err
			}
		}
		for _, d := range []store.Delivery{
			delivery(1, 1), delivery(2, 1), delivery(3, 2), delivery(4, 1), mailJob(5, 1), delivery(6, 1), delivery(7, 1), mailJob(8, 0),
		} {
			if err := tx.PutDelivery(slugA, d); err != nil {
				return err
			}
		}
		return nil
	})
	putSessions(t, s, slugA, storedSession("s-a", 1, 30), storedSession("s-b", 1, 10), storedSession("s-c", 1, 20))
	type page struct {
		IDs   []int64
		Total int
	}
	sessionPage := func(ss []store.Session, total int) []any {
		var ids []string
		for _, x := range ss {
			ids = append(ids, x.ID)
		}
		return []any{ids, total}
	}
	for _, c := range []struct {
		name          string
		offset, limit int
		hook1, mail   page
		sessions      []any
	}{
		{"First", 0, 2, page{[]int64{1, 2}, 5}, page{[]int64{5, 8}, 2}, []any{[]string{"s-b", "s-c"}, 3}},
		{"Middle", 1, 3, page{[]int64{2, 4, 6}, 5}, page{[]int64{8}, 2}, []any{[]string{"s-c", "s-a"}, 3}},
		{"Last", 4, 10, page{[]int64{7}, 5}, page{nil, 2}, []any{[]string(nil), 3}},
		{"PastTheEnd", 9, 10, page{nil, 5}, page{nil, 2}, []any{[]string(nil), 3}},
		{"NoLimit", 0, 0, page{nil, 5}, page{nil, 2}, []any{[]string(nil), 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			view(t, s, func(tx store.Tx) error {
				ds, total, err := tx.DeliveriesPage(slugA, 1, c.offset, c.limit)
				if err != nil {
					return err
				}
				if diff := cmp.Diff(c.hook1, page{deliveryIDs(ds), total}); diff != "" {
					t.Errorf("DeliveriesPage(webhook 1, %d, %d) (-want +got):\n%s", c.offset, c.limit, diff)
				}
				if len(ds) > 0 {
					if diff := cmp.Diff(delivery(ds[0].ID, 1), ds[0]); diff != "" {
						t.Errorf("DeliveriesPage: the first job (-want +got):\n%s", diff)
					}
				}
				ms, total, err := tx.MailJobsPage(slugA, c.offset, c.limit)
				if err != nil {
					return err
				}
				if diff := cmp.Diff(c.mail, page{deliveryIDs(ms), total}); diff != "" {
					t.Errorf("MailJobsPage(%d, %d) (-want +got):\n%s", c.offset, c.limit, diff)
				}
				ss, total, err := tx.UserSessionsPage(slugA, 1, c.offset, c.limit)
				if err != nil {
					return err
				}
				if diff := cmp.Diff(c.sessions, sessionPage(ss, total)); diff != "" {
					t.Errorf("UserSessionsPage(1, %d, %d) (-want +got):\n%s", c.offset, c.limit, diff)
				}
				return nil
			})
		})
	}
	t.Run("NoneAndMissing", func(t *testing.T) {
		view(t, s, func(tx store.Tx) error {
			ds, total, err := tx.DeliveriesPage(slugA, 9, 0, 10)
			if err != nil || len(ds) != 0 || total != 0 {
				t.Errorf("DeliveriesPage(unknown endpoint) = %v, %d, %v; want none", deliveryIDs(ds), total, err)
			}
			ds, total, err = tx.MailJobsPage(slugB, 0, 10)
			if err != nil || len(ds) != 0 || total != 0 {
				t.Errorf("MailJobsPage(a workspace without mail) = %v, %d, %v; want none", deliveryIDs(ds), total, err)
			}
			ss, total, err := tx.UserSessionsPage(slugA, 2, 0, 10)
			if err != nil || len(ss) != 0 || total != 0 {
				t.Errorf("UserSessionsPage(a user without sessions) = %d sessions, %d, %v; want none", len(ss), total, err)
			}
			_, _, err = tx.DeliveriesPage(slugMissing, 1, 0, 10)
			checkErr(t, "DeliveriesPage in a missing workspace", err, store.ErrNotFound)
			_, _, err = tx.MailJobsPage(slugMissing, 0, 10)
			checkErr(t, "MailJobsPage in a missing workspace", err, store.ErrNotFound)
			_, _, err = tx.UserSessionsPage(slugMissing, 1, 0, 10)
			checkErr(t, "UserSessionsPage in a missing workspace", err, store.ErrNotFound)
			return nil
		})
	})
}
