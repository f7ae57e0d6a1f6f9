package identitytest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

func testRuleImportUsers(t *testing.T, e *env) {
	e.user("existing")
	e.roles(4)
	good := func(i int) identity.ImportedUser {
		return identity.ImportedUser{
			Username: fmt.Sprintf("imp%d", i), Email: fmt.Sprintf("imp%d@example.com", i), FullName: "Imported",
			PasswordHash: importedHashes[0].hash,
		}
	}
	bad := []struct {
		name   string
		batch  []identity.ImportedUser
		code   identity.Code
		fields []identity.FieldError
	}{
		{"invalid entry", []identity.ImportedUser{good(1), {Username: "bad name", Email: "x@example.com", FullName: "X"}},
			identity.CodeInvalid, []identity.FieldError{fe("users[1].username", identity.RulePattern)}},
		{"unknown hash", []identity.ImportedUser{good(1), func() identity.ImportedUser { u := good(2); u.PasswordHash = "md5$abc"; return u }()},
			identity.CodeInvalid, []identity.FieldError{fe("users[1].passwordHash", identity.RuleFormat)}},
		{"bcrypt cost too high", []identity.ImportedUser{func() identity.ImportedUser {
			u := good(1)
			u.PasswordHash = "$2a$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
			return u
		}()}, identity.CodeInvalid, []identity.FieldError{fe("users[0].passwordHash", identity.RuleFormat)}},
		{"bad attribute and role", []identity.ImportedUser{func() identity.ImportedUser {
			u := good(1)
			u.Attributes = map[string]string{"k": repeat("v", 1025)}
			u.Roles = []identity.RoleRef{identity.RoleID(3), identity.RoleID(0)}
			return u
		}()}, identity.CodeInvalid, []identity.FieldError{fe("users[0].attributes.k", identity.RuleMaxLength), fe("users[0].roles[1]", identity.RuleRange)}},
		{"unknown role id", []identity.ImportedUser{good(1), func() identity.ImportedUser {
			u := good(2)
			u.Roles = []identity.RoleRef{identity.RoleID(4), identity.RoleID(5)}
			return u
		}()}, identity.CodeInvalid, []identity.FieldError{fe("users[1].roles[1]", identity.RuleUnknown)}},
		{"bad role and group names", []identity.ImportedUser{func() identity.ImportedUser {
			u := good(1)
			u.Roles = []identity.RoleRef{identity.RoleName("Admin")}
			u.Groups = []string{"ok", ""}
			return u
		}()}, identity.CodeInvalid, []identity.FieldError{fe("users[0].roles[0]", identity.RulePattern), fe("users[0].groups[1]", identity.RuleRequired)}},
		{"taken in workspace", []identity.ImportedUser{good(1), func() identity.ImportedUser { u := good(2); u.Username = "EXISTING"; return u }()},
			identity.CodeConflict, []identity.FieldError{fe("users[1].username", identity.RuleTaken)}},
		{"duplicate in batch", []identity.ImportedUser{good(1), func() identity.ImportedUser { u := good(2); u.Email = "IMP1@example.com"; return u }()},
			identity.CodeConflict, []identity.FieldError{fe("users[1].email", identity.RuleDuplicate)}},
		{"too many", make([]identity.ImportedUser, identity.MaxImportBatch+1),
			identity.CodeInvalid, []identity.FieldError{fe("users", identity.RuleMaxLength)}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ws.ImportUsers(e.ctx, tt.batch)
			WantCode(t, err, tt.code)
			WantFields(t, err, tt.fields)
			// All or nothing: the valid entries were not created either.
			if list, err := e.ws.ListUsers(e.ctx, "imp", nil); err != nil || list.Total != 0 {
				t.Errorf("%d users created by a failed batch (%v)", list.Total, err)
			}
		})
	}

	created := testNow.AddDate(-3, 0, 0)
	batch := []identity.ImportedUser{good(1), good(2), {
		Username: "full", Email: "full@example.com", FullName: "Full Import", EmailVerified: true, Disabled: true,
		MFAEnabled: true, CreatedAt: created, Attributes: map[string]string{"dept": "ops"},
		Roles: []identity.RoleRef{identity.RoleID(4), identity.RoleID(2)},
	}}
	users, err := e.ws.ImportUsers(e.ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{2, 3, 4}, idsOf(users)); diff != "" {
		t.Errorf("imported ids (-want +got):\n%s", diff)
	}
	want := identity.User{ID: 4, Username: "full", Email: "full@example.com", FullName: "Full Import",
		EmailVerified: true, Enabled: false, MFAEnabled: true, CreatedAt: created, UpdatedAt: testNow.Truncate(1000)}
	got, err := e.ws.GetUser(e.ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreVersions); diff != "" {
		t.Errorf("imported user mismatch (-want +got):\n%s", diff)
	}
	attrs, err := e.ws.ListAttributes(e.ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := e.ws.ListUserRoles(e.ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"dept": "ops"}, attrs); diff != "" {
		t.Errorf("imported attributes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{2, 4}, roleIDs(roles)); diff != "" {
		t.Errorf("imported roles (-want +got):\n%s", diff)
	}
	if rec := e.storedUser(4); rec.PasswordHash != "" {
		t.Errorf("user imported without a hash has hash %q", rec.PasswordHash)
	}
	_, err = e.ws.Authenticate(e.ctx, "full", "")
	WantCode(t, err, identity.CodeUnauthenticated)
	if users, err := e.ws.ImportUsers(e.ctx, nil); err != nil || len(users) != 0 {
		t.Errorf("empty batch = %v, %v", users, err)
	}
}

// testRuleConcurrentCreateUser races 50 creates of one username (in
// varying case): exactly one wins, every other gets a conflict.
func testRuleConcurrentCreateUser(t *testing.T, e *env) {
	const n = 50
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			nu := newUser("racer")
			if i%2 == 1 {
				nu.Username = "RACER"
			}
			nu.Email = fmt.Sprintf("racer%d@example.com", i)
			_, errs[i] = e.ws.CreateUser(e.ctx, nu)
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch identity.ErrorCode(err) {
		case "":
			wins++
		case identity.CodeConflict:
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	list, err := e.ws.ListUsers(e.ctx, "racer", nil)
	if err != nil {
		t.Fatal(err)
	}
	if wins != 1 || list.Total != 1 {
		t.Errorf("%d creates succeeded and %d users exist, want exactly 1", wins, list.Total)
	}
}

// testRuleConcurrentMappers races 30 new mappers: exactly 20 are created,
// the rest hit the limit.
func testRuleConcurrentMappers(t *testing.T, e *env) {
	const n = 30
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.ws.SetClaimMapper(e.ctx, fmt.Sprintf("attr%d", i), identity.ClaimMapperSpec{ClaimName: fmt.Sprintf("claim%d", i)})
		})
	}
	wg.Wait()
	ok, limited := countLimited(t, errs)
	mappers, err := e.ws.ListClaimMappers(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok != identity.MaxClaimMappers || limited != n-identity.MaxClaimMappers || len(mappers) != identity.MaxClaimMappers {
		t.Errorf("%d created, %d limited, %d stored; want %d, %d, %d", ok, limited, len(mappers),
			identity.MaxClaimMappers, n-identity.MaxClaimMappers, identity.MaxClaimMappers)
	}
}

// countLimited counts the racing calls that succeeded and those refused
// with limit_reached; any other error fails the test.
func countLimited(t *testing.T, errs []error) (ok, limited int) {
	t.Helper()
	for _, err := range errs {
		switch identity.ErrorCode(err) {
		case "":
			ok++
		case identity.CodeLimitReached:
			limited++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	return ok, limited
}
