package identity_test

import (
	"fmt"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// BenchmarkRoleAssignmentIdleEndpoints measures a role assignment and
// removal (each an Update that emits an event nobody subscribes to) on
// bbolt, with 1 or 3,000 endpoints subscribed to user.created only
// (written straight into the store, past the workspace's cap).
func BenchmarkRoleAssignmentIdleEndpoints(b *testing.B) {
	for _, n := range []int{1, 3000} {
		b.Run(fmt.Sprint(n, "Endpoints"), func(b *testing.B) {
			svc, st, _, now, _ := openBoltService(b) // endpoint 1
			err := st.Update(b.Context(), func(tx store.Tx) error {
				for id := int64(2); id <= int64(n); id++ {
					err := tx.PutWebhook("acme", store.Webhook{ID: id, URL: "https://hooks.example.com/a", Events: []string{"user.created"}, Enabled: true, CreatedAt: now()})
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			ws, err := svc.GetWorkspace(b.Context(), "acme")
			if err != nil {
				b.Fatal(err)
			}
			u, err := ws.CreateUser(b.Context(), identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"})
			if err != nil {
				b.Fatal(err)
			}
			role, err := ws.CreateRole(b.Context(), identity.NewRole{Name: "admin"})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := ws.AssignRole(b.Context(), u.ID, role.ID); err != nil {
					b.Fatal(err)
				}
				if err := ws.RemoveRole(b.Context(), u.ID, role.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
