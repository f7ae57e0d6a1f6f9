package pgstore_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestUpgradeDropsWorkspaceDueIndex brings a schema of migration 0014,
// which indexed the pending jobs by workspace and due time, up to date
// with Open, and checks that migration 0015 dropped that index, leaving
// deliveries_due (which WorkspaceQueue reads) and the others, and that
// the jobs stored before answer WorkspaceQueue.
func TestUpgradeDropsWorkspaceDueIndex(t *testing.T) {
	url := pgtest.URL(t)
	conn := connect(t, url)
	if _, err := pgstore.Migrate(t.Context(), conn, migrationsUpTo(t, 14)); err != nil {
		t.Fatalf("Migrate to migration 0014: %v", err)
	}
	indexes := func() []string {
		t.Helper()
		names, err := pgx.CollectRows(must(conn.Query(t.Context(), `SELECT indexname FROM pg_indexes
			WHERE schemaname = current_schema() AND tablename = 'deliveries' AND indexname LIKE 'deliveries_%due%' ORDER BY indexname`)),
			pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if diff := cmp.Diff([]string{"deliveries_due", "deliveries_workspace_due"}, indexes()); diff != "" {
		t.Fatalf("the due indexes of migration 0014 (-want +got):\n%s", diff)
	}
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if diff := cmp.Diff([]string{"deliveries_due"}, indexes()); diff != "" {
		t.Errorf("the due indexes after Open (-want +got):\n%s", diff)
	}
	mail := func(id int64, due time.Duration) store.Delivery {
		return store.Delivery{ID: id, Kind: store.JobMail, EventType: "email.verification", Payload: []byte("{}"),
			CreatedAt: t0, Status: store.DeliveryPending, NextAttemptAt: t0.Add(due)}
	}
	update(t, s, func(tx store.Tx) error {
		for _, slug := range []string{"acme", "beta"} {
			if err := tx.PutWorkspace(store.Workspace{Slug: slug, CreatedAt: t0}); err != nil {
				return err
			}
		}
		for _, j := range []struct {
			slug string
			d    store.Delivery
		}{{"acme", mail(1, time.Minute)}, {"beta", mail(1, time.Second)}, {"acme", mail(2, time.Hour)}} {
			if err := tx.PutDelivery(j.slug, j.d); err != nil {
				return err
			}
		}
		return nil
	})
	got := map[int]store.WorkspaceQueue{}
	view(t, s, func(tx store.Tx) error {
		for _, limit := range []int{2, 3} {
			q, err := tx.WorkspaceQueue("acme", limit)
			if err != nil {
				return err
			}
			got[limit] = q
		}
		return nil
	})
	want := map[int]store.WorkspaceQueue{
		2: {Pending: 1, NextDue: t0.Add(time.Minute)},
		3: {Pending: 2, NextDue: t0.Add(time.Minute), Complete: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WorkspaceQueue of acme by limit (-want +got):\n%s", diff)
	}
}
