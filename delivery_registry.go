package identity

import (
	"context"
	"sync"
	"time"
)

// registry tracks, process-wide, the running dispatchers of each Service
// and the attempts they have in flight per endpoint, so that a deletion
// can cancel them and a new delivery can wake them. It is a package
// variable rather than a Service field so that a Service needs no setup
// for it; its entries live only while dispatchers and attempts do.
var registry = &deliveryRegistry{
	attempts:    map[liveKey]map[*liveAttempt]struct{}{},
	dispatchers: map[*Service]map[*Dispatcher]struct{}{},
}

type deliveryRegistry struct {
	mu          sync.Mutex
	attempts    map[liveKey]map[*liveAttempt]struct{}
	dispatchers map[*Service]map[*Dispatcher]struct{}
}

// liveKey names an endpoint of one Service.
type liveKey struct {
	svc *Service
	endpointKey
}

// liveAttempt is an attempt in flight: cancel stops it, done is closed
// when it has returned.
type liveAttempt struct {
	key    liveKey
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *deliveryRegistry) addAttempt(svc *Service, ep endpointKey, cancel context.CancelFunc) *liveAttempt {
	a := &liveAttempt{key: liveKey{svc, ep}, cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.attempts[a.key]
	if set == nil {
		set = map[*liveAttempt]struct{}{}
		r.attempts[a.key] = set
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
func (r *deliveryRegistry) cancelAttempts(key liveKey) []*liveAttempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cancelled []*liveAttempt
	for a := range r.attempts[key] {
		a.cancel()
		cancelled = append(cancelled, a)
	}
	return cancelled
}

func (r *deliveryRegistry) addDispatcher(svc *Service, d *Dispatcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.dispatchers[svc]
	if set == nil {
		set = map[*Dispatcher]struct{}{}
		r.dispatchers[svc] = set
	}
	set[d] = struct{}{}
}

func (r *deliveryRegistry) removeDispatcher(svc *Service, d *Dispatcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if set := r.dispatchers[svc]; set != nil {
		delete(set, d)
		if len(set) == 0 {
			delete(r.dispatchers, svc)
		}
	}
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
	cancelled := registry.cancelAttempts(liveKey{s, endpointKey{slug, endpointID}})
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
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for d := range registry.dispatchers[s] {
		d.notify()
	}
}
