package identitytest

import (
	"testing"
	"time"

	"github.com/identitylib/identity"
)

// testRuleConcurrentLockout: wrong passwords sent at once against a
// threshold are verified exactly threshold times, whatever the store:
// the attempts are reserved in the store before they are verified, so
// the others are refused for the lock; and the right password is refused
// until the lock is lifted.
func testRuleConcurrentLockout(t *testing.T, e *env) {
	e.lockAfterThree()
	ada := e.user("ada")
	ok, codes := race(12, func() error {
		_, err := e.ws.Authenticate(e.ctx, "ada", "wrong password")
		return err
	})
	wantThreeCounted(t, "wrong passwords", ok, codes)
	_, err := e.ws.Authenticate(e.ctx, "ada", "s3cret-passphrase")
	WantCode(t, err, identity.CodeLocked)
	if err := e.ws.UnlockUser(e.ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", "s3cret-passphrase"); err != nil {
		t.Errorf("the right password after UnlockUser: %v", err)
	}
}

// lockAfterThree sets the workspace's lockout to three failures, an hour.
func (e *env) lockAfterThree() {
	e.t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	s.Lockout = identity.LockoutPolicy{Threshold: 3, Duration: time.Hour}
	// The lockout alone: the throttle's count of the login would refuse
	// attempts past its own limit first.
	s.Throttle.Disabled = true
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

// wantThreeCounted checks the outcome of 12 wrong attempts at once
// against a threshold of 3: exactly 3 counted, 9 refused for the lock.
func wantThreeCounted(t *testing.T, what string, ok int, codes []identity.Code) {
	t.Helper()
	counts := map[identity.Code]int{}
	for _, c := range codes {
		counts[c]++
	}
	if ok != 0 || counts[identity.CodeUnauthenticated] != 3 || counts[identity.CodeLocked] != 9 {
		t.Fatalf("12 %s at once, threshold 3: %d succeeded, %v; want 3 unauthenticated and 9 locked", what, ok, counts)
	}
}
