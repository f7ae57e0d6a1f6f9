package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
)

// ErrInvalid is wrapped by every error Verify returns for a token it
// refuses: malformed, an algorithm other than RS256 or ES256, a key that does
// not fit the algorithm, or a signature that does not verify. An error from
// the caller's key function is returned as it is and does not wrap
// ErrInvalid.
var ErrInvalid = errors.New("jws: invalid token")

// MinRSABits is the smallest RSA modulus, in bits, that Sign, Verify and
// PublicJWK accept (RFC 7518 section 3.3: "A key of size 2048 bits or larger
// MUST be used with these algorithms").
const MinRSABits = 2048

// allowed lists the only algorithms a token may name.
var allowed = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// strict decodes base64url without padding and refuses non-zero trailing
// bits, so that each part of a token has a single spelling.
var strict = base64.RawURLEncoding.Strict()

// Signer signs and verifies compact JWS with go-jose. It implements
// identity.TokenSigner. The zero value is ready to use and it holds no state,
// so one value may be used from any number of goroutines.
type Signer struct{}

// Sign returns the compact serialization of payload signed with key under
// alg, which must be "RS256" (key's public half an *rsa.PublicKey of at least
// MinRSABits) or "ES256" (an *ecdsa.PublicKey on P-256). The protected header
// holds alg, kid and typ; an empty kid or typ is left out. key may be an
// *rsa.PrivateKey, an *ecdsa.PrivateKey or any other crypto.Signer, such as
// one backed by a hardware module.
func (Signer) Sign(key crypto.Signer, alg, kid, typ string, payload []byte) (string, error) {
	if isNil(key) {
		return "", errors.New("jws: sign: no key")
	}
	var signingKey any
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if err := checkKey(alg, &k.PublicKey); err != nil {
			return "", fmt.Errorf("jws: sign: %v", err)
		}
		if k.D == nil {
			return "", errors.New("jws: sign: RSA key has no private exponent")
		}
		signingKey = k
	case *ecdsa.PrivateKey:
		if err := checkKey(alg, &k.PublicKey); err != nil {
			return "", fmt.Errorf("jws: sign: %v", err)
		}
		if k.D == nil {
			return "", errors.New("jws: sign: ECDSA key has no private scalar")
		}
		signingKey = k
	default:
		if err := checkKey(alg, key.Public()); err != nil {
			return "", fmt.Errorf("jws: sign: %v", err)
		}
		signingKey = cryptosigner.Opaque(key)
	}

	opts := new(jose.SignerOptions)
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	if kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: signingKey}, opts)
	if err != nil {
		return "", fmt.Errorf("jws: sign: %v", err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("jws: sign: %v", err)
	}
	token, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("jws: sign: %v", err)
	}
	return token, nil
}

// Verify checks the compact JWS token. Once the token is well formed and
// names RS256 or ES256, Verify calls key with the protected header's kid and
// alg; an error from key is returned as it is. The key returned must be an
// *rsa.PublicKey of at least MinRSABits for RS256 or a P-256 *ecdsa.PublicKey
// for ES256. If the signature verifies, Verify returns the header's typ (""
// when there is none) and the payload.
//
// Every part of the token must be unpadded base64url in its one canonical
// spelling (no line breaks, no stray trailing bits), and the header may not
// carry "crit" or "b64" (RFC 7797), which the library never uses. So a token
// that verifies is byte for byte the one its signer produced, with one
// exception inherent to ECDSA: if (r, s) is a valid ES256 signature then so
// is (r, n-s). Do not use a token's bytes as its identity; use a claim such
// as "jti".
//
// Every refusal wraps ErrInvalid.
func (Signer) Verify(token string, key func(kid, alg string) (crypto.PublicKey, error)) (typ string, payload []byte, err error) {
	if token == "" {
		return "", nil, invalid("empty")
	}
	if strings.Count(token, ".") != 2 {
		return "", nil, invalid("not three parts")
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", nil, invalid("line break")
	}
	for i, part := range strings.Split(token, ".") {
		if _, err := strict.DecodeString(part); err != nil {
			return "", nil, invalid([...]string{"header", "payload", "signature"}[i] + " is not base64url")
		}
	}

	obj, err := jose.ParseSignedCompact(token, allowed)
	if err != nil {
		if alg, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok {
			return "", nil, invalid(fmt.Sprintf("algorithm %q not allowed", alg.Got))
		}
		return "", nil, invalid("malformed header")
	}
	if len(obj.Signatures) != 1 {
		return "", nil, invalid("not one signature")
	}
	h := obj.Signatures[0].Protected
	if _, ok := h.ExtraHeaders["crit"]; ok {
		return "", nil, invalid(`header parameter "crit" not supported`)
	}
	if _, ok := h.ExtraHeaders["b64"]; ok {
		return "", nil, invalid(`header parameter "b64" not supported`)
	}
	if t, ok := h.ExtraHeaders[jose.HeaderType]; ok {
		if typ, ok = t.(string); !ok {
			return "", nil, invalid("typ is not a string")
		}
	}

	pub, err := key(h.KeyID, h.Algorithm)
	if err != nil {
		return "", nil, err
	}
	if err := checkKey(h.Algorithm, pub); err != nil {
		return "", nil, invalid(err.Error())
	}
	payload, err = obj.Verify(pub)
	if err != nil {
		return "", nil, invalid("signature does not verify")
	}
	return typ, payload, nil
}

// PublicJWK returns the JSON Web Key of pub for a JWKS document: key ID kid,
// algorithm alg ("RS256" or "ES256") and use "sig". pub must be an
// *rsa.PublicKey or *ecdsa.PublicKey that fits alg, as Sign requires; a
// private key is refused so that it cannot be published by mistake.
func PublicJWK(kid, alg string, pub crypto.PublicKey) (jose.JSONWebKey, error) {
	if err := checkKey(alg, pub); err != nil {
		return jose.JSONWebKey{}, fmt.Errorf("jws: public JWK: %v", err)
	}
	return jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: alg, Use: "sig"}, nil
}

// invalid returns ErrInvalid wrapped with a short cause.
func invalid(cause string) error {
	return fmt.Errorf("%w: %s", ErrInvalid, cause)
}

// checkKey reports whether pub is a usable public key for alg.
func checkKey(alg string, pub crypto.PublicKey) error {
	switch alg {
	case "RS256":
		k, ok := pub.(*rsa.PublicKey)
		if !ok || k == nil {
			return fmt.Errorf("RS256 needs an RSA public key, got %T", pub)
		}
		if k.N == nil {
			return errors.New("RSA key has no modulus")
		}
		if n := k.N.BitLen(); n < MinRSABits {
			return fmt.Errorf("RSA key of %d bits, fewer than %d", n, MinRSABits)
		}
	case "ES256":
		k, ok := pub.(*ecdsa.PublicKey)
		if !ok || k == nil {
			return fmt.Errorf("ES256 needs an ECDSA public key, got %T", pub)
		}
		if k.Curve != elliptic.P256() {
			return errors.New("ES256 needs a P-256 key")
		}
		if k.X == nil || k.Y == nil {
			return errors.New("ECDSA key has no point")
		}
	default:
		return fmt.Errorf("algorithm %q not supported", alg)
	}
	return nil
}

// isNil reports whether v is nil or an interface holding a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// PublicJWK returns the JSON Web Key of pub as JSON, as
// identity.TokenSigner asks: PublicJWK's key, marshalled.
func (Signer) PublicJWK(kid, alg string, pub crypto.PublicKey) ([]byte, error) {
	jwk, err := PublicJWK(kid, alg, pub)
	if err != nil {
		return nil, err
	}
	return jwk.MarshalJSON()
}
