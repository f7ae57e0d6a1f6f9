package jws_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/identitylib/identity/jws"
)

// FuzzVerify checks that Verify never panics and that the only tokens it
// accepts under the fixed test keys are the two literal ones and the ECDSA
// twin of the ES256 one, (r, n-s) for (r, s): a second valid signature that
// ECDSA itself admits and that only the key's holder could have made the
// first of. Any other spelling of those tokens (padding, line breaks, unused
// bits set, another header) must be refused.
func FuzzVerify(f *testing.F) {
	esTwin := ecdsaTwin(esToken)
	for _, seed := range []string{
		rsToken,
		esToken,
		esTwin,
		withPart(rsToken, 2, "D"+part(rsToken, 2)[1:]),
		withPart(esToken, 1, b64(`{"sub":"admin","aud":"app"}`)),
		withPart(withPart(rsToken, 0, b64(`{"alg":"none","kid":"rs1","typ":"at+jwt"}`)), 2, ""),
		withPart(rsToken, 0, b64(`{"alg":"HS256","kid":"rs1","typ":"at+jwt"}`)),
		withPart(esToken, 0, b64(`{"alg":"RS256","kid":"es1","typ":"at+jwt"}`)),
		withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"rs1","b64":false,"crit":["b64"]}`)),
		withPart(rsToken, 0, b64(`{"alg":"RS256","kid":"nope","typ":1}`)),
		`{"protected":"` + part(rsToken, 0) + `","payload":"` + part(rsToken, 1) + `","signature":"` + part(rsToken, 2) + `"}`,
		strings.ReplaceAll(esToken, ".", ""),
		esToken + "=",
		esToken[:60] + "\n" + esToken[60:],
		"..",
		"",
	} {
		f.Add(seed)
	}
	accepted := map[string]bool{rsToken: true, esToken: true, esTwin: true}

	f.Fuzz(func(t *testing.T, token string) {
		typ, payload, err := jws.Signer{}.Verify(token, keyFunc(t))
		if err != nil {
			if !errors.Is(err, jws.ErrInvalid) && !errors.Is(err, errUnknownKey) {
				t.Errorf("Verify(%q) = %v, want ErrInvalid or the key function's error", token, err)
			}
			if typ != "" || payload != nil {
				t.Errorf("Verify(%q) refused the token but gave typ %q, payload %q", token, typ, payload)
			}
			return
		}
		if !accepted[token] {
			t.Fatalf("Verify accepted %q, which was never signed", token)
		}
		if typ != "at+jwt" || string(payload) != claims {
			t.Errorf("Verify(%q) = typ %q, payload %q; want %q, %q", token, typ, payload, "at+jwt", claims)
		}
	})
}
