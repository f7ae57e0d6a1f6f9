package identity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/identitylib/identity/store"
)

// Signing algorithms of the tokens a workspace issues.
const (
	// RS256 is RSASSA-PKCS1-v1_5 with SHA-256 over a 2048-bit key: the
	// algorithm every OpenID Connect client must accept, and the default.
	RS256 = "RS256"
	// ES256 is ECDSA over P-256 with SHA-256: smaller keys and tokens,
	// faster to sign.
	ES256 = "ES256"
)

// DefaultKeyRotationPeriod is how long a signing key signs before the
// next one takes over, when Options.KeyRotationPeriod is zero.
const DefaultKeyRotationPeriod = 30 * 24 * time.Hour

// KeyState is where a signing key is in its life.
type KeyState string

// The states of a signing key, in the order a key goes through them.
// Every state is published (in the JWKS), so a key is known to clients
// before it signs and stays known while a token it signed lives.
const (
	// KeyNext: published, signs nothing yet; becomes active at the next
	// rotation.
	KeyNext KeyState = "next"
	// KeyActive: signs every token the workspace issues. A workspace has
	// one active key.
	KeyActive KeyState = "active"
	// KeyRetired: signs nothing; published until RemoveAt, when every
	// token it signed has expired.
	KeyRetired KeyState = "retired"
)

// SigningKey is a workspace's token signing key as a program may see it:
// the public half only. The private key never leaves the store through
// any method.
type SigningKey struct {
	// ID is the key id, the "kid" of the tokens it signs: 16 hex digits.
	ID        string   `json:"id"`
	Algorithm string   `json:"algorithm"`
	State     KeyState `json:"state"`
	// PublicKey is an *rsa.PublicKey or an *ecdsa.PublicKey.
	PublicKey   crypto.PublicKey `json:"-"`
	CreatedAt   time.Time        `json:"createdAt"`
	ActivatedAt *time.Time       `json:"activatedAt"`
	RetiredAt   *time.Time       `json:"retiredAt"`
	// RemoveAt is when a retired key stops being published.
	RemoveAt *time.Time `json:"removeAt"`
}

func signingKeyFromRecord(r store.SigningKey) (SigningKey, error) {
	pub, err := x509.ParsePKIXPublicKey(r.PublicKey)
	if err != nil {
		return SigningKey{}, fmt.Errorf("signing key %s: public key: %w", r.ID, err)
	}
	return SigningKey{
		ID: r.ID, Algorithm: r.Algorithm, State: KeyState(r.State), PublicKey: pub, CreatedAt: r.CreatedAt,
		ActivatedAt: timePtr(r.ActivatedAt), RetiredAt: timePtr(r.RetiredAt), RemoveAt: timePtr(r.RemoveAt),
	}, nil
}

// timePtr returns nil for the zero time, else a pointer to a copy.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// published reports whether a key belongs in the JWKS at now.
func published(k store.SigningKey, now time.Time) bool {
	return KeyState(k.State) != KeyRetired || now.Before(k.RemoveAt)
}

// ListSigningKeys returns the workspace's published signing keys (next,
// active, and retired ones whose tokens may still live), the content of
// its JWKS, oldest first. A workspace without keys gets its first ones
// here: an active key and the next one.
func (w *Workspace) ListSigningKeys(ctx context.Context) ([]SigningKey, error) {
	recs, err := w.keyring(ctx)
	if err != nil {
		return nil, err
	}
	now := w.svc.timestamp()
	keys := []SigningKey{}
	for _, r := range recs {
		if !published(r, now) {
			continue
		}
		k, err := signingKeyFromRecord(r)
		if err != nil {
			return nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// RotateSigningKey rotates the workspace's keys at once: the next key
// (published since the previous rotation) becomes active, the active key
// retires and stays published until every token it signed has expired,
// and a new next key is made with the Service's algorithm. It returns the
// key that is now active. Keys also rotate by themselves when the active
// one has signed for Options.KeyRotationPeriod.
func (w *Workspace) RotateSigningKey(ctx context.Context) (SigningKey, error) {
	fresh, spare, err := w.svc.newSigningKeys()
	if err != nil {
		return SigningKey{}, err
	}
	var active store.SigningKey
	err = w.update(ctx, func(tx store.Tx) error {
		keys, err := tx.SigningKeys(w.slug)
		if err != nil {
			return err
		}
		if keys, err = w.rotateKeys(ctx, tx, keys, fresh, spare, w.svc.timestamp(), nil); err != nil {
			return err
		}
		active, _ = findKey(keys, KeyActive)
		return nil
	})
	if err != nil {
		return SigningKey{}, fromStore(err, "workspace")
	}
	k, err := signingKeyFromRecord(active)
	if err != nil {
		return SigningKey{}, internal(err)
	}
	return k, nil
}

// keyring returns the workspace's keys with an active and a next key,
// making the first ones, rotating a key that is due, and removing retired
// keys past their RemoveAt. It writes only when one of those is needed, so
// issuing a token is normally a read.
func (w *Workspace) keyring(ctx context.Context) ([]store.SigningKey, error) {
	// A second round is needed only when the keys changed between the
	// read and the write (another process rotated or pruned them) in a
	// way that leaves this one without the keys it should have made.
	for range 3 {
		keys, done, err := w.keyringRound(ctx)
		if err != nil || done {
			return keys, err
		}
	}
	return nil, errorf(CodeInternal, "workspace %q has no active signing key", w.slug)
}

// keyringRound is one read, and if needed one write, of keyring. done is
// false when the keys still lack an active one.
func (w *Workspace) keyringRound(ctx context.Context) (keys []store.SigningKey, done bool, err error) {
	err = w.view(ctx, func(tx store.Tx) (err error) {
		keys, err = tx.SigningKeys(w.slug)
		return err
	})
	if err != nil {
		return nil, false, fromStore(err, "workspace")
	}
	if !w.svc.keysNeedWork(keys, w.svc.timestamp()) {
		return keys, true, nil
	}
	// Keys are made before the transaction: an RSA key takes a while, and
	// a write transaction should not wait for it.
	var fresh, spare store.SigningKey
	if w.svc.rotationNeeded(keys, w.svc.timestamp()) {
		if fresh, spare, err = w.svc.newSigningKeys(); err != nil {
			return nil, false, err
		}
	}
	err = w.update(ctx, func(tx store.Tx) error {
		keys, err = tx.SigningKeys(w.slug)
		if err != nil {
			return err
		}
		now := w.svc.timestamp()
		if w.svc.rotationNeeded(keys, now) && fresh.ID != "" {
			// Made on the way, by the library: the system's work,
			// whoever's call needed the keys.
			if keys, err = w.rotateKeys(ctx, tx, keys, fresh, spare, now, &Actor{Kind: ActorSystem}); err != nil {
				return err
			}
		}
		keys, err = w.pruneKeys(tx, keys, now)
		return err
	})
	if err != nil {
		return nil, false, fromStore(err, "workspace")
	}
	_, done = findKey(keys, KeyActive)
	return keys, done, nil
}

// keysNeedWork reports whether keyring must write: keys to make or
// rotate, or a retired key to remove.
func (s *Service) keysNeedWork(keys []store.SigningKey, now time.Time) bool {
	return s.rotationNeeded(keys, now) || slices.ContainsFunc(keys, func(k store.SigningKey) bool { return !published(k, now) })
}

// rotationNeeded reports whether the keys must rotate: there is no active
// key or no next one, or the active key has signed for the rotation
// period.
func (s *Service) rotationNeeded(keys []store.SigningKey, now time.Time) bool {
	active, ok := findKey(keys, KeyActive)
	if _, hasNext := findKey(keys, KeyNext); !ok || !hasNext {
		return true
	}
	return !now.Before(active.ActivatedAt.Add(s.keyRotationPeriod))
}

// findKey returns the first key in the state.
func findKey(keys []store.SigningKey, state KeyState) (store.SigningKey, bool) {
	i := slices.IndexFunc(keys, func(k store.SigningKey) bool { return KeyState(k.State) == state })
	if i < 0 {
		return store.SigningKey{}, false
	}
	return keys[i], true
}

// rotateKeys moves every key one state on: the active key retires, the
// next one becomes active and fresh becomes the next key. Without a next
// key (a workspace's first keys, or a store edited by hand) fresh becomes
// active at once and spare the next key: no client can hold a token that
// a key not yet made would verify, so there is nothing to publish ahead
// of. It records signing_key.rotated on the key now active, by actor
// (nil: the context's), with the ids of the active and the next key
// before and after.
func (w *Workspace) rotateKeys(ctx context.Context, tx store.Tx, keys []store.SigningKey, fresh, spare store.SigningKey, now time.Time, actor *Actor) ([]store.SigningKey, error) {
	active, hadActive := findKey(keys, KeyActive)
	next, ok := findKey(keys, KeyNext)
	for _, k := range keys {
		if KeyState(k.State) == KeyActive {
			if err := w.retireKey(tx, k, now); err != nil {
				return nil, err
			}
		}
	}
	newActive, newNext := fresh, spare
	if ok {
		// The next key is stored sealed already: only its state changes.
		next.State, next.ActivatedAt = string(KeyActive), now
		fresh.State, fresh.CreatedAt = string(KeyNext), now
		if err := tx.PutSigningKey(w.slug, next); err != nil {
			return nil, err
		}
		if err := w.putKey(tx, fresh); err != nil {
			return nil, err
		}
		newActive, newNext = next, fresh
	} else {
		fresh.State, fresh.CreatedAt, fresh.ActivatedAt = string(KeyActive), now, now
		spare.State, spare.CreatedAt = string(KeyNext), now
		for _, k := range []store.SigningKey{fresh, spare} {
			if err := w.putKey(tx, k); err != nil {
				return nil, err
			}
		}
	}
	changes := auditChanges{}.set("active", keyIDOrNil(active, hadActive), newActive.ID).
		set("next", keyIDOrNil(next, ok), newNext.ID)
	if err := w.audit(ctx, tx, auditEntry{
		action: AuditSigningKeyRotated, target: AuditTarget{Kind: TargetSigningKey, ID: newActive.ID, Display: newActive.Algorithm},
		changes: changes, actor: actor,
	}); err != nil {
		return nil, err
	}
	return tx.SigningKeys(w.slug)
}

// keyIDOrNil is the id of k when there is one (ok), else nil: a key's
// value in an audit change.
func keyIDOrNil(k store.SigningKey, ok bool) any {
	if !ok {
		return nil
	}
	return k.ID
}

// retireKey retires a key that is not retired: it stays published for as
// long as the longest-lived token it may have signed.
func (w *Workspace) retireKey(tx store.Tx, k store.SigningKey, now time.Time) error {
	if KeyState(k.State) == KeyRetired {
		return nil
	}
	k.State, k.RetiredAt, k.RemoveAt = string(KeyRetired), now, now.Add(w.svc.longestSignedLifetime())
	return tx.PutSigningKey(w.slug, k)
}

// pruneKeys removes retired keys past their RemoveAt.
func (w *Workspace) pruneKeys(tx store.Tx, keys []store.SigningKey, now time.Time) ([]store.SigningKey, error) {
	kept := keys[:0:0]
	for _, k := range keys {
		if published(k, now) {
			kept = append(kept, k)
			continue
		}
		if err := tx.DeleteSigningKey(w.slug, k.ID); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// putKey stores a key with its private half sealed for this workspace.
func (w *Workspace) putKey(tx store.Tx, k store.SigningKey) error {
	sealed, err := w.svc.sealKey(w.slug, k.ID, k.PrivateKey)
	if err != nil {
		return err
	}
	k.PrivateKey = sealed
	return tx.PutSigningKey(w.slug, k)
}

// newSigningKeys makes two keys, for a rotation that may need both.
func (s *Service) newSigningKeys() (store.SigningKey, store.SigningKey, error) {
	a, err := s.newSigningKey()
	if err != nil {
		return a, a, err
	}
	b, err := s.newSigningKey()
	return a, b, err
}

// newSigningKey makes a key of the Service's algorithm. PrivateKey holds
// the plain PKCS #8 form until putKey seals it.
func (s *Service) newSigningKey() (store.SigningKey, error) {
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return store.SigningKey{}, internal(err)
	}
	var priv crypto.Signer
	var err error
	switch s.signingAlgorithm {
	case ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		return store.SigningKey{}, internal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return store.SigningKey{}, internal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		return store.SigningKey{}, internal(err)
	}
	return store.SigningKey{ID: hex.EncodeToString(id), Algorithm: s.signingAlgorithm, PrivateKey: der, PublicKey: pub}, nil
}

// internal wraps a failure of the machine (randomness, encoding) as a
// CodeInternal error.
func internal(err error) error {
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

// sealKey encodes a private key for the store: sealed under the
// key-encryption key when the program supplied one, bound to the
// workspace and key id so that a sealed key cannot be moved to another;
// plain otherwise.
func (s *Service) sealKey(slug, kid string, der []byte) ([]byte, error) {
	return s.seal(keyAAD(slug, kid), der)
}

// errKeySealed and errKeyUnsealed explain a key the Service cannot read.
var (
	errKeySealed   = errors.New("signing key is sealed and Options.KeyEncryptionKey is not set")
	errKeyUnsealed = errors.New("signing key does not open with Options.KeyEncryptionKey (another key sealed it, or it was altered)")
)

// openKey decodes a stored private key. A key stored plain opens with or
// without a key-encryption key (it was made before one was supplied).
func (s *Service) openKey(slug string, k store.SigningKey) (crypto.Signer, error) {
	der, err := s.open(keyAAD(slug, k.ID), k.PrivateKey)
	switch {
	case errors.Is(err, errSealedNoKey):
		return nil, errKeySealed
	case errors.Is(err, errSealedOtherKey):
		return nil, errKeyUnsealed
	case err != nil:
		return nil, fmt.Errorf("signing key %s: %w", k.ID, err)
	}
	priv, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", k.ID, err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("signing key %s: %T cannot sign", k.ID, priv)
	}
	return signer, nil
}

func keyAAD(slug, kid string) []byte { return []byte("identity signing key " + slug + "/" + kid) }

// signerCache keeps opened private keys by workspace and key id. A key's
// private half never changes once stored, so an entry never goes stale;
// parsing an RSA key costs more than signing with it. The keys of a
// deleted workspace are dropped (forgetSigningKeys).
type signerCache struct{ m sync.Map }

type signerKey struct{ slug, kid string }

// signer returns the opened private key of k.
func (s *Service) signer(slug string, k store.SigningKey) (crypto.Signer, error) {
	if v, ok := s.signers.m.Load(signerKey{slug, k.ID}); ok {
		return v.(crypto.Signer), nil
	}
	priv, err := s.openKey(slug, k)
	if err != nil {
		return nil, internal(err)
	}
	s.signers.m.Store(signerKey{slug, k.ID}, priv)
	return priv, nil
}

// forgetSigningKeys drops the keys of the workspace from the Service's
// caches of opened private keys and parsed public keys, once
// DeleteWorkspace has deleted them from the store: no private key of a
// deleted workspace stays in memory. (A cached key is used only for a key
// the store still holds, so keeping it would not make a token valid.)
func (s *Service) forgetSigningKeys(slug string) {
	for _, m := range []*sync.Map{&s.signers.m, &s.publicKeys} {
		m.Range(func(k, _ any) bool {
			if k.(signerKey).slug == slug {
				m.Delete(k)
			}
			return true
		})
	}
}
