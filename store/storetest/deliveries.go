package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// delivery returns a pending webhook job with every field set. Its lease
// has ended before its next attempt, so it is due at NextAttemptAt,
// at(id + 60).
func delivery(id, endpointID int64) store.Delivery {
	return store.Delivery{
		ID:            id,
		Kind:          store.JobWebhook,
		EndpointID:    endpointID,
		EventID:       fmt.Sprintf("evt_%d", id),
		EventType:     "user.created",
		Payload:       []byte(fmt.Sprintf(`{"id":%d}`, id)),
		CreatedAt:     at(int(id)),
		Status:        store.DeliveryPending,
		Attempts:      int(id % 4),
		NextAttemptAt: at(int(id) + 60),
		LeaseUntil:    at(int(id) + 30),
		LeaseOwner:    fmt.Sprintf("dispatcher-%d", id),
		LastAttemptAt: at(int(id) + 20),
		LastStatus:    500 + int(id%4),
		LastError:     fmt.Sprintf("attempt of delivery %d failed", id),
	}
}

// asMail returns d as a mail job: of kind JobMail, for no endpoint,
// about the user with d's id.
func asMail(d store.Delivery) store.Delivery {
	d.Kind, d.EndpointID, d.EventType, d.UserID = store.JobMail, 0, "email.verification", d.ID
	return d
}

// mailJobs reads the workspace's mail jobs with MailJobs.
func mailJobs(t *testing.T, s store.Store, slug string) []store.Delivery {
	t.Helper()
	var got []store.Delivery
	view(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.MailJobs(slug)
		return err
	})
	return got
}

// checkMailJobs checks that MailJobs returns want, and Delivery each of
// them.
func checkMailJobs(t *testing.T, s store.Store, slug string, want []store.Delivery) {
	t.Helper()
	if diff := cmp.Diff(want, mailJobs(t, s, slug), equateEmpty); diff != "" {
		t.Errorf("MailJobs(%q) mismatch (-want +got):\n%s", slug, diff)
	}
	for _, d := range want {
		checkDelivery(t, s, slug, d)
	}
}

// readDelivery reads one delivery with Delivery.
func readDelivery(t *testing.T, s store.Store, slug string, id int64) (store.Delivery, error) {
	t.Helper()
	var d store.Delivery
	var lookupErr error
	view(t, s, func(tx store.Tx) error {
		d, lookupErr = tx.Delivery(slug, id)
		return nil
	})
	return d, lookupErr
}

// checkDelivery checks that Delivery returns want.
func checkDelivery(t *testing.T, s store.Store, slug string, want store.Delivery) {
	t.Helper()
	got, err := readDelivery(t, s, slug, want.ID)
	if err != nil {
		t.Errorf("Delivery(%q, %d): %v", slug, want.ID, err)
		return
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("Delivery(%q, %d) mismatch (-want +got):\n%s", slug, want.ID, diff)
	}
}

// checkNoDelivery checks that Delivery returns ErrNotFound.
func checkNoDelivery(t *testing.T, s store.Store, slug string, id int64) {
	t.Helper()
	_, err := readDelivery(t, s, slug, id)
	checkErr(t, fmt.Sprintf("Delivery(%q, %d)", slug, id), err, store.ErrNotFound)
}

// testDeliveries checks PutDelivery, Delivery, Deliveries and MailJobs, and that
// DeleteWebhook removes the endpoint's deliveries. The due index has an
// area of its own.
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
		for _, d := range want {
			checkDelivery(t, s, slug, d)
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

	t.Run("Lookup", func(t *testing.T) {
		s := setup(t)
		checkDelivery(t, s, slugB, delivery(4, 1))
		checkNoDelivery(t, s, slugA, 4) // only in another workspace
		checkNoDelivery(t, s, slugB, 5)
		checkNoDelivery(t, s, slugA, 1) // an endpoint id, not a delivery id
		checkNoDelivery(t, s, slugA, 0)
		checkNoDelivery(t, s, slugA, -5)
	})

	t.Run("EveryStatus", func(t *testing.T) {
		s := setup(t)
		var want []store.Delivery
		for i, status := range []store.DeliveryStatus{store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed} {
			d := delivery(int64(40+i), 3)
			d.Status = status
			want = append(want, d)
		}
		update(t, s, func(tx store.Tx) error {
			for _, d := range want {
				if err := tx.PutDelivery(slugA, d); err != nil {
					return err
				}
			}
			return nil
		})
		check(t, s, slugA, 3, want)
	})

	t.Run("ZeroValues", func(t *testing.T) {
		s := setup(t)
		// No status, nil payload, zero times.
		bare := store.Delivery{ID: 11, Kind: store.JobWebhook, EndpointID: 3}
		bareMail := store.Delivery{ID: 13, Kind: store.JobMail}
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutDelivery(slugA, bare); err != nil {
				return err
			}
			return tx.PutDelivery(slugA, bareMail)
		})
		check(t, s, slugA, 3, []store.Delivery{bare})
		checkMailJobs(t, s, slugA, []store.Delivery{bareMail})
		// Fields cleared by a replace read back zero.
		full := delivery(12, 3)
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, full) })
		cleared := store.Delivery{ID: 12, Kind: store.JobWebhook, EndpointID: 3, Status: store.DeliveryFailed}
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, cleared) })
		check(t, s, slugA, 3, []store.Delivery{bare, cleared})
	})

	t.Run("Replace", func(t *testing.T) {
		s := setup(t)
		retried := delivery(5, 1)
		retried.Attempts = 3
		retried.NextAttemptAt = at(3600)
		retried.LeaseUntil = time.Time{}
		retried.LeaseOwner = ""
		retried.LastAttemptAt = at(3000)
		retried.LastStatus = 0
		retried.LastError = "dial tcp: connection refused"
		retried.Payload = []byte(`{"id":5,"retry":true}`)
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, retried) })
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), retried, delivery(9, 1)})
		succeeded := retried
		succeeded.Status = store.DeliverySucceeded
		succeeded.LastStatus = 204
		succeeded.LastError = ""
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, succeeded) })
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), succeeded, delivery(9, 1)})
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
			{slugA, delivery(20, 4)}, // no endpoint 4
			{slugB, delivery(21, 2)}, // endpoint 2 only in another workspace
			{slugA, delivery(5, 99)}, // replacing onto a missing endpoint
		} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.PutDelivery(c.slug, c.d)
				return nil // commit: the refused PutDelivery must have written nothing
			})
			checkErr(t, fmt.Sprintf("PutDelivery(%q, endpoint %d)", c.slug, c.d.EndpointID), err, store.ErrNotFound)
		}
		checkNoDelivery(t, s, slugA, 20)
		checkNoDelivery(t, s, slugB, 21)
		checkDelivery(t, s, slugA, delivery(5, 1))
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

	t.Run("MalformedJobs", func(t *testing.T) {
		// The front refuses a job of no known kind and a mail job that
		// names an endpoint, and the store writes nothing.
		s := setup(t)
		noKind := delivery(20, 1)
		noKind.Kind = ""
		mailOfEndpoint := asMail(delivery(21, 0))
		mailOfEndpoint.EndpointID = 1
		for _, d := range []store.Delivery{noKind, mailOfEndpoint} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.PutDelivery(slugA, d)
				return nil
			})
			if err == nil {
				t.Errorf("PutDelivery(kind %q, endpoint %d) succeeded, want an error", d.Kind, d.EndpointID)
			}
			checkNoDelivery(t, s, slugA, d.ID)
		}
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), delivery(5, 1), delivery(9, 1)})
		checkMailJobs(t, s, slugA, nil)
	})

	t.Run("MailJobs", func(t *testing.T) {
		// A mail job needs no endpoint, keeps its kind, is listed by
		// MailJobs and by no Deliveries, and is queued like any other job.
		s := setup(t)
		mail := asMail(delivery(40, 0))
		mail.NextAttemptAt, mail.LeaseUntil = at(1), time.Time{}
		done := withStatus(asMail(delivery(41, 0)), store.DeliverySucceeded)
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutDelivery(slugA, done); err != nil {
				return err
			}
			return tx.PutDelivery(slugA, mail)
		})
		checkMailJobs(t, s, slugA, []store.Delivery{mail, done})
		checkMailJobs(t, s, slugB, nil)
		check(t, s, slugA, 0, nil)
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), delivery(5, 1), delivery(9, 1)})
		view(t, s, func(tx store.Tx) error {
			due, err := tx.DueDeliveries(at(1), 100)
			if err != nil {
				return err
			}
			want := []store.QueuedDelivery{{Workspace: slugA, Delivery: mail}}
			if diff := cmp.Diff(want, due, equateEmpty); diff != "" {
				t.Errorf("DueDeliveries(at(1)) mismatch (-want +got):\n%s", diff)
			}
			return nil
		})
		checkPending(t, s, 7)
		// Deleting an endpoint leaves mail jobs alone.
		update(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 1) })
		checkMailJobs(t, s, slugA, []store.Delivery{mail, done})
		checkPending(t, s, 4)
	})

	t.Run("EndpointZero", func(t *testing.T) {
		// Endpoint ids are positive, so no endpoint shares EndpointID 0
		// with the mail jobs: the front refuses an endpoint with id 0 and
		// a webhook job that names it, and nothing is written.
		s := setup(t)
		var hookErr, jobErr error
		update(t, s, func(tx store.Tx) error {
			hookErr = tx.PutWebhook(slugA, webhook(0))
			jobErr = tx.PutDelivery(slugA, delivery(42, 0))
			return nil
		})
		if hookErr == nil || jobErr == nil {
			t.Errorf("PutWebhook(id 0) = %v, PutDelivery(webhook job of endpoint 0) = %v; want errors", hookErr, jobErr)
		}
		checkNoDelivery(t, s, slugA, 42)
		checkMailJobs(t, s, slugA, nil)
		checkPending(t, s, 6)
	})

	t.Run("ReplaceChangesKind", func(t *testing.T) {
		// A job is identified by its id alone, whatever its kind.
		s := setup(t)
		mail := asMail(delivery(5, 0))
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, mail) })
		check(t, s, slugA, 1, []store.Delivery{delivery(2, 1), delivery(9, 1)})
		checkMailJobs(t, s, slugA, []store.Delivery{mail})
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, delivery(5, 2)) })
		check(t, s, slugA, 2, []store.Delivery{delivery(3, 2), delivery(5, 2), delivery(7, 2)})
		checkMailJobs(t, s, slugA, nil)
		checkPending(t, s, 6)
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
		for _, id := range []int64{2, 5, 9} {
			checkNoDelivery(t, s, slugA, id)
		}
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
		one, err := readDelivery(t, s, slugA, 30)
		if err != nil {
			t.Fatalf("Delivery: %v", err)
		}
		one.Payload[1] = 'Z'
		check(t, s, slugA, 3, []store.Delivery{delivery(30, 3)})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := setup(t)
		zone := time.FixedZone("UTC-7", -7*3600)
		d := delivery(31, 3)
		d.CreatedAt = at(1).In(zone)
		d.NextAttemptAt = at(100).In(zone)
		d.LeaseUntil = at(110).In(zone)
		d.LastAttemptAt = at(90).In(zone)
		update(t, s, func(tx store.Tx) error { return tx.PutDelivery(slugA, d) })
		got, err := readDelivery(t, s, slugA, 31)
		if err != nil {
			t.Fatalf("Delivery: %v", err)
		}
		for _, c := range []struct {
			name      string
			got, want time.Time
		}{
			{"CreatedAt", got.CreatedAt, at(1)},
			{"NextAttemptAt", got.NextAttemptAt, at(100)},
			{"LeaseUntil", got.LeaseUntil, at(110)},
			{"LastAttemptAt", got.LastAttemptAt, at(90)},
		} {
			if !c.got.Equal(c.want) || c.got.Location() != time.UTC {
				t.Errorf("%s = %v, want %v in UTC", c.name, c.got, c.want)
			}
		}
	})
}
