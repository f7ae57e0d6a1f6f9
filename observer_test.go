package identity_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// recordingObserver is an identity.Observer that keeps what it is told.
type recordingObserver struct {
	mu        sync.Mutex
	txs       []string // "view ok", "update error", ...
	signIns   []identity.SignInOutcome
	locks     int
	hashWaits int
	audited   []identity.AuditAction
}

func (o *recordingObserver) TransactionDone(kind identity.TxKind, d time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	result := "ok"
	if err != nil {
		result = "error"
	}
	if d < 0 {
		result = "negative duration"
	}
	o.txs = append(o.txs, string(kind)+" "+result)
}

func (o *recordingObserver) SignIn(outcome identity.SignInOutcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.signIns = append(o.signIns, outcome)
}

func (o *recordingObserver) Locked() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.locks++
}

func (o *recordingObserver) Audited(rec identity.AuditRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.audited = append(o.audited, rec.Action)
}

func (o *recordingObserver) HashWait(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hashWaits++
}

// observed is what the observer was told since the last reset.
type observed struct {
	SignIns   []identity.SignInOutcome
	Locks     int
	HashWaits int
}

// take returns what the observer was told of sign-ins, locks and hashes,
// and forgets everything.
func (o *recordingObserver) take() observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := observed{SignIns: o.signIns, Locks: o.locks, HashWaits: o.hashWaits}
	o.txs, o.signIns, o.locks, o.hashWaits = nil, nil, 0, 0
	return got
}

// takeTxs returns the transactions the observer was told of, and forgets
// everything.
func (o *recordingObserver) takeTxs() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	txs := o.txs
	o.txs, o.signIns, o.locks, o.hashWaits = nil, nil, 0, 0
	return txs
}

// TestObserverSignIns: every way a sign-in ends reaches the observer once,
// with its outcome literally, and so do locks and the waits for the
// hashing budget (one per hash).
func TestObserverSignIns(t *testing.T) {
	one := func(o ...identity.SignInOutcome) []identity.SignInOutcome { return o }
	tests := []struct {
		name  string
		setup func(e *testEnv) (act func(e *testEnv) error)
		code  identity.Code // of act's error; "" for none
		want  observed
	}{
		{
			name:  "succeeded",
			setup: func(e *testEnv) func(e *testEnv) error { return authenticate("ada", adaPassword) },
			want:  observed{SignIns: one(identity.SignInSucceeded), HashWaits: 1},
		},
		{
			name:  "unknown user",
			setup: func(e *testEnv) func(e *testEnv) error { return authenticate("ghost", adaPassword) },
			code:  identity.CodeUnauthenticated,
			want:  observed{SignIns: one(identity.SignInUnknownUser), HashWaits: 1},
		},
		{
			name:  "wrong password",
			setup: func(e *testEnv) func(e *testEnv) error { return authenticate("ada", "wrong") },
			code:  identity.CodeUnauthenticated,
			want:  observed{SignIns: one(identity.SignInWrongPassword), HashWaits: 1},
		},
		{
			name: "wrong password, lockout off",
			setup: func(e *testEnv) func(e *testEnv) error {
				setLockout(e.t, e, identity.LockoutPolicy{Disabled: true})
				return authenticate("ada", "wrong")
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInWrongPassword), HashWaits: 1},
		},
		{
			name: "no password",
			setup: func(e *testEnv) func(e *testEnv) error {
				if _, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{Username: "nopass", Email: "nopass@example.com", FullName: "N"}}); err != nil {
					e.t.Fatal(err)
				}
				return authenticate("nopass", adaPassword)
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInNoPassword), HashWaits: 1},
		},
		{
			name: "disabled",
			setup: func(e *testEnv) func(e *testEnv) error {
				if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
					e.t.Fatal(err)
				}
				return authenticate("ada", adaPassword)
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInDisabled), HashWaits: 1},
		},
		{
			name: "the failure that locks",
			setup: func(e *testEnv) func(e *testEnv) error {
				setLockout(e.t, e, identity.LockoutPolicy{Threshold: 2})
				_, _ = e.ws.Authenticate(e.ctx, "ada", "wrong")
				return authenticate("ada", "wrong again")
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInWrongPassword), Locks: 1, HashWaits: 1},
		},
		{
			name: "locked",
			setup: func(e *testEnv) func(e *testEnv) error {
				setLockout(e.t, e, identity.LockoutPolicy{Threshold: 1})
				_, _ = e.ws.Authenticate(e.ctx, "ada", "wrong")
				return authenticate("ada", adaPassword)
			},
			code: identity.CodeLocked,
			want: observed{SignIns: one(identity.SignInLocked)}, // no hash
		},
		{
			name: "mfa required",
			setup: func(e *testEnv) func(e *testEnv) error {
				e.enrol(e.ada.ID)
				return authenticate("ada", adaPassword)
			},
			code: identity.CodeMFARequired,
			want: observed{SignIns: one(identity.SignInMFARequired), HashWaits: 1},
		},
		{
			name: "mfa enrollment required",
			setup: func(e *testEnv) func(e *testEnv) error {
				set, _ := e.ws.GetSettings(e.ctx)
				set.MFA = identity.MFARequired
				if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
					e.t.Fatal(err)
				}
				return authenticate("ada", adaPassword)
			},
			code: identity.CodeMFAEnrollmentRequired,
			want: observed{SignIns: one(identity.SignInMFAEnrollmentRequired), HashWaits: 1},
		},
		{
			name: "second factor succeeded",
			setup: func(e *testEnv) func(e *testEnv) error {
				secret, _ := e.enrol(e.ada.ID)
				ch := e.challenge(identity.CodeMFARequired)
				return verifyCode(ch, e.code(secret, 0))
			},
			want: observed{SignIns: one(identity.SignInSucceeded)},
		},
		{
			name: "wrong code",
			setup: func(e *testEnv) func(e *testEnv) error {
				e.enrol(e.ada.ID)
				ch := e.challenge(identity.CodeMFARequired)
				return verifyCode(ch, "000000")
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInWrongCode)},
		},
		{
			name: "wrong code, lockout off",
			setup: func(e *testEnv) func(e *testEnv) error {
				setLockout(e.t, e, identity.LockoutPolicy{Disabled: true})
				e.enrol(e.ada.ID)
				ch := e.challenge(identity.CodeMFARequired)
				return verifyCode(ch, "000000")
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInWrongCode)},
		},
		{
			name: "the wrong code that locks",
			setup: func(e *testEnv) func(e *testEnv) error {
				setLockout(e.t, e, identity.LockoutPolicy{Threshold: 1})
				e.enrol(e.ada.ID)
				ch := e.challenge(identity.CodeMFARequired)
				return verifyCode(ch, "000000")
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInWrongCode), Locks: 1},
		},
		{
			name: "code while locked",
			setup: func(e *testEnv) func(e *testEnv) error {
				setLockout(e.t, e, identity.LockoutPolicy{Threshold: 1})
				secret, _ := e.enrol(e.ada.ID)
				ch := e.challenge(identity.CodeMFARequired)
				_, _ = e.ws.VerifySecondFactor(e.ctx, ch, "000000")
				return verifyCode(ch, e.code(secret, 0))
			},
			code: identity.CodeLocked,
			want: observed{SignIns: one(identity.SignInLocked)},
		},
		{
			name: "wrong current password in ChangePassword",
			setup: func(e *testEnv) func(e *testEnv) error {
				return func(e *testEnv) error {
					return e.ws.ChangePassword(e.ctx, e.ada.ID, "wrong", "a new password")
				}
			},
			code: identity.CodeUnauthenticated,
			want: observed{SignIns: one(identity.SignInWrongPassword), HashWaits: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := new(recordingObserver)
			e := newTestEnv(t, &identity.Options{Observer: obs})
			act := tt.setup(e)
			obs.take()
			err := act(e)
			if tt.code == "" && err != nil {
				t.Fatalf("error %v, want none", err)
			} else if tt.code != "" {
				identitytest.WantCode(t, err, tt.code)
			}
			if diff := cmp.Diff(tt.want, obs.take()); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
		})
	}
}

func authenticate(login, password string) func(e *testEnv) error {
	return func(e *testEnv) error {
		_, err := e.ws.Authenticate(e.ctx, login, password)
		return err
	}
}

func verifyCode(challenge, code string) func(e *testEnv) error {
	return func(e *testEnv) error {
		_, err := e.ws.VerifySecondFactor(e.ctx, challenge, code)
		return err
	}
}

// TestObserverTransactions: each View and Update is reported once, with
// its kind and whether it returned an error.
func TestObserverTransactions(t *testing.T) {
	obs := new(recordingObserver)
	e := newTestEnv(t, &identity.Options{Observer: obs})
	obs.takeTxs()
	if _, err := e.ws.GetUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.ws.GetUser(e.ctx, 99)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	if _, err := e.ws.SetAttribute(e.ctx, e.ada.ID, "team", "analytics", nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.SetAttribute(e.ctx, 99, "team", "analytics", nil)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	want := []string{"view ok", "view error", "update ok", "update error"}
	if diff := cmp.Diff(want, obs.takeTxs()); diff != "" {
		t.Errorf("transactions (-want +got):\n%s", diff)
	}
}

// TestObserverReportsOnlyCommitted: a store that runs an Update's
// function twice, the first time in a transaction it rolls back, has
// every outcome reported once; an Update that fails reports none.
func TestObserverReportsOnlyCommitted(t *testing.T) {
	obs := new(recordingObserver)
	e := newTestEnv(t, nil)
	st := &twiceStore{Store: e.st}
	svc, err := identity.New(st, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.GetWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.GetSettings(e.ctx)
	s.Lockout = identity.LockoutPolicy{Threshold: 1}
	if err := ws.UpdateSettings(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	obs.take()
	st.twice.Store(true)
	_, err = ws.Authenticate(e.ctx, "ada", "wrong")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	want := observed{SignIns: []identity.SignInOutcome{identity.SignInWrongPassword}, Locks: 1, HashWaits: 1}
	if diff := cmp.Diff(want, obs.take()); diff != "" {
		t.Errorf("a retried Update: observed (-want +got):\n%s", diff)
	}

	// The lock's end, then a wrong password whose Update fails.
	st.twice.Store(false)
	e.clock.Advance(time.Hour)
	e.hook(identity.EventLoginFailed)
	e.st.breakMethod("PutDelivery", errFlaky) // login.failed's delivery
	_, err = ws.Authenticate(e.ctx, "ada", "wrong")
	if err == nil {
		t.Fatal("Authenticate succeeded with a broken store")
	}
	if got := obs.take(); len(got.SignIns) != 0 || got.Locks != 0 {
		t.Errorf("a failed Update: observed %+v, want no sign-in and no lock", got)
	}
}

// twiceStore runs each Update's function first in a transaction that it
// rolls back, then again, as a store that groups commits does when a
// group fails.
type twiceStore struct {
	store.Store
	twice atomic.Bool
}

var errRollBack = errors.New("rolled back by twiceStore")

func (s *twiceStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if s.twice.Load() {
		err := s.Store.Update(ctx, func(tx store.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return errRollBack
		})
		if !errors.Is(err, errRollBack) {
			return err
		}
	}
	return s.Store.Update(ctx, fn)
}

// TestNopObserver: an Observer may embed NopObserver and implement only
// what it needs.
func TestNopObserver(t *testing.T) {
	obs := &locksOnly{}
	e := newTestEnv(t, &identity.Options{Observer: obs})
	setLockout(t, e, identity.LockoutPolicy{Threshold: 1})
	_, err := e.ws.Authenticate(e.ctx, "ada", "wrong")
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if obs.locks != 1 {
		t.Errorf("locks = %d, want 1", obs.locks)
	}
}

type locksOnly struct {
	identity.NopObserver
	locks int
}

func (o *locksOnly) Locked() { o.locks++ }
