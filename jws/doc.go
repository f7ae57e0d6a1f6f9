// Package jws signs and verifies the compact JSON Web Signatures (RFC 7515)
// that carry every token the identity library issues.
//
// Signer implements identity.TokenSigner over github.com/go-jose/go-jose/v4,
// so that the root package identity names no JOSE library. A program passes
// it as identity.Options.TokenSigner:
//
//	opts := &identity.Options{TokenSigner: jws.Signer{}}
//
// Only two algorithms are used, in both directions: RS256 with an RSA key of
// at least 2048 bits (RFC 7518 section 3.3) and ES256 with a P-256 key.
// Verify refuses every other "alg" (none and the HMAC family above all, so a
// public key can never be used as an HMAC secret), the JWS JSON
// serialization, non-canonical base64url and a key whose type does not fit
// the token's algorithm. Every refusal wraps ErrInvalid.
//
// PublicJWK gives the JSON Web Key of a verification key, for the provider's
// JWKS document.
package jws
