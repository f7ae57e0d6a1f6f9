// Package webauthn implements identity.PasskeyCeremony over
// github.com/go-webauthn/webauthn: the options JSON a browser hands to
// navigator.credentials.create and .get, and the verification of its
// responses (client data, origin, RP id hash, challenge, attestation
// "none" or another well-formed one, signatures, flags).
//
// It keeps no state: the identity package passes the relying party, the
// challenge and the stored credential with every call, and applies every
// rule of its own (who may register, the cap, the lockout, sign counts).
// Registrations ask for a resident key, user verification, no
// attestation and the credProps extension; sign-ins ask for user
// verification.
//
//	svc, err := identity.Open(path, &identity.Options{
//		IssuerBase:      "https://id.example.com",
//		PasskeyCeremony: webauthn.New(),
//	})
package webauthn

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	gw "github.com/go-webauthn/webauthn/webauthn"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/identitylib/identity"
)

// Ceremony is the identity.PasskeyCeremony of go-webauthn. Its zero value
// is ready to use.
type Ceremony struct{}

// New returns a Ceremony.
func New() *Ceremony { return &Ceremony{} }

var _ identity.PasskeyCeremony = (*Ceremony)(nil)

// relyingParty returns the go-webauthn instance of the relying party.
func relyingParty(rp identity.PasskeyRelyingParty) (*gw.WebAuthn, error) {
	name := rp.Name
	if name == "" {
		name = rp.ID
	}
	return gw.New(&gw.Config{RPID: rp.ID, RPDisplayName: name, RPOrigins: rp.Origins})
}

// user is the user of a ceremony, as go-webauthn takes one.
type user struct {
	id            []byte
	name, display string
	creds         []gw.Credential
}

func (u user) WebAuthnID() []byte                   { return u.id }
func (u user) WebAuthnName() string                 { return u.name }
func (u user) WebAuthnDisplayName() string          { return u.display }
func (u user) WebAuthnCredentials() []gw.Credential { return u.creds }

func descriptors(ids [][]byte) []protocol.CredentialDescriptor {
	out := make([]protocol.CredentialDescriptor, len(ids))
	for i, id := range ids {
		out[i] = protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: id}
	}
	return out
}

// beginRegistration returns the creation options and session of req.
func beginRegistration(req identity.PasskeyRegistrationRequest) (*gw.WebAuthn, *protocol.CredentialCreation, *gw.SessionData, error) {
	wa, err := relyingParty(req.RelyingParty)
	if err != nil {
		return nil, nil, nil, err
	}
	u := user{id: req.UserHandle, name: req.UserName, display: req.UserDisplayName}
	required := true
	creation, session, err := wa.BeginRegistration(u,
		gw.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			RequireResidentKey: &required, ResidentKey: protocol.ResidentKeyRequirementRequired,
			UserVerification: protocol.VerificationRequired,
		}),
		gw.WithConveyancePreference(protocol.PreferNoAttestation),
		gw.WithExclusions(descriptors(req.Exclude)),
		gw.WithExtensions(gw.WithExtensionCredProps()),
	)
	if err != nil {
		return nil, nil, nil, err
	}
	creation.Response.Challenge = req.Challenge
	session.Challenge = base64.RawURLEncoding.EncodeToString(req.Challenge)
	return wa, creation, session, nil
}

// BeginRegistration implements identity.PasskeyCeremony.
func (c *Ceremony) BeginRegistration(req identity.PasskeyRegistrationRequest) ([]byte, error) {
	_, creation, _, err := beginRegistration(req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(creation)
}

// FinishRegistration implements identity.PasskeyCeremony.
func (c *Ceremony) FinishRegistration(req identity.PasskeyRegistrationRequest, response []byte) (identity.PasskeyCredential, error) {
	wa, _, session, err := beginRegistration(req)
	if err != nil {
		return identity.PasskeyCredential{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return identity.PasskeyCredential{}, describe(err)
	}
	u := user{id: req.UserHandle, name: req.UserName, display: req.UserDisplayName}
	cred, err := wa.CreateCredential(u, *session, parsed)
	if err != nil {
		return identity.PasskeyCredential{}, describe(err)
	}
	rk := false
	if p := parsed.ClientExtensionResults.CredProps; p != nil && p.RK != nil {
		rk = *p.RK
	}
	return identity.PasskeyCredential{
		ID: cred.ID, PublicKey: cred.PublicKey, SignCount: cred.Authenticator.SignCount, AAGUID: cred.Authenticator.AAGUID,
		Flags: identity.PasskeyFlags{UserPresent: cred.Flags.UserPresent, UserVerified: cred.Flags.UserVerified,
			BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState},
		ResidentKey: rk,
	}, nil
}

// beginAssertion returns the request options and session of req.
func beginAssertion(req identity.PasskeyAssertionRequest) (*gw.WebAuthn, *protocol.CredentialAssertion, *gw.SessionData, error) {
	wa, err := relyingParty(req.RelyingParty)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := []gw.LoginOption{gw.WithUserVerification(protocol.VerificationRequired), gw.WithChallenge(req.Challenge)}
	if len(req.Allow) > 0 {
		opts = append(opts, gw.WithAllowedCredentials(descriptors(req.Allow)))
	}
	assertion, session, err := wa.BeginDiscoverableLogin(opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	return wa, assertion, session, nil
}

// BeginAssertion implements identity.PasskeyCeremony.
func (c *Ceremony) BeginAssertion(req identity.PasskeyAssertionRequest) ([]byte, error) {
	_, assertion, _, err := beginAssertion(req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(assertion)
}

// ParseAssertion implements identity.PasskeyCeremony.
func (c *Ceremony) ParseAssertion(response []byte) (credentialID, userHandle []byte, err error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, nil, describe(err)
	}
	return parsed.RawID, parsed.Response.UserHandle, nil
}

// FinishAssertion implements identity.PasskeyCeremony.
func (c *Ceremony) FinishAssertion(req identity.PasskeyAssertionRequest, cred identity.PasskeyCredential, response []byte) (identity.PasskeyAssertionResult, error) {
	wa, _, session, err := beginAssertion(req)
	if err != nil {
		return identity.PasskeyAssertionResult{}, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return identity.PasskeyAssertionResult{}, describe(err)
	}
	if !bytes.Equal(parsed.RawID, cred.ID) {
		return identity.PasskeyAssertionResult{}, errors.New("webauthn: the response is of another credential")
	}
	if h := parsed.Response.UserHandle; len(h) > 0 && !bytes.Equal(h, req.UserHandle) {
		return identity.PasskeyAssertionResult{}, errors.New("webauthn: the response's user handle is not the credential's user's")
	}
	u := user{id: req.UserHandle, creds: []gw.Credential{{
		ID: cred.ID, PublicKey: cred.PublicKey,
		Authenticator: gw.Authenticator{AAGUID: cred.AAGUID, SignCount: cred.SignCount},
		Flags:         gw.CredentialFlags{BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState},
	}}}
	session.UserID = req.UserHandle
	if _, err := wa.ValidateLogin(u, *session, parsed); err != nil {
		return identity.PasskeyAssertionResult{}, describe(err)
	}
	f := parsed.Response.AuthenticatorData.Flags
	return identity.PasskeyAssertionResult{
		SignCount: parsed.Response.AuthenticatorData.Counter,
		Flags: identity.PasskeyFlags{UserPresent: f.HasUserPresent(), UserVerified: f.HasUserVerified(),
			BackupEligible: f.HasBackupEligible(), BackupState: f.HasBackupState()},
	}, nil
}

// describe returns go-webauthn's error with its details, which say what
// was wrong with the response.
func describe(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return fmt.Errorf("webauthn: %s: %s", pe.Details, pe.DevInfo)
	}
	return fmt.Errorf("webauthn: %w", err)
}
