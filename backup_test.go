package identity_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// TestBackup backs up a bbolt database, changes it, and opens the backup:
// it holds the state of when the backup was taken.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	svc, err := identity.Open(filepath.Join(t.TempDir(), "id.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := svc.Backup(ctx, &buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Backup: %d, %v; wrote %d bytes", n, err, buf.Len())
	}
	if _, err := svc.CreateWorkspace(ctx, "later", nil); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	restored, err := identity.Open(path, nil)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer restored.Close()
	list, err := restored.ListWorkspaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, ws := range list {
		slugs = append(slugs, ws.Slug())
	}
	if diff := cmp.Diff([]string{"acme"}, slugs); diff != "" {
		t.Errorf("workspaces of the backup (-want +got):\n%s", diff)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestBackupErrors(t *testing.T) {
	ctx := context.Background()
	mem, err := identity.New(memstore.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	bolt, err := identity.Open(filepath.Join(t.TempDir(), "id.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		svc  *identity.Service
		ctx  context.Context
		is   error
	}{
		{"store without Backup", mem, ctx, identity.ErrInvalid},
		{"failing writer", bolt, ctx, identity.ErrInternal},
		{"cancelled context", bolt, cancelled, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.svc.Backup(tt.ctx, failingWriter{})
			if !errors.Is(err, tt.is) {
				t.Errorf("Backup: %v, want an error matching %v", err, tt.is)
			}
		})
	}
}
