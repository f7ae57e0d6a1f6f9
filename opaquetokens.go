package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Tokens (API keys and session tokens) read prefix + 16 hex digits of a
// public id + "_" + 43 characters of unpadded base64url holding 32 random
// bytes. Only a SHA-256 of the secret part is stored: a slow hash adds
// nothing to 256 random bits, and lookups stay cheap.
const (
	tokenIDLen     = 16
	tokenSecretLen = 43
)

// newToken returns a fresh id, secret and the token that joins them.
func newToken(prefix string) (id, secret, token string, err error) {
	idBytes, secretBytes := make([]byte, tokenIDLen/2), make([]byte, 32)
	if _, err := rand.Read(idBytes); err != nil {
		return "", "", "", err
	}
	if _, err := rand.Read(secretBytes); err != nil {
		return "", "", "", err
	}
	id = hex.EncodeToString(idBytes)
	secret = base64.RawURLEncoding.EncodeToString(secretBytes)
	return id, secret, prefix + id + "_" + secret, nil
}

// parseToken splits a token of the given prefix, or reports false for
// anything malformed.
func parseToken(prefix, token string) (id, secret string, ok bool) {
	if len(token) != len(prefix)+tokenIDLen+1+tokenSecretLen || !strings.HasPrefix(token, prefix) ||
		token[len(prefix)+tokenIDLen] != '_' {
		return "", "", false
	}
	id = token[len(prefix) : len(prefix)+tokenIDLen]
	secret = token[len(prefix)+tokenIDLen+1:]
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", "", false
	}
	if b, err := base64.RawURLEncoding.DecodeString(secret); err != nil || len(b) != 32 {
		return "", "", false
	}
	return id, secret, true
}

func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// secretMatches compares a presented secret with a stored hash in
// constant time.
func secretMatches(secret string, hash []byte) bool {
	return subtle.ConstantTimeCompare(hashSecret(secret), hash) == 1
}
