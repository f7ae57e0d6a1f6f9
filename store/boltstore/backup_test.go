package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// backupWait bounds the waits of the backup tests. Nothing is timed: it
// is far beyond what any wait needs on a loaded machine.
const backupWait = 5 * time.Minute

// putUser stores a user named name with the id id in testSlug.
func putUser(t *testing.T, s store.Store, id int64, name string) {
	t.Helper()
	mustUpdate(t, s, func(tx store.Tx) error {
		return tx.PutUser(testSlug, store.User{ID: id, Username: name, Email: name + "@example.com",
			FullName: name, Enabled: true, CreatedAt: testTime, UpdatedAt: testTime})
	})
}

// usernames returns the usernames of testSlug in id order.
func usernames(t *testing.T, s store.Store) []string {
	t.Helper()
	var names []string
	mustView(t, s, func(tx store.Tx) error {
		users, _, err := tx.Users(testSlug, store.UserQuery{Limit: 100})
		for _, u := range users {
			names = append(names, u.Username)
		}
		return err
	})
	return names
}

// restore writes the backup to a file and opens it as a store.
func restore(t *testing.T, backup []byte) *boltstore.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(path, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	return openStore(t, path, nil)
}

func TestBackup(t *testing.T) {
	s := newStore(t)
	putUser(t, s, 1, "ada")
	putUser(t, s, 2, "grace")
	var buf bytes.Buffer
	n, err := s.Backup(context.Background(), &buf)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("Backup returned %d bytes, wrote %d", n, buf.Len())
	}
	putUser(t, s, 3, "alan") // after the backup: not in it

	if diff := cmp.Diff([]string{"ada", "grace"}, usernames(t, restore(t, buf.Bytes()))); diff != "" {
		t.Errorf("users of the restored backup (-want +got):\n%s", diff)
	}
}

// blockingWriter passes writes to buf, but the first waits until release
// is closed, after saying so on started.
type blockingWriter struct {
	buf     bytes.Buffer
	started chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	if w.started != nil {
		close(w.started)
		w.started = nil
		<-w.release
	}
	return w.buf.Write(p)
}

// TestBackupDoesNotBlockWriters holds a backup in its first write while
// users are written: each Update commits, and the backup, once let go,
// holds the state of when it began.
func TestBackupDoesNotBlockWriters(t *testing.T) {
	s := newStore(t)
	putUser(t, s, 1, "before")
	w := &blockingWriter{started: make(chan struct{}), release: make(chan struct{})}
	started := w.started
	done := make(chan error, 1)
	go func() {
		_, err := s.Backup(context.Background(), w)
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(backupWait):
		t.Fatalf("the backup wrote nothing within %v", backupWait)
	}
	for i := range 3 {
		committed := make(chan error, 1)
		go func() {
			committed <- s.Update(context.Background(), func(tx store.Tx) error {
				name := fmt.Sprintf("during%d", i)
				return tx.PutUser(testSlug, store.User{ID: int64(i + 2), Username: name, Email: name + "@example.com",
					FullName: name, Enabled: true, CreatedAt: testTime, UpdatedAt: testTime})
			})
		}()
		select {
		case err := <-committed:
			if err != nil {
				t.Fatalf("Update during the backup: %v", err)
			}
		case <-time.After(backupWait):
			close(w.release)
			t.Fatalf("an Update did not commit within %v while a backup ran", backupWait)
		}
	}
	close(w.release)
	if err := <-done; err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if diff := cmp.Diff([]string{"before"}, usernames(t, restore(t, w.buf.Bytes()))); diff != "" {
		t.Errorf("users of the backup (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"before", "during0", "during1", "during2"}, usernames(t, s)); diff != "" {
		t.Errorf("users of the store (-want +got):\n%s", diff)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestBackupErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		close bool
		w     io.Writer // nil: a buffer
		want  string
	}{
		{"cancelled context", cancelled, false, nil, "context canceled"},
		{"closed store", context.Background(), true, nil, "store: closed"},
		{"failing writer", context.Background(), false, failingWriter{}, "boltstore: backup: meta 0 copy: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			if tt.close {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			w := tt.w
			if w == nil {
				w = new(bytes.Buffer)
			}
			_, err := s.Backup(tt.ctx, w)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Backup: %v, want %q", err, tt.want)
			}
		})
	}
}
