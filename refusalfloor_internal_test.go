package identity

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/identitylib/identity/store/memstore"
)

// TestRefusalFloorWindow: the floor is the largest duration observed in
// the last ten one-minute buckets, capped at a second; it falls a bucket
// at a time, and is zero when nothing was observed.
func TestRefusalFloorWindow(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 0, 30, 0, time.UTC)
	f := &refusalFloor{now: func() time.Time { return now }}
	if got := f.floor(); got != 0 {
		t.Fatalf("empty floor = %v", got)
	}
	// Each observation counts in its minute's bucket until ten minutes
	// after the bucket began.
	steps := []struct {
		advance time.Duration
		observe time.Duration // 0: none
		want    time.Duration
	}{
		{0, 2 * time.Second, time.Second},                              // 15:00:30, capped
		{time.Minute, 50 * time.Millisecond, time.Second},              // 15:01:30
		{time.Minute, 30 * time.Millisecond, time.Second},              // 15:02:30
		{0, 20 * time.Millisecond, time.Second},                        // a smaller one in the same bucket
		{7*time.Minute + 29*time.Second, 0, time.Second},               // 15:09:59
		{time.Second, 0, 50 * time.Millisecond},                        // 15:10:00: the 15:00 bucket left
		{time.Minute, 0, 30 * time.Millisecond},                        // 15:11:00: the 15:01 bucket left
		{time.Minute, 0, 0},                                            // 15:12:00: nothing is left
		{time.Hour, 10 * time.Millisecond, 10 * time.Millisecond},      // a slot reused an hour on starts afresh
		{10 * time.Minute, 5 * time.Millisecond, 5 * time.Millisecond}, // the same slot ten minutes on: the old value is gone
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if s.observe > 0 {
			f.observe(s.observe)
		}
		if got := f.floor(); got != s.want {
			t.Errorf("step %d (%s): floor = %v, want %v", i, now.Format("15:04:05"), got, s.want)
		}
	}
}

// TestEveryRefusalWaitsForTheFloor: whatever the reason of a refusal
// (unknown login, wrong password, no password, disabled user, a password
// no policy accepts, a locked account, the throttle), Authenticate
// returns it no sooner than the floor after it began. It asserts only a
// lower bound, which a slow machine cannot break.
func TestEveryRefusalWaitsForTheFloor(t *testing.T) {
	const floor = 150 * time.Millisecond
	ctx := context.Background()
	svc, err := New(memstore.New(), &Options{PasswordHashing: &Argon2Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	set := DefaultSettings()
	set.Lockout = LockoutPolicy{Threshold: 1, Duration: time.Hour}
	set.Throttle = ThrottlePolicy{PerAddress: Rate{Count: 100, Window: time.Hour}}
	ws, err := svc.CreateWorkspace(ctx, "acme", &set)
	if err != nil {
		t.Fatal(err)
	}
	var dan User
	for _, nu := range []NewUser{
		{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: "analytical engine"},
		{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "difference engine"},
		{Username: "dan", Email: "dan@example.com", FullName: "Dan", Password: "jacquard loom"},
	} {
		if dan, err = ws.CreateUser(ctx, nu); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.DisableUser(ctx, dan.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ImportUsers(ctx, []ImportedUser{{Username: "cyd", Email: "cyd@example.com", FullName: "Cyd"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Authenticate(ctx, "bob", "wrong"); ErrorCode(err) != CodeUnauthenticated {
		t.Fatalf("locking bob: %v", err)
	}
	crowded := WithRequestInfo(ctx, RequestInfo{Address: netip.MustParseAddr("192.0.2.1")})
	for i := range 100 {
		ws.Authenticate(crowded, "someone"+string(rune('a'+i%26))+string(rune('a'+i/26)), "wrong")
	}
	svc.floor.observe(floor)
	tests := []struct {
		name            string
		ctx             context.Context
		login, password string
		want            Code
	}{
		{"unknown login", ctx, "nobody", "whatever", CodeUnauthenticated},
		{"wrong password", ctx, "ada", "wrong", CodeUnauthenticated},
		{"no password", ctx, "cyd", "anything", CodeUnauthenticated},
		{"disabled, right password", ctx, "dan", "jacquard loom", CodeUnauthenticated},
		{"a password no policy accepts", ctx, "nobody", string([]byte{0xff, 0xfe}), CodeUnauthenticated},
		{"locked", ctx, "bob", "difference engine", CodeLocked},
		{"throttled", crowded, "ada", "analytical engine", CodeRateLimited},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := ws.Authenticate(tt.ctx, tt.login, tt.password)
		took := time.Since(start)
		if ErrorCode(err) != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.want)
		}
		if took < floor {
			t.Errorf("%s: refused after %v, before the floor of %v", tt.name, took, floor)
		}
	}
}

// TestRefusalFloorLearnsFromVerifications: the floor is set by what
// refusals and successes that verified a password cost, not by the quick
// refusals; and before anything was observed, a refusal costs one
// verification of the dummy rather than nothing.
func TestRefusalFloorLearnsFromVerifications(t *testing.T) {
	ctx := context.Background()
	svc, err := New(memstore.New(), &Options{PasswordHashing: &Argon2Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	set := DefaultSettings()
	set.Lockout = LockoutPolicy{Threshold: 1, Duration: time.Hour}
	ws, err := svc.CreateWorkspace(ctx, "acme", &set)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateUser(ctx, NewUser{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "difference engine"}); err != nil {
		t.Fatal(err)
	}
	if got := svc.floor.floor(); got != 0 {
		t.Fatalf("floor of a new Service = %v", got)
	}
	if _, err := ws.Authenticate(ctx, "bob", "wrong"); ErrorCode(err) != CodeUnauthenticated {
		t.Fatal(err)
	}
	learnt := svc.floor.floor()
	if learnt == 0 {
		t.Fatal("a wrong password's verification left the floor at zero")
	}
	// A locked account's refusal verifies nothing: it waits, and the floor
	// stays what it was unless the wait itself ran long (which observe
	// would only raise, never lower).
	if _, err := ws.Authenticate(ctx, "bob", "difference engine"); ErrorCode(err) != CodeLocked {
		t.Fatal(err)
	}
	if got := svc.floor.floor(); got < learnt {
		t.Errorf("floor fell from %v to %v", learnt, got)
	}

	// A fresh Service whose first refusal is a locked account's: the
	// dummy is verified, and the floor learns its cost.
	svc2, err := New(svc.store, &Options{PasswordHashing: &Argon2Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ws2, err := svc2.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws2.Authenticate(ctx, "bob", "difference engine"); ErrorCode(err) != CodeLocked {
		t.Fatal(err)
	}
	if svc2.floor.floor() == 0 {
		t.Error("the first refusal, a locked account's, left the floor at zero")
	}
}

// TestWaitForRoomCountsItsWaits: the waits for room under the lockout
// threshold are added up for the floor to leave out (they are not a
// verification's cost), and a caller that does not ask is not told.
func TestWaitForRoomCountsItsWaits(t *testing.T) {
	busy := func(n int) func() error {
		return func() error {
			if n == 0 {
				return nil
			}
			n--
			return errAttemptsBusy
		}
	}
	var waited time.Duration
	if err := waitForRoom(context.Background(), &waited, busy(2)); err != nil {
		t.Fatal(err)
	}
	// Two waits: 5 ms, then 10 ms.
	if waited < 15*time.Millisecond {
		t.Errorf("waited %v, want at least 15ms", waited)
	}
	if err := waitForRoom(context.Background(), nil, busy(1)); err != nil {
		t.Fatal(err)
	}
}

// TestRefusalWait: the floor, a quarter more and the slack, less what the
// call has spent on its own (its waits for room left out).
func TestRefusalWait(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		floor, elapsed, paused, want time.Duration
	}{
		{0, 0, 0, 2 * ms},
		{100 * ms, 0, 0, 127 * ms},
		{100 * ms, 40 * ms, 0, 87 * ms},
		{100 * ms, 40 * ms, 30 * ms, 117 * ms},
		{100 * ms, 127 * ms, 0, 0},
		{100 * ms, 200 * ms, 0, -73 * ms},
	}
	for _, tt := range tests {
		if got := refusalWait(tt.floor, tt.elapsed, tt.paused); got != tt.want {
			t.Errorf("refusalWait(%v, %v, %v) = %v, want %v", tt.floor, tt.elapsed, tt.paused, got, tt.want)
		}
	}
}

// TestVerifiedLeavesOutRoomWaits: the floor learns a verification's own
// cost, its waits for room left out.
func TestVerifiedLeavesOutRoomWaits(t *testing.T) {
	svc, err := New(memstore.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	svc.floor.now = func() time.Time { return now }
	timing := &refusalTiming{started: now.Add(-50 * time.Millisecond), paused: 20 * time.Millisecond}
	svc.verified(timing)
	if got := svc.floor.floor(); got != 30*time.Millisecond {
		t.Errorf("floor = %v, want 30ms", got)
	}
}
