package store_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// fakeTx is a store.Tx that records the methods called and does nothing
// else.
type fakeTx struct{ calls []string }

func (f *fakeTx) call(name string)                   { f.calls = append(f.calls, name) }
func (f *fakeTx) PutWorkspace(store.Workspace) error { f.call("PutWorkspace"); return nil }
func (f *fakeTx) Workspace(string) (store.Workspace, error) {
	f.call("Workspace")
	return store.Workspace{}, nil
}
func (f *fakeTx) Workspaces() ([]store.Workspace, error) { f.call("Workspaces"); return nil, nil }
func (f *fakeTx) NextID(string, store.Sequence) (int64, error) {
	f.call("NextID")
	return 1, nil
}
func (f *fakeTx) PutUser(string, store.User) error { f.call("PutUser"); return nil }
func (f *fakeTx) User(string, int64) (store.User, error) {
	f.call("User")
	return store.User{}, nil
}
func (f *fakeTx) UserIDByUsername(string, string) (int64, error) {
	f.call("UserIDByUsername")
	return 1, nil
}
func (f *fakeTx) UserIDByEmail(string, string) (int64, error) { f.call("UserIDByEmail"); return 1, nil }
func (f *fakeTx) Users(string, store.UserQuery) ([]store.User, int, error) {
	f.call("Users")
	return nil, 0, nil
}
func (f *fakeTx) UserRoles(string, int64) ([]int64, error)  { f.call("UserRoles"); return nil, nil }
func (f *fakeTx) AddUserRole(string, int64, int64) error    { f.call("AddUserRole"); return nil }
func (f *fakeTx) RemoveUserRole(string, int64, int64) error { f.call("RemoveUserRole"); return nil }
func (f *fakeTx) PutUserAttribute(string, int64, string, string) error {
	f.call("PutUserAttribute")
	return nil
}
func (f *fakeTx) UserAttributes(string, int64) (map[string]string, error) {
	f.call("UserAttributes")
	return map[string]string{}, nil
}
func (f *fakeTx) UsersByAttribute(string, store.AttributeQuery) ([]store.User, int, error) {
	f.call("UsersByAttribute")
	return nil, 0, nil
}
func (f *fakeTx) DeleteUserAttribute(string, int64, string) error {
	f.call("DeleteUserAttribute")
	return nil
}
func (f *fakeTx) ClaimMappers(string) ([]store.ClaimMapper, error) {
	f.call("ClaimMappers")
	return nil, nil
}
func (f *fakeTx) PutClaimMapper(string, store.ClaimMapper) error {
	f.call("PutClaimMapper")
	return nil
}
func (f *fakeTx) DeleteClaimMapper(string, string) error { f.call("DeleteClaimMapper"); return nil }
func (f *fakeTx) PutWebhook(string, store.Webhook) error { f.call("PutWebhook"); return nil }
func (f *fakeTx) Webhook(string, int64) (store.Webhook, error) {
	f.call("Webhook")
	return store.Webhook{}, nil
}
func (f *fakeTx) Webhooks(string, int, int) ([]store.Webhook, int, error) {
	f.call("Webhooks")
	return nil, 0, nil
}
func (f *fakeTx) DeleteWebhook(string, int64) error      { f.call("DeleteWebhook"); return nil }
func (f *fakeTx) PutSession(string, store.Session) error { f.call("PutSession"); return nil }
func (f *fakeTx) Session(string, string) (store.Session, error) {
	f.call("Session")
	return store.Session{}, nil
}
func (f *fakeTx) UserSessions(string, int64) ([]store.Session, error) {
	f.call("UserSessions")
	return nil, nil
}
func (f *fakeTx) PutAPIKey(store.APIKey) error { f.call("PutAPIKey"); return nil }
func (f *fakeTx) APIKey(string) (store.APIKey, error) {
	f.call("APIKey")
	return store.APIKey{}, nil
}
func (f *fakeTx) APIKeys(string) ([]store.APIKey, error) { f.call("APIKeys"); return nil, nil }
func (f *fakeTx) DeleteAPIKey(string) error              { f.call("DeleteAPIKey"); return nil }
func (f *fakeTx) PutOAuthClient(string, store.OAuthClient) error {
	f.call("PutOAuthClient")
	return nil
}
func (f *fakeTx) OAuthClient(string, string) (store.OAuthClient, error) {
	f.call("OAuthClient")
	return store.OAuthClient{}, nil
}
func (f *fakeTx) OAuthClients(string) ([]store.OAuthClient, error) {
	f.call("OAuthClients")
	return nil, nil
}
func (f *fakeTx) DeleteOAuthClient(string, string) error       { f.call("DeleteOAuthClient"); return nil }
func (f *fakeTx) PutSigningKey(string, store.SigningKey) error { f.call("PutSigningKey"); return nil }
func (f *fakeTx) SigningKeys(string) ([]store.SigningKey, error) {
	f.call("SigningKeys")
	return nil, nil
}
func (f *fakeTx) DeleteSigningKey(string, string) error { f.call("DeleteSigningKey"); return nil }
func (f *fakeTx) PutAuthRequest(string, store.AuthRequest) error {
	f.call("PutAuthRequest")
	return nil
}
func (f *fakeTx) AuthRequest(string, string) (store.AuthRequest, error) {
	f.call("AuthRequest")
	return store.AuthRequest{}, nil
}
func (f *fakeTx) PutGrant(string, store.Grant) error { f.call("PutGrant"); return nil }
func (f *fakeTx) Grant(string, string) (store.Grant, error) {
	f.call("Grant")
	return store.Grant{}, nil
}
func (f *fakeTx) UserGrants(string, int64) ([]store.Grant, error) {
	f.call("UserGrants")
	return nil, nil
}
func (f *fakeTx) PutRefreshToken(string, store.RefreshToken) error {
	f.call("PutRefreshToken")
	return nil
}
func (f *fakeTx) RefreshToken(string, string) (store.RefreshToken, error) {
	f.call("RefreshToken")
	return store.RefreshToken{}, nil
}
func (f *fakeTx) PutLoginAttempts(string, store.LoginAttempts) error {
	f.call("PutLoginAttempts")
	return nil
}
func (f *fakeTx) LoginAttempts(string, int64) (store.LoginAttempts, error) {
	f.call("LoginAttempts")
	return store.LoginAttempts{}, nil
}
func (f *fakeTx) PutSecondFactor(string, store.SecondFactor) error {
	f.call("PutSecondFactor")
	return nil
}
func (f *fakeTx) SecondFactor(string, int64) (store.SecondFactor, error) {
	f.call("SecondFactor")
	return store.SecondFactor{}, nil
}
func (f *fakeTx) PutPasskey(string, store.Passkey) error {
	f.call("PutPasskey")
	return nil
}
func (f *fakeTx) Passkey(string, string) (store.Passkey, error) {
	f.call("Passkey")
	return store.Passkey{}, nil
}
func (f *fakeTx) UserPasskeys(string, int64) ([]store.Passkey, error) {
	f.call("UserPasskeys")
	return nil, nil
}
func (f *fakeTx) DeletePasskey(string, string) error {
	f.call("DeletePasskey")
	return nil
}
func (f *fakeTx) PutPasskeyHandle(string, store.PasskeyHandle) error {
	f.call("PutPasskeyHandle")
	return nil
}
func (f *fakeTx) PasskeyHandle(string, int64) (store.PasskeyHandle, error) {
	f.call("PasskeyHandle")
	return store.PasskeyHandle{}, nil
}
func (f *fakeTx) UserIDByPasskeyHandle(string, []byte) (int64, error) {
	f.call("UserIDByPasskeyHandle")
	return 0, nil
}
func (f *fakeTx) DeleteSecondFactor(string, int64) error {
	f.call("DeleteSecondFactor")
	return nil
}
func (f *fakeTx) PutVerificationToken(string, store.VerificationToken) error {
	f.call("PutVerificationToken")
	return nil
}
func (f *fakeTx) VerificationToken(string, string) (store.VerificationToken, error) {
	f.call("VerificationToken")
	return store.VerificationToken{}, nil
}
func (f *fakeTx) PutAsset(string, store.Asset) error { f.call("PutAsset"); return nil }
func (f *fakeTx) Asset(string, string) (store.Asset, error) {
	f.call("Asset")
	return store.Asset{}, nil
}
func (f *fakeTx) DeleteAsset(string, string) error             { f.call("DeleteAsset"); return nil }
func (f *fakeTx) DeleteUser(string, int64) error               { f.call("DeleteUser"); return nil }
func (f *fakeTx) DeleteWorkspace(string) error                 { f.call("DeleteWorkspace"); return nil }
func (f *fakeTx) PutIdempotency(store.IdempotencyRecord) error { f.call("PutIdempotency"); return nil }
func (f *fakeTx) Idempotency(string, string, string) (store.IdempotencyRecord, error) {
	f.call("Idempotency")
	return store.IdempotencyRecord{}, nil
}
func (f *fakeTx) DeleteIdempotency(string, string, string) error {
	f.call("DeleteIdempotency")
	return nil
}
func (f *fakeTx) DeliveriesPage(string, int64, int, int) ([]store.Delivery, int, error) {
	f.call("DeliveriesPage")
	return nil, 0, nil
}

func (f *fakeTx) MailJobsPage(string, int, int) ([]store.Delivery, int, error) {
	f.call("MailJobsPage")
	return nil, 0, nil
}

func (f *fakeTx) UserSessionsPage(string, int64, int, int) ([]store.Session, int, error) {
	f.call("UserSessionsPage")
	return nil, 0, nil
}

func (f *fakeTx) WebhooksForEvent(string, string) ([]store.Webhook, error) {
	f.call("WebhooksForEvent")
	return nil, nil
}

func (f *fakeTx) DeleteEndedSessions(string, time.Time, int) (int, error) {
	f.call("DeleteEndedSessions")
	return 0, nil
}

func (f *fakeTx) DeleteExpiredTokens(string, time.Time, int) (int, error) {
	f.call("DeleteExpiredTokens")
	return 0, nil
}

func (f *fakeTx) DeleteFinishedDeliveries(string, store.JobKind, store.DeliveryStatus, time.Time, int) (int, error) {
	f.call("DeleteFinishedDeliveries")
	return 0, nil
}

func (f *fakeTx) DeleteExpiredIdempotency(time.Time, int) (int, error) {
	f.call("DeleteExpiredIdempotency")
	return 0, nil
}
func (f *fakeTx) PutDelivery(string, store.Delivery) error { f.call("PutDelivery"); return nil }
func (f *fakeTx) Delivery(string, int64) (store.Delivery, error) {
	f.call("Delivery")
	return store.Delivery{}, nil
}
func (f *fakeTx) ClaimDelivery(string, int64) (store.Delivery, bool, error) {
	f.call("ClaimDelivery")
	return store.Delivery{}, true, nil
}
func (f *fakeTx) Deliveries(string, int64) ([]store.Delivery, error) {
	f.call("Deliveries")
	return nil, nil
}
func (f *fakeTx) MailJobs(string) ([]store.Delivery, error) { f.call("MailJobs"); return nil, nil }
func (f *fakeTx) DueDeliveries(time.Time, int) ([]store.QueuedDelivery, error) {
	f.call("DueDeliveries")
	return nil, nil
}
func (f *fakeTx) NextDueAt() (time.Time, bool, error) {
	f.call("NextDueAt")
	return time.Time{}, false, nil
}
func (f *fakeTx) PendingDeliveries() (int, error) { f.call("PendingDeliveries"); return 0, nil }
func (f *fakeTx) WorkspaceQueue(string, int) (store.WorkspaceQueue, error) {
	f.call("WorkspaceQueue")
	return store.WorkspaceQueue{}, nil
}
func (f *fakeTx) PutRole(string, store.Role) error { f.call("PutRole"); return nil }
func (f *fakeTx) Role(string, int64) (store.Role, error) {
	f.call("Role")
	return store.Role{}, nil
}
func (f *fakeTx) RoleIDByName(string, string) (int64, error) { f.call("RoleIDByName"); return 1, nil }
func (f *fakeTx) Roles(string, store.NameQuery) ([]store.Role, int, error) {
	f.call("Roles")
	return nil, 0, nil
}
func (f *fakeTx) DeleteRole(string, int64) error     { f.call("DeleteRole"); return nil }
func (f *fakeTx) PutGroup(string, store.Group) error { f.call("PutGroup"); return nil }
func (f *fakeTx) Group(string, int64) (store.Group, error) {
	f.call("Group")
	return store.Group{}, nil
}
func (f *fakeTx) GroupIDByName(string, string) (int64, error) { f.call("GroupIDByName"); return 1, nil }
func (f *fakeTx) Groups(string, store.NameQuery) ([]store.Group, int, error) {
	f.call("Groups")
	return nil, 0, nil
}
func (f *fakeTx) DeleteGroup(string, int64) error { f.call("DeleteGroup"); return nil }
func (f *fakeTx) AddGroupMember(string, int64, int64) error {
	f.call("AddGroupMember")
	return nil
}
func (f *fakeTx) RemoveGroupMember(string, int64, int64) error {
	f.call("RemoveGroupMember")
	return nil
}
func (f *fakeTx) GroupMembers(string, int64, int, int) ([]int64, int, error) {
	f.call("GroupMembers")
	return nil, 0, nil
}
func (f *fakeTx) UserGroups(string, int64) ([]int64, error)  { f.call("UserGroups"); return nil, nil }
func (f *fakeTx) AddGroupRole(string, int64, int64) error    { f.call("AddGroupRole"); return nil }
func (f *fakeTx) RemoveGroupRole(string, int64, int64) error { f.call("RemoveGroupRole"); return nil }
func (f *fakeTx) GroupRoles(string, int64) ([]int64, error)  { f.call("GroupRoles"); return nil, nil }
func (f *fakeTx) RoleHolders(string, int64, int, int) ([]int64, int, error) {
	f.call("RoleHolders")
	return nil, 0, nil
}

func (f *fakeTx) PutAuditRecord(string, store.AuditRecord) error {
	f.call("PutAuditRecord")
	return nil
}
func (f *fakeTx) AuditRecords(string, store.AuditQuery) ([]store.AuditRecord, error) {
	f.call("AuditRecords")
	return nil, nil
}
func (f *fakeTx) DeleteAuditRecords(string, string, int) (int, error) {
	f.call("DeleteAuditRecords")
	return 0, nil
}

var _ store.Tx = (*fakeTx)(nil)

// method calls one method of a Tx and returns its error.
type method struct {
	name string
	call func(tx store.Tx) error
}

// webhookJob is a well-formed job for PutDelivery.
var webhookJob = store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 1}

// writes are the write methods of store.Tx, every one of them.
var writes = []method{
	{"PutWorkspace", func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{}) }},
	{"NextID", func(tx store.Tx) error { _, err := tx.NextID("a", store.SeqUsers); return err }},
	{"PutUser", func(tx store.Tx) error { return tx.PutUser("a", store.User{}) }},
	{"AddUserRole", func(tx store.Tx) error { return tx.AddUserRole("a", 1, 1) }},
	{"RemoveUserRole", func(tx store.Tx) error { return tx.RemoveUserRole("a", 1, 1) }},
	{"PutRole", func(tx store.Tx) error { return tx.PutRole("a", store.Role{ID: 1}) }},
	{"DeleteRole", func(tx store.Tx) error { return tx.DeleteRole("a", 1) }},
	{"PutGroup", func(tx store.Tx) error { return tx.PutGroup("a", store.Group{ID: 1}) }},
	{"DeleteGroup", func(tx store.Tx) error { return tx.DeleteGroup("a", 1) }},
	{"AddGroupMember", func(tx store.Tx) error { return tx.AddGroupMember("a", 1, 1) }},
	{"RemoveGroupMember", func(tx store.Tx) error { return tx.RemoveGroupMember("a", 1, 1) }},
	{"AddGroupRole", func(tx store.Tx) error { return tx.AddGroupRole("a", 1, 1) }},
	{"RemoveGroupRole", func(tx store.Tx) error { return tx.RemoveGroupRole("a", 1, 1) }},
	{"PutUserAttribute", func(tx store.Tx) error { return tx.PutUserAttribute("a", 1, "k", "v") }},
	{"DeleteUserAttribute", func(tx store.Tx) error { return tx.DeleteUserAttribute("a", 1, "k") }},
	{"PutClaimMapper", func(tx store.Tx) error { return tx.PutClaimMapper("a", store.ClaimMapper{}) }},
	{"DeleteClaimMapper", func(tx store.Tx) error { return tx.DeleteClaimMapper("a", "k") }},
	{"PutWebhook", func(tx store.Tx) error { return tx.PutWebhook("a", store.Webhook{ID: 1}) }},
	{"DeleteWebhook", func(tx store.Tx) error { return tx.DeleteWebhook("a", 1) }},
	{"PutSession", func(tx store.Tx) error { return tx.PutSession("a", store.Session{}) }},
	{"PutAPIKey", func(tx store.Tx) error { return tx.PutAPIKey(store.APIKey{}) }},
	{"DeleteAPIKey", func(tx store.Tx) error { return tx.DeleteAPIKey("k") }},
	{"PutOAuthClient", func(tx store.Tx) error { return tx.PutOAuthClient("a", store.OAuthClient{ID: "c"}) }},
	{"DeleteOAuthClient", func(tx store.Tx) error { return tx.DeleteOAuthClient("a", "c") }},
	{"PutSigningKey", func(tx store.Tx) error { return tx.PutSigningKey("a", store.SigningKey{ID: "k"}) }},
	{"DeleteSigningKey", func(tx store.Tx) error { return tx.DeleteSigningKey("a", "k") }},
	{"PutAuthRequest", func(tx store.Tx) error { return tx.PutAuthRequest("a", store.AuthRequest{ID: "r"}) }},
	{"PutGrant", func(tx store.Tx) error { return tx.PutGrant("a", store.Grant{ID: "g"}) }},
	{"PutRefreshToken", func(tx store.Tx) error {
		return tx.PutRefreshToken("a", store.RefreshToken{ID: "t", GrantID: "g"})
	}},
	{"PutLoginAttempts", func(tx store.Tx) error { return tx.PutLoginAttempts("a", store.LoginAttempts{UserID: 1}) }},
	{"PutSecondFactor", func(tx store.Tx) error { return tx.PutSecondFactor("a", store.SecondFactor{UserID: 1}) }},
	{"DeleteSecondFactor", func(tx store.Tx) error { return tx.DeleteSecondFactor("a", 1) }},
	{"PutPasskey", func(tx store.Tx) error { return tx.PutPasskey("a", store.Passkey{ID: "p", UserID: 1}) }},
	{"DeletePasskey", func(tx store.Tx) error { return tx.DeletePasskey("a", "p") }},
	{"PutPasskeyHandle", func(tx store.Tx) error {
		return tx.PutPasskeyHandle("a", store.PasskeyHandle{UserID: 1, Handle: []byte{1}})
	}},
	{"PutVerificationToken", func(tx store.Tx) error { return tx.PutVerificationToken("a", store.VerificationToken{}) }},
	{"PutAsset", func(tx store.Tx) error { return tx.PutAsset("a", store.Asset{Name: "logo"}) }},
	{"DeleteAsset", func(tx store.Tx) error { return tx.DeleteAsset("a", "logo") }},
	{"DeleteUser", func(tx store.Tx) error { return tx.DeleteUser("a", 1) }},
	{"DeleteWorkspace", func(tx store.Tx) error { return tx.DeleteWorkspace("a") }},
	{"PutIdempotency", func(tx store.Tx) error { return tx.PutIdempotency(store.IdempotencyRecord{}) }},
	{"DeleteIdempotency", func(tx store.Tx) error { return tx.DeleteIdempotency("a", "s", "k") }},
	{"DeleteEndedSessions", func(tx store.Tx) error {
		_, err := tx.DeleteEndedSessions("w", time.Time{}, 1)
		return err
	}},
	{"PutAuditRecord", func(tx store.Tx) error { return tx.PutAuditRecord("w", store.AuditRecord{ID: "a"}) }},
	{"DeleteAuditRecords", func(tx store.Tx) error { _, err := tx.DeleteAuditRecords("w", "a", 1); return err }},
	{"DeleteExpiredTokens", func(tx store.Tx) error {
		_, err := tx.DeleteExpiredTokens("w", time.Time{}, 1)
		return err
	}},
	{"DeleteFinishedDeliveries", func(tx store.Tx) error {
		_, err := tx.DeleteFinishedDeliveries("w", store.JobWebhook, store.DeliverySucceeded, time.Time{}, 1)
		return err
	}},
	{"DeleteExpiredIdempotency", func(tx store.Tx) error {
		_, err := tx.DeleteExpiredIdempotency(time.Time{}, 1)
		return err
	}},
	{"PutDelivery", func(tx store.Tx) error { return tx.PutDelivery("a", webhookJob) }},
	{"ClaimDelivery", func(tx store.Tx) error { _, _, err := tx.ClaimDelivery("a", 1); return err }},
}

// reads are the read methods of store.Tx, every one of them.
var reads = []method{
	{"AuditRecords", func(tx store.Tx) error { _, err := tx.AuditRecords("w", store.AuditQuery{}); return err }},
	{"Workspace", func(tx store.Tx) error { _, err := tx.Workspace("a"); return err }},
	{"Workspaces", func(tx store.Tx) error { _, err := tx.Workspaces(); return err }},
	{"User", func(tx store.Tx) error { _, err := tx.User("a", 1); return err }},
	{"UserIDByUsername", func(tx store.Tx) error { _, err := tx.UserIDByUsername("a", "u"); return err }},
	{"UserIDByEmail", func(tx store.Tx) error { _, err := tx.UserIDByEmail("a", "e"); return err }},
	{"Users", func(tx store.Tx) error { _, _, err := tx.Users("a", store.UserQuery{}); return err }},
	{"UserRoles", func(tx store.Tx) error { _, err := tx.UserRoles("a", 1); return err }},
	{"UserAttributes", func(tx store.Tx) error { _, err := tx.UserAttributes("a", 1); return err }},
	{"UsersByAttribute", func(tx store.Tx) error {
		_, _, err := tx.UsersByAttribute("a", store.AttributeQuery{Key: "k", Value: "v"})
		return err
	}},
	{"ClaimMappers", func(tx store.Tx) error { _, err := tx.ClaimMappers("a"); return err }},
	{"Role", func(tx store.Tx) error { _, err := tx.Role("a", 1); return err }},
	{"RoleIDByName", func(tx store.Tx) error { _, err := tx.RoleIDByName("a", "r"); return err }},
	{"Roles", func(tx store.Tx) error { _, _, err := tx.Roles("a", store.NameQuery{Limit: 1}); return err }},
	{"Group", func(tx store.Tx) error { _, err := tx.Group("a", 1); return err }},
	{"GroupIDByName", func(tx store.Tx) error { _, err := tx.GroupIDByName("a", "g"); return err }},
	{"Groups", func(tx store.Tx) error { _, _, err := tx.Groups("a", store.NameQuery{Limit: 1}); return err }},
	{"GroupMembers", func(tx store.Tx) error { _, _, err := tx.GroupMembers("a", 1, 0, 1); return err }},
	{"UserGroups", func(tx store.Tx) error { _, err := tx.UserGroups("a", 1); return err }},
	{"GroupRoles", func(tx store.Tx) error { _, err := tx.GroupRoles("a", 1); return err }},
	{"RoleHolders", func(tx store.Tx) error { _, _, err := tx.RoleHolders("a", 1, 0, 1); return err }},
	{"Webhook", func(tx store.Tx) error { _, err := tx.Webhook("a", 1); return err }},
	{"Webhooks", func(tx store.Tx) error { _, _, err := tx.Webhooks("a", 0, 1); return err }},
	{"Session", func(tx store.Tx) error { _, err := tx.Session("a", "s"); return err }},
	{"UserSessions", func(tx store.Tx) error { _, err := tx.UserSessions("a", 1); return err }},
	{"APIKey", func(tx store.Tx) error { _, err := tx.APIKey("k"); return err }},
	{"APIKeys", func(tx store.Tx) error { _, err := tx.APIKeys("a"); return err }},
	{"OAuthClient", func(tx store.Tx) error { _, err := tx.OAuthClient("a", "c"); return err }},
	{"OAuthClients", func(tx store.Tx) error { _, err := tx.OAuthClients("a"); return err }},
	{"SigningKeys", func(tx store.Tx) error { _, err := tx.SigningKeys("a"); return err }},
	{"AuthRequest", func(tx store.Tx) error { _, err := tx.AuthRequest("a", "r"); return err }},
	{"Grant", func(tx store.Tx) error { _, err := tx.Grant("a", "g"); return err }},
	{"UserGrants", func(tx store.Tx) error { _, err := tx.UserGrants("a", 1); return err }},
	{"RefreshToken", func(tx store.Tx) error { _, err := tx.RefreshToken("a", "t"); return err }},
	{"LoginAttempts", func(tx store.Tx) error { _, err := tx.LoginAttempts("a", 1); return err }},
	{"SecondFactor", func(tx store.Tx) error { _, err := tx.SecondFactor("a", 1); return err }},
	{"Passkey", func(tx store.Tx) error { _, err := tx.Passkey("a", "p"); return err }},
	{"UserPasskeys", func(tx store.Tx) error { _, err := tx.UserPasskeys("a", 1); return err }},
	{"PasskeyHandle", func(tx store.Tx) error { _, err := tx.PasskeyHandle("a", 1); return err }},
	{"UserIDByPasskeyHandle", func(tx store.Tx) error { _, err := tx.UserIDByPasskeyHandle("a", []byte{1}); return err }},
	{"VerificationToken", func(tx store.Tx) error { _, err := tx.VerificationToken("a", "t"); return err }},
	{"Asset", func(tx store.Tx) error { _, err := tx.Asset("a", "logo"); return err }},
	{"Idempotency", func(tx store.Tx) error { _, err := tx.Idempotency("a", "s", "k"); return err }},
	{"Delivery", func(tx store.Tx) error { _, err := tx.Delivery("a", 1); return err }},
	{"Deliveries", func(tx store.Tx) error { _, err := tx.Deliveries("a", 1); return err }},
	{"MailJobs", func(tx store.Tx) error { _, err := tx.MailJobs("a"); return err }},
	{"WebhooksForEvent", func(tx store.Tx) error { _, err := tx.WebhooksForEvent("a", "user.created"); return err }},
	{"DeliveriesPage", func(tx store.Tx) error { _, _, err := tx.DeliveriesPage("a", 1, 0, 1); return err }},
	{"MailJobsPage", func(tx store.Tx) error { _, _, err := tx.MailJobsPage("a", 0, 1); return err }},
	{"UserSessionsPage", func(tx store.Tx) error { _, _, err := tx.UserSessionsPage("a", 1, 0, 1); return err }},
	{"DueDeliveries", func(tx store.Tx) error { _, err := tx.DueDeliveries(time.Time{}, 1); return err }},
	{"NextDueAt", func(tx store.Tx) error { _, _, err := tx.NextDueAt(); return err }},
	{"PendingDeliveries", func(tx store.Tx) error { _, err := tx.PendingDeliveries(); return err }},
	{"WorkspaceQueue", func(tx store.Tx) error { _, err := tx.WorkspaceQueue("a", 1); return err }},
}

// TestListsCoverTx checks that writes and reads together name every
// method of store.Tx once, so that a method added to the interface is
// classified here too.
func TestListsCoverTx(t *testing.T) {
	var listed []string
	for _, m := range slices.Concat(writes, reads) {
		listed = append(listed, m.name)
	}
	slices.Sort(listed)
	var methods []string
	for m := range reflect.TypeFor[store.Tx]().Methods() {
		methods = append(methods, m.Name)
	}
	if diff := cmp.Diff(methods, listed); diff != "" {
		t.Errorf("methods of store.Tx (-) and the methods the test lists (+):\n%s", diff)
	}
}

// TestRunView checks that in a View every write returns ErrReadOnly
// without reaching the store's Tx, and every read reaches it.
func TestRunView(t *testing.T) {
	for _, m := range writes {
		f := &fakeTx{}
		err := store.RunView(f, func(tx store.Tx) error {
			if err := m.call(tx); !errors.Is(err, store.ErrReadOnly) {
				t.Errorf("%s in a View: error = %v, want ErrReadOnly", m.name, err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("RunView around %s: %v", m.name, err)
		}
		if len(f.calls) != 0 {
			t.Errorf("%s in a View reached the store: %v", m.name, f.calls)
		}
	}
	for _, m := range reads {
		f := &fakeTx{}
		_ = store.RunView(f, func(tx store.Tx) error {
			if err := m.call(tx); err != nil {
				t.Errorf("%s in a View: %v", m.name, err)
			}
			return nil
		})
		if !slices.Equal(f.calls, []string{m.name}) {
			t.Errorf("%s in a View: the store saw %v, want just it", m.name, f.calls)
		}
	}
}

// TestRunUpdate checks that in an Update every method reaches the store's
// Tx.
func TestRunUpdate(t *testing.T) {
	for _, m := range slices.Concat(writes, reads) {
		f := &fakeTx{}
		_ = store.RunUpdate(f, func(tx store.Tx) error {
			if err := m.call(tx); err != nil {
				t.Errorf("%s in an Update: %v", m.name, err)
			}
			return nil
		})
		if !slices.Equal(f.calls, []string{m.name}) {
			t.Errorf("%s in an Update: the store saw %v, want just it", m.name, f.calls)
		}
	}
}

// TestTxDone checks that every method of a Tx used after its function
// returned, or panicked, returns ErrTxDone without reaching the store's
// Tx, in a View and in an Update alike.
func TestTxDone(t *testing.T) {
	runs := []struct {
		name string
		run  func(store.Tx, func(store.Tx) error) error
	}{
		{"RunView", store.RunView},
		{"RunUpdate", store.RunUpdate},
	}
	for _, r := range runs {
		f := &fakeTx{}
		var kept store.Tx
		_ = r.run(f, func(tx store.Tx) error { kept = tx; return nil })
		var panicked store.Tx
		func() {
			defer func() { _ = recover() }()
			_ = r.run(f, func(tx store.Tx) error { panicked = tx; panic("boom") })
		}()
		for _, m := range slices.Concat(writes, reads) {
			if err := m.call(kept); !errors.Is(err, store.ErrTxDone) {
				t.Errorf("%s: %s after fn returned: error = %v, want ErrTxDone", r.name, m.name, err)
			}
			if err := m.call(panicked); !errors.Is(err, store.ErrTxDone) {
				t.Errorf("%s: %s after fn panicked: error = %v, want ErrTxDone", r.name, m.name, err)
			}
		}
		if len(f.calls) != 0 {
			t.Errorf("%s: calls after fn ended reached the store: %v", r.name, f.calls)
		}
	}
}

// TestRunReturnsFnResult checks that RunView and RunUpdate return fn's
// error itself.
func TestRunReturnsFnResult(t *testing.T) {
	boom := errors.New("boom")
	for _, run := range []func(store.Tx, func(store.Tx) error) error{store.RunView, store.RunUpdate} {
		if err := run(&fakeTx{}, func(store.Tx) error { return boom }); err != boom {
			t.Errorf("error = %v, want fn's own", err)
		}
		if err := run(&fakeTx{}, func(store.Tx) error { return nil }); err != nil {
			t.Errorf("error = %v, want nil", err)
		}
	}
}

// TestPutDeliveryChecksJob checks that PutDelivery passes the store only
// a webhook job without a user or a mail job without an endpoint.
func TestPutDeliveryChecksJob(t *testing.T) {
	for _, c := range []struct {
		name string
		d    store.Delivery
		ok   bool
	}{
		{"webhook job", store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 3}, true},
		{"webhook job of endpoint 0", store.Delivery{ID: 1, Kind: store.JobWebhook}, false},
		{"webhook job of endpoint -1", store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: -1}, false},
		{"mail job", store.Delivery{ID: 1, Kind: store.JobMail}, true},
		{"mail job with an endpoint", store.Delivery{ID: 1, Kind: store.JobMail, EndpointID: 3}, false},
		{"mail job of a user", store.Delivery{ID: 1, Kind: store.JobMail, UserID: 7}, true},
		{"mail job of user -1", store.Delivery{ID: 1, Kind: store.JobMail, UserID: -1}, false},
		{"webhook job of a user", store.Delivery{ID: 1, Kind: store.JobWebhook, EndpointID: 3, UserID: 7}, false},
		{"no kind", store.Delivery{ID: 1, EndpointID: 3}, false},
		{"unknown kind", store.Delivery{ID: 1, Kind: "sms"}, false},
	} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error { err = tx.PutDelivery("a", c.d); return nil })
		if c.ok && (err != nil || len(f.calls) != 1) {
			t.Errorf("%s: error = %v, store saw %v; want it passed on", c.name, err, f.calls)
		}
		if !c.ok && (err == nil || len(f.calls) != 0) {
			t.Errorf("%s: error = %v, store saw %v; want an error and nothing passed on", c.name, err, f.calls)
		}
	}
}

// TestPutWebhookChecksID checks that the front passes on only positive
// endpoint ids, so that no endpoint shares EndpointID 0 with mail jobs.
func TestPutWebhookChecksID(t *testing.T) {
	for _, c := range []struct {
		id int64
		ok bool
	}{{1, true}, {0, false}, {-1, false}} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error { err = tx.PutWebhook("a", store.Webhook{ID: c.id}); return nil })
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("PutWebhook(id %d): error = %v, store saw %v; want passed on = %v", c.id, err, f.calls, c.ok)
		}
	}
}

// TestPutRoleAndGroupCheckIDs checks that the front passes on only
// positive role and group ids, as NextID hands out.
func TestPutRoleAndGroupCheckIDs(t *testing.T) {
	for _, c := range []struct {
		id int64
		ok bool
	}{{1, true}, {0, false}, {-1, false}} {
		for _, put := range []struct {
			name string
			put  func(tx store.Tx, id int64) error
		}{
			{"PutRole", func(tx store.Tx, id int64) error { return tx.PutRole("a", store.Role{ID: id}) }},
			{"PutGroup", func(tx store.Tx, id int64) error { return tx.PutGroup("a", store.Group{ID: id}) }},
		} {
			f := &fakeTx{}
			var err error
			_ = store.RunUpdate(f, func(tx store.Tx) error { err = put.put(tx, c.id); return nil })
			if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
				t.Errorf("%s(id %d): error = %v, store saw %v; want passed on = %v", put.name, c.id, err, f.calls, c.ok)
			}
		}
	}
}

// TestPutOAuthClientChecksID checks that the front passes on only a
// non-empty client id, which every store can hold as a key.
func TestPutOAuthClientChecksID(t *testing.T) {
	for _, c := range []struct {
		id string
		ok bool
	}{{"c", true}, {"idc_0123456789abcdef", true}, {"", false}} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error { err = tx.PutOAuthClient("a", store.OAuthClient{ID: c.id}); return nil })
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("PutOAuthClient(id %q): error = %v, store saw %v; want passed on = %v", c.id, err, f.calls, c.ok)
		}
	}
}

// TestOIDCPutsCheckIDs checks that the front passes on a signing key, an
// authorization request, a grant or a refresh token only with a non-empty
// id, which every store can hold as a key, and a refresh token only with
// the grant it belongs to.
func TestOIDCPutsCheckIDs(t *testing.T) {
	for _, c := range []struct {
		name string
		put  func(tx store.Tx) error
		ok   bool
	}{
		{"PutSigningKey(id k)", func(tx store.Tx) error { return tx.PutSigningKey("a", store.SigningKey{ID: "k"}) }, true},
		{"PutSigningKey(empty id)", func(tx store.Tx) error {
			return tx.PutSigningKey("a", store.SigningKey{Algorithm: "RS256", State: "active"})
		}, false},
		{"PutAuthRequest(id r)", func(tx store.Tx) error { return tx.PutAuthRequest("a", store.AuthRequest{ID: "r"}) }, true},
		{"PutAuthRequest(empty id)", func(tx store.Tx) error {
			return tx.PutAuthRequest("a", store.AuthRequest{ClientID: "c", GrantID: "g"})
		}, false},
		{"PutGrant(id g)", func(tx store.Tx) error { return tx.PutGrant("a", store.Grant{ID: "g"}) }, true},
		{"PutAuditRecord(id a)", func(tx store.Tx) error { return tx.PutAuditRecord("a", store.AuditRecord{ID: "a"}) }, true},
		{"PutAuditRecord(empty id)", func(tx store.Tx) error {
			return tx.PutAuditRecord("a", store.AuditRecord{Action: "user.created"})
		}, false},
		{"PutGrant(empty id)", func(tx store.Tx) error { return tx.PutGrant("a", store.Grant{ClientID: "c", UserID: 1}) }, false},
		{"PutRefreshToken(id t, grant g)", func(tx store.Tx) error {
			return tx.PutRefreshToken("a", store.RefreshToken{ID: "t", GrantID: "g"})
		}, true},
		{"PutRefreshToken(empty id)", func(tx store.Tx) error {
			return tx.PutRefreshToken("a", store.RefreshToken{GrantID: "g"})
		}, false},
		{"PutRefreshToken(empty grant id)", func(tx store.Tx) error {
			return tx.PutRefreshToken("a", store.RefreshToken{ID: "t"})
		}, false},
		{"PutRefreshToken(both empty)", func(tx store.Tx) error { return tx.PutRefreshToken("a", store.RefreshToken{}) }, false},
	} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error { err = c.put(tx); return nil })
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("%s: error = %v, store saw %v; want passed on = %v", c.name, err, f.calls, c.ok)
		}
	}
}

// TestPutLoginAttemptsChecksUserID checks that the front passes on the
// lockout state of a positive user id only.
func TestPutLoginAttemptsChecksUserID(t *testing.T) {
	for _, c := range []struct {
		id int64
		ok bool
	}{{1, true}, {42, true}, {0, false}, {-1, false}} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error {
			err = tx.PutLoginAttempts("a", store.LoginAttempts{UserID: c.id, Failures: 3})
			return nil
		})
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("PutLoginAttempts(user %d): error = %v, store saw %v; want passed on = %v", c.id, err, f.calls, c.ok)
		}
	}
}

// TestPutSecondFactorChecksUserID checks that the front passes on the
// second factor of a positive user id only.
func TestPutSecondFactorChecksUserID(t *testing.T) {
	for _, c := range []struct {
		id int64
		ok bool
	}{{1, true}, {42, true}, {0, false}, {-1, false}} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error {
			err = tx.PutSecondFactor("a", store.SecondFactor{UserID: c.id, Secret: []byte("secret"), Confirmed: true})
			return nil
		})
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("PutSecondFactor(user %d): error = %v, store saw %v; want passed on = %v", c.id, err, f.calls, c.ok)
		}
	}
}

// TestPutPasskeyChecks checks that the front passes on a passkey with an
// id of a positive user id only, and a non-empty handle of a positive
// user id only.
func TestPutPasskeyChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		put  func(tx store.Tx) error
		ok   bool
	}{
		{"passkey", func(tx store.Tx) error { return tx.PutPasskey("a", store.Passkey{ID: "p", UserID: 1}) }, true},
		{"passkey of user 0", func(tx store.Tx) error { return tx.PutPasskey("a", store.Passkey{ID: "p"}) }, false},
		{"passkey without id", func(tx store.Tx) error { return tx.PutPasskey("a", store.Passkey{UserID: 1}) }, false},
		{"handle", func(tx store.Tx) error {
			return tx.PutPasskeyHandle("a", store.PasskeyHandle{UserID: 1, Handle: []byte{1}})
		}, true},
		{"handle of user -1", func(tx store.Tx) error {
			return tx.PutPasskeyHandle("a", store.PasskeyHandle{UserID: -1, Handle: []byte{1}})
		}, false},
		{"empty handle", func(tx store.Tx) error { return tx.PutPasskeyHandle("a", store.PasskeyHandle{UserID: 1}) }, false},
	} {
		f := &fakeTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error {
			err = c.put(tx)
			return nil
		})
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("%s: error = %v, store saw %v; want passed on = %v", c.name, err, f.calls, c.ok)
		}
	}
}

// fakeBulkTx is a fakeTx that implements store.Bulk too.
type fakeBulkTx struct{ fakeTx }

func (f *fakeBulkTx) UserKeysTaken(string, []string, []string) ([]bool, []bool, error) {
	f.call("UserKeysTaken")
	return nil, nil, nil
}
func (f *fakeBulkTx) InsertUsers(string, []store.UserInsert) error { f.call("InsertUsers"); return nil }
func (f *fakeBulkTx) UserWithClaimInputs(string, int64) (store.User, map[string]string, []store.ClaimMapper, error) {
	f.call("UserWithClaimInputs")
	return store.User{}, map[string]string{}, nil, nil
}

func (f *fakeBulkTx) UserWithAttributes(string, int64) (store.User, map[string]string, error) {
	f.call("UserWithAttributes")
	return store.User{}, map[string]string{}, nil
}

func (f *fakeBulkTx) UserAccess(string, int64) (store.UserAccess, error) {
	f.call("UserAccess")
	return store.UserAccess{}, nil
}

var _ store.Bulk = (*fakeBulkTx)(nil)

// bulkMethod calls one method of a store.Bulk and returns its error.
type bulkMethod struct {
	name  string
	write bool
	call  func(b store.Bulk) error
}

// bulkMethods are the methods of store.Bulk, every one of them.
var bulkMethods = []bulkMethod{
	{"UserKeysTaken", false, func(b store.Bulk) error {
		_, _, err := b.UserKeysTaken("a", []string{"u"}, []string{"e"})
		return err
	}},
	{"InsertUsers", true, func(b store.Bulk) error {
		return b.InsertUsers("a", []store.UserInsert{{User: store.User{ID: 1}}})
	}},
	{"UserWithClaimInputs", false, func(b store.Bulk) error {
		_, _, _, err := b.UserWithClaimInputs("a", 1)
		return err
	}},
	{"UserWithAttributes", false, func(b store.Bulk) error {
		_, _, err := b.UserWithAttributes("a", 1)
		return err
	}},
	{"UserAccess", false, func(b store.Bulk) error {
		_, err := b.UserAccess("a", 1)
		return err
	}},
}

// TestBulkListCoversBulk checks that bulkMethods names every method of
// store.Bulk once.
func TestBulkListCoversBulk(t *testing.T) {
	var listed, methods []string
	for _, m := range bulkMethods {
		listed = append(listed, m.name)
	}
	slices.Sort(listed)
	for m := range reflect.TypeFor[store.Bulk]().Methods() {
		methods = append(methods, m.Name)
	}
	if diff := cmp.Diff(methods, listed); diff != "" {
		t.Errorf("methods of store.Bulk (-) and the methods the test lists (+):\n%s", diff)
	}
}

// TestBulkPassesThrough checks that the Tx RunView and RunUpdate pass fn
// implements store.Bulk exactly when the store's Tx does.
func TestBulkPassesThrough(t *testing.T) {
	for _, c := range []struct {
		name string
		tx   store.Tx
		want bool
	}{
		{"a Tx without Bulk", &fakeTx{}, false},
		{"a Tx with Bulk", &fakeBulkTx{}, true},
	} {
		for _, run := range []struct {
			name string
			run  func(store.Tx, func(store.Tx) error) error
		}{{"RunView", store.RunView}, {"RunUpdate", store.RunUpdate}} {
			var got bool
			_ = run.run(c.tx, func(tx store.Tx) error { _, got = tx.(store.Bulk); return nil })
			if got != c.want {
				t.Errorf("%s over %s: the Tx implements store.Bulk = %t, want %t", run.name, c.name, got, c.want)
			}
		}
	}
}

// TestBulkGuarded checks the methods of store.Bulk through the front: in
// a View InsertUsers returns ErrReadOnly without reaching the store and
// the reads reach it; in an Update every method reaches it; after fn
// returned or panicked every method returns ErrTxDone. The methods of
// store.Tx keep their checks on a Tx that implements Bulk.
func TestBulkGuarded(t *testing.T) {
	for _, m := range bulkMethods {
		f := &fakeBulkTx{}
		_ = store.RunView(f, func(tx store.Tx) error {
			err := m.call(tx.(store.Bulk))
			if m.write && !errors.Is(err, store.ErrReadOnly) {
				t.Errorf("%s in a View: error = %v, want ErrReadOnly", m.name, err)
			}
			if !m.write && err != nil {
				t.Errorf("%s in a View: %v", m.name, err)
			}
			return nil
		})
		want := []string{m.name}
		if m.write {
			want = nil
		}
		if diff := cmp.Diff(want, f.calls); diff != "" {
			t.Errorf("%s in a View: calls that reached the store (-want +got):\n%s", m.name, diff)
		}

		f = &fakeBulkTx{}
		_ = store.RunUpdate(f, func(tx store.Tx) error {
			if err := m.call(tx.(store.Bulk)); err != nil {
				t.Errorf("%s in an Update: %v", m.name, err)
			}
			return nil
		})
		if diff := cmp.Diff([]string{m.name}, f.calls); diff != "" {
			t.Errorf("%s in an Update: calls that reached the store (-want +got):\n%s", m.name, diff)
		}
	}

	for _, run := range []struct {
		name string
		run  func(store.Tx, func(store.Tx) error) error
	}{{"RunView", store.RunView}, {"RunUpdate", store.RunUpdate}} {
		f := &fakeBulkTx{}
		var kept, panicked store.Tx
		_ = run.run(f, func(tx store.Tx) error { kept = tx; return nil })
		func() {
			defer func() { _ = recover() }()
			_ = run.run(f, func(tx store.Tx) error { panicked = tx; panic("boom") })
		}()
		for _, m := range bulkMethods {
			if err := m.call(kept.(store.Bulk)); !errors.Is(err, store.ErrTxDone) {
				t.Errorf("%s: %s after fn returned: error = %v, want ErrTxDone", run.name, m.name, err)
			}
			if err := m.call(panicked.(store.Bulk)); !errors.Is(err, store.ErrTxDone) {
				t.Errorf("%s: %s after fn panicked: error = %v, want ErrTxDone", run.name, m.name, err)
			}
		}
		for _, m := range slices.Concat(writes, reads) {
			if err := m.call(kept); !errors.Is(err, store.ErrTxDone) {
				t.Errorf("%s: %s of a Tx with Bulk after fn returned: error = %v, want ErrTxDone", run.name, m.name, err)
			}
		}
		if len(f.calls) != 0 {
			t.Errorf("%s: calls after fn ended reached the store: %v", run.name, f.calls)
		}
	}

	for _, m := range writes {
		f := &fakeBulkTx{}
		_ = store.RunView(f, func(tx store.Tx) error {
			if err := m.call(tx); !errors.Is(err, store.ErrReadOnly) {
				t.Errorf("%s in a View of a Tx with Bulk: error = %v, want ErrReadOnly", m.name, err)
			}
			return nil
		})
		if len(f.calls) != 0 {
			t.Errorf("%s in a View of a Tx with Bulk reached the store: %v", m.name, f.calls)
		}
	}
	for _, m := range slices.Concat(writes, reads) {
		f := &fakeBulkTx{}
		_ = store.RunUpdate(f, func(tx store.Tx) error {
			if err := m.call(tx); err != nil {
				t.Errorf("%s in an Update of a Tx with Bulk: %v", m.name, err)
			}
			return nil
		})
		if !slices.Equal(f.calls, []string{m.name}) {
			t.Errorf("%s in an Update of a Tx with Bulk: the store saw %v, want just it", m.name, f.calls)
		}
	}
}

// TestInsertUsersChecksSecondFactors checks that the front passes
// InsertUsers only second factors of the user they come with, whose id
// is positive.
func TestInsertUsersChecksSecondFactors(t *testing.T) {
	factor := func(id int64) *store.SecondFactor {
		return &store.SecondFactor{UserID: id, Secret: []byte("secret"), Confirmed: true}
	}
	for _, c := range []struct {
		name  string
		users []store.UserInsert
		ok    bool
	}{
		{"no users", nil, true},
		{"no second factor", []store.UserInsert{{User: store.User{ID: 1}}}, true},
		{"the user's own", []store.UserInsert{{User: store.User{ID: 1}}, {User: store.User{ID: 2}, SecondFactor: factor(2)}}, true},
		{"user 1's own", []store.UserInsert{{User: store.User{ID: 1}, SecondFactor: factor(1)}}, true},
		{"another user's", []store.UserInsert{{User: store.User{ID: 1}}, {User: store.User{ID: 2}, SecondFactor: factor(1)}}, false},
		{"of user 0", []store.UserInsert{{User: store.User{ID: 0}, SecondFactor: factor(0)}}, false},
		{"of user -1", []store.UserInsert{{User: store.User{ID: -1}, SecondFactor: factor(-1)}}, false},
	} {
		f := &fakeBulkTx{}
		var err error
		_ = store.RunUpdate(f, func(tx store.Tx) error { err = tx.(store.Bulk).InsertUsers("a", c.users); return nil })
		if c.ok != (err == nil) || c.ok != (len(f.calls) == 1) {
			t.Errorf("InsertUsers(%s): error = %v, store saw %v; want passed on = %v", c.name, err, f.calls, c.ok)
		}
	}
}
