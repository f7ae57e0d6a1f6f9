package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// passkeyUsers is a user import file: ada with two passkeys (one of a
// well-known, synced authenticator, used; one device-bound, never used),
// bob with none.
const passkeyUsers = `{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace","passkeyHandle":"aGFuZGxlLW9mLWFkYQ",` +
	`"passkeys":[{"id":"AQID","name":"Laptop","publicKey":"a2V5","aaguid":"fbfc3007-154e-4ecc-8c0b-6e020557d7bd",` +
	`"backupEligible":true,"backupState":true,"createdAt":"2026-01-02T03:04:05Z","lastUsedAt":"2026-02-03T04:05:06Z"},` +
	`{"id":"BA","name":"Security key","publicKey":"a2V5Mg","signCount":7,"createdAt":"2026-01-05T00:00:00Z"}]}
{"username":"bob","email":"bob@example.com","fullName":"Bob"}
`

// passkeySteps are the commands of TestUserPasskeys and what each prints.
func passkeySteps(file string) []struct {
	args           []string
	code           int
	stdout, stderr string
} {
	type step = struct {
		args           []string
		code           int
		stdout, stderr string
	}
	return []step{
		{args: []string{"user", "import", "-workspace", "acme", "-file", file}, stdout: "imported 2 users into workspace acme\n"},
		{args: []string{"user", "passkeys", "-workspace", "acme", "ada"}, stdout: "" +
			"ID    NAME          CREATED               LAST USED             AUTHENTICATOR    SYNCED\n" +
			"AQID  Laptop        2026-01-02T03:04:05Z  2026-02-03T04:05:06Z  iCloud Keychain  yes\n" +
			"BA    Security key  2026-01-05T00:00:00Z  -                     -                no\n"},
		{args: []string{"user", "passkeys", "-workspace", "acme", "2"}, stdout: "ID  NAME  CREATED  LAST USED  AUTHENTICATOR  SYNCED\n"},
		{args: []string{"user", "passkeys", "-workspace", "acme", "nobody"}, code: exitError,
			stderr: "identityd: workspace acme has no user with username \"nobody\"\n"},
		{args: []string{"user", "passkeys", "-workspace", "acme"}, code: exitUsage,
			stderr: "identityd: user passkeys: missing USER\nUsage: identityd [-db FILE] user passkeys -workspace SLUG USER\nRun 'identityd -h' for help.\n"},
	}
}

// runPasskeySteps runs passkeySteps with run and checks each output.
func runPasskeySteps(t *testing.T, run func(args ...string) result) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "users.jsonl")
	if err := os.WriteFile(file, []byte(passkeyUsers), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, s := range passkeySteps(file) {
		r := run(s.args...)
		if r.code != s.code || r.stdout != s.stdout || r.stderr != s.stderr {
			t.Errorf("step %d: identityd %s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
				i, strings.Join(s.args, " "), r.code, r.stdout, r.stderr, s.code, s.stdout, s.stderr)
		}
	}
}

// TestUserPasskeys lists imported passkeys on a database file.
func TestUserPasskeys(t *testing.T) {
	db, _ := newDB(t)
	runPasskeySteps(t, func(args ...string) result { return runCmd(t, append([]string{"-db", db}, args...)...) })
}

// TestAdminSocketUserPasskeys runs the same commands through the admin
// socket of a running server, which logs them.
func TestAdminSocketUserPasskeys(t *testing.T) {
	skipShort(t)
	db, _ := newDB(t)
	p := startServe(t, db)
	runPasskeySteps(t, func(args ...string) result { return runBinary(t, append([]string{"-db", db}, args...)...) })
	if want := `msg="admin command" command="user passkeys"`; !strings.Contains(p.log.String(), want) {
		t.Errorf("the server's log has no %s; log:\n%s", want, p.log)
	}
}
