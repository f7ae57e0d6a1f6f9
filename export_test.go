package identity

import "context"

// This file exports internals to the tests of package identity_test only.

// HashBudget is the weighted semaphore behind Options.PasswordHashingBudget.
type HashBudget struct{ b *hashBudget }

// NewHashBudget returns a budget of size.
func NewHashBudget(size int64) HashBudget { return HashBudget{newHashBudget(size)} }

// Acquire is hashBudget.acquire.
func (h HashBudget) Acquire(ctx context.Context, n int64) error { return h.b.acquire(ctx, n) }

// Release is hashBudget.release.
func (h HashBudget) Release(n int64) { h.b.release(n) }

// State returns how much of the budget is held and how many wait.
func (h HashBudget) State() (held int64, waiting int) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	return h.b.held, h.b.waiters.Len()
}

// SetHashHook makes s call hook with the cost of every password hash or
// verification when it starts, holding its share of the budget, and the
// function hook returns when it ends. Set it before s is in use.
func SetHashHook(s *Service, hook func(cost int64) (done func())) { s.hashHook = hook }

// HashWaiters returns how many hashes of s wait for the budget.
func HashWaiters(s *Service) int {
	_, waiting := HashBudget{s.hashBudget}.State()
	return waiting
}
