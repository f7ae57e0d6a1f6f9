package identity_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/argon2"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store/memstore"
)

// budgetWait bounds every wait of these tests for something another
// goroutine does. Nothing is timed: a wait that runs out is a failure,
// however long the machine took.
const budgetWait = time.Minute

// cheapCost is what one hash at cheapArgon2 (m=64 KiB) costs the budget.
const cheapCost = 64 << 10

// budgetUntil polls cond until it holds, failing the test after budgetWait.
func budgetUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !pollUntil(cond) {
		t.Fatalf("no %s within %v", what, budgetWait)
	}
}

// received returns the next value from ch, failing the test after
// budgetWait.
func received[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(budgetWait):
		t.Fatalf("nothing received within %v", budgetWait)
		panic("unreachable")
	}
}

// newBudgetEnv is newTestEnv with the budget (0: the default) whose
// context ends after budgetWait, so that a call waiting for a budget that
// never frees fails instead of hanging.
func newBudgetEnv(t *testing.T, budget int64) *testEnv {
	t.Helper()
	e := newTestEnv(t, &identity.Options{PasswordHashingBudget: budget})
	ctx, cancel := context.WithTimeout(e.ctx, budgetWait)
	t.Cleanup(cancel)
	e.ctx = ctx
	return e
}

// pollUntil polls cond until it holds or budgetWait has passed, and
// reports whether it held. Any goroutine may call it.
func pollUntil(cond func() bool) bool {
	deadline := time.Now().Add(budgetWait)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// TestHashBudgetRules plays the semaphore's rules step by step. After each
// step the waiters it let through (granted, in any order) or sent away
// with their context's error (failed) have returned, and then exactly held
// of the budget is taken and waiting waiters are queued.
func TestHashBudgetRules(t *testing.T) {
	type step struct {
		// op: "acquire" starts a waiter name for n; "acquire-done" does so
		// with a context already cancelled; "release" gives back n;
		// "cancel" cancels the context of waiter name.
		op   string
		name string
		n    int64

		granted []string
		failed  string
		held    int64
		waiting int
	}
	acquire := func(name string, n, held int64, waiting int, granted ...string) step {
		return step{op: "acquire", name: name, n: n, granted: granted, held: held, waiting: waiting}
	}
	release := func(n, held int64, waiting int, granted ...string) step {
		return step{op: "release", n: n, granted: granted, held: held, waiting: waiting}
	}
	cancel := func(name string, held int64, waiting int, granted ...string) step {
		return step{op: "cancel", name: name, failed: name, granted: granted, held: held, waiting: waiting}
	}
	tests := []struct {
		name  string
		size  int64
		steps []step
	}{
		{"what fits is taken at once, to the last byte", 10, []step{
			acquire("a", 4, 4, 0, "a"),
			acquire("b", 6, 10, 0, "b"),
			acquire("c", 1, 10, 1),
			release(4, 7, 0, "c"),
			release(6, 1, 0),
			release(1, 0, 0),
		}},
		{"waiters are granted in the order they came", 10, []step{
			acquire("a", 10, 10, 0, "a"),
			acquire("b", 3, 10, 1),
			acquire("c", 3, 10, 2),
			acquire("d", 3, 10, 3),
			release(3, 10, 2, "b"),
			release(3, 10, 1, "c"),
			release(3, 10, 0, "d"),
		}},
		{"a small waiter does not overtake a large one that came first", 10, []step{
			acquire("a", 6, 6, 0, "a"),
			acquire("b", 8, 6, 1),
			acquire("c", 1, 6, 2), // 4 are free, but b is first
			release(6, 9, 0, "b", "c"),
		}},
		{"a release wakes the waiters in front that fit, and stops at the first that does not", 10, []step{
			acquire("a", 10, 10, 0, "a"),
			acquire("b", 3, 10, 1),
			acquire("c", 3, 10, 2),
			acquire("d", 5, 10, 3),
			acquire("e", 1, 10, 4),
			release(10, 6, 2, "b", "c"), // d needs 5 of the 4 free; e waits behind it
			release(3, 9, 0, "d", "e"),
		}},
		{"a cost above the budget is taken as the whole budget", 10, []step{
			acquire("a", 25, 10, 0, "a"),
			acquire("b", 1, 10, 1),
			release(25, 1, 0, "b"),
			acquire("c", 25, 1, 1), // needs all 10
			release(1, 10, 0, "c"),
			release(25, 0, 0),
		}},
		{"a waiter whose context ends returns its error and takes nothing", 10, []step{
			acquire("a", 10, 10, 0, "a"),
			acquire("b", 4, 10, 1),
			cancel("b", 10, 0),
			release(10, 0, 0),
			acquire("c", 10, 10, 0, "c"), // nothing of the budget was lost
		}},
		{"a cancelled waiter at the front lets those behind it in", 10, []step{
			acquire("a", 4, 4, 0, "a"),
			acquire("b", 8, 4, 1),
			acquire("c", 2, 4, 2),
			cancel("b", 6, 0, "c"),
		}},
		{"a cancelled waiter behind others changes nothing for them", 10, []step{
			acquire("a", 10, 10, 0, "a"),
			acquire("b", 3, 10, 1),
			acquire("c", 3, 10, 2),
			cancel("c", 10, 1),
			release(10, 3, 0, "b"),
		}},
		{"a context already done fails even when the budget is free", 10, []step{
			{op: "acquire-done", name: "a", n: 1, failed: "a", held: 0, waiting: 0},
			acquire("b", 10, 10, 0, "b"),
		}},
	}
	type outcome struct {
		name string
		err  error
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := identity.NewHashBudget(tt.size)
			outcomes := make(chan outcome)
			cancels := map[string]context.CancelFunc{}
			running := 0
			defer func() {
				// Let every waiter still queued go, so none outlives the test.
				for _, cancel := range cancels {
					cancel()
				}
				for ; running > 0; running-- {
					<-outcomes
				}
			}()
			for i, s := range tt.steps {
				switch s.op {
				case "acquire", "acquire-done":
					ctx, cancel := context.WithCancel(context.Background())
					cancels[s.name] = cancel
					if s.op == "acquire-done" {
						cancel()
					}
					running++
					go func() { outcomes <- outcome{s.name, b.Acquire(ctx, s.n)} }()
				case "release":
					b.Release(s.n)
				case "cancel":
					cancels[s.name]()
				}
				var granted []string
				failed := ""
				for want := len(s.granted) + min(len(s.failed), 1); want > 0; want-- {
					select {
					case o := <-outcomes:
						running--
						switch {
						case o.err == nil:
							granted = append(granted, o.name)
						case o.err == context.Canceled: // as it is, not wrapped
							failed = o.name
						default:
							t.Fatalf("step %d: waiter %s: %v", i, o.name, o.err)
						}
					case <-time.After(budgetWait):
						t.Fatalf("step %d (%s %s %d): waiters returned: granted %v, failed %q; want granted %v, failed %q",
							i, s.op, s.name, s.n, granted, failed, s.granted, s.failed)
					}
				}
				slices.Sort(granted)
				if !slices.Equal(granted, s.granted) || failed != s.failed {
					t.Fatalf("step %d (%s %s %d): granted %v, failed %q; want granted %v, failed %q",
						i, s.op, s.name, s.n, granted, failed, s.granted, s.failed)
				}
				// A waiter queues on its own goroutine: wait for the state to
				// settle, and fail if it settles anywhere else.
				deadline := time.Now().Add(budgetWait)
				for {
					held, waiting := b.State()
					if held == s.held && waiting == s.waiting {
						break
					}
					select {
					case o := <-outcomes:
						running--
						t.Fatalf("step %d (%s %s %d): waiter %s returned (err %v), want it waiting", i, s.op, s.name, s.n, o.name, o.err)
					default:
					}
					if time.Now().After(deadline) {
						t.Fatalf("step %d (%s %s %d): held %d, waiting %d; want held %d, waiting %d", i, s.op, s.name, s.n, held, waiting, s.held, s.waiting)
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

// TestHashBudgetReleaseMoreThanHeld: giving back more than was taken is a
// bug of the caller, and panics rather than inflate the budget.
func TestHashBudgetReleaseMoreThanHeld(t *testing.T) {
	b := identity.NewHashBudget(10)
	if err := b.Acquire(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Release(4) after Acquire(3) did not panic")
		}
	}()
	b.Release(4)
}

func TestPasswordHashingBudgetOption(t *testing.T) {
	tests := []struct {
		budget int64
		want   int64 // 0: New refuses it
	}{
		{0, 268435456},
		{1, 1},
		{64 << 20, 67108864},
		{-1, 0},
	}
	for _, tt := range tests {
		svc, err := identity.New(memstore.New(), &identity.Options{PasswordHashingBudget: tt.budget})
		if tt.want == 0 {
			identitytest.WantCode(t, err, identity.CodeInvalid)
			identitytest.WantFields(t, err, field("PasswordHashingBudget", identity.RuleRange))
			continue
		}
		if err != nil {
			t.Fatalf("New with budget %d: %v", tt.budget, err)
		}
		if got := svc.PasswordHashingBudget(); got != tt.want {
			t.Errorf("PasswordHashingBudget() with Options %d = %d, want %d", tt.budget, got, tt.want)
		}
		svc.Close()
	}
	if identity.DefaultPasswordHashingBudget != 256<<20 {
		t.Errorf("DefaultPasswordHashingBudget = %d, want 256 MiB", identity.DefaultPasswordHashingBudget)
	}
}

// hashRecorder is a Service's hash hook: it records the cost of every hash
// and how many ran at once. When gate is set, the first hash waits in the
// hook, holding its share of the budget, until gate returns.
type hashRecorder struct {
	mu           sync.Mutex
	costs        []int64
	running      int
	maxRunning   int
	gate         func()
	gateTimedOut bool
	entered      chan struct{} // closed when the first hash is in the hook
}

func recordHashes(svc *identity.Service) *hashRecorder {
	r := &hashRecorder{entered: make(chan struct{})}
	identity.SetHashHook(svc, r.hook)
	return r
}

func (r *hashRecorder) hook(cost int64) func() {
	r.mu.Lock()
	r.costs = append(r.costs, cost)
	r.running++
	r.maxRunning = max(r.maxRunning, r.running)
	first := len(r.costs) == 1
	r.mu.Unlock()
	if first {
		close(r.entered)
		if r.gate != nil {
			r.gate()
		}
	}
	return func() {
		r.mu.Lock()
		r.running--
		r.mu.Unlock()
	}
}

// until returns a gate that waits until cond holds; if it never does,
// snapshot's caller learns it from gateTimedOut.
func (r *hashRecorder) until(cond func() bool) func() {
	return func() {
		if !pollUntil(cond) {
			r.mu.Lock()
			r.gateTimedOut = true
			r.mu.Unlock()
		}
	}
}

// snapshot returns the costs recorded so far, never nil, and the most
// hashes that ran at once.
func (r *hashRecorder) snapshot() ([]int64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64{}, r.costs...), r.maxRunning
}

// overlapping reports whether more than one hash runs now.
func (r *hashRecorder) overlapping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running > 1
}

func repeatCost(cost int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = cost
	}
	return out
}

// TestHashesStayWithinBudget: with a budget that fits one hash and not
// two, concurrent calls never run two hashes at once. The first hash
// waits in the hook until every other call waits for the budget (or a
// second hash starts beside it, which fails the test), so a budget that
// lets two through is caught however the goroutines are scheduled.
func TestHashesStayWithinBudget(t *testing.T) {
	const n = 20
	tests := []struct {
		name  string
		setup func(e *testEnv)
		call  func(e *testEnv, i int) error
	}{
		{"CreateUser", nil, func(e *testEnv, i int) error {
			_, err := e.ws.CreateUser(e.ctx, newUserNamed(fmt.Sprintf("user%d", i)))
			return err
		}},
		{"Authenticate, wrong password", func(e *testEnv) {
			for i := range n {
				e.user(fmt.Sprintf("user%d", i))
			}
		}, func(e *testEnv, i int) error {
			_, err := e.ws.Authenticate(e.ctx, fmt.Sprintf("user%d", i), "wrong password")
			if identity.ErrorCode(err) != identity.CodeUnauthenticated {
				return fmt.Errorf("Authenticate: %v, want invalid credentials", err)
			}
			return nil
		}},
		{"Authenticate, unknown user", nil, func(e *testEnv, i int) error {
			_, err := e.ws.Authenticate(e.ctx, fmt.Sprintf("ghost%d", i), "whatever-pass")
			if identity.ErrorCode(err) != identity.CodeUnauthenticated {
				return fmt.Errorf("Authenticate: %v, want invalid credentials", err)
			}
			return nil
		}},
		{"Authenticate, right password", func(e *testEnv) {
			for i := range n {
				e.user(fmt.Sprintf("user%d", i))
			}
		}, func(e *testEnv, i int) error {
			_, err := e.ws.Authenticate(e.ctx, fmt.Sprintf("user%d", i), "correct horse battery")
			return err
		}},
		{"SetPassword", func(e *testEnv) {
			for i := range n {
				e.user(fmt.Sprintf("user%d", i))
			}
		}, func(e *testEnv, i int) error {
			return e.ws.SetPassword(e.ctx, int64(i+2), "another passphrase") // ada is 1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newBudgetEnv(t, 2*cheapCost-1)
			if tt.setup != nil {
				tt.setup(e)
			}
			rec := recordHashes(e.svc)
			rec.gate = rec.until(func() bool {
				return identity.HashWaiters(e.svc) == n-1 || rec.overlapping()
			})
			errs := make(chan error, n)
			for i := range n {
				go func() { errs <- tt.call(e, i) }()
			}
			for range n {
				if err := received(t, errs); err != nil {
					t.Error(err)
				}
			}
			costs, most := rec.snapshot()
			if rec.gateTimedOut {
				t.Errorf("the other %d calls did not all wait for the budget within %v", n-1, budgetWait)
			}
			if most != 1 {
				t.Errorf("%d hashes ran at once, want 1", most)
			}
			if diff := cmp.Diff(repeatCost(cheapCost, n), costs); diff != "" {
				t.Errorf("costs of the hashes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCancelledWhileWaitingForBudget: a call whose context ends while it
// waits for the budget returns the context's error as it is and writes
// nothing, and its place in the budget is not lost.
func TestCancelledWhileWaitingForBudget(t *testing.T) {
	tests := []struct {
		name string
		call func(ctx context.Context, e *testEnv) error
		// unchanged fails the test if the call wrote anything.
		unchanged func(t *testing.T, e *testEnv)
		// hashes is how many hashes ran in all: the holder's, those of
		// unchanged, and one more after; never the cancelled call's.
		hashes int
	}{
		{"CreateUser", func(ctx context.Context, e *testEnv) error {
			_, err := e.ws.CreateUser(ctx, newUserNamed("late"))
			return err
		}, func(t *testing.T, e *testEnv) {
			list, err := e.ws.ListUsers(e.ctx, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range list.Items {
				names = append(names, u.Username)
			}
			if diff := cmp.Diff([]string{"ada", "holder"}, names); diff != "" {
				t.Errorf("users (-want +got):\n%s", diff)
			}
		}, 2},
		{"CreateUser with an idempotency key", func(ctx context.Context, e *testEnv) error {
			nu := newUserNamed("late")
			nu.Idempotency = &identity.Idempotency{Key: "late-1"}
			_, err := e.ws.CreateUser(ctx, nu)
			return err
		}, func(t *testing.T, e *testEnv) {
			// The key is free again: a retry creates the user.
			nu := newUserNamed("late")
			nu.Idempotency = &identity.Idempotency{Key: "late-1"}
			if _, err := e.ws.CreateUser(e.ctx, nu); err != nil {
				t.Errorf("retry with the same key: %v", err)
			}
		}, 3},
		{"SetPassword", func(ctx context.Context, e *testEnv) error {
			return e.ws.SetPassword(ctx, e.ada.ID, "another passphrase")
		}, func(t *testing.T, e *testEnv) {
			if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
				t.Errorf("ada's old password: %v", err)
			}
		}, 3},
		{"Authenticate, wrong password", func(ctx context.Context, e *testEnv) error {
			_, err := e.ws.Authenticate(ctx, "ada", "wrong password")
			return err
		}, func(t *testing.T, e *testEnv) {
			if got := e.payloads(1); len(got) != 0 {
				t.Errorf("login.failed deliveries: %q, want none", got)
			}
		}, 2},
		{"Authenticate, unknown user", func(ctx context.Context, e *testEnv) error {
			_, err := e.ws.Authenticate(ctx, "ghost", "whatever-pass")
			return err
		}, func(t *testing.T, e *testEnv) {
			if got := e.payloads(1); len(got) != 0 {
				t.Errorf("login.failed deliveries: %q, want none", got)
			}
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newBudgetEnv(t, cheapCost)
			if hook := e.hook(identity.EventLoginFailed); hook != 1 {
				t.Fatalf("webhook id %d, want 1", hook)
			}
			open := make(chan struct{})
			rec := recordHashes(e.svc)
			rec.gate = func() {
				select {
				case <-open:
				case <-e.ctx.Done():
				}
			}
			holder := make(chan error, 1)
			go func() {
				_, err := e.ws.CreateUser(e.ctx, newUserNamed("holder"))
				holder <- err
			}()
			received(t, rec.entered)

			ctx, cancel := context.WithCancel(e.ctx)
			got := make(chan error, 1)
			go func() { got <- tt.call(ctx, e) }()
			budgetUntil(t, "waiter", func() bool { return identity.HashWaiters(e.svc) == 1 })
			cancel()
			if err := received(t, got); err != context.Canceled {
				t.Errorf("error = %v (%T), want context.Canceled as it is", err, err)
			}
			if n := identity.HashWaiters(e.svc); n != 0 {
				t.Errorf("%d waiters after the cancellation, want 0", n)
			}
			close(open)
			if err := received(t, holder); err != nil {
				t.Fatal(err)
			}
			tt.unchanged(t, e)
			// The cancelled call took nothing: a hash still finds its room.
			e.user("after")
			if diff := cmp.Diff(repeatCost(cheapCost, tt.hashes), firstOf(rec.snapshot())); diff != "" {
				t.Errorf("hashes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTakenRefusedBeforeHashing: a username or email already taken is
// refused without computing the password's hash: when it was taken before
// the call, at once, without waiting for a budget that another hash holds;
// when it was taken while the call waited for the budget, once the call
// has its room and before it hashes.
func TestTakenRefusedBeforeHashing(t *testing.T) {
	// holdBudget starts SetPassword for ada, whose hash holds the whole
	// budget until the returned function is called, which waits for it.
	holdBudget := func(t *testing.T, e *testEnv, rec *hashRecorder) (free func()) {
		t.Helper()
		open := make(chan struct{})
		rec.gate = func() {
			select {
			case <-open:
			case <-e.ctx.Done():
			}
		}
		holder := make(chan error, 1)
		go func() { holder <- e.ws.SetPassword(e.ctx, e.ada.ID, "another passphrase") }()
		received(t, rec.entered)
		return func() {
			t.Helper()
			close(open)
			if err := received(t, holder); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		nu     identity.NewUser
		fields []identity.FieldError
	}{
		{"username", identity.NewUser{Username: "ADA", Email: "other@example.com", FullName: "O", Password: "correct horse battery"},
			field("username", identity.RuleTaken)},
		{"email", identity.NewUser{Username: "other", Email: "Ada@Example.com", FullName: "O", Password: "correct horse battery"},
			field("email", identity.RuleTaken)},
		{"both", identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "O", Password: "correct horse battery"},
			append(field("username", identity.RuleTaken), field("email", identity.RuleTaken)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name+" taken before", func(t *testing.T) {
			e := newBudgetEnv(t, cheapCost)
			rec := recordHashes(e.svc)
			free := holdBudget(t, e, rec)
			_, err := e.ws.CreateUser(e.ctx, tt.nu) // the budget is held throughout
			identitytest.WantCode(t, err, identity.CodeConflict)
			identitytest.WantFields(t, err, tt.fields)
			free()
			if diff := cmp.Diff([]int64{cheapCost}, firstOf(rec.snapshot())); diff != "" {
				t.Errorf("hashes: only the holder's (-want +got):\n%s", diff)
			}
		})
	}
	// bob is taken while CreateUser(bob) waits for the budget, by an
	// import, which hashes nothing.
	t.Run("taken while waiting", func(t *testing.T) {
		e := newBudgetEnv(t, cheapCost)
		rec := recordHashes(e.svc)
		free := holdBudget(t, e, rec)
		got := make(chan error, 1)
		go func() {
			_, err := e.ws.CreateUser(e.ctx, newUserNamed("bob"))
			got <- err
		}()
		budgetUntil(t, "waiter", func() bool { return identity.HashWaiters(e.svc) == 1 })
		if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "Bob", Email: "robert@example.com", FullName: "Bob"}}); err != nil {
			t.Fatal(err)
		}
		free()
		err := received(t, got)
		identitytest.WantCode(t, err, identity.CodeConflict)
		identitytest.WantFields(t, err, field("username", identity.RuleTaken))
		if diff := cmp.Diff([]int64{cheapCost}, firstOf(rec.snapshot())); diff != "" {
			t.Errorf("hashes: only the holder's (-want +got):\n%s", diff)
		}
	})
}

// firstOf returns the first of two results, for cmp.Diff of a snapshot.
func firstOf[A, B any](a A, _ B) A { return a }

// TestHashCosts: what each hash costs the budget, by kind: argon2id its
// m KiB, bcrypt and PBKDF2 16 KiB; a successful login with an outdated
// hash also pays for the rehash; a password no policy accepts pays
// nothing.
func TestHashCosts(t *testing.T) {
	e := newBudgetEnv(t, 0)
	for i, h := range []string{
		"$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",                              // U*U
		"pbkdf2_sha256$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA=",                // correct horse
		"$argon2id$v=19$m=128,t=1,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo", // correct horse
		"",
	} {
		name := []string{"bcrypt", "pbkdf2", "argon2old", "nopass"}[i]
		_, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: name, Email: name + "@example.com", FullName: "I", PasswordHash: h}})
		if err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		call  func() error
		costs []int64
	}{
		{"CreateUser", func() error { _, err := e.ws.CreateUser(e.ctx, newUserNamed("new")); return err }, []int64{65536}},
		{"SetPassword", func() error { return e.ws.SetPassword(e.ctx, e.ada.ID, adaPassword) }, []int64{65536}},
		{"Authenticate, right password", loginCall(e, "ada", adaPassword, true), []int64{65536}},
		{"Authenticate, wrong password", loginCall(e, "ada", "wrong", false), []int64{65536}},
		{"Authenticate, unknown user", loginCall(e, "ghost", "whatever-pass", false), []int64{65536}},
		{"Authenticate, no password", loginCall(e, "nopass", "whatever-pass", false), []int64{65536}},
		{"Authenticate, 4097 characters", loginCall(e, "ada", strings.Repeat("a", 4097), false), []int64{}},
		{"Authenticate bcrypt, wrong password", loginCall(e, "bcrypt", "U*V", false), []int64{16384}},
		{"Authenticate bcrypt, right password: and the rehash", loginCall(e, "bcrypt", "U*U", true), []int64{16384, 65536}},
		{"Authenticate bcrypt again: now argon2id", loginCall(e, "bcrypt", "U*U", true), []int64{65536}},
		{"Authenticate PBKDF2, right password", loginCall(e, "pbkdf2", "correct horse", true), []int64{16384, 65536}},
		{"Authenticate argon2id m=128, right password", loginCall(e, "argon2old", "correct horse", true), []int64{131072, 65536}},
	}
	for _, tt := range tests {
		rec := recordHashes(e.svc)
		if err := tt.call(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		costs, _ := rec.snapshot()
		if diff := cmp.Diff(tt.costs, costs); diff != "" {
			t.Errorf("%s: costs (-want +got):\n%s", tt.name, diff)
		}
	}
}

// loginCall returns a call of Authenticate that fails unless it succeeds or
// is refused as ok says.
func loginCall(e *testEnv, name, password string, ok bool) func() error {
	return func() error {
		_, err := e.ws.Authenticate(e.ctx, name, password)
		if ok || identity.ErrorCode(err) != identity.CodeUnauthenticated {
			return err
		}
		return nil
	}
}

// TestHashAboveBudgetRunsAlone: a budget smaller than one hash still lets
// every hash run, one at a time.
func TestHashAboveBudgetRunsAlone(t *testing.T) {
	e := newBudgetEnv(t, 1000)
	rec := recordHashes(e.svc)
	const n = 5
	rec.gate = rec.until(func() bool {
		return identity.HashWaiters(e.svc) == n-1 || rec.overlapping()
	})
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.ws.CreateUser(e.ctx, newUserNamed(fmt.Sprintf("user%d", i)))
			errs <- err
		}()
	}
	for range n {
		if err := received(t, errs); err != nil {
			t.Error(err)
		}
	}
	if costs, most := rec.snapshot(); most != 1 || len(costs) != n {
		t.Errorf("%d hashes, %d at once; want %d, 1 at once", len(costs), most, n)
	}
}

// benchLoginPassword is the password of benchLoginWorkspace's users.
const benchLoginPassword = "correct horse battery"

// benchLoginWorkspace returns a fresh workspace with n users, user000 and
// on, whose password is benchLoginPassword hashed by argon2id at the
// default parameters (one hash, computed here and imported n times).
func benchLoginWorkspace(b *testing.B, opts *identity.Options, n int) *identity.Workspace {
	b.Helper()
	svc, err := identity.Open(filepath.Join(b.TempDir(), "bench.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(context.Background(), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	a := identity.DefaultArgon2Params
	salt := []byte("bench-login-salt")
	key := argon2.IDKey([]byte(benchLoginPassword), salt, a.Time, a.Memory, a.Threads, 32)
	hash := fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", a.Memory, a.Time, a.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
	users := make([]identity.ImportedUser, n)
	for i := range users {
		name := fmt.Sprintf("user%03d", i)
		users[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "U", PasswordHash: hash}
	}
	if _, err := ws.ImportUsers(context.Background(), users); err != nil {
		b.Fatal(err)
	}
	return ws
}

// BenchmarkLogin measures Authenticate with the right password at the
// default argon2id parameters (m=19 MiB, t=2, p=1) and the default budget,
// from GOMAXPROCS goroutines, each logging in as its own user (so that no
// lockout rule about attempts in flight on one account comes into play).
func BenchmarkLogin(b *testing.B) {
	ctx := context.Background()
	ws := benchLoginWorkspace(b, nil, 100)
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		name := fmt.Sprintf("user%03d", (next.Add(1)-1)%100)
		for pb.Next() {
			if _, err := ws.Authenticate(ctx, name, benchLoginPassword); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "logins/s")
}

// BenchmarkLoginMemory reports the high-water mark of the process's
// resident memory (VmHWM) while 200 users log in at once, right password,
// at the default argon2id parameters, against the budget. VmHWM is the
// peak of the process's life: it is reset to the current resident size
// first where Linux allows (/proc/self/clear_refs), and the benchmark says
// when it could not. The sub-benchmarks run at budgets of 64 MiB and the
// default. The benchmark sets no memory limit: run it with GOMEMLIMIT to
// see the effect of one.
func BenchmarkLoginMemory(b *testing.B) {
	const logins = 200
	for _, budget := range []int64{64 << 20, identity.DefaultPasswordHashingBudget} {
		b.Run(fmt.Sprintf("budget=%dMiB", budget>>20), func(b *testing.B) {
			ctx := context.Background()
			ws := benchLoginWorkspace(b, &identity.Options{PasswordHashingBudget: budget}, logins)
			var peak, base int64
			reset := true
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory() // so that the base is what is live
				reset = reset && resetHWM()
				base = procStatusKiB(b, "self", "VmHWM")
				b.StartTimer()
				var wg sync.WaitGroup
				for i := range logins {
					wg.Go(func() {
						if _, err := ws.Authenticate(ctx, fmt.Sprintf("user%03d", i), benchLoginPassword); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				peak = max(peak, procStatusKiB(b, "self", "VmHWM")-base)
			}
			b.ReportMetric(float64(base)/1024, "base-MiB")
			b.ReportMetric(float64(peak)/1024, "peak-above-base-MiB")
			b.ReportMetric(float64(budget>>20), "budget-MiB")
			if !reset {
				b.Log("VmHWM could not be reset: the peak above base may be hidden by an earlier, higher peak")
			}
		})
	}
}

// resetHWM resets the process's VmHWM to its current resident size and
// reports whether it could.
func resetHWM() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// procStatusKiB reads a "kB" line of /proc/PID/status.
func procStatusKiB(tb testing.TB, pid, name string) int64 {
	tb.Helper()
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if value, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
			if err != nil {
				tb.Fatalf("%s: %q: %v", name, line, err)
			}
			return n
		}
	}
	tb.Fatalf("no %s in /proc/%s/status", name, pid)
	return 0
}
