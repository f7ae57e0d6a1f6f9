package identity_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// bulkStore is a Store whose transactions implement store.Bulk with the
// Tx methods, one record at a time, and count the calls of each Bulk
// method: a stand-in for a store that implements Bulk, to check that the
// identity package takes the bulk path and gets from it what it gets
// without.
type bulkStore struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
}

func (s *bulkStore) count(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
}

func (s *bulkStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(bulkTx{tx, s}) })
}

func (s *bulkStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(bulkTx{tx, s}) })
}

// bulkTx implements store.Bulk over the Tx methods.
type bulkTx struct {
	store.Tx
	s *bulkStore
}

func (t bulkTx) UserKeysTaken(slug string, usernames, emails []string) ([]bool, []bool, error) {
	t.s.count("UserKeysTaken")
	if _, err := t.Workspace(slug); err != nil {
		return nil, nil, err
	}
	taken := func(values []string, lookup func(string, string) (int64, error)) ([]bool, error) {
		out := make([]bool, len(values))
		for i, v := range values {
			_, err := lookup(slug, v)
			switch {
			case err == nil:
				out[i] = true
			case !errors.Is(err, store.ErrNotFound):
				return nil, err
			}
		}
		return out, nil
	}
	u, err := taken(usernames, t.UserIDByUsername)
	if err != nil {
		return nil, nil, err
	}
	e, err := taken(emails, t.UserIDByEmail)
	return u, e, err
}

func (t bulkTx) InsertUsers(slug string, users []store.UserInsert) error {
	t.s.count("InsertUsers")
	for _, in := range users {
		if err := t.PutUser(slug, in.User); err != nil {
			return err
		}
		for k, v := range in.Attributes {
			if err := t.PutUserAttribute(slug, in.User.ID, k, v); err != nil {
				return err
			}
		}
		for _, r := range in.Roles {
			if err := t.AddUserRole(slug, in.User.ID, r); err != nil {
				return err
			}
		}
		for _, g := range in.Groups {
			if err := t.AddGroupMember(slug, g, in.User.ID); err != nil {
				return err
			}
		}
		if in.SecondFactor != nil {
			if err := t.PutSecondFactor(slug, *in.SecondFactor); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t bulkTx) UserWithClaimInputs(slug string, id int64) (store.User, map[string]string, []store.ClaimMapper, error) {
	t.s.count("UserWithClaimInputs")
	u, err := t.User(slug, id)
	if err != nil {
		return store.User{}, nil, nil, err
	}
	attrs, err := t.UserAttributes(slug, id)
	if err != nil {
		return store.User{}, nil, nil, err
	}
	mappers, err := t.ClaimMappers(slug)
	return u, attrs, mappers, err
}

func (t bulkTx) UserAccess(slug string, id int64) (store.UserAccess, error) {
	t.s.count("UserAccess")
	if _, err := t.User(slug, id); err != nil {
		return store.UserAccess{}, err
	}
	acc := store.UserAccess{GroupRoles: map[int64][]int64{}}
	var err error
	if acc.Direct, err = t.UserRoles(slug, id); err != nil {
		return store.UserAccess{}, err
	}
	groups, err := t.UserGroups(slug, id)
	if err != nil {
		return store.UserAccess{}, err
	}
	roles := map[int64]bool{}
	for _, r := range acc.Direct {
		roles[r] = true
	}
	for _, gid := range groups {
		g, err := t.Group(slug, gid)
		if err != nil {
			return store.UserAccess{}, err
		}
		acc.Groups = append(acc.Groups, g)
		ids, err := t.GroupRoles(slug, gid)
		if err != nil {
			return store.UserAccess{}, err
		}
		if len(ids) > 0 {
			acc.GroupRoles[gid] = ids
		}
		for _, r := range ids {
			roles[r] = true
		}
	}
	for _, r := range slices.Sorted(maps.Keys(roles)) {
		rec, err := t.Role(slug, r)
		if err != nil {
			return store.UserAccess{}, err
		}
		acc.Roles = append(acc.Roles, rec)
	}
	return acc, nil
}

func (t bulkTx) UserWithAttributes(slug string, id int64) (store.User, map[string]string, error) {
	t.s.count("UserWithAttributes")
	u, err := t.User(slug, id)
	if err != nil {
		return store.User{}, nil, err
	}
	attrs, err := t.UserAttributes(slug, id)
	return u, attrs, err
}

// bulkEnv is a Service with workspace acme, over a memstore or over a
// bulkStore around one.
type bulkEnv struct {
	svc  *identity.Service
	ws   *identity.Workspace
	bulk *bulkStore // nil without Bulk
}

// newBulkEnv returns the Service, with the bulk path or without, with an
// Observer or without (whose wrapper the bulk path must see through).
func newBulkEnv(t *testing.T, bulk, observed bool) *bulkEnv {
	t.Helper()
	e := &bulkEnv{}
	var st store.Store = memstore.New()
	if bulk {
		e.bulk = &bulkStore{Store: st, calls: map[string]int{}}
		st = e.bulk
	}
	opts := &identity.Options{Now: func() time.Time { return time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC) }}
	if observed {
		opts.Observer = identity.NopObserver{}
	}
	svc, err := identity.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	e.svc = svc
	if e.ws, err = svc.CreateWorkspace(t.Context(), "acme", nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// bulkResult is what one call gave, to compare between the paths.
type bulkResult struct {
	Users  []identity.User
	Claims map[string]string
	Code   identity.Code
	Msg    string
	Fields []identity.FieldError
}

func resultOf(users []identity.User, claims map[string]string, err error) bulkResult {
	r := bulkResult{Users: users, Claims: claims, Code: identity.ErrorCode(err)}
	var e *identity.Error
	if errors.As(err, &e) {
		r.Msg, r.Fields = e.Message, e.Fields
	}
	return r
}

// TestImportUsersBulkPath runs the same imports and claims over a store
// with store.Bulk and over one without, with an Observer and without, and
// checks that the bulk path is taken and gives what the other path gives:
// the same users, errors in the same order, claims.
func TestImportUsersBulkPath(t *testing.T) {
	user := func(name string) identity.ImportedUser {
		return identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "User " + name}
	}
	with := func(u identity.ImportedUser, f func(*identity.ImportedUser)) identity.ImportedUser { f(&u); return u }
	code := make([]byte, sha256.Size)
	var big []identity.ImportedUser
	for i := range 300 {
		big = append(big, user(fmt.Sprintf("many%03d", i)))
	}
	batches := []struct {
		name  string
		batch []identity.ImportedUser
	}{
		{"created", []identity.ImportedUser{user("alice"), with(user("bob"), func(u *identity.ImportedUser) {
			u.Attributes = map[string]string{"dept": "ops"}
			u.Roles = []identity.RoleRef{identity.RoleID(3), identity.RoleName("auditor"), identity.RoleID(3)}
			u.Groups = []string{"eng", "ops"}
			u.TOTP = &identity.ImportedTOTP{Secret: "JBSWY3DPEHPK3PXP", ConfirmedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
				RecoveryCodes: [][]byte{code}}
		})}},
		{"taken", []identity.ImportedUser{user("carol"), user("ALICE"), with(user("dan"), func(u *identity.ImportedUser) { u.Email = "BOB@example.com" })}},
		{"duplicates and taken", []identity.ImportedUser{user("erin"), with(user("Erin"), func(u *identity.ImportedUser) { u.Email = "alice@example.com" })}},
		{"invalid", []identity.ImportedUser{user("frank"), with(user("frank2"), func(u *identity.ImportedUser) { u.Roles = []identity.RoleRef{identity.RoleID(0)} })}},
		{"many", big},
		{"empty", nil},
	}
	type run struct {
		Results []bulkResult
		Claims  []bulkResult
	}
	play := func(e *bulkEnv) run {
		var r run
		for _, name := range []string{"role-1", "role-2", "role-3"} {
			if _, err := e.ws.CreateRole(t.Context(), identity.NewRole{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range batches {
			users, err := e.ws.ImportUsers(t.Context(), b.batch)
			r.Results = append(r.Results, resultOf(users, nil, err))
		}
		yes := true
		if _, err := e.ws.SetClaimMapper(t.Context(), "dept", identity.ClaimMapperSpec{ClaimName: "department", IncludeInID: &yes}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{1, 2, 9999, -1} {
			claims, err := e.ws.GetClaims(t.Context(), id, identity.IDToken)
			r.Claims = append(r.Claims, resultOf(nil, claims, err))
		}
		return r
	}
	ignore := cmpopts.IgnoreFields(identity.User{}, "Version")
	want := play(newBulkEnv(t, false, false))
	wantCodes := []identity.Code{"", identity.CodeConflict, identity.CodeConflict, identity.CodeInvalid, "", ""}
	for i, r := range want.Results {
		if r.Code != wantCodes[i] {
			t.Errorf("%s: code %q, want %q", batches[i].name, r.Code, wantCodes[i])
		}
	}
	for _, observed := range []bool{false, true} {
		e := newBulkEnv(t, true, observed)
		got := play(e)
		if diff := cmp.Diff(want, got, ignore); diff != "" {
			t.Errorf("observed %t: without Bulk (-) and with (+):\n%s", observed, diff)
		}
		// UserKeysTaken once per batch that reaches the store (not the
		// invalid one, not the empty one), InsertUsers once per batch
		// created, UserWithClaimInputs once per Claims of a positive id.
		wantCalls := map[string]int{"UserKeysTaken": 4, "InsertUsers": 2, "UserWithClaimInputs": 3}
		if diff := cmp.Diff(wantCalls, e.bulk.calls); diff != "" {
			t.Errorf("observed %t: calls of store.Bulk (-want +got):\n%s", observed, diff)
		}
	}
}

// TestSetAttributeBulk checks that SetAttribute decides the same with the
// bulk read of the user and its attributes as without: a value replaced
// and a key added, a new key refused at the limit while a held key's
// value is still replaced, and a missing user not found, whatever the
// id. It reads through store.Bulk once per call of a positive id.
func TestSetAttributeBulk(t *testing.T) {
	type outcome struct {
		Code  identity.Code
		Attrs map[string]string
	}
	sets := []struct{ id int64 }{{1}, {1}, {1}, {1}, {9999}, {0}, {-1}}
	keys := []string{"tier", "tier", "dept", "third", "tier", "tier", "tier"}
	play := func(e *bulkEnv) []outcome {
		ctx := t.Context()
		set, err := e.ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		set.Limits.AttributesPerUser = 2
		if err := e.ws.UpdateSettings(ctx, set); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ws.ImportUsers(ctx, []identity.ImportedUser{{Username: "al", Email: "al@example.com", FullName: "Al", PasswordHash: importedHash}}); err != nil {
			t.Fatal(err)
		}
		var out []outcome
		for i, c := range sets {
			_, err := e.ws.SetAttribute(ctx, c.id, keys[i], fmt.Sprint("v", i), nil)
			attrs, _ := e.ws.ListAttributes(ctx, 1)
			out = append(out, outcome{identity.ErrorCode(err), attrs})
		}
		return out
	}
	want := []outcome{
		{"", map[string]string{"tier": "v0"}},
		{"", map[string]string{"tier": "v1"}},
		{"", map[string]string{"tier": "v1", "dept": "v2"}},
		{identity.CodeLimitReached, map[string]string{"tier": "v1", "dept": "v2"}},
		{identity.CodeNotFound, map[string]string{"tier": "v1", "dept": "v2"}},
		{identity.CodeNotFound, map[string]string{"tier": "v1", "dept": "v2"}},
		{identity.CodeNotFound, map[string]string{"tier": "v1", "dept": "v2"}},
	}
	if diff := cmp.Diff(want, play(newBulkEnv(t, false, false))); diff != "" {
		t.Errorf("without Bulk (-want +got):\n%s", diff)
	}
	for _, observed := range []bool{false, true} {
		e := newBulkEnv(t, true, observed)
		if diff := cmp.Diff(want, play(e)); diff != "" {
			t.Errorf("observed %t: with Bulk (-want +got):\n%s", observed, diff)
		}
		wantCalls := map[string]int{"UserKeysTaken": 1, "InsertUsers": 1, "UserWithAttributes": 5}
		if diff := cmp.Diff(wantCalls, e.bulk.calls); diff != "" {
			t.Errorf("observed %t: calls of store.Bulk (-want +got):\n%s", observed, diff)
		}
	}
}
