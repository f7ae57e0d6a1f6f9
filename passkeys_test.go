package identity_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// fakeCeremony is a PasskeyCeremony whose "browser" response is a JSON
// fakeResponse that says what a real one proves: the challenge, origin
// and RP id it was made for, the flags, and a "key" that stands for the
// signature (an assertion verifies when its key is the stored public
// key). Its options are fakeOptions.
type fakeCeremony struct{}

type fakeOptions struct {
	RPID      string   `json:"rpId"`
	Origins   []string `json:"origins"`
	Challenge []byte   `json:"challenge"`
	User      []byte   `json:"user,omitempty"`
	UserName  string   `json:"userName,omitempty"`
	Exclude   [][]byte `json:"exclude,omitempty"`
	Allow     [][]byte `json:"allow,omitempty"`
}

type fakeResponse struct {
	ID         []byte `json:"id"`
	UserHandle []byte `json:"userHandle,omitempty"`
	Challenge  []byte `json:"challenge"`
	Origin     string `json:"origin"`
	RPID       string `json:"rpId"`
	Key        []byte `json:"key"`
	UP         bool   `json:"up"`
	UV         bool   `json:"uv"`
	BE         bool   `json:"be"`
	BS         bool   `json:"bs"`
	RK         bool   `json:"rk"`
	SignCount  uint32 `json:"signCount"`
	AAGUID     []byte `json:"aaguid"`
}

func (fakeCeremony) BeginRegistration(r identity.PasskeyRegistrationRequest) ([]byte, error) {
	return json.Marshal(fakeOptions{RPID: r.RelyingParty.ID, Origins: r.RelyingParty.Origins, Challenge: r.Challenge,
		User: r.UserHandle, UserName: r.UserName, Exclude: r.Exclude})
}

func (fakeCeremony) check(rp identity.PasskeyRelyingParty, challenge []byte, resp fakeResponse) error {
	switch {
	case !bytes.Equal(resp.Challenge, challenge):
		return errors.New("another challenge")
	case !slices.Contains(rp.Origins, resp.Origin):
		return errors.New("origin not allowed")
	case resp.RPID != rp.ID:
		return errors.New("another RP id")
	}
	return nil
}

func (c fakeCeremony) FinishRegistration(r identity.PasskeyRegistrationRequest, response []byte) (identity.PasskeyCredential, error) {
	var resp fakeResponse
	if err := json.Unmarshal(response, &resp); err != nil {
		return identity.PasskeyCredential{}, err
	}
	if err := c.check(r.RelyingParty, r.Challenge, resp); err != nil {
		return identity.PasskeyCredential{}, err
	}
	return identity.PasskeyCredential{ID: resp.ID, PublicKey: resp.Key, SignCount: resp.SignCount, AAGUID: resp.AAGUID,
		Flags:       identity.PasskeyFlags{UserPresent: resp.UP, UserVerified: resp.UV, BackupEligible: resp.BE, BackupState: resp.BS},
		ResidentKey: resp.RK}, nil
}

func (fakeCeremony) BeginAssertion(r identity.PasskeyAssertionRequest) ([]byte, error) {
	return json.Marshal(fakeOptions{RPID: r.RelyingParty.ID, Origins: r.RelyingParty.Origins, Challenge: r.Challenge, Allow: r.Allow})
}

func (fakeCeremony) ParseAssertion(response []byte) ([]byte, []byte, error) {
	var resp fakeResponse
	if err := json.Unmarshal(response, &resp); err != nil {
		return nil, nil, err
	}
	return resp.ID, resp.UserHandle, nil
}

func (c fakeCeremony) FinishAssertion(r identity.PasskeyAssertionRequest, cred identity.PasskeyCredential, response []byte) (identity.PasskeyAssertionResult, error) {
	var resp fakeResponse
	if err := json.Unmarshal(response, &resp); err != nil {
		return identity.PasskeyAssertionResult{}, err
	}
	if err := c.check(r.RelyingParty, r.Challenge, resp); err != nil {
		return identity.PasskeyAssertionResult{}, err
	}
	if !bytes.Equal(resp.Key, cred.PublicKey) || !bytes.Equal(resp.ID, cred.ID) {
		return identity.PasskeyAssertionResult{}, errors.New("bad signature")
	}
	if len(r.Allow) > 0 && !slices.ContainsFunc(r.Allow, func(id []byte) bool { return bytes.Equal(id, resp.ID) }) {
		return identity.PasskeyAssertionResult{}, errors.New("credential not allowed")
	}
	return identity.PasskeyAssertionResult{SignCount: resp.SignCount,
		Flags: identity.PasskeyFlags{UserPresent: resp.UP, UserVerified: resp.UV, BackupEligible: resp.BE, BackupState: resp.BS}}, nil
}

// iCloudAAGUID is iCloud Keychain's AAGUID, one the library names.
var iCloudAAGUID = []byte{0xfb, 0xfc, 0x30, 0x07, 0x15, 0x4e, 0x4e, 0xcc, 0x8c, 0x0b, 0x6e, 0x02, 0x05, 0x57, 0xd7, 0xbd}

// newPasskeyEnv returns a test env whose Service has the fake ceremony
// and the issuer base https://id.example.com.
func newPasskeyEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnv(t, &identity.Options{IssuerBase: "https://id.example.com", PasskeyCeremony: fakeCeremony{}})
}

// setPasskeys sets the workspace's passkey policy.
func (e *testEnv) setPasskeys(p identity.PasskeyPolicy) {
	e.t.Helper()
	set, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	set.Passkeys = p
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		e.t.Fatal(err)
	}
}

// options decodes a challenge's options.
func fakeOpts(t *testing.T, c identity.PasskeyChallenge) fakeOptions {
	t.Helper()
	var o fakeOptions
	if err := json.Unmarshal(c.Options, &o); err != nil {
		t.Fatalf("options %s: %v", c.Options, err)
	}
	return o
}

// goodResponse is what an honest authenticator answers to the options:
// a synced passkey (BE, BS) of credential id, "signed" with key.
func goodResponse(o fakeOptions, id []byte) fakeResponse {
	return fakeResponse{ID: id, UserHandle: o.User, Challenge: o.Challenge, Origin: o.Origins[0], RPID: o.RPID,
		Key: append([]byte("key-"), id...), UP: true, UV: true, BE: true, BS: true, RK: true, SignCount: 0, AAGUID: iCloudAAGUID}
}

func encode(t *testing.T, r fakeResponse) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// register registers a passkey with credential id id for the user and
// returns it, with the user's handle.
func (e *testEnv) register(ws *identity.Workspace, userID int64, id []byte, edit func(*fakeResponse)) (identity.Passkey, []byte) {
	e.t.Helper()
	c, err := ws.BeginPasskeyRegistration(e.ctx, userID)
	if err != nil {
		e.t.Fatalf("BeginPasskeyRegistration: %v", err)
	}
	o := fakeOpts(e.t, c)
	r := goodResponse(o, id)
	if edit != nil {
		edit(&r)
	}
	p, err := ws.ConfirmPasskeyRegistration(e.ctx, userID, c.State, encode(e.t, r), "Laptop")
	if err != nil {
		e.t.Fatalf("ConfirmPasskeyRegistration: %v", err)
	}
	return p, o.User
}

func wantCode(t *testing.T, what string, err error, want identity.Code) {
	t.Helper()
	if got := identity.ErrorCode(err); got != want {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, want)
	}
}

func TestPasskeyRegistration(t *testing.T) {
	e := newPasskeyEnv(t)
	created := e.clock.Now().UTC().Truncate(time.Microsecond)
	c, err := e.ws.BeginPasskeyRegistration(e.ctx, e.ada.ID)
	if err != nil {
		t.Fatalf("BeginPasskeyRegistration: %v", err)
	}
	o := fakeOpts(t, c)
	if o.RPID != "id.example.com" || !slices.Equal(o.Origins, []string{"https://id.example.com"}) || o.UserName != "ada" ||
		len(o.User) != 32 || len(o.Challenge) != 32 || len(o.Exclude) != 0 {
		t.Errorf("options = %+v; want RP id.example.com, origin https://id.example.com, user ada, a 32-byte handle and challenge, nothing excluded", o)
	}
	// Refusals of the response leave the state usable.
	for _, tc := range []struct {
		name string
		edit func(*fakeResponse)
	}{
		{"no user verification", func(r *fakeResponse) { r.UV = false }},
		{"no user presence", func(r *fakeResponse) { r.UP = false }},
		{"not discoverable", func(r *fakeResponse) { r.RK = false }},
		{"wrong origin", func(r *fakeResponse) { r.Origin = "https://evil.example" }},
		{"wrong RP id", func(r *fakeResponse) { r.RPID = "evil.example" }},
		{"another challenge", func(r *fakeResponse) { r.Challenge = bytes.Repeat([]byte{1}, 32) }},
	} {
		r := goodResponse(o, []byte{1, 2, 3})
		tc.edit(&r)
		_, err := e.ws.ConfirmPasskeyRegistration(e.ctx, e.ada.ID, c.State, encode(t, r), "Laptop")
		wantCode(t, tc.name, err, identity.CodeInvalid)
	}
	bob := e.user("bob")
	_, err = e.ws.ConfirmPasskeyRegistration(e.ctx, bob.ID, c.State, encode(t, goodResponse(o, []byte{1, 2, 3})), "x")
	wantCode(t, "another user's state", err, identity.CodeTokenInvalid)

	p, err := e.ws.ConfirmPasskeyRegistration(e.ctx, e.ada.ID, c.State, encode(t, goodResponse(o, []byte{1, 2, 3})), " Laptop ")
	if err != nil {
		t.Fatalf("ConfirmPasskeyRegistration: %v", err)
	}
	want := identity.Passkey{ID: "AQID", Name: "Laptop", CreatedAt: created, AAGUID: "fbfc3007-154e-4ecc-8c0b-6e020557d7bd",
		AuthenticatorName: "iCloud Keychain", BackupEligible: true, BackupState: true}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("ConfirmPasskeyRegistration (-want +got):\n%s", diff)
	}
	_, err = e.ws.ConfirmPasskeyRegistration(e.ctx, e.ada.ID, c.State, encode(t, goodResponse(o, []byte{9})), "again")
	wantCode(t, "the state again", err, identity.CodeTokenUsed)

	// The second registration excludes the first credential and keeps
	// the handle.
	c2, err := e.ws.BeginPasskeyRegistration(e.ctx, e.ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	o2 := fakeOpts(t, c2)
	if !bytes.Equal(o2.User, o.User) || !slices.EqualFunc(o2.Exclude, [][]byte{{1, 2, 3}}, bytes.Equal) {
		t.Errorf("second options: user %x exclude %v; want user %x exclude [[1 2 3]]", o2.User, o2.Exclude, o.User)
	}
	_, err = e.ws.ConfirmPasskeyRegistration(e.ctx, e.ada.ID, c2.State, encode(t, goodResponse(o2, []byte{1, 2, 3})), "dup")
	wantCode(t, "a credential registered already", err, identity.CodeConflict)
	// Another user gets another handle.
	bc, err := e.ws.BeginPasskeyRegistration(e.ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := fakeOpts(t, bc).User; len(h) != 32 || bytes.Equal(h, o.User) {
		t.Errorf("bob's handle %x; want 32 bytes other than ada's %x", h, o.User)
	}

	e.clock.Advance(identity.PasskeyCeremonyLifetime)
	_, err = e.ws.ConfirmPasskeyRegistration(e.ctx, e.ada.ID, c2.State, encode(t, goodResponse(o2, []byte{7})), "late")
	wantCode(t, "an expired state", err, identity.CodeTokenExpired)

	got, err := e.ws.ListPasskeys(e.ctx, e.ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]identity.Passkey{want}, got); diff != "" {
		t.Errorf("ListPasskeys (-want +got):\n%s", diff)
	}
	var added []identity.AuditRecord
	for _, r := range e.trail(created) {
		if r.Action == identity.AuditPasskeyAdded {
			added = append(added, r)
		}
	}
	if len(added) != 1 || added[0].Changes["passkeyId"].After != "AQID" {
		t.Errorf("user.passkey.added records = %+v; want one for AQID", added)
	}
}

func TestPasskeyCapAndPolicy(t *testing.T) {
	e := newPasskeyEnv(t)
	set, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	set.Limits.PasskeysPerUser = 2
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	e.register(e.ws, e.ada.ID, []byte{1}, nil)
	e.register(e.ws, e.ada.ID, []byte{2}, nil)
	_, err = e.ws.BeginPasskeyRegistration(e.ctx, e.ada.ID)
	wantCode(t, "a third passkey over a cap of 2", err, identity.CodeLimitReached)

	for _, bad := range []int{-1, identity.MaxPasskeysPerUser + 1} {
		set.Limits.PasskeysPerUser = bad
		wantCode(t, "PasskeysPerUser out of range", e.ws.UpdateSettings(e.ctx, set), identity.CodeInvalid)
	}
	set.Limits.PasskeysPerUser = 2
	set.Passkeys = "sometimes"
	wantCode(t, "an unknown policy", e.ws.UpdateSettings(e.ctx, set), identity.CodeInvalid)

	set.Passkeys = identity.PasskeysOff
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.BeginPasskeyRegistration(e.ctx, e.ada.ID)
	wantCode(t, "registration under off", err, identity.CodeForbidden)
	_, err = e.ws.BeginPasskeySignIn(e.ctx, nil)
	wantCode(t, "sign-in under off", err, identity.CodeForbidden)

	if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	set.Passkeys = identity.PasskeysAllowed
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.BeginPasskeyRegistration(e.ctx, e.ada.ID)
	wantCode(t, "registration of a disabled user", err, identity.CodeForbidden)

	bare := newTestEnv(t, &identity.Options{IssuerBase: "https://id.example.com"})
	_, err = bare.ws.BeginPasskeyRegistration(bare.ctx, bare.ada.ID)
	wantCode(t, "no ceremony", err, identity.CodeInternal)
}

// signIn runs a discoverable passkey sign-in with the response edit makes
// of an honest one for credential id.
func (e *testEnv) passkeySignIn(ws *identity.Workspace, opts *identity.PasskeySignInOptions, id []byte, handle []byte, edit func(*fakeResponse)) (identity.VerifiedPasskey, error) {
	e.t.Helper()
	return e.passkeySignInFrom(e.ctx, ws, opts, id, handle, edit)
}

// passkeySignInFrom is passkeySignIn with the context ctx (a request from
// an address).
func (e *testEnv) passkeySignInFrom(ctx context.Context, ws *identity.Workspace, opts *identity.PasskeySignInOptions, id []byte, handle []byte, edit func(*fakeResponse)) (identity.VerifiedPasskey, error) {
	e.t.Helper()
	c, err := ws.BeginPasskeySignIn(ctx, opts)
	if err != nil {
		e.t.Fatalf("BeginPasskeySignIn: %v", err)
	}
	r := goodResponse(fakeOpts(e.t, c), id)
	r.UserHandle = handle
	if edit != nil {
		edit(&r)
	}
	return ws.VerifyPasskeySignIn(ctx, c.State, encode(e.t, r))
}

// TestPasskeySignInThrottled: the workspace's ThrottlePolicy counts a
// refused passkey sign-in under its address, and under the login of the
// credential's user when the workspace has the credential; a success
// gives its counts back; past the count a right passkey is refused too.
func TestPasskeySignInThrottled(t *testing.T) {
	e := newPasskeyEnv(t)
	_, handle := e.register(e.ws, e.ada.ID, []byte{1}, nil)
	forged := func(r *fakeResponse) { r.Key = []byte("forged") }
	e.setThrottle(identity.ThrottlePolicy{PerAddress: identity.Rate{Count: 2, Window: time.Hour}, PerLogin: identity.Rate{Count: 3, Window: time.Hour}})
	from := e.from("192.0.2.9")
	steps := []struct {
		name string
		id   []byte
		edit func(*fakeResponse)
		want identity.Code
	}{
		{"an unknown credential", []byte{9}, nil, identity.CodeUnauthenticated},
		{"ada's passkey", []byte{1}, nil, ""},
		{"ada's passkey again", []byte{1}, nil, ""},
		{"a forged signature", []byte{1}, forged, identity.CodeUnauthenticated},
		{"ada's passkey past the count", []byte{1}, nil, identity.CodeRateLimited},
		{"an unknown credential past the count", []byte{9}, nil, identity.CodeRateLimited},
	}
	for _, s := range steps {
		_, err := e.passkeySignInFrom(from, e.ws, nil, s.id, handle, s.edit)
		if got := identity.ErrorCode(err); got != s.want {
			t.Errorf("%s: %q, want %q", s.name, got, s.want)
		}
	}
	// Ada's login has 1 failure of 3; two more from other addresses fill
	// it, so her password is refused from a third. Unknown credentials
	// count under no login.
	for _, addr := range []string{"192.0.2.10", "192.0.2.11"} {
		_, err := e.passkeySignInFrom(e.from(addr), e.ws, nil, []byte{9}, handle, nil)
		wantCode(t, "an unknown credential from "+addr, err, identity.CodeUnauthenticated)
		_, err = e.passkeySignInFrom(e.from(addr), e.ws, nil, []byte{1}, handle, forged)
		wantCode(t, "a forged signature from "+addr, err, identity.CodeUnauthenticated)
	}
	_, err := e.ws.Authenticate(e.from("192.0.2.12"), "ada", adaPassword)
	wantCode(t, "ada's password after three passkey failures", err, identity.CodeRateLimited)
	_, err = e.passkeySignInFrom(e.from("192.0.2.13"), e.ws, nil, []byte{9}, handle, nil)
	wantCode(t, "a fourth unknown credential from a fourth address", err, identity.CodeUnauthenticated)
}

func TestPasskeySignIn(t *testing.T) {
	e := newPasskeyEnv(t)
	_, handle := e.register(e.ws, e.ada.ID, []byte{1, 2, 3}, nil)
	// A device-bound key (not backup eligible), with a counter.
	e.register(e.ws, e.ada.ID, []byte{4}, func(r *fakeResponse) { r.BE, r.BS, r.SignCount = false, false, 10 })
	// Under MFARequired: a passkey is the second factor itself.
	set, _ := e.ws.GetSettings(e.ctx)
	set.MFA = identity.MFARequired
	set.Lockout.Threshold = 3
	if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	used := e.clock.Now().UTC().Truncate(time.Microsecond)

	v, err := e.passkeySignIn(e.ws, nil, []byte{1, 2, 3}, handle, func(r *fakeResponse) { r.SignCount = 0 })
	if err != nil {
		t.Fatalf("VerifyPasskeySignIn: %v", err)
	}
	if v.User.ID != e.ada.ID || !slices.Equal(v.AMR, []string{"swk", "user", "mfa"}) || !v.Passkey.LastUsedAt.Equal(used) {
		t.Errorf("synced passkey sign-in = user %d amr %v last used %v; want ada, [swk user mfa], %v", v.User.ID, v.AMR, v.Passkey.LastUsedAt, used)
	}
	if got := v.SessionOptions().AMR; !slices.Equal(got, []string{"swk", "user", "mfa"}) {
		t.Errorf("SessionOptions().AMR = %v", got)
	}
	v, err = e.passkeySignIn(e.ws, &identity.PasskeySignInOptions{Login: "ADA"}, []byte{4}, nil, func(r *fakeResponse) {
		r.BE, r.BS, r.SignCount = false, false, 11
	})
	if err != nil {
		t.Fatalf("username-first sign-in: %v", err)
	}
	if !slices.Equal(v.AMR, []string{"hwk", "user", "mfa"}) || v.Passkey.SignCount != 11 {
		t.Errorf("device-bound sign-in amr %v count %d; want [hwk user mfa], 11", v.AMR, v.Passkey.SignCount)
	}
	// The username-first options allow ada's credentials; an unknown
	// login gets a discoverable sign-in's.
	c, _ := e.ws.BeginPasskeySignIn(e.ctx, &identity.PasskeySignInOptions{Login: "ada@example.com"})
	if got := fakeOpts(t, c).Allow; !slices.EqualFunc(got, [][]byte{{1, 2, 3}, {4}}, bytes.Equal) {
		t.Errorf("username-first allow = %v; want [[1 2 3] [4]]", got)
	}
	c, _ = e.ws.BeginPasskeySignIn(e.ctx, &identity.PasskeySignInOptions{Login: "nobody"})
	if got := fakeOpts(t, c).Allow; len(got) != 0 {
		t.Errorf("unknown login allow = %v; want none", got)
	}

	// The state is single-use.
	c, _ = e.ws.BeginPasskeySignIn(e.ctx, nil)
	r := goodResponse(fakeOpts(t, c), []byte{1, 2, 3})
	r.UserHandle = handle
	if _, err := e.ws.VerifyPasskeySignIn(e.ctx, c.State, encode(t, r)); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.VerifyPasskeySignIn(e.ctx, c.State, encode(t, r))
	wantCode(t, "the state again", err, identity.CodeTokenUsed)

	// An unknown credential counts toward nothing: five of them, and a
	// good sign-in still goes through (threshold 3).
	for range 5 {
		_, err := e.passkeySignIn(e.ws, nil, []byte{9, 9}, handle, nil)
		wantCode(t, "unknown credential", err, identity.CodeUnauthenticated)
	}
	if _, err := e.passkeySignIn(e.ws, nil, []byte{1, 2, 3}, handle, nil); err != nil {
		t.Fatalf("after unknown credentials: %v", err)
	}

	// Failures of a known credential count, each refused alike; the
	// sign count going backwards (11 stored, 11 given) among them.
	fails := []func(*fakeResponse){
		func(r *fakeResponse) { r.Key = []byte("forged") },
		func(r *fakeResponse) { r.UV = false },
		func(r *fakeResponse) { r.BE, r.SignCount = false, 11 },
	}
	ids := [][]byte{{1, 2, 3}, {1, 2, 3}, {4}}
	for i, f := range fails {
		_, err := e.passkeySignIn(e.ws, nil, ids[i], handle, f)
		wantCode(t, "failure", err, identity.CodeUnauthenticated)
	}
	_, err = e.passkeySignIn(e.ws, nil, []byte{1, 2, 3}, handle, nil)
	wantCode(t, "a good passkey after three failures", err, identity.CodeLocked)
	var clone []identity.AuditRecord
	for _, rec := range e.trail(used) {
		if rec.Action == identity.AuditPasskeyCloneSuspected {
			clone = append(clone, rec)
		}
	}
	if len(clone) != 1 || clone[0].Changes["signCount"].Before != float64(11) && clone[0].Changes["signCount"].Before != int64(11) {
		t.Errorf("passkey.clone_suspected records = %+v; want one, count 11 -> 11", clone)
	}
}

func TestPasskeySignInRefusals(t *testing.T) {
	e := newPasskeyEnv(t)
	_, handle := e.register(e.ws, e.ada.ID, []byte{1}, nil)
	for _, tc := range []struct {
		name string
		edit func(*fakeResponse)
	}{
		{"no user presence", func(r *fakeResponse) { r.UP = false }},
		{"wrong origin", func(r *fakeResponse) { r.Origin = "https://evil.example" }},
		{"wrong RP id", func(r *fakeResponse) { r.RPID = "evil.example" }},
		{"another user handle", func(r *fakeResponse) { r.UserHandle = bytes.Repeat([]byte{7}, 32) }},
	} {
		_, err := e.passkeySignIn(e.ws, nil, []byte{1}, handle, tc.edit)
		wantCode(t, tc.name, err, identity.CodeUnauthenticated)
	}
	// A workspace on the same host does not know acme's credential.
	globex, err := e.svc.CreateWorkspace(e.ctx, "globex", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.passkeySignIn(globex, nil, []byte{1}, handle, nil)
	wantCode(t, "acme's credential at globex", err, identity.CodeUnauthenticated)

	if err := e.ws.DisableUser(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.passkeySignIn(e.ws, nil, []byte{1}, handle, nil)
	wantCode(t, "a disabled user", err, identity.CodeUnauthenticated)
}

func TestPasskeysRequired(t *testing.T) {
	e := newPasskeyEnv(t)
	e.setPasskeys(identity.PasskeysRequired)
	_, err := e.ws.Authenticate(e.ctx, "ada", adaPassword)
	wantCode(t, "a password sign-in without a passkey", err, identity.CodePasskeyEnrollmentRequired)
	var ie *identity.Error
	if !errors.As(err, &ie) || ie.Challenge == "" {
		t.Fatalf("error %v carries no challenge", err)
	}
	c, err := e.ws.BeginChallengePasskeyRegistration(e.ctx, ie.Challenge)
	if err != nil {
		t.Fatalf("BeginChallengePasskeyRegistration: %v", err)
	}
	resp := encode(t, goodResponse(fakeOpts(t, c), []byte{5}))
	v, err := e.ws.ConfirmChallengePasskeyRegistration(e.ctx, ie.Challenge, c.State, resp, "Phone")
	if err != nil {
		t.Fatalf("ConfirmChallengePasskeyRegistration: %v", err)
	}
	if v.User.ID != e.ada.ID || v.Passkey.ID != "BQ" || !slices.Equal(v.AMR, []string{"pwd"}) {
		t.Errorf("enrolment = user %d passkey %q amr %v; want ada, BQ, [pwd]", v.User.ID, v.Passkey.ID, v.AMR)
	}
	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("sign-ins recorded = %+v, %v; want one", page.Records, err)
	}
	if diff := cmp.Diff(identity.AuditChange{After: "password"}, page.Records[0].Changes["method"]); diff != "" {
		t.Errorf("the sign-in's method (-want +got):\n%s", diff)
	}
	_, err = e.ws.BeginChallengePasskeyRegistration(e.ctx, ie.Challenge)
	wantCode(t, "the challenge again", err, identity.CodeTokenUsed)
	if _, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil {
		t.Errorf("a password sign-in with a passkey: %v", err)
	}
	// The user cannot remove their last passkey; with two, one may go.
	wantCode(t, "removing the last passkey", e.ws.RemovePasskey(e.ctx, e.ada.ID, "BQ"), identity.CodeConflict)
	e.register(e.ws, e.ada.ID, []byte{6}, nil)
	if err := e.ws.RemovePasskey(e.ctx, e.ada.ID, "BQ"); err != nil {
		t.Errorf("RemovePasskey with two: %v", err)
	}
	wantCode(t, "removing the last one again", e.ws.RemovePasskey(e.ctx, e.ada.ID, "Bg"), identity.CodeConflict)
	// An administrator can: the user registers a new one at their next
	// password sign-in.
	if err := e.ws.DeletePasskey(e.ctx, e.ada.ID, "Bg"); err != nil {
		t.Fatalf("DeletePasskey of the last one: %v", err)
	}
	_, err = e.ws.Authenticate(e.ctx, "ada", adaPassword)
	wantCode(t, "a password sign-in without a passkey again", err, identity.CodePasskeyEnrollmentRequired)
}

// TestPasskeysRequiredAfterSecondFactor: under "required", a user with a
// second factor and no passkey gives the code, then registers a passkey,
// which completes the sign-in with the code's AMR and method; a user who
// enrols the second factor in the sign-in completes it with the code.
func TestPasskeysRequiredAfterSecondFactor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		recovery   bool
		wantMethod string
	}{
		{"a TOTP code", false, "password+totp"},
		{"a recovery code", true, "recovery_code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPasskeyEnv(t)
			secret, codes := e.enrol(e.ada.ID)
			e.setPasskeys(identity.PasskeysRequired)
			mfa := e.challenge(identity.CodeMFARequired)
			_, err := e.ws.VerifySecondFactor(e.ctx, mfa, "000000")
			wantCode(t, "a wrong code", err, identity.CodeUnauthenticated)
			code := e.code(secret, 0)
			if tc.recovery {
				code = codes[0]
			}
			_, err = e.ws.VerifySecondFactor(e.ctx, mfa, code)
			wantCode(t, "a right code without a passkey", err, identity.CodePasskeyEnrollmentRequired)
			var ie *identity.Error
			if !errors.As(err, &ie) || !strings.HasPrefix(ie.Challenge, "idpe_") {
				t.Fatalf("error %v carries no enrolment challenge", err)
			}
			if st, err := e.ws.GetLockState(e.ctx, e.ada.ID); err != nil || st.Failures != 0 {
				t.Errorf("failures after the right code = %+v, %v; want 0", st, err)
			}
			_, err = e.ws.VerifySecondFactor(e.ctx, mfa, e.code(secret, 30*time.Second))
			wantCode(t, "the second-factor challenge again", err, identity.CodeTokenUsed)
			page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, nil)
			if err != nil || len(page.Records) != 0 {
				t.Fatalf("sign-ins recorded before the passkey = %+v, %v; want none", page.Records, err)
			}
			c, err := e.ws.BeginChallengePasskeyRegistration(e.ctx, ie.Challenge)
			if err != nil {
				t.Fatalf("BeginChallengePasskeyRegistration: %v", err)
			}
			v, err := e.ws.ConfirmChallengePasskeyRegistration(e.ctx, ie.Challenge, c.State, encode(t, goodResponse(fakeOpts(t, c), []byte{7})), "Key")
			if err != nil {
				t.Fatalf("ConfirmChallengePasskeyRegistration: %v", err)
			}
			if v.User.ID != e.ada.ID || v.Passkey.ID != "Bw" || !slices.Equal(v.AMR, []string{"pwd", "otp", "mfa"}) {
				t.Errorf("enrolment = user %d passkey %q amr %v; want ada, Bw, [pwd otp mfa]", v.User.ID, v.Passkey.ID, v.AMR)
			}
			page, err = e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, nil)
			if err != nil || len(page.Records) != 1 {
				t.Fatalf("sign-ins recorded = %+v, %v; want one", page.Records, err)
			}
			if diff := cmp.Diff(identity.AuditChange{After: tc.wantMethod}, page.Records[0].Changes["method"]); diff != "" {
				t.Errorf("the sign-in's method (-want +got):\n%s", diff)
			}
			// With a passkey, the code completes the next sign-in.
			e.clock.Advance(time.Minute)
			mfa = e.challenge(identity.CodeMFARequired)
			if _, err := e.ws.VerifySecondFactor(e.ctx, mfa, e.code(secret, 0)); err != nil {
				t.Errorf("the code of a user with a passkey: %v", err)
			}
		})
	}
	t.Run("enrolling the second factor", func(t *testing.T) {
		e := newPasskeyEnv(t)
		set, _ := e.ws.GetSettings(e.ctx)
		set.Passkeys, set.MFA = identity.PasskeysRequired, identity.MFARequired
		if err := e.ws.UpdateSettings(e.ctx, set); err != nil {
			t.Fatal(err)
		}
		mfa := e.challenge(identity.CodeMFAEnrollmentRequired)
		en, err := e.ws.BeginChallengeEnrollment(e.ctx, mfa)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.ws.VerifySecondFactor(e.ctx, mfa, e.code(en.Secret, 0))
		if err != nil || len(v.RecoveryCodes) != 10 {
			t.Fatalf("VerifySecondFactor that enrols = %d codes, %v; want 10, nil", len(v.RecoveryCodes), err)
		}
		e.clock.Advance(time.Minute)
		mfa = e.challenge(identity.CodeMFARequired)
		_, err = e.ws.VerifySecondFactor(e.ctx, mfa, e.code(en.Secret, 0))
		wantCode(t, "the next sign-in's code", err, identity.CodePasskeyEnrollmentRequired)
	})
	t.Run("the two challenges do not mix", func(t *testing.T) {
		// A challenge's variant is the kind's: the TOTP one is refused where
		// a second-factor challenge is expected, and the reverse.
		e := newPasskeyEnv(t)
		secret, _ := e.enrol(e.ada.ID)
		e.setPasskeys(identity.PasskeysRequired)
		mfa := e.challenge(identity.CodeMFARequired)
		_, err := e.ws.BeginChallengePasskeyRegistration(e.ctx, mfa)
		wantCode(t, "a second-factor challenge as an enrolment's", err, identity.CodeTokenInvalid)
		_, err = e.ws.VerifySecondFactor(e.ctx, mfa, e.code(secret, 0))
		var ie *identity.Error
		if !errors.As(err, &ie) {
			t.Fatalf("VerifySecondFactor: %v", err)
		}
		_, err = e.ws.VerifySecondFactor(e.ctx, ie.Challenge, e.code(secret, 30*time.Second))
		wantCode(t, "an enrolment challenge as a second factor's", err, identity.CodeTokenInvalid)
	})
}

func TestPasskeyRenameDelete(t *testing.T) {
	e := newPasskeyEnv(t)
	e.register(e.ws, e.ada.ID, []byte{1}, nil)
	bob := e.user("bob")
	p, err := e.ws.UpdatePasskey(e.ctx, e.ada.ID, "AQ", "  Work laptop ")
	if err != nil || p.Name != "Work laptop" {
		t.Errorf("UpdatePasskey = %q, %v; want Work laptop", p.Name, err)
	}
	_, err = e.ws.UpdatePasskey(e.ctx, e.ada.ID, "AQ", "")
	wantCode(t, "an empty name", err, identity.CodeInvalid)
	_, err = e.ws.UpdatePasskey(e.ctx, bob.ID, "AQ", "mine")
	wantCode(t, "another user's passkey", err, identity.CodeNotFound)
	wantCode(t, "deleting another user's passkey", e.ws.DeletePasskey(e.ctx, bob.ID, "AQ"), identity.CodeNotFound)
	if err := e.ws.DeletePasskey(e.ctx, e.ada.ID, "AQ"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "deleting it again", e.ws.DeletePasskey(e.ctx, e.ada.ID, "AQ"), identity.CodeNotFound)
	got, err := e.ws.ListPasskeys(e.ctx, e.ada.ID)
	if err != nil || len(got) != 0 {
		t.Errorf("ListPasskeys after the delete = %v, %v; want []", got, err)
	}
	_, err = e.ws.ListPasskeys(e.ctx, 999)
	wantCode(t, "an unknown user", err, identity.CodeNotFound)
}

func TestPasskeysErased(t *testing.T) {
	e := newPasskeyEnv(t)
	_, handle := e.register(e.ws, e.ada.ID, []byte{1}, nil)
	e.register(e.ws, e.ada.ID, []byte{2}, nil)
	if _, err := e.ws.DeleteUserPermanently(e.ctx, e.ada.ID); err != nil {
		t.Fatalf("DeleteUserPermanently: %v", err)
	}
	err := e.st.View(e.ctx, func(tx store.Tx) error {
		for _, id := range []string{"AQ", "Ag"} {
			if _, err := tx.Passkey("acme", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Passkey(%s) after the erasure: %v, want ErrNotFound", id, err)
			}
		}
		if _, err := tx.UserIDByPasskeyHandle("acme", handle); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the handle after the erasure: %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The credential no longer signs anyone in.
	_, err = e.passkeySignIn(e.ws, nil, []byte{1}, handle, nil)
	wantCode(t, "a sign-in with an erased passkey", err, identity.CodeUnauthenticated)
}

// TestPasskeysExportImport: an export carries the passkeys and the
// handle, and an import into another workspace keeps them signing in.
func TestPasskeysExportImport(t *testing.T) {
	e := newPasskeyEnv(t)
	_, handle := e.register(e.ws, e.ada.ID, []byte{1, 2, 3}, nil)
	e.register(e.ws, e.ada.ID, []byte{4}, func(r *fakeResponse) { r.BE, r.BS, r.SignCount, r.AAGUID = false, false, 10, nil })
	if _, err := e.passkeySignIn(e.ws, nil, []byte{1, 2, 3}, handle, func(r *fakeResponse) { r.SignCount = 0 }); err != nil {
		t.Fatal(err)
	}
	want, err := e.ws.ListPasskeys(e.ctx, e.ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	var users []identity.ImportedUser
	if err := e.ws.ExportUsers(e.ctx, func(u identity.ImportedUser) error { users = append(users, u); return nil }); err != nil {
		t.Fatal(err)
	}
	// Through JSON, as identityd's files carry them.
	b, err := json.Marshal(users)
	if err != nil {
		t.Fatal(err)
	}
	users = nil
	if err := json.Unmarshal(b, &users); err != nil {
		t.Fatal(err)
	}
	wantJSON := []identity.ImportedPasskey{
		{ID: "AQID", Name: "Laptop", PublicKey: "a2V5LQECAw", AAGUID: "fbfc3007-154e-4ecc-8c0b-6e020557d7bd", BackupEligible: true,
			BackupState: true, CreatedAt: want[0].CreatedAt, LastUsedAt: want[0].LastUsedAt},
		{ID: "BA", Name: "Laptop", PublicKey: "a2V5LQQ", SignCount: 10, CreatedAt: want[1].CreatedAt},
	}
	if diff := cmp.Diff(wantJSON, users[0].Passkeys); diff != "" || users[0].PasskeyHandle != base64URL(handle) {
		t.Errorf("exported passkeys (-want +got):\n%s\nhandle %q, want %q", diff, users[0].PasskeyHandle, base64URL(handle))
	}
	globex, err := e.svc.CreateWorkspace(e.ctx, "globex", nil)
	if err != nil {
		t.Fatal(err)
	}
	imported, err := globex.ImportUsers(e.ctx, users)
	if err != nil {
		t.Fatalf("ImportUsers: %v", err)
	}
	got, err := globex.ListPasskeys(e.ctx, imported[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("imported passkeys (-want +got):\n%s", diff)
	}
	v, err := e.passkeySignIn(globex, nil, []byte{4}, handle, func(r *fakeResponse) { r.BE, r.BS, r.SignCount = false, false, 11 })
	if err != nil || v.User.ID != imported[0].ID {
		t.Errorf("a sign-in at globex with the imported passkey = %+v, %v", v.User, err)
	}
	// Again: the credentials and the handle are taken.
	users[0].Username, users[0].Email = "ada2", "ada2@example.com"
	_, err = globex.ImportUsers(e.ctx, users)
	wantCode(t, "importing the passkeys again", err, identity.CodeConflict)
	users[0].PasskeyHandle = "!"
	_, err = globex.ImportUsers(e.ctx, users)
	wantCode(t, "a malformed handle", err, identity.CodeInvalid)
}

func base64URL(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// TestProviderPasskeyEnrollmentRecordedOnce: at the provider, a password
// sign-in under "required" registers a passkey through
// Provider.ConfirmChallengePasskeyRegistration, which records no sign-in
// of its own; CompleteSignIn with its SessionOptions records the one, with
// the password's AMR and method. A request no longer pending is refused
// before anything is registered.
func TestProviderPasskeyEnrollmentRecordedOnce(t *testing.T) {
	opts := tokenOpts()
	opts.IssuerBase, opts.PasskeyCeremony = "https://id.example.com", fakeCeremony{}
	e := newOIDCEnv(t, opts)
	e.setPasskeys(identity.PasskeysRequired)
	p := e.ws.Provider()
	pending := e.authorize(e.webRequest(), "")
	_, err := p.SignIn(e.ctx, pending.RequestID, "ada", adaPassword)
	wantCode(t, "a password sign-in without a passkey", err, identity.CodePasskeyEnrollmentRequired)
	challenge := err.(*identity.Error).Challenge
	c, err := e.ws.BeginChallengePasskeyRegistration(e.ctx, challenge)
	if err != nil {
		t.Fatal(err)
	}
	resp := encode(t, goodResponse(fakeOpts(t, c), []byte{9}))
	_, err = p.ConfirmChallengePasskeyRegistration(e.ctx, "unknown-request", challenge, c.State, resp, "Key")
	wantCode(t, "an unknown request", err, identity.CodeTokenInvalid)
	if keys, err := e.ws.ListPasskeys(e.ctx, e.ada.ID); err != nil || len(keys) != 0 {
		t.Fatalf("passkeys after a refused request = %v, %v; want none", keys, err)
	}
	v, err := p.ConfirmChallengePasskeyRegistration(e.ctx, pending.RequestID, challenge, c.State, resp, "Key")
	if err != nil {
		t.Fatalf("Provider.ConfirmChallengePasskeyRegistration: %v", err)
	}
	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, nil)
	if err != nil || len(page.Records) != 0 {
		t.Fatalf("sign-ins recorded before CompleteSignIn = %+v, %v; want none", page.Records, err)
	}
	done, err := p.CompleteSignIn(e.ctx, pending.RequestID, v.User.ID, v.SessionOptions())
	if err != nil {
		t.Fatalf("CompleteSignIn: %v", err)
	}
	if !slices.Equal(done.Session.AMR, []string{"pwd"}) {
		t.Errorf("the session's AMR = %v, want [pwd]", done.Session.AMR)
	}
	page, err = e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("sign-ins recorded = %+v, %v; want one", page.Records, err)
	}
	if diff := cmp.Diff(identity.AuditChange{After: "password"}, page.Records[0].Changes["method"]); diff != "" {
		t.Errorf("the sign-in's method (-want +got):\n%s", diff)
	}
}
