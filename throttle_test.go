package identity_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// wantRateLimited checks that err is CodeRateLimited with the RetryAfter.
func wantRateLimited(t *testing.T, err error, retryAfter time.Duration) {
	t.Helper()
	identitytest.WantCode(t, err, identity.CodeRateLimited)
	if e, ok := err.(*identity.Error); ok && e.RetryAfter != retryAfter {
		t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, retryAfter)
	}
}

// setThrottle sets the workspace's throttle policy, with the lockout off
// so that the throttle alone answers.
func (e *testEnv) setThrottle(p identity.ThrottlePolicy) {
	e.t.Helper()
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	s.Throttle = p
	s.Lockout.Disabled = true
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

// from returns e.ctx as a request from the address.
func (e *testEnv) from(addr string) context.Context {
	return identity.WithRequestInfo(e.ctx, identity.RequestInfo{Address: netip.MustParseAddr(addr), UserAgent: "test"})
}

// authCode returns the code of Authenticate's answer, "" on success.
func authCode(ws *identity.Workspace, ctx context.Context, login, password string) identity.Code {
	_, err := ws.Authenticate(ctx, login, password)
	return identity.ErrorCode(err)
}

// TestThrottlePerLogin: the failures naming a login, existing or not,
// are counted in a sliding window; past the count every attempt at the
// login is refused, the right password too, until the oldest failure
// leaves the window; a right password clears the login's count.
func TestThrottlePerLogin(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setThrottle(identity.ThrottlePolicy{PerLogin: identity.Rate{Count: 3, Window: 10 * time.Minute}})
	hook := e.hook(identity.EventLoginFailed)
	for _, login := range []string{"ada", "nobody"} {
		start := e.clock.Now()
		for i := range 3 {
			if got := authCode(e.ws, e.ctx, login, "wrong password"); got != identity.CodeUnauthenticated {
				t.Fatalf("%s failure %d: %q", login, i+1, got)
			}
			e.clock.Advance(time.Minute)
		}
		// Three failures at start, +1m, +2m; now is +3m.
		_, err := e.ws.Authenticate(e.ctx, login, adaPassword)
		wantRateLimited(t, err, 7*time.Minute)
		// Folded like usernames: the same login.
		_, err = e.ws.Authenticate(e.ctx, strings.ToUpper(login), "wrong password")
		wantRateLimited(t, err, 7*time.Minute)
		e.clock.Set(start.Add(10*time.Minute - time.Microsecond))
		_, err = e.ws.Authenticate(e.ctx, login, "wrong password")
		wantRateLimited(t, err, time.Microsecond)
		e.clock.Set(start.Add(10 * time.Minute))
		want := identity.CodeUnauthenticated // the first failure has left the window
		if login == "ada" {
			want = ""
		}
		if got := authCode(e.ws, e.ctx, login, adaPassword); got != want {
			t.Errorf("%s at the end of the window: %q, want %q", login, got, want)
		}
	}
	// Ada's right password cleared her count: three failures again.
	for i := range 3 {
		if got := authCode(e.ws, e.ctx, "ada", "wrong password"); got != identity.CodeUnauthenticated {
			t.Errorf("ada's failure %d after her sign-in: %q", i+1, got)
		}
	}
	var throttled int
	for _, p := range e.payloads(hook) {
		if strings.Contains(p, `"reason":"throttled"`) {
			throttled++
		}
	}
	if throttled != 6 {
		t.Errorf("%d login.failed events with reason throttled, want 6", throttled)
	}
}

// TestThrottlePerAddress: the failures of one client address are counted
// across logins; other addresses, and calls without an address, are not
// affected; an IPv6 address counts for its /64.
func TestThrottlePerAddress(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setThrottle(identity.ThrottlePolicy{PerAddress: identity.Rate{Count: 3, Window: time.Hour}})
	for _, login := range []string{"x1", "x2", "x3"} {
		if got := authCode(e.ws, e.from("192.0.2.7"), login, "wrong"); got != identity.CodeUnauthenticated {
			t.Fatalf("%s: %q", login, got)
		}
	}
	wantRateLimited(t, errOf(e.ws.Authenticate(e.from("192.0.2.7"), "ada", adaPassword)), time.Hour)
	if got := authCode(e.ws, e.from("192.0.2.8"), "ada", adaPassword); got != "" {
		t.Errorf("another address: %q", got)
	}
	if got := authCode(e.ws, e.ctx, "ada", adaPassword); got != "" {
		t.Errorf("no address: %q", got)
	}

	for _, login := range []string{"y1", "y2", "y3"} {
		if got := authCode(e.ws, e.from("2001:db8:1:2::1"), login, "wrong"); got != identity.CodeUnauthenticated {
			t.Fatalf("%s: %q", login, got)
		}
	}
	if got := authCode(e.ws, e.from("2001:db8:1:2:ffff::9"), "ada", adaPassword); got != identity.CodeRateLimited {
		t.Errorf("the same /64: %q, want rate_limited", got)
	}
	if got := authCode(e.ws, e.from("2001:db8:1:3::1"), "ada", adaPassword); got != "" {
		t.Errorf("another /64: %q", got)
	}
}

// TestThrottleSuccessDoesNotCount: a right password takes its attempt
// back from the address's count.
func TestThrottleSuccessDoesNotCount(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setThrottle(identity.ThrottlePolicy{PerAddress: identity.Rate{Count: 2, Window: time.Hour}})
	from := e.from("198.51.100.1")
	steps := []struct {
		login, password string
		want            identity.Code
	}{
		{"x", "wrong", identity.CodeUnauthenticated},
		{"ada", adaPassword, ""},
		{"ada", adaPassword, ""},
		{"y", "wrong", identity.CodeUnauthenticated},
		{"ada", adaPassword, identity.CodeRateLimited},
	}
	for i, s := range steps {
		if got := authCode(e.ws, from, s.login, s.password); got != s.want {
			t.Errorf("step %d (%s): %q, want %q", i, s.login, got, s.want)
		}
	}
}

// TestThrottleDisabled: a disabled policy counts nothing.
func TestThrottleDisabled(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setThrottle(identity.ThrottlePolicy{Disabled: true, PerLogin: identity.Rate{Count: 1, Window: time.Hour},
		PerAddress: identity.Rate{Count: 1, Window: time.Hour}})
	for i := range 5 {
		if got := authCode(e.ws, e.from("192.0.2.1"), "ada", "wrong"); got != identity.CodeUnauthenticated {
			t.Fatalf("failure %d: %q", i+1, got)
		}
	}
}

// TestThrottleExactUnderConcurrency: attempts at once against a count of
// 5 are refused past the fifth, whatever their order.
func TestThrottleExactUnderConcurrency(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setThrottle(identity.ThrottlePolicy{PerLogin: identity.Rate{Count: 5, Window: time.Hour}})
	var mu sync.Mutex
	counts := map[identity.Code]int{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			code := authCode(e.ws, e.ctx, "ada", "wrong")
			mu.Lock()
			counts[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	want := map[identity.Code]int{identity.CodeUnauthenticated: 5, identity.CodeRateLimited: 15}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// TestThrottleDefaults: a workspace without throttle settings refuses
// the 51st failure of an address and the 11th of a login in 15 minutes.
func TestThrottleDefaults(t *testing.T) {
	e := newTestEnv(t, nil)
	for i := range 10 {
		if got := authCode(e.ws, e.ctx, "nobody", "wrong"); got != identity.CodeUnauthenticated {
			t.Fatalf("login failure %d: %q", i+1, got)
		}
	}
	wantRateLimited(t, errOf(e.ws.Authenticate(e.ctx, "nobody", "wrong")), 15*time.Minute)
	from := e.from("203.0.113.9")
	for i := range 50 {
		if got := authCode(e.ws, from, "login-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "wrong"); got != identity.CodeUnauthenticated {
			t.Fatalf("address failure %d: %q", i+1, got)
		}
	}
	wantRateLimited(t, errOf(e.ws.Authenticate(from, "ada", adaPassword)), 15*time.Minute)
}

// TestPasswordResetClearsThrottle: a reset through the emailed link
// clears the counts of the user's username and email.
func TestPasswordResetClearsThrottle(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setThrottle(identity.ThrottlePolicy{PerLogin: identity.Rate{Count: 1, Window: time.Hour}})
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.SMTP = resetSMTP()
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	for _, login := range []string{"ada", "ada@example.com"} {
		authCode(e.ws, e.ctx, login, "wrong")
		if got := authCode(e.ws, e.ctx, login, adaPassword); got != identity.CodeRateLimited {
			t.Fatalf("%s before the reset: %q", login, got)
		}
	}
	if err := e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil); err != nil {
		t.Fatal(err)
	}
	token := e.resetToken(e.queue(nil))
	if _, err := e.ws.ResetPassword(e.ctx, token, "a new passphrase"); err != nil {
		t.Fatal(err)
	}
	for _, login := range []string{"ada", "ada@example.com"} {
		if got := authCode(e.ws, e.ctx, login, "a new passphrase"); got != "" {
			t.Errorf("%s after the reset: %q", login, got)
		}
	}
}

// recordingLimiter is a Limiter of the program's own: it records what it
// is asked and fails when told to.
type recordingLimiter struct {
	mu    sync.Mutex
	takes []string
	fail  error
}

func (l *recordingLimiter) Take(_ context.Context, key string, rate identity.Rate) (func(), time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.takes = append(l.takes, key+" "+rate.Window.String()+" "+itoa(rate.Count))
	return func() {}, 0, l.fail
}

func (l *recordingLimiter) Reset(context.Context, string) error { return nil }

// TestOwnLimiter: Options.Limiter replaces the in-memory one; its keys
// name the workspace and what they count, its failure fails the sign-in.
func TestOwnLimiter(t *testing.T) {
	l := &recordingLimiter{}
	e := newTestEnv(t, &identity.Options{Limiter: l})
	if got := authCode(e.ws, e.from("192.0.2.1"), "ADA", "wrong"); got != identity.CodeUnauthenticated {
		t.Fatalf("got %q", got)
	}
	want := []string{"login\x00acme\x00ada 15m0s 10", "addr\x00acme\x00192.0.2.1/32 15m0s 50"}
	if diff := cmp.Diff(want, l.takes); diff != "" {
		t.Errorf("takes (-want +got):\n%s", diff)
	}
	l.fail = errors.New("limiter down")
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err == nil || err.Error() != "limiter down" {
		t.Errorf("with a failing limiter: %v, want its error", err)
	}
}

// TestThrottlePolicyValidation: the policy's bounds, both sides.
func TestThrottlePolicyValidation(t *testing.T) {
	tests := []struct {
		policy identity.ThrottlePolicy
		field  string // "" when valid
	}{
		{identity.ThrottlePolicy{}, ""},
		{identity.ThrottlePolicy{PerAddress: identity.Rate{Count: 1, Window: time.Second}}, ""},
		{identity.ThrottlePolicy{PerLogin: identity.Rate{Count: 100000, Window: 24 * time.Hour}, MailInterval: 24 * time.Hour}, ""},
		{identity.ThrottlePolicy{PerAddress: identity.Rate{Count: -1}}, "throttle.perAddress.count"},
		{identity.ThrottlePolicy{PerLogin: identity.Rate{Count: 100001}}, "throttle.perLogin.count"},
		{identity.ThrottlePolicy{PerLogin: identity.Rate{Window: time.Second - 1}}, "throttle.perLogin.window"},
		{identity.ThrottlePolicy{PerAddress: identity.Rate{Window: 24*time.Hour + time.Second}}, "throttle.perAddress.window"},
		{identity.ThrottlePolicy{PerAddress: identity.Rate{Window: 1500 * time.Millisecond}}, "throttle.perAddress.window"},
		{identity.ThrottlePolicy{MailInterval: -time.Second}, "throttle.mailInterval"},
		{identity.ThrottlePolicy{MailInterval: 24*time.Hour + time.Second}, "throttle.mailInterval"},
	}
	e := newTestEnv(t, nil)
	for _, tt := range tests {
		s := identity.DefaultSettings()
		s.Throttle = tt.policy
		err := e.ws.UpdateSettings(e.ctx, s)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.policy, err)
			}
			continue
		}
		identitytest.WantFields(t, err, []identity.FieldError{{Field: tt.field, Rule: identity.RuleRange}})
	}
}

// TestResetMailCoalesced: ten reset requests for one address in a second
// queue one email; after the interval another may go; another address is
// counted apart.
func TestResetMailCoalesced(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(resetSMTP())
	jobs := func() int {
		t.Helper()
		l, err := e.ws.ListEmailJobs(e.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l.Total
	}
	for range 10 {
		if err := e.ws.RequestPasswordReset(e.ctx, "ADA@example.com", nil); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(100 * time.Millisecond)
	}
	if n := jobs(); n != 1 {
		t.Errorf("%d jobs after ten requests, want 1", n)
	}
	if err := e.ws.RequestPasswordReset(e.ctx, "bob@example.com", nil); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(t0.Add(5*time.Minute - time.Microsecond))
	if err := e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil); err != nil {
		t.Fatal(err)
	}
	if n := jobs(); n != 2 {
		t.Errorf("%d jobs just before the interval ends, want 2", n)
	}
	e.clock.Set(t0.Add(5 * time.Minute))
	if err := e.ws.RequestPasswordReset(e.ctx, "ada@example.com", nil); err != nil {
		t.Fatal(err)
	}
	if n := jobs(); n != 3 {
		t.Errorf("%d jobs once the interval is over, want 3", n)
	}
}

// TestVerificationMailThrottled: a second verification email within the
// interval is CodeRateLimited, with the time left.
func TestVerificationMailThrottled(t *testing.T) {
	e := newTestEnv(t, nil)
	s, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.SMTP = resetSMTP()
	s.Throttle.MailInterval = 2 * time.Minute
	if err := e.ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.SendVerificationEmail(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Second)
	wantRateLimited(t, e.ws.SendVerificationEmail(e.ctx, e.ada.ID), 90*time.Second)
	e.clock.Advance(90 * time.Second)
	if err := e.ws.SendVerificationEmail(e.ctx, e.ada.ID); err != nil {
		t.Errorf("after the interval: %v", err)
	}
}

func errOf(_ identity.User, err error) error { return err }
