package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/internal/testutil"

	"github.com/identitylib/identity"
)

func TestWorkspaceCreateAndList(t *testing.T) {
	db := filepath.Join(t.TempDir(), "identity.db")
	r := mustRun(t, "-db", db, "workspace", "create", "acme")
	if r.stdout != "created workspace acme\n" || r.stderr != "" {
		t.Errorf("workspace create: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	mustRun(t, "-db", db, "workspace", "create", "beta-2")

	r = mustRun(t, "-db", db, "workspace", "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "SLUG") ||
		!strings.HasPrefix(lines[1], "acme ") || !strings.HasPrefix(lines[2], "beta-2 ") {
		t.Errorf("workspace list:\n%s", r.stdout)
	}
}

func TestWorkspaceCreateErrors(t *testing.T) {
	db, _ := newDB(t) // holds acme already
	invalid := func(slug string) string {
		return `identityd: invalid workspace slug "` + slug + `": use 1-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit` + "\n"
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // exact; "" checks only that something was said
	}{
		{"uppercase", []string{"Acme"}, exitError, invalid("Acme")},
		{"leading hyphen", []string{"--", "-acme"}, exitError, invalid("-acme")},
		{"trailing hyphen", []string{"acme-"}, exitError, invalid("acme-")},
		{"underscore", []string{"ac_me"}, exitError, invalid("ac_me")},
		{"empty", []string{""}, exitError, invalid("")},
		{"too long", []string{strings.Repeat("a", 64)}, exitError, invalid(strings.Repeat("a", 64))},
		{"duplicate", []string{"acme"}, exitError, "identityd: workspace \"acme\" already exists\n"},
		{"missing slug", nil, exitUsage, "identityd: workspace create: missing SLUG\n" +
			"Usage: identityd [-db FILE] workspace create SLUG\nRun 'identityd -h' for help.\n"},
		{"extra argument", []string{"a", "b"}, exitUsage, ""},
		{"flag-like slug", []string{"-acme"}, exitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-db", db, "workspace", "create"}, tt.args...)
			r := runCmd(t, args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if tt.stderr != "" && r.stderr != tt.stderr || r.stderr == "" {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
		})
	}
}

func TestInvalidSlugCreatesNoFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "identity.db")
	if r := runCmd(t, "-db", db, "workspace", "create", "Not Valid"); r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database file exists after a rejected slug (stat: %v)", err)
	}
}

func TestKeyCreate(t *testing.T) {
	db, _ := newDB(t)
	r := mustRun(t, "-db", db, "key", "create", "-workspace", "acme", "-scopes", "users:read, users:write", "-name", "ci")
	if !keyPattern.MatchString(r.stdout) {
		t.Fatalf("key create printed %q, want one line matching %s", r.stdout, keyPattern)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing", r.stderr)
	}
	key := strings.TrimSpace(r.stdout)

	svc := openDB(t, db)
	got, err := svc.VerifyAPIKey(context.Background(), key)
	if err != nil {
		t.Fatalf("the printed key does not verify: %v", err)
	}
	if got.Workspace != "acme" || got.Name != "ci" || !got.HasScope(identity.ScopeUsersRead) ||
		!got.HasScope(identity.ScopeUsersWrite) || len(got.Scopes) != 2 {
		t.Errorf("key = %+v", got)
	}
}

func TestKeyCreateErrors(t *testing.T) {
	db, _ := newDB(t)
	missing := filepath.Join(t.TempDir(), "missing.db")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring
	}{
		{"unknown scope", []string{"-workspace", "acme", "-scopes", "users:read,users:admin"}, exitError,
			`identityd: unknown scope "users:admin" (known scopes: users:read,users:write,`},
		{"empty scope", []string{"-workspace", "acme", "-scopes", "users:read,"}, exitError, `unknown scope ""`},
		{"duplicate scope", []string{"-workspace", "acme", "-scopes", "users:read,users:read"}, exitError,
			"identityd: invalid API key request: scopes[1] scope \"users:read\" is listed twice\n"},
		{"unknown workspace", []string{"-workspace", "nope", "-scopes", "users:read"}, exitError,
			"identityd: workspace \"nope\" does not exist\n"},
		{"missing workspace", []string{"-scopes", "users:read"}, exitUsage, "identityd: key create: -workspace is required\n"},
		{"missing scopes", []string{"-workspace", "acme"}, exitUsage, "identityd: key create: -scopes is required\n"},
		{"unknown flag", []string{"-workspace", "acme", "-scope", "users:read"}, exitUsage, "flag provided but not defined: -scope"},
		{"extra argument", []string{"-workspace", "acme", "-scopes", "users:read", "x"}, exitUsage, `unexpected argument "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "key", "create"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr containing %q",
					r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	t.Run("missing database", func(t *testing.T) {
		r := runCmd(t, "-db", missing, "key", "create", "-workspace", "acme", "-scopes", "users:read")
		if r.code != exitError || !strings.Contains(r.stderr, "database "+missing+" does not exist") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("key create created the database file (stat: %v)", err)
		}
	})
}

func TestKeyListAndRevoke(t *testing.T) {
	db, key := newDB(t)
	id := key[len("idk_") : len("idk_")+16]

	r := mustRun(t, "-db", db, "key", "list", "-workspace", "acme")
	if strings.Contains(r.stdout, key[len("idk_")+17:]) {
		t.Fatalf("key list shows the secret:\n%s", r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ID NAME SCOPES CREATED" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), id+" - "+allScopes()+" ") {
		t.Errorf("key list:\n%s", r.stdout)
	}

	r = mustRun(t, "-db", db, "key", "revoke", "-workspace", "acme", id)
	if r.stdout != "revoked api key "+id+"\n" {
		t.Errorf("key revoke printed %q", r.stdout)
	}
	if r := mustRun(t, "-db", db, "key", "list", "-workspace", "acme"); strings.Contains(r.stdout, id) {
		t.Errorf("the revoked key is still listed:\n%s", r.stdout)
	}

	r = runCmd(t, "-db", db, "key", "revoke", "-workspace", "acme", id)
	if r.code != exitError || !strings.Contains(r.stderr, `workspace acme has no api key "`+id+`"`) {
		t.Errorf("second revoke: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "key", "revoke", "-workspace", "acme"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "key revoke: missing ID") {
		t.Errorf("revoke without ID: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "key", "list"); r.code != exitUsage {
		t.Errorf("list without -workspace: exit %d, stderr %q", r.code, r.stderr)
	}

	svc := openDB(t, db)
	if _, err := svc.VerifyAPIKey(context.Background(), key); !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("the revoked key verifies: %v", err)
	}
}

func TestUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "identity.db")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring
	}{
		{"no command", nil, exitUsage, "Usage:\n  identityd [-db FILE] workspace create SLUG\n"},
		{"help flag", []string{"-h"}, exitOK, "identityd [-db FILE] serve [-addr HOST:PORT]"},
		{"help command", []string{"help"}, exitOK, "Scopes:\n  users:read\n"},
		{"unknown command", []string{"frob"}, exitUsage, "identityd: unknown command \"frob\"\n"},
		{"unknown subcommand", []string{"key", "frob"}, exitUsage,
			"identityd: unknown command \"key frob\"\nUsage: identityd [-db FILE] key create"},
		{"group alone", []string{"workspace"}, exitUsage, "identityd: \"workspace\" needs a subcommand\n"},
		{"unknown global flag", []string{"-database", db, "workspace", "list"}, exitUsage, "flag provided but not defined: -database"},
		{"command help", []string{"key", "create", "-h"}, exitOK, "-scopes SCOPES"},
		{"serve argument", []string{"serve", "now"}, exitUsage, `serve: unexpected argument "now"`},
		{"import batch", []string{"user", "import", "-workspace", "acme", "-batch", "10001"}, exitUsage, "-batch must be between 1 and 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, no stdout, stderr containing %q",
					r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a usage error created the database file (stat: %v)", err)
	}
}

// TestFlagsAfterArguments checks that a command's flags may follow its
// positional arguments, and that "--" ends the flags.
func TestFlagsAfterArguments(t *testing.T) {
	db, key := newDB(t)
	id := key[len("idk_") : len("idk_")+16]
	if r := mustRun(t, "-db", db, "role", "create", "-workspace", "acme", "admin", "-description", "Runs the place"); r.stdout != "1\n" {
		t.Errorf("role create with -description after NAME: stdout %q", r.stdout)
	}
	if r := mustRun(t, "-db", db, "role", "list", "-workspace", "acme"); r.stdout != "ID  NAME   DESCRIPTION\n1   admin  Runs the place\n" {
		t.Errorf("role list:\n%s", r.stdout)
	}
	if r := mustRun(t, "-db", db, "key", "revoke", id, "-workspace", "acme"); r.stdout != "revoked api key "+id+"\n" {
		t.Errorf("key revoke with -workspace after ID: stdout %q", r.stdout)
	}
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // exact, unless empty
	}{
		{"-- ends the flags", []string{"role", "create", "-workspace", "acme", "--", "-x"}, exitOK, "2\n", ""},
		{"a flag after --", []string{"role", "create", "-workspace", "acme", "--", "ops", "-description", "x"}, exitUsage, "",
			"identityd: role create: unexpected argument \"-description\"\n" +
				"Usage: identityd [-db FILE] role create -workspace SLUG NAME [-description TEXT]\nRun 'identityd -h' for help.\n"},
		{"an unknown flag after the arguments", []string{"role", "create", "-workspace", "acme", "ops", "-x"}, exitUsage, "",
			"flag provided but not defined: -x\n" +
				"Usage: identityd [-db FILE] role create -workspace SLUG NAME [-description TEXT]\n" +
				"  -description TEXT\n    \tan optional description TEXT\n  -workspace SLUG\n    \tthe SLUG of the workspace the role is for\n"},
		{"an argument too many between flags", []string{"role", "create", "ops", "-workspace", "acme", "dev"}, exitUsage, "",
			"identityd: role create: unexpected argument \"dev\"\n" +
				"Usage: identityd [-db FILE] role create -workspace SLUG NAME [-description TEXT]\nRun 'identityd -h' for help.\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db}, tt.args...)...)
			if r.code != tt.code || r.stdout != tt.stdout || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// TestSynopses checks that the synopsis of every command names each flag
// the command defines, and that the list of commands in
// docs/getting-started.md is the list identityd -h prints.
func TestSynopses(t *testing.T) {
	for _, c := range commands() {
		fs := c.flagSet(io.Discard)
		// -h stops every command after its flags are defined, before it
		// touches the database.
		if err := c.run(context.Background(), &env{dbPath: filepath.Join(t.TempDir(), "none.db")}, fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s -h: %v, want flag.ErrHelp", c.name, err)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if !regexp.MustCompile(`(^|[\[( ])-` + regexp.QuoteMeta(f.Name) + `([ =\])]|$)`).MatchString(c.args) {
				t.Errorf("the synopsis of %s lacks its flag -%s: %s", c.name, f.Name, c.synopsis())
			}
		})
	}

	guide, err := os.ReadFile("../../docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.Lines(string(guide)) {
		if strings.HasPrefix(line, "identityd [-db FILE] ") {
			syn, _, _ := strings.Cut(line, "#")
			listed = append(listed, strings.TrimSpace(syn))
		}
	}
	var want []string
	for _, c := range commands() {
		want = append(want, c.synopsis())
	}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("the command list of docs/getting-started.md differs from identityd -h (-want +got):\n%s", diff)
	}
}

// TestImportHelp checks that user import -h documents every field of an
// input line, and says that other fields are refused.
func TestImportHelp(t *testing.T) {
	r := runCmd(t, "user", "import", "-h")
	if r.code != exitOK {
		t.Fatalf("user import -h: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[identity.ImportedUser]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !regexp.MustCompile(`(?m)^  ` + name + ` `).MatchString(r.stderr) {
			t.Errorf("user import -h does not document the field %q", name)
		}
	}
	for _, want := range []string{"Any other field is refused", "$argon2id$", "$2b$", "$pbkdf2-sha256$", "pbkdf2_sha256$"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("user import -h lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestLockedDatabase(t *testing.T) {
	db, _ := newDB(t)
	openDB(t, db) // holds the lock for the rest of the test
	want := "identityd: database " + db + " is in use by another process (is identityd serve running?)\n"
	for _, args := range [][]string{
		{"workspace", "list"},
		{"workspace", "create", "beta"},
		{"key", "create", "-workspace", "acme", "-scopes", "users:read"},
		{"serve", "-addr", "127.0.0.1:0"},
	} {
		// Each gives up after the lock timeout (boltstore's tests time
		// it); runCmd's bound catches one that would wait on.
		r := runCmd(t, append([]string{"-db", db}, args...)...)
		if r.code != exitError || r.stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", args, r.code, r.stderr, exitError, want)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	db, _ := newDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr testutil.SyncBuffer
	code := run(ctx, []string{"-db", db, "workspace", "create", "beta"}, &stdout, &stderr)
	if code != exitError || stderr.String() != "identityd: interrupted\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
