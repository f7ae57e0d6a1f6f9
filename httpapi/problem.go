package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// Codes of problems the adapter itself detects, beside the identity.Code
// values. Like those they are stable: clients branch on them.
const (
	codeUnsupportedMediaType = "unsupported_media_type"
	codeMalformedJSON        = "malformed_json"
	codeMalformedQuery       = "malformed_query"
	codeBodyTooLarge         = "body_too_large"
	codeMethodNotAllowed     = "method_not_allowed"
	codeUnavailable          = "unavailable"
	// codeMalformedPrecondition: If-Match or If-None-Match is neither "*"
	// nor a list of entity tags.
	codeMalformedPrecondition = "malformed_precondition"
)

// ruleType is the FieldError.Rule of a JSON value of the wrong type (or an
// unparsable number in the query), a rule only the adapter can see broken.
const ruleType = "type"

// statusByCode is the one table from library error codes to HTTP statuses.
var statusByCode = map[identity.Code]int{
	identity.CodeInvalid:         http.StatusUnprocessableEntity,
	identity.CodeNotFound:        http.StatusNotFound,
	identity.CodeConflict:        http.StatusConflict,
	identity.CodeReservedClaim:   http.StatusBadRequest,
	identity.CodeLimitReached:    http.StatusConflict,
	identity.CodeUnauthenticated: http.StatusUnauthorized,
	identity.CodeForbidden:       http.StatusForbidden,
	identity.CodeInternal:        http.StatusInternalServerError,
	// Email verification tokens; no route of the API takes one yet.
	identity.CodeTokenInvalid: http.StatusBadRequest,
	identity.CodeTokenExpired: http.StatusGone,
	identity.CodeTokenUsed:    http.StatusConflict,

	identity.CodePreconditionFailed:   http.StatusPreconditionFailed,
	identity.CodeIdempotencyKeyReused: http.StatusUnprocessableEntity,
	identity.CodeIdempotencyKeyInUse:  http.StatusConflict,
	// OpenID Provider codes; no route of this API returns them (package
	// oidc answers them in the OAuth form).
	identity.CodeInvalidGrant:  http.StatusBadRequest,
	identity.CodeLoginRequired: http.StatusUnauthorized,
	// A password login's; no route of this API logs in.
	identity.CodeLocked: http.StatusLocked,
	// A sign-in's next step, a second factor (or its enrolment); no route
	// of this API signs in.
	identity.CodeMFARequired:           http.StatusUnauthorized,
	identity.CodeMFAEnrollmentRequired: http.StatusUnauthorized,
	// A password sign-in's next step under PasskeysRequired: register a
	// passkey; no route of this API signs in.
	identity.CodePasskeyEnrollmentRequired: http.StatusUnauthorized,
	// Too many attempts from the client's address or at one login, or a
	// mail asked for again too soon; the problem carries Retry-After. No
	// route of this API is throttled today.
	identity.CodeRateLimited: http.StatusTooManyRequests,
	// A sign-in's refusals under the workspace's policies; no route of
	// this API signs in or out. The right password but an unverified
	// address: refused for the account's state, as forbidden is.
	identity.CodeEmailUnverified: http.StatusForbidden,
	// A logout the user has yet to confirm: the request may be repeated
	// once the state it conflicts with (no confirmation) is resolved.
	identity.CodeConfirmationRequired: http.StatusConflict,
}

// statusOf returns the HTTP status of a library error code; a code the
// table lacks is a server error, never a client's.
func statusOf(code identity.Code) int {
	if status, ok := statusByCode[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// problem is an RFC 9457 problem detail, the body of every error response.
// It is also an error, so route functions return the adapter's own failures
// (415, 400, 413, 404 for a malformed id) the way they return the library's.
type problem struct {
	// Type is always "about:blank": the status and Code say what happened,
	// and Title is then the status phrase, as RFC 9457 asks.
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Code   string       `json:"code"`
	Errors []fieldError `json:"errors,omitempty"`
	// MoreErrors counts the field errors left out of Errors, which lists
	// at most maxFieldErrors: a request with many bad fields cannot make a
	// response many times its size.
	MoreErrors int `json:"moreErrors,omitempty"`

	// wwwAuthenticate is the WWW-Authenticate header a 401 or 403 carries.
	wwwAuthenticate string
	// retryAfter is the Retry-After header of a 429, in seconds; "" for
	// none.
	retryAfter string
	// cause is what the server log gets for a 500, never the client.
	cause error
}

// maxFieldErrors bounds the errors array of a problem.
const maxFieldErrors = 50

// fieldError is one entry of a problem's errors array.
type fieldError struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Error returns the detail.
func (p *problem) Error() string { return p.Detail }

// problemFor describes err as the response to send.
func problemFor(err error) *problem {
	if p, ok := errors.AsType[*problem](err); ok {
		return p
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The client left or the server's deadline passed: not a failure to
		// log as one, and nothing the client could correct.
		return &problem{Status: http.StatusServiceUnavailable, Code: codeUnavailable, Detail: "the request was canceled or timed out"}
	}
	e, ok := errors.AsType[*identity.Error](err)
	if !ok || e.Code == identity.CodeInternal || statusOf(e.Code) >= http.StatusInternalServerError {
		return &problem{Status: http.StatusInternalServerError, Code: string(identity.CodeInternal), Detail: "internal error", cause: err}
	}
	p := &problem{Status: statusOf(e.Code), Code: string(e.Code), Detail: e.Message}
	if p.Detail == "" {
		p.Detail = string(e.Code)
	}
	for i, f := range e.Fields {
		if i == maxFieldErrors {
			p.MoreErrors = len(e.Fields) - maxFieldErrors
			break
		}
		p.Errors = append(p.Errors, fieldError{Field: f.Field, Rule: f.Rule, Message: f.Message})
	}
	p.MoreErrors += e.Omitted
	switch {
	case e.Code == identity.CodeRateLimited:
		p.retryAfter = retryAfterSeconds(e.RetryAfter)
	case e.Code == identity.CodeUnauthenticated:
		p.wwwAuthenticate = "Bearer"
	case e.Code == identity.CodeForbidden && e.Scope != "":
		p.wwwAuthenticate = `Bearer error="insufficient_scope", scope="` + string(e.Scope) + `"`
	}
	return p
}

// retryAfterSeconds is d as a Retry-After header gives it (RFC 9110,
// 10.2.3): whole seconds, rounded up, at least 1 (a Limiter of the
// program's may say no wait at all; asking for none would invite a
// client to retry at once).
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// challengeScopes returns the problem for a key that lacks a scope of a
// route: its WWW-Authenticate names every scope the route needs, space
// separated as RFC 6750 writes them, not only the one found missing. Any
// other error passes unchanged.
func challengeScopes(err error, scopes []identity.Scope) error {
	e, ok := errors.AsType[*identity.Error](err)
	if !ok || e.Code != identity.CodeForbidden || e.Scope == "" {
		return err
	}
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	p := problemFor(err)
	p.wwwAuthenticate = `Bearer error="insufficient_scope", scope="` + strings.Join(names, " ") + `"`
	return p
}

// writeProblem answers err as application/problem+json.
func writeProblem(w http.ResponseWriter, err error) {
	p := problemFor(err)
	p.Type, p.Title = "about:blank", http.StatusText(p.Status)
	if p.cause != nil {
		recorderOf(w).fail(p.cause)
	}
	body, merr := json.Marshal(p)
	if merr != nil { // a problem holds only strings and ints
		body = []byte(`{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"internal error","code":"internal"}`)
		p.Status = http.StatusInternalServerError
	}
	header := w.Header()
	if p.wwwAuthenticate != "" {
		header.Set("WWW-Authenticate", p.wwwAuthenticate)
	}
	if p.retryAfter != "" {
		header.Set("Retry-After", p.retryAfter)
	}
	header.Set("Content-Type", "application/problem+json")
	header.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	w.Write(body)
}

// invalid returns the 422 problem for input the adapter finds invalid before
// the library sees it: a JSON value of the wrong type, a missing member
// whose absence the library cannot tell from a valid empty value, or a page
// parameter that is not an integer.
func invalid(detail string, fields []identity.FieldError) error {
	return &identity.Error{Code: identity.CodeInvalid, Message: detail, Fields: fields}
}
