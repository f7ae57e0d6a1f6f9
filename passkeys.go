package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/identitylib/identity/store"
)

// Passkeys (WebAuthn credentials).
const (
	// PasskeyCeremonyLifetime is how long the state of a passkey
	// registration or sign-in (PasskeyChallenge.State) stays usable.
	PasskeyCeremonyLifetime = 5 * time.Minute
	// MaxPasskeyNameLength bounds a passkey's name, in characters.
	MaxPasskeyNameLength = 64
	// passkeyHandleLen is the length of a user handle: 32 random bytes.
	passkeyHandleLen = 32
	// The prefixes of the ceremony states and of the enrolment challenge.
	passkeyRegistrationPrefix = "idpr_"
	passkeySignInPrefix       = "idps_"
	passkeyEnrollmentPrefix   = "idpe_"
)

// PasskeyCeremony is the WebAuthn ceremony, which the identity package
// asks of a package that implements it (package webauthn, over
// go-webauthn): it turns the root's requests into the options JSON a
// browser hands to navigator.credentials.create or .get, and checks the
// browser's JSON response against them. It keeps no state: every request
// carries the challenge, the relying party and the credentials, and the
// identity package keeps them (a single-use state, the stored passkeys).
// Every rule (who may register, the cap, user verification, sign counts,
// the lockout) is the identity package's; a ceremony verifies signatures,
// origins, the RP id hash and the challenge, and reports the flags.
type PasskeyCeremony interface {
	// BeginRegistration returns the options JSON of a registration
	// ({"publicKey": {...}}): attestation "none", a resident key and user
	// verification required, the credProps extension asked for, and the
	// credentials of req.Exclude excluded.
	BeginRegistration(req PasskeyRegistrationRequest) ([]byte, error)
	// FinishRegistration checks the browser's response to the options of
	// req and returns the new credential. An error means the response is
	// refused (malformed, another challenge, origin or RP id, a bad
	// attestation).
	FinishRegistration(req PasskeyRegistrationRequest, response []byte) (PasskeyCredential, error)
	// BeginAssertion returns the options JSON of a sign-in
	// ({"publicKey": {...}}): user verification required, the
	// credentials of req.Allow allowed (none: discoverable).
	BeginAssertion(req PasskeyAssertionRequest) ([]byte, error)
	// ParseAssertion reads the credential id and the user handle (empty
	// when the authenticator gave none) of a browser's assertion
	// response, without verifying it, so that the identity package can
	// find the credential.
	ParseAssertion(response []byte) (credentialID, userHandle []byte, err error)
	// FinishAssertion verifies the browser's assertion response to the
	// options of req with the stored credential cred (its ID, PublicKey
	// and SignCount) and returns what the authenticator reported. An
	// error means the response is refused.
	FinishAssertion(req PasskeyAssertionRequest, cred PasskeyCredential, response []byte) (PasskeyAssertionResult, error)
}

// PasskeyRelyingParty is who the passkeys are for: the RP id (a host
// name), its display name and the origins a response may come from.
type PasskeyRelyingParty struct {
	ID      string
	Name    string
	Origins []string
}

// PasskeyRegistrationRequest is a registration, as the identity package
// asks the PasskeyCeremony for it.
type PasskeyRegistrationRequest struct {
	RelyingParty PasskeyRelyingParty
	// Challenge is 32 bytes, fresh for each ceremony.
	Challenge []byte
	// UserHandle is the user's handle (32 random bytes, never the email
	// or the id); UserName and UserDisplayName what the authenticator
	// shows.
	UserHandle      []byte
	UserName        string
	UserDisplayName string
	// Exclude are the ids of the user's credentials: an authenticator
	// that has one refuses to make another.
	Exclude [][]byte
}

// PasskeyAssertionRequest is a sign-in, as the identity package asks the
// PasskeyCeremony for it.
type PasskeyAssertionRequest struct {
	RelyingParty PasskeyRelyingParty
	Challenge    []byte
	// Allow are the credentials the user may use (a username-first
	// sign-in); empty for a discoverable sign-in.
	Allow [][]byte
	// UserHandle, given to FinishAssertion only, is the handle of the
	// credential's user: a response's user handle must be it.
	UserHandle []byte
}

// PasskeyFlags are the authenticator data's flags.
type PasskeyFlags struct {
	// UserPresent (UP): the user touched or otherwise acknowledged the
	// authenticator.
	UserPresent bool
	// UserVerified (UV): the authenticator verified the user (a PIN, a
	// biometric).
	UserVerified bool
	// BackupEligible (BE): the credential may be synced to other devices.
	BackupEligible bool
	// BackupState (BS): the credential is backed up (synced) now.
	BackupState bool
}

// PasskeyCredential is a credential a registration created, or a stored
// one given back to FinishAssertion.
type PasskeyCredential struct {
	ID []byte
	// PublicKey is the COSE_Key of the credential.
	PublicKey []byte
	SignCount uint32
	// AAGUID is the authenticator model's (16 bytes).
	AAGUID []byte
	Flags  PasskeyFlags
	// ResidentKey reports the client's credProps extension output
	// {"rk": true}: the credential is discoverable.
	ResidentKey bool
}

// PasskeyAssertionResult is what a verified assertion reported.
type PasskeyAssertionResult struct {
	SignCount uint32
	Flags     PasskeyFlags
}

// PasskeyChallenge is a ceremony begun: the options JSON to hand to
// navigator.credentials.create (a registration) or .get (a sign-in), as
// PublicKeyCredentialCreationOptions / RequestOptions in their JSON form,
// and the State to hand back with the browser's response. The State is a
// single-use token, valid for PasskeyCeremonyLifetime; keep it on the
// server side of the page (a hidden field is fine: it is worth nothing
// without an authenticator's signature).
type PasskeyChallenge struct {
	Options []byte
	State   string
}

// Passkey is a user's passkey, as the library shows it. Its public key
// stays in the store.
type Passkey struct {
	// ID is the credential id, base64url without padding.
	ID string
	// Name is the user's name for it (editable with UpdatePasskey).
	Name       string
	CreatedAt  time.Time
	LastUsedAt time.Time
	// AAGUID is the authenticator model's id in its UUID form (all zeros
	// when the authenticator did not say), and AuthenticatorName its name
	// for a few well-known models ("" otherwise).
	AAGUID            string
	AuthenticatorName string
	BackupEligible    bool
	BackupState       bool
	SignCount         uint32
}

// PasskeyPolicy says whether a workspace's users may, or must, have
// passkeys.
type PasskeyPolicy string

// The passkey policies.
const (
	// PasskeysAllowed: users may register passkeys and sign in with
	// them. The zero value PasskeyPolicy("") means this policy.
	PasskeysAllowed PasskeyPolicy = "allowed"
	// PasskeysOff: no registration and no passkey sign-in; stored
	// passkeys stay, unused.
	PasskeysOff PasskeyPolicy = "off"
	// PasskeysRequired: every user has a passkey. A user without one who
	// signs in with a password (after their second factor, if they have
	// one) registers one first (CodePasskeyEnrollmentRequired), and the
	// user cannot remove their own last passkey (RemovePasskey).
	PasskeysRequired PasskeyPolicy = "required"
)

// wellKnownAuthenticators names a few authenticator models by AAGUID.
var wellKnownAuthenticators = map[string]string{
	"ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
	"adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
	"fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "iCloud Keychain",
	"08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
	"9ddd1817-af5a-4672-a2b9-3e3dd95000a9": "Windows Hello",
	"6028b017-b1d4-4c02-b4b3-afcdafc96bb2": "Windows Hello",
	"bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
	"d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
	"ee882879-721c-4913-9775-3dfcce97072a": "YubiKey 5 Series",
}

// formatAAGUID writes 16 bytes in the UUID form; other lengths as hex.
func formatAAGUID(b []byte) string {
	if len(b) != 16 {
		return hex.EncodeToString(b)
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func passkeyFromRecord(r store.Passkey) Passkey {
	aaguid := formatAAGUID(r.AAGUID)
	return Passkey{
		ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, AAGUID: aaguid,
		AuthenticatorName: wellKnownAuthenticators[aaguid], BackupEligible: r.BackupEligible, BackupState: r.BackupState,
		SignCount: uint32(r.SignCount),
	}
}

// credentialID is the stored form of a credential id.
func credentialID(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

// The single-use kinds of the passkey ceremonies.
var (
	// passkeyRegistration is the state of a registration: for its user,
	// who must be enabled.
	passkeyRegistration = singleUse{
		prefix: passkeyRegistrationPrefix, purpose: store.PurposePasskeyRegistration, invalid: errPasskeyStateInvalid,
		used: "this passkey registration was completed already", expired: "this passkey registration has expired: begin it again",
		userCheck: func(u store.User, _ store.VerificationToken) error {
			if !u.Enabled {
				return errorf(CodeForbidden, "user %d is disabled", u.ID)
			}
			return nil
		},
	}
	// passkeySignIn is the state of a sign-in. A discoverable sign-in (or
	// a username no user has) names no user.
	passkeySignIn = singleUse{
		prefix: passkeySignInPrefix, purpose: store.PurposePasskeySignIn, invalid: errPasskeyStateInvalid,
		used: "this passkey sign-in was completed already", expired: "this passkey sign-in has expired: sign in again",
		userCheck: func(store.User, store.VerificationToken) error { return nil },
		noUser:    true,
	}
	// passkeyEnrollment is the challenge of a password sign-in under
	// PasskeysRequired by a user without a passkey. Its variants are a
	// sign-in that passed a second factor too: the sign-in the
	// registration completes has that factor's AMR and method
	// (enrolledSignIn).
	passkeyEnrollment = singleUse{
		prefix: passkeyEnrollmentPrefix, purpose: store.PurposePasskeyEnrollment, invalid: errChallengeInvalid,
		variants: []store.TokenPurpose{store.PurposePasskeyEnrollmentTOTP, store.PurposePasskeyEnrollmentRecoveryCode},
		used:     "this sign-in was completed already", expired: "this sign-in has expired: sign in again",
		userCheck: func(u store.User, _ store.VerificationToken) error {
			if !u.Enabled {
				return errInvalidCredentials()
			}
			return nil
		},
	}
)

func errPasskeyStateInvalid() *Error {
	return errorf(CodeTokenInvalid, "unknown passkey ceremony state")
}

// passkeyChallenge is the WebAuthn challenge of a ceremony state's
// secret: the browser signs it, and the secret's stored hash is another
// hash, so the challenge tells nothing of the state.
func passkeyChallenge(secret string) []byte {
	sum := sha256.Sum256([]byte("identity passkey challenge " + secret))
	return sum[:]
}

// ceremony returns the Service's PasskeyCeremony, or the error of its
// absence.
func (s *Service) ceremony() (PasskeyCeremony, error) {
	if s.passkeys == nil {
		return nil, errorf(CodeInternal, "passkeys need Options.PasskeyCeremony (package webauthn)")
	}
	return s.passkeys, nil
}

// relyingParty is the relying party of the workspace's passkeys: the host
// of Options.IssuerBase as RP id, and its origin. Every workspace on the
// host shares the RP id; the user handles and the lookup of credentials
// by (workspace, id) keep them apart.
func (w *Workspace) relyingParty() (PasskeyRelyingParty, error) {
	if w.svc.issuerBase == "" {
		return PasskeyRelyingParty{}, errorf(CodeInternal, "passkeys need Options.IssuerBase")
	}
	u, err := url.Parse(w.svc.issuerBase)
	if err != nil {
		return PasskeyRelyingParty{}, internal(err)
	}
	origins := append([]string{u.Scheme + "://" + u.Host}, w.svc.passkeyOrigins...)
	return PasskeyRelyingParty{ID: u.Hostname(), Name: w.slug, Origins: origins}, nil
}

// passkeyPolicy returns the workspace's policy, and refuses a ceremony
// under PasskeysOff.
func passkeysOn(set Settings) error {
	if set.Passkeys == PasskeysOff {
		return errorf(CodeForbidden, "passkeys are off in this workspace")
	}
	return nil
}

// ListPasskeys returns the user's passkeys, oldest first. An unknown user
// is CodeNotFound.
func (w *Workspace) ListPasskeys(ctx context.Context, userID int64) ([]Passkey, error) {
	out := []Passkey{}
	err := w.view(ctx, func(tx store.Tx) error {
		out = out[:0]
		if _, err := w.user(tx, userID); err != nil {
			return err
		}
		recs, err := tx.UserPasskeys(w.slug, userID)
		for _, r := range recs {
			out = append(out, passkeyFromRecord(r))
		}
		return err
	})
	if err != nil {
		return nil, fromStore(err, "user")
	}
	return out, nil
}

// userPasskey returns the user's passkey with the id: one of another user
// or workspace is CodeNotFound alike.
func (w *Workspace) userPasskey(tx store.Tx, userID int64, id string) (store.Passkey, error) {
	p, err := tx.Passkey(w.slug, id)
	if isNotFound(err) || err == nil && p.UserID != userID {
		return store.Passkey{}, notFound("passkey %q of user %d not found", id, userID)
	}
	return p, err
}

// checkPasskeyName reports the problems of a passkey's name: 1 to
// MaxPasskeyNameLength characters.
func checkPasskeyName(name string) error {
	var p problems
	checkText(&p, "name", strings.TrimSpace(name), 1, MaxPasskeyNameLength)
	return p.err("invalid passkey name")
}

// UpdatePasskey gives the user's passkey a new name (1 to
// MaxPasskeyNameLength characters, trimmed), recorded in the audit trail
// as user.passkey.renamed. A passkey that is not the user's is
// CodeNotFound.
func (w *Workspace) UpdatePasskey(ctx context.Context, userID int64, id, name string) (Passkey, error) {
	name = strings.TrimSpace(name)
	if err := checkPasskeyName(name); err != nil {
		return Passkey{}, err
	}
	var out Passkey
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		p, err := w.userPasskey(tx, userID, id)
		if err != nil || p.Name == name {
			out = passkeyFromRecord(p)
			return err
		}
		before := p.Name
		p.Name = name
		if err := tx.PutPasskey(w.slug, p); err != nil {
			return err
		}
		out = passkeyFromRecord(p)
		return w.audit(ctx, tx, auditEntry{action: AuditPasskeyRenamed, target: userTarget(u),
			changes: auditChanges{}.set("passkeyId", nil, id).set("name", before, name)})
	})
	return out, fromStore(err, "user")
}

// DeletePasskey removes the user's passkey, as an administrator does
// (REST, identityd, the console), with user.passkey.removed (the event
// and the audit record). It may remove the last one under
// PasskeysRequired: a user who lost their only passkey is walked through
// registering a new one at their next password sign-in. A passkey that
// is not the user's is CodeNotFound. RemovePasskey is the user's own
// removal.
func (w *Workspace) DeletePasskey(ctx context.Context, userID int64, id string) error {
	return w.deletePasskey(ctx, userID, id, false)
}

// RemovePasskey removes one of the user's passkeys at the user's own
// request (the account page), like DeletePasskey, except that under
// PasskeysRequired the user's last passkey is CodeConflict: register
// another first, so that a signed-in user cannot leave themselves
// without the factor the workspace requires.
func (w *Workspace) RemovePasskey(ctx context.Context, userID int64, id string) error {
	return w.deletePasskey(ctx, userID, id, true)
}

// deletePasskey removes the user's passkey; keepLast refuses the last
// one under PasskeysRequired.
func (w *Workspace) deletePasskey(ctx context.Context, userID int64, id string, keepLast bool) error {
	err := w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		if _, err := w.userPasskey(tx, userID, id); err != nil {
			return err
		}
		set, err := w.settings(tx)
		if err != nil {
			return err
		}
		if keepLast && set.Passkeys == PasskeysRequired {
			all, err := tx.UserPasskeys(w.slug, userID)
			if err != nil {
				return err
			}
			if len(all) <= 1 {
				return errorf(CodeConflict, "passkeys are required in this workspace: passkey %q is the last of user %d", id, userID)
			}
		}
		if err := tx.DeletePasskey(w.slug, id); err != nil {
			return err
		}
		if err := w.audit(ctx, tx, auditEntry{action: AuditPasskeyRemoved, target: userTarget(u),
			changes: auditChanges{}.set("passkeyId", nil, id)}); err != nil {
			return err
		}
		return w.emit(tx, EventUserPasskeyRemoved, passkeyEvent{UserID: userID, PasskeyID: id})
	})
	return fromStore(err, "user")
}

// passkeyEvent is the data of user.passkey.added and user.passkey.removed.
type passkeyEvent struct {
	UserID    int64  `json:"userId"`
	PasskeyID string `json:"passkeyId"`
}

// userHandle returns the user's handle, made (32 random bytes) and stored
// when the user has none.
func (w *Workspace) userHandle(tx store.Tx, userID int64, now time.Time) ([]byte, error) {
	h, err := tx.PasskeyHandle(w.slug, userID)
	if err == nil {
		return h.Handle, nil
	}
	if !isNotFound(err) {
		return nil, err
	}
	handle := make([]byte, passkeyHandleLen)
	rand.Read(handle) // never fails (crypto/rand)
	return handle, tx.PutPasskeyHandle(w.slug, store.PasskeyHandle{UserID: userID, Handle: handle, CreatedAt: now})
}

// registrationRequest reads what a registration of the user needs, in tx:
// the relying party, the user's handle (made on the first registration)
// and its credentials, refusing a user at the workspace's cap.
func (w *Workspace) registrationRequest(tx store.Tx, u store.User, challenge []byte, now time.Time) (PasskeyRegistrationRequest, error) {
	set, err := w.settings(tx)
	if err != nil {
		return PasskeyRegistrationRequest{}, err
	}
	if err := passkeysOn(set); err != nil {
		return PasskeyRegistrationRequest{}, err
	}
	rp, err := w.relyingParty()
	if err != nil {
		return PasskeyRegistrationRequest{}, err
	}
	have, err := tx.UserPasskeys(w.slug, u.ID)
	if err != nil {
		return PasskeyRegistrationRequest{}, err
	}
	if limit := set.Limits.passkeysPerUser(); len(have) >= limit {
		return PasskeyRegistrationRequest{}, errorf(CodeLimitReached, "user %d has %d passkeys, the most the workspace allows", u.ID, limit)
	}
	handle, err := w.userHandle(tx, u.ID, now)
	if err != nil {
		return PasskeyRegistrationRequest{}, err
	}
	req := PasskeyRegistrationRequest{RelyingParty: rp, Challenge: challenge, UserHandle: handle,
		UserName: u.Username, UserDisplayName: u.FullName}
	if req.UserDisplayName == "" {
		req.UserDisplayName = u.Username
	}
	for _, p := range have {
		raw, err := base64.RawURLEncoding.DecodeString(p.ID)
		if err != nil {
			return PasskeyRegistrationRequest{}, internal(err)
		}
		req.Exclude = append(req.Exclude, raw)
	}
	return req, nil
}

// BeginPasskeyRegistration begins the registration of a passkey for the
// user (enabled; CodeForbidden otherwise, and under PasskeysOff): it makes
// the user's handle on the first registration and returns the options for
// navigator.credentials.create and the State for
// ConfirmPasskeyRegistration. A user with Limits.PasskeysPerUser passkeys
// is CodeLimitReached; an unknown user CodeNotFound. Without
// Options.PasskeyCeremony or Options.IssuerBase it is CodeInternal.
func (w *Workspace) BeginPasskeyRegistration(ctx context.Context, userID int64) (PasskeyChallenge, error) {
	c, err := w.svc.ceremony()
	if err != nil {
		return PasskeyChallenge{}, err
	}
	var req PasskeyRegistrationRequest
	var state string
	err = w.update(ctx, func(tx store.Tx) error {
		u, err := w.user(tx, userID)
		if err != nil {
			return err
		}
		if err := passkeyRegistration.userCheck(u, store.VerificationToken{}); err != nil {
			return err
		}
		now := w.svc.timestamp()
		var secret string
		if state, secret, err = w.issueSingleUseSecret(tx, passkeyRegistration, u, now, PasskeyCeremonyLifetime); err != nil {
			return err
		}
		req, err = w.registrationRequest(tx, u, passkeyChallenge(secret), now)
		return err
	})
	if err != nil {
		return PasskeyChallenge{}, fromStore(err, "user")
	}
	options, err := c.BeginRegistration(req)
	if err != nil {
		return PasskeyChallenge{}, internal(err)
	}
	return PasskeyChallenge{Options: options, State: state}, nil
}

// ConfirmPasskeyRegistration completes the registration begun for the user
// with state (PasskeyChallenge.State) with the browser's JSON response
// (the PublicKeyCredential, as its toJSON gives it), and stores the
// passkey named name (1 to MaxPasskeyNameLength characters; "" names it
// "Passkey"). It emits user.passkey.added, recorded in the audit trail too.
//
// The response must verify (the challenge, an allowed origin, the RP id,
// attestation "none" or a well-formed other) and its authenticator data
// must report user presence and user verification, and the client must
// report a resident (discoverable) credential through the credProps
// extension (rk true): otherwise CodeInvalid (field "response") and
// nothing is stored, the state still usable until it expires. A
// credential already registered in the workspace is CodeConflict. The
// state is used up by a success; one that is unknown, of another user,
// used or expired is CodeTokenInvalid, CodeTokenUsed or CodeTokenExpired.
func (w *Workspace) ConfirmPasskeyRegistration(ctx context.Context, userID int64, state string, response []byte, name string) (Passkey, error) {
	p, _, err := w.finishRegistration(ctx, passkeyRegistration, state, response, name, func(_ store.Tx, u store.User, _ time.Time) error {
		if u.ID != userID {
			return errPasskeyStateInvalid()
		}
		return nil
	})
	return p, err
}

// finishRegistration completes a registration whose state is a token of
// kind k; check, in the same transaction, refuses a user the caller may
// not register for (or writes what else the registration completes).
func (w *Workspace) finishRegistration(ctx context.Context, k singleUse, state string, response []byte, name string, check func(tx store.Tx, u store.User, now time.Time) error) (Passkey, store.User, error) {
	c, err := w.svc.ceremony()
	if err != nil {
		return Passkey{}, store.User{}, err
	}
	if name = strings.TrimSpace(name); name == "" {
		name = "Passkey"
	}
	if err := checkPasskeyName(name); err != nil {
		return Passkey{}, store.User{}, err
	}
	id, secret, err := k.parse(state)
	if err != nil {
		return Passkey{}, store.User{}, err
	}
	var out Passkey
	var user store.User
	err = w.update(ctx, func(tx store.Tx) error {
		now := w.svc.timestamp()
		t, u, err := w.checkSingleUse(tx, k, id, secret, now)
		if err != nil {
			return err
		}
		if err := check(tx, u, now); err != nil {
			return err
		}
		req, err := w.registrationRequest(tx, u, passkeyChallenge(secret), now)
		if err != nil {
			return err
		}
		cred, err := c.FinishRegistration(req, response)
		if err != nil {
			return errPasskeyResponse("%v", err)
		}
		if err := checkRegistered(cred); err != nil {
			return err
		}
		rec := store.Passkey{
			ID: credentialID(cred.ID), UserID: u.ID, Name: name, PublicKey: cred.PublicKey, SignCount: int64(cred.SignCount),
			AAGUID: cred.AAGUID, BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState, CreatedAt: now,
		}
		if _, err := tx.Passkey(w.slug, rec.ID); err == nil {
			return errorf(CodeConflict, "this passkey is registered already")
		} else if !isNotFound(err) {
			return err
		}
		if err := tx.PutPasskey(w.slug, rec); err != nil {
			return err
		}
		if err := w.useSingleUse(tx, t, now); err != nil {
			return err
		}
		out, user = passkeyFromRecord(rec), u
		if err := w.audit(ctx, tx, auditEntry{action: AuditPasskeyAdded, target: userTarget(u),
			changes: auditChanges{}.set("passkeyId", nil, rec.ID).set("name", nil, name)}); err != nil {
			return err
		}
		return w.emit(tx, EventUserPasskeyAdded, passkeyEvent{UserID: u.ID, PasskeyID: rec.ID})
	})
	if err != nil {
		return Passkey{}, store.User{}, fromStore(err, "user")
	}
	return out, user, nil
}

func errPasskeyResponse(format string, args ...any) error {
	var p problems
	p.add("response", RuleFormat, format, args...)
	return p.err("the passkey response was refused")
}

// checkRegistered applies the root's rules to a registered credential:
// user presence, user verification, and a discoverable credential as the
// client reports it (credProps rk). The authenticator data signs UP and
// UV; rk is the client's word, unsigned, which is all WebAuthn offers: it
// keeps a non-discoverable credential (one a discoverable sign-in would
// never offer) from being stored by an honest browser.
func checkRegistered(c PasskeyCredential) error {
	switch {
	case !c.Flags.UserPresent:
		return errPasskeyResponse("the authenticator did not report user presence")
	case !c.Flags.UserVerified:
		return errPasskeyResponse("the authenticator did not verify the user")
	case !c.ResidentKey:
		return errPasskeyResponse("the credential is not reported discoverable (credProps rk)")
	case len(c.ID) == 0 || len(c.ID) > 1023:
		return errPasskeyResponse("the credential id has %d bytes", len(c.ID))
	}
	return nil
}

// PasskeySignInOptions are the options of BeginPasskeySignIn.
type PasskeySignInOptions struct {
	// Login is the username or email of a username-first sign-in: the
	// options then allow only the user's passkeys. Empty: a discoverable
	// sign-in (the authenticator offers the workspace's passkeys it holds).
	// A login no user has (or a user without passkeys) gets the options of
	// a discoverable sign-in, so that the answer does not tell whether the
	// login exists.
	Login string
}

// BeginPasskeySignIn begins a passkey sign-in: it returns the options for
// navigator.credentials.get and the State for VerifyPasskeySignIn. Under
// PasskeysOff it is CodeForbidden; without Options.PasskeyCeremony or
// Options.IssuerBase CodeInternal.
func (w *Workspace) BeginPasskeySignIn(ctx context.Context, opts *PasskeySignInOptions) (PasskeyChallenge, error) {
	c, err := w.svc.ceremony()
	if err != nil {
		return PasskeyChallenge{}, err
	}
	rp, err := w.relyingParty()
	if err != nil {
		return PasskeyChallenge{}, err
	}
	var req PasskeyAssertionRequest
	var state string
	err = w.update(ctx, func(tx store.Tx) error {
		req = PasskeyAssertionRequest{RelyingParty: rp}
		set, err := w.settings(tx)
		if err != nil {
			return err
		}
		if err := passkeysOn(set); err != nil {
			return err
		}
		var u store.User
		if opts != nil && opts.Login != "" {
			if u, err = w.userByLogin(tx, opts.Login); err != nil {
				return err
			}
		}
		if u.ID != 0 {
			have, err := tx.UserPasskeys(w.slug, u.ID)
			if err != nil {
				return err
			}
			for _, p := range have {
				raw, err := base64.RawURLEncoding.DecodeString(p.ID)
				if err != nil {
					return internal(err)
				}
				req.Allow = append(req.Allow, raw)
			}
			if len(req.Allow) == 0 {
				u = store.User{}
			}
		}
		var secret string
		state, secret, err = w.issueSingleUseSecret(tx, passkeySignIn, u, w.svc.timestamp(), PasskeyCeremonyLifetime)
		req.Challenge = passkeyChallenge(secret)
		return err
	})
	if err != nil {
		return PasskeyChallenge{}, fromStore(err, "workspace")
	}
	options, err := c.BeginAssertion(req)
	if err != nil {
		return PasskeyChallenge{}, internal(err)
	}
	return PasskeyChallenge{Options: options, State: state}, nil
}

// userByLogin returns the user a login names (an email when it holds
// '@'), or the zero user when none does.
func (w *Workspace) userByLogin(tx store.Tx, login string) (store.User, error) {
	lookup := tx.UserIDByUsername
	if strings.Contains(login, "@") {
		lookup = tx.UserIDByEmail
	}
	id, err := lookup(w.slug, login)
	if isNotFound(err) {
		return store.User{}, nil
	} else if err != nil {
		return store.User{}, err
	}
	return tx.User(w.slug, id)
}

// VerifiedPasskey is a sign-in whose passkey was verified.
type VerifiedPasskey struct {
	// User is the user signed in.
	User User
	// Passkey is the passkey used (or, after an enrolment, registered).
	Passkey Passkey
	// AMR is how the user authenticated, in RFC 8176's values: a passkey
	// sign-in gives ["hwk", "user", "mfa"] for a device-bound passkey
	// (not backup eligible) and ["swk", "user", "mfa"] for a synced one;
	// an enrolment after a password sign-in gives the password's
	// ["pwd"]. Pass it on in SessionOptions (see SessionOptions).
	AMR []string
	// method is how the audit trail names the sign-in.
	method string
}

// SessionOptions returns the options that start the session of the
// sign-in (CreateSession, Provider.CompleteSignIn): its AMR, and the
// method "passkey" (or "password" after an enrolment) for the audit
// trail.
func (v VerifiedPasskey) SessionOptions() *SessionOptions {
	return &SessionOptions{AMR: slices.Clone(v.AMR), method: v.method}
}

// The method of a passkey sign-in, in sign_in.succeeded and
// sign_in.failed.
const methodPasskey = "passkey"

// passkeyAMR is the AMR of a sign-in by a passkey: "hwk" (a key held by
// hardware) for a device-bound passkey, "swk" (a software-secured key)
// for one that may be synced, since its private key leaves the device;
// "user" for the user presence the authenticator reported; and "mfa",
// since the authenticator also verified the user (UV: a PIN or a
// biometric), a second factor beside the possession of the key.
func passkeyAMR(backupEligible bool) []string {
	if backupEligible {
		return []string{"swk", "user", "mfa"}
	}
	return []string{"hwk", "user", "mfa"}
}

// VerifyPasskeySignIn completes a passkey sign-in begun with
// BeginPasskeySignIn (state is PasskeyChallenge.State) with the browser's
// JSON assertion response, and returns the user; the program then starts
// a session (CreateSession with the VerifiedPasskey's SessionOptions). A
// sign-in at the provider takes Provider.VerifyPasskeySignIn instead.
// A passkey sign-in satisfies the workspace's MFA policy: the
// authenticator verified the user.
//
// The credential is looked up by (workspace, credential id): one of
// another workspace is unknown. An unknown credential is
// CodeUnauthenticated and counts toward no lockout (no user can be
// attributed; sign_in.failed with reason unknown_passkey and no user). The
// workspace's ThrottlePolicy counts every refusal under the client
// address (RequestInfo in ctx) and, for a known credential, under its
// user's login, as for a password; past either count the sign-in is
// CodeRateLimited before the response is verified. For
// a known credential the attempt runs under the user's lockout like a
// code: a locked user is CodeLocked; a response that does not verify
// (signature, challenge, origin, RP id, a user handle not the user's),
// that lacks user presence or user verification, or whose sign count
// went backwards (both counts non-zero and the new one not greater: a
// cloned authenticator, recorded as passkey.clone_suspected) is
// CodeUnauthenticated and counts as a failure (reason wrong_passkey); a
// disabled user is CodeUnauthenticated (reason disabled). A success
// resets the count, stores the new sign count, backup state and last use,
// and uses the state up. A state that is unknown, used or expired is
// CodeTokenInvalid, CodeTokenUsed or CodeTokenExpired, and counts nothing.
// Under PasskeysOff it is CodeForbidden.
func (w *Workspace) VerifyPasskeySignIn(ctx context.Context, state string, response []byte) (VerifiedPasskey, error) {
	return w.verifyPasskeySignIn(ctx, state, response, true)
}

// VerifyPasskeySignIn is Workspace.VerifyPasskeySignIn for the stored
// authorization request requestID, which must still be pending: it writes
// no sign_in.succeeded, which CompleteSignIn writes with the
// VerifiedPasskey's SessionOptions (method "passkey").
func (p *Provider) VerifyPasskeySignIn(ctx context.Context, requestID, state string, response []byte) (VerifiedPasskey, error) {
	if _, err := p.GetPendingAuthorization(ctx, requestID); err != nil {
		return VerifiedPasskey{}, err
	}
	return p.w.verifyPasskeySignIn(ctx, state, response, false)
}

func (w *Workspace) verifyPasskeySignIn(ctx context.Context, state string, response []byte, record bool) (VerifiedPasskey, error) {
	c, err := w.svc.ceremony()
	if err != nil {
		return VerifiedPasskey{}, err
	}
	rp, err := w.relyingParty()
	if err != nil {
		return VerifiedPasskey{}, err
	}
	id, secret, err := passkeySignIn.parse(state)
	if err != nil {
		return VerifiedPasskey{}, err
	}
	// Refuse a bad state, a policy that is off and an unknown credential
	// in a read, so that they cost no write but the refusal's record.
	var t store.VerificationToken
	var rec store.Passkey
	var u store.User
	var set Settings
	found := false
	err = w.view(ctx, func(tx store.Tx) (err error) {
		set, err = w.settings(tx)
		if err != nil {
			return err
		}
		if err := passkeysOn(set); err != nil {
			return err
		}
		if t, _, err = w.checkSingleUse(tx, passkeySignIn, id, secret, w.svc.timestamp()); err != nil {
			return err
		}
		rawID, _, err := c.ParseAssertion(response)
		if err != nil {
			return nil // refused below, as an unknown credential
		}
		rec, err = tx.Passkey(w.slug, credentialID(rawID))
		if isNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if u, err = w.user(tx, rec.UserID); ErrorCode(err) == CodeNotFound {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return VerifiedPasskey{}, fromStore(err, "workspace")
	}
	// The workspace's ThrottlePolicy counts the attempt under its client
	// address, and under the user's login when the credential names one,
	// as it counts a password sign-in; a success gives the counts back.
	taken, err := w.takeSignInCounts(ctx, set.Throttle, u.Username, found)
	if ErrorCode(err) == CodeRateLimited {
		who := attempter{login: "(passkey)", action: AuditSignInFailed}
		if found {
			who = attempter{login: u.Username, user: u, action: AuditSignInFailed}
		}
		if ferr := w.loginFailed(ctx, who, loginThrottled); ErrorCode(ferr) != CodeUnauthenticated {
			return VerifiedPasskey{}, ferr
		}
		return VerifiedPasskey{}, err
	} else if err != nil {
		return VerifiedPasskey{}, err
	}
	out, err := w.assertPasskey(ctx, c, rp, t, rec, u, found, id, secret, response, record)
	if err == nil || ErrorCode(err) != CodeUnauthenticated && ErrorCode(err) != CodeLocked {
		taken.undo()
	}
	return out, err
}

// assertPasskey verifies a passkey sign-in's response for the credential
// rec of user u (found: the workspace has both) read by
// verifyPasskeySignIn.
func (w *Workspace) assertPasskey(ctx context.Context, c PasskeyCeremony, rp PasskeyRelyingParty, t store.VerificationToken, rec store.Passkey, u store.User, found bool, id, secret string, response []byte, record bool) (VerifiedPasskey, error) {
	if !found || t.UserID != 0 && t.UserID != u.ID {
		// No user to attribute the attempt to (or a credential that is
		// not the one the username-first options allowed): it counts
		// toward nothing.
		who := attempter{action: AuditSignInFailed, user: u}
		if !found {
			who = attempter{login: "(passkey)", action: AuditSignInFailed}
		}
		err := w.update(ctx, func(tx store.Tx) error { return w.attemptFailed(ctx, tx, who, loginUnknownPasskey) })
		if err != nil {
			return VerifiedPasskey{}, fromStore(err, "workspace")
		}
		return VerifiedPasskey{}, errInvalidCredentials()
	}
	who := attempter{login: u.Username, user: u, action: AuditSignInFailed, reason: loginWrongPasskey}
	var out VerifiedPasskey
	err := w.codeAttempt(ctx, who, func(tx store.Tx, now time.Time) (bool, error) {
		t, _, err := w.checkSingleUse(tx, passkeySignIn, id, secret, now)
		if err != nil {
			return false, err
		}
		user, err := w.user(tx, u.ID)
		if err != nil {
			return false, err
		}
		p, err := tx.Passkey(w.slug, rec.ID)
		if err != nil {
			return false, err
		}
		h, err := tx.PasskeyHandle(w.slug, user.ID)
		if err != nil && !isNotFound(err) {
			return false, err
		}
		_, gotHandle, _ := c.ParseAssertion(response)
		if len(gotHandle) > 0 && !slices.Equal(gotHandle, h.Handle) {
			return false, nil
		}
		req := PasskeyAssertionRequest{RelyingParty: rp, Challenge: passkeyChallenge(secret), UserHandle: h.Handle}
		raw, _ := base64.RawURLEncoding.DecodeString(p.ID)
		if t.UserID != 0 {
			req.Allow = [][]byte{raw}
		}
		res, err := c.FinishAssertion(req, PasskeyCredential{ID: raw, PublicKey: p.PublicKey, SignCount: uint32(p.SignCount), AAGUID: p.AAGUID,
			Flags: PasskeyFlags{BackupEligible: p.BackupEligible, BackupState: p.BackupState}}, response)
		if err != nil || !res.Flags.UserPresent || !res.Flags.UserVerified {
			return false, nil
		}
		if res.SignCount != 0 && p.SignCount != 0 && int64(res.SignCount) <= p.SignCount {
			return false, w.audit(ctx, tx, auditEntry{action: AuditPasskeyCloneSuspected, target: userTarget(user), failure: true,
				changes: auditChanges{}.set("passkeyId", nil, p.ID).set("signCount", p.SignCount, int64(res.SignCount))})
		}
		if !user.Enabled {
			if err := w.attemptFailed(ctx, tx, attempter{login: user.Username, user: user, action: AuditSignInFailed}, loginDisabled); err != nil {
				return false, err
			}
			return false, refuse(errInvalidCredentials())
		}
		p.SignCount, p.BackupState, p.LastUsedAt = int64(res.SignCount), res.Flags.BackupState, now
		if err := tx.PutPasskey(w.slug, p); err != nil {
			return false, err
		}
		if err := w.useSingleUse(tx, t, now); err != nil {
			return false, err
		}
		out = VerifiedPasskey{User: userFromRecord(user), Passkey: passkeyFromRecord(p), AMR: passkeyAMR(p.BackupEligible), method: methodPasskey}
		if !record {
			return true, nil
		}
		return true, w.auditSignedIn(ctx, tx, user, signInChanges(methodPasskey, "", ""))
	})
	if err != nil {
		if ErrorCode(err) == CodeUnauthenticated {
			return VerifiedPasskey{}, errInvalidCredentials()
		}
		return VerifiedPasskey{}, err
	}
	w.svc.signedIn(SignInSucceeded)
	return out, nil
}

// challengePasskeyEnrollment ends a password sign-in under
// PasskeysRequired of a user without a passkey: it stores the enrolment
// challenge and returns CodePasskeyEnrollmentRequired with it.
func (w *Workspace) challengePasskeyEnrollment(ctx context.Context, att *attempt, u store.User) error {
	token, err := w.issueSignInChallenge(ctx, att, passkeyEnrollment, u)
	if err != nil {
		return err
	}
	return errPasskeyEnrollmentRequired(token)
}

func errPasskeyEnrollmentRequired(challenge string) *Error {
	return &Error{Code: CodePasskeyEnrollmentRequired, Message: "register a passkey to sign in", Challenge: challenge}
}

// passkeyEnrollmentAfter stores, in tx, the enrolment challenge of a
// sign-in that passed its password and then its second factor by method
// (methodSecondFactor or methodRecoveryCode), when the workspace requires
// passkeys and the user has none; it returns "" otherwise.
func (w *Workspace) passkeyEnrollmentAfter(tx store.Tx, u store.User, method string, now time.Time) (string, error) {
	set, err := w.settings(tx)
	if err != nil || set.Passkeys != PasskeysRequired {
		return "", err
	}
	have, err := tx.UserPasskeys(w.slug, u.ID)
	if err != nil || len(have) > 0 {
		return "", err
	}
	purpose := store.PurposePasskeyEnrollmentTOTP
	if method == methodRecoveryCode {
		purpose = store.PurposePasskeyEnrollmentRecoveryCode
	}
	return w.issueSingleUse(tx, passkeyEnrollment.withPurpose(purpose), u, now, MFAChallengeLifetime)
}

// enrolledSignIn returns the AMR and audit method of the sign-in an
// enrolment challenge stored with purpose completes: the password's, or
// the password's and a second factor's.
func enrolledSignIn(purpose store.TokenPurpose) ([]string, string) {
	switch purpose {
	case store.PurposePasskeyEnrollmentTOTP:
		return slices.Clone(amrSecondFactor), methodSecondFactor
	case store.PurposePasskeyEnrollmentRecoveryCode:
		return slices.Clone(amrSecondFactor), methodRecoveryCode
	}
	return slices.Clone(amrPassword), methodPassword
}

// BeginChallengePasskeyRegistration begins the passkey registration of
// the user of a sign-in that ended with CodePasskeyEnrollmentRequired
// (challenge is Error.Challenge), like BeginPasskeyRegistration;
// ConfirmChallengePasskeyRegistration completes both. A challenge that is
// unknown, used or expired is CodeTokenInvalid, CodeTokenUsed or
// CodeTokenExpired.
func (w *Workspace) BeginChallengePasskeyRegistration(ctx context.Context, challenge string) (PasskeyChallenge, error) {
	id, secret, err := passkeyEnrollment.parse(challenge)
	if err != nil {
		return PasskeyChallenge{}, err
	}
	var u store.User
	err = w.view(ctx, func(tx store.Tx) (err error) {
		_, u, err = w.checkSingleUse(tx, passkeyEnrollment, id, secret, w.svc.timestamp())
		return err
	})
	if err != nil {
		return PasskeyChallenge{}, fromStore(err, "user")
	}
	return w.BeginPasskeyRegistration(ctx, u.ID)
}

// ConfirmChallengePasskeyRegistration completes the registration begun
// with BeginChallengePasskeyRegistration (state) and, in the same
// transaction, the sign-in that asked for it (challenge, used up with
// it), as ConfirmPasskeyRegistration does, and returns the sign-in; the
// program then starts a session with its SessionOptions. Its AMR is what
// the sign-in proved before it was asked for a passkey: the password's
// ["pwd"], or ["pwd", "otp", "mfa"] after a second factor
// (VerifySecondFactor); the new passkey did not sign the user in. The
// audit trail records user.passkey.added and the sign-in's
// sign_in.succeeded (method "password", "password+totp" or
// "recovery_code"). A sign-in at the provider takes
// Provider.ConfirmChallengePasskeyRegistration instead.
func (w *Workspace) ConfirmChallengePasskeyRegistration(ctx context.Context, challenge, state string, response []byte, name string) (VerifiedPasskey, error) {
	return w.confirmChallengePasskeyRegistration(ctx, challenge, state, response, name, true)
}

// ConfirmChallengePasskeyRegistration is
// Workspace.ConfirmChallengePasskeyRegistration for the stored
// authorization request requestID, which must still be pending: it writes
// no sign_in.succeeded, which CompleteSignIn writes with the
// VerifiedPasskey's SessionOptions.
func (p *Provider) ConfirmChallengePasskeyRegistration(ctx context.Context, requestID, challenge, state string, response []byte, name string) (VerifiedPasskey, error) {
	if _, err := p.GetPendingAuthorization(ctx, requestID); err != nil {
		return VerifiedPasskey{}, err
	}
	return p.w.confirmChallengePasskeyRegistration(ctx, challenge, state, response, name, false)
}

// confirmChallengePasskeyRegistration completes an enrolment challenge's
// registration and sign-in; record says whether the sign-in ends here,
// and writes its sign_in.succeeded.
func (w *Workspace) confirmChallengePasskeyRegistration(ctx context.Context, challenge, state string, response []byte, name string, record bool) (VerifiedPasskey, error) {
	cid, csecret, err := passkeyEnrollment.parse(challenge)
	if err != nil {
		return VerifiedPasskey{}, err
	}
	var amr []string
	var method string
	p, u, err := w.finishRegistration(ctx, passkeyRegistration, state, response, name, func(tx store.Tx, u store.User, now time.Time) error {
		t, cu, err := w.checkSingleUse(tx, passkeyEnrollment, cid, csecret, now)
		if err != nil {
			return err
		}
		if cu.ID != u.ID {
			return errChallengeInvalid()
		}
		if err := w.useSingleUse(tx, t, now); err != nil {
			return err
		}
		amr, method = enrolledSignIn(t.Purpose)
		if !record {
			return nil
		}
		return w.auditSignedIn(ctx, tx, u, signInChanges(method, "", ""))
	})
	if err != nil {
		return VerifiedPasskey{}, err
	}
	return VerifiedPasskey{User: userFromRecord(u), Passkey: p, AMR: amr, method: method}, nil
}
