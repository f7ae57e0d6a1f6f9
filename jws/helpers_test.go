package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
)

// The test keys are fixed (testdata/*.pem, PKCS #8), so that tokens signed
// with them can be written literally and the fuzzer's workers, each its own
// process, agree on which tokens verify.
const (
	claims = `{"sub":"user-1","aud":"app"}`

	// rsToken is Sign(rsa2048.pem, "RS256", "rs1", "at+jwt", claims).
	// RSASSA-PKCS1-v1_5 is deterministic, so TestSignRS256IsDeterministic
	// signs it again and compares.
	rsToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6InJzMSIsInR5cCI6ImF0K2p3dCJ9." +
		"eyJzdWIiOiJ1c2VyLTEiLCJhdWQiOiJhcHAifQ." +
		"CvOAzNNGbN9j1hVx4FnG_njniQ0suh4tr49bqezVcRvAz8nFPjQxgLmmkDJBPtraPj4aFxggk1wY3jhqFvlEEkdHExq6jxe2Qswq0g-oKlc3caFStKDO4QASL1IxfDUxr410KD9IBM1ZpKsNM6tWay6kWUXhCCuSwyWz3jSbe_00Mb0Vvq4Auz5fGhAvdFkEEJrNVMpxzeN9PXzqkLWxlRN5RTk_tLTbP2gdJiFJVyWd5dnd1_szQXBA65qvZEfBBZBo_LVzN3hmRhb_Q64PyBTvdsL2dXVm5qHQJdEveJI6kZ6salKS9o12sesHG8lwUBO8Y_PzD1OEUcl3joTZUg"

	// esToken is one output of Sign(p256.pem, "ES256", "es1", "at+jwt",
	// claims); ECDSA signatures are randomized, so it was signed once.
	esToken = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImVzMSIsInR5cCI6ImF0K2p3dCJ9." +
		"eyJzdWIiOiJ1c2VyLTEiLCJhdWQiOiJhcHAifQ." +
		"jXmj7U9U_ZsdtNpCEGxOiMdXEPT6totukPO0eFlO9Ls6sDiEoLaa-UdgUjD3_hF7vwd_dEkwMiM2G80fYoggcg"
)

// errUnknownKey is what keyFunc returns for a kid it does not know.
var errUnknownKey = errors.New("unknown key")

var testKeys = sync.OnceValues(func() (map[string]crypto.Signer, error) {
	keys := map[string]crypto.Signer{}
	for kid, file := range map[string]string{"rs1": "rsa2048.pem", "es1": "p256.pem"} {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			return nil, err
		}
		block, _ := pem.Decode(b)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM block", file)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		keys[kid] = k.(crypto.Signer)
	}
	return keys, nil
})

// rsaKey returns the fixed 2048-bit RSA test key.
func rsaKey(tb testing.TB) *rsa.PrivateKey {
	tb.Helper()
	keys, err := testKeys()
	if err != nil {
		tb.Fatal(err)
	}
	return keys["rs1"].(*rsa.PrivateKey)
}

// ecKey returns the fixed P-256 test key.
func ecKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	keys, err := testKeys()
	if err != nil {
		tb.Fatal(err)
	}
	return keys["es1"].(*ecdsa.PrivateKey)
}

// keyFunc returns a key function for Verify that knows kid "rs1" (the RSA
// test key) and "es1" (the P-256 test key), whatever alg is asked for.
func keyFunc(tb testing.TB) func(kid, alg string) (crypto.PublicKey, error) {
	tb.Helper()
	keys := map[string]crypto.PublicKey{"rs1": rsaKey(tb).Public(), "es1": ecKey(tb).Public()}
	return func(kid, alg string) (crypto.PublicKey, error) {
		if k, ok := keys[kid]; ok {
			return k, nil
		}
		return nil, fmt.Errorf("kid %q: %w", kid, errUnknownKey)
	}
}

// fixedKey returns a key function that returns pub for any kid.
func fixedKey(pub crypto.PublicKey) func(kid, alg string) (crypto.PublicKey, error) {
	return func(string, string) (crypto.PublicKey, error) { return pub, nil }
}

// part returns the i-th dot-separated part of token.
func part(token string, i int) string {
	return strings.Split(token, ".")[i]
}

// withPart returns token with its i-th part replaced by s.
func withPart(token string, i int, s string) string {
	parts := strings.Split(token, ".")
	parts[i] = s
	return strings.Join(parts, ".")
}

// b64 encodes s as unpadded base64url.
func b64(s string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// ecdsaTwin returns token, an ES256 token, with its signature (r, s)
// replaced by (r, n-s), which ECDSA verifies just as well.
func ecdsaTwin(token string) string {
	sig, err := base64.RawURLEncoding.DecodeString(part(token, 2))
	if err != nil || len(sig) != 64 {
		panic("not an ES256 signature")
	}
	s := new(big.Int).SetBytes(sig[32:])
	s.Sub(elliptic.P256().Params().N, s)
	twin := append([]byte(nil), sig[:32]...)
	twin = append(twin, s.FillBytes(make([]byte, 32))...)
	return withPart(token, 2, base64.RawURLEncoding.EncodeToString(twin))
}

// opaqueSigner hides the concrete type of a crypto.Signer, as a signer
// backed by a hardware module would.
type opaqueSigner struct{ crypto.Signer }
