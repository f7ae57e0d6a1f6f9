// Package httpapi is the REST adapter of package identity: New returns an
// http.Handler serving the management API of SPEC.md under
// /t/{slug}/api/v1. Each request is decoded, authorized, passed to one
// identity method and encoded; every rule (lengths, patterns, limits,
// defaults) is the library's and arrives here as a typed error.
//
// # Routes and scopes
//
// Paths are below /t/{slug}/api/v1; each needs one scope of the API key.
//
//	GET    /users                              users:read             200 page of users (?search=&offset=&limit=)
//	POST   /users                              users:write            201 user, Location
//	GET    /users/{userId}                     users:read             200 user
//	PUT    /users/{userId}                     users:write            200 user
//	DELETE /users/{userId}                     users:write            204 (disables the user)
//	POST   /users/{userId}/roles/{roleId}      users:write            204
//	DELETE /users/{userId}/roles/{roleId}      users:write            204
//	GET    /users/{userId}/attributes          user_attributes:read   200 {"attributes": {...}}
//	PUT    /users/{userId}/attributes/{key}    user_attributes:write  204 (body {"value": "..."})
//	DELETE /users/{userId}/attributes/{key}    user_attributes:write  204
//	GET    /claim-mappers                      claim_mappers:read     200 {"mappers": [...]}
//	PUT    /claim-mappers/{attributeKey}       claim_mappers:write    204
//	DELETE /claim-mappers/{attributeKey}       claim_mappers:write    204
//	GET    /webhooks                           webhooks:read          200 page of endpoints (?offset=&limit=)
//	POST   /webhooks                           webhooks:write         201 {"endpoint": ..., "secret": ...}, Location
//	DELETE /webhooks/{endpointId}              webhooks:write         204
//	GET    /openapi.yaml                       (none)                 200 the OpenAPI document
//
// Lists are {"data": [...], "meta": {"total", "offset", "limit"}}. Empty
// lists and maps are [] and {}, never null; timestamps are RFC 3339 in UTC.
// Path parameters may be percent-encoded (an attribute key "a/b" is a%2Fb).
// OPTIONS is answered with Allow; HEAD is not served (405).
// Location headers carry the path as the handler received it, so under
// http.StripPrefix they lack the prefix.
//
// # Authentication
//
// Every route but the OpenAPI document needs "Authorization: Bearer <key>"
// (the scheme in any case), checked before the body, the path ids or any
// stored data are looked at. A missing, malformed, unknown or revoked key is
// 401 with "WWW-Authenticate: Bearer". A key of another workspace is 403,
// the same whether the slug exists or not. A key without the route's scope
// is 403 with `WWW-Authenticate: Bearer error="insufficient_scope",
// scope="<scope>"`.
//
// # Errors
//
// Errors are application/problem+json (RFC 9457): type ("about:blank"),
// title, status, detail, a stable code, and for validation an errors array
// of {field, rule, message}. Library codes map to statuses in one table:
//
//	invalid 422, not_found 404, conflict 409, reserved_claim 400,
//	limit_reached 409, unauthenticated 401, forbidden 403, internal 500
//
// The adapter adds its own codes: unsupported_media_type 415 (a body that is
// not application/json, or has no Content-Type), malformed_json 400 (bad
// JSON, or data after it), body_too_large 413 (over 1 MiB), malformed_query
// 400, method_not_allowed 405 (with Allow; it may precede authentication),
// not_found 404 (an unknown path, or a path id that is not a positive
// decimal integer) and unavailable 503 (the request was canceled or timed
// out). A JSON member of the wrong type, a null member, a body that is not
// an object and a page parameter that is not an integer are invalid (422)
// with the field named and rule "type". Unknown members are ignored; members
// match by exact name. A 500 tells nothing of its cause, which goes to the
// log; a panic in a route is recovered and answered the same way.
//
// # Logging
//
// Each request is logged in one line: method, route pattern (never the raw
// path; empty for a request no route matched), status, duration, bytes,
// and for a 500 its cause (a panic's value and stack). Headers and bodies
// are never logged, so keys, passwords and secrets are not either.
package httpapi
