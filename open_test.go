package identity_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestOpen checks that Open takes a bbolt file path or a PostgreSQL URL,
// and that what it stores is there when it opens the database again. A
// PostgreSQL database may be open in several Services (processes) at once.
func TestOpen(t *testing.T) {
	for _, c := range []struct {
		name   string
		path   func(t *testing.T) string
		shared bool
	}{
		{"bbolt file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "id.db") }, false},
		{"postgres URL", func(t *testing.T) string { return pgtest.URL(t) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			path := c.path(t)
			opts := &identity.Options{PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}}
			open := func() *identity.Service {
				t.Helper()
				svc, err := identity.Open(path, opts)
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				t.Cleanup(func() { svc.Close() })
				return svc
			}
			svc := open()
			ws, err := svc.CreateWorkspace(ctx, "acme", nil)
			if err != nil {
				t.Fatal(err)
			}
			created, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"})
			if err != nil {
				t.Fatal(err)
			}
			if !c.shared {
				if err := svc.Close(); err != nil {
					t.Fatal(err)
				}
			}
			again, err := open().Workspace(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			got, err := again.GetUser(ctx, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(created, got); diff != "" {
				t.Errorf("user read back mismatch (-created +read):\n%s", diff)
			}
			if _, err := again.Authenticate(ctx, "ADA", "analytical engine"); err != nil {
				t.Errorf("Authenticate: %v", err)
			}
		})
	}
}
