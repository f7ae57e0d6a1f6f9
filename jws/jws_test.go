package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/jws"
)

func TestSignVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key        crypto.Signer
		alg        string
		kid, typ   string
		payload    string
		wantHeader string
	}{
		{"RS256", rsaKey(t), "RS256", "rs1", "at+jwt", claims,
			`{"alg":"RS256","kid":"rs1","typ":"at+jwt"}`},
		{"ES256", ecKey(t), "ES256", "es1", "at+jwt", claims,
			`{"alg":"ES256","kid":"es1","typ":"at+jwt"}`},
		{"RS256 opaque signer", opaqueSigner{rsaKey(t)}, "RS256", "rs1", "JWT", claims,
			`{"alg":"RS256","kid":"rs1","typ":"JWT"}`},
		{"ES256 opaque signer", opaqueSigner{ecKey(t)}, "ES256", "es1", "JWT", claims,
			`{"alg":"ES256","kid":"es1","typ":"JWT"}`},
		{"no kid and no typ", ecKey(t), "ES256", "", "", claims,
			`{"alg":"ES256"}`},
		{"empty payload", rsaKey(t), "RS256", "rs1", "logout+jwt", "",
			`{"alg":"RS256","kid":"rs1","typ":"logout+jwt"}`},
		{"binary payload", ecKey(t), "ES256", "es1", "x", "\x00\xff.\n",
			`{"alg":"ES256","kid":"es1","typ":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s jws.Signer
			token, err := s.Sign(tt.key, tt.alg, tt.kid, tt.typ, []byte(tt.payload))
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			parts := strings.Split(token, ".")
			if len(parts) != 3 {
				t.Fatalf("token has %d parts, want 3: %q", len(parts), token)
			}
			header, err := base64.RawURLEncoding.DecodeString(parts[0])
			if err != nil {
				t.Fatalf("header: %v", err)
			}
			if diff := cmp.Diff(tt.wantHeader, string(header)); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			var fields map[string]any
			if err := json.Unmarshal(header, &fields); err != nil {
				t.Fatalf("header JSON: %v", err)
			}
			wantFields := map[string]any{"alg": tt.alg}
			if tt.kid != "" {
				wantFields["kid"] = tt.kid
			}
			if tt.typ != "" {
				wantFields["typ"] = tt.typ
			}
			if diff := cmp.Diff(wantFields, fields); diff != "" {
				t.Errorf("header fields (-want +got):\n%s", diff)
			}

			var gotKid, gotAlg string
			typ, payload, err := s.Verify(token, func(kid, alg string) (crypto.PublicKey, error) {
				gotKid, gotAlg = kid, alg
				return tt.key.Public(), nil
			})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			got := []string{gotKid, gotAlg, typ, string(payload)}
			want := []string{tt.kid, tt.alg, tt.typ, tt.payload}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kid, alg given to key; typ, payload returned (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSignRS256IsDeterministic(t *testing.T) {
	t.Parallel()
	token, err := jws.Signer{}.Sign(rsaKey(t), "RS256", "rs1", "at+jwt", []byte(claims))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rsToken, token); diff != "" {
		t.Errorf("token (-want +got):\n%s", diff)
	}
}

func TestVerifyLiteralTokens(t *testing.T) {
	t.Parallel()
	for _, token := range []string{rsToken, esToken, ecdsaTwin(esToken)} {
		typ, payload, err := jws.Signer{}.Verify(token, keyFunc(t))
		if err != nil {
			t.Fatalf("Verify(%q): %v", token, err)
		}
		if diff := cmp.Diff([]string{"at+jwt", claims}, []string{typ, string(payload)}); diff != "" {
			t.Errorf("Verify(%q) typ, payload (-want +got):\n%s", token, diff)
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	rsaPub := &rsaKey(t).PublicKey
	der, err := x509.MarshalPKIXPublicKey(rsaPub)
	if err != nil {
		t.Fatal(err)
	}
	pemPub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	// hs256 forges a token the classic way: HMAC-SHA256 keyed with the
	// RSA public key, hoping the verifier feeds its RSA key to HMAC.
	hs256 := func(secret []byte) string {
		input := b64(`{"alg":"HS256","kid":"rs1","typ":"at+jwt"}`) + "." + b64(`{"sub":"admin"}`)
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(input))
		return input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	// Flip the signature's first character: still canonical base64url.
	flipped := withPart(rsToken, 2, "D"+part(rsToken, 2)[1:])
	// The ES256 signature is 64 bytes in 86 characters, so its last
	// character carries 4 unused bits; setting one keeps the decoded bytes.
	esSig := part(esToken, 2)
	loose := esSig[:len(esSig)-1] + "h" // 'g' is 32 = 0b100000, 'h' is 33
	if esSig[len(esSig)-1] != 'g' {
		t.Fatalf("esToken's signature ends in %q, the test assumes 'g'", esSig[len(esSig)-1])
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	otherRSA, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		token   string
		key     func(kid, alg string) (crypto.PublicKey, error) // nil: keyFunc
		wantErr string
	}{
		{"tampered payload", withPart(rsToken, 1, b64(`{"sub":"admin","aud":"app"}`)), nil,
			"jws: invalid token: signature does not verify"},
		{"tampered payload ES256", withPart(esToken, 1, b64(`{"sub":"admin","aud":"app"}`)), nil,
			"jws: invalid token: signature does not verify"},
		{"tampered signature", flipped, nil,
			"jws: invalid token: signature does not verify"},
		{"tampered header", withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"rs1","typ":"id+jwt"}`)), nil,
			"jws: invalid token: signature does not verify"},
		{"signature cut short", withPart(esToken, 2, esSig[:80]), nil,
			"jws: invalid token: signature does not verify"},
		{"no signature", withPart(rsToken, 2, ""), nil,
			"jws: invalid token: signature does not verify"},
		{"alg none, no signature", withPart(withPart(rsToken, 0, b64(`{"alg":"none","kid":"rs1","typ":"at+jwt"}`)), 2, ""), nil,
			`jws: invalid token: algorithm "none" not allowed`},
		{"alg none, signature kept", withPart(rsToken, 0, b64(`{"alg":"none","kid":"rs1","typ":"at+jwt"}`)), nil,
			`jws: invalid token: algorithm "none" not allowed`},
		{"alg None", withPart(rsToken, 0, b64(`{"alg":"None"}`)), nil,
			`jws: invalid token: algorithm "None" not allowed`},
		{"no alg", withPart(rsToken, 0, b64(`{"kid":"rs1"}`)), nil,
			`jws: invalid token: algorithm "" not allowed`},
		{"HS256 keyed with the PEM public key", hs256(pemPub), nil,
			`jws: invalid token: algorithm "HS256" not allowed`},
		{"HS256 keyed with the DER public key", hs256(der), nil,
			`jws: invalid token: algorithm "HS256" not allowed`},
		{"RS384", withPart(rsToken, 0, b64(`{"alg":"RS384","kid":"rs1"}`)), nil,
			`jws: invalid token: algorithm "RS384" not allowed`},
		{"PS256", withPart(rsToken, 0, b64(`{"alg":"PS256","kid":"rs1"}`)), nil,
			`jws: invalid token: algorithm "PS256" not allowed`},
		{"EdDSA", withPart(rsToken, 0, b64(`{"alg":"EdDSA","kid":"rs1"}`)), nil,
			`jws: invalid token: algorithm "EdDSA" not allowed`},
		{"ES256 token relabelled RS256", withPart(esToken, 0, b64(`{"alg":"RS256","kid":"es1","typ":"at+jwt"}`)), nil,
			"jws: invalid token: RS256 needs an RSA public key, got *ecdsa.PublicKey"},
		{"RS256 token relabelled ES256", withPart(rsToken, 0, b64(`{"alg":"ES256","kid":"rs1","typ":"at+jwt"}`)), nil,
			"jws: invalid token: ES256 needs an ECDSA public key, got *rsa.PublicKey"},
		{"JWS JSON serialization, flattened",
			`{"protected":"` + part(rsToken, 0) + `","payload":"` + part(rsToken, 1) + `","signature":"` + part(rsToken, 2) + `"}`, nil,
			"jws: invalid token: not three parts"},
		{"JWS JSON serialization, two signatures",
			`{"payload":"` + part(rsToken, 1) + `","signatures":[{"protected":"` + part(rsToken, 0) + `","signature":"` + part(rsToken, 2) +
				`"},{"protected":"` + part(esToken, 0) + `","signature":"` + part(esToken, 2) + `"}]}`, nil,
			"jws: invalid token: not three parts"},
		{"two dots missing", strings.ReplaceAll(rsToken, ".", ""), nil,
			"jws: invalid token: not three parts"},
		{"one dot missing", part(rsToken, 0) + part(rsToken, 1) + "." + part(rsToken, 2), nil,
			"jws: invalid token: not three parts"},
		{"four parts", rsToken + "." + part(esToken, 2), nil,
			"jws: invalid token: not three parts"},
		{"empty string", "", nil,
			"jws: invalid token: empty"},
		{"only dots", "..", nil,
			`jws: invalid token: algorithm "" not allowed`},
		{"padded signature", rsToken + "==", nil,
			"jws: invalid token: signature is not base64url"},
		{"padded payload", withPart(rsToken, 1, base64.URLEncoding.EncodeToString([]byte(claims))), nil,
			"jws: invalid token: payload is not base64url"},
		{"standard alphabet", withPart(rsToken, 2, strings.NewReplacer("-", "+", "_", "/").Replace(part(rsToken, 2))), nil,
			"jws: invalid token: signature is not base64url"},
		{"unused bits set", withPart(esToken, 2, loose), nil,
			"jws: invalid token: signature is not base64url"},
		{"line break", withPart(rsToken, 1, part(rsToken, 1)[:8]+"\n"+part(rsToken, 1)[8:]), nil,
			"jws: invalid token: line break"},
		{"space", " " + rsToken, nil,
			"jws: invalid token: header is not base64url"},
		{"header not JSON", withPart(rsToken, 0, b64(`alg=RS256`)), nil,
			"jws: invalid token: malformed header"},
		{"header a JSON array", withPart(rsToken, 0, b64(`["RS256"]`)), nil,
			"jws: invalid token: malformed header"},
		{"kid a number", withPart(rsToken, 0, b64(`{"alg":"RS256","kid":1}`)), nil,
			"jws: invalid token: malformed header"},
		{"typ a number", withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"rs1","typ":1}`)), nil,
			"jws: invalid token: typ is not a string"},
		{"crit", withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"rs1","crit":["exp"],"exp":1}`)), nil,
			`jws: invalid token: header parameter "crit" not supported`},
		{"b64 false", withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"rs1","b64":false}`)), nil,
			`jws: invalid token: header parameter "b64" not supported`},
		{"key func returns nil", rsToken, fixedKey(nil),
			"jws: invalid token: RS256 needs an RSA public key, got <nil>"},
		{"key func returns a typed nil", rsToken, fixedKey((*rsa.PublicKey)(nil)),
			"jws: invalid token: RS256 needs an RSA public key, got *rsa.PublicKey"},
		{"key func returns the private key", rsToken, fixedKey(rsaKey(t)),
			"jws: invalid token: RS256 needs an RSA public key, got *rsa.PrivateKey"},
		{"key func returns an HMAC secret", hs256(pemPub), fixedKey(pemPub),
			`jws: invalid token: algorithm "HS256" not allowed`},
		{"RSA key for ES256", esToken, fixedKey(rsaPub),
			"jws: invalid token: ES256 needs an ECDSA public key, got *rsa.PublicKey"},
		{"ECDSA key for RS256", rsToken, fixedKey(&ecKey(t).PublicKey),
			"jws: invalid token: RS256 needs an RSA public key, got *ecdsa.PublicKey"},
		{"P-384 key for ES256", esToken, fixedKey(&p384.PublicKey),
			"jws: invalid token: ES256 needs a P-256 key"},
		{"Ed25519 key for ES256", esToken, fixedKey(ed25519.PublicKey(make([]byte, 32))),
			"jws: invalid token: ES256 needs an ECDSA public key, got ed25519.PublicKey"},
		{"RSA key without modulus", rsToken, fixedKey(&rsa.PublicKey{E: 65537}),
			"jws: invalid token: RSA key has no modulus"},
		{"ECDSA key without point", esToken, fixedKey(&ecdsa.PublicKey{Curve: elliptic.P256()}),
			"jws: invalid token: ECDSA key has no point"},
		{"1024-bit RSA key", rsToken, fixedKey(&rsa1024.PublicKey),
			"jws: invalid token: RSA key of 1024 bits, fewer than 2048"},
		{"another RSA key", rsToken, fixedKey(&otherRSA.PublicKey),
			"jws: invalid token: signature does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := tt.key
			if key == nil {
				key = keyFunc(t)
			}
			typ, payload, err := jws.Signer{}.Verify(tt.token, key)
			if !errors.Is(err, jws.ErrInvalid) {
				t.Errorf("err = %v, want one that wraps ErrInvalid", err)
			}
			if err != nil {
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
			if typ != "" || payload != nil {
				t.Errorf("refused token gave typ %q, payload %q", typ, payload)
			}
		})
	}
}

func TestVerifyPassesKeyErrorThrough(t *testing.T) {
	t.Parallel()
	for _, token := range []string{
		withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"rs2","typ":"at+jwt"}`)),
		withPart(esToken, 0, b64(`{"alg":"ES256","typ":"at+jwt"}`)),
	} {
		typ, payload, err := jws.Signer{}.Verify(token, keyFunc(t))
		if !errors.Is(err, errUnknownKey) {
			t.Errorf("err = %v, want one that wraps errUnknownKey", err)
		}
		if errors.Is(err, jws.ErrInvalid) {
			t.Errorf("err = %v wraps ErrInvalid, want the key function's error as it is", err)
		}
		if typ != "" || payload != nil {
			t.Errorf("refused token gave typ %q, payload %q", typ, payload)
		}
	}

	sentinel := errors.New("key store down")
	_, _, err := jws.Signer{}.Verify(rsToken, func(string, string) (crypto.PublicKey, error) { return nil, sentinel })
	if err != sentinel {
		t.Errorf("err = %v, want the key function's error itself", err)
	}
}

func TestVerifyDoesNotCallKeyForMalformedTokens(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"", "a.b", hsToken(), withPart(rsToken, 0, b64(`{"alg":"none"}`))} {
		_, _, err := jws.Signer{}.Verify(token, func(kid, alg string) (crypto.PublicKey, error) {
			t.Errorf("Verify(%q) called key(%q, %q)", token, kid, alg)
			return nil, errUnknownKey
		})
		if !errors.Is(err, jws.ErrInvalid) {
			t.Errorf("Verify(%q) = %v, want ErrInvalid", token, err)
		}
	}
}

// hsToken returns an HS256 token keyed with a 32-byte secret.
func hsToken() string {
	input := b64(`{"alg":"HS256","kid":"rs1"}`) + "." + b64(claims)
	mac := hmac.New(sha256.New, []byte("0123456789abcdef0123456789abcdef"))
	mac.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestSignRefuses(t *testing.T) {
	t.Parallel()
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		key     crypto.Signer
		alg     string
		wantErr string
	}{
		{"nil key", nil, "RS256", "jws: sign: no key"},
		{"nil RSA key", (*rsa.PrivateKey)(nil), "RS256", "jws: sign: no key"},
		{"nil ECDSA key", (*ecdsa.PrivateKey)(nil), "ES256", "jws: sign: no key"},
		{"RSA key for ES256", rsaKey(t), "ES256", "jws: sign: ES256 needs an ECDSA public key, got *rsa.PublicKey"},
		{"ECDSA key for RS256", ecKey(t), "RS256", "jws: sign: RS256 needs an RSA public key, got *ecdsa.PublicKey"},
		{"opaque RSA key for ES256", opaqueSigner{rsaKey(t)}, "ES256", "jws: sign: ES256 needs an ECDSA public key, got *rsa.PublicKey"},
		{"opaque ECDSA key for RS256", opaqueSigner{ecKey(t)}, "RS256", "jws: sign: RS256 needs an RSA public key, got *ecdsa.PublicKey"},
		{"P-384 key for ES256", p384, "ES256", "jws: sign: ES256 needs a P-256 key"},
		{"Ed25519 key for RS256", edKey, "RS256", "jws: sign: RS256 needs an RSA public key, got ed25519.PublicKey"},
		{"1024-bit RSA key", rsa1024, "RS256", "jws: sign: RSA key of 1024 bits, fewer than 2048"},
		{"RSA key without modulus", &rsa.PrivateKey{}, "RS256", "jws: sign: RSA key has no modulus"},
		{"RSA key without private exponent", &rsa.PrivateKey{PublicKey: rsaKey(t).PublicKey}, "RS256", "jws: sign: RSA key has no private exponent"},
		{"ECDSA key without curve", &ecdsa.PrivateKey{}, "ES256", "jws: sign: ES256 needs a P-256 key"},
		{"ECDSA key without scalar", &ecdsa.PrivateKey{PublicKey: ecKey(t).PublicKey}, "ES256", "jws: sign: ECDSA key has no private scalar"},
		{"none", rsaKey(t), "none", `jws: sign: algorithm "none" not supported`},
		{"HS256", rsaKey(t), "HS256", `jws: sign: algorithm "HS256" not supported`},
		{"RS384", rsaKey(t), "RS384", `jws: sign: algorithm "RS384" not supported`},
		{"lower case", ecKey(t), "es256", `jws: sign: algorithm "es256" not supported`},
		{"no algorithm", ecKey(t), "", `jws: sign: algorithm "" not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			token, err := jws.Signer{}.Sign(tt.key, tt.alg, "k1", "at+jwt", []byte(claims))
			if err == nil {
				t.Fatalf("Sign = %q, want an error", token)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if token != "" {
				t.Errorf("token = %q, want none", token)
			}
		})
	}
}

func TestPublicJWK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kid, alg string
		pub      crypto.PublicKey
		want     string
	}{
		{"rs1", "RS256", rsaKey(t).Public(),
			`{"use":"sig","kty":"RSA","kid":"rs1","alg":"RS256",` +
				`"n":"lV9W99Hv6AQRmAJ4ysUrHhdhOIssqUNLCEiik0oOGXfk0xpKUN6Luf_Bm58myLIPyUAdktVn2UbTfrqcg788O-pn83g-h57IHeHtx98AH3kjnZE6SfHjDofbMdreL0qZq_BHuLIaQ7BtjPyAKPLpkXlS5O30nRe2SXhxwBAl8E9Ekp-Qq-4-5k45k5OE9bWYYxKuPSi8-KFf81jjgO1keN_as5DaQsBIxxA45orjAcZebdX9-OBIOj8TT866qev_kMZSLefGgbOZJjxCKlfVfSlhYDFH2I7BPP4GIK-uda7NzOqh33imFA-HsnH_hf0GJ2wyQOCOI-qulODsEe6nSQ",` +
				`"e":"AQAB"}`},
		{"es1", "ES256", ecKey(t).Public(),
			`{"use":"sig","kty":"EC","kid":"es1","crv":"P-256","alg":"ES256",` +
				`"x":"D47Pn0Drc7r2zPd9K216zZM0yHQ--vGYYrmskFP2zjw","y":"X3GCh-_yvjY_oktejLTLcSnq19PiLrMukGw5n7E-WBg"}`},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			t.Parallel()
			jwk, err := jws.PublicJWK(tt.kid, tt.alg, tt.pub)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(jwk)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JWK (-want +got):\n%s", diff)
			}
			if !jwk.IsPublic() {
				t.Error("JWK is not public")
			}
			// The JWK, as a relying party would read it, verifies the
			// literal token of its algorithm.
			token := map[string]string{"RS256": rsToken, "ES256": esToken}[tt.alg]
			typ, payload, err := jws.Signer{}.Verify(token, fixedKey(jwk.Key))
			if err != nil {
				t.Fatalf("Verify with the JWK's key: %v", err)
			}
			if diff := cmp.Diff([]string{"at+jwt", claims}, []string{typ, string(payload)}); diff != "" {
				t.Errorf("typ, payload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublicJWKRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		alg     string
		pub     crypto.PublicKey
		wantErr string
	}{
		{"private RSA key", "RS256", rsaKey(t), "jws: public JWK: RS256 needs an RSA public key, got *rsa.PrivateKey"},
		{"private ECDSA key", "ES256", ecKey(t), "jws: public JWK: ES256 needs an ECDSA public key, got *ecdsa.PrivateKey"},
		{"nil", "ES256", nil, "jws: public JWK: ES256 needs an ECDSA public key, got <nil>"},
		{"RSA key for ES256", "ES256", rsaKey(t).Public(), "jws: public JWK: ES256 needs an ECDSA public key, got *rsa.PublicKey"},
		{"ECDSA key for RS256", "RS256", ecKey(t).Public(), "jws: public JWK: RS256 needs an RSA public key, got *ecdsa.PublicKey"},
		{"HS256", "HS256", []byte("secret"), `jws: public JWK: algorithm "HS256" not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			jwk, err := jws.PublicJWK("k1", tt.alg, tt.pub)
			if err == nil {
				t.Fatalf("PublicJWK = %+v, want an error", jwk)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
