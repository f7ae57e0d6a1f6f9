package identity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// The audit records of the configuration and token methods: for each, the
// records one call writes, compared whole (but for ID and Time), with the
// actor and the request of the call's context.

// ciActor and ciInfo are the actor and the request of the audited calls.
var (
	ciActor = identity.Actor{Kind: identity.ActorAPIKey, ID: "k1", Display: "ci"}
	ciInfo  = identity.RequestInfo{Address: netip.MustParseAddr("203.0.113.9"), UserAgent: "ci-runner/2.1", RequestID: "req-42"}
	// ciRequest is ciInfo as a record keeps it.
	ciRequest = identity.AuditRequest{Address: "203.0.113.9", UserAgent: "ci-runner/2.1", RequestID: "req-42"}
)

// ciContext is ctx naming ciActor and ciInfo.
func ciContext(ctx context.Context) context.Context {
	return identity.WithRequestInfo(identity.WithActor(ctx, ciActor), ciInfo)
}

// ignoreIDTime leaves a record's ID and Time out of a comparison.
var ignoreIDTime = cmpopts.IgnoreFields(identity.AuditRecord{}, "ID", "Time")

// snapshotStore is a Store that takes a backup of itself: the snapshot is
// the eight bytes "snapshot".
type snapshotStore struct{ store.Store }

func (snapshotStore) Backup(_ context.Context, w io.Writer) (int64, error) {
	n, err := io.WriteString(w, "snapshot")
	return int64(n), err
}

// auditSink keeps the records an Options.AuditSink is given.
type auditSink struct {
	mu   sync.Mutex
	recs []identity.AuditRecord
}

func (s *auditSink) Audit(r identity.AuditRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
}

func (s *auditSink) actions() []identity.AuditAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []identity.AuditAction
	for _, r := range s.recs {
		out = append(out, r.Action)
	}
	return out
}

// configEnv is an oidcEnv (clients web, spa and machine of "acme", ada)
// over a store that takes backups, with an audit sink, and room for what
// a test's setup makes.
type configEnv struct {
	*oidcEnv
	sink *auditSink
	// What a setup or a call made, for the records expected.
	tok      identity.Tokens
	authCode string
	keys     map[identity.KeyState]string
	created  string // an id the call made
	secret   string // a secret the call returned: no record may hold it
}

// newConfigEnv returns an configEnv whose Service issues tokens (tokenOpts)
// on the fake clock.
func newConfigEnv(t *testing.T) *configEnv {
	t.Helper()
	sink := &auditSink{}
	opts := tokenOpts()
	opts.AuditSink = sink
	opts.PasskeyCeremony = fakeCeremony{}
	e := newOIDCEnvOver(t, opts, func(st store.Store) store.Store { return snapshotStore{st} })
	return &configEnv{oidcEnv: e, sink: sink}
}

// trailOf returns the workspace's records written at or after since, oldest
// first.
func (e *configEnv) trailOf(ws *identity.Workspace, since time.Time) []identity.AuditRecord {
	e.t.Helper()
	page, err := ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Since: since}, &identity.AuditPageOptions{Oldest: true, Limit: identity.MaxPageLimit})
	if err != nil {
		e.t.Fatalf("ListAuditRecords: %v", err)
	}
	return page.Records
}

// stateKeys returns the ids of the workspace's published keys by state.
func (e *configEnv) stateKeys() map[identity.KeyState]string {
	e.t.Helper()
	out := map[identity.KeyState]string{}
	for state, k := range e.keyByState() {
		out[state] = k.ID
	}
	return out
}

// ciRecord is the record of a successful call made with ciContext in
// "acme".
func ciRecord(action identity.AuditAction, target identity.AuditTarget, changes map[string]identity.AuditChange) identity.AuditRecord {
	return identity.AuditRecord{
		Workspace: "acme", Actor: ciActor, Action: action, Target: target,
		Outcome: identity.OutcomeSuccess, Request: ciRequest, Changes: changes,
	}
}

// failed is r with the outcome failure.
func failed(r identity.AuditRecord) identity.AuditRecord {
	r.Outcome = identity.OutcomeFailure
	return r
}

// acmeTarget is the workspace as a target (adaTarget is ada).
var acmeTarget = identity.AuditTarget{Kind: identity.TargetWorkspace, ID: "acme", Display: "acme"}

func clientTarget(c identity.OAuthClient) identity.AuditTarget {
	return identity.AuditTarget{Kind: identity.TargetClient, ID: c.ID, Display: c.Name}
}

// TestAuditConfigRecords calls each configuration and token method once,
// with an API key as the actor and a request, and compares the records
// the call wrote, and only those, with the records expected.
func TestAuditConfigRecords(t *testing.T) {
	smtpAfter := map[string]any{
		"host": "smtp.example.com", "port": float64(587), "username": "mailer", "passwordSet": true,
		"from": "noreply@example.com", "fromName": "Acme", "verifyUrl": "https://app.example.com/verify?token={token}",
	}
	logo := func(t *testing.T) []byte { return pngOf(t, 4, 4, "") }
	tests := []struct {
		name string
		// setup prepares the call, with the context of the program (no
		// actor, no request).
		setup func(e *configEnv)
		// noKeys leaves the workspace without signing keys, which are
		// otherwise made before setup.
		noKeys bool
		// call is the audited call; its error must have the code wantErr.
		call    func(ctx context.Context, e *configEnv) error
		wantErr identity.Code
		// want are the records the call writes, in the order of their
		// actions.
		want func(e *configEnv) []identity.AuditRecord
	}{
		{
			name: "CreateRole",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.CreateRole(ctx, identity.NewRole{Name: "admin", Description: "Administrators"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditRoleCreated,
					identity.AuditTarget{Kind: identity.TargetRole, ID: "1", Display: "admin"},
					changes{"name": after("admin"), "description": after("Administrators")})}
			},
		},
		{
			name:  "UpdateRole",
			setup: func(e *configEnv) { e.role("admin") },
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.UpdateRole(ctx, 1, identity.RoleUpdate{Name: "owner", Description: "Owners"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditRoleUpdated,
					identity.AuditTarget{Kind: identity.TargetRole, ID: "1", Display: "owner"},
					changes{"name": {Before: "admin", After: "owner"}, "description": after("Owners")})}
			},
		},
		{
			name:  "UpdateRole that changes nothing",
			setup: func(e *configEnv) { e.role("admin") },
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.UpdateRole(ctx, 1, identity.RoleUpdate{Name: "admin"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name:  "DeleteRole",
			setup: func(e *configEnv) { e.role("admin") },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.DeleteRole(ctx, 1) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditRoleDeleted,
					identity.AuditTarget{Kind: identity.TargetRole, ID: "1", Display: "admin"}, nil)}
			},
		},
		{
			name: "CreateGroup",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.CreateGroup(ctx, identity.NewGroup{Name: "eng"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupCreated,
					identity.AuditTarget{Kind: identity.TargetGroup, ID: "1", Display: "eng"}, changes{"name": after("eng")})}
			},
		},
		{
			name:  "UpdateGroup",
			setup: func(e *configEnv) { e.group("eng") },
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.UpdateGroup(ctx, 1, identity.GroupUpdate{Name: "eng", Description: "Engineering"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupUpdated,
					identity.AuditTarget{Kind: identity.TargetGroup, ID: "1", Display: "eng"}, changes{"description": after("Engineering")})}
			},
		},
		{
			name:  "DeleteGroup",
			setup: func(e *configEnv) { e.group("eng") },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.DeleteGroup(ctx, 1) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupDeleted,
					identity.AuditTarget{Kind: identity.TargetGroup, ID: "1", Display: "eng"}, nil)}
			},
		},
		{
			name:  "AddGroupMember",
			setup: func(e *configEnv) { e.group("eng") },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.AddGroupMember(ctx, 1, e.ada.ID) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupMemberAdded, adaTarget, changes{"group": after("eng")})}
			},
		},
		{
			name: "AddGroupMember of a member",
			setup: func(e *configEnv) {
				e.group("eng")
				if err := e.ws.AddGroupMember(e.ctx, 1, e.ada.ID); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error { return e.ws.AddGroupMember(ctx, 1, e.ada.ID) },
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name: "RemoveGroupMember",
			setup: func(e *configEnv) {
				e.group("eng")
				if err := e.ws.AddGroupMember(e.ctx, 1, e.ada.ID); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error { return e.ws.RemoveGroupMember(ctx, 1, e.ada.ID) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupMemberRemoved, adaTarget, changes{"group": before("eng")})}
			},
		},
		{
			name:  "AssignGroupRole",
			setup: func(e *configEnv) { e.group("eng"); e.role("admin") },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.AssignGroupRole(ctx, 1, 1) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupRoleAssigned,
					identity.AuditTarget{Kind: identity.TargetGroup, ID: "1", Display: "eng"}, changes{"role": after("admin")})}
			},
		},
		{
			name: "RemoveGroupRole",
			setup: func(e *configEnv) {
				e.group("eng")
				e.role("admin")
				if err := e.ws.AssignGroupRole(e.ctx, 1, 1); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error { return e.ws.RemoveGroupRole(ctx, 1, 1) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditGroupRoleRemoved,
					identity.AuditTarget{Kind: identity.TargetGroup, ID: "1", Display: "eng"}, changes{"role": before("admin")})}
			},
		},
		{
			name: "SetClaimMapper new",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditMapperPut,
					identity.AuditTarget{Kind: identity.TargetMapper, ID: "department", Display: "department"},
					changes{"claimName": after("dept"), "includeInAccess": after(true), "includeInId": after(false)})}
			},
		},
		{
			name:  "SetClaimMapper replacing",
			setup: func(e *configEnv) { e.mapper("department", "dept", true, false) },
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept", IncludeInID: new(true)})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditMapperPut,
					identity.AuditTarget{Kind: identity.TargetMapper, ID: "department", Display: "department"},
					changes{"includeInId": {Before: false, After: true}})}
			},
		},
		{
			name:  "DeleteClaimMapper",
			setup: func(e *configEnv) { e.mapper("department", "dept", true, false) },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.DeleteClaimMapper(ctx, "department") },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditMapperDeleted,
					identity.AuditTarget{Kind: identity.TargetMapper, ID: "department", Display: "department"}, nil)}
			},
		},
		{
			name: "CreateWebhook",
			call: func(ctx context.Context, e *configEnv) error {
				c, err := e.ws.CreateWebhook(ctx, identity.NewWebhook{
					URL: "https://hooks.example.com/identity", Description: "CRM", Events: []string{"user.created", "user.deleted"},
				})
				e.secret = c.Secret
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditWebhookCreated,
					identity.AuditTarget{Kind: identity.TargetWebhook, ID: "1", Display: "https://hooks.example.com/identity"},
					changes{
						"url": after("https://hooks.example.com/identity"), "description": after("CRM"),
						"events": after([]any{"user.created", "user.deleted"}),
					})}
			},
		},
		{
			name:  "DeleteWebhook",
			setup: func(e *configEnv) { e.hook(identity.EventUserCreated) },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.DeleteWebhook(ctx, 1) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditWebhookDeleted,
					identity.AuditTarget{Kind: identity.TargetWebhook, ID: "1", Display: "https://hooks.example.com/identity"}, nil)}
			},
		},
		{
			name:  "RetryDelivery",
			setup: func(e *configEnv) { e.failedDelivery() },
			call:  func(ctx context.Context, e *configEnv) error { return e.ws.RetryDelivery(ctx, 1) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditDeliveryRetried,
					identity.AuditTarget{Kind: identity.TargetDelivery, ID: "1", Display: "user.created"},
					changes{"status": {Before: "failed", After: "pending"}})}
			},
		},
		{
			name: "CreateAPIKey",
			call: func(ctx context.Context, e *configEnv) error {
				k, err := e.ws.CreateAPIKey(ctx, "deploy", []identity.Scope{identity.ScopeUsersRead, identity.ScopeRolesWrite})
				e.created, e.secret = k.APIKey.ID, k.Secret
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditAPIKeyCreated,
					identity.AuditTarget{Kind: identity.TargetAPIKey, ID: e.created, Display: "deploy"},
					changes{"name": after("deploy"), "scopes": after([]any{"users:read", "roles:write"})})}
			},
		},
		{
			name: "RevokeAPIKey",
			setup: func(e *configEnv) {
				k, err := e.ws.CreateAPIKey(e.ctx, "deploy", []identity.Scope{identity.ScopeUsersRead})
				if err != nil {
					e.t.Fatal(err)
				}
				e.created = k.APIKey.ID
			},
			call: func(ctx context.Context, e *configEnv) error { return e.ws.RevokeAPIKey(ctx, e.created) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditAPIKeyRevoked,
					identity.AuditTarget{Kind: identity.TargetAPIKey, ID: e.created, Display: "deploy"}, nil)}
			},
		},
		{
			name: "CreateClient",
			call: func(ctx context.Context, e *configEnv) error {
				c, err := e.ws.CreateClient(ctx, identity.NewClient{
					Name: "Portal", RedirectURIs: []string{"https://portal.example.com/cb"}, Claims: []string{"groups"},
				})
				e.created, e.secret = c.Client.ID, c.Secret
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditClientCreated,
					identity.AuditTarget{Kind: identity.TargetClient, ID: e.created, Display: "Portal"},
					changes{
						"name": after("Portal"), "public": after(false),
						"redirectUris": after([]any{"https://portal.example.com/cb"}),
						"grantTypes":   after([]any{"authorization_code", "refresh_token"}), "claims": after([]any{"groups"}),
					})}
			},
		},
		{
			name: "DeleteClient",
			call: func(ctx context.Context, e *configEnv) error { return e.ws.DeleteClient(ctx, e.web.ID) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditClientDeleted, clientTarget(e.web), nil)}
			},
		},
		{
			name: "SetClientLogo",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.SetClientLogo(ctx, e.web.ID, logo(e.t))
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditClientLogoSet, clientTarget(e.web), nil)}
			},
		},
		{
			name: "DeleteClientLogo",
			setup: func(e *configEnv) {
				if _, err := e.ws.SetClientLogo(e.ctx, e.web.ID, logo(e.t)); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error { return e.ws.DeleteClientLogo(ctx, e.web.ID) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditClientLogoDeleted, clientTarget(e.web), nil)}
			},
		},
		{
			name: "SetLogo",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.SetLogo(ctx, logo(e.t))
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditBrandingLogoSet, acmeTarget, nil)}
			},
		},
		{
			name: "DeleteLogo",
			setup: func(e *configEnv) {
				if _, err := e.ws.SetLogo(e.ctx, logo(e.t)); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error { return e.ws.DeleteLogo(ctx) },
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditBrandingLogoDelete, acmeTarget, nil)}
			},
		},
		{
			name: "SetBranding",
			setup: func(e *configEnv) {
				if err := e.ws.SetBranding(e.ctx, identity.Branding{AccentColor: "#1d5fc9"}); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error {
				return e.ws.SetBranding(ctx, identity.Branding{DisplayName: "Acme Corp"})
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditBrandingChanged, acmeTarget,
					changes{"displayName": after("Acme Corp"), "accentColor": before("#1d5fc9")})}
			},
		},
		{
			name: "UpdateSettings",
			call: func(ctx context.Context, e *configEnv) error {
				e.secret = "smtp-secret"
				return e.ws.UpdateSettings(ctx, identity.Settings{
					PasswordPolicy: identity.PasswordPolicy{MinLength: 12, MaxLength: 1024},
					MFA:            identity.MFARequired, SMTP: new(testSMTP()),
				})
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditSettingsChanged, acmeTarget, changes{
					"passwordPolicy": {
						Before: map[string]any{"minLength": float64(8), "maxLength": float64(1024)},
						After:  map[string]any{"minLength": float64(12), "maxLength": float64(1024)},
					},
					"mfa":           after("required"),
					"smtp":          after(smtpAfter),
					"smtp.password": {},
				})}
			},
		},
		{
			name:  "UpdateSettings changing the SMTP password alone",
			setup: func(e *configEnv) { e.setSMTP(new(testSMTP())) },
			call: func(ctx context.Context, e *configEnv) error {
				m := testSMTP()
				m.Password, e.secret = "another-secret", "another-secret"
				return e.ws.UpdateSettings(ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: &m})
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditSettingsChanged, acmeTarget, changes{"smtp.password": {}})}
			},
		},
		{
			name: "UpdateSettings removing SMTP",
			setup: func(e *configEnv) {
				e.setSMTP(new(testSMTP()))
				e.secret = "smtp-secret"
			},
			call: func(ctx context.Context, e *configEnv) error {
				return e.ws.UpdateSettings(ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy()})
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditSettingsChanged, acmeTarget,
					changes{"smtp": before(smtpAfter), "smtp.password": {}})}
			},
		},
		{
			name: "UpdateSettings that changes nothing",
			call: func(ctx context.Context, e *configEnv) error {
				return e.ws.UpdateSettings(ctx, identity.DefaultSettings())
			},
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name:  "RotateSigningKey",
			setup: func(e *configEnv) { e.keys = e.stateKeys() },
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.RotateSigningKey(ctx)
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				now := e.stateKeys()
				if now[identity.KeyActive] != e.keys[identity.KeyNext] {
					e.t.Errorf("active key %s, want the next one before, %s", now[identity.KeyActive], e.keys[identity.KeyNext])
				}
				return []identity.AuditRecord{ciRecord(identity.AuditSigningKeyRotated,
					identity.AuditTarget{Kind: identity.TargetSigningKey, ID: now[identity.KeyActive], Display: "ES256"},
					changes{
						"active": {Before: e.keys[identity.KeyActive], After: now[identity.KeyActive]},
						"next":   {Before: e.keys[identity.KeyNext], After: now[identity.KeyNext]},
					})}
			},
		},
		{
			// The first keys, made on the way to a read: the system's.
			name:   "a workspace's first keys",
			noKeys: true,
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.ListSigningKeys(ctx)
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				now := e.stateKeys()
				r := ciRecord(identity.AuditSigningKeyRotated,
					identity.AuditTarget{Kind: identity.TargetSigningKey, ID: now[identity.KeyActive], Display: "ES256"},
					changes{"active": after(now[identity.KeyActive]), "next": after(now[identity.KeyNext])})
				r.Actor = identity.Actor{Kind: identity.ActorSystem}
				return []identity.AuditRecord{r}
			},
		},
		{
			name: "IssueTokens",
			call: func(ctx context.Context, e *configEnv) (err error) {
				e.tok, err = e.ws.IssueTokens(ctx, identity.TokenRequest{ClientID: e.web.ID, UserID: e.ada.ID, Scopes: []string{"openid", "profile"}})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditTokenIssued, adaTarget,
					changes{"clientId": after(e.web.ID), "grantId": after(e.tok.GrantID), "scope": after("openid profile")})}
			},
		},
		{
			name:  "ExchangeCode",
			setup: func(e *configEnv) { e.authCode = e.signIn(e.webRequest()).auth.Code },
			call: func(ctx context.Context, e *configEnv) (err error) {
				e.tok, err = e.ws.Provider().ExchangeCode(ctx, e.web, e.authCode, webRedirect, pkceVerifier)
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditTokenIssued, adaTarget,
					changes{"clientId": after(e.web.ID), "grantId": after(e.tok.GrantID), "scope": after("openid profile email")})}
			},
		},
		{
			name: "ExchangeCode with a code used before",
			setup: func(e *configEnv) {
				s := e.signIn(e.webRequest())
				tok, err := e.ws.Provider().ExchangeCode(e.ctx, e.web, s.auth.Code, webRedirect, pkceVerifier)
				if err != nil {
					e.t.Fatal(err)
				}
				e.authCode, e.tok = s.auth.Code, tok
			},
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().ExchangeCode(ctx, e.web, e.authCode, webRedirect, pkceVerifier)
				return err
			},
			wantErr: identity.CodeInvalidGrant,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditTokenCodeReused, adaTarget,
					changes{"clientId": after(e.web.ID), "grantId": after(e.tok.GrantID)}))}
			},
		},
		{
			name:  "RefreshTokens",
			setup: func(e *configEnv) { e.tok, _ = e.codeTokens() },
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().RefreshTokens(ctx, e.web, e.tok.RefreshToken, []string{"openid"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditTokenRefreshed, adaTarget,
					changes{"clientId": after(e.web.ID), "grantId": after(e.tok.GrantID), "scope": after("openid")})}
			},
		},
		{
			name: "RefreshTokens with a refresh token used before",
			setup: func(e *configEnv) {
				e.tok, _ = e.codeTokens()
				if _, err := e.ws.Provider().RefreshTokens(e.ctx, e.web, e.tok.RefreshToken, nil); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().RefreshTokens(ctx, e.web, e.tok.RefreshToken, nil)
				return err
			},
			wantErr: identity.CodeInvalidGrant,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditTokenRefreshReused, adaTarget,
					changes{"clientId": after(e.web.ID), "grantId": after(e.tok.GrantID)}))}
			},
		},
		{
			name: "ExchangeClientCredentials",
			call: func(ctx context.Context, e *configEnv) (err error) {
				e.tok, err = e.ws.Provider().ExchangeClientCredentials(ctx, e.machine, []string{"openid"})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditTokenIssued, clientTarget(e.machine),
					changes{"clientId": after(e.machine.ID), "grantId": after(e.tok.GrantID)})}
			},
		},
		{
			name:  "RevokeToken",
			setup: func(e *configEnv) { e.tok, _ = e.codeTokens() },
			call: func(ctx context.Context, e *configEnv) error {
				return e.ws.Provider().RevokeToken(ctx, e.web, e.tok.RefreshToken)
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditTokenRevoked, adaTarget,
					changes{"clientId": after(e.web.ID), "grantId": after(e.tok.GrantID)})}
			},
		},
		{
			name: "RevokeToken of a revoked grant",
			setup: func(e *configEnv) {
				e.tok, _ = e.codeTokens()
				if err := e.ws.Provider().RevokeToken(e.ctx, e.web, e.tok.RefreshToken); err != nil {
					e.t.Fatal(err)
				}
			},
			call: func(ctx context.Context, e *configEnv) error {
				return e.ws.Provider().RevokeToken(ctx, e.web, e.tok.AccessToken)
			},
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name: "EndSession",
			setup: func(e *configEnv) {
				s, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
				if err != nil {
					e.t.Fatal(err)
				}
				e.created, e.secret = s.Session.ID, s.Secret
			},
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().EndSession(ctx, identity.EndSessionRequest{SessionToken: e.secret, Confirmed: true})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				r := ciRecord(identity.AuditSessionRevoked, adaTarget, changes{"sessionId": before(e.created)})
				r.Reason = "logout"
				return []identity.AuditRecord{r}
			},
		},
		{
			name: "EndSession of an ended session",
			setup: func(e *configEnv) {
				s, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
				if err != nil {
					e.t.Fatal(err)
				}
				if err := e.ws.RevokeSession(e.ctx, s.Session.ID); err != nil {
					e.t.Fatal(err)
				}
				e.secret = s.Secret
			},
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().EndSession(ctx, identity.EndSessionRequest{SessionToken: e.secret, Confirmed: true})
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name: "AuthenticateClient with a wrong secret",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.AuthenticateClient(ctx, e.web.ID, "idcs_wrong")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed, clientTarget(e.web), nil))}
			},
		},
		{
			name: "AuthenticateClient of a public client",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.AuthenticateClient(ctx, e.spa.ID, "idcs_anything")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed, clientTarget(e.spa), nil))}
			},
		},
		{
			// 100 two-byte characters: the record keeps 128 bytes, 64 of
			// them.
			name: "AuthenticateClient of an unknown client with a long id",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.AuthenticateClient(ctx, strings.Repeat("é", 100), "idcs_x")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed,
					identity.AuditTarget{Kind: identity.TargetClient, ID: strings.Repeat("é", 64)}, nil))}
			},
		},
		{
			name: "AuthenticateClient of an unknown client whose id is not UTF-8",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.AuthenticateClient(ctx, "idc_\xff\xfe", "idcs_x")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed,
					identity.AuditTarget{Kind: identity.TargetClient, ID: "idc_\uFFFD"}, nil))}
			},
		},
		{
			name: "AuthenticateClient with the right secret",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.AuthenticateClient(ctx, e.web.ID, e.webSecret)
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name: "VerifyClient of a confidential client without its secret",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().VerifyClient(ctx, e.web.ID, "")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed, clientTarget(e.web), nil))}
			},
		},
		{
			name: "VerifyClient of an unknown client without a secret",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().VerifyClient(ctx, "idc_0000000000000000", "")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed,
					identity.AuditTarget{Kind: identity.TargetClient, ID: "idc_0000000000000000"}, nil))}
			},
		},
		{
			name: "VerifyClient with a wrong secret",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().VerifyClient(ctx, e.web.ID, "idcs_wrong")
				return err
			},
			wantErr: identity.CodeUnauthenticated,
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{failed(ciRecord(identity.AuditClientAuthFailed, clientTarget(e.web), nil))}
			},
		},
		{
			name: "VerifyClient of a public client",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.ws.Provider().VerifyClient(ctx, e.spa.ID, "")
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord { return nil },
		},
		{
			name: "Backup",
			call: func(ctx context.Context, e *configEnv) error {
				_, err := e.svc.Backup(ctx, io.Discard)
				return err
			},
			want: func(e *configEnv) []identity.AuditRecord {
				return []identity.AuditRecord{ciRecord(identity.AuditBackup, acmeTarget, changes{"bytes": after(float64(8))})}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newConfigEnv(t)
			if !tt.noKeys {
				e.keyByState()
			}
			if tt.setup != nil {
				tt.setup(e)
			}
			e.clock.Advance(time.Second)
			since := e.clock.Now()
			identitytest.WantCode(t, tt.call(ciContext(e.ctx), e), tt.wantErr)
			got := e.trailOf(e.ws, since)
			want := tt.want(e)
			byAction := cmpopts.SortSlices(func(a, b identity.AuditRecord) bool { return a.Action < b.Action })
			if diff := cmp.Diff(want, got, ignoreIDTime, byAction, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if e.secret != "" {
				encoded, err := json.Marshal(got)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(encoded, []byte(e.secret)) {
					t.Errorf("a record holds the secret %q: %s", e.secret, encoded)
				}
			}
		})
	}
}

// failedDelivery subscribes an endpoint to user.created, creates a user
// and fails the delivery (id 1) in the store, as a dispatcher whose
// attempts all failed would.
func (e *configEnv) failedDelivery() {
	e.t.Helper()
	hook := e.hook(identity.EventUserCreated)
	e.user("bob")
	err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
		d, err := tx.Delivery("acme", 1)
		if err != nil {
			return err
		}
		if d.EndpointID != hook {
			e.t.Fatalf("delivery 1 is to endpoint %d, want %d", d.EndpointID, hook)
		}
		d.Status = store.DeliveryFailed
		return tx.PutDelivery("acme", d)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestAuditBackupInEveryWorkspace: one backup leaves one record in every
// workspace, each on that workspace, after the snapshot; a store that
// cannot take a backup leaves none.
func TestAuditBackupInEveryWorkspace(t *testing.T) {
	e := newConfigEnv(t)
	beta, err := e.svc.CreateWorkspace(e.ctx, "beta", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	since := e.clock.Now()
	var buf bytes.Buffer
	if n, err := e.svc.Backup(ciContext(e.ctx), &buf); err != nil || n != 8 {
		t.Fatalf("Backup = %d, %v; want 8 bytes", n, err)
	}
	for _, ws := range []*identity.Workspace{e.ws, beta} {
		target := identity.AuditTarget{Kind: identity.TargetWorkspace, ID: ws.Slug(), Display: ws.Slug()}
		want := ciRecord(identity.AuditBackup, target, changes{"bytes": after(float64(8))})
		want.Workspace = ws.Slug()
		if diff := cmp.Diff([]identity.AuditRecord{want}, e.trailOf(ws, since), ignoreIDTime); diff != "" {
			t.Errorf("records of %s (-want +got):\n%s", ws.Slug(), diff)
		}
	}

	mem, err := identity.New(newMemStore(t), &identity.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := mem.CreateWorkspace(e.ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = mem.Backup(ciContext(e.ctx), &buf)
	identitytest.WantCode(t, err, identity.CodeInvalid)
	page, err := ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditBackup)}, nil)
	if err != nil || len(page.Records) != 0 {
		t.Errorf("records of a refused backup: %+v, %v", page.Records, err)
	}
}

// countingObserver counts the transactions of a Service by kind.
type countingObserver struct {
	identity.NopObserver
	mu     sync.Mutex
	counts map[identity.TxKind]int
}

func (o *countingObserver) TransactionDone(kind identity.TxKind, _ time.Duration, _ error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[kind]++
}

func (o *countingObserver) take() map[identity.TxKind]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.counts
	o.counts = map[identity.TxKind]int{}
	return c
}

// wakeCounter is a QueueWatcher that counts its wake-ups.
type wakeCounter struct {
	mu    sync.Mutex
	wakes int
}

func (w *wakeCounter) JobsQueued() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakes++
}

func (w *wakeCounter) EndpointDeleted(string, int64) {}

func (w *wakeCounter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wakes
}

// TestAuditClientAuthFlood: each refused client authentication costs its
// read, one write (its record) and nothing else: no event queued for an
// endpoint subscribed to everything, no wake-up of the queue's watchers.
func TestAuditClientAuthFlood(t *testing.T) {
	obs := &countingObserver{counts: map[identity.TxKind]int{}}
	opts := tokenOpts()
	opts.Observer = obs
	e := newOIDCEnv(t, opts)
	hook := e.hook(identity.EventTypes()...)
	deliveries := len(e.payloads(hook))
	wakes := &wakeCounter{}
	defer e.svc.WatchQueue(wakes)()
	obs.take()

	const flood = 50
	ctx := ciContext(e.ctx)
	for i := range flood {
		id := e.web.ID
		if i%2 == 1 {
			id = "idc_unknown"
		}
		_, err := e.ws.AuthenticateClient(ctx, id, "idcs_wrong")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	if diff := cmp.Diff(map[identity.TxKind]int{identity.TxView: flood, identity.TxUpdate: flood}, obs.take()); diff != "" {
		t.Errorf("transactions of %d refusals (-want +got):\n%s", flood, diff)
	}
	if n := wakes.count(); n != 0 {
		t.Errorf("the refusals woke the queue's watchers %d times, want none", n)
	}
	if n := len(e.payloads(hook)); n != deliveries {
		t.Errorf("deliveries: %d after the refusals, %d before", n, deliveries)
	}
	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditClientAuthFailed)}, &identity.AuditPageOptions{Limit: identity.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != flood {
		t.Errorf("%d records of client.authentication_failed, want %d", len(page.Records), flood)
	}
}
