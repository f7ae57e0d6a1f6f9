package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// TestConcurrentReadModifyWrite increments one counter from many goroutines
// with a read-modify-write inside Update. Any lost update (two groups, or
// two calls of a group, reading the same value) leaves the count short.
func TestConcurrentReadModifyWrite(t *testing.T) {
	s := newStore(t)
	const writers = 64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			err := s.Update(context.Background(), func(tx store.Tx) error {
				attrs, err := tx.UserAttributes(testSlug, 1)
				if err != nil {
					return err
				}
				n, _ := strconv.Atoi(attrs["counter"]) // missing: 0
				return tx.PutUserAttribute(testSlug, 1, "counter", strconv.Itoa(n+1))
			})
			if err != nil {
				t.Errorf("Update: %v", err)
			}
		})
	}
	wg.Wait()

	var got map[string]string
	mustView(t, s, func(tx store.Tx) (err error) {
		got, err = tx.UserAttributes(testSlug, 1)
		return err
	})
	want := map[string]string{"counter": strconv.Itoa(writers)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counter mismatch (-want +got):\n%s", diff)
	}
	transactions, largest := boltstore.CommitStats(s)
	t.Logf("%d writers: %d read-write transactions, largest group %d", writers, transactions, largest)
}

// holdCommitter runs an Update whose fn blocks until the returned release
// function is called, so that Updates started meanwhile queue up and are
// taken as one group. It returns once the committer is held.
func holdCommitter(t *testing.T, s store.Store) (release func()) {
	t.Helper()
	held, released := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- s.Update(context.Background(), func(store.Tx) error {
			once.Do(func() { close(held) })
			<-released
			return nil
		})
	}()
	<-held
	return func() {
		close(released)
		if err := <-done; err != nil {
			t.Errorf("holding Update: %v", err)
		}
	}
}

// startQueued starts the calls, each in its own goroutine, while the
// committer is held, waits until every one that is an Update of s waits
// for the committer (queued of them), then releases the committer. It
// returns each call's error, indexed like calls.
func startQueued(t *testing.T, s *boltstore.Store, queued int, calls []func() error) []error {
	t.Helper()
	release := holdCommitter(t, s)
	errs := make([]error, len(calls))
	var finished sync.WaitGroup
	for i, call := range calls {
		finished.Go(func() { errs[i] = call() })
	}
	waitQueued(t, s, queued)
	release()
	finished.Wait()
	return errs
}

// queueWait bounds waitQueued: far beyond what goroutines need to start
// on a loaded machine.
const queueWait = 5 * time.Minute

// waitQueued waits until n Update calls of s wait for the committer to
// take them: goroutines blocked in the select of s's Update, as the
// runtime's stack dump shows them (the frame names the Store's address).
func waitQueued(t *testing.T, s *boltstore.Store, n int) {
	t.Helper()
	frame := fmt.Sprintf("boltstore.(*Store).Update(%p,", s)
	deadline := time.Now().Add(queueWait)
	for {
		waiting := 0
		for _, g := range testutil.Goroutines() {
			status, rest, _ := strings.Cut(g, "\n")
			if strings.Contains(status, "[select") && strings.Contains(rest, frame) {
				waiting++
			}
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %d Update calls wait for the committer, want %d", queueWait, waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// updates returns calls that run each fn in an Update.
func updates(s store.Store, fns ...func(store.Tx) error) []func() error {
	calls := make([]func() error, len(fns))
	for i, fn := range fns {
		calls[i] = func() error { return s.Update(context.Background(), fn) }
	}
	return calls
}

// TestFailingCallInGroup checks that a call failing inside a group gets
// its own error, leaves nothing of its own behind, and does not stop the
// others of the group from committing.
func TestFailingCallInGroup(t *testing.T) {
	s := newStore(t)
	const writers, failing = 32, 7
	errFail := errors.New("fail on purpose")
	fns := make([]func(store.Tx) error, writers)
	wantErrs := make([]error, writers)
	wantAttrs := map[string]string{}
	for i := range fns {
		key := fmt.Sprintf("k%02d", i)
		fns[i] = func(tx store.Tx) error {
			if err := tx.PutUserAttribute(testSlug, 1, key, "v"); err != nil {
				return err
			}
			if i == failing {
				return errFail
			}
			return nil
		}
		if i == failing {
			wantErrs[i] = errFail
		} else {
			wantAttrs[key] = "v"
		}
	}

	gotErrs := startQueued(t, s, writers, updates(s, fns...))

	if diff := cmp.Diff(wantErrs, gotErrs, cmp.Comparer(sameError)); diff != "" {
		t.Errorf("Update errors mismatch (-want +got):\n%s", diff)
	}
	var gotAttrs map[string]string
	mustView(t, s, func(tx store.Tx) (err error) {
		gotAttrs, err = tx.UserAttributes(testSlug, 1)
		return err
	})
	if diff := cmp.Diff(wantAttrs, gotAttrs); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
	if _, largest := boltstore.CommitStats(s); largest != writers {
		t.Errorf("largest group was %d calls, want the %d queued Updates", largest, writers)
	}
}

// sameError compares errors by identity, for cmp.
func sameError(a, b error) bool { return a == b }

// TestPanicInUpdate checks that a panic in fn is raised again in the
// caller with its value, that nothing fn wrote is kept, and that the store
// keeps working, both for a lone Update and for one inside a group.
func TestPanicInUpdate(t *testing.T) {
	s := newStore(t)
	panicking := func(tx store.Tx) error {
		if err := tx.PutUserAttribute(testSlug, 1, "panicked", "yes"); err != nil {
			return err
		}
		panic("boom")
	}

	if got := recoverUpdate(s, panicking); got != "boom" {
		t.Errorf("lone Update: recovered %v, want boom", got)
	}

	calls := updates(s,
		func(tx store.Tx) error { return tx.PutUserAttribute(testSlug, 1, "before", "ok") },
		func(tx store.Tx) error { return tx.PutUserAttribute(testSlug, 1, "after", "ok") },
	)
	calls = append(calls, func() error {
		if got := recoverUpdate(s, panicking); got != "boom" {
			return fmt.Errorf("grouped Update: recovered %v, want boom", got)
		}
		return nil
	})
	errs := startQueued(t, s, len(calls), calls)
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}

	var got map[string]string
	mustView(t, s, func(tx store.Tx) (err error) {
		got, err = tx.UserAttributes(testSlug, 1)
		return err
	})
	want := map[string]string{"before": "ok", "after": "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
}

// recoverUpdate runs fn in an Update and returns what the Update panicked
// with, or nil.
func recoverUpdate(s store.Store, fn func(store.Tx) error) (recovered any) {
	defer func() { recovered = recover() }()
	_ = s.Update(context.Background(), fn)
	return nil
}

// TestGoexitInUpdate checks that runtime.Goexit in fn (t.Fatal called in an
// Update function) fails that Update instead of hanging the store.
func TestGoexitInUpdate(t *testing.T) {
	s := newStore(t)
	err := s.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.PutUserAttribute(testSlug, 1, "goexit", "yes"); err != nil {
			return err
		}
		runtime.Goexit()
		return nil
	})
	if !errors.Is(err, boltstore.ErrGoexit) {
		t.Errorf("got error %v, want ErrGoexit", err)
	}
	mustUpdate(t, s, func(tx store.Tx) error { return tx.PutUserAttribute(testSlug, 1, "later", "ok") })
	var got map[string]string
	mustView(t, s, func(tx store.Tx) (err error) {
		got, err = tx.UserAttributes(testSlug, 1)
		return err
	})
	if diff := cmp.Diff(map[string]string{"later": "ok"}, got); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
}

// TestEndedTxInGroup checks that the Tx of a call that returned is
// refused with store.ErrTxDone while later calls run in the same bbolt
// transaction, and when a call runs again after its group failed: every
// call of fn gets a Tx of its own.
func TestEndedTxInGroup(t *testing.T) {
	s := newStore(t)
	const writers, failing = 16, 5
	var (
		mu      sync.Mutex
		ended   []store.Tx // the Tx of every call that has returned
		checked int
	)
	fns := make([]func(store.Tx) error, writers)
	for i := range fns {
		fns[i] = func(tx store.Tx) error {
			mu.Lock()
			defer mu.Unlock()
			for _, old := range ended {
				if err := old.PutUserAttribute(testSlug, 1, "late", "x"); !errors.Is(err, store.ErrTxDone) {
					t.Errorf("PutUserAttribute on the Tx of an ended call: error = %v, want ErrTxDone", err)
				}
				checked++
			}
			ended = append(ended, tx)
			if i == failing {
				return errors.New("fail on purpose")
			}
			return tx.PutUserAttribute(testSlug, 1, fmt.Sprintf("k%02d", i), "v")
		}
	}
	startQueued(t, s, writers, updates(s, fns...))
	if _, largest := boltstore.CommitStats(s); largest != writers {
		t.Errorf("largest group was %d calls, want the %d queued Updates", largest, writers)
	}
	if checked == 0 {
		t.Error("no ended Tx was tried")
	}
	var attrs map[string]string
	mustView(t, s, func(tx store.Tx) (err error) {
		attrs, err = tx.UserAttributes(testSlug, 1)
		return err
	})
	if _, ok := attrs["late"]; ok || len(attrs) != writers-1 {
		t.Errorf("attributes = %v, want the %d of the calls that succeeded", attrs, writers-1)
	}
}
