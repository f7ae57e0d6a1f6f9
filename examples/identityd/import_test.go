package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// testHash is a valid argon2id hash, as an import carries.
const testHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"

// writeLines writes a JSON Lines file and returns its path.
func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// userLine is the import line of a plain user.
func userLine(name string) string {
	return fmt.Sprintf(`{"username":%q,"email":"%s@example.com","fullName":"User %s","passwordHash":%q}`, name, name, name, testHash)
}

func TestUserImport(t *testing.T) {
	db, _ := newDB(t)
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		for _, name := range []string{"reader", "writer", "admin"} { // ids 1, 2, 3
			if _, err := ws.CreateRole(ctx, identity.NewRole{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
	})
	// Roles by id (3) and by name (writer, and auditor, which the import
	// creates), and a group the import creates.
	file := writeLines(t,
		`{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace","passwordHash":"`+testHash+`",`+
			`"emailVerified":true,"disabled":true,"attributes":{"dept":"math"},"roles":[3,"writer","auditor"],"groups":["eng"]}`,
		"",
		userLine("bob"),
		userLine("cy"),
		userLine("dee"),
		userLine("eve"),
	)
	r := mustRun(t, "-db", db, "user", "import", "-workspace", "acme", "-file", file, "-batch", "2")
	if r.stdout != "imported 5 users into workspace acme\n" || r.stderr != "" {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}

	ctx := context.Background()
	ws, err := openDB(t, db).GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	page, err := ws.ListUsers(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range page.Items {
		names = append(names, u.Username)
	}
	if diff := cmp.Diff([]string{"ada", "bob", "cy", "dee", "eve"}, names); diff != "" {
		t.Errorf("imported users mismatch (-want +got):\n%s", diff)
	}
	ada := page.Items[0]
	if !ada.EmailVerified || ada.Enabled || ada.FullName != "Ada Lovelace" {
		t.Errorf("ada = %+v", ada)
	}
	attrs, err := ws.ListAttributes(ctx, ada.ID)
	if err != nil || attrs["dept"] != "math" {
		t.Errorf("ada's attributes = %v, %v", attrs, err)
	}
	roles, err := ws.ListUserRoles(ctx, ada.ID)
	var roleNames []string
	for _, r := range roles {
		roleNames = append(roleNames, r.Name)
	}
	if diff := cmp.Diff([]string{"writer", "admin", "auditor"}, roleNames); err != nil || diff != "" {
		t.Errorf("ada's roles (-want +got):\n%s%v", diff, err)
	}
	groups, err := ws.ListUserGroups(ctx, ada.ID)
	if err != nil || len(groups) != 1 || groups[0].Name != "eng" {
		t.Errorf("ada's groups = %+v, %v; want eng", groups, err)
	}
}

func TestUserImportErrors(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		imported int    // users stored afterwards, in whole batches of 2
		stderr   string // a substring
	}{
		{"conflict in second batch",
			[]string{userLine("a1"), userLine("a2"), userLine("a3"), userLine("A1")},
			2, "the batch of lines 3-4 was not imported: usernames or emails of the batch are already in use\n" +
				"  line 4: username is already in use\n  line 4: email is already in use\n" +
				"imported 2 users into workspace acme before the error\n"},
		{"duplicate within batch",
			[]string{userLine("b1"), userLine("B1")},
			0, "  line 2: username is the same as the username on line 1\n"},
		{"invalid user",
			[]string{userLine("c1"), `{"username":"bad name","email":"nope","fullName":"X"}`},
			0, "the batch of lines 1-2 was not imported: invalid import\n  line 2: username"},
		{"invalid JSON in third batch",
			[]string{userLine("d1"), userLine("d2"), userLine("d3"), userLine("d4"), `{"username":`},
			4, "identityd: line 5: invalid JSON: unexpected EOF\nimported 4 users into workspace acme before the error\n"},
		{"unknown field",
			[]string{`{"username":"e1","email":"e1@example.com","full_name":"E"}`},
			0, `line 1: invalid JSON: json: unknown field "full_name"`},
		{"two values on a line",
			[]string{userLine("f1") + " {}"},
			0, "line 1: invalid JSON: more than one value on the line"},
		{"bad hash",
			[]string{`{"username":"g1","email":"g1@example.com","fullName":"G","passwordHash":"md5$abc"}`},
			0, "line 1: passwordHash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := newDB(t)
			file := writeLines(t, tt.lines...)
			r := runCmd(t, "-db", db, "user", "import", "-workspace", "acme", "-file", file, "-batch", "2")
			if r.code != exitError || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and stderr containing:\n%s", r.code, r.stdout, r.stderr, tt.stderr)
			}
			ctx := context.Background()
			ws, err := openDB(t, db).GetWorkspace(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			page, err := ws.ListUsers(ctx, "", nil)
			if err != nil || page.Total != tt.imported {
				t.Errorf("%d users stored, want %d (%v)", page.Total, tt.imported, err)
			}
		})
	}
}

func TestUserImportArguments(t *testing.T) {
	db, _ := newDB(t)
	file := writeLines(t, userLine("x"))
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing workspace", []string{"-file", file}, exitUsage, "user import: -workspace is required"},
		{"unknown workspace", []string{"-workspace", "nope", "-file", file}, exitError, `workspace "nope" does not exist`},
		{"missing file", []string{"-workspace", "acme", "-file", file + ".nope"}, exitError, "no such file or directory"},
		{"zero batch", []string{"-workspace", "acme", "-file", file, "-batch", "0"}, exitUsage, "-batch must be between 1 and 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "user", "import"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestUserImportFullBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a full batch")
	}
	db, _ := newDB(t)
	lines := make([]string, identity.MaxImportBatch+1)
	for i := range lines {
		lines[i] = userLine(fmt.Sprintf("user%05d", i))
	}
	r := mustRun(t, "-db", db, "user", "import", "-workspace", "acme", "-file", writeLines(t, lines...))
	if want := fmt.Sprintf("imported %d users into workspace acme\n", len(lines)); r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}
