package boltstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/identitylib/identity/store"
)

// TestIndexesStayInStep runs random writes, some of them rolled back, and
// checks after each Update that delivery_due, delivery_endpoint, the
// pending count, user_sessions and user_grants agree with the records.
func TestIndexesStayInStep(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	slugs := []string{"acme", "globex"}
	ctx := context.Background()
	if err := s.Update(ctx, func(tx store.Tx) error {
		for _, slug := range slugs {
			if err := tx.PutWorkspace(store.Workspace{Slug: slug}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	errRollback := errors.New("roll back")
	for round := range 300 {
		rollback := rng.IntN(4) == 0
		ops := make([]func(store.Tx) error, 1+rng.IntN(6))
		for i := range ops {
			ops[i] = randomOp(rng, slugs[rng.IntN(len(slugs))])
		}
		err := s.Update(ctx, func(tx store.Tx) error {
			for _, op := range ops {
				if err := op(tx); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
			if rollback {
				return errRollback
			}
			return nil
		})
		if err != nil && !(rollback && errors.Is(err, errRollback)) {
			t.Fatalf("round %d: Update: %v", round, err)
		}
		if err := s.db.View(checkIndexes); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// randomOp returns a random write to the workspace slug: deliveries and
// endpoints with small ids, so that writes collide, sessions and grants
// (some of user 0, which belong to no user).
func randomOp(rng *rand.Rand, slug string) func(store.Tx) error {
	id, endpoint := int64(1+rng.IntN(30)), int64(1+rng.IntN(3))
	when := func() time.Time {
		if rng.IntN(4) == 0 {
			return time.Time{}
		}
		return time.UnixMicro(1_700_000_000_000_000 + rng.Int64N(1_000_000_000)).UTC()
	}
	switch rng.IntN(12) {
	case 0:
		return func(tx store.Tx) error { return tx.DeleteWebhook(slug, endpoint) }
	case 1:
		return func(tx store.Tx) error { return tx.PutWebhook(slug, store.Webhook{ID: endpoint}) }
	case 2, 3:
		sess := store.Session{ID: fmt.Sprint("s", rng.IntN(10)), UserID: int64(rng.IntN(3)), CreatedAt: when()}
		return func(tx store.Tx) error { return tx.PutSession(slug, sess) }
	case 10, 11:
		g := store.Grant{ID: fmt.Sprint("g", rng.IntN(10)), UserID: int64(rng.IntN(3)), CreatedAt: when()}
		return func(tx store.Tx) error { return tx.PutGrant(slug, g) }
	default:
		statuses := []store.DeliveryStatus{store.DeliveryPending, store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed, ""}
		d := store.Delivery{
			ID: id, Kind: store.JobWebhook, EndpointID: endpoint, Status: statuses[rng.IntN(len(statuses))],
			NextAttemptAt: when(), LeaseUntil: when(),
		}
		return func(tx store.Tx) error { return tx.PutDelivery(slug, d) }
	}
}

// checkIndexes checks that the indexes of every workspace agree with the
// records.
func checkIndexes(btx *bbolt.Tx) error {
	wantDue := map[string]string{}
	spaces := btx.Bucket(bucketSpaces)
	err := spaces.ForEachBucket(func(slug []byte) error {
		sp := &space{b: spaces.Bucket(slug)}
		if err := checkDeliveryLinks(sp, string(slug), wantDue); err != nil {
			return fmt.Errorf("workspace %s: %w", slug, err)
		}
		if err := checkUserSessions(sp); err != nil {
			return fmt.Errorf("workspace %s: %w", slug, err)
		}
		if err := checkUserGrants(sp); err != nil {
			return fmt.Errorf("workspace %s: %w", slug, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	gotDue := map[string]string{}
	_ = btx.Bucket(bucketDeliveryDue).ForEach(func(k, v []byte) error {
		gotDue[string(k)] = string(v)
		return nil
	})
	if diff := cmp.Diff(wantDue, gotDue); diff != "" {
		return fmt.Errorf("delivery_due mismatch (-want +got):\n%s", diff)
	}
	if n := readCount(btx.Bucket(bucketGlobalMeta).Get(keyPendingDeliveries)); n != uint64(len(wantDue)) {
		return fmt.Errorf("pending count %d, want %d", n, len(wantDue))
	}
	return nil
}

// checkDeliveryLinks checks that every delivery of the workspace has the
// right delivery_endpoint entry and no other entry exists, and adds the
// delivery_due entries it needs to want.
func checkDeliveryLinks(sp *space, slug string, want map[string]string) error {
	byID, n := sp.bucket(bucketDeliveryEndpoint), 0
	err := sp.bucket(bucketDeliveries).ForEach(func(k, v []byte) error {
		n++
		d, err := decodeDelivery(k, v)
		if err != nil {
			return err
		}
		link, ok, err := readLink(byID, k[idKeyLen:])
		if err != nil || !ok || link != linkOf(d) {
			return fmt.Errorf("delivery %d: link %+v, %t, %v; want %+v", d.ID, link, ok, err, linkOf(d))
		}
		if link.pending {
			want[string(dueKey(link.due, d.ID, slug))] = string(idKey(d.EndpointID))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if links := byID.Stats().KeyN; links != n {
		return fmt.Errorf("%d delivery_endpoint entries for %d deliveries", links, n)
	}
	return nil
}

// checkUserSessions checks that user_sessions holds exactly one entry per
// session, the one its record calls for.
func checkUserSessions(sp *space) error {
	want, got := map[string]bool{}, map[string]bool{}
	err := sp.bucket(bucketSessions).ForEach(func(k, v []byte) error {
		s, err := decodeSession(k, v)
		want[string(userSessionKey(s.UserID, s.CreatedAt, s.ID))] = true
		return err
	})
	if err != nil {
		return err
	}
	_ = sp.bucket(bucketUserSessions).ForEach(func(k, _ []byte) error {
		got[string(k)] = true
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("user_sessions mismatch (-want +got):\n%s", diff)
	}
	return nil
}

// checkUserGrants checks that user_grants holds exactly one entry per
// grant of a user (UserID not 0), the one its record calls for.
func checkUserGrants(sp *space) error {
	want, got := map[string]bool{}, map[string]bool{}
	err := sp.bucket(bucketGrants).ForEach(func(k, v []byte) error {
		g, err := decodeGrant(k, v)
		if g.UserID != 0 {
			want[string(userGrantKey(g.UserID, g.CreatedAt, g.ID))] = true
		}
		return err
	})
	if err != nil {
		return err
	}
	_ = sp.bucket(bucketUserGrants).ForEach(func(k, _ []byte) error {
		got[string(k)] = true
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("user_grants mismatch (-want +got):\n%s", diff)
	}
	return nil
}

// TestOpenFileWithoutNewBuckets opens a file written before the due
// index and sessions existed: Open creates the buckets, the old delivery
// (which has no status) is not pending, and new writes work.
func TestOpenFileWithoutNewBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx := context.Background()
	if err := s.Update(ctx, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(store.Workspace{Slug: "acme"}),
			tx.PutWebhook("acme", store.Webhook{ID: 1}),
		)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	makeOldFile(t, path)

	s, err = Open(path, nil)
	if err != nil {
		t.Fatalf("Open of an old file: %v", err)
	}
	defer s.Close()
	pending := store.Delivery{ID: 2, Kind: store.JobWebhook, EndpointID: 1, Status: store.DeliveryPending, NextAttemptAt: time.Unix(5, 0).UTC()}
	if err := s.Update(ctx, func(tx store.Tx) error {
		return errors.Join(
			tx.PutDelivery("acme", pending),
			tx.PutSession("acme", store.Session{ID: "s1", UserID: 1}),
		)
	}); err != nil {
		t.Fatalf("writes to an old file: %v", err)
	}
	if err := s.db.View(checkIndexes); err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(tx store.Tx) error {
		old, err := tx.Delivery("acme", 1)
		if err != nil || old.Status != "" || old.EventID != "old" || !old.NextAttemptAt.Equal(time.Unix(1, 0)) {
			t.Errorf("old delivery = %+v, %v; want it without status", old, err)
		}
		due, err := tx.DueDeliveries(time.Unix(100, 0), 10)
		if err != nil || len(due) != 1 || due[0].ID != 2 {
			t.Errorf("DueDeliveries = %+v, %v; want delivery 2 alone", due, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// makeOldFile turns the file at path into one written before the due
// index and sessions: it deletes their buckets and writes a delivery as
// the old code did, with no status and no due index entry.
func makeOldFile(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(btx *bbolt.Tx) error {
		ws := btx.Bucket(bucketSpaces).Bucket([]byte("acme"))
		old := []byte(`{"event_id":"old","event_type":"user.created","created_us":0,"next_attempt_us":1000000}`)
		return errors.Join(
			btx.DeleteBucket(bucketDeliveryDue),
			btx.DeleteBucket(bucketGlobalMeta),
			ws.DeleteBucket(nestedNames[bucketSessions]),
			ws.DeleteBucket(nestedNames[bucketUserSessions]),
			ws.Bucket(nestedNames[bucketDeliveries]).Put(pairKey(1, 1), old),
			ws.Bucket(nestedNames[bucketDeliveryEndpoint]).Put(idKey(1), idKey(1)),
		)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeliveryRecordOmitsZeroTimes checks that the optional times are left
// out of the JSON when zero, so that an old record, which lacks them,
// reads back zero rather than 1970.
func TestDeliveryRecordOmitsZeroTimes(t *testing.T) {
	v, err := encodeDelivery(store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event_id":"","event_type":"","created_us":-62135596800000000,"next_attempt_us":-62135596800000000}`
	if string(v) != want {
		t.Errorf("record of a bare delivery = %s, want %s", v, want)
	}
	w, err := decodeWebhook(idKey(1), []byte(`{"url":"u","created_us":0}`))
	if err != nil || !w.FailingSince.IsZero() {
		t.Errorf("old webhook record: FailingSince = %v, %v; want the zero time", w.FailingSince, err)
	}
}
