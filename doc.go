// Package identity is an embedded library for multi-workspace identity
// management: users with argon2id-hashed passwords, per-user attributes,
// claim mappers that project attributes into token claims, sessions,
// lockout, TOTP second factors, password reset and verification email,
// OAuth clients and the rules of an OpenID Provider per workspace,
// webhooks with a durable queue, and scoped API keys.
//
// A Service holds many workspaces over one store.Store. Open gives the
// one-call default, a bbolt file; New takes any Store: store/pgstore for a
// PostgreSQL database that several processes share, store/memstore for
// tests, or another implementation that passes the store/storetest
// conformance suite and the identitytest rules suite. A Workspace handle
// carries what a program calls on one workspace:
//
//	svc, err := identity.Open("identity.db", nil)
//	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
//	u, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
//		FullName: "Ada Lovelace", Password: "correct horse battery"})
//	u, err = ws.SetAttribute(ctx, u.ID, "department", "engineering", nil) // nil: no precondition
//	_, err = ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"})
//	claims, err := ws.GetClaims(ctx, u.ID, identity.AccessToken) // {"dept": "engineering"}
//
// Every rule lives in this package: validation (lengths count Unicode code
// points), uniqueness, limits, defaults and errors. A change commits in
// one store transaction, so nothing partial is ever written and every
// rule that reads before it writes holds under concurrent callers; the
// few methods that write more than once (a sign-in reserves its attempt
// before the password is hashed and records its outcome after) commit
// each step whole. Errors are *Error values with a Code; test them with
// errors.Is against the sentinels (ErrNotFound, ErrConflict, ErrInvalid,
// ...) or read ErrorCode.
//
// Users, claim mappers and webhook endpoints carry a Version that changes on
// every write; a Precondition (IfVersion) makes an update conditional on
// it, so a writer never overwrites a change it has not seen. An
// Idempotency key makes CreateUser and CreateWebhook safe to retry: the
// outcome is stored with the key in the creating transaction and returned
// to every retry.
//
// # Names
//
// A method that takes a context starts with a verb: Get reads one thing,
// List many (a page, or a set that a limit bounds), Create, Update and
// Delete do what they say, Set creates or replaces, and the other verbs
// name an action (Revoke, Assign, Verify, Exchange, ...). A method without
// a context is an accessor (Slug, Issuer) or hands out a facet. A call that
// returns more than one value and an error returns a struct, and a create
// that returns a secret returns a Created* struct whose Secret is shown
// only there.
//
// Three audiences get their own surface. Workspace carries what a program
// managing its users calls. Workspace.Provider returns the Provider, the
// engine of the workspace's OpenID Provider, one method per step of the
// protocol, for package oidc or another protocol adapter. Service.Queue
// returns the Queue, which a dispatcher works (package delivery).
//
// # Workspaces and API keys
//
// A workspace is created, listed and deleted on the Service; its settings
// (password policy, lockout, second factors, SMTP, limits, retention) are
// read and replaced on the Workspace. API keys carry scopes of the
// management API; only a hash of a key is stored.
//
//   - [Service.CreateWorkspace], [Service.GetWorkspace], [Service.ListWorkspaces], [Service.DeleteWorkspace]
//   - [Workspace.Slug], [Workspace.CreatedAt], [Workspace.GetSettings], [Workspace.UpdateSettings]
//   - [Workspace.GetOverview], [Overview]: the figures of an operator's dashboard
//   - [Workspace.CreateAPIKey], [Workspace.ListAPIKeys], [Workspace.RevokeAPIKey]
//   - [Service.AuthorizeAPIKey], [AuthorizedAPIKey], [Service.VerifyAPIKey]
//
// # Users and attributes
//
// Users have a unique username and email, a full name and a password;
// attributes are opaque key/value pairs of a user, and claim mappers
// project them into the claims of the tokens the workspace issues.
//
//   - [Workspace.CreateUser], [Workspace.GetUser], [Workspace.UpdateUser], [Workspace.ListUsers], [Workspace.ListUsersByAttribute]
//   - [Workspace.ListUsersFiltered], [UserFilter], [ScanOptions], [UserScanPage]: a paged scan by state (disabled, locked, second factor, unverified email)
//   - [Workspace.DisableUser], [Workspace.EnableUser], [Workspace.DeleteUserPermanently]
//   - [Workspace.ImportUsers], [Workspace.ExportUsers], [Workspace.ExportUsersJSONLines]
//   - [Workspace.SetAttribute], [Workspace.ListAttributes], [Workspace.DeleteAttribute]
//   - [Workspace.SetClaimMapper], [Workspace.GetClaimMapper], [Workspace.ListClaimMappers], [Workspace.DeleteClaimMapper], [Workspace.GetClaims]
//   - [Workspace.GetClaimsPreview], [ClaimsPreviewRequest], [ClaimsPreview]: a user's token claims, each with the mapper or rule that puts it there
//
// # Roles and groups
//
// Roles and groups are named records of a workspace. A user holds a role
// directly or as a member of a group that carries it; groups are flat.
// Tokens carry the names of a user's groups and roles (the scopes groups
// and roles, or a client's Claims), and ListUserRoles says where each
// role comes from.
//
//   - [Workspace.CreateRole], [Workspace.GetRole], [Workspace.GetRoleByName], [Workspace.UpdateRole], [Workspace.DeleteRole], [Workspace.ListRoles]
//   - [Workspace.AssignRole], [Workspace.RemoveRole], [Workspace.ListUserRoles], [Workspace.ListRoleHolders]
//   - [Workspace.CreateGroup], [Workspace.GetGroup], [Workspace.GetGroupByName], [Workspace.UpdateGroup], [Workspace.DeleteGroup], [Workspace.ListGroups]
//   - [Workspace.AddGroupMember], [Workspace.RemoveGroupMember], [Workspace.ListGroupMembers], [Workspace.ListUserGroups]
//   - [Workspace.AssignGroupRole], [Workspace.RemoveGroupRole], [Workspace.ListGroupRoles]
//
// # Passwords, sessions and lockout
//
// Authenticate checks a password under the workspace's throttle and
// lockout policies and the Service's hashing budget, and takes as long to
// refuse an unknown login as any other refusal; Login also starts a
// session. A user who needs a second factor gets CodeMFARequired (or
// CodeMFAEnrollmentRequired) with a challenge for VerifySecondFactor.
// Email verification and password reset send their links through the
// workspace's mail queue. An adapter tells the library who its client is
// with WithRequestInfo (package requestinfo reads it from an HTTP
// request, trusting Options.TrustedProxies: Service.TrustsProxy).
//
//   - [Workspace.Authenticate], [Workspace.Login], [Workspace.UnlockUser], [Service.TrustsProxy]
//   - [Workspace.GetLockState], [LockState], [Workspace.ListLockedUsers], [LockedUserPage], [LockedUser]
//   - [Workspace.SetPassword], [Workspace.ChangePassword]
//   - [Workspace.RequestPasswordReset], [Workspace.CheckPasswordResetToken], [Workspace.ResetPassword]
//   - [Workspace.CreateAccountSetup], [AccountSetupOptions], [AccountSetup], [Workspace.CheckAccountSetup], [Workspace.CompleteAccountSetup]: a
//     one-hour, single-use link that lets the holder of an account an administrator made choose its password
//   - [Workspace.SendVerificationEmail], [Workspace.ConfirmEmail], [Workspace.SetEmailVerified]
//   - [Workspace.SendTestEmail]: an email without a link, through the workspace's SMTP settings
//   - [Workspace.CreateSession], [Workspace.VerifySession], [Workspace.GetSession], [Workspace.ListSessions]
//   - [Workspace.RevokeSession], [Workspace.RevokeUserSession], [Workspace.RevokeUserSessions],
//     [Workspace.VerifySessionWithin] with [SessionLimits] (a session bounded more tightly: a program's own lifetime and idle timeout)
//
// # Branding
//
// The hosted pages and the emails show a workspace's display name, accent
// colour (Settings.Branding) and logo, and a client's name and logo.
//
//   - [Workspace.SetBranding]: the display name and accent colour alone
//   - [Workspace.SetLogo], [Workspace.GetLogo], [Workspace.DeleteLogo]
//   - [Workspace.SetClientLogo], [Workspace.GetClientLogo], [Workspace.DeleteClientLogo]
//
// # Second factors
//
// A user enrols a TOTP factor and gets single-use recovery codes; a
// sign-in that needs a factor ends with a challenge, which
// VerifySecondFactor completes.
//
//   - [Workspace.BeginTOTPEnrollment], [Workspace.ConfirmTOTPEnrollment], [Workspace.GetMFAStatus]
//   - [Workspace.VerifySecondFactor], [VerifiedSecondFactor.SessionOptions], [Workspace.BeginChallengeEnrollment]
//   - [Workspace.RegenerateRecoveryCodes], [Workspace.RemoveSecondFactor], [Workspace.ResetMFA]
//
// # Passkeys
//
// A user registers passkeys (discoverable WebAuthn credentials, user
// verification required) and signs in with one, with or without a
// username; a passkey sign-in is phishing-resistant MFA. The ceremony is
// the Options.PasskeyCeremony's (package webauthn, over go-webauthn), so
// this package imports no WebAuthn library; every rule is here.
//
//   - [Workspace.BeginPasskeyRegistration], [Workspace.ConfirmPasskeyRegistration], [Workspace.ListPasskeys]
//   - [Workspace.UpdatePasskey], [Workspace.DeletePasskey] (an
//     administrator's), [Workspace.RemovePasskey] (the user's own)
//   - [Workspace.BeginPasskeySignIn], [Workspace.VerifyPasskeySignIn], [Provider.VerifyPasskeySignIn],
//     [VerifiedPasskey.SessionOptions]
//   - [Workspace.BeginChallengePasskeyRegistration], [Workspace.ConfirmChallengePasskeyRegistration],
//     [Provider.ConfirmChallengePasskeyRegistration]
//
// # OAuth clients, tokens and the provider
//
// Each workspace is an OpenID Provider with its own issuer, clients and
// rotating signing keys. A program that authenticates users itself
// issues and verifies tokens on the Workspace; the Provider carries the
// protocol's endpoints, which package oidc serves. Tokens are signed by
// the Options.TokenSigner (package jws), so this package imports no JOSE
// library.
//
//   - [Workspace.CreateClient], [Workspace.GetClient], [Workspace.ListClients], [Workspace.DeleteClient], [Workspace.AuthenticateClient]
//   - [Workspace.Issuer], [Workspace.ListSigningKeys], [Workspace.RotateSigningKey], [Service.TokensReady],
//     [Service.IssuerBase]
//   - [Workspace.IssueTokens], [Workspace.VerifyAccessToken]
//   - [Workspace.Provider], [Provider.GetMetadata], [Provider.GetKeySet]
//   - [Provider.GetAuthorizationClient], [Provider.Authorize], [Provider.GetPendingAuthorization]
//   - [Provider.SignIn], [Provider.VerifySecondFactor], [Provider.CompleteSignIn], [Provider.ResumeSignIn]
//   - [Provider.VerifyClient], [Provider.ExchangeCode], [Provider.RefreshTokens], [Provider.ExchangeClientCredentials]
//   - [Provider.IntrospectToken], [Provider.RevokeToken], [Provider.GetUserInfo], [Provider.EndSession]
//
// # Webhooks and the queue
//
// Events are queued in the transaction of the change that caused them (an
// outbox), with verification and reset emails in the same queue. The
// dispatcher (package delivery) works it through the Queue's steps, each
// one transaction here, so what a lease means and what a result leads to
// is decided in one place for every store and every dispatcher.
//
//   - [Workspace.CreateWebhook], [Workspace.GetWebhook], [Workspace.ListWebhooks], [Workspace.DeleteWebhook], [Workspace.EnableWebhook]
//   - [Workspace.ListDeliveries], [Workspace.GetDelivery], [Workspace.RetryDelivery], [Workspace.ListEmailJobs]
//   - [Service.Queue], [Service.WatchQueue], [Service.GetQueueStats], [Workspace.GetQueueStats], [Service.AllowsPrivateWebhooks]
//   - [Queue.ListDue], [Queue.Lease], [Queue.Begin], [Queue.Record], [Queue.CountPending], [Queue.Now]
//
// # The audit trail
//
// Every committed change and every authentication outcome writes a
// record in the transaction of the change: who (the actor an entry point
// names with WithActor), what, to whom, with what outcome, from where,
// and what changed, secrets never included (docs/audit.md).
//
//   - [Workspace.ListAuditRecords], [AuditFilter], [ParseAuditRef], [AuditPageOptions], [AuditPage]
//   - [Workspace.CountAuditRecords], [AuditCount]: a count bounded by its max, for a dashboard
//   - [WithActor], [ActorFrom], [Actor], [UserActor], [AuditRecord], [Options.AuditSink]
//   - the catalogues: [AuditActions], [ActorKinds], [AuditTargetKinds]
//
// # Operations
//
// Retention sweeps delete what has outlived its time; a backup is a
// consistent copy of the store taken while it serves.
//
//   - [New], [Open], [Service.Close], [Service.Now]
//   - [Service.Backup]
//   - [Service.Sweep], [Service.SweepEvery], [Service.SweepIdempotency], [Service.SweepIdempotencyEvery]
//   - [Service.PasswordHashing], [Service.PasswordHashingBudget]
//
// The layout of the repository, what each package holds and why it is
// shaped this way, is in docs/architecture.md.
package identity
