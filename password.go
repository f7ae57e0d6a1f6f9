package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"crypto/pbkdf2"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// Argon2Params are the argon2id parameters for new password hashes. Every
// encoded hash carries its own parameters, so raising them later only
// affects new hashes and the rehash that follows a user's next login.
type Argon2Params struct {
	// Memory in KiB.
	Memory uint32
	// Time is the number of passes.
	Time uint32
	// Threads is the degree of parallelism.
	Threads uint8
}

// DefaultArgon2Params are OWASP's recommended argon2id parameters:
// m=19 MiB, t=2, p=1.
var DefaultArgon2Params = Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1}

// Bounds on the cost parameters of a hash, for new hashes and for imported
// ones alike: a stored hash must never make one login take minutes.
const (
	maxArgon2Memory    = 1 << 20 // KiB: 1 GiB
	maxArgon2Time      = 64
	maxBcryptCost      = 16
	maxPBKDF2Iteration = 5_000_000
	argon2SaltLen      = 16
	argon2KeyLen       = 32
)

func (a Argon2Params) validate() error {
	var p problems
	if a.Memory < 8*uint32(max(a.Threads, 1)) || a.Memory > maxArgon2Memory {
		p.add("memory", RuleRange, "must be between 8*threads and %d KiB", maxArgon2Memory)
	}
	if a.Time < 1 || a.Time > maxArgon2Time {
		p.add("time", RuleRange, "must be between 1 and %d", maxArgon2Time)
	}
	if a.Threads < 1 {
		p.add("threads", RuleRange, "must be at least 1")
	}
	return p.err("invalid argon2id parameters")
}

// hashPassword returns the PHC string of an argon2id hash of password:
// $argon2id$v=19$m=...,t=...,p=...$salt$hash (unpadded standard base64).
func hashPassword(password string, a Argon2Params) (string, error) {
	salt := make([]byte, argon2SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, a.Time, a.Memory, a.Threads, argon2KeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, a.Memory, a.Time, a.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// newPasswordHash returns a hash of password by hashPassword at the
// Service's parameters, computed within the hashing budget. Once the
// budget has room, and before hashing, it calls check (unless nil) and
// returns its error as it is: the caller refuses there what would be
// refused anyway, without paying for the hash. It returns ctx.Err() as it
// is when ctx ends while waiting, and an internal error when the hash
// cannot be computed.
func (s *Service) newPasswordHash(ctx context.Context, password string, check func() error) (string, error) {
	var encoded string
	var checkErr, hashErr error
	err := s.hashing(ctx, argon2Cost(s.argon2), func() bool {
		if check != nil {
			checkErr = check()
		}
		return checkErr == nil
	}, func() {
		encoded, hashErr = hashPassword(password, s.argon2)
	})
	switch {
	case err != nil:
		return "", err
	case checkErr != nil:
		return "", checkErr
	case hashErr != nil:
		return "", &Error{Code: CodeInternal, Message: "internal error", Err: hashErr}
	}
	return encoded, nil
}

// passwordMatches reports whether password matches h, verified within the
// hashing budget. It returns ctx.Err() as it is when ctx ends while
// waiting.
func (s *Service) passwordMatches(ctx context.Context, h passwordHash, password string) (bool, error) {
	var ok bool
	err := s.hashing(ctx, h.cost(), nil, func() { ok = h.matches(password) })
	return ok, err
}

// passwordHash is a parsed encoded hash that can check a password.
type passwordHash interface {
	// matches reports whether password produces this hash. Callers go
	// through Service.passwordMatches, which keeps to the hashing budget.
	matches(password string) bool
	// current reports whether the hash is argon2id with exactly params a,
	// so that no rehash is due.
	current(a Argon2Params) bool
	// cost is the memory, in bytes, that matches needs.
	cost() int64
}

var errHashFormat = errors.New("unrecognised password hash encoding")

// parsePasswordHash recognises the encodings the library verifies:
//   - argon2id PHC strings: $argon2id$v=19$m=M,t=T,p=P$salt$hash
//   - bcrypt: $2a$, $2b$, $2y$ (cost at most 16)
//   - PBKDF2 in PHC/passlib form: $pbkdf2-sha256$i=N,l=L$salt$hash or
//     $pbkdf2-sha256$N$salt$hash (also -sha1, -sha512; base64 with '.' for '+')
//   - PBKDF2 in Django form: pbkdf2_sha256$N$salt$hash (also pbkdf2_sha1)
func parsePasswordHash(encoded string) (passwordHash, error) {
	switch {
	case strings.HasPrefix(encoded, "$argon2id$"):
		return parseArgon2(encoded)
	case strings.HasPrefix(encoded, "$2a$"), strings.HasPrefix(encoded, "$2b$"), strings.HasPrefix(encoded, "$2y$"):
		return parseBcrypt(encoded)
	case strings.HasPrefix(encoded, "$pbkdf2"):
		return parsePHCPBKDF2(encoded)
	case strings.HasPrefix(encoded, "pbkdf2_"):
		return parseDjangoPBKDF2(encoded)
	}
	return nil, errHashFormat
}

type argon2Hash struct {
	params    Argon2Params
	salt, key []byte
}

func parseArgon2(encoded string) (passwordHash, error) {
	parts := strings.Split(encoded, "$") // "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	if len(parts) != 6 || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return nil, fmt.Errorf("argon2id: %w", errHashFormat)
	}
	var h argon2Hash
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.params.Memory, &h.params.Time, &threads); err != nil {
		return nil, fmt.Errorf("argon2id parameters: %w", errHashFormat)
	}
	if threads > 255 {
		return nil, fmt.Errorf("argon2id parallelism: %w", errHashFormat)
	}
	h.params.Threads = uint8(threads)
	if err := h.params.validate(); err != nil {
		return nil, fmt.Errorf("argon2id parameters out of bounds: %w", errHashFormat)
	}
	var err1, err2 error
	h.salt, err1 = base64.RawStdEncoding.DecodeString(parts[4])
	h.key, err2 = base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(h.salt) < 8 || len(h.key) < 16 || len(h.key) > 128 {
		return nil, fmt.Errorf("argon2id salt or key: %w", errHashFormat)
	}
	return h, nil
}

func (h argon2Hash) matches(password string) bool {
	got := argon2.IDKey([]byte(password), h.salt, h.params.Time, h.params.Memory, h.params.Threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

func (h argon2Hash) cost() int64 { return argon2Cost(h.params) }

func (h argon2Hash) current(a Argon2Params) bool {
	return h.params == a && len(h.key) == argon2KeyLen && len(h.salt) == argon2SaltLen
}

type bcryptHash []byte

func parseBcrypt(encoded string) (passwordHash, error) {
	cost, err := bcrypt.Cost([]byte(encoded))
	if err != nil || cost > maxBcryptCost || len(encoded) != 60 {
		return nil, fmt.Errorf("bcrypt: %w", errHashFormat)
	}
	return bcryptHash(encoded), nil
}

func (h bcryptHash) matches(password string) bool {
	return bcrypt.CompareHashAndPassword(h, []byte(password)) == nil
}

func (bcryptHash) current(Argon2Params) bool { return false }

func (bcryptHash) cost() int64 { return bcryptHashCost }

type pbkdf2Hash struct {
	newHash   func() hash.Hash
	iter      int
	salt, key []byte
}

func (h pbkdf2Hash) matches(password string) bool {
	got, err := pbkdf2.Key(h.newHash, password, h.salt, h.iter, len(h.key))
	return err == nil && subtle.ConstantTimeCompare(got, h.key) == 1
}

func (pbkdf2Hash) current(Argon2Params) bool { return false }

func (pbkdf2Hash) cost() int64 { return pbkdf2HashCost }

func pbkdf2Digest(name string) func() hash.Hash {
	switch name {
	case "sha1":
		return sha1.New
	case "sha256":
		return sha256.New
	case "sha512":
		return sha512.New
	}
	return nil
}

// parsePHCPBKDF2 reads $pbkdf2-<digest>$<i=N[,l=L] | N>$<salt>$<hash>, with
// salt and hash in standard base64, unpadded, where passlib writes '.' for '+'.
func parsePHCPBKDF2(encoded string) (passwordHash, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 5 {
		return nil, fmt.Errorf("pbkdf2: %w", errHashFormat)
	}
	digest := strings.TrimPrefix(parts[1], "pbkdf2-")
	if parts[1] == "pbkdf2" {
		digest = "sha1" // passlib's $pbkdf2$ is PBKDF2-HMAC-SHA1
	}
	h := pbkdf2Hash{newHash: pbkdf2Digest(digest)}
	iterText := parts[2]
	if strings.HasPrefix(iterText, "i=") {
		iterText, _, _ = strings.Cut(strings.TrimPrefix(iterText, "i="), ",")
	}
	iter, err := strconv.Atoi(iterText)
	if h.newHash == nil || err != nil {
		return nil, fmt.Errorf("pbkdf2 digest or iterations: %w", errHashFormat)
	}
	h.iter = iter
	decode := func(s string) ([]byte, error) {
		return base64.RawStdEncoding.DecodeString(strings.ReplaceAll(strings.TrimRight(s, "="), ".", "+"))
	}
	var err1, err2 error
	h.salt, err1 = decode(parts[3])
	h.key, err2 = decode(parts[4])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pbkdf2 salt or hash: %w", errHashFormat)
	}
	return h.checked()
}

// parseDjangoPBKDF2 reads Django's pbkdf2_<digest>$N$salt$hash, where the
// salt is used as its literal bytes and the hash is padded standard base64.
func parseDjangoPBKDF2(encoded string) (passwordHash, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 4 {
		return nil, fmt.Errorf("pbkdf2: %w", errHashFormat)
	}
	h := pbkdf2Hash{newHash: pbkdf2Digest(strings.TrimPrefix(parts[0], "pbkdf2_")), salt: []byte(parts[2])}
	iter, err := strconv.Atoi(parts[1])
	key, err2 := base64.StdEncoding.DecodeString(parts[3])
	if h.newHash == nil || err != nil || err2 != nil {
		return nil, fmt.Errorf("pbkdf2: %w", errHashFormat)
	}
	h.iter, h.key = iter, key
	return h.checked()
}

func (h pbkdf2Hash) checked() (passwordHash, error) {
	if h.iter < 1 || h.iter > maxPBKDF2Iteration || len(h.salt) == 0 || len(h.key) < 16 || len(h.key) > 128 {
		return nil, fmt.Errorf("pbkdf2 parameters out of bounds: %w", errHashFormat)
	}
	return h, nil
}
