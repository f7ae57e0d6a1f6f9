package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/identitylib/identity/jws"
)

func ExampleSigner() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	var signer jws.Signer // passed as identity.Options.TokenSigner

	token, err := signer.Sign(key, "ES256", "2026-01", "at+jwt", []byte(`{"sub":"user-1"}`))
	if err != nil {
		panic(err)
	}

	typ, payload, err := signer.Verify(token, func(kid, alg string) (crypto.PublicKey, error) {
		if kid != "2026-01" || alg != "ES256" {
			return nil, errors.New("unknown key")
		}
		return key.Public(), nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(typ, string(payload))

	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	_, _, err = signer.Verify(token, func(kid, alg string) (crypto.PublicKey, error) {
		return other.Public(), nil
	})
	fmt.Println(errors.Is(err, jws.ErrInvalid), err)
	// Output:
	// at+jwt {"sub":"user-1"}
	// true jws: invalid token: signature does not verify
}

func ExamplePublicJWK() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	jwk, err := jws.PublicJWK("2026-01", "ES256", key.Public())
	if err != nil {
		panic(err)
	}
	fmt.Println(jwk.KeyID, jwk.Algorithm, jwk.Use, jwk.IsPublic())
	// Output:
	// 2026-01 ES256 sig true
}
