package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// stageGroup holds the writer queue of s with an Update that waits for
// release, starts one Update per function of fns, in order, each once the
// ones before it wait in the queue, and lets the holder go once all wait:
// the first to wait takes the queue and the others with it, as one group
// (see group.go). It returns each Update's error and what each recovered
// from a panic, in the order of fns.
func stageGroup(t *testing.T, s *pgstore.Store, ctxs []context.Context, fns []func(store.Tx) error) ([]error, []any) {
	t.Helper()
	held, release := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- s.Update(context.Background(), func(tx store.Tx) error {
			if _, err := tx.Workspace("acme"); err != nil {
				return err
			}
			select {
			case held <- struct{}{}:
			default: // run again: the test has moved on
			}
			<-release
			return nil
		})
	}()
	<-held
	errs := make([]error, len(fns))
	panics := make([]any, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			errs[i] = s.Update(ctxs[i], fn)
		})
		for pgstore.QueueBlocked() < i+1 {
			runtime.Gosched()
		}
	}
	close(release)
	if err := <-holder; err != nil {
		t.Fatalf("holder: %v", err)
	}
	wg.Wait()
	return errs, panics
}

// TestGroupCommit runs Updates that waited in the writer queue together as
// one group, in one transaction: each function in a savepoint of its own,
// so that one that fails, panics or leaves a failed statement behind is
// rolled back alone, with what it kept in memory (the id it drew), and
// the others commit. A function whose context ends while it waits for its
// turn does not run.
func TestGroupCommit(t *testing.T) {
	s := pgtest.Open(t, &pgstore.Options{QueueWait: time.Hour})
	update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0}) })
	boom := errors.New("boom")
	// draw draws a user id, creates a user with it and calls then.
	draw := func(name string, then func(tx store.Tx) error) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			id, err := tx.NextID("acme", store.SeqUsers)
			if err != nil {
				return err
			}
			if err := tx.PutUser("acme", store.User{ID: id, Username: name, Email: name + "@example.com", CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
			return then(tx)
		}
	}
	ok := func(store.Tx) error { return nil }
	cancelled, cancel := context.WithCancel(context.Background())
	defer cancel()
	members := []struct {
		name string
		ctx  context.Context
		fn   func(tx store.Tx) error
		want string
	}{
		{"ann", context.Background(), draw("ann", func(store.Tx) error {
			// dan, who waits for his turn, gives up.
			cancel()
			return nil
		}), "ok"},
		{"ben", context.Background(), draw("ben", func(store.Tx) error { return boom }), "boom"},
		// A COPY refused by a unique index fails the transaction's
		// statement; cat carries on as if not.
		{"cat", context.Background(), draw("cat", func(tx store.Tx) error {
			_ = tx.(store.Bulk).InsertUsers("acme", []store.UserInsert{{User: store.User{ID: 500, Username: "ann", Email: "z@example.com"}}})
			return nil
		}), "not committed"},
		{"dan", cancelled, draw("dan", ok), "canceled"},
		{"eve", context.Background(), draw("eve", func(store.Tx) error { panic("eve panics") }), "panic: eve panics"},
		// PutUser of a taken username reports a conflict, writes nothing
		// and lets the function go on.
		{"fay", context.Background(), draw("fay", func(tx store.Tx) error {
			err := tx.PutUser("acme", store.User{ID: 1000, Username: "ANN", Email: "x@example.com"})
			if !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("PutUser of a taken username: %v, want ErrConflict", err)
			}
			return nil
		}), "ok"},
		{"gus", context.Background(), draw("gus", func(tx store.Tx) error { return tx.PutUserAttribute("acme", 99, "k", "v") }), "not found"},
		{"hal", context.Background(), draw("hal", ok), "ok"},
	}
	var ctxs []context.Context
	var fns []func(store.Tx) error
	var want []string
	for _, m := range members {
		ctxs, fns, want = append(ctxs, m.ctx), append(fns, m.fn), append(want, m.name+": "+m.want)
	}
	before := s.Stats()
	errs, panics := stageGroup(t, s, ctxs, fns)
	after := s.Stats()

	var got []string
	for i, m := range members {
		var outcome string
		switch err := errs[i]; {
		case panics[i] != nil:
			outcome = fmt.Sprint("panic: ", panics[i])
		case err == nil:
			outcome = "ok"
		case errors.Is(err, context.Canceled):
			outcome = "canceled"
		case errors.Is(err, boom):
			outcome = "boom"
		case errors.Is(err, store.ErrNotFound):
			outcome = "not found"
		case strings.Contains(err.Error(), "not committed"):
			outcome = "not committed"
		default:
			outcome = err.Error()
		}
		got = append(got, m.name+": "+outcome)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	// ann draws 1; ben, cat, eve and gus each draw 2 and are rolled back
	// with their draws; dan never runs; fay draws 2, hal 3.
	var users []string
	view(t, s, func(tx store.Tx) error {
		list, total, err := tx.Users("acme", store.UserQuery{Limit: 10})
		for _, u := range list {
			users = append(users, fmt.Sprintf("%d %s", u.ID, u.Username))
		}
		if err == nil && total != len(list) {
			err = fmt.Errorf("total %d, %d users listed", total, len(list))
		}
		return err
	})
	if diff := cmp.Diff([]string{"1 ann", "2 fay", "3 hal"}, users); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	if n := after.Grouped - before.Grouped; n != 3 {
		t.Errorf("%d Updates committed in a group, want 3 (ann, fay, hal)", n)
	}
	if n := after.Retries - before.Retries; n != 0 {
		t.Errorf("%d retries, want none", n)
	}
	// The next Update, alone, draws the next id.
	var id int64
	update(t, s, func(tx store.Tx) (err error) { id, err = tx.NextID("acme", store.SeqUsers); return err })
	if id != 4 {
		t.Errorf("next id %d, want 4", id)
	}
}

// view runs fn in a View of s and fails the test on an error.
func view(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}
