package identity

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// KeyEncryptionKeySize is the size of Options.KeyEncryptionKey: an
// AES-256 key.
const KeyEncryptionKeySize = 32

// The first byte of a stored secret (a signing key's private half, a TOTP
// secret) says how the rest is kept.
const (
	secretPlain  byte = 0 // as it is
	secretSealed byte = 1 // 12-byte nonce, then AES-256-GCM of the secret
)

// Why a stored secret cannot be opened.
var (
	errSealedNoKey    = errors.New("the secret is sealed and Options.KeyEncryptionKey is not set")
	errSealedOtherKey = errors.New("the secret does not open with Options.KeyEncryptionKey (another key sealed it, or it was altered)")
)

// newKEK returns the AEAD of a key-encryption key, nil for none.
func newKEK(key []byte) (cipher.AEAD, error) {
	if key == nil {
		return nil, nil
	}
	if len(key) != KeyEncryptionKeySize {
		return nil, errorf(CodeInvalid, "Options.KeyEncryptionKey must be %d bytes, got %d", KeyEncryptionKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, internal(err)
	}
	return cipher.NewGCM(block)
}

// seal encodes a secret for the store: sealed with AES-256-GCM under the
// key-encryption key when the program supplied one, bound to aad (what
// the secret belongs to) so that a sealed secret cannot be moved to
// another record; plain otherwise.
func (s *Service) seal(aad, secret []byte) ([]byte, error) {
	if s.kek == nil {
		return append([]byte{secretPlain}, secret...), nil
	}
	nonce := make([]byte, s.kek.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{secretSealed}, nonce...)
	return s.kek.Seal(out, nonce, secret, aad), nil
}

// open decodes a secret seal encoded for aad. A secret stored plain opens
// with or without a key-encryption key (it was stored before one was
// supplied).
func (s *Service) open(aad, stored []byte) ([]byte, error) {
	if len(stored) == 0 {
		return nil, errors.New("the stored secret is empty")
	}
	body := stored[1:]
	switch stored[0] {
	case secretPlain:
		return body, nil
	case secretSealed:
		if s.kek == nil {
			return nil, errSealedNoKey
		}
		n := s.kek.NonceSize()
		if len(body) < n {
			return nil, errSealedOtherKey
		}
		plain, err := s.kek.Open(nil, body[:n], body[n:], aad)
		if err != nil {
			return nil, errSealedOtherKey
		}
		return plain, nil
	}
	return nil, fmt.Errorf("unknown secret encoding %d", stored[0])
}
