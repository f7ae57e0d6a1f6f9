package identity_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// Signing keys: the first keys, rotation on demand and by age, how long a
// retired key stays published, sealing with a key-encryption key, and the
// token options New checks.

// ignoreKeyIdentity leaves a SigningKey's random id and its public key to
// the checks of their own.
var ignoreKeyIdentity = cmpopts.IgnoreFields(identity.SigningKey{}, "ID", "PublicKey")

func tp(t time.Time) *time.Time { return &t }

// TestSigningKeysFirstCall: a workspace's first SigningKeys call makes an
// active key and the next one, of the Service's algorithm (RS256 unless
// Options.SigningAlgorithm says ES256); later calls return the same keys;
// tokens carry the algorithm and the active key's id.
func TestSigningKeysFirstCall(t *testing.T) {
	tests := []struct {
		name    string
		alg     string // Options.SigningAlgorithm
		wantAlg string
		checkPK func(t *testing.T, pub any)
	}{
		{"default is RS256", "", "RS256", func(t *testing.T, pub any) {
			k, ok := pub.(*rsa.PublicKey)
			if !ok || k.N.BitLen() != 2048 {
				t.Errorf("public key %T, want a 2048-bit *rsa.PublicKey", pub)
			}
		}},
		{"RS256", "RS256", "RS256", func(t *testing.T, pub any) {
			if _, ok := pub.(*rsa.PublicKey); !ok {
				t.Errorf("public key %T, want *rsa.PublicKey", pub)
			}
		}},
		{"ES256", "ES256", "ES256", func(t *testing.T, pub any) {
			k, ok := pub.(*ecdsa.PublicKey)
			if !ok || k.Curve != elliptic.P256() {
				t.Errorf("public key %T, want a P-256 *ecdsa.PublicKey", pub)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.SigningAlgorithm = tt.alg
			e := newOIDCEnv(t, opts)
			if n := len(e.storedKeys("acme")); n != 0 {
				t.Fatalf("%d keys before the first call, want 0", n)
			}
			keys, err := e.ws.ListSigningKeys(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			byState := map[identity.KeyState]identity.SigningKey{}
			for _, k := range keys {
				byState[k.State] = k
				if !hex16Pattern.MatchString(k.ID) {
					t.Errorf("key id %q, want 16 hex digits", k.ID)
				}
				tt.checkPK(t, k.PublicKey)
			}
			want := map[identity.KeyState]identity.SigningKey{
				identity.KeyActive: {Algorithm: tt.wantAlg, State: "active", CreatedAt: t0, ActivatedAt: tp(t0)},
				identity.KeyNext:   {Algorithm: tt.wantAlg, State: "next", CreatedAt: t0},
			}
			if diff := cmp.Diff(want, byState, ignoreKeyIdentity); diff != "" || len(keys) != 2 {
				t.Fatalf("first keys (-want +got):\n%s\n%+v", diff, keys)
			}
			if byState[identity.KeyActive].ID == byState[identity.KeyNext].ID {
				t.Errorf("active and next share id %s", byState[identity.KeyNext].ID)
			}

			e.clock.Advance(time.Hour)
			again := e.keyByState()
			if diff := cmp.Diff(byState, again, cmpopts.IgnoreFields(identity.SigningKey{}, "PublicKey")); diff != "" {
				t.Errorf("second call (-first +second):\n%s", diff)
			}
			if n := len(e.storedKeys("acme")); n != 2 {
				t.Errorf("%d keys stored, want 2", n)
			}

			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			kid := byState[identity.KeyActive].ID
			for _, h := range []map[string]any{headerOf(t, tok.AccessToken), headerOf(t, tok.IDToken)} {
				if h["alg"] != tt.wantAlg || h["kid"] != kid {
					t.Errorf("header %v, want alg %s and kid %s", h, tt.wantAlg, kid)
				}
			}
			e.wantActive(tok.AccessToken)
		})
	}
}

// TestRotateSigningKey: a rotation makes the next key active and retires
// the active one, published until now + max(access, ID lifetime) +
// TokenLeeway (10m30s with the default lifetimes), then gone; new tokens
// are signed with the new active key.
func TestRotateSigningKey(t *testing.T) {
	tests := []struct {
		name      string
		lifetimes *identity.TokenLifetimes
		published time.Duration // how long the retired key stays published
	}{
		{"default lifetimes", nil, 10*time.Minute + 30*time.Second},
		{"access lives longer", &identity.TokenLifetimes{Access: 20 * time.Minute}, 20*time.Minute + 30*time.Second},
		{"ID token lives longer", &identity.TokenLifetimes{ID: 15 * time.Minute}, 15*time.Minute + 30*time.Second},
		{"both shorter, ID longer", &identity.TokenLifetimes{Access: 5 * time.Minute, ID: 7 * time.Minute}, 7*time.Minute + 30*time.Second},
		{"refresh lifetimes play no part", &identity.TokenLifetimes{Refresh: time.Hour, RefreshMax: 2 * time.Hour}, 10*time.Minute + 30*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.TokenLifetimes = tt.lifetimes
			e := newOIDCEnv(t, opts)
			first := e.keyByState()
			oldActive, oldNext := first[identity.KeyActive], first[identity.KeyNext]

			t1 := at(time.Minute)
			e.clock.Set(t1)
			rotated, err := e.ws.RotateSigningKey(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantRotated := identity.SigningKey{ID: oldNext.ID, Algorithm: "ES256", State: "active", CreatedAt: t0, ActivatedAt: tp(t1)}
			if diff := cmp.Diff(wantRotated, rotated, cmpopts.IgnoreFields(identity.SigningKey{}, "PublicKey")); diff != "" {
				t.Errorf("RotateSigningKey (-want +got):\n%s", diff)
			}

			removeAt := t1.Add(tt.published)
			keys := e.keyByState()
			newNext := keys[identity.KeyNext].ID
			if newNext == oldActive.ID || newNext == oldNext.ID || !hex16Pattern.MatchString(newNext) {
				t.Errorf("new next key id %q, want 16 new hex digits", newNext)
			}
			want := map[identity.KeyState]identity.SigningKey{
				identity.KeyRetired: {ID: oldActive.ID, Algorithm: "ES256", State: "retired", CreatedAt: t0, ActivatedAt: tp(t0), RetiredAt: tp(t1), RemoveAt: tp(removeAt)},
				identity.KeyActive:  wantRotated,
				identity.KeyNext:    {ID: newNext, Algorithm: "ES256", State: "next", CreatedAt: t1},
			}
			if diff := cmp.Diff(want, keys, cmpopts.IgnoreFields(identity.SigningKey{}, "PublicKey")); diff != "" {
				t.Errorf("keys after rotation (-want +got):\n%s", diff)
			}

			tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
			if kid := headerOf(t, tok.AccessToken)["kid"]; kid != oldNext.ID {
				t.Errorf("kid after rotation = %v, want %s", kid, oldNext.ID)
			}

			e.clock.Set(removeAt.Add(-time.Microsecond))
			if _, ok := e.keyByState()[identity.KeyRetired]; !ok {
				t.Errorf("retired key gone 1µs before RemoveAt")
			}
			e.clock.Set(removeAt)
			if _, ok := e.keyByState()[identity.KeyRetired]; ok {
				t.Errorf("retired key still published at RemoveAt")
			}
			if n := len(e.storedKeys("acme")); n != 2 {
				t.Errorf("%d keys stored after RemoveAt, want 2 (the retired one removed)", n)
			}
		})
	}
}

// TestTokenOutlivesItsKeyRotation: a token signed before a rotation still
// verifies after it, until it expires (exp + TokenLeeway); a token signed
// with a retired key verifies while the key is published and not after.
func TestTokenOutlivesItsKeyRotation(t *testing.T) {
	e := newOIDCEnv(t, nil)
	tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
	oldKid := headerOf(t, tok.AccessToken)["kid"].(string)
	if _, err := e.ws.RotateSigningKey(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.wantActive(tok.AccessToken)
	// exp is t0Unix+600; the leeway is 30 s.
	expiry := time.Unix(t0Unix+630, 0).UTC()
	e.clock.Set(expiry.Add(-time.Microsecond))
	e.wantActive(tok.AccessToken)
	e.clock.Set(expiry)
	e.wantRefused(tok.AccessToken)

	// A token of the retired key that would live on: refused once the key
	// is no longer published (t0 + 10m30s), accepted just before.
	e.clock.Set(t0)
	long := claimsOf(t, tok.AccessToken)
	long["exp"] = t0Unix + 3600
	forged := e.forgeWith(oldKid, "at+jwt", long)
	removeAt := at(10*time.Minute + 30*time.Second)
	e.clock.Set(removeAt.Add(-time.Microsecond))
	e.wantActive(forged)
	e.clock.Set(removeAt)
	e.wantRefused(forged)
}

// TestAutomaticRotation: keys rotate by themselves when the active key
// has signed for exactly KeyRotationPeriod (30 days by default), not 1 µs
// before, whether the next call is SigningKeys or IssueTokens.
func TestAutomaticRotation(t *testing.T) {
	tests := []struct {
		name   string
		period time.Duration // Options.KeyRotationPeriod
		due    time.Duration // written out: when the active key rotates
		issue  bool          // reach the keys through IssueTokens first
	}{
		{"default period, SigningKeys", 0, 30 * 24 * time.Hour, false},
		{"default period, IssueTokens", 0, 30 * 24 * time.Hour, true},
		{"one hour, SigningKeys", time.Hour, time.Hour, false},
		{"one hour, IssueTokens", time.Hour, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tokenOpts()
			opts.KeyRotationPeriod = tt.period
			e := newOIDCEnv(t, opts)
			first := e.keyByState()
			kid := func() string {
				t.Helper()
				if tt.issue {
					tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
					return headerOf(t, tok.AccessToken)["kid"].(string)
				}
				return e.keyByState()[identity.KeyActive].ID
			}

			e.clock.Set(at(tt.due - time.Microsecond))
			if got := kid(); got != first[identity.KeyActive].ID {
				t.Fatalf("active key 1µs before the period = %s, want %s (no rotation)", got, first[identity.KeyActive].ID)
			}
			due := at(tt.due)
			e.clock.Set(due)
			if got := kid(); got != first[identity.KeyNext].ID {
				t.Fatalf("active key at the period = %s, want the next key %s", got, first[identity.KeyNext].ID)
			}
			keys := e.keyByState()
			want := map[identity.KeyState]identity.SigningKey{
				identity.KeyRetired: {ID: first[identity.KeyActive].ID, Algorithm: "ES256", State: "retired", CreatedAt: t0, ActivatedAt: tp(t0),
					RetiredAt: tp(due), RemoveAt: tp(due.Add(10*time.Minute + 30*time.Second))},
				identity.KeyActive: {ID: first[identity.KeyNext].ID, Algorithm: "ES256", State: "active", CreatedAt: t0, ActivatedAt: tp(due)},
				identity.KeyNext:   {ID: keys[identity.KeyNext].ID, Algorithm: "ES256", State: "next", CreatedAt: due},
			}
			if diff := cmp.Diff(want, keys, cmpopts.IgnoreFields(identity.SigningKey{}, "PublicKey")); diff != "" {
				t.Errorf("keys after the automatic rotation (-want +got):\n%s", diff)
			}
			// The new active key rotates a period after it was activated.
			e.clock.Set(due.Add(tt.due - time.Microsecond))
			if got := e.keyByState()[identity.KeyActive].ID; got != first[identity.KeyNext].ID {
				t.Errorf("second rotation came early")
			}
		})
	}
}

// kek returns a key-encryption key filled with b.
func kek(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// TestKeyEncryptionKey: with Options.KeyEncryptionKey the private keys
// are stored sealed (first byte 1, not PKCS #8); a Service with another
// key-encryption key, or none, cannot issue tokens (CodeInternal) but
// still verifies them; the same key-encryption key issues; a sealed key
// moved to another workspace does not open.
func TestKeyEncryptionKey(t *testing.T) {
	opts := tokenOpts()
	opts.KeyEncryptionKey = kek(1)
	e := newOIDCEnv(t, opts)
	tok := e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
	stored := e.storedKeys("acme")
	if len(stored) != 2 {
		t.Fatalf("%d keys stored, want 2", len(stored))
	}
	for _, k := range stored {
		if len(k.PrivateKey) == 0 || k.PrivateKey[0] != 1 {
			t.Fatalf("key %s stored with first byte %v, want 1 (sealed)", k.ID, k.PrivateKey[:1])
		}
		for _, der := range [][]byte{k.PrivateKey, k.PrivateKey[1:]} {
			if _, err := x509.ParsePKCS8PrivateKey(der); err == nil {
				t.Errorf("key %s: stored private key parses as plain PKCS #8", k.ID)
			}
		}
	}

	service := func(key []byte) *identity.Workspace {
		t.Helper()
		ws := e.workspaceWithKEK(t, "acme", key)
		return ws
	}
	req := identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}}
	tests := []struct {
		name string
		kek  []byte
		code identity.Code
	}{
		{"another key-encryption key", kek(2), identity.CodeInternal},
		{"no key-encryption key", nil, identity.CodeInternal},
		{"the same key-encryption key", kek(1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := service(tt.kek)
			_, err := ws.IssueTokens(e.ctx, req)
			identitytest.WantCode(t, err, tt.code)
			if _, err := ws.VerifyAccessToken(e.ctx, tok.AccessToken); err != nil {
				t.Errorf("VerifyAccessToken: %v (public keys need no key-encryption key)", err)
			}
			if keys, err := ws.ListSigningKeys(e.ctx); err != nil || len(keys) != 2 {
				t.Errorf("SigningKeys = %d keys, %v", len(keys), err)
			}
		})
	}

	t.Run("sealed key moved to another workspace", func(t *testing.T) {
		beta, err := e.svc.CreateWorkspace(e.ctx, "beta", nil)
		if err != nil {
			t.Fatal(err)
		}
		u, err := beta.CreateUser(e.ctx, newUserNamed("bob"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := beta.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{webRedirect}})
		if err != nil {
			t.Fatal(err)
		}
		err = e.st.Store.Update(e.ctx, func(tx store.Tx) error {
			for _, k := range stored {
				if err := tx.PutSigningKey("beta", k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ws := e.workspaceWithKEK(t, "beta", kek(1))
		_, err = ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: c.Client.ID, UserID: u.ID, Scopes: []string{"openid"}})
		identitytest.WantCode(t, err, identity.CodeInternal)
	})
}

// TestKeyEncryptionKeyAddedLater: keys stored plain (first byte 0, the
// PKCS #8 after it) still sign once a key-encryption key is supplied,
// and the keys made from then on are sealed.
func TestKeyEncryptionKeyAddedLater(t *testing.T) {
	e := newOIDCEnv(t, nil)
	e.issue(identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid"}})
	plain := map[string]bool{}
	for _, k := range e.storedKeys("acme") {
		if k.PrivateKey[0] != 0 {
			t.Fatalf("key %s first byte %d, want 0 (plain)", k.ID, k.PrivateKey[0])
		}
		if _, err := x509.ParsePKCS8PrivateKey(k.PrivateKey[1:]); err != nil {
			t.Fatalf("plain key %s: %v", k.ID, err)
		}
		plain[k.ID] = true
	}
	ws := e.workspaceWithKEK(t, "acme", kek(3))
	if _, err := ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID}); err != nil {
		t.Fatalf("IssueTokens with a plain key and a key-encryption key: %v", err)
	}
	if _, err := ws.RotateSigningKey(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.IssueTokens(e.ctx, identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID}); err != nil {
		t.Fatalf("IssueTokens after rotation: %v", err)
	}
	for _, k := range e.storedKeys("acme") {
		want := byte(1)
		if plain[k.ID] {
			want = 0
		}
		if k.PrivateKey[0] != want {
			t.Errorf("key %s first byte %d, want %d", k.ID, k.PrivateKey[0], want)
		}
	}
}

// TestNewTokenOptions: the token options New checks, each on both sides
// of its rule.
func TestNewTokenOptions(t *testing.T) {
	fieldRule := func(rule string) []identity.FieldError { return field("IssuerBase", rule) }
	tests := []struct {
		name   string
		mod    func(*identity.Options)
		code   identity.Code
		fields []identity.FieldError
	}{
		{"IssuerBase https", func(o *identity.Options) { o.IssuerBase = "https://id.example.com" }, "", nil},
		{"IssuerBase https with a path", func(o *identity.Options) { o.IssuerBase = "https://example.com/identity" }, "", nil},
		{"IssuerBase https with a port", func(o *identity.Options) { o.IssuerBase = "https://id.example.com:8443" }, "", nil},
		{"IssuerBase http localhost", func(o *identity.Options) { o.IssuerBase = "http://localhost:8080" }, "", nil},
		{"IssuerBase http 127.0.0.1", func(o *identity.Options) { o.IssuerBase = "http://127.0.0.1" }, "", nil},
		{"IssuerBase http [::1]", func(o *identity.Options) { o.IssuerBase = "http://[::1]:9000" }, "", nil},
		{"IssuerBase empty (no tokens)", func(o *identity.Options) { o.IssuerBase = "" }, "", nil},
		{"IssuerBase http public host", func(o *identity.Options) { o.IssuerBase = "http://id.example.com" }, identity.CodeInvalid, fieldRule("loopback_only")},
		{"IssuerBase http private address", func(o *identity.Options) { o.IssuerBase = "http://10.0.0.1" }, identity.CodeInvalid, fieldRule("loopback_only")},
		{"IssuerBase trailing slash", func(o *identity.Options) { o.IssuerBase = "https://id.example.com/" }, identity.CodeInvalid, fieldRule("format")},
		{"IssuerBase path with a trailing slash", func(o *identity.Options) { o.IssuerBase = "https://example.com/identity/" }, identity.CodeInvalid, fieldRule("format")},
		{"IssuerBase query", func(o *identity.Options) { o.IssuerBase = "https://id.example.com?tenant=1" }, identity.CodeInvalid, fieldRule("format")},
		{"IssuerBase fragment", func(o *identity.Options) { o.IssuerBase = "https://id.example.com#top" }, identity.CodeInvalid, fieldRule("format")},
		{"IssuerBase other scheme", func(o *identity.Options) { o.IssuerBase = "ftp://id.example.com" }, identity.CodeInvalid, fieldRule("format")},
		{"IssuerBase without scheme", func(o *identity.Options) { o.IssuerBase = "id.example.com" }, identity.CodeInvalid, fieldRule("format")},
		{"IssuerBase user information", func(o *identity.Options) { o.IssuerBase = "https://admin@id.example.com" }, identity.CodeInvalid, fieldRule("format")},
		{"SigningAlgorithm RS256", func(o *identity.Options) { o.SigningAlgorithm = "RS256" }, "", nil},
		{"SigningAlgorithm ES256", func(o *identity.Options) { o.SigningAlgorithm = "ES256" }, "", nil},
		{"SigningAlgorithm empty", func(o *identity.Options) { o.SigningAlgorithm = "" }, "", nil},
		{"SigningAlgorithm HS256", func(o *identity.Options) { o.SigningAlgorithm = "HS256" }, identity.CodeInvalid, nil},
		{"SigningAlgorithm ES384", func(o *identity.Options) { o.SigningAlgorithm = "ES384" }, identity.CodeInvalid, nil},
		{"SigningAlgorithm lower case", func(o *identity.Options) { o.SigningAlgorithm = "rs256" }, identity.CodeInvalid, nil},
		{"SigningAlgorithm none", func(o *identity.Options) { o.SigningAlgorithm = "none" }, identity.CodeInvalid, nil},
		{"KeyEncryptionKey 32 bytes", func(o *identity.Options) { o.KeyEncryptionKey = kek(9) }, "", nil},
		{"KeyEncryptionKey nil", func(o *identity.Options) { o.KeyEncryptionKey = nil }, "", nil},
		{"KeyEncryptionKey 31 bytes", func(o *identity.Options) { o.KeyEncryptionKey = kek(9)[:31] }, identity.CodeInvalid, nil},
		{"KeyEncryptionKey 33 bytes", func(o *identity.Options) { o.KeyEncryptionKey = append(kek(9), 9) }, identity.CodeInvalid, nil},
		{"KeyEncryptionKey 16 bytes", func(o *identity.Options) { o.KeyEncryptionKey = kek(9)[:16] }, identity.CodeInvalid, nil},
		{"KeyEncryptionKey empty", func(o *identity.Options) { o.KeyEncryptionKey = []byte{} }, identity.CodeInvalid, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tokenOpts()
			o.PasswordHashing = &cheapArgon2
			tt.mod(o)
			svc, err := identity.New(&flakyStore{Store: newMemStore(t)}, o)
			identitytest.WantCode(t, err, tt.code)
			if tt.fields != nil {
				identitytest.WantFields(t, err, tt.fields)
			}
			if err == nil && svc == nil {
				t.Fatal("New returned no Service and no error")
			}
		})
	}
}

// TestIssuerBaseEmptyQueryOrFragment: "https://id.example.com?" and
// "https://id.example.com#" carry an (empty) query or fragment, which the
// IssuerBase rule refuses: the issuer would be "https://id.example.com?/t/acme"
// or "https://id.example.com#/t/acme", an issuer with a query, or one
// whose path is a fragment.
func TestIssuerBaseEmptyQueryOrFragment(t *testing.T) {
	for _, base := range []string{"https://id.example.com?", "https://id.example.com#"} {
		t.Run(base, func(t *testing.T) {
			o := tokenOpts()
			o.IssuerBase = base
			_, err := identity.New(&flakyStore{Store: newMemStore(t)}, o)
			identitytest.WantFields(t, err, field("IssuerBase", "format"))
		})
	}
}

// TestPruneFailure: a retired key past its RemoveAt is removed by the
// next read of the keys; when the store fails to remove it, that read
// fails with an internal error and the key stays, to be removed later.
func TestPruneFailure(t *testing.T) {
	e := newOIDCEnv(t, nil)
	first := e.keyByState()
	if _, err := e.ws.RotateSigningKey(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10*time.Minute + 30*time.Second)
	e.st.breakMethod("DeleteSigningKey", errFlaky)
	_, err := e.ws.ListSigningKeys(e.ctx)
	identitytest.WantCode(t, err, identity.CodeInternal)
	if len(e.storedKeys("acme")) != 3 {
		t.Fatalf("keys after a failed removal: %d, want 3", len(e.storedKeys("acme")))
	}
	e.st.mend()
	keys, err := e.ws.ListSigningKeys(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.ID == first[identity.KeyActive].ID {
			t.Errorf("the retired key %s is still published", k.ID)
		}
	}
	if len(keys) != 2 || len(e.storedKeys("acme")) != 2 {
		t.Errorf("%d keys published, %d stored; want 2 and 2", len(keys), len(e.storedKeys("acme")))
	}
}

// workspaceWithKEK returns the workspace slug through a second Service
// over e's store whose key-encryption key is key (nil: none).
func (e *oidcEnv) workspaceWithKEK(t *testing.T, slug string, key []byte) *identity.Workspace {
	t.Helper()
	o := tokenOpts()
	o.Now, o.PasswordHashing, o.KeyEncryptionKey = e.clock.Now, &cheapArgon2, key
	svc, err := identity.New(e.st, o)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.GetWorkspace(e.ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
