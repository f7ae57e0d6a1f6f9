package pgstore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// hideBulk is a Store whose transactions do not implement store.Bulk, so
// that the identity package writes and reads record by record over it:
// the path every other store takes, to compare the bulk path with.
type hideBulk struct{ store.Store }

// plainTx is a Tx without the methods of store.Bulk.
type plainTx struct{ store.Tx }

// View implements store.Store.
func (s hideBulk) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(plainTx{tx}) })
}

// Update implements store.Store.
func (s hideBulk) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(plainTx{tx}) })
}

// ignoreVersion leaves out the versions of users, which are random.
var ignoreVersion = cmpopts.IgnoreFields(identity.User{}, "Version")

// bulkT0 is the clock of the import tests.
var bulkT0 = time.Date(2026, 5, 4, 3, 2, 1, 987654321, time.UTC)

// importEnv is a Service over a PostgreSQL schema of its own, with
// workspace acme, and the schema's URL.
type importEnv struct {
	svc *identity.Service
	ws  *identity.Workspace
	url string
}

// newImportEnv opens a Store on a fresh schema, over which the Service
// takes the bulk path, or the per-record path with perRecord.
func newImportEnv(t *testing.T, perRecord bool) *importEnv {
	t.Helper()
	u := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var st store.Store = s
	if perRecord {
		st = hideBulk{s}
	}
	svc, err := identity.New(st, &identity.Options{
		Now: func() time.Time { return bulkT0 }, PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(t.Context(), "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &importEnv{svc: svc, ws: ws, url: u}
}

// dump returns every row of the tables an import writes, as to_jsonb
// writes them but for a user's version, by table.
func (e *importEnv) dump(t *testing.T) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	out := map[string][]string{}
	for _, table := range []string{"users", "user_attributes", "user_roles", "group_members", "role_holders", "second_factors",
		"user_chunks", "sequences"} {
		// A user's version is random: it is left out.
		rows, err := pgx.CollectRows(must(conn.Query(ctx, "SELECT (to_jsonb(t) - 'version')::text FROM "+table+" t ORDER BY 1")),
			pgx.RowTo[string])
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		out[table] = rows
	}
	return out
}

// importOutcome is what an ImportUsers call gave, in a form to compare.
type importOutcome struct {
	IDs     []int64
	Users   []identity.User
	Code    identity.Code
	Message string
	Fields  []identity.FieldError
}

// outcome returns the outcome of ImportUsers(batch).
func (e *importEnv) outcome(t *testing.T, batch []identity.ImportedUser) importOutcome {
	t.Helper()
	users, err := e.ws.ImportUsers(t.Context(), batch)
	o := importOutcome{Users: users, Code: identity.ErrorCode(err)}
	for _, u := range users {
		o.IDs = append(o.IDs, u.ID)
	}
	if e, ok := err.(*identity.Error); ok {
		o.Message, o.Fields = e.Message, e.Fields
	}
	return o
}

// fieldRules returns the field and rule of each field error.
func fieldRules(fields []identity.FieldError) [][2]string {
	var out [][2]string
	for _, f := range fields {
		out = append(out, [2]string{f.Field, f.Rule})
	}
	return out
}

// imported returns a valid user to import: username, email user@example.com.
func imported(username string) identity.ImportedUser {
	return identity.ImportedUser{Username: username, Email: username + "@example.com", FullName: "Imported " + username}
}

// TestImportUsersBulk runs the same imports, one after the other, through
// the bulk path (COPY) and through the per-record path, each over a
// PostgreSQL schema of its own, and checks that both give the outcome
// written here and leave the same rows: a refused batch writes nothing and
// draws no id, a created one continues the id sequence and keeps the user
// counts.
func TestImportUsersBulk(t *testing.T) {
	recovery := [][]byte{make([]byte, sha256.Size), make([]byte, sha256.Size)}
	recovery[0][0], recovery[1][0] = 1, 2
	full := identity.ImportedUser{
		Username: "Dora", Email: "dora@example.com", FullName: "Dora Explorer",
		PasswordHash:  "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo",
		EmailVerified: true, Disabled: true, CreatedAt: time.Date(2020, 1, 2, 3, 4, 5, 6789, time.UTC),
		Attributes: map[string]string{"dept": "ops", "level": "3", "empty": ""},
		// staff (role 1) exists and group eng carries it; auditor and ops
		// are created by the import.
		Roles:  []identity.RoleRef{identity.RoleName("auditor"), identity.RoleID(1), identity.RoleName("auditor")},
		Groups: []string{"eng", "ops", "eng"},
		TOTP: &identity.ImportedTOTP{
			Secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", ConfirmedAt: time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC),
			LastStep: 12345, RecoveryCodes: recovery,
		},
	}
	var big []identity.ImportedUser
	for i := 1; i <= 1100; i++ {
		big = append(big, imported(fmt.Sprintf("bulk%04d", i)))
	}
	steps := []struct {
		name   string
		batch  []identity.ImportedUser
		ids    []int64
		code   identity.Code
		fields [][2]string
	}{
		{"first users", []identity.ImportedUser{imported("alice"), imported("bob")}, []int64{1, 2}, "", nil},
		{"taken username and email, in another case", []identity.ImportedUser{
			imported("carol"),
			func() identity.ImportedUser { u := imported("ALICE"); u.Email = "alice2@example.com"; return u }(),
			func() identity.ImportedUser { u := imported("bob2"); u.Email = "Bob@Example.COM"; return u }(),
		}, nil, identity.CodeConflict, [][2]string{
			{"users[1].username", identity.RuleTaken}, {"users[2].email", identity.RuleTaken},
		}},
		{"taken and twice in the batch, in batch order", []identity.ImportedUser{
			func() identity.ImportedUser { u := imported("alice"); u.Email = "a1@example.com"; return u }(),
			func() identity.ImportedUser { u := imported("carol"); u.Email = "BOB@example.com"; return u }(),
			func() identity.ImportedUser { u := imported("Carol"); u.Email = "A1@example.com"; return u }(),
		}, nil, identity.CodeConflict, [][2]string{
			{"users[0].username", identity.RuleTaken}, {"users[1].email", identity.RuleTaken},
			{"users[2].username", identity.RuleDuplicate}, {"users[2].email", identity.RuleDuplicate},
		}},
		{"invalid, before any read", []identity.ImportedUser{imported("alice"), imported("bad name")},
			nil, identity.CodeInvalid, [][2]string{{"users[1].username", identity.RulePattern}, {"users[1].email", identity.RuleFormat}}},
		{"everything a user can carry", []identity.ImportedUser{imported("carol"), full}, []int64{3, 4}, "", nil},
		{"across a chunk of ids", big, func() []int64 {
			var ids []int64
			for id := int64(5); id <= 1104; id++ {
				ids = append(ids, id)
			}
			return ids
		}(), "", nil},
		{"empty", nil, nil, "", nil},
		{"after a bulk import", []identity.ImportedUser{imported("erin")}, []int64{1105}, "", nil},
	}

	envs := []*importEnv{newImportEnv(t, false), newImportEnv(t, true)}
	for _, e := range envs {
		role, err := e.ws.CreateRole(t.Context(), identity.NewRole{Name: "staff"})
		if err != nil {
			t.Fatal(err)
		}
		group, err := e.ws.CreateGroup(t.Context(), identity.NewGroup{Name: "eng"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ws.AssignGroupRole(t.Context(), group.ID, role.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range steps {
		var outcomes [2]importOutcome
		for i, e := range envs {
			outcomes[i] = e.outcome(t, step.batch)
		}
		bulk, perRecord := outcomes[0], outcomes[1]
		if diff := cmp.Diff(step.ids, bulk.IDs); diff != "" {
			t.Errorf("%s: ids (-want +got):\n%s", step.name, diff)
		}
		if bulk.Code != step.code {
			t.Errorf("%s: error code %q, want %q", step.name, bulk.Code, step.code)
		}
		if diff := cmp.Diff(step.fields, fieldRules(bulk.Fields)); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(perRecord, bulk, ignoreVersion); diff != "" {
			t.Errorf("%s: outcome of the per-record path (-) and the bulk path (+):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(envs[1].dump(t), envs[0].dump(t)); diff != "" {
			t.Errorf("%s: rows of the per-record path (-) and the bulk path (+):\n%s", step.name, diff)
		}
	}

	// What the bulk path wrote reads back as written, through every
	// read of the library.
	ctx := t.Context()
	ws := envs[0].ws
	got, err := ws.GetUser(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := identity.User{ID: 4, Username: "Dora", Email: "dora@example.com", FullName: "Dora Explorer",
		EmailVerified: true, Enabled: false, MFAEnabled: true, CreatedAt: time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC),
		UpdatedAt: bulkT0.Truncate(time.Microsecond), Version: got.Version}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("imported user (-want +got):\n%s", diff)
	}
	attrs, err := ws.ListAttributes(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"dept": "ops", "level": "3", "empty": ""}, attrs); diff != "" {
		t.Errorf("imported attributes (-want +got):\n%s", diff)
	}
	roles, err := ws.ListUserRoles(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Held: staff directly and through eng, auditor directly.
	var held []string
	for _, r := range roles {
		held = append(held, fmt.Sprintf("%s direct=%t groups=%d", r.Name, r.Direct, len(r.Groups)))
	}
	if diff := cmp.Diff([]string{"staff direct=true groups=1", "auditor direct=true groups=0"}, held); diff != "" {
		t.Errorf("imported roles (-want +got):\n%s", diff)
	}
	holders, err := ws.ListRoleHolders(ctx, 1, nil)
	if err != nil || holders.Total != 1 || len(holders.Items) != 1 || holders.Items[0].ID != 4 {
		t.Errorf("holders of staff = %+v, %v; want Dora alone", holders, err)
	}
	var exported []identity.ImportedUser
	if err := ws.ExportUsers(ctx, func(u identity.ImportedUser) error {
		if u.Username == "Dora" {
			exported = append(exported, u)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantExport := full
	wantExport.Roles = []identity.RoleRef{identity.RoleName("staff"), identity.RoleName("auditor")}
	wantExport.Groups = []string{"eng", "ops"}
	wantExport.MFAEnabled = true
	wantExport.CreatedAt = want.CreatedAt
	if diff := cmp.Diff([]identity.ImportedUser{wantExport}, exported); diff != "" {
		t.Errorf("the imported user exported (-want +got):\n%s", diff)
	}

	// The user counts: the total of the list, a page deep in it, and
	// the counts per chunk of 1024 ids.
	for _, c := range []struct {
		search string
		page   identity.Page
		total  int
		ids    []int64
	}{
		{"", identity.Page{Offset: 1100, Limit: 10}, 1105, []int64{1101, 1102, 1103, 1104, 1105}},
		{"", identity.Page{Offset: 1020, Limit: 5}, 1105, []int64{1021, 1022, 1023, 1024, 1025}},
		{"BULK0", identity.Page{Limit: 3}, 999, []int64{5, 6, 7}},
		{"BULK00", identity.Page{Limit: 3}, 99, []int64{5, 6, 7}},
		{"bulk11", identity.Page{Limit: 3}, 1, []int64{1104}},
		{"Imported D", identity.Page{Limit: 3}, 0, nil},
		{"dora", identity.Page{Limit: 3}, 1, []int64{4}},
		{"ERIN@", identity.Page{Limit: 3}, 1, []int64{1105}},
	} {
		list, err := ws.ListUsers(ctx, c.search, &c.page)
		if err != nil {
			t.Fatalf("ListUsers(%q): %v", c.search, err)
		}
		var ids []int64
		for _, u := range list.Items {
			ids = append(ids, u.ID)
		}
		if diff := cmp.Diff(c.ids, ids); diff != "" || list.Total != c.total {
			t.Errorf("ListUsers(%q, %+v): total %d, want %d; ids (-want +got):\n%s", c.search, c.page, list.Total, c.total, diff)
		}
	}
	wantChunks := []string{`{"n": 1023, "chunk": 0, "workspace": "acme"}`, `{"n": 82, "chunk": 1, "workspace": "acme"}`}
	if diff := cmp.Diff(wantChunks, envs[0].dump(t)["user_chunks"]); diff != "" {
		t.Errorf("user_chunks (-want +got):\n%s", diff)
	}

	// A user created one by one takes the next id.
	created, err := ws.CreateUser(ctx, identity.NewUser{Username: "frank", Email: "frank@example.com", FullName: "Frank", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID != 1106 {
		t.Errorf("CreateUser after the imports: id %d, want 1106", created.ID)
	}
}

// TestImportUsersBulkDeletedWorkspace checks that an import into a
// workspace deleted meanwhile fails as the per-record path fails, and
// writes nothing.
func TestImportUsersBulkDeletedWorkspace(t *testing.T) {
	var outcomes [2]importOutcome
	for i, perRecord := range []bool{false, true} {
		e := newImportEnv(t, perRecord)
		if _, err := e.svc.DeleteWorkspace(t.Context(), "acme"); err != nil {
			t.Fatal(err)
		}
		outcomes[i] = e.outcome(t, []identity.ImportedUser{imported("alice")})
		if rows := e.dump(t)["users"]; len(rows) != 0 {
			t.Errorf("perRecord %t: %d users written", perRecord, len(rows))
		}
	}
	if outcomes[0].Code != identity.CodeNotFound {
		t.Errorf("error code %q, want %q", outcomes[0].Code, identity.CodeNotFound)
	}
	if diff := cmp.Diff(outcomes[1], outcomes[0], ignoreVersion); diff != "" {
		t.Errorf("outcome of the per-record path (-) and the bulk path (+):\n%s", diff)
	}
}

// TestClaimsBulk checks that Claims reads the same claims, and the same
// errors, through the one read of the bulk path as through three.
func TestClaimsBulk(t *testing.T) {
	type outcome struct {
		Claims map[string]string
		Code   identity.Code
	}
	var got [2][]outcome
	for i, perRecord := range []bool{false, true} {
		e := newImportEnv(t, perRecord)
		ctx := t.Context()
		u1, u2 := imported("alice"), imported("bob")
		u1.Attributes = map[string]string{"dept": "ops", "level": "3", "nick": "al"}
		if _, err := e.ws.ImportUsers(ctx, []identity.ImportedUser{u1, u2}); err != nil {
			t.Fatal(err)
		}
		read := func() {
			for _, id := range []int64{1, 2, 3, 0} {
				for _, kind := range []identity.TokenKind{identity.AccessToken, identity.IDToken} {
					claims, err := e.ws.GetClaims(ctx, id, kind)
					got[i] = append(got[i], outcome{claims, identity.ErrorCode(err)})
				}
			}
		}
		read() // no mappers
		no, yes := false, true
		for _, m := range []struct {
			key, claim string
			access     *bool
		}{{"dept", "department", nil}, {"level", "lvl", &no}, {"nick", "handle", &yes}} {
			if _, err := e.ws.SetClaimMapper(ctx, m.key, identity.ClaimMapperSpec{ClaimName: m.claim, IncludeInAccess: m.access, IncludeInID: &yes}); err != nil {
				t.Fatal(err)
			}
		}
		read()
	}
	none := outcome{Code: identity.CodeNotFound}
	empty := outcome{Claims: map[string]string{}}
	want := []outcome{
		empty, empty, empty, empty, none, none, none, none,
		{Claims: map[string]string{"department": "ops", "handle": "al"}},
		{Claims: map[string]string{"department": "ops", "lvl": "3", "handle": "al"}},
		empty, empty, none, none, none, none,
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("claims of the bulk path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got[1], got[0]); diff != "" {
		t.Errorf("claims of the per-record path (-) and the bulk path (+):\n%s", diff)
	}
}

// TestSetAttributeBulk checks that SetAttribute decides the same through
// the one read of the user and its attributes as through two: values
// replaced and keys added up to the workspace's limit, a new key refused
// there while a held key is still replaced, a missing user not found.
func TestSetAttributeBulk(t *testing.T) {
	type outcome struct {
		Code  identity.Code
		Attrs map[string]string
	}
	var got [2][]outcome
	for i, perRecord := range []bool{false, true} {
		e := newImportEnv(t, perRecord)
		ctx := t.Context()
		set, err := e.ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		set.Limits.AttributesPerUser = 2
		if err := e.ws.UpdateSettings(ctx, set); err != nil {
			t.Fatal(err)
		}
		u := imported("alice")
		u.Attributes = map[string]string{"dept": "ops"}
		if _, err := e.ws.ImportUsers(ctx, []identity.ImportedUser{u}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id         int64
			key, value string
		}{{1, "dept", "sales"}, {1, "tier", "gold"}, {1, "third", "x"}, {1, "tier", "silver"}, {2, "dept", "ops"}, {0, "dept", "ops"}} {
			_, err := e.ws.SetAttribute(ctx, c.id, c.key, c.value, nil)
			attrs, _ := e.ws.ListAttributes(ctx, 1)
			got[i] = append(got[i], outcome{identity.ErrorCode(err), attrs})
		}
	}
	want := []outcome{
		{"", map[string]string{"dept": "sales"}},
		{"", map[string]string{"dept": "sales", "tier": "gold"}},
		{identity.CodeLimitReached, map[string]string{"dept": "sales", "tier": "gold"}},
		{"", map[string]string{"dept": "sales", "tier": "silver"}},
		{identity.CodeNotFound, map[string]string{"dept": "sales", "tier": "silver"}},
		{identity.CodeNotFound, map[string]string{"dept": "sales", "tier": "silver"}},
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("the bulk path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got[1], got[0]); diff != "" {
		t.Errorf("the per-record path (-) and the bulk path (+):\n%s", diff)
	}
}
