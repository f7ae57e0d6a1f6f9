package identity

import (
	"context"
	"sync"
	"time"
)

// A refused sign-in must not tell, by how long it took, why it was
// refused: an unknown login costs a hash of a dummy, a wrong password a
// hash and the lockout's writes, a locked account or a throttled client
// no hash at all, and an account imported with a slow legacy hash
// (PBKDF2 at 600,000 iterations) several times a hash. Giving every path
// the work of the slowest would spend CPU on exactly the refusals an
// attacker can make cheaply by the thousand; so instead every refusal
// waits, on a timer, until it has taken as long as the slowest refusal
// the Service made recently: the refusal floor.
//
// The floor is the largest duration of a verified refusal (from the start
// of the call to its answer, hash, writes and waits for the hashing budget
// included, waits for room under the lockout threshold excluded) in the
// last floorWindow, capped at maxRefusalFloor. It learns from the
// refusals themselves, so it follows the machine's speed, its load, the
// Service's hashing parameters and the workspace's hashes without
// configuration. Its costs: a refused sign-in takes as long as the
// slowest recent one (a legacy hash raises every refusal's time to its
// own for floorWindow), and until the first refusal after a start the
// floor is what one verification of the dummy costs.
const (
	// floorWindow is how long an observed refusal keeps the floor up.
	floorWindow = 10 * time.Minute
	// floorBuckets divides the window: the floor drops a bucket at a time.
	floorBuckets = 10
	// maxRefusalFloor caps the floor, so that one stalled write cannot
	// make every refusal slow for a window.
	maxRefusalFloor = time.Second
	// refusalSlack is added to the floor, so that every refusal, the one
	// that cost nearly the floor included, ends with a sleep of about this
	// long: how late a sleeping goroutine wakes depends on how long it
	// slept (a short sleep finds its thread still spinning, a long one
	// parked), and without the slack a refusal that waited long (a locked
	// account) comes back measurably later than one that waited little.
	refusalSlack = 2 * time.Millisecond
	// floorMarginDivisor sets the margin over the floor a refusal waits
	// for, a quarter of it: a verification slower than every recent one
	// (the machine got busier) is still padded to the same end unless it
	// is a quarter slower again.
	floorMarginDivisor = 4
)

// refusalFloor keeps the largest refusal duration of each bucket of the
// last floorWindow, on a monotonic clock.
type refusalFloor struct {
	now func() time.Time
	mu  sync.Mutex
	// buckets[i] is the largest duration observed in the bucket starting
	// at starts[i].
	buckets [floorBuckets]time.Duration
	starts  [floorBuckets]time.Time
}

// bucketSpan is the time one bucket covers.
const bucketSpan = floorWindow / floorBuckets

// observe records the duration of a refusal (or of a verification,
// whatever its outcome) made at now.
func (f *refusalFloor) observe(d time.Duration) {
	now := f.now()
	start := now.Truncate(bucketSpan)
	i := int(start.UnixNano()/int64(bucketSpan)) % floorBuckets
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.starts[i].Equal(start) {
		f.starts[i], f.buckets[i] = start, 0
	}
	f.buckets[i] = max(f.buckets[i], min(d, maxRefusalFloor))
}

// floor returns the floor at now: zero when nothing was observed in the
// window.
func (f *refusalFloor) floor() time.Duration {
	oldest := f.now().Add(-floorWindow)
	f.mu.Lock()
	defer f.mu.Unlock()
	var floor time.Duration
	for i, start := range f.starts {
		if start.After(oldest) {
			floor = max(floor, f.buckets[i])
		}
	}
	return floor
}

// refusalTiming is the timing of one sign-in: started when the call
// began; paused adds up the waits for room under the lockout threshold,
// which are not the refusal's own cost; decided is set once a
// verification decided the outcome, whose cost the floor learns.
type refusalTiming struct {
	started time.Time
	paused  time.Duration
	decided bool
}

// startRefusalTiming starts timing a sign-in.
func (s *Service) startRefusalTiming() *refusalTiming {
	return &refusalTiming{started: s.floor.now()}
}

// verified records the cost of a verification that has just decided,
// refused or not: the floor learns from it.
func (s *Service) verified(t *refusalTiming) {
	s.floor.observe(s.floor.now().Sub(t.started) - t.paused)
}

// refusalWait is how much longer a refusal waits under the floor when
// elapsed has passed since its call began, paused of it waiting for room
// (which the floor leaves out of every refusal's cost, so it waits again
// on top): until floor, a quarter of it and the slack have passed.
func refusalWait(floor, elapsed, paused time.Duration) time.Duration {
	return floor + floor/floorMarginDivisor + refusalSlack - (elapsed - paused)
}

// refused returns err after waiting until the sign-in has taken at least
// the floor, or until ctx ends (the answer is then not awaited anyway).
// When the floor knows nothing yet, the wait is one verification of the
// dummy, timed and observed, so that the first refusals after a start are
// not the quick ones.
func (s *Service) refused(ctx context.Context, t *refusalTiming, err error) error {
	floor := s.floor.floor()
	if floor == 0 {
		if _, verr := s.passwordMatches(ctx, s.dummy(), ""); verr != nil {
			return err
		}
		s.verified(t)
		floor = s.floor.floor()
	}
	wait := refusalWait(floor, s.floor.now().Sub(t.started), t.paused)
	if wait <= 0 {
		return err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	return err
}
