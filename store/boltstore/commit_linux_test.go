//go:build linux

package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// breakFile makes writes to the file at path, which this process holds
// open once (a Store's bbolt file), fail until repair is called, as on a
// failing disk: the descriptor is replaced (dup3) by a read-only one of
// the same file, so writes through it fail with EBADF. The original open
// file description is kept meanwhile, so that its lock stays held, and
// repair puts it back.
func breakFile(path string) (repair func() error, err error) {
	fd, err := descriptorOf(path)
	if err != nil {
		return nil, err
	}
	saved, err := syscall.Dup(fd)
	if err != nil {
		return nil, err
	}
	ro, err := os.Open(path)
	if err != nil {
		syscall.Close(saved)
		return nil, err
	}
	if err := syscall.Dup3(int(ro.Fd()), fd, syscall.O_CLOEXEC); err != nil {
		syscall.Close(saved)
		ro.Close()
		return nil, err
	}
	return func() error {
		defer ro.Close()
		defer syscall.Close(saved)
		return syscall.Dup3(saved, fd, syscall.O_CLOEXEC)
	}, nil
}

// descriptorOf returns the one descriptor of this process open on path.
func descriptorOf(path string) (int, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	found := -1
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || target != path {
			continue
		}
		if found >= 0 {
			return 0, fmt.Errorf("%s is open more than once", path)
		}
		fmt.Sscan(e.Name(), &found)
	}
	if found < 0 {
		return 0, fmt.Errorf("%s is not open", path)
	}
	return found, nil
}

// TestFailedCommitAnswersItsWholeGroup: when the commit of a group of
// Updates fails (its page writes fail: the disk broke while the group
// ran), every Update of the group returns that error, none of their
// writes is kept, and once the disk is repaired the store commits again,
// durably.
func TestFailedCommitAnswersItsWholeGroup(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "db")
	s := openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: testTime}) })
	before, _ := boltstore.CommitStats(s)

	const writers = 16
	var (
		once     sync.Once
		repair   func() error
		breakErr error
	)
	fns := make([]func(store.Tx) error, writers)
	for i := range fns {
		fns[i] = func(tx store.Tx) error {
			// The first call of the group to run breaks the disk: the
			// commit that holds the committer (see startQueued) is done.
			once.Do(func() { repair, breakErr = breakFile(path) })
			return tx.PutUserAttribute(testSlug, 1, fmt.Sprintf("k%02d", i), "v")
		}
	}
	errs := startQueued(t, s, writers, updates(s, fns...))
	if breakErr != nil {
		t.Fatalf("breaking the file: %v", breakErr)
	}
	if err := repair(); err != nil {
		t.Fatalf("repairing the file: %v", err)
	}

	t.Logf("the group's error: %v", errs[0])
	for i, err := range errs {
		if !errors.Is(err, syscall.EBADF) || !strings.Contains(err.Error(), "boltstore: commit") {
			t.Errorf("Update %d of the group: %v, want the failed commit (EBADF)", i, err)
		}
	}
	transactions, largest := boltstore.CommitStats(s)
	if largest != writers || transactions-before != 2 { // the holding Update's, then the group's
		t.Errorf("%d transactions, largest group %d; want 2 and %d: the group ran once, as one", transactions-before, largest, writers)
	}
	attributes := func(s store.Store) map[string]string {
		t.Helper()
		var attrs map[string]string
		mustView(t, s, func(tx store.Tx) (err error) {
			attrs, err = tx.UserAttributes(testSlug, 1)
			return err
		})
		return attrs
	}
	if attrs := attributes(s); len(attrs) != 0 {
		t.Errorf("after the failed commit: attributes %v, want none", attrs)
	}

	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutUserAttribute(testSlug, 1, "later", "ok") })
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = openStore(t, path, nil)
	if attrs := attributes(s); len(attrs) != 1 || attrs["later"] != "ok" {
		t.Errorf("after a reopen: attributes %v, want only later=ok", attrs)
	}
	if err := s.Update(context.Background(), func(tx store.Tx) error { return nil }); err != nil {
		t.Errorf("Update after the reopen: %v", err)
	}
}
