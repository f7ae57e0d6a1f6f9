package jws_test

import (
	"crypto"
	"testing"

	"github.com/identitylib/identity/jws"
)

// benchClaims is the size and shape of an access token's claims.
const benchClaims = `{"iss":"https://id.example.com/w/acme","sub":"usr_01J8Z5V3K4Q7N2M6P9R1S0T3W5",` +
	`"aud":"app_01J8Z5V3K4Q7N2M6P9R1S0T3W6","exp":1767225600,"iat":1767222000,` +
	`"jti":"tok_01J8Z5V3K4Q7N2M6P9R1S0T3W7","scope":"openid profile email","client_id":"app"}`

func benchKeys(b *testing.B) []struct {
	name, alg, kid string
	key            crypto.Signer
} {
	return []struct {
		name, alg, kid string
		key            crypto.Signer
	}{
		{"RS256", "RS256", "rs1", rsaKey(b)},
		{"ES256", "ES256", "es1", ecKey(b)},
	}
}

func BenchmarkSign(b *testing.B) {
	for _, bk := range benchKeys(b) {
		b.Run(bk.name, func(b *testing.B) {
			var s jws.Signer
			payload := []byte(benchClaims)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Sign(bk.key, bk.alg, bk.kid, "at+jwt", payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	for _, bk := range benchKeys(b) {
		b.Run(bk.name, func(b *testing.B) {
			var s jws.Signer
			token, err := s.Sign(bk.key, bk.alg, bk.kid, "at+jwt", []byte(benchClaims))
			if err != nil {
				b.Fatal(err)
			}
			key := keyFunc(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := s.Verify(token, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
