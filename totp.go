package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The TOTP parameters every authenticator app understands (RFC 6238's
// defaults): HMAC-SHA1, 6 digits, 30-second steps, a 160-bit secret.
const (
	totpPeriod     = 30 // seconds
	totpDigits     = 6
	totpSecretSize = 20 // bytes
	// totpSkew is how many steps before and after the current one are
	// accepted, for clocks that differ and codes typed slowly.
	totpSkew = 1
)

// Recovery codes.
const (
	// RecoveryCodeCount is how many recovery codes an enrolment (or a
	// regeneration) gives.
	RecoveryCodeCount = 10
	// recoveryCodeChars is the length of a recovery code without its
	// hyphen: 10 base32 characters, 50 bits.
	recoveryCodeChars = 10
)

// totpEncoding is the base32 of secrets: what authenticator apps read.
var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// totpStep returns the TOTP time step of t.
func totpStep(t time.Time) int64 { return t.Unix() / totpPeriod }

// totpCode returns the code of the secret for a time step (RFC 6238 over
// RFC 4226's HOTP: HMAC-SHA1 of the step, dynamically truncated to six
// digits).
func totpCode(secret []byte, step int64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	mac := hmac.New(sha1.New, secret)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// matchTOTP returns the time step whose code code is, among the steps
// within totpSkew of now's and later than after (the step of the last code
// accepted: an earlier one, or the same one again, is a replay), and
// whether there is one. Every candidate step is computed and compared in
// constant time, so the answer's timing says nothing of which matched.
func matchTOTP(secret []byte, code string, now time.Time, after int64) (int64, bool) {
	if len(code) != totpDigits || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	var matched int64
	found := false
	cur := totpStep(now)
	for step := cur - totpSkew; step <= cur+totpSkew; step++ {
		want := totpCode(secret, step)
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && step > after && !found {
			matched, found = step, true
		}
	}
	return matched, found
}

// newTOTPSecret returns a fresh random secret.
func newTOTPSecret() ([]byte, error) {
	b := make([]byte, totpSecretSize)
	_, err := rand.Read(b)
	return b, err
}

// TOTPEnrollment is what a user needs to add a TOTP second factor to an
// authenticator app: the secret (or URI) to type, or the URI as a QR code
// to scan (package otpauth draws it).
type TOTPEnrollment struct {
	// Secret is the shared secret in base32 without padding, for manual
	// entry.
	Secret string
	// URI is the otpauth:// URI an app reads from a QR code: issuer the
	// workspace's slug, account the username, SHA1, 6 digits, 30-second
	// period.
	URI string
}

// totpEnrollment makes the TOTPEnrollment of a secret for a user of the
// workspace slug, in the Key URI Format authenticator apps read.
func totpEnrollment(slug, username string, secret []byte) TOTPEnrollment {
	encoded := totpEncoding.EncodeToString(secret)
	u := url.URL{Scheme: "otpauth", Host: "totp", Path: "/" + slug + ":" + username, RawQuery: url.Values{
		"issuer": {slug}, "secret": {encoded}, "algorithm": {"SHA1"},
		"digits": {fmt.Sprint(totpDigits)}, "period": {fmt.Sprint(totpPeriod)},
	}.Encode()}
	return TOTPEnrollment{Secret: encoded, URI: u.String()}
}

// recoveryAlphabet is the alphabet of recovery codes: RFC 4648 base32 in
// lower case, 32 characters, so each is 5 bits (and a random byte modulo
// 32 picks one uniformly). It has no 0, 1 or 8 to mistake for o, l or b.
const recoveryAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// newRecoveryCodes returns RecoveryCodeCount fresh codes as shown to the
// user ("xxxxx-xxxxx") and their hashes as stored.
func newRecoveryCodes() (codes []string, hashes [][]byte, err error) {
	for range RecoveryCodeCount {
		b := make([]byte, recoveryCodeChars)
		if _, err := rand.Read(b); err != nil {
			return nil, nil, err
		}
		for i := range b {
			b[i] = recoveryAlphabet[b[i]%32]
		}
		code := string(b[:5]) + "-" + string(b[5:])
		codes = append(codes, code)
		hashes = append(hashes, hashRecoveryCode(code))
	}
	return codes, hashes, nil
}

// normalizeRecoveryCode is what a typed code is compared as: lower case,
// without hyphens and white space.
func normalizeRecoveryCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			return -1
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return r
	}, code)
}

// hashRecoveryCode is the stored form of a recovery code. A code holds 50
// random bits, so a fast hash suffices: guessing is bounded by the
// lockout, not by the hash's cost.
func hashRecoveryCode(code string) []byte {
	sum := sha256.Sum256([]byte("identity recovery code " + normalizeRecoveryCode(code)))
	return sum[:]
}

// matchRecoveryCode returns the index of the stored hash the code
// matches, or -1. Every hash is compared, in constant time.
func matchRecoveryCode(hashes [][]byte, code string) int {
	if len(code) > 4*recoveryCodeChars {
		return -1
	}
	h := hashRecoveryCode(code)
	found := -1
	for i, stored := range hashes {
		if subtle.ConstantTimeCompare(h, stored) == 1 && found < 0 {
			found = i
		}
	}
	return found
}
