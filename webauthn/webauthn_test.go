package webauthn_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"slices"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
	"github.com/identitylib/identity/webauthn"
)

// The authenticator data's flags.
const (
	flagUP = 0x01
	flagUV = 0x04
	flagBE = 0x08
	flagBS = 0x10
	flagAT = 0x40
)

var b64 = base64.RawURLEncoding

// authenticator is a software authenticator: one P-256 credential, made
// and used as a browser and an authenticator would, byte by byte.
type authenticator struct {
	key    *ecdsa.PrivateKey
	id     []byte
	handle []byte
	aaguid []byte
}

func newAuthenticator(t *testing.T, id []byte) *authenticator {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &authenticator{key: key, id: id, aaguid: []byte("soft-authn-16byt")}
}

// ceremony is what the authenticator is told and does: the origin the
// browser reports, the RP id it signs for, the flags and the counter.
type ceremony struct {
	origin string
	rpID   string
	flags  byte
	count  uint32
	rk     bool
	// signer signs in place of the credential's key (a forgery) when set.
	signer *ecdsa.PrivateKey
}

// options reads the challenge, the RP id and the user handle of a
// ceremony's options.
func options(t *testing.T, c identity.PasskeyChallenge) (challenge []byte, rpID string, handle []byte) {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RPID      string `json:"rpId"`
			RP        struct {
				ID string `json:"id"`
			} `json:"rp"`
			User struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(c.Options, &o); err != nil {
		t.Fatalf("options %s: %v", c.Options, err)
	}
	challenge, err := b64.DecodeString(o.PublicKey.Challenge)
	if err != nil {
		t.Fatal(err)
	}
	handle, err = b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		t.Fatal(err)
	}
	return challenge, o.PublicKey.RPID + o.PublicKey.RP.ID, handle
}

func clientData(typ string, challenge []byte, origin string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": b64.EncodeToString(challenge), "origin": origin, "crossOrigin": false})
	return b
}

func authData(rpID string, flags byte, count uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	return binary.BigEndian.AppendUint32(out, count)
}

// create answers registration options with an attestation "none".
func (a *authenticator) create(t *testing.T, c identity.PasskeyChallenge, cer ceremony) []byte {
	t.Helper()
	challenge, _, handle := options(t, c)
	a.handle = handle
	x, y := make([]byte, 32), make([]byte, 32)
	a.key.X.FillBytes(x)
	a.key.Y.FillBytes(y)
	cose, err := webauthncbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: y})
	if err != nil {
		t.Fatal(err)
	}
	ad := authData(cer.rpID, cer.flags|flagAT, cer.count)
	ad = append(ad, a.aaguid...)
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(a.id)))
	ad = append(append(ad, a.id...), cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"authenticatorAttachment": "platform",
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(clientData("webauthn.create", challenge, cer.origin)),
			"attestationObject": b64.EncodeToString(att), "transports": []string{"internal"},
		},
		"clientExtensionResults": map[string]any{"credProps": map[string]any{"rk": cer.rk}},
	})
	return resp
}

// get answers sign-in options with an assertion.
func (a *authenticator) get(t *testing.T, c identity.PasskeyChallenge, cer ceremony) []byte {
	t.Helper()
	challenge, _, _ := options(t, c)
	ad := authData(cer.rpID, cer.flags, cer.count)
	cd := clientData("webauthn.get", challenge, cer.origin)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(slices.Clone(ad), cdHash[:]...))
	signer := a.key
	if cer.signer != nil {
		signer = cer.signer
	}
	sig, err := ecdsa.SignASN1(rand.Reader, signer, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := json.Marshal(map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(a.handle),
		},
		"clientExtensionResults": map[string]any{},
	})
	return resp
}

type env struct {
	t    *testing.T
	ctx  context.Context
	ws   *identity.Workspace
	user identity.User
}

func newEnv(t *testing.T, issuerBase string) *env {
	t.Helper()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := identity.New(st, &identity.Options{IssuerBase: issuerBase, PasskeyCeremony: webauthn.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "analytical engine"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, ws: ws, user: u}
}

// good is an honest ceremony at https://id.example.com.
func good() ceremony {
	return ceremony{origin: "https://id.example.com", rpID: "id.example.com", flags: flagUP | flagUV, rk: true}
}

func (e *env) register(a *authenticator, cer ceremony) (identity.Passkey, error) {
	e.t.Helper()
	c, err := e.ws.BeginPasskeyRegistration(e.ctx, e.user.ID)
	if err != nil {
		e.t.Fatalf("BeginPasskeyRegistration: %v", err)
	}
	return e.ws.ConfirmPasskeyRegistration(e.ctx, e.user.ID, c.State, a.create(e.t, c, cer), "Soft key")
}

func (e *env) signIn(a *authenticator, opts *identity.PasskeySignInOptions, cer ceremony) (identity.VerifiedPasskey, error) {
	e.t.Helper()
	c, err := e.ws.BeginPasskeySignIn(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("BeginPasskeySignIn: %v", err)
	}
	return e.ws.VerifyPasskeySignIn(e.ctx, c.State, a.get(e.t, c, cer))
}

func wantCode(t *testing.T, what string, err error, want identity.Code) {
	t.Helper()
	if got := identity.ErrorCode(err); got != want {
		t.Errorf("%s: error %v (code %q), want %q", what, err, got, want)
	}
}

func TestRegistrationAndSignIn(t *testing.T) {
	e := newEnv(t, "https://id.example.com")
	a := newAuthenticator(t, []byte("credential-1"))
	p, err := e.register(a, good())
	if err != nil {
		t.Fatalf("registration: %v", err)
	}
	if p.ID != "Y3JlZGVudGlhbC0x" || p.AAGUID != "736f6674-2d61-7574-686e-2d3136627974" || p.BackupEligible || p.Name != "Soft key" {
		t.Errorf("passkey = %+v; want id Y3JlZGVudGlhbC0x, the soft AAGUID, not backup eligible, named Soft key", p)
	}
	if len(a.handle) != 32 {
		t.Errorf("user handle %x; want 32 bytes", a.handle)
	}
	cer := good()
	cer.count = 5
	v, err := e.signIn(a, nil, cer)
	if err != nil {
		t.Fatalf("discoverable sign-in: %v", err)
	}
	if v.User.ID != e.user.ID || !slices.Equal(v.AMR, []string{"hwk", "user", "mfa"}) || v.Passkey.SignCount != 5 {
		t.Errorf("sign-in = user %d amr %v count %d; want ada, [hwk user mfa], 5", v.User.ID, v.AMR, v.Passkey.SignCount)
	}
	cer.count = 6
	if _, err := e.signIn(a, &identity.PasskeySignInOptions{Login: "ada"}, cer); err != nil {
		t.Fatalf("username-first sign-in: %v", err)
	}
	// The counter going backwards: refused.
	cer.count = 6
	_, err = e.signIn(a, nil, cer)
	wantCode(t, "sign count 6 after 6", err, identity.CodeUnauthenticated)
	cer.count = 3
	_, err = e.signIn(a, nil, cer)
	wantCode(t, "sign count 3 after 6", err, identity.CodeUnauthenticated)

	// A state is used once.
	c, err := e.ws.BeginPasskeySignIn(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cer.count = 7
	resp := a.get(t, c, cer)
	if _, err := e.ws.VerifyPasskeySignIn(e.ctx, c.State, resp); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	_, err = e.ws.VerifyPasskeySignIn(e.ctx, c.State, resp)
	wantCode(t, "the same state and response again", err, identity.CodeTokenUsed)
}

func TestRegistrationRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*ceremony)
	}{
		{"user verification missing", func(c *ceremony) { c.flags = flagUP }},
		{"user presence missing", func(c *ceremony) { c.flags = flagUV }},
		{"wrong origin", func(c *ceremony) { c.origin = "https://id.example.com.evil.test" }},
		{"wrong RP id", func(c *ceremony) { c.rpID = "evil.test" }},
		{"not discoverable", func(c *ceremony) { c.rk = false }},
		{"backup state without eligibility", func(c *ceremony) { c.flags |= flagBS }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "https://id.example.com")
			cer := good()
			tc.edit(&cer)
			_, err := e.register(newAuthenticator(t, []byte{1, 2, 3}), cer)
			wantCode(t, tc.name, err, identity.CodeInvalid)
			if got, _ := e.ws.ListPasskeys(e.ctx, e.user.ID); len(got) != 0 {
				t.Errorf("ListPasskeys = %v; want none", got)
			}
		})
	}
}

func TestSignInRefusals(t *testing.T) {
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*ceremony)
	}{
		{"bad signature", func(c *ceremony) { c.signer = other }},
		{"user verification missing", func(c *ceremony) { c.flags = flagUP }},
		{"user presence missing", func(c *ceremony) { c.flags = flagUV }},
		{"wrong origin", func(c *ceremony) { c.origin = "https://evil.test" }},
		{"wrong RP id", func(c *ceremony) { c.rpID = "evil.test" }},
		{"backup eligibility changed", func(c *ceremony) { c.flags |= flagBE }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "https://id.example.com")
			a := newAuthenticator(t, []byte{1, 2, 3})
			if _, err := e.register(a, good()); err != nil {
				t.Fatal(err)
			}
			cer := good()
			tc.edit(&cer)
			_, err := e.signIn(a, nil, cer)
			wantCode(t, tc.name, err, identity.CodeUnauthenticated)
			// The same authenticator, honest, still signs in.
			if _, err := e.signIn(a, nil, good()); err != nil {
				t.Errorf("an honest sign-in after the refusal: %v", err)
			}
		})
	}
}

// TestLoopbackDevelopment: an http issuer on localhost is its own RP id
// and origin, for development.
func TestLoopbackDevelopment(t *testing.T) {
	e := newEnv(t, "http://localhost:8080")
	a := newAuthenticator(t, []byte{9})
	cer := ceremony{origin: "http://localhost:8080", rpID: "localhost", flags: flagUP | flagUV | flagBE | flagBS, rk: true}
	if _, err := e.register(a, cer); err != nil {
		t.Fatalf("registration on localhost: %v", err)
	}
	v, err := e.signIn(a, nil, cer)
	if err != nil {
		t.Fatalf("sign-in on localhost: %v", err)
	}
	if !slices.Equal(v.AMR, []string{"swk", "user", "mfa"}) {
		t.Errorf("AMR of a synced passkey = %v; want [swk user mfa]", v.AMR)
	}
}

// TestCeremonyChecksUserVerification: the ceremony refuses a response
// without user verification on its own, whatever the identity package
// checks after it.
func TestCeremonyChecksUserVerification(t *testing.T) {
	c := webauthn.New()
	req := identity.PasskeyRegistrationRequest{
		RelyingParty: identity.PasskeyRelyingParty{ID: "id.example.com", Origins: []string{"https://id.example.com"}},
		Challenge:    make([]byte, 32), UserHandle: make([]byte, 32), UserName: "ada", UserDisplayName: "Ada",
	}
	opts, err := c.BeginRegistration(req)
	if err != nil {
		t.Fatal(err)
	}
	a := newAuthenticator(t, []byte{1})
	cer := good()
	cer.flags = flagUP
	if _, err := c.FinishRegistration(req, a.create(t, identity.PasskeyChallenge{Options: opts}, cer)); err == nil {
		t.Error("FinishRegistration of a response without UV: no error")
	}
	cer.flags = flagUP | flagUV
	cred, err := c.FinishRegistration(req, a.create(t, identity.PasskeyChallenge{Options: opts}, cer))
	if err != nil || !cred.Flags.UserVerified || !cred.ResidentKey || string(cred.ID) != "\x01" {
		t.Errorf("FinishRegistration = %+v, %v; want credential 01, UV, resident", cred, err)
	}
}
