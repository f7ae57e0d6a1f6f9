package identity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// lockoutEnv is a testEnv whose workspace locks after 5 failed attempts
// for 10 minutes, with an endpoint subscribed to every event of the
// lockout.
type lockoutEnv struct {
	*testEnv
	hookID int64
}

func newLockoutEnv(t *testing.T) *lockoutEnv {
	t.Helper()
	e := &lockoutEnv{testEnv: newTestEnv(t, nil)}
	setLockout(t, e.testEnv, identity.LockoutPolicy{Threshold: 5, Duration: 10 * time.Minute})
	e.hookID = e.hook(identity.EventLoginFailed, identity.EventUserLocked, identity.EventUserUnlocked)
	return e
}

func setLockout(t *testing.T, e *testEnv, p identity.LockoutPolicy) {
	t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Lockout = p
	// The lockout alone: the throttle's count of the login would refuse
	// attempts past its own limit first.
	s.Throttle.Disabled = true
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
}

// events returns "type reason/by" of the endpoint's deliveries, in order:
// login.failed with its reason, user.locked with its until,
// user.unlocked with its by.
func (e *lockoutEnv) events() []string {
	e.t.Helper()
	var out []string
	for _, p := range e.payloads(e.hookID) {
		var ev struct {
			Type string
			Data struct{ Reason, By, Until string }
		}
		if err := json.Unmarshal([]byte(p), &ev); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, ev.Type+" "+ev.Data.Reason+ev.Data.By+ev.Data.Until)
	}
	return out
}

// wantLocked checks that err is CodeLocked ending at until.
func wantLocked(t *testing.T, err error, until time.Time) {
	t.Helper()
	identitytest.WantCode(t, err, identity.CodeLocked)
	if got := err.(*identity.Error).LockedUntil; !got.Equal(until) {
		t.Errorf("LockedUntil = %v, want %v", got, until)
	}
}

// TestLockoutExactUnderConcurrency: 50 wrong passwords at once against a
// threshold of 5: exactly 5 are verified (login.failed wrong_password),
// 45 refused for the lock without a verification (reason locked), the
// account locks once (user.locked), and the right password is refused
// until the lock ends.
func TestLockoutExactUnderConcurrency(t *testing.T) {
	e := newLockoutEnv(t)
	const n = 50
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = e.ws.Authenticate(e.ctx, "ada", "wrong password") })
	}
	wg.Wait()
	codes := map[identity.Code]int{}
	for _, err := range errs {
		codes[identity.ErrorCode(err)]++
	}
	if diff := cmp.Diff(map[identity.Code]int{identity.CodeUnauthenticated: 5, identity.CodeLocked: 45}, codes); diff != "" {
		t.Errorf("answers to 50 wrong passwords (-want +got):\n%s", diff)
	}
	got := e.events()
	sort.Strings(got)
	var want []string
	for range 45 {
		want = append(want, "login.failed locked")
	}
	for range 5 {
		want = append(want, "login.failed wrong_password")
	}
	want = append(want, "user.locked 2026-03-14T15:19:26.535897Z")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	until := t0.Add(10 * time.Minute)
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	wantLocked(t, err, until)
	e.clock.Set(until.Add(-time.Microsecond))
	_, err = e.ws.Authenticate(e.ctx, "ADA@example.com", adaPassword)
	wantLocked(t, err, until)
	e.clock.Set(until)
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("the right password when the lock has ended: %v", err)
	}
	if tail := e.events()[len(want):]; !cmp.Equal(tail, []string{"login.failed locked", "login.failed locked", "user.unlocked expiry"}) {
		t.Errorf("events after the lock: %q, want two refusals for the lock, then user.unlocked by expiry", tail)
	}
}

// TestLockoutCountsConsecutiveFailures: a success resets the count; the
// threshold'th consecutive failure locks, the one before does not; an
// unknown user or a user without a password is never locked.
func TestLockoutCountsConsecutiveFailures(t *testing.T) {
	e := newLockoutEnv(t)
	fail := func(times int) {
		for range times {
			_, err := e.ws.Authenticate(e.ctx, "ada", "wrong password")
			identitytest.WantCode(t, err, identity.CodeUnauthenticated)
		}
	}
	fail(4)
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("the right password after 4 failures: %v", err)
	}
	fail(4)
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("after a success and 4 more failures: %v", err)
	}
	fail(5)
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	wantLocked(t, err, t0.Add(10*time.Minute))

	for range 20 {
		_, err := e.ws.Authenticate(e.ctx, "ghost", "wrong password")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
}

// TestUnlockUser: an administrator's unlock ends the lock at once with
// user.unlocked by admin and clears the count; unlocking a user that is
// not locked emits nothing; an unknown user is not found.
func TestUnlockUser(t *testing.T) {
	e := newLockoutEnv(t)
	for range 5 {
		_, _ = e.ws.Authenticate(e.ctx, "ada", "wrong password")
	}
	if err := e.ws.UnlockUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("the right password after the unlock: %v", err)
	}
	if err := e.ws.UnlockUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	// The count was cleared: four failures do not lock.
	for range 4 {
		_, _ = e.ws.Authenticate(e.ctx, "ada", "wrong password")
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("after the unlock and four failures: %v", err)
	}
	var tail []string
	for _, ev := range e.events() {
		if ev[:5] == "user." {
			tail = append(tail, ev)
		}
	}
	if diff := cmp.Diff([]string{"user.locked 2026-03-14T15:19:26.535897Z", "user.unlocked admin"}, tail); diff != "" {
		t.Errorf("lock events (-want +got):\n%s", diff)
	}
	identitytest.WantCode(t, e.ws.UnlockUser(e.ctx, 99), identity.CodeNotFound)
}

// TestLockoutOff: with the policy off, failures never lock.
func TestLockoutOff(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Disabled: true, Threshold: 1})
	for range 20 {
		_, _ = e.ws.Authenticate(e.ctx, "ada", "wrong password")
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("lockout off, the right password after 20 failures: %v", err)
	}
}

// TestLockoutDefaults: a workspace made without settings locks after 10
// failures for 15 minutes; the throttle's count of the login, 10 in 15
// minutes by default, answers before the lock does.
func TestLockoutDefaults(t *testing.T) {
	e := newTestEnv(t, nil)
	for range 9 {
		_, err := e.ws.Authenticate(e.ctx, "ada", "wrong password")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("the right password after 9 failures: %v", err)
	}
	for range 10 {
		_, err := e.ws.Authenticate(e.ctx, "ada", "wrong password")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	wantRateLimited(t, err, 15*time.Minute)
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Throttle.Disabled = true
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.Authenticate(e.ctx, "ada", adaPassword)
	wantLocked(t, err, t0.Add(15*time.Minute))
}

// TestLockoutPolicyValidation: the policy's bounds, both sides.
func TestLockoutPolicyValidation(t *testing.T) {
	tests := []struct {
		policy identity.LockoutPolicy
		field  string // "" when valid
	}{
		{identity.LockoutPolicy{}, ""},
		{identity.LockoutPolicy{Threshold: 1, Duration: time.Second}, ""},
		{identity.LockoutPolicy{Threshold: 1000, Duration: 720 * time.Hour}, ""},
		{identity.LockoutPolicy{Threshold: -1}, "lockout.threshold"},
		{identity.LockoutPolicy{Threshold: 1001}, "lockout.threshold"},
		{identity.LockoutPolicy{Duration: -time.Second}, "lockout.duration"},
		{identity.LockoutPolicy{Duration: time.Second - 1}, "lockout.duration"},
		{identity.LockoutPolicy{Duration: 1500 * time.Millisecond}, "lockout.duration"},
		{identity.LockoutPolicy{Duration: 720*time.Hour + time.Second}, "lockout.duration"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.policy), func(t *testing.T) {
			e := newTestEnv(t, nil)
			s := identity.DefaultSettings()
			s.Lockout = tt.policy
			err := e.ws.UpdateSettings(e.ctx, s)
			if tt.field == "" {
				identitytest.WantCode(t, err, "")
				return
			}
			identitytest.WantFields(t, err, []identity.FieldError{{Field: tt.field, Rule: identity.RuleRange}})
		})
	}
}

// TestLockoutReservationLapses: an attempt reserved by a process that died
// before it ended counts against the threshold for 5 minutes, then no
// more.
func TestLockoutReservationLapses(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Threshold: 1})
	lapse := t0.Add(5 * time.Minute)
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		return tx.PutLoginAttempts("acme", store.LoginAttempts{UserID: e.ada.ID, Pending: []time.Time{lapse}})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The attempt waits for room while the dead reservation holds it...
	e.clock.Set(lapse.Add(-time.Microsecond))
	ctx, cancel := context.WithTimeout(e.ctx, 50*time.Millisecond)
	defer cancel()
	_, err = e.ws.Authenticate(ctx, "ada", adaPassword)
	if err != context.DeadlineExceeded {
		t.Fatalf("while the dead attempt's reservation holds: %v, want to wait until the context ends", err)
	}
	// ...and not once it has lapsed.
	e.clock.Set(lapse)
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Fatalf("once the dead attempt's reservation lapsed: %v", err)
	}
}

// TestLockoutConcurrentRightPasswords: right passwords sent at once, many
// more than the threshold, all succeed: attempts beyond the threshold wait
// for room instead of being refused.
func TestLockoutConcurrentRightPasswords(t *testing.T) {
	e := newLockoutEnv(t)
	const n = 30
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = e.ws.Authenticate(e.ctx, "ada", adaPassword) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("login %d of %d at once: %v", i, n, err)
		}
	}
	if got := e.events(); len(got) != 0 {
		t.Errorf("events of right passwords: %q, want none", got)
	}
}

// TestLockoutWaitEndsWithContext: an attempt waiting for room among the
// attempts in flight returns its context's error when the context ends.
func TestLockoutWaitEndsWithContext(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Threshold: 1})
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		return tx.PutLoginAttempts("acme", store.LoginAttempts{UserID: e.ada.ID, Pending: []time.Time{t0.Add(time.Minute)}})
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error)
	go func() {
		_, err := e.ws.Authenticate(ctx, "ada", adaPassword)
		done <- err
	}()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Authenticate with its context cancelled while waiting: %v, want context.Canceled", err)
	}
}

// holdFirstHash makes the Service's first password verification wait,
// once it holds its share of the hashing budget, until release is
// closed; hashing is closed when it has begun. Later hashes run at once.
func holdFirstHash(svc *identity.Service) (hashing <-chan struct{}, release chan<- struct{}) {
	begun, free := make(chan struct{}), make(chan struct{})
	var started atomic.Bool
	identity.SetHashHook(svc, func(int64) func() {
		if started.CompareAndSwap(false, true) {
			close(begun)
			<-free
		}
		return func() {}
	})
	return begun, free
}

// TestLockoutReservesAttemptsInFlight: an attempt whose password is being
// verified holds its place under the threshold: with a threshold of 1, a
// second attempt waits while the first one's hash runs (here until its
// context ends), and goes on once the first has ended. The second attempt
// also drops a reservation that has lapsed, and waits all the same.
func TestLockoutReservesAttemptsInFlight(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Threshold: 1})
	hashing, release := holdFirstHash(e.svc)
	first := make(chan error, 1)
	go func() {
		_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
		first <- err
	}()
	<-hashing
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		st, err := tx.LoginAttempts("acme", e.ada.ID)
		if err != nil {
			return err
		}
		st.Pending = append(st.Pending, t0) // a dead process's, lapsed now
		return tx.PutLoginAttempts("acme", st)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := e.ws.Authenticate(ctx, "ada", adaPassword); err != context.DeadlineExceeded {
		t.Errorf("a second attempt while the first is verified: %v, want to wait until its context ends", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first attempt: %v", err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Errorf("an attempt after the first ended: %v", err)
	}
}

// TestLockoutRefusalReleasesReservation: an attempt whose password was
// right but whose account was locked while it was verified is refused for
// the lock, and still gives its reservation back.
func TestLockoutRefusalReleasesReservation(t *testing.T) {
	e := newTestEnv(t, nil)
	setLockout(t, e, identity.LockoutPolicy{Threshold: 3})
	hashing, release := holdFirstHash(e.svc)
	first := make(chan error, 1)
	go func() {
		_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
		first <- err
	}()
	<-hashing
	until := t0.Add(time.Hour)
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		st, err := tx.LoginAttempts("acme", e.ada.ID)
		if err != nil {
			return err
		}
		if len(st.Pending) != 1 {
			return fmt.Errorf("%d reservations while the attempt is verified, want 1", len(st.Pending))
		}
		st.LockedUntil = until
		return tx.PutLoginAttempts("acme", st)
	})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	wantLocked(t, <-first, until)
	err = e.st.Store.View(e.ctx, func(tx store.Tx) error {
		st, err := tx.LoginAttempts("acme", e.ada.ID)
		if err == nil && len(st.Pending) != 0 {
			err = fmt.Errorf("reservations after the attempt ended: %v, want none", st.Pending)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// TestLockoutExpiredLockEndsOnce: an attempt that finds the lock's time
// over clears it (user.unlocked, by expiry) even when it must then wait
// for room among the attempts in flight; its retries find the lock
// cleared and say nothing more.
func TestLockoutExpiredLockEndsOnce(t *testing.T) {
	e := newLockoutEnv(t)
	setLockout(t, e.testEnv, identity.LockoutPolicy{Threshold: 1})
	hashing, release := holdFirstHash(e.svc)
	first := make(chan error, 1)
	go func() {
		_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
		first <- err
	}()
	<-hashing
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		st, err := tx.LoginAttempts("acme", e.ada.ID)
		if err != nil {
			return err
		}
		st.Failures, st.LockedUntil = 1, t0 // over at now
		return tx.PutLoginAttempts("acme", st)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := e.ws.Authenticate(ctx, "ada", adaPassword); err != context.DeadlineExceeded {
		t.Errorf("an attempt while the first is verified: %v, want to wait until its context ends", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first attempt: %v", err)
	}
	if diff := cmp.Diff([]string{"user.unlocked expiry"}, e.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
