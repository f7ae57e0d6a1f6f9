package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/internal/testutil"
)

// user export, and user import of what it wrote.

// exportedTOTP is the totp member of a user export line: the secret
// JBSWY3DPEHPK3PXP, and two recovery code hashes (32 bytes of 1s and of
// 2s).
const exportedTOTP = `{"secret":"JBSWY3DPEHPK3PXP","confirmedAt":"2021-01-02T03:04:05.123456Z","lastStep":53651888,` +
	`"recoveryCodes":["AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI="]}`

// djangoHash is a PBKDF2 hash in Django's form, as an import carries.
const djangoHash = "pbkdf2_sha256$600000$k3vKQ9nN0hRz$MT4xK9hUS8rinrZV+Q1x/NDTQn3XCdOlNRqzAEsEnCU="

// bcryptHash is a bcrypt hash, as an import carries.
const bcryptHash = "$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"

// exportLine is user i of a generated workspace, written as user export
// writes it: the fields in their order, those at their default left out,
// attribute keys sorted, roles and groups by name in ascending id order
// (see createRolesAndGroups).
func exportLine(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"username":"user%06d","email":"user%06d@example.com","fullName":"Person %d"`, i, i, i)
	if hash := []string{testHash, djangoHash, bcryptHash, ""}[i%4]; hash != "" {
		fmt.Fprintf(&b, `,"passwordHash":%s`, strconv.Quote(hash))
	}
	if i%2 == 0 {
		b.WriteString(`,"emailVerified":true`)
	}
	if i%10 == 0 {
		b.WriteString(`,"disabled":true`)
	}
	totp := i%1000 == 7
	if i%5 == 0 || totp {
		b.WriteString(`,"mfaEnabled":true`)
	}
	created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 1001 * time.Millisecond)
	if i%3 == 0 {
		created = created.Add(time.Duration(i%1000+1) * time.Microsecond)
	}
	fmt.Fprintf(&b, `,"createdAt":%q`, created.Format(time.RFC3339Nano))
	if i%9 != 0 {
		fmt.Fprintf(&b, `,"attributes":{"department":"dept%d","employee_id":"%d","tier":"gold <&>"}`, i%50, i)
	}
	if i%6 != 0 {
		fmt.Fprintf(&b, `,"roles":["role%02d","role%02d"]`, 1+i%7, 10+i%3)
	}
	if i%4 != 0 {
		fmt.Fprintf(&b, `,"groups":["team%d","team%d"]`, 1+i%2, 3+i%3)
	}
	if totp {
		b.WriteString(`,"totp":` + exportedTOTP)
	}
	b.WriteString("}\n")
	return b.String()
}

// createRolesAndGroups creates, with run (identityd and its arguments
// after -db), the roles role01 to role12 and the groups team1 to team5 of
// the workspace slug, in that order: the role named roleNN has the id NN,
// and the group teamN the id N, so that exportLine's names are in id
// order.
func createRolesAndGroups(t *testing.T, slug string, run func(args ...string) result) {
	t.Helper()
	for i := 1; i <= 12; i++ {
		if r := run("role", "create", "-workspace", slug, fmt.Sprintf("role%02d", i)); r.stdout != fmt.Sprintln(i) {
			t.Fatalf("role create role%02d: stdout %q", i, r.stdout)
		}
	}
	for i := 1; i <= 5; i++ {
		if r := run("group", "create", "-workspace", slug, fmt.Sprintf("team%d", i)); r.stdout != fmt.Sprintln(i) {
			t.Fatalf("group create team%d: stdout %q", i, r.stdout)
		}
	}
}

// runPlain runs identityd built without the race detector to its end.
func runPlain(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procWait)
	defer cancel()
	var stdout, stderr testutil.SyncBuffer
	cmd := exec.CommandContext(ctx, plainBinary(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatalf("identityd %s: %v", strings.Join(args, " "), err)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

// TestExportImport100k imports 100,000 users into a workspace, exports
// them, imports the export into a second workspace and exports that: both
// exports are byte for byte the generated input. It runs identityd built
// without the race detector, since the work is the binary's and the
// race-instrumented build takes many times longer.
func TestExportImport100k(t *testing.T) {
	const n = 100000
	dir := t.TempDir()
	db := filepath.Join(dir, "identity.db")
	var in bytes.Buffer
	for i := 1; i <= n; i++ {
		in.WriteString(exportLine(i))
	}
	input := filepath.Join(dir, "users.jsonl")
	if err := os.WriteFile(input, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	mustPlain := func(args ...string) result {
		t.Helper()
		start := time.Now()
		r := runPlain(t, append([]string{"-db", db}, args...)...)
		if r.code != exitOK {
			t.Fatalf("identityd %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		t.Logf("identityd %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		return r
	}
	mustPlain("workspace", "create", "one")
	mustPlain("workspace", "create", "two")
	createRolesAndGroups(t, "one", mustPlain)
	createRolesAndGroups(t, "two", mustPlain)

	if r := mustPlain("user", "import", "-workspace", "one", "-file", input); r.stdout != "imported 100000 users into workspace one\n" {
		t.Errorf("import into one: stdout %q", r.stdout)
	}
	first := filepath.Join(dir, "one.jsonl")
	if r := mustPlain("user", "export", "-workspace", "one", "-o", first); r.stdout != "" || r.stderr != "exported 100000 users from workspace one\n" {
		t.Errorf("export of one: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	firstBytes, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "the export of one", in.String(), string(firstBytes))

	mustPlain("user", "import", "-workspace", "two", "-file", first)
	r := mustPlain("user", "export", "-workspace", "two")
	if r.stderr != "" {
		t.Errorf("export to standard output: stderr %q", r.stderr)
	}
	sameLines(t, "the export of two", string(firstBytes), r.stdout)
}

// sameLines fails the test unless got is want, naming the first line
// that differs.
func sameLines(t *testing.T, what, want, got string) {
	t.Helper()
	if got == want {
		return
	}
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			t.Fatalf("%s differs at line %d:\n got %s\nwant %s", what, i+1, g[i], w[i])
		}
	}
	t.Fatalf("%s has %d lines, want %d", what, len(g)-1, len(w)-1)
}

// TestUserExport: standard output and -o, with the secret of a sealed
// TOTP factor opened; a failed export leaves the file as it was and no
// temporary file; the usage errors.
func TestUserExport(t *testing.T) {
	db, _ := newDB(t)
	dir := t.TempDir()
	t.Setenv(kekEnv, strings.Repeat("ab", 32))
	createRolesAndGroups(t, "acme", func(args ...string) result { return mustRun(t, append([]string{"-db", db}, args...)...) })
	lines := exportLine(1) + exportLine(7) + exportLine(30)
	mustRun(t, "-db", db, "user", "import", "-workspace", "acme", "-file", writeLines(t, strings.TrimSuffix(lines, "\n")))
	if got := mustRun(t, "-db", db, "user", "export", "-workspace", "acme").stdout; got != lines {
		t.Errorf("user export:\n%s\nwant\n%s", got, lines)
	}

	out := filepath.Join(dir, "acme.jsonl")
	r := mustRun(t, "-db", db, "user", "export", "-workspace", "acme", "-o", out)
	if r.stdout != "" || r.stderr != "exported 3 users from workspace acme\n" {
		t.Errorf("user export -o: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	written, err := os.ReadFile(out)
	if err != nil || string(written) != lines {
		t.Errorf("user export -o wrote (%v):\n%s\nwant\n%s", err, written, lines)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the export's mode: %v, %v; want -rw-------", fi.Mode(), err)
	}

	// Without the key, the sealed secret of user 7 does not open: the
	// export fails and the file is as it was.
	if err := os.WriteFile(out, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(kekEnv, "")
	r = runCmd(t, "-db", db, "user", "export", "-workspace", "acme", "-o", out)
	if r.code != exitError || !strings.Contains(r.stderr, "identityd: internal error: the TOTP secret of user 2: ") {
		t.Errorf("user export without the key: exit %d, stderr %q", r.code, r.stderr)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "old\n" {
		t.Errorf("after a failed export the file holds %q (%v), want it as it was", got, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Errorf("after a failed export the directory holds %v (%v), want the file only", entries, err)
	}

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no workspace", nil, exitUsage, "-workspace is required"},
		{"unknown workspace", []string{"-workspace", "nope"}, exitError, "identityd: workspace \"nope\" does not exist\n"},
		{"a directory that does not exist", []string{"-workspace", "acme", "-o", filepath.Join(dir, "none", "x.jsonl")}, exitError, "no such file or directory"},
		{"an argument", []string{"-workspace", "acme", "extra"}, exitUsage, "extra"},
		{"the database file", []string{"-workspace", "acme", "-o", db}, exitError, "is the database itself"},
	} {
		r := runCmd(t, append([]string{"-db", db, "user", "export"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.stderr) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, r.code, r.stdout, r.stderr, c.code, c.stderr)
		}
	}
}

// TestExportHelp: user export -h warns about what the file holds; user
// import -h documents the fields of totp.
func TestExportHelp(t *testing.T) {
	r := runCmd(t, "user", "export", "-h")
	for _, want := range []string{"-o FILE", "in the clear", "Guard it like the database", "IDENTITYD_KEY_ENCRYPTION_KEY"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("user export -h lacks %q:\n%s", want, r.stderr)
		}
	}
	r = runCmd(t, "user", "import", "-h")
	for _, field := range []string{"secret", "confirmedAt", "lastStep", "recoveryCodes"} {
		if !strings.Contains(r.stderr, "\n                   "+field+" ") {
			t.Errorf("user import -h does not document totp.%s:\n%s", field, r.stderr)
		}
	}
}
