package identity_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// ExportUsers and ImportUsers of its output: a workspace's users with
// their password hashes, attributes, roles and second factors move to
// another workspace of another Service, with another key-encryption key,
// and work there as they did.

// importedHash is an argon2id hash as an import carries it.
const importedHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"

// exportAll returns what ExportUsers gives, in order.
func exportAll(t *testing.T, ws *identity.Workspace) []identity.ImportedUser {
	t.Helper()
	var out []identity.ImportedUser
	if err := ws.ExportUsers(t.Context(), func(iu identity.ImportedUser) error {
		out = append(out, iu)
		return nil
	}); err != nil {
		t.Fatalf("ExportUsers: %v", err)
	}
	return out
}

// exportLines returns what ExportUsersJSONLines writes, and checks its
// count.
func exportLines(t *testing.T, ws *identity.Workspace, want int) string {
	t.Helper()
	var buf bytes.Buffer
	n, err := ws.ExportUsersJSONLines(t.Context(), &buf)
	if err != nil || n != want {
		t.Fatalf("ExportUsersJSONLines = %d, %v; want %d users", n, err, want)
	}
	return buf.String()
}

// userState is what a user is, beside its id, version and UpdatedAt.
type userState struct {
	User       identity.User
	Attributes map[string]string
	// Roles are the names of the roles assigned directly, Groups the
	// names of the user's groups.
	Roles  []string
	Groups []string
	MFA    identity.MFAStatus
}

// states returns the state of every user of the workspace, by id.
func states(t *testing.T, ws *identity.Workspace) []userState {
	t.Helper()
	ctx := t.Context()
	list, err := ws.ListUsers(ctx, "", &identity.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []userState
	for _, u := range list.Items {
		attrs, err := ws.ListAttributes(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		roles, err := ws.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		groups, err := ws.ListUserGroups(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		mfa, err := ws.GetMFAStatus(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		st := userState{User: u, Attributes: attrs, MFA: mfa}
		for _, r := range roles {
			if r.Direct {
				st.Roles = append(st.Roles, r.Name)
			}
		}
		for _, g := range groups {
			st.Groups = append(st.Groups, g.Name)
		}
		out = append(out, st)
	}
	return out
}

// TestExportImport exports a workspace of users of every kind, imports
// the export into a workspace of another Service with another
// key-encryption key, and checks that the users are the same there, sign
// in as before, and export to the same lines.
func TestExportImport(t *testing.T) {
	kekA := bytes.Repeat([]byte{1}, identity.KeyEncryptionKeySize)
	kekB := bytes.Repeat([]byte{2}, identity.KeyEncryptionKeySize)
	e := newTestEnv(t, &identity.Options{KeyEncryptionKey: kekA})
	ctx := e.ctx
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC) // the env's clock at the start

	// ada (id 1): attributes, roles, a group, a TOTP factor whose first
	// and second recovery codes are used, and a code accepted at the step
	// after the enrolment's.
	for key, value := range map[string]string{"dept": "math", "lab": "<analytical & engine>"} {
		if _, err := e.ws.SetAttribute(ctx, e.ada.ID, key, value, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"analyst", "auditor", "admin"} { // ids 1, 2, 3
		e.role(name)
	}
	for _, role := range []int64{3, 1} {
		if err := e.ws.AssignRole(ctx, e.ada.ID, role); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := e.ws.CreateGroup(ctx, identity.NewGroup{Name: "eng"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ws.AddGroupMember(ctx, eng.ID, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	// bob (id 2): disabled, one role. cy (id 3): an enrolment waiting for
	// its first code, which is not exported.
	bob, cy := e.user("bob"), e.user("cy")
	if err := e.ws.AssignRole(ctx, bob.ID, 2); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.DisableUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.BeginTOTPEnrollment(ctx, cy.ID); err != nil {
		t.Fatal(err)
	}
	secret, codes := e.enrol(e.ada.ID) // confirmed at t0; the clock is at t0+30s
	for _, code := range []string{codes[0], codes[1], e.code(secret, 0)} {
		if _, err := e.ws.VerifySecondFactor(ctx, e.challenge(identity.CodeMFARequired), code); err != nil {
			t.Fatalf("VerifySecondFactor(%q): %v", code, err)
		}
	}
	// dee (id 4): no password, verified, MFA on without a factor, an old
	// creation time. eve (id 5): a factor imported with a secret in lower
	// case and a confirmation time in nanoseconds.
	_, err = e.ws.ImportUsers(ctx, []identity.ImportedUser{
		{Username: "dee", Email: "dee@example.com", FullName: "Dee Example", EmailVerified: true, MFAEnabled: true,
			CreatedAt: time.Date(2020, 6, 23, 9, 0, 0, 0, time.UTC), Attributes: map[string]string{"tier": "gold"}},
		{Username: "eve", Email: "eve@example.com", FullName: "Eve Example", PasswordHash: importedHash,
			CreatedAt: time.Date(2021, 1, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600)),
			TOTP: &identity.ImportedTOTP{
				Secret: "jbswy3dpehpk3pxp", ConfirmedAt: time.Date(2021, 1, 2, 3, 4, 5, 123456789, time.UTC),
				LastStep: 53651888, RecoveryCodes: [][]byte{bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)},
			}},
	})
	if err != nil {
		t.Fatalf("ImportUsers: %v", err)
	}

	exported := exportAll(t, e.ws)
	if len(exported) != 5 {
		t.Fatalf("exported %d users, want 5", len(exported))
	}
	// What cannot be written literally: ada's and bob's hashes (salted) and
	// ada's secret and recovery codes (random), checked here and blanked.
	ada := exported[0]
	if ada.TOTP == nil || ada.TOTP.Secret != secret || len(ada.TOTP.RecoveryCodes) != 8 {
		t.Fatalf("ada's exported factor = %+v; want the secret %s and 8 recovery codes", ada.TOTP, secret)
	}
	for i, u := range exported[:3] {
		if !strings.HasPrefix(u.PasswordHash, "$argon2id$v=19$m=64,t=1,p=1$") {
			t.Errorf("user %d: PasswordHash %q, want the argon2id hash of CreateUser", i, u.PasswordHash)
		}
	}
	blanked := cmp.Transformer("blank", func(iu identity.ImportedUser) identity.ImportedUser {
		if iu.PasswordHash != importedHash {
			iu.PasswordHash = ""
		}
		if iu.TOTP != nil && iu.TOTP.Secret != "JBSWY3DPEHPK3PXP" {
			iu.TOTP = &identity.ImportedTOTP{ConfirmedAt: iu.TOTP.ConfirmedAt, LastStep: iu.TOTP.LastStep}
		}
		return iu
	})
	want := []identity.ImportedUser{
		{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", MFAEnabled: true, CreatedAt: t0,
			Attributes: map[string]string{"dept": "math", "lab": "<analytical & engine>"},
			Roles:      []identity.RoleRef{identity.RoleName("analyst"), identity.RoleName("admin")}, Groups: []string{"eng"},
			TOTP: &identity.ImportedTOTP{ConfirmedAt: t0, LastStep: 59116699}},
		{Username: "bob", Email: "bob@example.com", FullName: "User bob", Disabled: true, CreatedAt: t0,
			Roles: []identity.RoleRef{identity.RoleName("auditor")}},
		{Username: "cy", Email: "cy@example.com", FullName: "User cy", CreatedAt: t0},
		{Username: "dee", Email: "dee@example.com", FullName: "Dee Example", EmailVerified: true, MFAEnabled: true,
			CreatedAt: time.Date(2020, 6, 23, 9, 0, 0, 0, time.UTC), Attributes: map[string]string{"tier": "gold"}},
		{Username: "eve", Email: "eve@example.com", FullName: "Eve Example", PasswordHash: importedHash, MFAEnabled: true,
			CreatedAt: time.Date(2020, 12, 31, 23, 0, 0, 0, time.UTC),
			TOTP: &identity.ImportedTOTP{
				Secret: "JBSWY3DPEHPK3PXP", ConfirmedAt: time.Date(2021, 1, 2, 3, 4, 5, 123456000, time.UTC),
				LastStep: 53651888, RecoveryCodes: [][]byte{bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)},
			}},
	}
	if diff := cmp.Diff(want, exported, blanked); diff != "" {
		t.Errorf("ExportUsers (-want +got):\n%s", diff)
	}
	lines := exportLines(t, e.ws, 5)
	const eveLine = `{"username":"eve","email":"eve@example.com","fullName":"Eve Example",` +
		`"passwordHash":"` + importedHash + `","mfaEnabled":true,"createdAt":"2020-12-31T23:00:00Z",` +
		`"totp":{"secret":"JBSWY3DPEHPK3PXP","confirmedAt":"2021-01-02T03:04:05.123456Z","lastStep":53651888,` +
		`"recoveryCodes":["AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI="]}}` + "\n"
	if !strings.HasSuffix(lines, "\n"+eveLine) || strings.Count(lines, "\n") != 5 {
		t.Errorf("ExportUsersJSONLines: want 5 lines, the last\n%s\ngot\n%s", eveLine, lines)
	}
	if !strings.Contains(lines, `"lab":"<analytical & engine>"`) {
		t.Errorf("ExportUsersJSONLines escapes HTML characters:\n%s", lines)
	}

	// The target: another store, another key, and a user first, so that
	// every imported user gets another id than it had.
	targetStore := memstore.New()
	t.Cleanup(func() { targetStore.Close() })
	target, err := identity.New(targetStore, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2, KeyEncryptionKey: kekB})
	if err != nil {
		t.Fatal(err)
	}
	tws, err := target.CreateWorkspace(ctx, "beta", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tws.CreateUser(ctx, newUserNamed("zed")); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour) // the import's time shows in UpdatedAt only
	created, err := tws.ImportUsers(ctx, exported)
	if err != nil {
		t.Fatalf("ImportUsers of the export: %v", err)
	}
	if created[0].ID != 2 {
		t.Fatalf("ada's new id = %d, want 2", created[0].ID)
	}

	noIDs := cmpopts.IgnoreFields(identity.User{}, "ID", "Version", "UpdatedAt")
	wantStates := []userState{
		{User: identity.User{Username: "zed", Email: "zed@example.com", FullName: "User zed", Enabled: true, CreatedAt: t0.Add(30 * time.Second)},
			Attributes: map[string]string{}},
		{User: identity.User{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Enabled: true, MFAEnabled: true, CreatedAt: t0},
			Attributes: map[string]string{"dept": "math", "lab": "<analytical & engine>"},
			Roles:      []string{"analyst", "admin"}, Groups: []string{"eng"},
			MFA: identity.MFAStatus{Enabled: true, EnrolledAt: t0, RecoveryCodesLeft: 8}},
		{User: identity.User{Username: "bob", Email: "bob@example.com", FullName: "User bob", CreatedAt: t0},
			Attributes: map[string]string{}, Roles: []string{"auditor"}},
		{User: identity.User{Username: "cy", Email: "cy@example.com", FullName: "User cy", Enabled: true, CreatedAt: t0},
			Attributes: map[string]string{}},
		{User: identity.User{Username: "dee", Email: "dee@example.com", FullName: "Dee Example", EmailVerified: true, Enabled: true, MFAEnabled: true,
			CreatedAt: time.Date(2020, 6, 23, 9, 0, 0, 0, time.UTC)},
			Attributes: map[string]string{"tier": "gold"}},
		{User: identity.User{Username: "eve", Email: "eve@example.com", FullName: "Eve Example", Enabled: true, MFAEnabled: true,
			CreatedAt: time.Date(2020, 12, 31, 23, 0, 0, 0, time.UTC)},
			Attributes: map[string]string{},
			MFA:        identity.MFAStatus{Enabled: true, EnrolledAt: time.Date(2021, 1, 2, 3, 4, 5, 123456000, time.UTC), RecoveryCodesLeft: 2}},
	}
	if diff := cmp.Diff(wantStates, states(t, tws), noIDs, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the imported users (-want +got):\n%s", diff)
	}

	// The export of the import is the export, after zed's line.
	again := exportLines(t, tws, 6)
	if _, rest, _ := strings.Cut(again, "\n"); rest != lines {
		t.Errorf("the target's export differs from the source's:\n%s\nwant\n%s", rest, lines)
	}

	// ada's factor, sealed under the target's key for her new id, works
	// as it did: the step last accepted is refused (replay), a used
	// recovery code too; an unused one, and the next step's code, pass.
	sealed := storedFactor(t, targetStore, "beta", created[0].ID)
	raw, err := totpEncodingForTest.DecodeString(secret)
	if err != nil {
		t.Fatal(err)
	}
	if sealed.Secret[0] != 1 || bytes.Contains(sealed.Secret, raw) {
		t.Errorf("the imported secret is stored as %x: want it sealed", sealed.Secret)
	}
	challenge := func() string {
		t.Helper()
		_, err := tws.Authenticate(ctx, "ada", adaPassword)
		identitytest.WantCode(t, err, identity.CodeMFARequired)
		return err.(*identity.Error).Challenge
	}
	e.clock.Set(t0.Add(30 * time.Second)) // the step of ada's last code
	ch := challenge()
	_, err = tws.VerifySecondFactor(ctx, ch, e.code(secret, 0))
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	_, err = tws.VerifySecondFactor(ctx, ch, codes[1])
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := tws.VerifySecondFactor(ctx, ch, codes[2]); err != nil {
		t.Errorf("an unused recovery code: %v", err)
	}
	if _, err := tws.VerifySecondFactor(ctx, challenge(), e.code(secret, 30*time.Second)); err != nil {
		t.Errorf("a code of the next step: %v", err)
	}
	if st, err := tws.GetMFAStatus(ctx, created[0].ID); err != nil || st.RecoveryCodesLeft != 7 {
		t.Errorf("ada's MFAStatus = %+v, %v; want 7 recovery codes left", st, err)
	}

	// bob's password hash came along.
	if err := tws.EnableUser(ctx, created[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tws.Authenticate(ctx, "bob", "correct horse battery"); err != nil {
		t.Errorf("bob signs in: %v", err)
	}
}

// storedFactor reads a user's second factor straight from the store.
func storedFactor(t *testing.T, st store.Store, slug string, userID int64) store.SecondFactor {
	t.Helper()
	var f store.SecondFactor
	err := st.View(t.Context(), func(tx store.Tx) (err error) {
		f, err = tx.SecondFactor(slug, userID)
		return err
	})
	if err != nil {
		t.Fatalf("SecondFactor(%d): %v", userID, err)
	}
	return f
}

// TestExportUsersPages: ExportUsers reads the store a page at a time;
// users on both sides of the page boundaries come in id order, once.
func TestExportUsersPages(t *testing.T) {
	e := newTestEnv(t, nil)
	batch := make([]identity.ImportedUser, 2000)
	wantNames := []string{"ada"}
	for i := range batch {
		name := fmt.Sprintf("u%04d", i+1)
		batch[i] = identity.ImportedUser{Username: name, Email: name + "@example.com", FullName: "U"}
		wantNames = append(wantNames, name)
	}
	if _, err := e.ws.ImportUsers(e.ctx, batch); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, iu := range exportAll(t, e.ws) {
		names = append(names, iu.Username)
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("exported usernames (-want +got):\n%s", diff)
	}
}

// TestExportUsersErrors: fn's error as it is, after one call; a context
// that has ended; a secret the Service cannot open; a workspace that is
// gone.
func TestExportUsersErrors(t *testing.T) {
	kek := bytes.Repeat([]byte{3}, identity.KeyEncryptionKeySize)
	e := newTestEnv(t, &identity.Options{KeyEncryptionKey: kek})
	e.user("bob")
	stop := errors.New("stop")
	calls := 0
	err := e.ws.ExportUsers(e.ctx, func(identity.ImportedUser) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("ExportUsers with fn failing = %v after %d calls, want %v after 1", err, calls, stop)
	}
	var failing refusingWriter
	n, err := e.ws.ExportUsersJSONLines(e.ctx, &failing)
	if err != errExportWrite || n != 0 {
		t.Errorf("ExportUsersJSONLines to a failing writer = %d, %v; want 0, %v", n, err, errExportWrite)
	}

	ended, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.ws.ExportUsers(ended, func(identity.ImportedUser) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("ExportUsers with a cancelled context = %v", err)
	}

	e.enrol(e.ada.ID)
	noKey, err := identity.New(e.st, &identity.Options{Now: e.clock.Now, PasswordHashing: &cheapArgon2})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := noKey.GetWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	err = ws.ExportUsers(e.ctx, func(identity.ImportedUser) error { return nil })
	identitytest.WantCode(t, err, identity.CodeInternal)

	gone, err := identity.New(goneStore{memstore.New()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gws, err := gone.CreateWorkspace(e.ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = gws.ExportUsers(e.ctx, func(identity.ImportedUser) error { return nil })
	identitytest.WantCode(t, err, identity.CodeNotFound)
}

var errExportWrite = errors.New("disk full")

// refusingWriter refuses every write.
type refusingWriter struct{}

func (*refusingWriter) Write([]byte) (int, error) { return 0, errExportWrite }

// goneStore is a store whose reads find no workspace's users, as if the
// workspace had gone between the handle and the export.
type goneStore struct{ store.Store }

func (s goneStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(goneTx{tx}) })
}

type goneTx struct{ store.Tx }

func (goneTx) Users(slug string, _ store.UserQuery) ([]store.User, int, error) {
	return nil, 0, fmt.Errorf("workspace %q: %w", slug, store.ErrNotFound)
}

// TestImportedTOTPRules: the rules of ImportedTOTP, each limit on both
// sides, with the field each problem names.
func TestImportedTOTPRules(t *testing.T) {
	valid := func() *identity.ImportedTOTP {
		return &identity.ImportedTOTP{Secret: "JBSWY3DPEHPK3PXP", ConfirmedAt: time.Date(2021, 1, 2, 3, 4, 5, 0, time.UTC)}
	}
	hashes := func(n, size int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = bytes.Repeat([]byte{byte(i)}, size)
		}
		return out
	}
	problem := func(field, rule string) []identity.FieldError {
		return []identity.FieldError{{Field: field, Rule: rule}}
	}
	rows := []struct {
		try    string
		mod    func(*identity.ImportedTOTP)
		fields []identity.FieldError // nil: accepted
	}{
		{"secret of 10 bytes (16 characters)", func(f *identity.ImportedTOTP) { f.Secret = strings.Repeat("A", 16) }, nil},
		{"secret of 9 bytes (15 characters)", func(f *identity.ImportedTOTP) { f.Secret = strings.Repeat("A", 15) }, problem("users[1].totp.secret", "format")},
		{"secret of 64 bytes (103 characters)", func(f *identity.ImportedTOTP) { f.Secret = strings.Repeat("A", 103) }, nil},
		{"secret of 65 bytes (104 characters)", func(f *identity.ImportedTOTP) { f.Secret = strings.Repeat("A", 104) }, problem("users[1].totp.secret", "format")},
		{"secret in lower case", func(f *identity.ImportedTOTP) { f.Secret = "jbswy3dpehpk3pxp" }, nil},
		{"secret of 11 bytes with its padding", func(f *identity.ImportedTOTP) { f.Secret = strings.Repeat("A", 18) + "======" }, nil},
		{"secret with a 1, not base32", func(f *identity.ImportedTOTP) { f.Secret = "JBSWY3DPEHPK3PX1" }, problem("users[1].totp.secret", "format")},
		{"secret empty", func(f *identity.ImportedTOTP) { f.Secret = "" }, problem("users[1].totp.secret", "required")},
		{"confirmedAt zero", func(f *identity.ImportedTOTP) { f.ConfirmedAt = time.Time{} }, problem("users[1].totp.confirmedAt", "required")},
		{"lastStep 0", func(f *identity.ImportedTOTP) { f.LastStep = 0 }, nil},
		{"lastStep -1", func(f *identity.ImportedTOTP) { f.LastStep = -1 }, problem("users[1].totp.lastStep", "range")},
		{"10 recovery code hashes", func(f *identity.ImportedTOTP) { f.RecoveryCodes = hashes(10, 32) }, nil},
		{"11 recovery code hashes", func(f *identity.ImportedTOTP) { f.RecoveryCodes = hashes(11, 32) }, problem("users[1].totp.recoveryCodes", "max_length")},
		{"a recovery code hash of 31 bytes", func(f *identity.ImportedTOTP) { f.RecoveryCodes = append(hashes(1, 32), make([]byte, 31)) },
			problem("users[1].totp.recoveryCodes[1]", "format")},
		{"a recovery code hash of 33 bytes", func(f *identity.ImportedTOTP) { f.RecoveryCodes = [][]byte{make([]byte, 33)} },
			problem("users[1].totp.recoveryCodes[0]", "format")},
		{"everything wrong at once", func(f *identity.ImportedTOTP) {
			*f = identity.ImportedTOTP{Secret: "!", LastStep: -5, RecoveryCodes: hashes(11, 1)}
		}, []identity.FieldError{
			{Field: "users[1].totp.secret", Rule: "format"}, {Field: "users[1].totp.confirmedAt", Rule: "required"},
			{Field: "users[1].totp.lastStep", Rule: "range"}, {Field: "users[1].totp.recoveryCodes", Rule: "max_length"},
			{Field: "users[1].totp.recoveryCodes[0]", Rule: "format"}, {Field: "users[1].totp.recoveryCodes[1]", Rule: "format"},
			{Field: "users[1].totp.recoveryCodes[2]", Rule: "format"}, {Field: "users[1].totp.recoveryCodes[3]", Rule: "format"},
			{Field: "users[1].totp.recoveryCodes[4]", Rule: "format"}, {Field: "users[1].totp.recoveryCodes[5]", Rule: "format"},
			{Field: "users[1].totp.recoveryCodes[6]", Rule: "format"}, {Field: "users[1].totp.recoveryCodes[7]", Rule: "format"},
			{Field: "users[1].totp.recoveryCodes[8]", Rule: "format"}, {Field: "users[1].totp.recoveryCodes[9]", Rule: "format"},
			{Field: "users[1].totp.recoveryCodes[10]", Rule: "format"},
		}},
	}
	for _, row := range rows {
		t.Run(row.try, func(t *testing.T) {
			e := newTestEnv(t, nil)
			f := valid()
			row.mod(f)
			// The factor's user is second in the batch, with MFAEnabled
			// false: a factor turns it on.
			created, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{
				{Username: "first", Email: "first@example.com", FullName: "First"},
				{Username: "second", Email: "second@example.com", FullName: "Second", TOTP: f},
			})
			if row.fields != nil {
				identitytest.WantCode(t, err, identity.CodeInvalid)
				identitytest.WantFields(t, err, row.fields)
				return
			}
			if err != nil {
				t.Fatalf("ImportUsers: %v", err)
			}
			if !created[1].MFAEnabled || created[0].MFAEnabled {
				t.Errorf("MFAEnabled = %t, %t; want false for the user without a factor, true with one", created[0].MFAEnabled, created[1].MFAEnabled)
			}
			st, err := e.ws.GetMFAStatus(e.ctx, created[1].ID)
			if err != nil || !st.Enabled {
				t.Errorf("MFAStatus = %+v, %v; want a confirmed factor", st, err)
			}
		})
	}
}
