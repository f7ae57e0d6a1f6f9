package identity

import (
	"context"
	"time"

	"github.com/identitylib/identity/store"
)

// Observer is told what a Service does, for metrics: package metrics
// implements it over Prometheus. Set it in Options.Observer; without one
// nothing is measured and nothing costs anything.
//
// Its methods are called on the paths they observe, from any goroutine:
// they must be safe for concurrent use, return quickly and never call the
// Service. An outcome decided inside a store transaction is reported once,
// after the transaction committed, however often the store ran it; one
// that rolled back is not reported.
//
// Embed NopObserver to implement only some of the methods, and to keep
// compiling when methods are added.
type Observer interface {
	// TransactionDone is called after every store transaction the Service
	// runs, with its kind, how long the whole View or Update call took
	// (retries of the function by the store included) and what it
	// returned: nil when it committed (or, for a view, read), otherwise
	// the function's error (a refusal such as a not-found or a conflict)
	// or the store's.
	TransactionDone(kind TxKind, d time.Duration, err error)
	// SignIn is called once for each outcome of a sign-in: SignInSucceeded
	// when Authenticate or VerifySecondFactor signs a user in,
	// SignInMFARequired or SignInMFAEnrollmentRequired when Authenticate
	// accepted the password and asks for the second factor, and a failure
	// reason wherever login.failed is emitted (with that event's reason,
	// whether or not an endpoint subscribes to it: the checks of a current
	// password or code by ChangePassword and RemoveSecondFactor included).
	SignIn(outcome SignInOutcome)
	// Locked is called when failed attempts lock an account (the event
	// user.locked).
	Locked()
	// HashWait is called before each password hash or verification with
	// how long it waited for room in the hashing budget (see
	// Options.PasswordHashingBudget): zero, or nearly, when there was room
	// at once. A wait that ended with its context is reported too.
	HashWait(d time.Duration)
	// Audited is called with every audit record once its transaction
	// has committed (package metrics counts them by action).
	Audited(rec AuditRecord)
}

// NopObserver is an Observer that does nothing. Embed it in an Observer
// that implements only some of the methods.
type NopObserver struct{}

// TransactionDone does nothing.
func (NopObserver) TransactionDone(TxKind, time.Duration, error) {}

// SignIn does nothing.
func (NopObserver) SignIn(SignInOutcome) {}

// Locked does nothing.
func (NopObserver) Locked() {}

// HashWait does nothing.
func (NopObserver) HashWait(time.Duration) {}

// Audited does nothing.
func (NopObserver) Audited(AuditRecord) {}

// TxKind is the kind of a store transaction: TxView or TxUpdate.
type TxKind string

// The kinds of store transaction.
const (
	TxView   TxKind = "view"
	TxUpdate TxKind = "update"
)

// SignInOutcome is how a sign-in ended, as Observer.SignIn reports it. The
// failures are the reasons of login.failed.
type SignInOutcome string

// The outcomes of a sign-in.
const (
	// SignInSucceeded: the user is signed in (by the password alone, or
	// by the second factor that followed it).
	SignInSucceeded SignInOutcome = "succeeded"
	// SignInMFARequired: the password was right; a code of the second
	// factor must follow (CodeMFARequired).
	SignInMFARequired SignInOutcome = "mfa_required"
	// SignInMFAEnrollmentRequired: the password was right; the user must
	// enrol a second factor (CodeMFAEnrollmentRequired).
	SignInMFAEnrollmentRequired SignInOutcome = "mfa_enrollment_required"
	// SignInUnknownUser: no user has the login.
	SignInUnknownUser SignInOutcome = loginUnknownUser
	// SignInWrongPassword: the password was wrong.
	SignInWrongPassword SignInOutcome = loginWrongPassword
	// SignInNoPassword: the user has no password.
	SignInNoPassword SignInOutcome = loginNoPassword
	// SignInDisabled: the user is disabled.
	SignInDisabled SignInOutcome = loginDisabled
	// SignInLocked: refused for the lockout, without checking anything.
	SignInLocked SignInOutcome = loginLocked
	// SignInWrongCode: the second-factor code was wrong.
	SignInWrongCode SignInOutcome = loginWrongCode
	// SignInThrottled: refused by the throttle (CodeRateLimited), without
	// checking anything.
	SignInThrottled SignInOutcome = loginThrottled
	// SignInEmailUnverified: the password was right; the workspace wants
	// a verified address first (CodeEmailUnverified).
	SignInEmailUnverified SignInOutcome = "email_unverified"
	// SignInWrongPasskey: a passkey's assertion was refused.
	SignInWrongPasskey SignInOutcome = loginWrongPasskey
	// SignInUnknownPasskey: no passkey of the workspace has the
	// credential.
	SignInUnknownPasskey SignInOutcome = loginUnknownPasskey
	// SignInPasskeyEnrollmentRequired: the password was right; the user
	// must register a passkey (CodePasskeyEnrollmentRequired).
	SignInPasskeyEnrollmentRequired SignInOutcome = "passkey_enrollment_required"
)

// SignInOutcomes returns every SignInOutcome in a stable order.
func SignInOutcomes() []SignInOutcome {
	return []SignInOutcome{
		SignInSucceeded, SignInMFARequired, SignInMFAEnrollmentRequired,
		SignInUnknownUser, SignInWrongPassword, SignInNoPassword,
		SignInDisabled, SignInLocked, SignInWrongCode, SignInThrottled,
		SignInEmailUnverified, SignInWrongPasskey, SignInUnknownPasskey, SignInPasskeyEnrollmentRequired,
	}
}

// observed returns st measured for obs and streamed to sink: every View
// and Update is timed, and the notes its functions leave (noteSignIn,
// noteLocked, the records of audit) are reported after a commit. With
// neither it returns st as it is, so that an unobserved Service pays
// nothing.
func observed(st store.Store, obs Observer, sink AuditSink) store.Store {
	if obs == nil && sink == nil {
		return st
	}
	if obs == nil {
		obs = NopObserver{}
	}
	return &observedStore{Store: st, obs: obs, sink: sink}
}

// observedStore is a Store whose transactions an Observer is told of,
// and whose audit records an AuditSink is given once they commit.
type observedStore struct {
	store.Store
	obs  Observer
	sink AuditSink
}

// Unwrap returns the store observed, in which Service.Backup looks for
// store.Backuper.
func (s *observedStore) Unwrap() store.Store { return s.Store }

func (s *observedStore) View(ctx context.Context, fn func(store.Tx) error) error {
	start := time.Now()
	err := s.Store.View(ctx, fn)
	s.obs.TransactionDone(TxView, time.Since(start), err)
	return err
}

// Update runs fn with a Tx that collects notes; the store may run fn more
// than once, so each run starts with none, and only the notes of the run
// that committed are reported.
func (s *observedStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	start := time.Now()
	var notes []note
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		otx := &observedTx{Tx: tx}
		err := fn(otx)
		notes = otx.notes
		return err
	})
	s.obs.TransactionDone(TxUpdate, time.Since(start), err)
	if err == nil {
		for _, n := range notes {
			n.report(s.obs, s.sink)
		}
	}
	return err
}

// observedTx is the Tx of an observed Update: it keeps the notes of an
// outcome decided inside the transaction until it commits.
type observedTx struct {
	store.Tx
	notes []note
}

// note is an outcome to report after a commit: a sign-in's outcome, a
// lock when locked is true, or an audit record when audit is set.
type note struct {
	outcome SignInOutcome
	locked  bool
	audit   *AuditRecord
}

func (n note) report(obs Observer, sink AuditSink) {
	switch {
	case n.audit != nil:
		obs.Audited(*n.audit)
		if sink != nil {
			sink.Audit(*n.audit)
		}
	case n.locked:
		obs.Locked()
	default:
		obs.SignIn(n.outcome)
	}
}

// addNote keeps n in tx until it commits; with no observer, it does
// nothing.
func addNote(tx store.Tx, n note) {
	if otx, ok := tx.(*observedTx); ok {
		otx.notes = append(otx.notes, n)
	}
}

// noteSignIn reports a sign-in's outcome (a login.failed reason) decided
// in tx, once tx commits.
func noteSignIn(tx store.Tx, reason string) { addNote(tx, note{outcome: SignInOutcome(reason)}) }

// noteLocked reports a lock decided in tx, once tx commits.
func noteLocked(tx store.Tx) { addNote(tx, note{locked: true}) }

// signedIn reports a sign-in's outcome decided outside a transaction.
func (s *Service) signedIn(outcome SignInOutcome) {
	if s.observer != nil {
		s.observer.SignIn(outcome)
	}
}

// challenged reports the outcome of a right password that asks for the
// second factor: enrol says the user must enrol one first.
func (s *Service) challenged(enrol bool) {
	if enrol {
		s.signedIn(SignInMFAEnrollmentRequired)
	} else {
		s.signedIn(SignInMFARequired)
	}
}

// acquireHashing takes cost of the hashing budget (see hashing), telling
// the observer how long that waited.
func (s *Service) acquireHashing(ctx context.Context, cost int64) error {
	if s.observer == nil {
		return s.hashBudget.acquire(ctx, cost)
	}
	start := time.Now()
	err := s.hashBudget.acquire(ctx, cost)
	s.observer.HashWait(time.Since(start))
	return err
}
