package identity

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// TestAuditErasureInBatches: erasure rewrites every record that names the
// user, SweepBatch at a time, past the first batch of each index: more
// than SweepBatch records about the user, more than SweepBatch by the
// user, and a few by the user about themselves (rewritten once). A
// redacted value and a number stay as they are.
func TestAuditErasureInBatches(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := New(st, &Options{PasswordHashing: &Argon2Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	ada, err := ws.CreateUser(ctx, NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	put := func(tx store.Tx, r store.AuditRecord) error {
		n++
		r.ID = fmt.Sprintf("%016x%016x", 1, n) // 1970, before ada's user.created
		return tx.PutAuditRecord("acme", r)
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		for range SweepBatch + 1 {
			if err := put(tx, store.AuditRecord{
				ActorKind: "api_key", ActorID: "k1", ActorDisplay: "ci", Action: "user.updated",
				TargetKind: "user", TargetID: "1", TargetDisplay: "ada", Outcome: "success", Address: "192.0.2.1",
				Changes: []byte(`{"email":{"before":"ada@example.com","after":"ada2@example.com"}}`),
			}); err != nil {
				return err
			}
			if err := put(tx, store.AuditRecord{
				ActorKind: "user", ActorID: "1", ActorDisplay: "ada", Action: "role.updated",
				TargetKind: "role", TargetID: "7", TargetDisplay: "admin", Outcome: "success",
				Address: "192.0.2.2", UserAgent: "Firefox", Changes: []byte(`{"name":{"before":"staff","after":"admin"}}`),
			}); err != nil {
				return err
			}
		}
		for range 3 {
			if err := put(tx, store.AuditRecord{
				ActorKind: "user", ActorID: "1", ActorDisplay: "ada", Action: "password.changed",
				TargetKind: "user", TargetID: "1", TargetDisplay: "ada", Outcome: "success",
				Address: "192.0.2.3", UserAgent: "Safari",
				Changes: []byte(`{"password":{"before":"[redacted]","after":"[redacted]"},"failures":{"after":3}}`),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	deleted, err := ws.DeleteUserPermanently(ctx, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	// user.created, 501 about ada, 501 by ada, 3 by ada about ada.
	if deleted.AuditRecords != 1006 {
		t.Errorf("AuditRecords = %d, want 1006", deleted.AuditRecords)
	}
	var recs []store.AuditRecord
	err = st.View(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.AuditRecords("acme", store.AuditQuery{Limit: 10000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each record as action, actor, target, address, browser and
	// changes, the pseudonym written P, and how many there are of it.
	got := map[string]int{}
	for _, r := range recs {
		got[strings.ReplaceAll(fmt.Sprintf("%s|%s|%s|%s|%s|%s",
			r.Action, r.ActorDisplay, r.TargetDisplay, r.Address, r.UserAgent, r.Changes), deleted.Pseudonym, "P")]++
	}
	want := map[string]int{
		`user.created||P|||{"email":{"after":"P"},"fullName":{"after":"P"},"username":{"after":"P"}}`:             1,
		`user.updated|ci|P|192.0.2.1||{"email":{"before":"P","after":"P"}}`:                                       SweepBatch + 1,
		`role.updated|P|admin|||{"name":{"before":"staff","after":"admin"}}`:                                      SweepBatch + 1,
		`password.changed|P|P|||{"failures":{"after":3},"password":{"before":"[redacted]","after":"[redacted]"}}`: 3,
		`user.deleted||P|||`:         1,
		`workspace.created||acme|||`: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the trail after the erasure (-want +got):\n%s", diff)
	}
}
