// Package identitytest holds the domain rules run over any Store: the
// identity package's rules, limits, defaults and errors, checked through
// a Service on a store that the caller provides, so that every rule holds
// whatever the Store. Every store runs it from its conformance test,
// beside the store contract of package storetest:
//
//	func TestConformance(t *testing.T) {
//		newStore := func(t *testing.T) store.Store { ... }
//		storetest.Run(t, newStore)
//		identitytest.RunRules(t, newStore)
//	}
//
// and the identity package runs it over memstore. A store also runs
// RunErasure, with a way to read every byte it holds (Erasure), to show
// that permanent deletion leaves nothing of what it deletes.
package identitytest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
)

// RunRules runs the identity package's rules over Services on the stores
// newStore returns, one fresh store per rule: every rule, limit, default
// and error must hold whatever the Store.
//
// newStore must return a fresh, empty, open store and register with
// t.Cleanup whatever releases it, as for storetest.Run.
func RunRules(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"Workspaces", testRuleWorkspaces},
		{"Settings", testRuleSettings},
		{"CreateUserValidation", testRuleCreateUserValidation},
		{"PasswordPolicy", testRulePasswordPolicy},
		{"UserUniqueness", testRuleUserUniqueness},
		{"UserLifecycle", testRuleUserLifecycle},
		{"ListUsers", testRuleListUsers},
		{"SearchTotals", testRuleSearchTotals},
		{"FindUsers", testRuleFindUsers},
		{"Roles", testRuleRoles},
		{"NamedRecords", testRuleNamedRecords},
		{"EffectiveRoles", testRuleEffectiveRoles},
		{"Memberships", testRuleMemberships},
		{"AccessLimits", testRuleAccessLimits},
		{"ImportAccess", testRuleImportAccess},
		{"Attributes", testRuleAttributes},
		{"ClaimMappers", testRuleClaimMappers},
		{"ClaimMapperLimit", testRuleClaimMapperLimit},
		{"Claims", testRuleClaims},
		{"Webhooks", testRuleWebhooks},
		{"WebhookURLs", testRuleWebhookURLs},
		{"APIKeys", testRuleAPIKeys},
		{"Authorize", testRuleAuthorize},
		{"Clients", testRuleClients},
		{"ClientValidation", testRuleClientValidation},
		{"ClientLimit", testRuleClientLimit},
		{"ConcurrentClients", testRuleConcurrentClients},
		{"Authenticate", testRuleAuthenticate},
		{"ImportedHashes", testRuleImportedHashes},
		{"ImportUsers", testRuleImportUsers},
		{"ConcurrentCreateUser", testRuleConcurrentCreateUser},
		{"ConcurrentMappers", testRuleConcurrentMappers},
		{"Events", testRuleEvents},
		{"EventsRollBack", testRuleEventsRollBack},
		{"LoginFailedEvents", testRuleLoginFailedEvents},
		{"Sessions", testRuleSessions},
		{"Retention", testRuleRetention},
		{"DisableRevokesSessions", testRuleDisableRevokesSessions},
		{"ConcurrentCodeRedemption", testRuleConcurrentCodeRedemption},
		{"ConcurrentRefresh", testRuleConcurrentRefresh},
		{"ConcurrentFirstKeys", testRuleConcurrentFirstKeys},
		{"ConcurrentLockout", testRuleConcurrentLockout},
		{"SecondFactor", testRuleSecondFactor},
		{"ConcurrentCodeReplay", testRuleConcurrentCodeReplay},
		{"ConcurrentWrongCodes", testRuleConcurrentWrongCodes},
		{"PasswordReset", testRulePasswordReset},
		{"DeleteUserPermanently", testRuleDeleteUserPermanently},
		{"DeleteWorkspace", testRuleDeleteWorkspace},
		{"AuditRedaction", testRuleAuditRedaction},
		{"AuditRetention", testRuleAuditRetention},
		{"ListAuditRecords", testRuleAuditLog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newEnv(t, newStore, nil))
		})
	}
}

// ignoreVersions leaves out of comparisons the versions the identity
// package draws at random on every write.
var ignoreVersions = cmp.Options{
	cmpopts.IgnoreFields(identity.User{}, "Version"),
	cmpopts.IgnoreFields(identity.ClaimMapper{}, "Version"),
	cmpopts.IgnoreFields(identity.WebhookEndpoint{}, "Version"),
}

// testArgon2 keeps password hashing cheap so the suite runs fast under
// -race; the default parameters are tested in package identity.
var testArgon2 = identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}

// testNow is the fake clock's starting time.
var testNow = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// env is one Service with one workspace "acme" over a fresh store.
type env struct {
	t     *testing.T
	ctx   context.Context
	store store.Store
	clock *testutil.Clock
	svc   *identity.Service
	ws    *identity.Workspace
}

func newEnv(t *testing.T, newStore func(t *testing.T) store.Store, opts *identity.Options) *env {
	t.Helper()
	if opts == nil {
		opts = &identity.Options{}
	}
	clk := testutil.NewClock(testNow)
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.PasswordHashing == nil {
		opts.PasswordHashing = &testArgon2
	}
	st := newStore(t)
	svc, err := identity.New(st, opts)
	if err != nil {
		t.Fatalf("identity.New: %v", err)
	}
	ctx := context.Background()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	return &env{t: t, ctx: ctx, store: st, clock: clk, svc: svc, ws: ws}
}

// user creates a valid user named username and returns it.
func (e *env) user(username string) identity.User {
	e.t.Helper()
	u, err := e.ws.CreateUser(e.ctx, newUser(username))
	if err != nil {
		e.t.Fatalf("CreateUser(%q): %v", username, err)
	}
	return u
}

// roles creates the roles role-1 to role-n of a workspace that has none
// yet, whose ids are then 1 to n, so that a rule can assign roles by id.
func (e *env) roles(n int) {
	e.t.Helper()
	for i := 1; i <= n; i++ {
		r, err := e.ws.CreateRole(e.ctx, identity.NewRole{Name: fmt.Sprintf("role-%d", i)})
		if err != nil || r.ID != int64(i) {
			e.t.Fatalf("CreateRole(role-%d) = id %d, %v; want id %d", i, r.ID, err, i)
		}
	}
}

// roleIDs returns the ids of a user's roles, in their order.
func roleIDs(roles []identity.UserRole) []int64 {
	ids := make([]int64, len(roles))
	for i, r := range roles {
		ids[i] = r.ID
	}
	return ids
}

func newUser(username string) identity.NewUser {
	return identity.NewUser{
		Username: username,
		Email:    username + "@example.com",
		FullName: "User " + username,
		Password: "s3cret-passphrase",
	}
}

// WantCode fails the test unless err is an *identity.Error of code (or nil
// when code is "") that matches the code's sentinel with errors.Is.
func WantCode(t testing.TB, err error, code identity.Code) {
	t.Helper()
	if got := identity.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (err %v), want %q", got, err, code)
	}
	if code != "" && !errors.Is(err, &identity.Error{Code: code}) {
		t.Fatalf("errors.Is(%v, sentinel of %q) = false", err, code)
	}
}

// WantFields fails the test unless err is an *identity.Error that carries
// exactly the field problems want (compared by field and rule).
func WantFields(t testing.TB, err error, want []identity.FieldError) {
	t.Helper()
	var e *identity.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *identity.Error", err)
	}
	opts := cmp.Options{cmpopts.IgnoreFields(identity.FieldError{}, "Message"), cmpopts.EquateEmpty()}
	if diff := cmp.Diff(want, e.Fields, opts); diff != "" {
		t.Fatalf("Fields mismatch (-want +got):\n%s", diff)
	}
}

// fe is a FieldError with field and rule only, for WantFields.
func fe(field, rule string) identity.FieldError {
	return identity.FieldError{Field: field, Rule: rule}
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}

// storedUser reads a user's record straight from the store.
func (e *env) storedUser(id int64) store.User {
	e.t.Helper()
	var rec store.User
	err := e.store.View(e.ctx, func(tx store.Tx) (err error) {
		rec, err = tx.User(e.ws.Slug(), id)
		return err
	})
	if err != nil {
		e.t.Fatalf("store User(%d): %v", id, err)
	}
	return rec
}

func ptr[T any](v T) *T { return &v }

func idsOf(users []identity.User) []int64 {
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	return ids
}

func describe(err error) string { return fmt.Sprintf("%v (code %q)", err, identity.ErrorCode(err)) }
