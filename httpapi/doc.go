// Package httpapi is the REST adapter of package identity: New returns an
// http.Handler serving the management API under /t/{slug}/api/v1. The
// OpenAPI document openapi.yaml (also served at
// /t/{slug}/api/v1/openapi.yaml) is its contract, and docs/api.md in the
// repository describes it in prose. Each request is decoded, authorized,
// passed to one identity method and encoded; every rule (lengths,
// patterns, limits, defaults) is the library's and arrives here as a typed
// error.
//
// # Routes and scopes
//
// Paths are below /t/{slug}/api/v1; each needs one scope of the API key
// (the claims preview, and the listings of users through a role or a
// group, two: every one the table names).
//
//	GET    /users                              users:read             200 page of users (?search=&offset=&limit=)
//	POST   /users                              users:write            201 user, Location, ETag
//	GET    /users/{userId}                     users:read             200 user, ETag (304 for If-None-Match)
//	PUT    /users/{userId}                     users:write            200 user, ETag (If-Match: 412)
//	DELETE /users/{userId}                     users:write            204 (disables the user)
//	POST   /users/{userId}/enable              users:write            204 (enables the user)
//	POST   /users/{userId}/unlock              users:write            204 (ends a lockout)
//	DELETE /users/{userId}/mfa                 users:write            204 (clears the second factor)
//	GET    /users/{userId}/passkeys            users:read             200 {"passkeys": [...]}
//	DELETE /users/{userId}/passkeys/{id}       users:write            204 (409 for the last under "required")
//	PUT    /users/{userId}/email-verified      users:write            200 user, ETag (body {"emailVerified": bool})
//	GET    /users/{userId}/claims?token=       users:read and         200 {"claims": {...}} (token access or id)
//	                                             claim_mappers:read
//	GET    /users/{userId}/roles               users:read             200 {"roles": [...]} (each with direct, groups)
//	POST   /users/{userId}/roles/{roleId}      users:write            204
//	DELETE /users/{userId}/roles/{roleId}      users:write            204
//	GET    /users/{userId}/groups              users:read             200 {"groups": [...]}
//	GET    /users/{userId}/attributes          user_attributes:read   200 {"attributes": {...}}
//	PUT    /users/{userId}/attributes/{key}    user_attributes:write  204, the user's ETag (body {"value": "..."}; If-Match: 412)
//	DELETE /users/{userId}/attributes/{key}    user_attributes:write  204, the user's ETag (If-Match: 412)
//	GET    /claim-mappers                      claim_mappers:read     200 {"mappers": [...]}
//	GET    /claim-mappers/{attributeKey}       claim_mappers:read     200 mapper, ETag (304 for If-None-Match)
//	PUT    /claim-mappers/{attributeKey}       claim_mappers:write    204, ETag (If-Match, If-None-Match: 412)
//	DELETE /claim-mappers/{attributeKey}       claim_mappers:write    204
//	GET    /webhooks                           webhooks:read          200 page of endpoints (?offset=&limit=)
//	POST   /webhooks                           webhooks:write         201 {"endpoint": ..., "secret": ...}, Location
//	DELETE /webhooks/{endpointId}              webhooks:write         204
//	GET    /roles                              roles:read             200 page of roles (?search=&offset=&limit=)
//	POST   /roles                              roles:write            201 role, Location, ETag
//	GET    /roles/{roleId}                     roles:read             200 role, ETag (304 for If-None-Match)
//	PUT    /roles/{roleId}                     roles:write            200 role, ETag (If-Match: 412)
//	DELETE /roles/{roleId}                     roles:write            204
//	GET    /roles/{roleId}/users               roles:read and         200 page of the users holding it
//	                                             users:read
//	GET    /groups                             groups:read            200 page of groups (?search=&offset=&limit=)
//	POST   /groups                             groups:write           201 group, Location, ETag
//	GET    /groups/{groupId}                   groups:read            200 group, ETag (304 for If-None-Match)
//	PUT    /groups/{groupId}                   groups:write           200 group, ETag (If-Match: 412)
//	DELETE /groups/{groupId}                   groups:write           204
//	GET    /groups/{groupId}/members           groups:read and        200 page of its members
//	                                             users:read
//	PUT    /groups/{groupId}/members/{userId}  groups:write           204 (again: 204)
//	DELETE /groups/{groupId}/members/{userId}  groups:write           204
//	GET    /groups/{groupId}/roles             groups:read            200 {"roles": [...]}
//	PUT    /groups/{groupId}/roles/{roleId}    groups:write           204 (again: 204)
//	DELETE /groups/{groupId}/roles/{roleId}    groups:write           204
//	GET    /audit                              audit:read             200 {"records": [...], "hasMore", "nextCursor"}
//	                                                                  (?actor=&target=&action=&outcome=&since=&until=&cursor=&limit=)
//	GET    /openapi.yaml                       (none)                 200 the OpenAPI document
//
// Lists are {"data": [...], "meta": {"total", "offset", "limit"}}; the
// bounded lists (a user's groups and roles, a group's roles, the mappers)
// come whole, in an object named for them. Empty lists and maps are []
// and {}, never null; timestamps are RFC 3339 in UTC.
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
// scope="<scope>"`, naming every scope the route needs, space separated.
//
// # Conditional requests and idempotency keys
//
// Optional: without their headers nothing changes. The version of a
// user, a claim mapper, a role or a group is its strong ETag (16 hex
// digits in quotes). PUT of any of them evaluates If-Match (strong
// comparison; "*": the record must exist) and If-None-Match ("*": it must
// not; tags: weak comparison) in the transaction of the write, and
// answers 412 precondition_failed, changing nothing, when they do not
// hold. A user, role or group that does not exist is 404 whatever the
// headers (RFC 9110, 13.2.1). GET of any of them answers a matching
// If-None-Match with 304. A header that is neither "*" nor a list of
// entity tags is 400 malformed_precondition. An attribute is part of its
// user: PUT and DELETE of one take the same headers against the user's
// ETag, in the transaction of the write, and answer with the user's new
// ETag.
//
// POST /users, /webhooks, /roles and /groups take an Idempotency-Key
// (1-255 visible ASCII characters, once). The library stores the outcome with the key,
// per API key, in the transaction that creates; a retry with the same key
// and the same body bytes gets the same status, body, Location and ETag
// (a webhook's secret included) and creates nothing. The same key with
// another body or on another route is 422 idempotency_key_reused; a
// retry while the first request runs is 409 idempotency_key_in_use. The
// fingerprint of the body is an HMAC keyed with the API key, so the stored
// record reveals nothing of a password. Failures the request never reached
// the library with, and server failures, are not stored.
//
// # Errors
//
// Errors are application/problem+json (RFC 9457): type ("about:blank"),
// title, status, detail, a stable code, and for validation an errors array
// of {field, rule, message}. Library codes map to statuses in one table:
//
//	invalid 422, not_found 404, conflict 409, reserved_claim 400,
//	limit_reached 409, unauthenticated 401, forbidden 403, internal 500,
//	token_invalid 400, token_expired 410, token_used 409,
//	precondition_failed 412, idempotency_key_reused 422,
//	idempotency_key_in_use 409, rate_limited 429 (with Retry-After, whole
//	seconds rounded up), email_unverified 403, confirmation_required 409
//
// (The token_ codes are those of email verification tokens, which no route
// takes yet; no route is throttled, signs in or out, so rate_limited,
// email_unverified and confirmation_required have a status for
// completeness.)
//
// # Clients
//
// Every library call of a request carries its identity.RequestInfo
// (package requestinfo: the peer's address, or the address a trusted
// proxy forwarded, see identity.Options.TrustedProxies, the User-Agent,
// and the request's id), as the OpenID Provider's calls do, and the API
// key as its actor (identity.WithActor: kind api_key, the key's id and
// name), which the audit trail records. Every answer carries the
// request's id in X-Request-Id: a trusted proxy's own X-Request-Id, or a
// new one.
//
// # The audit trail
//
// GET /audit reads a page of the workspace's trail (Workspace.ListAuditRecords),
// newest first: actor and target are KIND:ID ("api_key:3f2a9c01d4e5b6a7",
// "user:42", "system:"), action an action or a prefix ending in ".",
// outcome success or failure, since and until RFC 3339 times, cursor the
// nextCursor of the page before, limit 1-100. A malformed or unknown
// filter is 422 invalid, as on every list, with every such parameter in
// errors.
//
// The adapter adds its own codes: unsupported_media_type 415 (a body that is
// not application/json, or has no Content-Type), malformed_json 400 (bad
// JSON, or data after it), body_too_large 413 (over 1 MiB), malformed_query
// 400, malformed_precondition 400, method_not_allowed 405 (with Allow; it
// may precede authentication), not_found 404 (an unknown path, or a path
// id that is not a positive decimal integer) and unavailable 503 (the
// request was canceled or timed out). A JSON member of the wrong type, a null member, a body that is not
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
