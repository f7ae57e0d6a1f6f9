package identity

import (
	"context"
	"sync"
	"time"
)

// deliveryRegistry tracks a Service's running dispatchers and the attempts
// they have in flight per endpoint, so that a deletion can cancel them and
// a new delivery can wake them. Its entries live only while dispatchers and
// attempts do. The zero value is ready to use.
type deliveryRegistry struct {
	mu          sync.Mutex
	attempts    map[endpointKey]map[*liveAttempt]struct{}
	dispatchers map[*Dispatcher]struct{}
}

// liveAttempt is an attempt in flight: cancel stops it, done is closed
// when it has returned.
type liveAttempt struct {
	key    endpointKey
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *deliveryRegistry) addAttempt(ep endpointKey, cancel context.CancelFunc) *liveAttempt {
	a := &liveAttempt{key: ep, cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.attempts == nil {
		r.attempts = map[endpointKey]map[*liveAttempt]struct{}{}
	}
	set := r.attempts[ep]
	if set == nil {
		set = map[*liveAttempt]struct{}{}
		r.attempts[ep] = set
	}
	set[a] = struct{}{}
	return a
}

func (r *deliveryRegistry) removeAttempt(a *liveAttempt) {
	r.mu.Lock()
	if set := r.attempts[a.key]; set != nil {
		delete(set, a)
		if len(set) == 0 {
			delete(r.attempts, a.key)
		}
	}
	r.mu.Unlock()
	close(a.done)
}

// cancelAttempts cancels the endpoint's attempts in flight and returns
// them.
func (r *deliveryRegistry) cancelAttempts(key endpointKey) []*liveAttempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cancelled []*liveAttempt
	for a := range r.attempts[key] {
		a.cancel()
		cancelled = append(cancelled, a)
	}
	return cancelled
}

func (r *deliveryRegistry) addDispatcher(d *Dispatcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dispatchers == nil {
		r.dispatchers = map[*Dispatcher]struct{}{}
	}
	r.dispatchers[d] = struct{}{}
}

func (r *deliveryRegistry) removeDispatcher(d *Dispatcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.dispatchers, d)
}

// endpointAbortWait bounds how long endpointDeleted waits for a cancelled
// attempt to return. Cancelling closes the connection, so an attempt
// returns at once; the bound only guards against a wedged worker.
const endpointAbortWait = 5 * time.Second

// endpointDeleted must be called after a transaction that deleted a
// webhook endpoint has committed (DeleteWebhook does). It cancels the
// attempts to the endpoint that dispatchers of this Service have in
// flight and waits for them to return, so that when it returns nothing is
// being sent to the endpoint and nothing will be: an attempt checks that
// its delivery still exists only after registering itself here. It is
// safe to call when no dispatcher runs.
func (s *Service) endpointDeleted(slug string, endpointID int64) {
	cancelled := s.deliveries.cancelAttempts(endpointKey{slug, endpointID})
	if len(cancelled) == 0 {
		return
	}
	timer := time.NewTimer(endpointAbortWait)
	defer timer.Stop()
	for _, a := range cancelled {
		select {
		case <-a.done:
		case <-timer.C:
			return
		}
	}
}

// deliveriesQueued wakes the dispatchers of this Service so that
// deliveries committed just now are claimed without waiting for the next
// poll. Calling it is optional: a dispatcher polls anyway.
func (s *Service) deliveriesQueued() {
	s.deliveries.mu.Lock()
	defer s.deliveries.mu.Unlock()
	for d := range s.deliveries.dispatchers {
		d.notify()
	}
}
