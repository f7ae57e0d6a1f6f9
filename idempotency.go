package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/identitylib/identity/store"
)

// Idempotency makes a creating call (CreateUser, CreateWebhook) safe to
// retry when its outcome was lost, as with a dropped response.
//
// The first call with a key does the work and stores its outcome with the
// key, in the same transaction as the creation, so a crash can never leave
// the one without the other. A later call with the same Scope and Key, and
// the same Fingerprint, creates nothing and returns that outcome: the
// created value (a webhook's secret included) or the error that refused the
// call. Only a failure that is not the caller's (CodeInternal, a canceled
// context) is not stored: the key is released and a retry tries again.
//
// The same key with another Fingerprint, or for another operation, is
// CodeIdempotencyKeyReused. A call that arrives while the first is still
// running is CodeIdempotencyKeyInUse; the first holds the key for at most
// a minute before a retry may take it over, and a call whose hold was taken
// over creates nothing. Outcomes are kept for Options.IdempotencyLifetime
// (24 h by default) and count as absent after it; SweepIdempotency deletes
// them.
type Idempotency struct {
	// Scope separates callers that choose keys independently; the REST
	// adapter uses the id of the API key. At most 255 characters.
	Scope string
	// Key is the caller's name for one intended operation, the same on
	// every retry of it: 1-255 characters of visible ASCII ("!" to "~").
	Key string
	// Fingerprint identifies the request's content: a retry must present
	// the same bytes. It is stored as given and must not reveal secrets,
	// as a plain hash of a body holding a password would let whoever reads
	// the store guess the password quickly. The REST adapter uses an
	// HMAC-SHA-256 of the method, route and body keyed with the caller's
	// API key. At most 256 bytes; empty matches only empty.
	Fingerprint []byte
}

// DefaultIdempotencyLifetime is how long the outcome of a call with an
// idempotency key is kept when Options.IdempotencyLifetime is zero.
const DefaultIdempotencyLifetime = 24 * time.Hour

// MaxIdempotencyKeyLength is the longest idempotency key, in characters.
const MaxIdempotencyKeyLength = 255

const (
	// idempotencyHold is how long a running call holds its key before a
	// retry may take it over (the holder may have crashed).
	idempotencyHold = time.Minute
	// maxFingerprintBytes bounds Idempotency.Fingerprint.
	maxFingerprintBytes = 256
	// sweepBatch is how many expired records one transaction of
	// SweepIdempotency deletes.
	sweepBatch = 500
)

// The operations an idempotency key may stand for; a key used for one is
// refused for the other.
const (
	opCreateUser    = "create_user"
	opCreateWebhook = "create_webhook"
	opCreateRole    = "create_role"
	opCreateGroup   = "create_group"
)

// idemOutcome is the Result of an idempotency record: while the call runs,
// its operation and the owner holding the key; once done, the operation and
// the created value or the refusal.
type idemOutcome struct {
	Op    string `json:"op"`
	Owner string `json:"owner,omitempty"`
	// Version is the created record's version (not part of its JSON).
	Version int64           `json:"version,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	Error   *idemError      `json:"error,omitempty"`
}

// idemError is a stored refusal: every part of an *Error a caller sees.
type idemError struct {
	Code    Code         `json:"code"`
	Message string       `json:"message"`
	Fields  []FieldError `json:"fields,omitempty"`
	Scope   Scope        `json:"scope,omitempty"`
}

func (i *Idempotency) validate() error {
	var p problems
	const keyField = "Idempotency-Key"
	if checkText(&p, keyField, i.Key, 1, MaxIdempotencyKeyLength) {
		for j := 0; j < len(i.Key); j++ {
			if c := i.Key[j]; c < '!' || c > '~' {
				p.add(keyField, RulePattern, "must be visible ASCII characters only")
				break
			}
		}
	}
	if checkText(&p, "idempotency.scope", i.Scope, 0, 255) {
		checkNoControl(&p, "idempotency.scope", i.Scope)
	}
	if len(i.Fingerprint) > maxFingerprintBytes {
		p.add("idempotency.fingerprint", RuleMaxLength, "must be at most %d bytes", maxFingerprintBytes)
	}
	return p.err("invalid idempotency key")
}

// idemCall is one call's use of an idempotency key. A nil *idemCall (a call
// without a key) does nothing.
type idemCall struct {
	w     *Workspace
	idem  Idempotency
	op    string
	owner string
	// stored is the outcome of an earlier call with the key, to replay.
	stored *idemOutcome
}

func keyInUse() error {
	return errorf(CodeIdempotencyKeyInUse, "a request with this idempotency key is still in progress; retry later")
}

func keyReused() error {
	return errorf(CodeIdempotencyKeyReused, "this idempotency key was already used for a different request")
}

// beginIdempotent looks the key up and either finds an outcome to replay
// or reserves the key for this call. It returns nil for a nil idem.
func (w *Workspace) beginIdempotent(ctx context.Context, idem *Idempotency, op string) (*idemCall, error) {
	if idem == nil {
		return nil, nil
	}
	if err := idem.validate(); err != nil {
		return nil, err
	}
	c := &idemCall{w: w, idem: *idem, op: op, owner: rand.Text()}
	c.idem.Fingerprint = append([]byte(nil), idem.Fingerprint...)
	now := w.svc.timestamp()
	// A look first, read-only: a retry of a finished call writes nothing.
	err := w.view(ctx, func(tx store.Tx) (err error) {
		c.stored, err = c.lookup(tx, now)
		return err
	})
	if err == nil && c.stored == nil {
		err = w.svc.store.Update(ctx, func(tx store.Tx) (err error) {
			if c.stored, err = c.lookup(tx, now); err != nil || c.stored != nil {
				return err
			}
			return c.put(tx, false, now.Add(idempotencyHold), idemOutcome{Op: op, Owner: c.owner})
		})
	}
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return c, nil
}

// lookup returns the outcome to replay, nil when the key is free (absent,
// expired, or held past its hold by a call that never finished), or an
// error: the key is held, or was used for a different request.
func (c *idemCall) lookup(tx store.Tx, now time.Time) (*idemOutcome, error) {
	rec, out, err := c.record(tx)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case !rec.ExpiresAt.After(now):
		return nil, nil
	case out.Op != c.op || !hmac.Equal(rec.Fingerprint, c.idem.Fingerprint):
		return nil, keyReused()
	case rec.Done:
		return &out, nil
	case rec.LockedUntil.After(now):
		return nil, keyInUse()
	}
	return nil, nil
}

// record reads the key's record and decodes its outcome.
func (c *idemCall) record(tx store.Tx) (store.IdempotencyRecord, idemOutcome, error) {
	var out idemOutcome
	rec, err := tx.Idempotency(c.w.slug, c.idem.Scope, c.idem.Key)
	if err != nil {
		return rec, out, err
	}
	if err := json.Unmarshal(rec.Result, &out); err != nil {
		return rec, out, fmt.Errorf("decode idempotency record: %w", err)
	}
	return rec, out, nil
}

// held returns an error unless this call still holds the key: a call whose
// hold was taken over must not create anything.
func (c *idemCall) held(tx store.Tx) error {
	rec, out, err := c.record(tx)
	if isNotFound(err) || err == nil && (rec.Done || out.Owner != c.owner) {
		return keyInUse()
	}
	return err
}

// put writes the key's record afresh: created now, expiring after the
// Service's lifetime.
func (c *idemCall) put(tx store.Tx, done bool, lockedUntil time.Time, out idemOutcome) error {
	result, err := json.Marshal(out)
	if err != nil {
		return err
	}
	now := c.w.svc.timestamp()
	return tx.PutIdempotency(store.IdempotencyRecord{
		Workspace: c.w.slug, Scope: c.idem.Scope, Key: c.idem.Key, Fingerprint: c.idem.Fingerprint,
		CreatedAt: now, ExpiresAt: now.Add(c.w.svc.idempotencyLifetime),
		Done: done, LockedUntil: lockedUntil, Result: result,
	})
}

// replaying reports whether the call has an earlier outcome to return.
func (c *idemCall) replaying() bool { return c != nil && c.stored != nil }

// replay returns the stored refusal, or decodes the stored value into v
// and its version into version.
func (c *idemCall) replay(v any, version *int64) error {
	if e := c.stored.Error; e != nil {
		return &Error{Code: e.Code, Message: e.Message, Fields: e.Fields, Scope: e.Scope}
	}
	if err := json.Unmarshal(c.stored.Value, v); err != nil {
		return &Error{Code: CodeInternal, Message: "internal error", Err: fmt.Errorf("decode idempotency outcome: %w", err)}
	}
	*version = c.stored.Version
	return nil
}

// check runs first in the creating transaction: it refuses, before any
// other rule is checked, if the call no longer holds the key.
func (c *idemCall) check(tx store.Tx) error {
	if c == nil {
		return nil
	}
	return c.held(tx)
}

// complete records the created value as the key's outcome. It runs last
// in the creating transaction (after check), so the creation and its
// record commit together.
func (c *idemCall) complete(tx store.Tx, value any, version int64) error {
	if c == nil {
		return nil
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return c.put(tx, true, time.Time{}, idemOutcome{Op: c.op, Version: version, Value: encoded})
}

// finish settles a call that did not complete: a refusal of the caller's
// request (any *Error but CodeInternal and the key's own errors) becomes
// the key's outcome; any other failure releases the key for a retry. It
// runs even when ctx is canceled, and gives up quietly, leaving the hold
// to expire, if the store fails or the call no longer holds the key.
func (c *idemCall) finish(ctx context.Context, errp *error) {
	if c == nil || c.stored != nil || *errp == nil {
		return
	}
	e, ok := errors.AsType[*Error](*errp)
	keep := ok && e.Code != CodeInternal && e.Code != CodeIdempotencyKeyInUse && e.Code != CodeIdempotencyKeyReused
	_ = c.w.svc.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		if err := c.held(tx); err != nil {
			return err
		}
		if !keep {
			return tx.DeleteIdempotency(c.w.slug, c.idem.Scope, c.idem.Key)
		}
		refusal := &idemError{Code: e.Code, Message: e.Message, Fields: e.Fields, Scope: e.Scope}
		return c.put(tx, true, time.Time{}, idemOutcome{Op: c.op, Error: refusal})
	})
}

// SweepIdempotency deletes the idempotency records of every workspace
// whose lifetime has ended, in transactions of a bounded size, and returns
// how many it deleted. Expired records already count as absent, so
// sweeping only reclaims space; a long-running program calls it
// periodically (identityd serve does every 10 minutes).
func (s *Service) SweepIdempotency(ctx context.Context) (int, error) {
	total := 0
	for {
		now := s.timestamp()
		var n int
		err := s.store.Update(ctx, func(tx store.Tx) (err error) {
			n, err = tx.DeleteExpiredIdempotency(now, sweepBatch)
			return err
		})
		if err != nil {
			return total, fromStore(err, "idempotency record")
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}

// DefaultSweepInterval is how often SweepIdempotencyEvery sweeps when it
// is given no interval.
const DefaultSweepInterval = 10 * time.Minute

// SweepIdempotencyEvery calls SweepIdempotency at once and then every
// interval (DefaultSweepInterval when interval <= 0) until ctx ends, and
// returns then. report, when not nil, is told of every sweep that deleted
// records or failed. A long-running program runs it in a goroutine of
// its own:
//
//	go svc.SweepIdempotencyEvery(ctx, 0, nil)
//
// A panic in a sweep does not end the sweeper: it is a failed sweep,
// reported as a CodeInternal error whose message holds the panic's value
// and whose cause its stack; without report, it is logged with
// slog.Default(), stack included. A panic in report is logged so too.
func (s *Service) SweepIdempotencyEvery(ctx context.Context, interval time.Duration, report func(deleted int, err error)) {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	sweepEvery(ctx, interval, "idempotency sweep", s.SweepIdempotency, func(n int) bool { return n > 0 }, report)
}

// sweepEvery runs sweep at once and then every interval until ctx ends.
// report, or without it the log, is told of every sweep that did
// something (did) or failed. A panic in sweep is a failed sweep, a
// CodeInternal error naming what (the panic's value in its message, its
// stack in its cause), and a panic in report is logged: neither ends the
// loop, which runs for the life of a server.
func sweepEvery[R any](ctx context.Context, interval time.Duration, what string, sweep func(context.Context) (R, error), did func(R) bool, report func(R, error)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		res, err := sweepRecovered(ctx, what, sweep)
		if ctx.Err() != nil {
			return
		}
		if did(res) || err != nil {
			reportSweep(what, report, res, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// sweepPanic is the cause of the error of a sweep that panicked.
type sweepPanic struct {
	value any
	stack []byte
}

func (p *sweepPanic) Error() string { return fmt.Sprintf("panic: %v\n\n%s", p.value, p.stack) }

// sweepRecovered is sweep with a panic turned into an error.
func sweepRecovered[R any](ctx context.Context, what string, sweep func(context.Context) (R, error)) (res R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &Error{Code: CodeInternal, Message: fmt.Sprintf("the %s panicked: %v", what, v),
				Err: &sweepPanic{value: v, stack: debug.Stack()}}
		}
	}()
	return sweep(ctx)
}

// reportSweep tells report of a sweep. Without report, a failure is
// logged with slog.Default() (a panic with its stack), and so is a panic
// in report.
func reportSweep[R any](what string, report func(R, error), res R, err error) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("identity: reporting the "+what+" panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	switch p, panicked := errors.AsType[*sweepPanic](err); {
	case report != nil:
		report(res, err)
	case panicked:
		slog.Error("identity: the "+what+" panicked", "panic", fmt.Sprint(p.value), "stack", string(p.stack))
	case err != nil:
		slog.Error("identity: the "+what+" failed", "err", err)
	}
}
