package identity

import (
	"slices"
	"time"
)

// EventType names a kind of event that webhook endpoints subscribe to.
//
// Every delivery's body is {"type": T, "timestamp": RFC 3339 UTC, "data":
// D}; the data D of each type is documented on its constant. An event is
// recorded in the same transaction as the change that caused it, so a
// change that commits always has its event and one that rolls back never
// does.
type EventType string

// The event catalogue.
const (
	// EventUserCreated: CreateUser created a user. Data: the User, as the
	// REST API returns it. ImportUsers, a migration, does not emit it.
	EventUserCreated EventType = "user.created"
	// EventUserUpdated: UpdateUser changed a user's email or full name,
	// or ConfirmEmail verified a user's email. Data: the User after the
	// change.
	EventUserUpdated EventType = "user.updated"
	// EventUserDisabled: DisableUser disabled an enabled user (its active
	// sessions are revoked in the same transaction, each with its own
	// session.revoked). Data: the User after the change.
	EventUserDisabled EventType = "user.disabled"
	// EventUserEnabled: EnableUser enabled a disabled user. Data: the User
	// after the change.
	EventUserEnabled EventType = "user.enabled"
	// EventUserPasswordChanged: SetPassword, ChangePassword or
	// ResetPassword replaced a user's password.
	// Data: {"userId": int}. Never the password or its hash.
	EventUserPasswordChanged EventType = "user.password.changed"
	// EventUserRoleAssigned: AssignRole assigned a role that was not
	// directly assigned. Data: {"userId": int, "roleId": int}.
	EventUserRoleAssigned EventType = "user.role.assigned"
	// EventUserRoleRemoved: RemoveRole removed a directly assigned role.
	// Data: {"userId": int, "roleId": int}.
	EventUserRoleRemoved EventType = "user.role.removed"
	// EventLoginFailed: Authenticate or Login refused a login, or
	// VerifySecondFactor, RemoveSecondFactor or ChangePassword a code or
	// password. Data: {"login": the identifier tried, "reason":
	// "unknown_user" | "wrong_password" | "no_password" | "disabled" |
	// "wrong_code" (a second-factor code) | "locked" (refused for the
	// lockout, without checking anything), "userId": int, present when
	// the user exists}. Never the password or the code.
	EventLoginFailed EventType = "login.failed"
	// EventSessionRevoked: a session was revoked, by RevokeSession (reason
	// "revoked"), because its user was disabled (reason "user_disabled")
	// by ResetPassword (reason "password_reset") or by a logout through
	// the OpenID Provider (EndSession, reason "logout"). Data: {"sessionId": string, "userId": int,
	// "reason": string}.
	EventSessionRevoked EventType = "session.revoked"
	// EventLoginSucceeded: a user signed in on the OpenID Provider's
	// sign-in page (SignIn, CompleteSignIn or ResumeSignIn) for a client. Data: {"userId": int,
	// "clientId": string, "sessionId": string}.
	EventLoginSucceeded EventType = "login.succeeded"
	// EventTokenRefreshReused: a refresh token was presented again after
	// it had been exchanged, so a copy of it is in other hands; its grant
	// (every token of the family) was revoked. A security signal. Data:
	// {"grantId": string, "clientId": string, "userId": int}.
	EventTokenRefreshReused EventType = "token.refresh_reused"
	// EventUserLocked: failed password attempts reached the workspace's
	// lockout threshold and locked the user. Data: {"userId": int,
	// "until": RFC 3339 UTC, when the lock ends}.
	EventUserLocked EventType = "user.locked"
	// EventUserUnlocked: a user's lock ended, by UnlockUser (by "admin")
	// or because its time was over (by "expiry", emitted with the first
	// attempt after it). Data: {"userId": int, "by": string}.
	EventUserUnlocked EventType = "user.unlocked"
	// EventUserMFAEnrolled: a user confirmed a TOTP second factor. Data:
	// {"userId": int}.
	EventUserMFAEnrolled EventType = "user.mfa.enrolled"
	// EventUserMFARemoved: a user removed their second factor (with a
	// code). Data: {"userId": int}.
	EventUserMFARemoved EventType = "user.mfa.removed"
	// EventUserMFAReset: an administrator cleared a user's second factor
	// and recovery codes (ResetMFA). Data: {"userId": int}.
	EventUserMFAReset EventType = "user.mfa.reset"
	// EventUserPasskeyAdded: a user registered a passkey. Data:
	// {"userId": int, "passkeyId": string}.
	EventUserPasskeyAdded EventType = "user.passkey.added"
	// EventUserPasskeyRemoved: a passkey was deleted (DeletePasskey).
	// Data: {"userId": int, "passkeyId": string}.
	EventUserPasskeyRemoved EventType = "user.passkey.removed"
	// EventUserDeleted: DeleteUserPermanently deleted a user and every
	// record of it. Data: {"userId": int, "username": string}, nothing
	// more: the event outlives the user.
	EventUserDeleted EventType = "user.deleted"
	// EventRoleCreated: CreateRole created a role (or ImportUsers, for a
	// role it names that did not exist). Data: the Role.
	EventRoleCreated EventType = "role.created"
	// EventRoleUpdated: UpdateRole renamed or redescribed a role. Data:
	// the Role after the change.
	EventRoleUpdated EventType = "role.updated"
	// EventRoleDeleted: DeleteRole deleted a role and every assignment of
	// it. Data: the Role as it was.
	EventRoleDeleted EventType = "role.deleted"
	// EventGroupCreated: CreateGroup created a group (or ImportUsers, for
	// a group it names that did not exist). Data: the Group.
	EventGroupCreated EventType = "group.created"
	// EventGroupUpdated: UpdateGroup renamed or redescribed a group.
	// Data: the Group after the change.
	EventGroupUpdated EventType = "group.updated"
	// EventGroupDeleted: DeleteGroup deleted a group, its memberships and
	// its roles. Data: the Group as it was.
	EventGroupDeleted EventType = "group.deleted"
	// EventGroupMemberAdded: AddGroupMember made a user a member. Data:
	// {"groupId": int, "userId": int}.
	EventGroupMemberAdded EventType = "group.member.added"
	// EventGroupMemberRemoved: RemoveGroupMember ended a membership.
	// Data: {"groupId": int, "userId": int}.
	EventGroupMemberRemoved EventType = "group.member.removed"
	// EventGroupRoleAssigned: AssignGroupRole made a group carry a role.
	// Data: {"groupId": int, "roleId": int}.
	EventGroupRoleAssigned EventType = "group.role.assigned"
	// EventGroupRoleRemoved: RemoveGroupRole ended a group's role. Data:
	// {"groupId": int, "roleId": int}.
	EventGroupRoleRemoved EventType = "group.role.removed"
	// EventUserAttributesChanged: SetAttribute set an attribute to a new
	// value, or DeleteAttribute removed one; the user's version changed
	// with it. Data: {"userId": int, "key": string, "set": bool}, set
	// false for a removal. Never the value: read it with ListAttributes.
	EventUserAttributesChanged EventType = "user.attributes.changed"
)

// EventTypes returns the catalogue of event types in a stable order.
func EventTypes() []EventType {
	return []EventType{
		EventUserCreated, EventUserUpdated, EventUserDisabled, EventUserEnabled,
		EventUserPasswordChanged, EventUserRoleAssigned, EventUserRoleRemoved,
		EventLoginFailed, EventSessionRevoked, EventLoginSucceeded, EventTokenRefreshReused,
		EventUserLocked, EventUserUnlocked, EventUserMFAEnrolled, EventUserMFARemoved, EventUserMFAReset,
		EventUserPasskeyAdded, EventUserPasskeyRemoved, EventUserDeleted,
		EventRoleCreated, EventRoleUpdated, EventRoleDeleted,
		EventGroupCreated, EventGroupUpdated, EventGroupDeleted,
		EventGroupMemberAdded, EventGroupMemberRemoved, EventGroupRoleAssigned, EventGroupRoleRemoved,
		EventUserAttributesChanged,
	}
}

// Known reports whether e is in the catalogue.
func (e EventType) Known() bool { return slices.Contains(EventTypes(), e) }

// roleEvent is the data of user.role.assigned and user.role.removed.
type roleEvent struct {
	UserID int64 `json:"userId"`
	RoleID int64 `json:"roleId"`
}

// attributesChangedEvent is the data of user.attributes.changed.
type attributesChangedEvent struct {
	UserID int64  `json:"userId"`
	Key    string `json:"key"`
	Set    bool   `json:"set"`
}

// userIDEvent is the data of user.password.changed and the user.mfa
// events.
type userIDEvent struct {
	UserID int64 `json:"userId"`
}

// Reasons a login fails, as login.failed reports them.
const (
	loginUnknownUser   = "unknown_user"
	loginWrongPassword = "wrong_password"
	loginNoPassword    = "no_password"
	loginDisabled      = "disabled"
	loginLocked        = "locked"
	loginWrongCode     = "wrong_code"
	loginThrottled     = "throttled"
	// loginWrongPasskey: a passkey's assertion did not verify (or its
	// sign count went backwards).
	loginWrongPasskey = "wrong_passkey"
	// loginUnknownPasskey: no passkey of the workspace has the credential
	// id (or not the one the username-first options allowed).
	loginUnknownPasskey = "unknown_passkey"
)

// loginFailedEvent is the data of login.failed.
type loginFailedEvent struct {
	Login  string `json:"login"`
	Reason string `json:"reason"`
	UserID int64  `json:"userId,omitempty"`
}

// sessionRevokedEvent is the data of session.revoked.
type sessionRevokedEvent struct {
	SessionID string `json:"sessionId"`
	UserID    int64  `json:"userId"`
	Reason    string `json:"reason"`
}

// loginSucceededEvent is the data of login.succeeded.
type loginSucceededEvent struct {
	UserID    int64  `json:"userId"`
	ClientID  string `json:"clientId"`
	SessionID string `json:"sessionId"`
}

// refreshReusedEvent is the data of token.refresh_reused.
type refreshReusedEvent struct {
	GrantID  string `json:"grantId"`
	ClientID string `json:"clientId"`
	UserID   int64  `json:"userId"`
}

// userLockedEvent is the data of user.locked.
type userLockedEvent struct {
	UserID int64     `json:"userId"`
	Until  time.Time `json:"until"`
}

// userUnlockedEvent is the data of user.unlocked.
type userUnlockedEvent struct {
	UserID int64  `json:"userId"`
	By     string `json:"by"`
}
