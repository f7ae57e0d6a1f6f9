package identity

import (
	"container/list"
	"context"
	"sync"
)

// DefaultPasswordHashingBudget is the default of
// Options.PasswordHashingBudget: 256 MiB, thirteen argon2id hashes at
// DefaultArgon2Params at once.
const DefaultPasswordHashingBudget = 256 << 20

// Memory costs of a password hash or verification, charged to the
// Service's hashing budget while it runs. argon2id costs its memory
// parameter (m KiB in all, whatever the parallelism); bcrypt's state is
// about 4 KiB and PBKDF2's a few hundred bytes, so both are charged a
// small constant that covers their buffers.
const (
	bcryptHashCost = 16 << 10
	pbkdf2HashCost = 16 << 10
)

// argon2Cost returns the memory, in bytes, that argon2id at a takes.
func argon2Cost(a Argon2Params) int64 { return int64(a.Memory) << 10 }

// hashing runs hash, a password hash or verification that needs cost
// bytes of memory, once the Service's hashing budget has room for it, and
// gives the room back when hash returns. If ctx ends first it returns
// ctx.Err() without running hash. proceed, unless nil, runs first with
// the room taken and may refuse the hash by returning false (hashing then
// returns nil), so that a hash whose result would be refused is never
// computed, however long the wait was.
func (s *Service) hashing(ctx context.Context, cost int64, proceed func() bool, hash func()) error {
	if err := s.acquireHashing(ctx, cost); err != nil {
		return err
	}
	defer s.hashBudget.release(cost)
	if proceed != nil && !proceed() {
		return nil
	}
	if s.hashHook != nil {
		defer s.hashHook(cost)()
	}
	hash()
	return nil
}

// PasswordHashingBudget returns the bytes of memory that password hashes
// and verifications may use at once (Options.PasswordHashingBudget).
func (s *Service) PasswordHashingBudget() int64 { return s.hashBudget.size }

// hashBudget is a weighted semaphore with FIFO waiters, in the manner of
// golang.org/x/sync/semaphore (which the root package does not import):
// it bounds the memory that password hashes use at once.
//
// Its rules:
//   - acquire(ctx, n) takes n of size at once if no one waits and n fits;
//     otherwise it queues behind every earlier waiter. A waiter is granted
//     only from the front of the queue, so a small request never overtakes
//     a large one that came first (a large one cannot starve).
//   - n above size is taken as size: a hash costlier than the whole budget
//     still runs, alone.
//   - A waiter whose ctx ends leaves the queue and returns ctx.Err(),
//     having taken nothing; if it was at the front, the waiters behind it
//     that now fit are granted, so a cancellation never wedges the queue.
//     A ctx already done fails at once, even when n would fit.
//   - release(n) gives back what acquire(ctx, n) took and grants the
//     waiters at the front, in order, for as long as they fit.
type hashBudget struct {
	size int64

	mu      sync.Mutex
	held    int64
	waiters list.List // of *budgetWaiter, oldest first
}

// budgetWaiter is one queued acquire; ready is closed when it is granted.
type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newHashBudget(size int64) *hashBudget { return &hashBudget{size: size} }

// clamp returns what a request for n takes of the budget.
func (b *hashBudget) clamp(n int64) int64 { return min(n, b.size) }

func (b *hashBudget) acquire(ctx context.Context, n int64) error {
	n = b.clamp(n)
	done := ctx.Done()
	b.mu.Lock()
	select {
	case <-done:
		b.mu.Unlock()
		return ctx.Err()
	default:
	}
	if b.waiters.Len() == 0 && b.size-b.held >= n {
		b.held += n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-done:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready:
		// Granted while ctx ended: give it back, as if never granted.
		b.held -= n
		b.grant()
	default:
		front := b.waiters.Front() == elem
		b.waiters.Remove(elem)
		if front {
			b.grant() // those behind it may fit now
		}
	}
	return ctx.Err()
}

func (b *hashBudget) release(n int64) {
	n = b.clamp(n)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.held {
		panic("identity: hash budget released more than held")
	}
	b.held -= n
	b.grant()
}

// grant grants the waiters at the front, in order, while they fit. b.mu
// is held.
func (b *hashBudget) grant() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*budgetWaiter)
		if b.size-b.held < w.n {
			return
		}
		b.held += w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}
