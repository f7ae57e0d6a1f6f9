package oidc

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
)

// endpointKind is a family of endpoints whose errors map alike.
type endpointKind int

const (
	// atAuthorize: the authorization endpoint; errors go back to the
	// client's redirect URI, or are shown when it is not known to be the
	// client's.
	atAuthorize endpointKind = iota
	// atToken: the token, revocation and introspection endpoints (RFC
	// 6749, 5.2).
	atToken
	// atResource: the userinfo endpoint, a protected resource (RFC 6750,
	// 3.1).
	atResource
)

// OAuth error codes zitadel/oidc names no constant for.
const (
	errUnsupportedResponseType = "unsupported_response_type"
	errRequestURINotSupported  = "request_uri_not_supported"
	errInvalidToken            = "invalid_token"
	errInsufficientScope       = "insufficient_scope"
	// errTemporarilyUnavailable is RFC 6749's code (4.1.2.1) for an
	// authorization server that cannot handle a request for now; it
	// answers a throttled request at every endpoint (see mapError).
	errTemporarilyUnavailable = "temporarily_unavailable"
)

// oauthError is an identity error as an endpoint answers it.
type oauthError struct {
	err *zoidc.Error
	// status is the HTTP status of a JSON answer.
	status int
	// page is true at the authorization endpoint when the error must be
	// shown to the user and not sent to the redirect URI.
	page bool
	// internal is true for a failure of the store or the machine, which
	// is logged.
	internal bool
	// retryAfter, for a throttled request, is how long the client should
	// wait: the Retry-After header of the answer.
	retryAfter time.Duration
}

// mapError is the one table from identity's error codes to OAuth errors.
// The description is the library's Message, which is written for the
// caller; an internal error's cause is never told.
//
//	code                      authorize                  token, revoke, introspect    userinfo
//	not_found                 page (400)                 invalid_client 401           invalid_token 401
//	invalid on response_type  unsupported_response_type  invalid_request 400          invalid_request 400
//	invalid on scope          invalid_scope              invalid_scope 400            invalid_request 400
//	invalid on redirect_uri   page (400)                 invalid_request 400          invalid_request 400
//	invalid, other            invalid_request            invalid_request 400          invalid_request 400
//	invalid_grant             invalid_request            invalid_grant 400            invalid_token 401
//	unauthenticated           invalid_request            invalid_client 401           invalid_token 401
//	forbidden                 unauthorized_client        unauthorized_client 400      insufficient_scope 403
//	login_required            login_required             invalid_request 400          invalid_request 400
//	rate_limited              temporarily_unavailable    temporarily_unavailable 429  temporarily_unavailable 429
//	anything else             server_error               server_error 500             server_error 500
//
// A rate_limited answer carries Retry-After, the library's
// Error.RetryAfter in whole seconds rounded up (see retryAfterSeconds).
// RFC 6749 registers no error code for a throttled token request;
// temporarily_unavailable, its code for an authorization server that
// cannot serve a request for now, says that trying again later helps,
// and the status 429 (RFC 6585) says why. email_unverified and
// confirmation_required come from the hosted pages' calls only
// (Provider.SignIn, Provider.EndSession), which classify handles, and
// are server_error here.
func mapError(kind endpointKind, err error) oauthError {
	code := identity.ErrorCode(err)
	description := "internal error"
	var field string
	var retryAfter time.Duration
	if e, ok := errors.AsType[*identity.Error](err); ok && code != identity.CodeInternal {
		description, retryAfter = e.Message, e.RetryAfter
		if len(e.Fields) > 0 {
			field = e.Fields[0].Field
		}
	}
	out := func(e *zoidc.Error, status int) oauthError {
		return oauthError{err: e.WithDescription("%s", description), status: status}
	}
	switch {
	case code == identity.CodeRateLimited:
		o := out(&zoidc.Error{ErrorType: errTemporarilyUnavailable}, http.StatusTooManyRequests)
		o.retryAfter = max(retryAfter, time.Second)
		return o
	case code == identity.CodeInvalid && field == "scope" && kind != atResource:
		return out(zoidc.ErrInvalidScope(), http.StatusBadRequest)
	case code == identity.CodeInvalid && field == "response_type" && kind == atAuthorize:
		return out(&zoidc.Error{ErrorType: errUnsupportedResponseType}, http.StatusBadRequest)
	case code == identity.CodeInvalid && field == "redirect_uri" && kind == atAuthorize,
		code == identity.CodeNotFound && kind == atAuthorize:
		o := out(zoidc.ErrInvalidRequestRedirectURI(), http.StatusBadRequest)
		o.page = true
		return o
	case code == identity.CodeInvalid, code == identity.CodeLoginRequired && kind != atAuthorize:
		return out(zoidc.ErrInvalidRequest(), http.StatusBadRequest)
	case code == identity.CodeLoginRequired:
		return out(zoidc.ErrLoginRequired(), http.StatusBadRequest)
	case kind == atResource && (code == identity.CodeUnauthenticated || code == identity.CodeInvalidGrant || code == identity.CodeNotFound):
		return out(&zoidc.Error{ErrorType: errInvalidToken}, http.StatusUnauthorized)
	case kind == atResource && code == identity.CodeForbidden:
		return out(&zoidc.Error{ErrorType: errInsufficientScope}, http.StatusForbidden)
	case code == identity.CodeForbidden:
		return out(zoidc.ErrUnauthorizedClient(), http.StatusBadRequest)
	case kind == atAuthorize && (code == identity.CodeUnauthenticated || code == identity.CodeInvalidGrant):
		return out(zoidc.ErrInvalidRequest(), http.StatusBadRequest)
	case code == identity.CodeInvalidGrant:
		return out(zoidc.ErrInvalidGrant(), http.StatusBadRequest)
	case code == identity.CodeUnauthenticated || code == identity.CodeNotFound:
		return out(zoidc.ErrInvalidClient(), http.StatusUnauthorized)
	}
	o := out(zoidc.ErrServerError(), http.StatusInternalServerError)
	o.internal = true
	return o
}

// retryAfterSeconds is d as a Retry-After header gives it (RFC 9110,
// 10.2.3): whole seconds, rounded up.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// statusError is o as op.Server's error writer takes it.
func (o oauthError) statusError() error { return op.NewStatusError(o.err, o.status) }

// formClass is what a library error means to a form of a hosted page
// (sign-in, second factor, account, password reset).
type formClass int

const (
	// formOK: no error.
	formOK formClass = iota
	// formRefused: a password or code is not right, or the account is
	// locked or disabled. The form again, with its one generic message: a
	// locked account reads like a wrong password or code, so that the
	// page never tells whether an account exists or is locked.
	formRefused
	// formInvalid: the input breaks a rule (the password policy, the
	// form of an address, a code that is not the authenticator's). The
	// form again, with the rule's message.
	formInvalid
	// formStale: what the form was for is gone (a sign-in or link that
	// expired or was used, an enrolment that ended, a factor removed
	// meanwhile). A page that says so and where to start again.
	formStale
	// formThrottled: too many failed tries from this address or for this
	// login (or an email asked for too soon). The form again, 429 with
	// Retry-After, saying when to try again.
	formThrottled
	// formUnverified: a right password of a user whose email address must
	// be verified first. The sign-in form again, saying so.
	formUnverified
	// formFailed: a failure of the store or the machine, or an answer no
	// form expects. A 500, logged, its cause not shown.
	formFailed
)

// classify is the one table from identity's error codes to what a hosted
// page's form does; each form words the messages of its class (see the
// msg constants).
//
//	code                                        class
//	(no error)                                  ok
//	unauthenticated, locked, forbidden          refused
//	invalid                                     invalid
//	token_invalid, token_expired, token_used,   stale
//	  conflict, not_found
//	rate_limited                                throttled
//	email_unverified                            unverified
//	anything else                               failed
//
// mfa_required and mfa_enrollment_required are not failures but the next
// step of a sign-in: the sign-in forms look for them before classify.
func classify(err error) formClass {
	switch identity.ErrorCode(err) {
	case "":
		return formOK
	case identity.CodeUnauthenticated, identity.CodeLocked, identity.CodeForbidden:
		return formRefused
	case identity.CodeInvalid:
		return formInvalid
	case identity.CodeTokenInvalid, identity.CodeTokenExpired, identity.CodeTokenUsed, identity.CodeConflict, identity.CodeNotFound:
		return formStale
	case identity.CodeRateLimited:
		return formThrottled
	case identity.CodeEmailUnverified:
		return formUnverified
	}
	return formFailed
}
