package store

import "sync/atomic"

// The forwarding methods of guarded and bulkGuarded, one per method of Tx
// and of Bulk, are generated into guard.go from the //guard:read and
// //guard:write markers of those interfaces and the check functions of
// guardchecks.go.
//go:generate go run ./internal/genguard

// RunView calls fn with a Tx that forwards every method to tx, a store's
// read-only transaction, and returns fn's result unchanged. Every write
// method returns ErrReadOnly without reaching tx, and once fn has returned
// (or panicked) every method returns ErrTxDone. The Tx implements Bulk
// when tx does, with InsertUsers a write. A store's View calls it once per
// call of fn.
func RunView(tx Tx, fn func(Tx) error) error { return run(tx, false, fn) }

// RunUpdate calls fn with a Tx that forwards every method to tx, a
// store's read-write transaction, and returns fn's result unchanged. Once
// fn has returned (or panicked) every method returns ErrTxDone without
// reaching tx. PutDelivery refuses a job whose Kind is neither JobWebhook
// nor JobMail, a mail job with an EndpointID or a negative UserID, or a
// webhook job with a UserID, so a store sees only well-formed jobs;
// PutWebhook, PutRole and PutGroup refuse an id below 1; PutOAuthClient, PutSigningKey,
// PutAuthRequest, PutGrant and PutRefreshToken refuse an empty id, and
// PutRefreshToken an empty GrantID; PutLoginAttempts and PutSecondFactor
// refuse a UserID below 1. The Tx implements Bulk when tx does, and
// InsertUsers refuses a second factor that is not its user's (see Bulk).
// A store's Update calls it afresh for every call of fn, including a call
// that runs fn again in a new transaction.
func RunUpdate(tx Tx, fn func(Tx) error) error { return run(tx, true, fn) }

// run passes fn the guarded form of tx and ends it when fn returns. The
// guarded form implements Bulk exactly when tx does.
func run(tx Tx, writable bool, fn func(Tx) error) error {
	if b, ok := tx.(Bulk); ok {
		g := &bulkGuarded{guarded: guarded{tx: tx, writable: writable}, bulk: b}
		defer g.done.Store(true)
		return fn(g)
	}
	g := &guarded{tx: tx, writable: writable}
	defer g.done.Store(true)
	return fn(g)
}

// guarded is the Tx that RunView and RunUpdate pass to fn. done is atomic
// so that a Tx kept past fn and used from another goroutine is refused
// without a data race.
type guarded struct {
	tx       Tx
	writable bool
	done     atomic.Bool
}

var _ Tx = (*guarded)(nil)

// read reports whether a read may run.
func (g *guarded) read() error {
	if g.done.Load() {
		return ErrTxDone
	}
	return nil
}

// write reports whether a write may run.
func (g *guarded) write() error {
	if g.done.Load() {
		return ErrTxDone
	}
	if !g.writable {
		return ErrReadOnly
	}
	return nil
}

// bulkGuarded is the guarded form of a Tx that implements Bulk: the
// methods of guarded and those of Bulk, with the same checks.
type bulkGuarded struct {
	guarded
	bulk Bulk
}

var _ interface {
	Tx
	Bulk
} = (*bulkGuarded)(nil)
