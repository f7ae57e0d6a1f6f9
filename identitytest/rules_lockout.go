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
	s, err := e.ws.Settings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Lockout = identity.LockoutPolicy{Threshold: 3, Duration: time.Hour}
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	ada := e.user("ada")
	ok, codes := race(12, func() error {
		_, err := e.ws.Authenticate(e.ctx, "ada", "wrong password")
		return err
	})
	counts := map[identity.Code]int{}
	for _, c := range codes {
		counts[c]++
	}
	if ok != 0 || counts[identity.CodeUnauthenticated] != 3 || counts[identity.CodeLocked] != 9 {
		t.Fatalf("12 wrong passwords at once, threshold 3: %d succeeded, %v; want 3 unauthenticated and 9 locked", ok, counts)
	}
	_, err = e.ws.Authenticate(e.ctx, "ada", "s3cret-passphrase")
	WantCode(t, err, identity.CodeLocked)
	if err := e.ws.UnlockUser(e.ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "ada", "s3cret-passphrase"); err != nil {
		t.Errorf("the right password after UnlockUser: %v", err)
	}
}
