package identity_test

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// Every exported method of Service, Workspace and Provider, with the
// audit action each must produce: TestAuditMethodsListed fails when a
// method is added without a row here, and TestAuditMethods calls each on
// a prepared workspace and finds its action in the trail.

// methodFixture is an configEnv (clients web, spa and machine, ada) made
// ready for any method: keys made, SMTP with verification and reset
// links, ada with a password and a TOTP factor, bob with a password only
// (role admin directly and through group eng, attribute department),
// roles admin (1) and viewer (2), group eng (1) carrying admin, a claim
// mapper of department, an API key, an endpoint subscribed to
// user.created whose delivery of bob's creation failed, the workspace's
// and web's logos, and a session and web tokens of bob.
type methodFixture struct {
	*configEnv
	q        *identity.Queue
	adaTOTP  string
	adaCodes []string
	bob      identity.User
	key      identity.CreatedAPIKey
	hookID   int64
	delivery int64
	session  identity.CreatedSession
	// What a case's prep made for its call.
	requestID string
	token     string
	challenge string
	// passkey is a begun passkey ceremony, and bobHandle bob's handle.
	passkey   identity.PasskeyChallenge
	bobHandle []byte
}

const bobPassword = "correct horse battery"

func newMethodFixture(t *testing.T) *methodFixture {
	t.Helper()
	f := &methodFixture{configEnv: newConfigEnv(t)}
	f.keyByState()
	f.setSMTP(resetSMTP())
	f.q = f.queue(nil)
	f.adaTOTP, f.adaCodes = f.enrol(f.ada.ID)
	f.hookID = f.hook(identity.EventUserCreated)
	f.bob = f.user("bob")
	deliveries, err := listItems(f.ws.ListDeliveries(f.ctx, f.hookID, nil))
	if err != nil || len(deliveries) != 1 {
		t.Fatalf("ListDeliveries = %+v, %v; want bob's creation", deliveries, err)
	}
	f.delivery = deliveries[0].ID
	f.failDelivery(f.delivery)
	f.role("admin")
	f.role("viewer")
	f.group("eng")
	f.mapper("department", "dept", true, false)
	f.attr(f.bob.ID, "department", "eng")
	must(t, f.ws.AssignRole(f.ctx, f.bob.ID, 1))
	must(t, f.ws.AddGroupMember(f.ctx, 1, f.bob.ID))
	must(t, f.ws.AssignGroupRole(f.ctx, 1, 1))
	if f.key, err = f.ws.CreateAPIKey(f.ctx, "deploy", []identity.Scope{identity.ScopeUsersRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ws.SetLogo(f.ctx, pngOf(t, 4, 4, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ws.SetClientLogo(f.ctx, f.web.ID, pngOf(t, 4, 4, "")); err != nil {
		t.Fatal(err)
	}
	// Past the mail throttle's interval, so that another mail to bob goes.
	f.clock.Advance(10 * time.Minute)
	if f.session, err = f.ws.CreateSession(f.ctx, f.bob.ID, nil); err != nil {
		t.Fatal(err)
	}
	f.tok = f.issue(identity.TokenRequest{ClientID: f.web.ID, UserID: f.bob.ID, Scopes: []string{"openid", "profile"}})
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// failDelivery fails a delivery in the store, as a dispatcher whose
// attempts all failed would.
func (f *methodFixture) failDelivery(id int64) {
	f.t.Helper()
	d := f.stored(id)
	d.Status = store.DeliveryFailed
	must(f.t, f.st.Store.Update(f.ctx, func(tx store.Tx) error { return tx.PutDelivery("acme", d) }))
}

// authorizeWeb stores an authorization request of the web client and
// keeps its id.
func (f *methodFixture) authorizeWeb() {
	f.requestID = f.authorize(f.webRequest(), "").RequestID
}

// bobCode signs bob in for an authorization request of the web client
// and keeps the code.
func (f *methodFixture) bobCode() {
	f.authorizeWeb()
	s, err := f.ws.Provider().SignIn(f.ctx, f.requestID, "bob", bobPassword)
	must(f.t, err)
	f.authCode = s.Authorization.Code
}

// verificationToken queues a verification mail to bob, sends it and
// keeps its token.
func (f *methodFixture) verificationToken() {
	must(f.t, f.ws.SendVerificationEmail(f.ctx, f.bob.ID))
	jobs, err := listItems(f.ws.ListEmailJobs(f.ctx, &identity.Page{Limit: identity.MaxPageLimit}))
	must(f.t, err)
	f.token = f.sendMail(f.q, jobs[len(jobs)-1].ID)
}

// adaChallenge signs ada in with her password and keeps the challenge of
// her second factor.
func (f *methodFixture) adaChallenge() { f.challenge = f.testEnv.challenge(identity.CodeMFARequired) }

// failBob fails n sign-ins of bob, with the throttle off: the lockout
// alone counts them.
func (f *methodFixture) failBob(n int) {
	set, err := f.ws.GetSettings(f.ctx)
	must(f.t, err)
	set.Throttle.Disabled = true
	must(f.t, f.ws.UpdateSettings(f.ctx, set))
	for range n {
		_, err := f.ws.Authenticate(f.ctx, "bob", "wrong password")
		if identity.ErrorCode(err) != identity.CodeUnauthenticated {
			f.t.Fatalf("Authenticate(bob, wrong) = %v, want CodeUnauthenticated", err)
		}
	}
}

// lockBob locks bob's account by failed sign-ins: his right password is
// refused then.
func (f *methodFixture) lockBob() {
	f.failBob(10)
	if _, err := f.ws.Authenticate(f.ctx, "bob", bobPassword); identity.ErrorCode(err) != identity.CodeLocked {
		f.t.Fatalf("Authenticate(bob) after 10 failures = %v, want CodeLocked", err)
	}
}

// setupToken issues an account setup token for bob into f.token.
func (f *methodFixture) setupToken() {
	s, err := f.ws.CreateAccountSetup(f.ctx, f.bob.ID, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.token = s.Token
}

// auditCase is one call of a method and the action it must produce.
// bobPasskey registers passkey AQ for bob.
func (f *methodFixture) bobPasskey() { _, f.bobHandle = f.register(f.ws, f.bob.ID, []byte{1}, nil) }

// bobRegistration begins a passkey registration of bob's.
func (f *methodFixture) bobRegistration() {
	var err error
	f.passkey, err = f.ws.BeginPasskeyRegistration(f.ctx, f.bob.ID)
	must(f.t, err)
}

// bobPasskeySignIn registers bob's passkey and begins a discoverable
// sign-in.
func (f *methodFixture) bobPasskeySignIn() {
	f.bobPasskey()
	var err error
	f.passkey, err = f.ws.BeginPasskeySignIn(f.ctx, nil)
	must(f.t, err)
}

// passkeyResponse is an honest response to f.passkey with credential AQ,
// edited by edit.
func (f *methodFixture) passkeyResponse(edit func(*fakeResponse)) []byte {
	r := goodResponse(fakeOpts(f.t, f.passkey), []byte{1})
	if f.bobHandle != nil {
		r.UserHandle = f.bobHandle
	}
	if edit != nil {
		edit(&r)
	}
	return encode(f.t, r)
}

// bobPasskeyChallenge makes passkeys required and signs bob in with his
// password, for the challenge of his enrolment.
func (f *methodFixture) bobPasskeyChallenge() {
	set, err := f.ws.GetSettings(f.ctx)
	must(f.t, err)
	set.Passkeys = identity.PasskeysRequired
	must(f.t, f.ws.UpdateSettings(f.ctx, set))
	_, err = f.ws.Authenticate(f.ctx, "bob", bobPassword)
	var ie *identity.Error
	if !errors.As(err, &ie) || ie.Code != identity.CodePasskeyEnrollmentRequired {
		f.t.Fatalf("Authenticate(bob) = %v, want CodePasskeyEnrollmentRequired", err)
	}
	f.challenge = ie.Challenge
}

// bobPasskeySignInAgain begins another discoverable sign-in.
func (f *methodFixture) bobPasskeySignInAgain() {
	var err error
	f.passkey, err = f.ws.BeginPasskeySignIn(f.ctx, nil)
	must(f.t, err)
}

type auditCase struct {
	// action is the action the call must produce; "" for a read or a
	// method of transient state, which may write no record at all.
	action identity.AuditAction
	// prep, when set, readies the call, unaudited.
	prep func(f *methodFixture)
	call func(ctx context.Context, f *methodFixture) error
	// in is the workspace whose trail holds the record: "" for "acme".
	in string
	// sinkOnly: the record reaches the AuditSink only (the trail is
	// gone with the workspace).
	sinkOnly bool
}

// read is the case of a method that writes no record.
func read(call func(ctx context.Context, f *methodFixture) error) []auditCase {
	return []auditCase{{call: call}}
}

// writes is the case of a method that writes action.
func writes(action identity.AuditAction, call func(ctx context.Context, f *methodFixture) error) []auditCase {
	return []auditCase{{action: action, call: call}}
}

// resultErr drops a result and keeps its error.
func resultErr[T any](_ T, err error) error { return err }

// auditMethods is every exported method of *identity.Service,
// *identity.Workspace and *identity.Provider, with its cases.
var auditMethods = map[string][]auditCase{
	// Service.
	"Service.AllowsPrivateWebhooks": read(func(_ context.Context, f *methodFixture) error {
		f.svc.AllowsPrivateWebhooks()
		return nil
	}),
	"Service.AuthorizeAPIKey": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.AuthorizeAPIKey(ctx, f.key.Secret, "acme", identity.ScopeUsersRead))
	}),
	"Service.Backup": writes(identity.AuditBackup, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.Backup(ctx, io.Discard))
	}),
	"Service.Close": read(func(_ context.Context, f *methodFixture) error { return f.svc.Close() }),
	"Service.CreateWorkspace": {{action: identity.AuditWorkspaceCreated, in: "beta", call: func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.CreateWorkspace(ctx, "beta", nil))
	}}},
	"Service.DeleteWorkspace": {{action: identity.AuditWorkspaceDeleted, sinkOnly: true, call: func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.DeleteWorkspace(ctx, "acme"))
	}}},
	"Service.GetQueueStats": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.svc.GetQueueStats(ctx)) }),
	"Service.GetWorkspace":  read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.svc.GetWorkspace(ctx, "acme")) }),
	"Service.ListWorkspaces": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.ListWorkspaces(ctx))
	}),
	"Service.IssuerBase": read(func(_ context.Context, f *methodFixture) error { f.svc.IssuerBase(); return nil }),
	"Service.Now":        read(func(_ context.Context, f *methodFixture) error { f.svc.Now(); return nil }),
	"Service.PasswordHashing": read(func(_ context.Context, f *methodFixture) error {
		f.svc.PasswordHashing()
		return nil
	}),
	"Service.PasswordHashingBudget": read(func(_ context.Context, f *methodFixture) error {
		f.svc.PasswordHashingBudget()
		return nil
	}),
	"Service.Queue": read(func(_ context.Context, f *methodFixture) error { return resultErr(f.svc.Queue(nil)) }),
	// Sweeping a year on removes the fixture's records, and leaves one
	// of that.
	"Service.Sweep": writes(identity.AuditRetentionSwept, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.Sweep(ctx, f.clock.Now().Add(400*24*time.Hour)))
	}),
	"Service.SweepEvery": read(func(ctx context.Context, f *methodFixture) error {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		f.svc.SweepEvery(ctx, time.Hour, func(identity.SweepResult, error) {})
		return nil
	}),
	"Service.SweepIdempotency": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.SweepIdempotency(ctx))
	}),
	"Service.SweepIdempotencyEvery": read(func(ctx context.Context, f *methodFixture) error {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		f.svc.SweepIdempotencyEvery(ctx, time.Hour, func(int, error) {})
		return nil
	}),
	"Service.TokensReady": read(func(_ context.Context, f *methodFixture) error { return f.svc.TokensReady() }),
	"Service.TrustsProxy": read(func(_ context.Context, f *methodFixture) error {
		f.svc.TrustsProxy(netip.MustParseAddr("10.0.0.1"))
		return nil
	}),
	"Service.VerifyAPIKey": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.svc.VerifyAPIKey(ctx, f.key.Secret))
	}),
	"Service.WatchQueue": read(func(_ context.Context, f *methodFixture) error {
		f.svc.WatchQueue(&wakeCounter{})()
		return nil
	}),

	// Workspace: users, their attributes, roles and groups.
	"Workspace.CreateUser": writes(identity.AuditUserCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateUser(ctx, newUserNamed("carol")))
	}),
	"Workspace.ImportUsers": writes(identity.AuditUserImported, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ImportUsers(ctx, []identity.ImportedUser{{Username: "dave", Email: "dave@example.com", FullName: "Dave"}}))
	}),
	"Workspace.UpdateUser": writes(identity.AuditUserUpdated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.UpdateUser(ctx, f.bob.ID, identity.UserUpdate{Email: "bob@example.org", FullName: "Bob"}))
	}),
	"Workspace.DisableUser": writes(identity.AuditUserDisabled, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DisableUser(ctx, f.bob.ID)
	}),
	"Workspace.EnableUser": {{
		action: identity.AuditUserEnabled,
		prep:   func(f *methodFixture) { must(f.t, f.ws.DisableUser(f.ctx, f.bob.ID)) },
		call:   func(ctx context.Context, f *methodFixture) error { return f.ws.EnableUser(ctx, f.bob.ID) },
	}},
	"Workspace.DeleteUserPermanently": writes(identity.AuditUserDeleted, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.DeleteUserPermanently(ctx, f.bob.ID))
	}),
	"Workspace.SetEmailVerified": {
		{action: identity.AuditUserEmailVerified, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.SetEmailVerified(ctx, f.bob.ID, true))
		}},
		{
			action: identity.AuditUserEmailUnverified,
			prep:   func(f *methodFixture) { must(f.t, resultErr(f.ws.SetEmailVerified(f.ctx, f.bob.ID, true))) },
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.SetEmailVerified(ctx, f.bob.ID, false))
			},
		},
	},
	"Workspace.ConfirmEmail": {{
		action: identity.AuditUserEmailVerified,
		prep:   (*methodFixture).verificationToken,
		call:   func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ConfirmEmail(ctx, f.token)) },
	}},
	"Workspace.SendVerificationEmail": writes(identity.AuditVerificationSent, func(ctx context.Context, f *methodFixture) error {
		return f.ws.SendVerificationEmail(ctx, f.bob.ID)
	}),
	"Workspace.SendTestEmail": writes(identity.AuditTestEmailSent, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.SendTestEmail(ctx, "admin@example.com"))
	}),
	"Workspace.SetAttribute": writes(identity.AuditUserAttributeSet, func(ctx context.Context, f *methodFixture) error {
		return errOf(f.ws.SetAttribute(ctx, f.bob.ID, "team", "platform", nil))
	}),
	"Workspace.DeleteAttribute": writes(identity.AuditUserAttributeDeleted, func(ctx context.Context, f *methodFixture) error {
		return errOf(f.ws.DeleteAttribute(ctx, f.bob.ID, "department", nil))
	}),
	"Workspace.AssignRole": writes(identity.AuditUserRoleAssigned, func(ctx context.Context, f *methodFixture) error {
		return f.ws.AssignRole(ctx, f.bob.ID, 2)
	}),
	"Workspace.RemoveRole": writes(identity.AuditUserRoleRemoved, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RemoveRole(ctx, f.bob.ID, 1)
	}),
	"Workspace.CreateRole": writes(identity.AuditRoleCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateRole(ctx, identity.NewRole{Name: "auditor"}))
	}),
	"Workspace.UpdateRole": writes(identity.AuditRoleUpdated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.UpdateRole(ctx, 2, identity.RoleUpdate{Name: "reader"}))
	}),
	"Workspace.DeleteRole": writes(identity.AuditRoleDeleted, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteRole(ctx, 2)
	}),
	"Workspace.CreateGroup": writes(identity.AuditGroupCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateGroup(ctx, identity.NewGroup{Name: "ops"}))
	}),
	"Workspace.UpdateGroup": writes(identity.AuditGroupUpdated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.UpdateGroup(ctx, 1, identity.GroupUpdate{Name: "engineering"}))
	}),
	"Workspace.DeleteGroup": writes(identity.AuditGroupDeleted, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteGroup(ctx, 1)
	}),
	"Workspace.AddGroupMember": writes(identity.AuditGroupMemberAdded, func(ctx context.Context, f *methodFixture) error {
		return f.ws.AddGroupMember(ctx, 1, f.ada.ID)
	}),
	"Workspace.RemoveGroupMember": writes(identity.AuditGroupMemberRemoved, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RemoveGroupMember(ctx, 1, f.bob.ID)
	}),
	"Workspace.AssignGroupRole": writes(identity.AuditGroupRoleAssigned, func(ctx context.Context, f *methodFixture) error {
		return f.ws.AssignGroupRole(ctx, 1, 2)
	}),
	"Workspace.RemoveGroupRole": writes(identity.AuditGroupRoleRemoved, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RemoveGroupRole(ctx, 1, 1)
	}),
	"Workspace.GetUser":      read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetUser(ctx, f.bob.ID)) }),
	"Workspace.GetRole":      read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetRole(ctx, 1)) }),
	"Workspace.GetGroup":     read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetGroup(ctx, 1)) }),
	"Workspace.GetMFAStatus": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetMFAStatus(ctx, f.ada.ID)) }),
	"Workspace.GetRoleByName": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetRoleByName(ctx, "admin"))
	}),
	"Workspace.GetGroupByName": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetGroupByName(ctx, "eng"))
	}),
	"Workspace.ListUsers": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListUsers(ctx, "", nil)) }),
	"Workspace.ListUsersByAttribute": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListUsersByAttribute(ctx, "department", "eng", nil))
	}),
	"Workspace.ListAttributes": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListAttributes(ctx, f.bob.ID))
	}),
	"Workspace.ListRoles":  read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListRoles(ctx, "", nil)) }),
	"Workspace.ListGroups": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListGroups(ctx, "", nil)) }),
	"Workspace.ListRoleHolders": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListRoleHolders(ctx, 1, nil))
	}),
	"Workspace.ListGroupMembers": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListGroupMembers(ctx, 1, nil))
	}),
	"Workspace.ListGroupRoles": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListGroupRoles(ctx, 1)) }),
	"Workspace.ListUserGroups": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListUserGroups(ctx, f.bob.ID))
	}),
	"Workspace.ListUserRoles": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListUserRoles(ctx, f.bob.ID))
	}),
	"Workspace.ExportUsers": writes(identity.AuditExport, func(ctx context.Context, f *methodFixture) error {
		return f.ws.ExportUsers(ctx, func(identity.ImportedUser) error { return nil })
	}),
	"Workspace.ExportUsersJSONLines": writes(identity.AuditExport, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ExportUsersJSONLines(ctx, io.Discard))
	}),

	// Workspace: passwords, second factors, sign-in, sessions.
	"Workspace.SetPassword": writes(identity.AuditPasswordSet, func(ctx context.Context, f *methodFixture) error {
		return f.ws.SetPassword(ctx, f.bob.ID, "a new battery staple")
	}),
	"Workspace.ChangePassword": {
		{action: identity.AuditPasswordChanged, call: func(ctx context.Context, f *methodFixture) error {
			return f.ws.ChangePassword(ctx, f.bob.ID, bobPassword, "a new battery staple")
		}},
		{action: identity.AuditPasswordChanged, call: func(ctx context.Context, f *methodFixture) error {
			return f.ws.ChangePassword(ctx, f.bob.ID, "wrong password", "a new battery staple")
		}},
	},
	"Workspace.RequestPasswordReset": writes(identity.AuditPasswordResetRequested, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RequestPasswordReset(ctx, "bob@example.com", nil)
	}),
	"Workspace.CheckPasswordResetToken": {{
		prep: func(f *methodFixture) { f.token = f.resetToken(f.q) },
		call: func(ctx context.Context, f *methodFixture) error { return f.ws.CheckPasswordResetToken(ctx, f.token) },
	}},
	"Workspace.ResetPassword": {{
		action: identity.AuditPasswordReset,
		prep:   func(f *methodFixture) { f.token = f.resetToken(f.q) },
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.ResetPassword(ctx, f.token, "a new battery staple"))
		},
	}},
	"Workspace.CreateAccountSetup": writes(identity.AuditPasswordResetRequested, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateAccountSetup(ctx, f.bob.ID, nil))
	}),
	"Workspace.CheckAccountSetup": {{
		prep: (*methodFixture).setupToken,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.CheckAccountSetup(ctx, f.token))
		},
	}},
	"Workspace.CompleteAccountSetup": {{
		action: identity.AuditPasswordSet,
		prep:   (*methodFixture).setupToken,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.CompleteAccountSetup(ctx, f.token, identity.AccountSetupInput{Password: "a new battery staple"}))
		},
	}},
	"Workspace.UnlockUser": {{
		action: identity.AuditAccountUnlocked,
		prep:   (*methodFixture).lockBob,
		call:   func(ctx context.Context, f *methodFixture) error { return f.ws.UnlockUser(ctx, f.bob.ID) },
	}},
	"Workspace.Authenticate": {
		{action: identity.AuditSignInSucceeded, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Authenticate(ctx, "bob", bobPassword))
		}},
		{action: identity.AuditSignInFailed, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Authenticate(ctx, "bob", "wrong password"))
		}},
		{action: identity.AuditSignInFailed, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Authenticate(ctx, "nobody", "wrong password"))
		}},
		// The tenth failure locks the account.
		{
			action: identity.AuditAccountLocked,
			prep:   func(f *methodFixture) { f.failBob(9) },
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Authenticate(ctx, "bob", "wrong password"))
			},
		},
		// A lock expires on the way to the next sign-in.
		{
			action: identity.AuditAccountUnlocked,
			prep:   func(f *methodFixture) { f.lockBob(); f.clock.Advance(time.Hour) },
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Authenticate(ctx, "bob", bobPassword))
			},
		},
		// A right password that asks for the second factor: nothing
		// until it completes.
		{call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Authenticate(ctx, "ada", adaPassword))
		}},
	},
	"Workspace.Login": writes(identity.AuditSignInSucceeded, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Login(ctx, "bob", bobPassword))
	}),
	"Workspace.VerifySecondFactor": {
		{
			action: identity.AuditSignInSucceeded, prep: (*methodFixture).adaChallenge,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.VerifySecondFactor(ctx, f.challenge, f.code(f.adaTOTP, 0)))
			},
		},
		{
			action: identity.AuditSignInFailed, prep: (*methodFixture).adaChallenge,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.VerifySecondFactor(ctx, f.challenge, "000000"))
			},
		},
		{
			action: identity.AuditSecondFactorRecoveryUsed, prep: (*methodFixture).adaChallenge,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.VerifySecondFactor(ctx, f.challenge, f.adaCodes[0]))
			},
		},
	},
	"Workspace.BeginTOTPEnrollment": writes(identity.AuditSecondFactorEnrollStarted, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.BeginTOTPEnrollment(ctx, f.bob.ID))
	}),
	"Workspace.BeginChallengeEnrollment": {{
		action: identity.AuditSecondFactorEnrollStarted,
		prep: func(f *methodFixture) {
			set, err := f.ws.GetSettings(f.ctx)
			must(f.t, err)
			set.MFA = identity.MFARequired
			must(f.t, f.ws.UpdateSettings(f.ctx, set))
			_, err = f.ws.Authenticate(f.ctx, "bob", bobPassword)
			if identity.ErrorCode(err) != identity.CodeMFAEnrollmentRequired {
				f.t.Fatalf("Authenticate(bob) = %v, want CodeMFAEnrollmentRequired", err)
			}
			f.challenge = err.(*identity.Error).Challenge
		},
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.BeginChallengeEnrollment(ctx, f.challenge))
		},
	}},
	"Workspace.ConfirmTOTPEnrollment": {{
		action: identity.AuditSecondFactorEnrolled,
		prep: func(f *methodFixture) {
			en, err := f.ws.BeginTOTPEnrollment(f.ctx, f.bob.ID)
			must(f.t, err)
			f.token = en.Secret
		},
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.ConfirmTOTPEnrollment(ctx, f.bob.ID, f.code(f.token, 0)))
		},
	}},
	"Workspace.RemoveSecondFactor": {
		{action: identity.AuditSecondFactorRemoved, call: func(ctx context.Context, f *methodFixture) error {
			return f.ws.RemoveSecondFactor(ctx, f.ada.ID, f.code(f.adaTOTP, 0))
		}},
		{action: identity.AuditSecondFactorRemoved, call: func(ctx context.Context, f *methodFixture) error {
			return f.ws.RemoveSecondFactor(ctx, f.ada.ID, "000000")
		}},
	},
	"Workspace.ListPasskeys": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListPasskeys(ctx, f.bob.ID))
	}),
	"Workspace.BeginPasskeyRegistration": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.BeginPasskeyRegistration(ctx, f.bob.ID))
	}),
	"Workspace.ConfirmPasskeyRegistration": {{action: identity.AuditPasskeyAdded, prep: (*methodFixture).bobRegistration,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.ConfirmPasskeyRegistration(ctx, f.bob.ID, f.passkey.State, f.passkeyResponse(nil), "Laptop"))
		}}},
	"Workspace.UpdatePasskey": {{action: identity.AuditPasskeyRenamed, prep: (*methodFixture).bobPasskey,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.UpdatePasskey(ctx, f.bob.ID, "AQ", "Work"))
		}}},
	"Workspace.DeletePasskey": {{action: identity.AuditPasskeyRemoved, prep: (*methodFixture).bobPasskey,
		call: func(ctx context.Context, f *methodFixture) error { return f.ws.DeletePasskey(ctx, f.bob.ID, "AQ") }}},
	"Workspace.RemovePasskey": {{action: identity.AuditPasskeyRemoved, prep: (*methodFixture).bobPasskey,
		call: func(ctx context.Context, f *methodFixture) error { return f.ws.RemovePasskey(ctx, f.bob.ID, "AQ") }}},
	"Workspace.BeginPasskeySignIn": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.BeginPasskeySignIn(ctx, &identity.PasskeySignInOptions{Login: "bob"}))
	}),
	"Workspace.VerifyPasskeySignIn": {
		{action: identity.AuditSignInSucceeded, prep: (*methodFixture).bobPasskeySignIn,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.VerifyPasskeySignIn(ctx, f.passkey.State, f.passkeyResponse(nil)))
			}},
		{action: identity.AuditSignInFailed, prep: (*methodFixture).bobPasskeySignIn,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.VerifyPasskeySignIn(ctx, f.passkey.State, f.passkeyResponse(func(r *fakeResponse) { r.UV = false })))
			}},
		{action: identity.AuditPasskeyCloneSuspected, prep: (*methodFixture).bobPasskeySignIn,
			call: func(ctx context.Context, f *methodFixture) error {
				// The count goes from 0 to 5, then back to 3.
				must(f.t, resultErr(f.ws.VerifyPasskeySignIn(ctx, f.passkey.State, f.passkeyResponse(func(r *fakeResponse) { r.SignCount = 5 }))))
				f.bobPasskeySignInAgain()
				return resultErr(f.ws.VerifyPasskeySignIn(ctx, f.passkey.State, f.passkeyResponse(func(r *fakeResponse) { r.SignCount = 3 })))
			}},
	},
	"Workspace.BeginChallengePasskeyRegistration": {{prep: (*methodFixture).bobPasskeyChallenge,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.BeginChallengePasskeyRegistration(ctx, f.challenge))
		}}},
	"Workspace.ConfirmChallengePasskeyRegistration": {{action: identity.AuditPasskeyAdded,
		prep: func(f *methodFixture) {
			f.bobPasskeyChallenge()
			var err error
			f.passkey, err = f.ws.BeginChallengePasskeyRegistration(f.ctx, f.challenge)
			must(f.t, err)
		},
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.ConfirmChallengePasskeyRegistration(ctx, f.challenge, f.passkey.State, f.passkeyResponse(nil), "Phone"))
		}}},
	"Workspace.ResetMFA": writes(identity.AuditSecondFactorReset, func(ctx context.Context, f *methodFixture) error {
		return f.ws.ResetMFA(ctx, f.ada.ID)
	}),
	"Workspace.RegenerateRecoveryCodes": writes(identity.AuditSecondFactorCodesRenewed, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.RegenerateRecoveryCodes(ctx, f.ada.ID, f.code(f.adaTOTP, 0)))
	}),
	"Workspace.CreateSession": writes(identity.AuditSessionCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateSession(ctx, f.bob.ID, nil))
	}),
	"Workspace.RevokeSession": writes(identity.AuditSessionRevoked, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RevokeSession(ctx, f.session.Session.ID)
	}),
	"Workspace.RevokeUserSession": writes(identity.AuditSessionRevoked, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RevokeUserSession(ctx, f.bob.ID, f.session.Session.ID)
	}),
	"Workspace.RevokeUserSessions": writes(identity.AuditSessionRevoked, func(ctx context.Context, f *methodFixture) error {
		_, err := f.ws.RevokeUserSessions(ctx, f.bob.ID)
		return err
	}),
	"Workspace.GetSession": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetSession(ctx, f.session.Session.ID))
	}),
	"Workspace.ListSessions": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListSessions(ctx, f.bob.ID, nil))
	}),
	"Workspace.VerifySession": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.VerifySession(ctx, f.session.Secret))
	}),
	// Within its limits a read; past them the session is revoked.
	"Workspace.VerifySessionWithin": {
		{call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.VerifySessionWithin(ctx, f.session.Secret, identity.SessionLimits{}))
		}},
		{action: identity.AuditSessionRevoked, call: func(ctx context.Context, f *methodFixture) error {
			if _, err := f.ws.VerifySessionWithin(ctx, f.session.Secret, identity.SessionLimits{MaxAge: time.Nanosecond}); identity.ErrorCode(err) != identity.CodeUnauthenticated {
				return errors.New("a session past its MaxAge was accepted")
			}
			return nil
		}},
	},

	// Workspace: configuration.
	"Workspace.GetSettings": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetSettings(ctx)) }),
	"Workspace.UpdateSettings": writes(identity.AuditSettingsChanged, func(ctx context.Context, f *methodFixture) error {
		return f.ws.UpdateSettings(ctx, identity.Settings{PasswordPolicy: identity.PasswordPolicy{MinLength: 12, MaxLength: 1024}, SMTP: resetSMTP()})
	}),
	"Workspace.SetBranding": writes(identity.AuditBrandingChanged, func(ctx context.Context, f *methodFixture) error {
		return f.ws.SetBranding(ctx, identity.Branding{DisplayName: "Acme Corp"})
	}),
	"Workspace.GetLogo": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetLogo(ctx)) }),
	"Workspace.SetLogo": writes(identity.AuditBrandingLogoSet, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.SetLogo(ctx, pngOf(f.t, 8, 8, "")))
	}),
	"Workspace.DeleteLogo": writes(identity.AuditBrandingLogoDelete, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteLogo(ctx)
	}),
	"Workspace.ListClaimMappers": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListClaimMappers(ctx)) }),
	"Workspace.GetClaimMapper": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetClaimMapper(ctx, "department"))
	}),
	"Workspace.SetClaimMapper": writes(identity.AuditMapperPut, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.SetClaimMapper(ctx, "team", identity.ClaimMapperSpec{ClaimName: "team"}))
	}),
	"Workspace.DeleteClaimMapper": writes(identity.AuditMapperDeleted, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteClaimMapper(ctx, "department")
	}),
	"Workspace.GetClaims": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetClaims(ctx, f.bob.ID, identity.AccessToken))
	}),
	"Workspace.CreateWebhook": writes(identity.AuditWebhookCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://crm.example.com/hook", Events: []string{"user.deleted"}}))
	}),
	"Workspace.GetWebhook":   read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetWebhook(ctx, f.hookID)) }),
	"Workspace.ListWebhooks": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListWebhooks(ctx, nil)) }),
	"Workspace.DeleteWebhook": writes(identity.AuditWebhookDeleted, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteWebhook(ctx, f.hookID)
	}),
	"Workspace.GetDelivery": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetDelivery(ctx, f.delivery)) }),
	"Workspace.ListDeliveries": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListDeliveries(ctx, f.hookID, nil))
	}),
	"Workspace.ListEmailJobs": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListEmailJobs(ctx, nil)) }),
	"Workspace.EnableWebhook": {{
		action: identity.AuditWebhookEnabled,
		prep:   func(f *methodFixture) { f.disableInStore(f.hookID) },
		call:   func(ctx context.Context, f *methodFixture) error { return f.ws.EnableWebhook(ctx, f.hookID) },
	}},
	"Workspace.RetryDelivery": writes(identity.AuditDeliveryRetried, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RetryDelivery(ctx, f.delivery)
	}),
	"Workspace.CreateAPIKey": writes(identity.AuditAPIKeyCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateAPIKey(ctx, "ci", []identity.Scope{identity.ScopeAuditRead}))
	}),
	"Workspace.ListAPIKeys": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListAPIKeys(ctx)) }),
	"Workspace.RevokeAPIKey": writes(identity.AuditAPIKeyRevoked, func(ctx context.Context, f *methodFixture) error {
		return f.ws.RevokeAPIKey(ctx, f.key.APIKey.ID)
	}),
	"Workspace.CreateClient": writes(identity.AuditClientCreated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CreateClient(ctx, identity.NewClient{Name: "Portal", RedirectURIs: []string{"https://portal.example.com/cb"}}))
	}),
	"Workspace.GetClient":   read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetClient(ctx, f.web.ID)) }),
	"Workspace.ListClients": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListClients(ctx)) }),
	"Workspace.DeleteClient": writes(identity.AuditClientDeleted, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteClient(ctx, f.spa.ID)
	}),
	"Workspace.GetClientLogo": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetClientLogo(ctx, f.web.ID))
	}),
	"Workspace.SetClientLogo": writes(identity.AuditClientLogoSet, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.SetClientLogo(ctx, f.spa.ID, pngOf(f.t, 8, 8, "")))
	}),
	"Workspace.DeleteClientLogo": writes(identity.AuditClientLogoDeleted, func(ctx context.Context, f *methodFixture) error {
		return f.ws.DeleteClientLogo(ctx, f.web.ID)
	}),
	"Workspace.AuthenticateClient": {
		{action: identity.AuditClientAuthFailed, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.AuthenticateClient(ctx, f.web.ID, "idcs_wrong"))
		}},
		{call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.AuthenticateClient(ctx, f.web.ID, f.webSecret))
		}},
	},
	"Workspace.ListSigningKeys": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.ListSigningKeys(ctx)) }),
	"Workspace.RotateSigningKey": writes(identity.AuditSigningKeyRotated, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.RotateSigningKey(ctx))
	}),
	"Workspace.IssueTokens": writes(identity.AuditTokenIssued, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.IssueTokens(ctx, identity.TokenRequest{ClientID: f.web.ID, UserID: f.bob.ID, Scopes: []string{"openid"}}))
	}),
	"Workspace.VerifyAccessToken": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.VerifyAccessToken(ctx, f.tok.AccessToken))
	}),
	"Workspace.ListAuditRecords": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListAuditRecords(ctx, nil, nil))
	}),
	"Workspace.ListUsersFiltered": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListUsersFiltered(ctx, identity.UserFilter{Disabled: true}, nil))
	}),
	"Workspace.GetClaimsPreview": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.GetClaimsPreview(ctx, identity.ClaimsPreviewRequest{UserID: f.bob.ID}))
	}),
	"Workspace.GetOverview":   read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetOverview(ctx)) }),
	"Workspace.GetQueueStats": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetQueueStats(ctx)) }),
	"Workspace.GetLockState":  read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.GetLockState(ctx, f.bob.ID)) }),
	"Workspace.ListLockedUsers": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.ListLockedUsers(ctx, nil))
	}),
	"Workspace.CountAuditRecords": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.CountAuditRecords(ctx, nil, 10))
	}),
	"Workspace.CreatedAt": read(func(_ context.Context, f *methodFixture) error { f.ws.CreatedAt(); return nil }),
	"Workspace.Issuer":    read(func(_ context.Context, f *methodFixture) error { f.ws.Issuer(); return nil }),
	"Workspace.Provider":  read(func(_ context.Context, f *methodFixture) error { f.ws.Provider(); return nil }),
	"Workspace.Slug":      read(func(_ context.Context, f *methodFixture) error { f.ws.Slug(); return nil }),

	// Provider.
	"Provider.Authorize": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Provider().Authorize(ctx, f.webRequest(), ""))
	}),
	"Provider.GetAuthorizationClient": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Provider().GetAuthorizationClient(ctx, f.web.ID, webRedirect))
	}),
	"Provider.GetPendingAuthorization": {{
		prep: (*methodFixture).authorizeWeb,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().GetPendingAuthorization(ctx, f.requestID))
		},
	}},
	"Provider.SignIn": {
		{
			action: identity.AuditSignInSucceeded, prep: (*methodFixture).authorizeWeb,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().SignIn(ctx, f.requestID, "bob", bobPassword))
			},
		},
		{
			action: identity.AuditSignInFailed, prep: (*methodFixture).authorizeWeb,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().SignIn(ctx, f.requestID, "bob", "wrong password"))
			},
		},
	},
	// A success writes nothing of its own: the completion writes the
	// sign-in's record (TestProviderSecondFactorSignInRecordedOnce).
	"Provider.VerifyPasskeySignIn": {{action: identity.AuditSignInFailed,
		prep: func(f *methodFixture) { f.authorizeWeb(); f.bobPasskeySignIn() },
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().VerifyPasskeySignIn(ctx, f.requestID, f.passkey.State,
				f.passkeyResponse(func(r *fakeResponse) { r.Key = []byte("forged") })))
		}}},
	"Provider.ConfirmChallengePasskeyRegistration": {{action: identity.AuditPasskeyAdded,
		prep: func(f *methodFixture) {
			f.authorizeWeb()
			f.bobPasskeyChallenge()
			var err error
			f.passkey, err = f.ws.BeginChallengePasskeyRegistration(f.ctx, f.challenge)
			must(f.t, err)
		},
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().ConfirmChallengePasskeyRegistration(ctx, f.requestID, f.challenge, f.passkey.State, f.passkeyResponse(nil), "Phone"))
		}}},
	"Provider.VerifySecondFactor": {
		{
			action: identity.AuditSignInFailed, prep: func(f *methodFixture) { f.authorizeWeb(); f.adaChallenge() },
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().VerifySecondFactor(ctx, f.requestID, f.challenge, "000000"))
			},
		},
		{
			action: identity.AuditSecondFactorRecoveryUsed, prep: func(f *methodFixture) { f.authorizeWeb(); f.adaChallenge() },
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().VerifySecondFactor(ctx, f.requestID, f.challenge, f.adaCodes[0]))
			},
		},
	},
	"Provider.CompleteSignIn": {{
		action: identity.AuditSignInSucceeded, prep: (*methodFixture).authorizeWeb,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().CompleteSignIn(ctx, f.requestID, f.bob.ID, nil))
		},
	}},
	"Provider.ResumeSignIn": {{
		action: identity.AuditSignInSucceeded, prep: (*methodFixture).authorizeWeb,
		call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().ResumeSignIn(ctx, f.requestID, f.session.Secret))
		},
	}},
	"Provider.EndSession": writes(identity.AuditSessionRevoked, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Provider().EndSession(ctx, identity.EndSessionRequest{SessionToken: f.session.Secret, Confirmed: true}))
	}),
	"Provider.VerifyClient": {
		{action: identity.AuditClientAuthFailed, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().VerifyClient(ctx, f.web.ID, ""))
		}},
		{call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().VerifyClient(ctx, f.web.ID, f.webSecret))
		}},
	},
	"Provider.ExchangeCode": {
		{
			action: identity.AuditTokenIssued,
			prep:   (*methodFixture).bobCode,
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().ExchangeCode(ctx, f.web, f.authCode, webRedirect, pkceVerifier))
			},
		},
		{
			action: identity.AuditTokenCodeReused,
			prep: func(f *methodFixture) {
				f.bobCode()
				must(f.t, resultErr(f.ws.Provider().ExchangeCode(f.ctx, f.web, f.authCode, webRedirect, pkceVerifier)))
			},
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().ExchangeCode(ctx, f.web, f.authCode, webRedirect, pkceVerifier))
			},
		},
	},
	"Provider.RefreshTokens": {
		{action: identity.AuditTokenRefreshed, call: func(ctx context.Context, f *methodFixture) error {
			return resultErr(f.ws.Provider().RefreshTokens(ctx, f.web, f.tok.RefreshToken, nil))
		}},
		{
			action: identity.AuditTokenRefreshReused,
			prep: func(f *methodFixture) {
				must(f.t, resultErr(f.ws.Provider().RefreshTokens(f.ctx, f.web, f.tok.RefreshToken, nil)))
			},
			call: func(ctx context.Context, f *methodFixture) error {
				return resultErr(f.ws.Provider().RefreshTokens(ctx, f.web, f.tok.RefreshToken, nil))
			},
		},
	},
	"Provider.ExchangeClientCredentials": writes(identity.AuditTokenIssued, func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Provider().ExchangeClientCredentials(ctx, f.machine, nil))
	}),
	"Provider.RevokeToken": writes(identity.AuditTokenRevoked, func(ctx context.Context, f *methodFixture) error {
		return f.ws.Provider().RevokeToken(ctx, f.web, f.tok.RefreshToken)
	}),
	"Provider.IntrospectToken": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Provider().IntrospectToken(ctx, f.web, f.tok.AccessToken))
	}),
	"Provider.GetUserInfo": read(func(ctx context.Context, f *methodFixture) error {
		return resultErr(f.ws.Provider().GetUserInfo(ctx, f.tok.AccessToken))
	}),
	"Provider.GetKeySet":   read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.Provider().GetKeySet(ctx)) }),
	"Provider.GetMetadata": read(func(ctx context.Context, f *methodFixture) error { return resultErr(f.ws.Provider().GetMetadata(ctx)) }),
}

// TestAuditMethodsListed checks that auditMethods names every exported
// method of Service, Workspace and Provider, and no other, so that a
// method added is classified here too.
func TestAuditMethodsListed(t *testing.T) {
	var methods []string
	for _, typ := range []reflect.Type{
		reflect.TypeFor[*identity.Service](), reflect.TypeFor[*identity.Workspace](), reflect.TypeFor[*identity.Provider](),
	} {
		for m := range typ.Methods() {
			methods = append(methods, typ.Elem().Name()+"."+m.Name)
		}
	}
	slices.Sort(methods)
	var listed []string
	for name, cases := range auditMethods {
		listed = append(listed, name)
		if len(cases) == 0 {
			t.Errorf("%s has no case", name)
		}
	}
	slices.Sort(listed)
	if diff := cmp.Diff(methods, listed); diff != "" {
		t.Errorf("exported methods (-) and the methods auditMethods lists (+):\n%s", diff)
	}
}

// TestAuditMethods makes each call of auditMethods on a fixture of its
// own: a write must leave its action in the trail (or, for a deleted
// workspace, the AuditSink), at the call's time or later; any other call
// must write no record at all.
func TestAuditMethods(t *testing.T) {
	names := make([]string, 0, len(auditMethods))
	for name := range auditMethods {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for i, c := range auditMethods[name] {
			label := string(c.action)
			if label == "" {
				label = "none"
			}
			t.Run(name+"/"+label+"/"+string(rune('a'+i)), func(t *testing.T) {
				t.Parallel()
				f := newMethodFixture(t)
				if c.prep != nil {
					c.prep(f)
				}
				f.clock.Advance(time.Second)
				since := f.clock.Now()
				sunk := len(f.sink.actions())
				err := c.call(ciContext(f.ctx), f)
				fresh := f.sink.actions()[sunk:]
				switch {
				case c.action == "":
					if len(fresh) != 0 {
						t.Errorf("wrote %v (error %v), want no record", fresh, err)
					}
				case c.sinkOnly:
					if !slices.Contains(fresh, c.action) {
						t.Errorf("the sink got %v (error %v), want %s", fresh, err, c.action)
					}
				default:
					ws := f.ws
					if c.in != "" {
						if ws, err = f.svc.GetWorkspace(f.ctx, c.in); err != nil {
							t.Fatal(err)
						}
					}
					page, lerr := ws.ListAuditRecords(f.ctx, &identity.AuditFilter{Action: string(c.action), Since: since}, nil)
					if lerr != nil {
						t.Fatalf("ListAuditRecords: %v", lerr)
					}
					if len(page.Records) == 0 {
						t.Errorf("no %s in the trail; the call wrote %v (error %v)", c.action, fresh, err)
					}
				}
			})
		}
	}
}

// TestParseAuditRef: KIND:ID split at the first colon, "" as none, and a
// value without a colon refused naming its field.
func TestParseAuditRef(t *testing.T) {
	type result struct {
		Kind, ID string
		Err      error
	}
	refused := func(field string) error {
		return &identity.Error{Code: identity.CodeInvalid, Message: "invalid audit query", Fields: []identity.FieldError{{
			Field: field, Rule: identity.RuleFormat,
			Message: "must be KIND:ID, such as user:42, or KIND: for one without an id, such as system:",
		}}}
	}
	for _, tt := range []struct {
		field, s string
		want     result
	}{
		{"actor", "", result{}},
		{"actor", "user:42", result{Kind: "user", ID: "42"}},
		{"actor", "system:", result{Kind: "system"}},
		{"actor", ":k_1", result{ID: "k_1"}},
		{"target", "workspace:acme:x", result{Kind: "workspace", ID: "acme:x"}},
		{"actor", "system", result{Err: refused("actor")}},
		{"target", "user", result{Err: refused("target")}},
	} {
		t.Run(tt.field+" "+tt.s, func(t *testing.T) {
			var got result
			got.Kind, got.ID, got.Err = identity.ParseAuditRef(tt.field, tt.s)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAuditRef(%q, %q) (-want +got):\n%s", tt.field, tt.s, diff)
			}
		})
	}
}
