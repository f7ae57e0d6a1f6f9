package httpapi_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/identitylib/identity"
)

// passkeyCeremony registers whatever credential id its "response" names,
// {"id": base64}, as a verified, discoverable credential; it signs no one
// in. The API only lists and removes passkeys, which the library
// registers.
type passkeyCeremony struct{}

type passkeyResponse struct {
	ID []byte `json:"id"`
}

func (passkeyCeremony) BeginRegistration(identity.PasskeyRegistrationRequest) ([]byte, error) {
	return []byte(`{}`), nil
}

func (passkeyCeremony) FinishRegistration(_ identity.PasskeyRegistrationRequest, response []byte) (identity.PasskeyCredential, error) {
	var r passkeyResponse
	if err := json.Unmarshal(response, &r); err != nil {
		return identity.PasskeyCredential{}, err
	}
	return identity.PasskeyCredential{ID: r.ID, PublicKey: []byte("key"), AAGUID: make([]byte, 16), ResidentKey: true,
		Flags: identity.PasskeyFlags{UserPresent: true, UserVerified: true, BackupEligible: true}}, nil
}

func (passkeyCeremony) BeginAssertion(identity.PasskeyAssertionRequest) ([]byte, error) {
	return []byte(`{}`), nil
}

func (passkeyCeremony) ParseAssertion([]byte) ([]byte, []byte, error) {
	return nil, nil, errors.New("no sign-in here")
}

func (passkeyCeremony) FinishAssertion(identity.PasskeyAssertionRequest, identity.PasskeyCredential, []byte) (identity.PasskeyAssertionResult, error) {
	return identity.PasskeyAssertionResult{}, errors.New("no sign-in here")
}

// registerPasskey registers the credential id for the user through the
// library.
func (e *testEnv) registerPasskey(t *testing.T, userID int64, id []byte, name string) {
	t.Helper()
	c, err := e.ws.BeginPasskeyRegistration(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := json.Marshal(passkeyResponse{ID: id})
	if _, err := e.ws.ConfirmPasskeyRegistration(t.Context(), userID, c.State, resp, name); err != nil {
		t.Fatal(err)
	}
}

func TestUserPasskeys(t *testing.T) {
	e := newTestEnv(t)
	ada := e.createUser(t, "ada")
	bob := e.createUser(t, "bob")
	wantJSON(t, e.do(t, "GET", base+"/users/1/passkeys", e.keys[identity.ScopeUsersRead], nil), 200, `{"passkeys":[]}`)
	e.registerPasskey(t, ada.ID, []byte{1}, "Laptop")
	e.registerPasskey(t, ada.ID, []byte{2}, "Phone")
	e.registerPasskey(t, bob.ID, []byte{3}, "Key")
	passkey := func(id, name string) string {
		return `{"id":"` + id + `","name":"` + name + `","createdAt":"` + testNowJSON + `","lastUsedAt":null,` +
			`"aaguid":"00000000-0000-0000-0000-000000000000","authenticatorName":null,"backupEligible":true,` +
			`"backupState":false,"signCount":0}`
	}
	wantJSON(t, e.do(t, "GET", base+"/users/1/passkeys", e.keys[identity.ScopeUsersRead], nil), 200,
		`{"passkeys":[`+passkey("AQ", "Laptop")+`,`+passkey("Ag", "Phone")+`]}`)
	wantStatus(t, e.do(t, "GET", base+"/users/1/passkeys", e.keys[identity.ScopeUsersWrite], nil), 403)
	wantStatus(t, e.do(t, "GET", base+"/users/9/passkeys", e.allKey, nil), 404)

	wantStatus(t, e.do(t, "DELETE", base+"/users/1/passkeys/AQ", e.keys[identity.ScopeUsersRead], nil), 403)
	// Bob's passkey is not ada's.
	wantStatus(t, e.do(t, "DELETE", base+"/users/1/passkeys/Aw", e.keys[identity.ScopeUsersWrite], nil), 404)
	wantStatus(t, e.do(t, "DELETE", base+"/users/1/passkeys/AQ", e.keys[identity.ScopeUsersWrite], nil), 204)
	wantStatus(t, e.do(t, "DELETE", base+"/users/1/passkeys/AQ", e.keys[identity.ScopeUsersWrite], nil), 404)
	wantJSON(t, e.do(t, "GET", base+"/users/1/passkeys", e.allKey, nil), 200, `{"passkeys":[`+passkey("Ag", "Phone")+`]}`)

	// Under "required" an administrator may still remove the last one
	// (the user registers again at their next password sign-in).
	set, err := e.ws.GetSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	set.Passkeys = identity.PasskeysRequired
	if err := e.ws.UpdateSettings(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do(t, "DELETE", base+"/users/1/passkeys/Ag", e.allKey, nil), 204)
	wantJSON(t, e.do(t, "GET", base+"/users/1/passkeys", e.allKey, nil), 200, `{"passkeys":[]}`)
}
