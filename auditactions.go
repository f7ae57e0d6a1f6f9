package identity

import (
	"slices"
	"strings"
)

// AuditAction names what an audit record records. The catalogue below is
// complete: every record's action is one of them (docs/audit.md says which
// method writes which).
type AuditAction string

// The audit catalogue.
const (
	// Workspaces and their configuration.
	AuditWorkspaceCreated   AuditAction = "workspace.created"
	AuditWorkspaceDeleted   AuditAction = "workspace.deleted"
	AuditSettingsChanged    AuditAction = "settings.changed"
	AuditBrandingChanged    AuditAction = "branding.changed"
	AuditBrandingLogoSet    AuditAction = "branding.logo.set"
	AuditBrandingLogoDelete AuditAction = "branding.logo.deleted"
	AuditExport             AuditAction = "export"
	AuditBackup             AuditAction = "backup"
	AuditRetentionSwept     AuditAction = "retention.swept"

	// Users.
	AuditUserCreated          AuditAction = "user.created"
	AuditUserImported         AuditAction = "user.imported"
	AuditUserUpdated          AuditAction = "user.updated"
	AuditUserDisabled         AuditAction = "user.disabled"
	AuditUserEnabled          AuditAction = "user.enabled"
	AuditUserDeleted          AuditAction = "user.deleted"
	AuditUserEmailVerified    AuditAction = "user.email_verified"
	AuditUserEmailUnverified  AuditAction = "user.email_unverified"
	AuditUserAttributeSet     AuditAction = "user.attribute.set"
	AuditUserAttributeDeleted AuditAction = "user.attribute.deleted"
	AuditUserRoleAssigned     AuditAction = "user.role.assigned"
	AuditUserRoleRemoved      AuditAction = "user.role.removed"
	AuditVerificationSent     AuditAction = "email.verification_sent"
	AuditTestEmailSent        AuditAction = "email.test_sent"

	// Roles and groups.
	AuditRoleCreated        AuditAction = "role.created"
	AuditRoleUpdated        AuditAction = "role.updated"
	AuditRoleDeleted        AuditAction = "role.deleted"
	AuditGroupCreated       AuditAction = "group.created"
	AuditGroupUpdated       AuditAction = "group.updated"
	AuditGroupDeleted       AuditAction = "group.deleted"
	AuditGroupMemberAdded   AuditAction = "group.member.added"
	AuditGroupMemberRemoved AuditAction = "group.member.removed"
	AuditGroupRoleAssigned  AuditAction = "group.role.assigned"
	AuditGroupRoleRemoved   AuditAction = "group.role.removed"

	// Claim mappers, webhooks, API keys, OAuth clients, signing keys.
	AuditMapperPut         AuditAction = "mapper.put"
	AuditMapperDeleted     AuditAction = "mapper.deleted"
	AuditWebhookCreated    AuditAction = "webhook.created"
	AuditWebhookDeleted    AuditAction = "webhook.deleted"
	AuditWebhookEnabled    AuditAction = "webhook.enabled"
	AuditDeliveryRetried   AuditAction = "delivery.retried"
	AuditAPIKeyCreated     AuditAction = "api_key.created"
	AuditAPIKeyRevoked     AuditAction = "api_key.revoked"
	AuditClientCreated     AuditAction = "client.created"
	AuditClientDeleted     AuditAction = "client.deleted"
	AuditClientLogoSet     AuditAction = "client.logo.set"
	AuditClientLogoDeleted AuditAction = "client.logo.deleted"
	AuditClientAuthFailed  AuditAction = "client.authentication_failed"
	AuditSigningKeyRotated AuditAction = "signing_key.rotated"

	// Authentication, passwords, second factors, sessions and tokens.
	AuditSignInSucceeded           AuditAction = "sign_in.succeeded"
	AuditSignInFailed              AuditAction = "sign_in.failed"
	AuditAccountLocked             AuditAction = "account.locked"
	AuditAccountUnlocked           AuditAction = "account.unlocked"
	AuditPasswordSet               AuditAction = "password.set"
	AuditPasswordChanged           AuditAction = "password.changed"
	AuditPasswordResetRequested    AuditAction = "password.reset_requested"
	AuditPasswordReset             AuditAction = "password.reset"
	AuditSecondFactorEnrollStarted AuditAction = "second_factor.enrollment_started"
	AuditSecondFactorEnrolled      AuditAction = "second_factor.enrolled"
	AuditSecondFactorRemoved       AuditAction = "second_factor.removed"
	AuditSecondFactorReset         AuditAction = "second_factor.reset"
	AuditSecondFactorCodesRenewed  AuditAction = "second_factor.recovery_codes_regenerated"
	AuditSecondFactorRecoveryUsed  AuditAction = "second_factor.recovery_code_used"
	AuditPasskeyAdded              AuditAction = "user.passkey.added"
	AuditPasskeyRenamed            AuditAction = "user.passkey.renamed"
	AuditPasskeyRemoved            AuditAction = "user.passkey.removed"
	AuditPasskeyCloneSuspected     AuditAction = "passkey.clone_suspected"
	AuditSessionCreated            AuditAction = "session.created"
	AuditSessionRevoked            AuditAction = "session.revoked"
	AuditTokenIssued               AuditAction = "token.issued"
	AuditTokenRefreshed            AuditAction = "token.refreshed"
	AuditTokenRefreshReused        AuditAction = "token.refresh_reused"
	AuditTokenRevoked              AuditAction = "token.revoked"
	AuditTokenCodeReused           AuditAction = "token.code_reused"
)

// AuditActions returns the audit catalogue in a stable order.
func AuditActions() []AuditAction {
	return []AuditAction{
		AuditWorkspaceCreated, AuditWorkspaceDeleted, AuditSettingsChanged, AuditBrandingChanged,
		AuditBrandingLogoSet, AuditBrandingLogoDelete, AuditExport, AuditBackup, AuditRetentionSwept, AuditTestEmailSent,
		AuditUserCreated, AuditUserImported, AuditUserUpdated, AuditUserDisabled, AuditUserEnabled,
		AuditUserDeleted, AuditUserEmailVerified, AuditUserEmailUnverified, AuditUserAttributeSet,
		AuditUserAttributeDeleted, AuditUserRoleAssigned, AuditUserRoleRemoved, AuditVerificationSent,
		AuditRoleCreated, AuditRoleUpdated, AuditRoleDeleted, AuditGroupCreated, AuditGroupUpdated,
		AuditGroupDeleted, AuditGroupMemberAdded, AuditGroupMemberRemoved, AuditGroupRoleAssigned,
		AuditGroupRoleRemoved,
		AuditMapperPut, AuditMapperDeleted, AuditWebhookCreated, AuditWebhookDeleted, AuditWebhookEnabled, AuditDeliveryRetried,
		AuditAPIKeyCreated, AuditAPIKeyRevoked, AuditClientCreated, AuditClientDeleted, AuditClientLogoSet,
		AuditClientLogoDeleted, AuditClientAuthFailed, AuditSigningKeyRotated,
		AuditSignInSucceeded, AuditSignInFailed, AuditAccountLocked, AuditAccountUnlocked,
		AuditPasswordSet, AuditPasswordChanged, AuditPasswordResetRequested, AuditPasswordReset,
		AuditSecondFactorEnrollStarted, AuditSecondFactorEnrolled, AuditSecondFactorRemoved,
		AuditSecondFactorReset, AuditSecondFactorCodesRenewed, AuditSecondFactorRecoveryUsed,
		AuditPasskeyAdded, AuditPasskeyRenamed, AuditPasskeyRemoved, AuditPasskeyCloneSuspected,
		AuditSessionCreated, AuditSessionRevoked, AuditTokenIssued, AuditTokenRefreshed,
		AuditTokenRefreshReused, AuditTokenCodeReused, AuditTokenRevoked,
	}
}

// Known reports whether a is in the audit catalogue.
func (a AuditAction) Known() bool { return slices.Contains(AuditActions(), a) }

// actionsMatching returns the actions of the catalogue that the filter
// f names: f itself, or every action that starts with f when f ends in
// "." ("user." is every action on users).
func actionsMatching(f string) []string {
	var out []string
	for _, a := range AuditActions() {
		if string(a) == f || strings.HasSuffix(f, ".") && strings.HasPrefix(string(a), f) {
			out = append(out, string(a))
		}
	}
	return out
}
