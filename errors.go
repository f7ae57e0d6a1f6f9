package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// Code classifies an Error. Codes are stable strings: programs and the REST
// adapter branch on them, and the adapter maps each to one HTTP status.
type Code string

// The error codes.
const (
	// CodeInvalid: the input breaks a validation rule; Error.Fields names
	// every problem.
	CodeInvalid Code = "invalid"
	// CodeNotFound: the user, workspace, mapper, attribute, role
	// assignment, endpoint, key or OAuth client does not exist.
	CodeNotFound Code = "not_found"
	// CodeConflict: a unique value (username, email, claim name, workspace
	// slug) is already taken.
	CodeConflict Code = "conflict"
	// CodeReservedClaim: a claim mapper names a registered JWT/OIDC claim.
	CodeReservedClaim Code = "reserved_claim"
	// CodeLimitReached: a per-workspace limit (20 claim mappers, 100 OAuth
	// clients, the workspace's Limits on webhook endpoints and attributes
	// per user) is reached.
	CodeLimitReached Code = "limit_reached"
	// CodeUnauthenticated: credentials (a password, an API key or an OAuth
	// client's secret) are missing, malformed, unknown or wrong.
	CodeUnauthenticated Code = "unauthenticated"
	// CodeForbidden: valid credentials that do not grant the operation;
	// Error.Scope names a missing scope where that is the reason.
	CodeForbidden Code = "forbidden"
	// CodeInternal: the store or the machine failed; not the caller's fault.
	CodeInternal Code = "internal"
	// CodeTokenInvalid: an email verification token is malformed or
	// unknown, or was sent to an address that is no longer the user's
	// email.
	CodeTokenInvalid Code = "token_invalid"
	// CodeTokenExpired: an email verification token's lifetime is over.
	CodeTokenExpired Code = "token_expired"
	// CodeTokenUsed: an email verification token was used already.
	CodeTokenUsed Code = "token_used"
	// CodePreconditionFailed: a conditional write (see Precondition) found
	// the record at another version, missing where it had to exist, or
	// present where it had to be absent. Nothing was changed.
	CodePreconditionFailed Code = "precondition_failed"
	// CodeIdempotencyKeyReused: an idempotency key was used again for a
	// different request (another operation or other content). Nothing was
	// changed.
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	// CodeIdempotencyKeyInUse: a request with the same idempotency key is
	// still running. Nothing was changed; retry a little later.
	CodeIdempotencyKeyInUse Code = "idempotency_key_in_use"
	// CodeInvalidGrant: an authorization code or refresh token is
	// unknown, another client's, expired, used already (which revokes
	// what it was exchanged for) or of a revoked grant, or a PKCE verifier
	// or redirect URI does not match.
	CodeInvalidGrant Code = "invalid_grant"
	// CodeLoginRequired: an authorization request with prompt=none found
	// no signed-in user.
	CodeLoginRequired Code = "login_required"
	// CodeLocked: the account is locked after too many failed attempts
	// (see LockoutPolicy); Error.LockedUntil says when the lock ends.
	CodeLocked Code = "locked"
	// CodeMFARequired: the password was right and the user must now give
	// a second-factor code (Error.Challenge names the sign-in waiting for
	// it; see Workspace.VerifySecondFactor). Not a failure: the next step.
	CodeMFARequired Code = "mfa_required"
	// CodeMFAEnrollmentRequired: the password was right and the workspace
	// requires a second factor the user has not enrolled yet: enrol it
	// for Error.Challenge (Workspace.BeginChallengeEnrollment) and confirm it
	// with its first code (Workspace.VerifySecondFactor).
	CodeMFAEnrollmentRequired Code = "mfa_enrollment_required"
	// CodeRateLimited: too many attempts from the client's address or at
	// one login, or another email asked for too soon (see ThrottlePolicy);
	// Error.RetryAfter says when to try again.
	CodeRateLimited Code = "rate_limited"
	// CodeEmailUnverified: the password was right, but the workspace lets
	// only users with a verified address sign in
	// (Settings.RequireVerifiedEmail); a new verification email is on its
	// way unless one was sent moments ago.
	CodeEmailUnverified Code = "email_unverified"
	// CodeConfirmationRequired: the request may be a forgery (a logout a
	// page started without the client's ID token), so the user must
	// confirm it first; the same call with the confirmation goes through.
	CodeConfirmationRequired Code = "confirmation_required"
	// CodePasskeyEnrollmentRequired: the password was right and the
	// workspace requires passkeys (PasskeysRequired), which the user has
	// none of: register one for Error.Challenge
	// (Workspace.BeginChallengePasskeyRegistration, then
	// FinishChallengePasskeyRegistration), which completes the sign-in.
	CodePasskeyEnrollmentRequired Code = "passkey_enrollment_required"
)

// Sentinel errors for errors.Is, one for every Code: an *Error matches the
// sentinel of its code.
var (
	ErrInvalid         = &Error{Code: CodeInvalid}
	ErrNotFound        = &Error{Code: CodeNotFound}
	ErrConflict        = &Error{Code: CodeConflict}
	ErrReservedClaim   = &Error{Code: CodeReservedClaim}
	ErrLimitReached    = &Error{Code: CodeLimitReached}
	ErrUnauthenticated = &Error{Code: CodeUnauthenticated}
	ErrForbidden       = &Error{Code: CodeForbidden}
	ErrInternal        = &Error{Code: CodeInternal}
	ErrTokenInvalid    = &Error{Code: CodeTokenInvalid}
	ErrTokenExpired    = &Error{Code: CodeTokenExpired}
	ErrTokenUsed       = &Error{Code: CodeTokenUsed}

	ErrPreconditionFailed   = &Error{Code: CodePreconditionFailed}
	ErrIdempotencyKeyReused = &Error{Code: CodeIdempotencyKeyReused}
	ErrIdempotencyKeyInUse  = &Error{Code: CodeIdempotencyKeyInUse}
	ErrInvalidGrant         = &Error{Code: CodeInvalidGrant}
	ErrLoginRequired        = &Error{Code: CodeLoginRequired}
	ErrLocked               = &Error{Code: CodeLocked}

	ErrMFARequired           = &Error{Code: CodeMFARequired}
	ErrMFAEnrollmentRequired = &Error{Code: CodeMFAEnrollmentRequired}
	ErrRateLimited           = &Error{Code: CodeRateLimited}
	ErrEmailUnverified       = &Error{Code: CodeEmailUnverified}
	ErrConfirmationRequired  = &Error{Code: CodeConfirmationRequired}

	ErrPasskeyEnrollmentRequired = &Error{Code: CodePasskeyEnrollmentRequired}
)

// Error is the one error type of the library.
type Error struct {
	Code Code
	// Message is a human-readable sentence safe to show to the caller.
	Message string
	// Fields lists the validation problems (CodeInvalid) or the clashing
	// entries (CodeConflict in a bulk import), at most MaxFieldErrors of
	// them.
	Fields []FieldError
	// Omitted counts the validation problems found beyond the
	// MaxFieldErrors in Fields: an input with more reports its first
	// MaxFieldErrors and this count, so that an error's size does not
	// grow with the input's.
	Omitted int
	// Scope is the scope that was missing, for CodeForbidden.
	Scope Scope
	// LockedUntil is when the lock ends, for CodeLocked.
	LockedUntil time.Time
	// RetryAfter is how long to wait before trying again, for
	// CodeRateLimited.
	RetryAfter time.Duration
	// Challenge, for CodeMFARequired, CodeMFAEnrollmentRequired and
	// CodePasskeyEnrollmentRequired (valid as long), is
	// the token of the sign-in waiting for its second factor: single-use,
	// valid for MFAChallengeLifetime, to be passed to VerifySecondFactor.
	Challenge string
	// Err is the underlying cause, if any (never shown to callers).
	Err error
}

// FieldError is one problem with one input field.
type FieldError struct {
	// Field names the input, as the REST API spells it ("email",
	// "events[2]", "users[7].username").
	Field string
	// Rule is a stable identifier of the rule broken, one of the Rule
	// constants.
	Rule string
	// Message is a human-readable sentence.
	Message string
}

// Rules named by FieldError.Rule.
const (
	RuleRequired         = "required"
	RuleMinLength        = "min_length"
	RuleMaxLength        = "max_length"
	RulePattern          = "pattern"
	RuleFormat           = "format"
	RuleUTF8             = "utf8"
	RuleControlCharacter = "control_character"
	RuleRange            = "range"
	RuleUnknown          = "unknown"
	RuleDuplicate        = "duplicate"
	RuleTaken            = "taken"
	RulePrivateAddress   = "private_address"
	// RuleLoopbackOnly: plain-text SMTP or an http verification link,
	// allowed only for localhost or a loopback address.
	RuleLoopbackOnly = "loopback_only"
	// RuleNotAllowed: a known value that the rest of the input rules out,
	// such as the client_credentials grant for a public OAuth client.
	RuleNotAllowed = "not_allowed"
	// Password policy rules.
	RulePasswordMinLength = "password_min_length"
	RulePasswordMaxLength = "password_max_length"
	RulePasswordUpper     = "password_uppercase"
	RulePasswordLower     = "password_lowercase"
	RulePasswordDigit     = "password_digit"
	RulePasswordSymbol    = "password_symbol"
	RulePasswordIdentity  = "password_matches_identity"
)

// Error returns the message, with the field problems appended.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = string(e.Code)
	}
	if len(e.Fields) == 0 {
		return "identity: " + msg
	}
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	if e.Omitted > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", e.Omitted))
	}
	return "identity: " + msg + " (" + strings.Join(parts, "; ") + ")"
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// ErrorCode returns the Code of the first *Error in err's chain,
// CodeInternal for any other non-nil error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return CodeInternal
}

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return errorf(CodeNotFound, format, args...)
}

// fromStore turns a store error into the library's: not found becomes a
// not-found Error described by what, context errors pass unchanged, and
// anything else is an internal error carrying its cause.
func fromStore(err error, what string) error {
	if _, ok := errors.AsType[*Error](err); ok || err == nil {
		return err // already the library's own, with its own message
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeNotFound, Message: what + " not found", Err: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Code: CodeConflict, Message: what + " conflicts with an existing record", Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// MaxFieldErrors is the most validation problems an Error lists in
// Fields; Error.Omitted counts the others.
const MaxFieldErrors = 100

// problems collects validation failures so one call reports all of them:
// the first MaxFieldErrors, and how many more.
type problems struct {
	list    []FieldError
	omitted int
}

// add records a problem of field. Past MaxFieldErrors it only counts it,
// without formatting its message: a request of a megabyte can break a
// rule hundreds of thousands of times.
func (p *problems) add(field, rule, format string, args ...any) {
	if p.full() {
		p.omitted++
		return
	}
	p.list = append(p.list, FieldError{Field: field, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// addFrom adds the problems of e, a CodeInvalid Error of a check this one
// includes.
func (p *problems) addFrom(e *Error) {
	for _, f := range e.Fields {
		if p.full() {
			p.omitted++
			continue
		}
		p.list = append(p.list, f)
	}
	p.omitted += e.Omitted
}

// conflict returns nil when nothing was collected, else one CodeConflict
// Error: the problems are values already in use.
func (p *problems) conflict(message string) error {
	if p.empty() {
		return nil
	}
	return &Error{Code: CodeConflict, Message: message, Fields: p.list, Omitted: p.omitted}
}

// full reports whether p lists MaxFieldErrors problems: add only counts
// the next.
func (p *problems) full() bool { return len(p.list) >= MaxFieldErrors }

// empty reports whether no problem was found.
func (p *problems) empty() bool { return len(p.list) == 0 }

// err returns nil when nothing was collected, else one CodeInvalid Error.
func (p *problems) err(message string) error {
	if p.empty() {
		return nil
	}
	return &Error{Code: CodeInvalid, Message: message, Fields: p.list, Omitted: p.omitted}
}
