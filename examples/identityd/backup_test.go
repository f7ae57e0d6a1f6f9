package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/identitylib/identity"
)

// TestBackup backs up a database that no server holds, and opens the
// backup.
func TestBackup(t *testing.T) {
	db, _ := newDB(t)
	out := filepath.Join(t.TempDir(), "backup.db")
	r := mustRun(t, "-db", db, "backup", "-o", out)
	if !strings.HasPrefix(r.stdout, "backed up "+db+" to "+out+" (") || r.stderr != "" {
		t.Errorf("backup: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file after the backup: %v", err)
	}
	r = mustRun(t, "-db", out, "workspace", "list")
	if !strings.Contains(r.stdout, "\nacme ") {
		t.Errorf("workspace list of the backup:\n%s", r.stdout)
	}

	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no -o", []string{"-db", db, "backup"}, exitUsage,
			"identityd: backup: -o is required\nUsage: identityd [-db FILE] backup -o FILE\nRun 'identityd -h' for help.\n"},
		{"over the database", []string{"-db", db, "backup", "-o", db}, exitError,
			"identityd: " + db + " is the database itself: write to another file\n"},
		{"no database", []string{"-db", missing, "backup", "-o", out}, exitError,
			"identityd: database " + missing + " does not exist (create it with: identityd -db " + missing + " workspace create SLUG)\n"},
		{"PostgreSQL", []string{"-db", "postgres://localhost/identity", "backup", "-o", out}, exitError,
			"identityd: identityd backup copies a bbolt file; back up a PostgreSQL database with pg_dump\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, tt.args...)
			if r.code != tt.code || r.stdout != "" || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestBackupUnderWriteLoad takes a backup through the admin socket while
// writers create users over the API: the backup opens cleanly and holds
// every user whose creation was acknowledged before the backup began.
func TestBackupUnderWriteLoad(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)

	type ack struct {
		name string
		at   time.Time // when the 201 had arrived
	}
	var (
		mu      sync.Mutex
		acks    []ack
		failure error
		wg      sync.WaitGroup
		stop    = make(chan struct{})
		counts  = make(chan int, 1024)
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-user%04d", w, i)
				_, err := tryCreateUser(p.base, key, name)
				at := time.Now()
				mu.Lock()
				if err != nil {
					failure = err
					mu.Unlock()
					return
				}
				acks = append(acks, ack{name, at})
				n := len(acks)
				mu.Unlock()
				select {
				case counts <- n:
				default: // the test has stopped counting
				}
			}
		})
	}
	stopWriters := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer stopWriters()

	const before, after = 100, 100
	waitCount(t, counts, before, procWait)
	out := filepath.Join(t.TempDir(), "backup.db")
	began := time.Now()
	r := runBinary(t, "-db", db, "backup", "-o", out)
	if r.code != exitOK {
		t.Fatalf("backup: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	mu.Lock()
	done := len(acks)
	mu.Unlock()
	// The writers go on after the backup: they were not stopped by it.
	waitCount(t, counts, done+after, procWait)
	stopWriters()
	if failure != nil {
		t.Fatalf("a writer failed: %v", failure)
	}

	// Open a copy, as a restore would.
	restored := filepath.Join(t.TempDir(), "restored.db")
	copyFile(t, out, restored)
	if r := mustRun(t, "-db", restored, "workspace", "list"); !strings.Contains(r.stdout, "\nacme ") {
		t.Errorf("workspace list of the restored backup:\n%s", r.stdout)
	}
	svc := openDB(t, restored)
	ctx := context.Background()
	ws, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for offset := 0; ; offset += identity.MaxPageLimit {
		page, err := ws.ListUsers(ctx, "", &identity.Page{Offset: offset, Limit: identity.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range page.Items {
			have[u.Username] = true
		}
		if len(page.Items) < identity.MaxPageLimit {
			break
		}
	}
	acked := 0
	for _, a := range acks {
		if a.at.Before(began) {
			acked++
			if !have[a.name] {
				t.Errorf("user %s, acknowledged before the backup began, is not in it", a.name)
			}
		}
	}
	t.Logf("%d users acknowledged before the backup began, %d in it, %d acknowledged in all", acked, len(have), len(acks))
	if acked < before {
		t.Errorf("%d users acknowledged before the backup began, want at least %d", acked, before)
	}
}

// copyFile copies the file src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
