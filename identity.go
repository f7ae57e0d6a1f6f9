package identity

import (
	"context"
	"crypto/cipher"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// Options configure a Service. A nil *Options means every default.
type Options struct {
	// Now returns the current time. Default: time.Now. Tests set a fake
	// clock here.
	Now func() time.Time
	// PasswordHashing sets the argon2id parameters of new password hashes.
	// Default: DefaultArgon2Params (OWASP: m=19 MiB, t=2, p=1). Tests may
	// lower them to run fast; production should not.
	PasswordHashing *Argon2Params
	// PasswordHashingBudget bounds the memory, in bytes, that password
	// hashes and verifications (argon2id, and bcrypt and PBKDF2 of
	// imported hashes) use at once across the Service: argon2id costs its
	// memory parameter, bcrypt and PBKDF2 16 KiB. A call whose hash does
	// not fit waits, in arrival order, until it does or its context ends
	// (and then returns the context's error); a hash costlier than the
	// whole budget runs alone. Zero means DefaultPasswordHashingBudget
	// (256 MiB); negative is invalid. The budget counts a hash's memory
	// while it runs; afterwards that memory is garbage until the
	// collector reclaims it, so a program that must stay near its
	// baseline + the budget also sets a soft memory limit (GOMEMLIMIT or
	// runtime/debug.SetMemoryLimit; identityd serve does).
	PasswordHashingBudget int64
	// AllowPrivateWebhooks turns the SSRF guard off: webhook URLs may then
	// name localhost, loopback, private, link-local and other non-public
	// addresses. For local testing only. Default: false (guard on).
	AllowPrivateWebhooks bool
	// SessionLifetime is how long a session started by Login or
	// CreateSession lasts. Default: DefaultSessionLifetime (24 h).
	SessionLifetime time.Duration
	// IdempotencyLifetime is how long the outcome of a request made with
	// an idempotency key is kept for its retries. Default:
	// DefaultIdempotencyLifetime (24 h).
	IdempotencyLifetime time.Duration

	// IssuerBase is the base URL of the workspaces' token issuers: the
	// workspace with slug S issues tokens as IssuerBase + "/t/" + S.
	// https, or http only for localhost or a loopback address (local
	// development); no query or fragment. Default: none, and then the
	// token methods (IssueTokens, VerifyAccessToken and the OpenID
	// Provider's) return CodeInternal.
	IssuerBase string
	// TokenSigner signs and verifies tokens; package jws provides one
	// (jws.Signer{}). Default: none, and then the token methods return
	// CodeInternal.
	TokenSigner TokenSigner
	// PasskeyCeremony runs the WebAuthn ceremony of passkeys; package
	// webauthn provides one (webauthn.New()). The relying party is the
	// host of IssuerBase, its origin the one allowed. Default: none, and
	// then the passkey methods return CodeInternal.
	PasskeyCeremony PasskeyCeremony
	// PasskeyOrigins are origins allowed besides IssuerBase's for passkey
	// responses (scheme://host[:port], no path): the pages served on
	// another host under the same registrable domain as the RP id, or
	// listed in the RP id host's /.well-known/webauthn (WebAuthn related
	// origins). Default: none.
	PasskeyOrigins []string
	// SigningAlgorithm is the algorithm of new signing keys: RS256 or
	// ES256. Default: RS256.
	SigningAlgorithm string
	// KeyRotationPeriod is how long a signing key signs before the next
	// one takes over. Default: DefaultKeyRotationPeriod (30 days).
	KeyRotationPeriod time.Duration
	// KeyEncryptionKey, when set, is a 32-byte AES-256 key that seals
	// every signing key's private half before it is stored (AES-GCM,
	// bound to the workspace and key id). Keep it outside the database.
	// Default: none; private keys are then stored as they are, protected
	// only by who may read the database.
	KeyEncryptionKey []byte
	// TokenLifetimes sets how long tokens live. A nil pointer or a zero
	// field means its default.
	TokenLifetimes *TokenLifetimes

	// KeyCacheTTL bounds how long Authorize and VerifyAPIKey trust an API
	// key they verified before without reading the store again (the
	// presented secret is still checked against the key's hash each
	// time). A key revoked through this Service (RevokeAPIKey,
	// DeleteWorkspace) is refused by the next call whatever the TTL; the
	// TTL bounds how long a key revoked by another process sharing the
	// store (PostgreSQL) may still be accepted here. Zero means the
	// default, which the store decides: KeyCacheNoExpiry over a store that
	// alone changes its data (store.Exclusive: a bbolt file, which one
	// process holds at a time), no caching over any other store. Negative
	// turns the cache off.
	KeyCacheTTL time.Duration

	// TrustedProxies are the addresses of the reverse proxies in front of
	// the program: a request from one of them is taken to come from the
	// address it forwarded (Forwarded or X-Forwarded-For), which throttling
	// counts and sessions record (see package requestinfo). Default: none,
	// and every request comes from its connection's peer.
	TrustedProxies []netip.Prefix
	// Limiter keeps the throttle's counts (see ThrottlePolicy). Default:
	// one in the process's memory, on the Service's clock, exact within
	// the process, holding at most 200,000 keys (an address or a login
	// counted past that, while every key held is live, goes uncounted
	// rather than push out the counts under attack).
	Limiter Limiter

	// AuditSink, when set, is given every audit record once it has
	// committed, to stream the trail elsewhere (identityd serve
	// -audit-log). Default: none.
	AuditSink AuditSink

	// Observer, when set, is told of the Service's store transactions,
	// sign-ins, locks and waits for the hashing budget (package metrics
	// implements it). Default: none, which costs nothing.
	Observer Observer
}

// Service manages many workspaces over one Store. It is safe for
// concurrent use.
type Service struct {
	store                store.Store
	now                  func() time.Time
	argon2               Argon2Params
	allowPrivateWebhooks bool
	sessionLifetime      time.Duration
	idempotencyLifetime  time.Duration

	// Tokens: see Options.
	issuerBase        string
	tokenSigner       TokenSigner
	passkeys          PasskeyCeremony
	passkeyOrigins    []string
	signingAlgorithm  string
	keyRotationPeriod time.Duration
	kek               cipher.AEAD
	lifetimes         TokenLifetimes
	signers           signerCache
	publicKeys        sync.Map // signerKey -> crypto.PublicKey

	// watchers are told of queued jobs and deleted endpoints (see
	// WatchQueue).
	watchers watchers

	// dummyHash is verified against when a login names no user, so that an
	// unknown username costs as much time as a wrong password.
	dummyOnce sync.Once
	dummyHash passwordHash

	// hashBudget bounds the memory of the password hashes running at once
	// (Options.PasswordHashingBudget); hashHook, set only by tests,
	// observes each hash while it holds its share (see hashing).
	hashBudget *hashBudget
	hashHook   func(cost int64) (done func())

	// keys caches verified API keys (see Options.KeyCacheTTL).
	keys keyCache

	// trustedProxies and limiter: see Options. floor is the refusal
	// floor of sign-ins (see refusalfloor.go).
	trustedProxies []netip.Prefix
	limiter        Limiter
	floor          refusalFloor

	// observer is Options.Observer, or nil; store is then wrapped to
	// report its transactions (see observed).
	observer Observer
}

// New returns a Service over st. Close closes st.
func New(st store.Store, opts *Options) (*Service, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{
		store:                observed(st, opts.Observer, opts.AuditSink),
		now:                  opts.Now,
		argon2:               DefaultArgon2Params,
		allowPrivateWebhooks: opts.AllowPrivateWebhooks,
		observer:             opts.Observer,
	}
	s.keys.ttl = keyCacheTTL(st, opts.KeyCacheTTL)
	if s.now == nil {
		s.now = time.Now
	}
	s.floor.now = time.Now // real time: the floor measures the machine
	if err := checkTrustedProxies(opts.TrustedProxies); err != nil {
		return nil, err
	}
	s.trustedProxies = slices.Clone(opts.TrustedProxies)
	s.limiter = opts.Limiter
	if s.limiter == nil {
		s.limiter = newMemoryLimiter(s.now)
	}
	s.sessionLifetime = opts.SessionLifetime
	if s.sessionLifetime <= 0 {
		s.sessionLifetime = DefaultSessionLifetime
	}
	s.idempotencyLifetime = opts.IdempotencyLifetime
	if s.idempotencyLifetime <= 0 {
		s.idempotencyLifetime = DefaultIdempotencyLifetime
	}
	if err := s.setTokenOptions(opts); err != nil {
		return nil, err
	}
	if opts.PasswordHashing != nil {
		if err := opts.PasswordHashing.validate(); err != nil {
			return nil, err
		}
		s.argon2 = *opts.PasswordHashing
	}
	switch budget := opts.PasswordHashingBudget; {
	case budget < 0:
		var p problems
		p.add("PasswordHashingBudget", RuleRange, "must not be negative")
		return nil, p.err("invalid Options.PasswordHashingBudget")
	case budget == 0:
		s.hashBudget = newHashBudget(DefaultPasswordHashingBudget)
	default:
		s.hashBudget = newHashBudget(budget)
	}
	return s, nil
}

// Open returns a Service over the bbolt file at path, created if needed:
// the one-call default. One process at a time may hold the file. Close
// closes it.
//
// For PostgreSQL, which several processes may share, open the store with
// package pgstore and pass it to New:
//
//	st, err := pgstore.Open(ctx, "postgres://...", nil)
//	svc, err := identity.New(st, nil)
func Open(path string, opts *Options) (*Service, error) {
	if isPostgresURL(path) {
		return nil, errorf(CodeInvalid, "Open takes a bbolt file; open a PostgreSQL database with pgstore.Open and pass the store to New")
	}
	var now func() time.Time // the Service's clock dates an upgrade's records
	if opts != nil {
		now = opts.Now
	}
	st, err := boltstore.Open(path, &boltstore.Options{Now: now})
	if err != nil {
		return nil, err
	}
	s, err := New(st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// isPostgresURL reports whether path is a PostgreSQL connection URL, which
// Open refuses rather than create a file of that name.
func isPostgresURL(path string) bool {
	return strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://")
}

// Close closes the underlying store.
func (s *Service) Close() error { return s.store.Close() }

// AllowsPrivateWebhooks reports whether the SSRF guard is off
// (Options.AllowPrivateWebhooks), so that a dispatcher dials what the
// Service let through.
func (s *Service) AllowsPrivateWebhooks() bool { return s.allowPrivateWebhooks }

// PasswordHashing returns the argon2id parameters the Service uses for new
// password hashes.
func (s *Service) PasswordHashing() Argon2Params { return s.argon2 }

// Now returns the time by the Service's clock (Options.Now), for adapters
// whose answers must agree with the Service (how long a token or a
// session has left).
func (s *Service) Now() time.Time { return s.now() }

// timestamp returns the current time as stores keep it: UTC, microseconds.
func (s *Service) timestamp() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// Workspace is a handle on one workspace. It holds no state of its own
// beyond the slug, so handles are cheap and may be kept for the life of the
// Service.
type Workspace struct {
	svc       *Service
	slug      string
	createdAt time.Time
}

// Slug returns the workspace's slug.
func (w *Workspace) Slug() string { return w.slug }

// CreatedAt returns when the workspace was created.
func (w *Workspace) CreatedAt() time.Time { return w.createdAt }

func (w *Workspace) view(ctx context.Context, fn func(store.Tx) error) error {
	return w.svc.store.View(ctx, fn)
}

// update runs fn in a read-write transaction. After a commit it wakes the
// Service's queue watchers, since fn may have queued jobs (waking costs a
// non-blocking send; a dispatcher also polls).
//
// An error of fn rolls the transaction back and is returned, unless it is
// a refusal (see refuse): then the transaction commits what fn wrote and
// the refusal's error is returned.
func (w *Workspace) update(ctx context.Context, fn func(store.Tx) error) error {
	var refused error
	err := w.svc.store.Update(ctx, func(tx store.Tx) error {
		refused = nil // a store may run fn again
		err := fn(tx)
		if r, ok := errors.AsType[*refusal](err); ok {
			refused = r.err
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	w.svc.jobsQueued()
	return refused
}

// refusal is the error of a transaction that refuses its caller but must
// keep what it wrote before refusing: the revocation of a grant whose
// code or refresh token came back, a failed attempt counted toward the
// lockout, a login.failed event. It is the one way to say so: return
// refuse(err) from the function update runs.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }

// refuse returns err as a refusal that commits (see refusal); nil for nil.
func refuse(err error) error {
	if err == nil {
		return nil
	}
	return &refusal{err: err}
}

// isRefusal reports whether err is a refusal that commits.
func isRefusal(err error) bool {
	_, ok := errors.AsType[*refusal](err)
	return ok
}

// CreateWorkspace creates a workspace. The slug has 1-63 characters of
// lowercase letters, digits and hyphens and starts and ends with a letter or
// digit. A nil settings means DefaultSettings. A taken slug is a conflict.
func (s *Service) CreateWorkspace(ctx context.Context, slug string, settings *Settings) (*Workspace, error) {
	if err := CheckSlug(slug); err != nil {
		return nil, err
	}
	set := DefaultSettings()
	if settings != nil {
		set = *settings
	}
	if err := s.checkSettings(set); err != nil {
		return nil, err
	}
	encoded, err := set.encode()
	if err != nil {
		return nil, err
	}
	rec := store.Workspace{Slug: slug, CreatedAt: s.timestamp(), Settings: encoded}
	w := &Workspace{svc: s, slug: slug, createdAt: rec.CreatedAt}
	err = s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Workspace(slug); err == nil {
			return errorf(CodeConflict, "workspace %q already exists", slug)
		} else if !isNotFound(err) {
			return err
		}
		if err := tx.PutWorkspace(rec); err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{
			action: AuditWorkspaceCreated, target: AuditTarget{Kind: TargetWorkspace, ID: slug, Display: slug},
		})
	})
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return w, nil
}

// GetWorkspace returns the workspace with the slug, or a not-found error.
func (s *Service) GetWorkspace(ctx context.Context, slug string) (*Workspace, error) {
	var rec store.Workspace
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		rec, err = tx.Workspace(slug)
		return err
	})
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return &Workspace{svc: s, slug: rec.Slug, createdAt: rec.CreatedAt}, nil
}

// ListWorkspaces returns every workspace in ascending slug order.
func (s *Service) ListWorkspaces(ctx context.Context) ([]*Workspace, error) {
	var recs []store.Workspace
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		recs, err = tx.Workspaces()
		return err
	})
	if err != nil {
		return nil, fromStore(err, "workspace")
	}
	return mapAll(recs, func(r store.Workspace) *Workspace {
		return &Workspace{svc: s, slug: r.Slug, createdAt: r.CreatedAt}
	}), nil
}

// CheckSlug reports whether slug is a valid workspace slug: 1-63
// characters of lowercase letters, digits and hyphens, starting and ending
// with a letter or digit. It returns nil or a CodeInvalid *Error whose
// Fields name the broken rule, the error CreateWorkspace returns for the
// slug. Programs call it to refuse a slug before they open a store.
func CheckSlug(slug string) error {
	var p problems
	if checkText(&p, "slug", slug, 1, 63) && !validSlug(slug) {
		p.add("slug", RulePattern, "must be lowercase letters, digits and hyphens, starting and ending with a letter or digit")
	}
	return p.err("invalid workspace slug")
}

func validSlug(slug string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(slug); i++ {
		if !alnum(slug[i]) && slug[i] != '-' {
			return false
		}
	}
	return alnum(slug[0]) && alnum(slug[len(slug)-1])
}

// mapAll maps stored records to the domain values they are read as: the
// one loop behind every listing. The result is never nil, so that empty
// lists encode as [].
func mapAll[R, T any](recs []R, fn func(R) T) []T {
	out := make([]T, len(recs))
	for i, r := range recs {
		out[i] = fn(r)
	}
	return out
}
