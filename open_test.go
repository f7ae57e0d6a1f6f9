package identity_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestOpen checks that Open takes a bbolt file path, and New a PostgreSQL
// store, and that what they store is there when the database is opened
// again. A PostgreSQL database may be open in several Services (processes)
// at once.
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
				var svc *identity.Service
				var err error
				if c.shared {
					var st store.Store
					if st, err = pgstore.Open(ctx, path, nil); err == nil {
						svc, err = identity.New(st, opts)
					}
				} else {
					svc, err = identity.Open(path, opts)
				}
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
			again, err := open().GetWorkspace(ctx, "acme")
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

// TestOpenRefusesPostgresURL: Open opens bbolt files only; a PostgreSQL URL
// is a clear invalid error instead of a file of that name.
func TestOpenRefusesPostgresURL(t *testing.T) {
	for _, url := range []string{"postgres://db.example.com/identity", "postgresql:///identity?host=/tmp"} {
		svc, err := identity.Open(url, nil)
		if !errors.Is(err, identity.ErrInvalid) || svc != nil {
			t.Errorf("Open(%q) = %v, %v; want an invalid error", url, svc, err)
		}
	}
}
