package identitytest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

func testRuleWorkspaces(t *testing.T, e *env) {
	for _, slug := range []string{"a", "0", "a-b", "team-42", repeat("x", 63)} {
		if _, err := e.svc.CreateWorkspace(e.ctx, slug, nil); err != nil {
			t.Errorf("CreateWorkspace(%q): %v", slug, err)
		}
	}
	for _, slug := range []string{"", repeat("x", 64), "Acme", "-a", "a-", "a_b", "a.b", "é", "a b"} {
		_, err := e.svc.CreateWorkspace(e.ctx, slug, nil)
		if identity.ErrorCode(err) != identity.CodeInvalid {
			t.Errorf("CreateWorkspace(%q) = %s, want invalid", slug, describe(err))
		}
	}
	_, err := e.svc.CreateWorkspace(e.ctx, "acme", nil)
	WantCode(t, err, identity.CodeConflict)

	_, err = e.svc.GetWorkspace(e.ctx, "nope")
	WantCode(t, err, identity.CodeNotFound)
	ws, err := e.svc.GetWorkspace(e.ctx, "acme")
	if err != nil || ws.Slug() != "acme" || !ws.CreatedAt().Equal(testNow.Truncate(1000)) {
		t.Fatalf("Workspace(acme) = %v, %v", ws, err)
	}
	all, err := e.svc.ListWorkspaces(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, w := range all {
		slugs = append(slugs, w.Slug())
	}
	want := []string{"0", "a", "a-b", "acme", "team-42", repeat("x", 63)}
	if diff := cmp.Diff(want, slugs); diff != "" {
		t.Errorf("Workspaces mismatch (-want +got):\n%s", diff)
	}
}

func testRuleSettings(t *testing.T, e *env) {
	got, err := e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.DefaultSettings(), got); diff != "" {
		t.Errorf("default Settings mismatch (-want +got):\n%s", diff)
	}
	if want := (identity.PasswordPolicy{MinLength: 8, MaxLength: 1024}); got.PasswordPolicy != want {
		t.Errorf("default policy = %+v, want %+v", got.PasswordPolicy, want)
	}
	bad := []struct {
		name   string
		s      identity.Settings
		fields []identity.FieldError
	}{
		{"min below 4", identity.Settings{PasswordPolicy: identity.PasswordPolicy{MinLength: 3, MaxLength: 10}},
			[]identity.FieldError{fe("passwordPolicy.minLength", identity.RuleRange)}},
		{"max below min", identity.Settings{PasswordPolicy: identity.PasswordPolicy{MinLength: 10, MaxLength: 9}},
			[]identity.FieldError{fe("passwordPolicy.maxLength", identity.RuleRange)}},
		{"max too large", identity.Settings{PasswordPolicy: identity.PasswordPolicy{MinLength: 8, MaxLength: 4097}},
			[]identity.FieldError{fe("passwordPolicy.maxLength", identity.RuleRange)}},
		{"bad smtp", identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(),
			SMTP: &identity.SMTPSettings{Host: "", Port: 0, From: "Mail <a@b.c>"}},
			[]identity.FieldError{fe("smtp.host", identity.RuleRequired), fe("smtp.port", identity.RuleRange), fe("smtp.from", identity.RuleFormat),
				fe("smtp.verifyUrl", identity.RuleRequired)}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := e.ws.UpdateSettings(e.ctx, tt.s)
			WantCode(t, err, identity.CodeInvalid)
			WantFields(t, err, tt.fields)
			if _, err := e.svc.CreateWorkspace(e.ctx, "other", &tt.s); identity.ErrorCode(err) != identity.CodeInvalid {
				t.Errorf("CreateWorkspace with bad settings = %s", describe(err))
			}
		})
	}
	want := identity.Settings{
		PasswordPolicy: identity.PasswordPolicy{MinLength: 4, MaxLength: 64, RequireDigit: true},
		SMTP: &identity.SMTPSettings{Host: "smtp.example.com", Port: 587, From: "noreply@example.com",
			VerifyURL: "https://app.example.com/verify?token={token}"},
	}
	if err := e.ws.UpdateSettings(e.ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err = e.ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Settings mismatch (-want +got):\n%s", diff)
	}
}

func testRuleCreateUserValidation(t *testing.T, e *env) {
	valid := newUser("valid")
	tests := []struct {
		name   string
		mod    func(*identity.NewUser)
		fields []identity.FieldError
	}{
		{"empty username", func(u *identity.NewUser) { u.Username = "" }, []identity.FieldError{fe("username", identity.RuleRequired)}},
		{"username with space", func(u *identity.NewUser) { u.Username = "a b" }, []identity.FieldError{fe("username", identity.RulePattern)}},
		{"username with @", func(u *identity.NewUser) { u.Username = "a@b" }, []identity.FieldError{fe("username", identity.RulePattern)}},
		{"username non-ascii letter", func(u *identity.NewUser) { u.Username = "josé" }, []identity.FieldError{fe("username", identity.RulePattern)}},
		{"username 256", func(u *identity.NewUser) { u.Username = repeat("a", 256) }, []identity.FieldError{fe("username", identity.RuleMaxLength)}},
		{"empty email", func(u *identity.NewUser) { u.Email = "" }, []identity.FieldError{fe("email", identity.RuleRequired)}},
		{"email without at", func(u *identity.NewUser) { u.Email = "nobody" }, []identity.FieldError{fe("email", identity.RuleFormat)}},
		{"email with display name", func(u *identity.NewUser) { u.Email = "Ada <ada@example.com>" }, []identity.FieldError{fe("email", identity.RuleFormat)}},
		{"email with spaces", func(u *identity.NewUser) { u.Email = " ada@example.com" }, []identity.FieldError{fe("email", identity.RuleFormat)}},
		{"email 255", func(u *identity.NewUser) { u.Email = repeat("a", 243) + "@example.com" }, []identity.FieldError{fe("email", identity.RuleMaxLength)}},
		{"blank full name", func(u *identity.NewUser) { u.FullName = "  \t " }, []identity.FieldError{fe("fullName", identity.RuleRequired)}},
		{"empty full name", func(u *identity.NewUser) { u.FullName = "" }, []identity.FieldError{fe("fullName", identity.RuleRequired)}},
		{"full name 256 code points", func(u *identity.NewUser) { u.FullName = repeat("é", 256) }, []identity.FieldError{fe("fullName", identity.RuleMaxLength)}},
		{"full name control", func(u *identity.NewUser) { u.FullName = "Ada\x00" }, []identity.FieldError{fe("fullName", identity.RuleControlCharacter)}},
		{"full name bad utf8", func(u *identity.NewUser) { u.FullName = "Ada\xff" }, []identity.FieldError{fe("fullName", identity.RuleUTF8)}},
		{"empty password", func(u *identity.NewUser) { u.Password = "" }, []identity.FieldError{fe("password", identity.RuleRequired)}},
		{"short password", func(u *identity.NewUser) { u.Password = "abc" }, []identity.FieldError{fe("password", identity.RulePasswordMinLength)}},
		{"everything wrong", func(u *identity.NewUser) {
			*u = identity.NewUser{Username: "!", Email: "x", FullName: " ", Password: ""}
		},
			[]identity.FieldError{fe("username", identity.RulePattern), fe("email", identity.RuleFormat), fe("fullName", identity.RuleRequired), fe("password", identity.RuleRequired)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nu := valid
			tt.mod(&nu)
			_, err := e.ws.CreateUser(e.ctx, nu)
			WantCode(t, err, identity.CodeInvalid)
			WantFields(t, err, tt.fields)
		})
	}
	list, err := e.ws.ListUsers(e.ctx, "", nil)
	if err != nil || list.Total != 0 {
		t.Fatalf("after invalid creates: total %d, err %v; want 0 users", list.Total, err)
	}

	// Limits are inclusive and count code points, not bytes.
	ok := []struct {
		name string
		mod  func(*identity.NewUser)
	}{
		{"username 255", func(u *identity.NewUser) { u.Username = repeat("a", 255) }},
		{"username all classes", func(u *identity.NewUser) { u.Username = "A.z_0-9" }},
		{"email 254", func(u *identity.NewUser) { u.Email = repeat("b", 242) + "@example.com" }},
		{"full name 255 code points", func(u *identity.NewUser) { u.FullName = repeat("é", 255) }},
		{"unicode email", func(u *identity.NewUser) { u.Email = "zoë@example.com" }},
	}
	for i, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			nu := newUser("ok" + string(rune('a'+i)))
			tt.mod(&nu)
			got, err := e.ws.CreateUser(e.ctx, nu)
			if err != nil {
				t.Fatalf("CreateUser: %v", err)
			}
			want := identity.User{ID: got.ID, Username: nu.Username, Email: nu.Email, FullName: nu.FullName,
				Enabled: true, CreatedAt: got.CreatedAt, UpdatedAt: got.UpdatedAt}
			if diff := cmp.Diff(want, got, ignoreVersions); diff != "" {
				t.Errorf("CreateUser mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func testRulePasswordPolicy(t *testing.T, e *env) {
	policy := func(mod func(*identity.PasswordPolicy)) identity.PasswordPolicy {
		p := identity.DefaultPasswordPolicy()
		mod(&p)
		return p
	}
	tests := []struct {
		name     string
		policy   identity.PasswordPolicy
		password string
		rules    []string // nil: accepted
	}{
		{"default accepts 8", identity.DefaultPasswordPolicy(), "abcdefgh", nil},
		{"default refuses 7", identity.DefaultPasswordPolicy(), "abcdefg", []string{identity.RulePasswordMinLength}},
		{"counts code points", identity.DefaultPasswordPolicy(), "éééééééé", nil},
		{"floor of 4 accepts 4", policy(func(p *identity.PasswordPolicy) { p.MinLength = 4 }), "abcd", nil},
		{"floor of 4 refuses 3", policy(func(p *identity.PasswordPolicy) { p.MinLength = 4 }), "abc", []string{identity.RulePasswordMinLength}},
		{"max length", policy(func(p *identity.PasswordPolicy) { p.MaxLength = 10 }), "abcdefghijk", []string{identity.RulePasswordMaxLength}},
		{"default max 1024", identity.DefaultPasswordPolicy(), repeat("a", 1025), []string{identity.RulePasswordMaxLength}},
		{"default max 1024 accepted", identity.DefaultPasswordPolicy(), repeat("a", 1024), nil},
		{"classes missing", policy(func(p *identity.PasswordPolicy) {
			p.RequireUpper, p.RequireLower, p.RequireDigit, p.RequireSymbol = true, true, true, true
		}), "abcdefgh", []string{identity.RulePasswordUpper, identity.RulePasswordDigit, identity.RulePasswordSymbol}},
		{"classes present", policy(func(p *identity.PasswordPolicy) {
			p.RequireUpper, p.RequireLower, p.RequireDigit, p.RequireSymbol = true, true, true, true
		}), "Abcdef1!", nil},
		{"equals username ignoring case", identity.DefaultPasswordPolicy(), "POLICYUSER", []string{identity.RulePasswordIdentity}},
		{"equals email", identity.DefaultPasswordPolicy(), "policyuser@example.com", []string{identity.RulePasswordIdentity}},
		{"identity allowed", policy(func(p *identity.PasswordPolicy) { p.AllowUsernameOrEmail = true }), "policyuser", nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := e.svc.CreateWorkspace(e.ctx, fmt.Sprintf("policy-%d", i), &identity.Settings{PasswordPolicy: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			nu := newUser("policyuser")
			nu.Password = tt.password
			_, err = ws.CreateUser(e.ctx, nu)
			if tt.rules == nil {
				if err != nil {
					t.Fatalf("CreateUser: %v", err)
				}
				return
			}
			WantCode(t, err, identity.CodeInvalid)
			var want []identity.FieldError
			for _, r := range tt.rules {
				want = append(want, fe("password", r))
			}
			WantFields(t, err, want)
		})
	}
}

func testRuleUserUniqueness(t *testing.T, e *env) {
	ada := e.user("Ada")
	tests := []struct {
		name   string
		nu     identity.NewUser
		fields []identity.FieldError
	}{
		{"same username other case", identity.NewUser{Username: "ADA", Email: "x@example.com", FullName: "X", Password: "s3cret-passphrase"},
			[]identity.FieldError{fe("username", identity.RuleTaken)}},
		{"same email other case", identity.NewUser{Username: "x", Email: "ADA@EXAMPLE.COM", FullName: "X", Password: "s3cret-passphrase"},
			[]identity.FieldError{fe("email", identity.RuleTaken)}},
		{"both", identity.NewUser{Username: "ada", Email: "Ada@example.com", FullName: "X", Password: "s3cret-passphrase"},
			[]identity.FieldError{fe("username", identity.RuleTaken), fe("email", identity.RuleTaken)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ws.CreateUser(e.ctx, tt.nu)
			WantCode(t, err, identity.CodeConflict)
			WantFields(t, err, tt.fields)
		})
	}
	// Stored as given.
	if got, err := e.ws.GetUser(e.ctx, ada.ID); err != nil || got.Username != "Ada" || got.Email != "Ada@example.com" {
		t.Errorf("stored user = %+v, %v; want username and email as given", got, err)
	}
	bob := e.user("bob")
	_, err := e.ws.UpdateUser(e.ctx, bob.ID, identity.UserUpdate{Email: "ADA@example.com", FullName: "Bob"})
	WantCode(t, err, identity.CodeConflict)
	WantFields(t, err, []identity.FieldError{fe("email", identity.RuleTaken)})
	// A user may keep its own email in another case, and the old email is
	// free once changed.
	if _, err := e.ws.UpdateUser(e.ctx, ada.ID, identity.UserUpdate{Email: "ADA@EXAMPLE.com", FullName: "Ada"}); err != nil {
		t.Fatalf("UpdateUser to own email in other case: %v", err)
	}
	if _, err := e.ws.UpdateUser(e.ctx, ada.ID, identity.UserUpdate{Email: "countess@example.com", FullName: "Ada"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.UpdateUser(e.ctx, bob.ID, identity.UserUpdate{Email: "ada@example.com", FullName: "Bob"}); err != nil {
		t.Fatalf("UpdateUser to freed email: %v", err)
	}
	// Uniqueness is per workspace.
	other, err := e.svc.CreateWorkspace(e.ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateUser(e.ctx, newUser("Ada")); err != nil {
		t.Fatalf("same username in another workspace: %v", err)
	}
}

func testRuleUserLifecycle(t *testing.T, e *env) {
	first := e.user("first")
	if first.ID != 1 {
		t.Errorf("first user id = %d, want 1", first.ID)
	}
	_, err := e.ws.CreateUser(e.ctx, newUser("first")) // conflict: consumes no id
	WantCode(t, err, identity.CodeConflict)
	second := e.user("second")
	if second.ID <= first.ID {
		t.Errorf("second id %d not above first %d", second.ID, first.ID)
	}
	want := identity.User{ID: first.ID, Username: "first", Email: "first@example.com", FullName: "User first",
		Enabled: true, CreatedAt: testNow.Truncate(1000), UpdatedAt: testNow.Truncate(1000)}
	if diff := cmp.Diff(want, first, ignoreVersions); diff != "" {
		t.Errorf("CreateUser mismatch (-want +got):\n%s", diff)
	}
	got, err := e.ws.GetUser(e.ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreVersions); diff != "" {
		t.Errorf("GetUser mismatch (-want +got):\n%s", diff)
	}
	if rec := e.storedUser(first.ID); len(rec.PasswordHash) < 20 || rec.PasswordHash[:10] != "$argon2id$" {
		t.Errorf("stored password hash = %q, want an argon2id PHC string", rec.PasswordHash)
	}

	for _, id := range []int64{0, -1, 999} {
		_, err := e.ws.GetUser(e.ctx, id)
		WantCode(t, err, identity.CodeNotFound)
		_, err = e.ws.UpdateUser(e.ctx, id, identity.UserUpdate{Email: "z@example.com", FullName: "Z"})
		WantCode(t, err, identity.CodeNotFound)
		WantCode(t, e.ws.DisableUser(e.ctx, id), identity.CodeNotFound)
		WantCode(t, e.ws.EnableUser(e.ctx, id), identity.CodeNotFound)
	}

	// Update: email and full name only; a changed email is unverified.
	_, err = e.ws.UpdateUser(e.ctx, first.ID, identity.UserUpdate{Email: "bad", FullName: ""})
	WantCode(t, err, identity.CodeInvalid)
	WantFields(t, err, []identity.FieldError{fe("email", identity.RuleFormat), fe("fullName", identity.RuleRequired)})
	updated, err := e.ws.UpdateUser(e.ctx, first.ID, identity.UserUpdate{Email: "new@example.com", FullName: "First Renamed"})
	if err != nil {
		t.Fatal(err)
	}
	want.Email, want.FullName = "new@example.com", "First Renamed"
	if diff := cmp.Diff(want, updated, ignoreVersions); diff != "" {
		t.Errorf("UpdateUser mismatch (-want +got):\n%s", diff)
	}

	// Disable is soft and idempotent; the user stays readable and
	// changeable; enable restores it.
	if _, err := e.ws.SetAttribute(e.ctx, first.ID, "k", "v", nil); err != nil {
		t.Fatal(err)
	}
	e.roles(7)
	if err := e.ws.AssignRole(e.ctx, first.ID, 7); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.ws.DisableUser(e.ctx, first.ID); err != nil {
			t.Fatalf("DisableUser: %v", err)
		}
	}
	if got, err = e.ws.GetUser(e.ctx, first.ID); err != nil || got.Enabled {
		t.Errorf("disabled user = %+v, %v; want it disabled", got, err)
	}
	attrs, err := e.ws.ListAttributes(e.ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := e.ws.ListUserRoles(e.ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"k": "v"}, attrs); diff != "" {
		t.Errorf("attributes of disabled user (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{7}, roleIDs(roles)); diff != "" {
		t.Errorf("roles of disabled user (-want +got):\n%s", diff)
	}
	if _, err := e.ws.UpdateUser(e.ctx, first.ID, identity.UserUpdate{Email: "new@example.com", FullName: "Still Here"}); err != nil {
		t.Errorf("UpdateUser of disabled user: %v", err)
	}
	if err := e.ws.EnableUser(e.ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := e.ws.GetUser(e.ctx, first.ID); err != nil || !got.Enabled {
		t.Errorf("enabled user = %+v, %v; want it enabled", got, err)
	}
}

func testRuleListUsers(t *testing.T, e *env) {
	specs := []struct{ username, email, fullName string }{
		{"alice", "alice@example.com", "Alice Liddell"},
		{"bob", "robert@example.org", "Bob Builder"},
		{"a_b", "ab@example.com", "Underscore"},
		{"axb", "axb@example.com", "Wildcard Victim"},
		{"a.percent", "percent@example.com", "a% Literal"},
		{"Carol", "carol@EXAMPLE.com", "alice's friend"},
	}
	for _, s := range specs {
		if _, err := e.ws.CreateUser(e.ctx, identity.NewUser{Username: s.username, Email: s.email, FullName: s.fullName, Password: "s3cret-passphrase"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		search    string
		page      *identity.Page
		wantIDs   []int64
		wantTotal int
	}{
		{"", nil, []int64{1, 2, 3, 4, 5, 6}, 6},
		{"ali", nil, []int64{1, 6}, 2},        // username and full name
		{"ALICE", nil, []int64{1, 6}, 2},      // case-insensitive
		{"alice@", nil, []int64{1}, 1},        // email; matching twice counts once
		{"rob", nil, []int64{2}, 1},           // email only
		{"bob b", nil, []int64{2}, 1},         // full name with space
		{"a_", nil, []int64{3}, 1},            // '_' is literal
		{"a%", nil, []int64{5}, 1},            // '%' is literal
		{"carol@example", nil, []int64{6}, 1}, // stored case differs
		{"zzz", nil, []int64{}, 0},            // no match
		{"", &identity.Page{Offset: 2, Limit: 2}, []int64{3, 4}, 6},
		{"", &identity.Page{Offset: 5, Limit: 100}, []int64{6}, 6},
		{"", &identity.Page{Offset: 6, Limit: 1}, []int64{}, 6},
		{"", &identity.Page{Offset: 1000, Limit: 1}, []int64{}, 6},
		{"a", &identity.Page{Offset: 1, Limit: 2}, []int64{3, 4}, 5},
	}
	for _, tt := range tests {
		got, err := e.ws.ListUsers(e.ctx, tt.search, tt.page)
		if err != nil {
			t.Fatalf("ListUsers(%q, %+v): %v", tt.search, tt.page, err)
		}
		if diff := cmp.Diff(tt.wantIDs, idsOf(got.Items)); diff != "" {
			t.Errorf("ListUsers(%q, %+v) ids (-want +got):\n%s", tt.search, tt.page, diff)
		}
		if got.Total != tt.wantTotal {
			t.Errorf("ListUsers(%q, %+v).Total = %d, want %d", tt.search, tt.page, got.Total, tt.wantTotal)
		}
	}
	def, err := e.ws.ListUsers(e.ctx, "", nil)
	if err != nil || def.Offset != 0 || def.Limit != 20 {
		t.Errorf("default page = offset %d limit %d (%v), want 0 and 20", def.Offset, def.Limit, err)
	}
	bad := []struct {
		page   identity.Page
		fields []identity.FieldError
	}{
		{identity.Page{Offset: -1, Limit: 20}, []identity.FieldError{fe("offset", identity.RuleRange)}},
		{identity.Page{Offset: 0, Limit: 0}, []identity.FieldError{fe("limit", identity.RuleRange)}},
		{identity.Page{Offset: 0, Limit: 101}, []identity.FieldError{fe("limit", identity.RuleRange)}},
		{identity.Page{Offset: -5, Limit: -5}, []identity.FieldError{fe("offset", identity.RuleRange), fe("limit", identity.RuleRange)}},
	}
	for _, tt := range bad {
		_, err := e.ws.ListUsers(e.ctx, "", &tt.page)
		WantCode(t, err, identity.CodeInvalid)
		WantFields(t, err, tt.fields)
	}
	if got, err := e.ws.ListUsers(e.ctx, "", &identity.Page{Limit: 100}); err != nil || len(got.Items) != 6 {
		t.Errorf("limit 100: %d users, %v", len(got.Items), err)
	}
}

func testRuleRoles(t *testing.T, e *env) {
	u := e.user("roleuser")
	e.roles(9)
	for _, role := range []int64{5, 3, 5, 9} { // 5 twice: no-op
		if err := e.ws.AssignRole(e.ctx, u.ID, role); err != nil {
			t.Fatalf("AssignRole(%d): %v", role, err)
		}
	}
	roles, err := e.ws.ListUserRoles(e.ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{3, 5, 9}, roleIDs(roles)); diff != "" {
		t.Errorf("Roles mismatch (-want +got):\n%s", diff)
	}
	if err := e.ws.RemoveRole(e.ctx, u.ID, 5); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.RemoveRole(e.ctx, u.ID, 5), identity.CodeNotFound)
	WantCode(t, e.ws.RemoveRole(e.ctx, u.ID, 4), identity.CodeNotFound)
	WantCode(t, e.ws.AssignRole(e.ctx, 999, 1), identity.CodeNotFound)
	WantCode(t, e.ws.RemoveRole(e.ctx, 999, 3), identity.CodeNotFound)
	WantCode(t, e.ws.AssignRole(e.ctx, u.ID, 0), identity.CodeNotFound)
	WantCode(t, e.ws.AssignRole(e.ctx, u.ID, -2), identity.CodeNotFound)
	WantCode(t, e.ws.AssignRole(e.ctx, u.ID, 10), identity.CodeNotFound) // no role 10
	_, err = e.ws.ListUserRoles(e.ctx, 999)
	WantCode(t, err, identity.CodeNotFound)
	if roles, err = e.ws.ListUserRoles(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{3, 9}, roleIDs(roles)); diff != "" {
		t.Errorf("Roles after remove (-want +got):\n%s", diff)
	}
	empty, err := e.ws.ListUserRoles(e.ctx, e.user("noroles").ID)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("Roles of user without roles = %#v, %v; want empty non-nil", empty, err)
	}
}
