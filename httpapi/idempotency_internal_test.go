package httpapi

import (
	"encoding/hex"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestIdempotencyFingerprintGolden pins the fingerprint of one request to
// a value computed elsewhere (openssl dgst -sha256 -hmac KEY over
// "POST /t/:slug/api/v1/users\n" and the body): an HMAC-SHA-256 keyed
// with the API key, as docs/api.md documents, so that a change of its
// message or key shows here, and a stored fingerprint stays what earlier
// versions stored.
func TestIdempotencyFingerprintGolden(t *testing.T) {
	const (
		apiKey = "idk_0123456789abcdef_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
		body   = `{"username":"ada","email":"ada@example.com","fullName":"Ada","password":"analytical engine"}`
		want   = "b2ef60ead8fa343b154933967133b142c0a33287af1c0c9792a17dae322c4f73"
	)
	r := httptest.NewRequest("POST", "/t/acme/api/v1/users", strings.NewReader(body))
	r.Header.Set(idempotencyHeader, "k-1")
	c := &call{r: r, key: apiKey, pattern: basePath + "/users"}
	ir, err := c.idempotent()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c.r.Body); err != nil { // as decodeBody reads it
		t.Fatal(err)
	}
	idem := ir.of()
	if got := hex.EncodeToString(idem.Fingerprint); got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
	if idem.Scope != "0123456789abcdef" || idem.Key != "k-1" {
		t.Errorf("scope %q, key %q; want the API key's id and the header", idem.Scope, idem.Key)
	}
}
