package identity

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/identitylib/identity/store"
)

// KeyCacheNoExpiry, as Options.KeyCacheTTL, keeps a verified API key in
// memory until this Service revokes it or deletes its workspace. It is
// exact only when nothing but this Service changes the store's API keys:
// not for PostgreSQL shared by several processes, nor for a Store object
// shared by several Services.
const KeyCacheNoExpiry time.Duration = math.MaxInt64

// maxCachedKeys bounds the key cache. Only keys presented with their
// right secret enter it, so it holds at most the store's valid keys in use;
// past the bound one entry makes room for the next.
const maxCachedKeys = 10_000

// keyCacheTTL resolves Options.KeyCacheTTL for st: 0 (off), a positive
// TTL, or KeyCacheNoExpiry. By default a store that alone changes its data
// (store.Exclusive: a bbolt file, which one process holds at a time) is
// cached until revoked; any other store, which other processes may share
// (PostgreSQL) or whose sharing New cannot know, is not cached.
func keyCacheTTL(st store.Store, ttl time.Duration) time.Duration {
	switch {
	case ttl < 0:
		return 0
	case ttl > 0:
		return ttl
	}
	if x, ok := storeAs[store.Exclusive](st); ok && x.Exclusive() {
		return KeyCacheNoExpiry
	}
	return 0
}

// keyCache holds the API keys the Service verified against the store, so
// that a request with a known key reads nothing to authorize itself. An
// entry is the key's stored record (with the hash of its secret, which the
// presented secret is still checked against on every use, in constant
// time) and its workspace's creation time.
//
// A key record never changes once stored: it is created, then deleted
// (RevokeAPIKey, DeleteWorkspace). So an entry stays right until its key
// is deleted, and the Service forgets it when it deletes it. A fill races
// a deletion: a request may read the key just before a revocation commits
// and store it just after the revocation forgot it. Every forgetting
// therefore bumps a generation under mu, and a fill stores its entry only
// if the generation it read before its transaction is still current; one
// that read it after the forgetting began its transaction after the
// deletion committed, so it found no key.
type keyCache struct {
	ttl time.Duration // 0: off; KeyCacheNoExpiry: until forgotten

	mu      sync.Mutex    // serializes fills and forgetting
	gen     atomic.Uint64 // bumped under mu by each forgetting
	size    int           // entries, under mu
	entries sync.Map      // key id -> *cachedKey
}

// cachedKey is one verified key.
type cachedKey struct {
	rec              store.APIKey
	workspaceCreated time.Time
	expires          time.Time // zero: never
}

// enabled reports whether the cache keeps anything.
func (c *keyCache) enabled() bool { return c.ttl > 0 }

// get returns the live entry of the key id, if there is one.
func (c *keyCache) get(id string, now time.Time) (*cachedKey, bool) {
	v, ok := c.entries.Load(id)
	if !ok {
		return nil, false
	}
	k := v.(*cachedKey)
	if !k.expires.IsZero() && !now.Before(k.expires) {
		return nil, false
	}
	return k, true
}

// generation returns the generation a fill reads before its transaction.
func (c *keyCache) generation() uint64 { return c.gen.Load() }

// put stores k, verified by a transaction that began after generation gen
// was read and after now (from which its TTL counts), unless a key was
// forgotten since.
func (c *keyCache) put(gen uint64, now time.Time, k *cachedKey) {
	if c.ttl != KeyCacheNoExpiry {
		k.expires = now.Add(c.ttl)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen.Load() != gen {
		return
	}
	if _, loaded := c.entries.Swap(k.rec.ID, k); loaded {
		return
	}
	c.size++
	if c.size <= maxCachedKeys {
		return
	}
	c.entries.Range(func(id, _ any) bool { // evict one other entry
		if id != k.rec.ID {
			c.entries.Delete(id)
			c.size--
			return false
		}
		return true
	})
}

// forgetKey drops the key id, once its deletion committed (or may have).
func (c *keyCache) forgetKey(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.Add(1)
	if _, ok := c.entries.LoadAndDelete(id); ok {
		c.size--
	}
}

// forgetWorkspace drops every key of the workspace slug, once the
// workspace's deletion committed (or may have).
func (c *keyCache) forgetWorkspace(slug string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.Add(1)
	c.entries.Range(func(id, v any) bool {
		if v.(*cachedKey).rec.Workspace == slug {
			c.entries.Delete(id)
			c.size--
		}
		return true
	})
}
