// Package webhook sends Standard Webhooks over HTTP: the signature
// (Sign), and a Client that posts one attempt through an SSRF guard.
//
// The rules of the queue (which delivery is due, what its result means,
// when to retry, when an endpoint is disabled) and the address rule
// (identity.IsPublicAddress) live in package identity; the dispatcher in
// package delivery drives the Client. This package only speaks HTTP:
//
//   - the request: POST of the stored body with Content-Type
//     application/json and the headers webhook-id, webhook-timestamp and
//     webhook-signature;
//   - the guard: every address dialed, after name resolution, must be
//     public (identity.IsPublicAddress) unless the guard is off; cloud
//     metadata addresses are refused even then, also inside an IPv6
//     address that carries them (NAT64, 6to4, IPv4-compatible); the
//     environment's proxy is never used (it would dial out of the guard's
//     reach);
//   - redirects are never followed: a 3xx is the answer, and a failure;
//   - at most 20 kB of the response body is read, and the body must end
//     within the attempt's context for the attempt to count;
//   - a Retry-After of a 429 or 503 is returned for the caller to weigh
//     (ParseRetryAfter reads it).
package webhook
