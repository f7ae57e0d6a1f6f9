package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands of roles and groups, and user roles.

// accessStep is one command of accessSteps and what it must print.
type accessStep struct {
	args           []string // after -db FILE
	code           int
	stdout, stderr string
}

// accessUsers is the user import of accessSteps: ada and carol plain,
// bob with the role admin (which the import creates, id 1) and the group
// ops (likewise, id 1). Their ids are 1, 2 and 3.
var accessUsers = strings.Join([]string{
	`{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace"}`,
	`{"username":"bob","email":"bob@example.com","fullName":"Bob","roles":["admin"],"groups":["ops"]}`,
	`{"username":"carol","email":"carol@example.com","fullName":"Carol"}`,
}, "\n") + "\n"

// accessSteps is a session of the commands of roles and groups on the
// workspace acme of newDB, with the user import of the file users, and
// the output each gives: the same on a file and through the admin socket.
func accessSteps(users string) []accessStep {
	const ws = "acme"
	ok := func(stdout string, args ...string) accessStep { return accessStep{args: args, stdout: stdout} }
	fail := func(stderr string, args ...string) accessStep {
		return accessStep{args: args, code: exitError, stderr: "identityd: " + stderr + "\n"}
	}
	usage := func(msg, synopsis string, args ...string) accessStep {
		return accessStep{args: args, code: exitUsage,
			stderr: "identityd: " + msg + "\nUsage: identityd [-db FILE] " + synopsis + "\nRun 'identityd -h' for help.\n"}
	}
	return []accessStep{
		ok("imported 3 users into workspace acme\n", "user", "import", "-workspace", ws, "-file", users),

		// Roles.
		ok("2\n", "role", "create", "-workspace", ws, "dev", "-description", "Writes the code"),
		ok("3\n", "role", "create", "-workspace", ws, "auditor"),
		fail("the role name is taken: name is taken by role 1", "role", "create", "-workspace", ws, "admin"),
		fail("invalid role: name must be lowercase letters, digits and . _ : -", "role", "create", "-workspace", ws, "Site Admin"),
		ok("ID  NAME     DESCRIPTION\n"+
			"1   admin    -\n"+
			"2   dev      Writes the code\n"+
			"3   auditor  -\n", "role", "list", "-workspace", ws),

		// Groups, members and their roles.
		ok("2\n", "group", "create", "-workspace", ws, "eng", "-description", "Engineering,\n\tall of it"),
		fail("the group name is taken: name is taken by group 1", "group", "create", "-workspace", ws, "ops"),
		ok("user 1 (ada) is a member of group 2 (eng)\n", "group", "add", "-workspace", ws, "eng", "ada"),
		ok("user 2 (bob) is a member of group 2 (eng)\n", "group", "add", "-workspace", ws, "2", "bob@example.com"),
		ok("user 1 (ada) is a member of group 1 (ops)\n", "group", "add", "-workspace", ws, "ops", "ADA"),
		ok("user 1 (ada) is a member of group 1 (ops)\n", "group", "add", "-workspace", ws, "OPS", "1"), // again
		ok("group 2 (eng) carries role 2 (dev)\n", "group", "grant", "-workspace", ws, "eng", "dev"),
		ok("group 1 (ops) carries role 1 (admin)\n", "group", "grant", "-workspace", ws, "ops", "admin"),
		ok("group 1 (ops) carries role 2 (dev)\n", "group", "grant", "-workspace", ws, "1", "2"),
		ok("group 1 (ops) carries role 2 (dev)\n", "group", "grant", "-workspace", ws, "ops", "dev"), // again
		ok("ID  NAME  MEMBERS  ROLES      DESCRIPTION\n"+
			"1   ops   2        admin,dev  -\n"+
			"2   eng   2        dev        Engineering, all of it\n", "group", "list", "-workspace", ws),
		ok("ID  NAME   SOURCES\n"+
			"1   admin  direct, group ops\n"+
			"2   dev    group ops, group eng\n", "user", "roles", "-workspace", ws, "bob"),
		ok("ID  NAME   SOURCES\n"+
			"1   admin  group ops\n"+
			"2   dev    group ops, group eng\n", "user", "roles", "-workspace", ws, "ada@example.com"),
		ok("ID  NAME  SOURCES\n", "user", "roles", "-workspace", ws, "3"),

		// Taking them back.
		ok("user 2 (bob) is no longer a member of group 1 (ops)\n", "group", "remove", "-workspace", ws, "ops", "bob"),
		fail("user 2 (bob) is not a member of group 1 (ops)", "group", "remove", "-workspace", ws, "ops", "bob"),
		ok("group 2 (eng) no longer carries role 2 (dev)\n", "group", "revoke", "-workspace", ws, "eng", "dev"),
		fail("group 2 (eng) does not carry role 2 (dev)", "group", "revoke", "-workspace", ws, "eng", "dev"),
		ok("ID  NAME   SOURCES\n"+
			"1   admin  direct\n", "user", "roles", "-workspace", ws, "bob"),

		// What is not there.
		fail(`workspace acme has no group "nope" (see identityd group list -workspace acme)`, "group", "add", "-workspace", ws, "nope", "bob"),
		fail(`workspace acme has no group 9 (see identityd group list -workspace acme)`, "group", "delete", "-workspace", ws, "9"),
		fail(`workspace acme has no user with username "dave"`, "group", "add", "-workspace", ws, "eng", "dave"),
		fail(`workspace acme has no user with email "dave@example.com"`, "group", "remove", "-workspace", ws, "eng", "dave@example.com"),
		fail("workspace acme has no user 42", "user", "roles", "-workspace", ws, "42"),
		fail(`workspace acme has no role 9 (see identityd role list -workspace acme)`, "group", "grant", "-workspace", ws, "eng", "9"),
		fail(`workspace acme has no role "root" (see identityd role list -workspace acme)`, "role", "delete", "-workspace", ws, "root"),
		fail(`workspace acme has no role 99999999999999999999 (see identityd role list -workspace acme)`, "role", "delete", "-workspace", ws, "99999999999999999999"),
		fail(`workspace "nope" does not exist`, "user", "roles", "-workspace", "nope", "bob"),

		// Deletion takes the assignments and memberships along.
		ok("deleted role 2 (dev)\n", "role", "delete", "-workspace", ws, "dev"),
		ok("deleted group 2 (eng)\n", "group", "delete", "-workspace", ws, "2"),
		ok("ID  NAME     DESCRIPTION\n"+
			"1   admin    -\n"+
			"3   auditor  -\n", "role", "list", "-workspace", ws),
		ok("ID  NAME  MEMBERS  ROLES  DESCRIPTION\n"+
			"1   ops   1        admin  -\n", "group", "list", "-workspace", ws),
		ok("ID  NAME   SOURCES\n"+
			"1   admin  group ops\n", "user", "roles", "-workspace", ws, "ada"),

		// Usage errors.
		usage("role create: missing NAME", "role create -workspace SLUG NAME [-description TEXT]", "role", "create", "-workspace", ws),
		usage("role delete: -workspace is required", "role delete -workspace SLUG ROLE", "role", "delete", "dev"),
		usage(`role list: unexpected argument "all"`, "role list -workspace SLUG", "role", "list", "-workspace", ws, "all"),
		usage("group add: missing USER", "group add -workspace SLUG GROUP USER", "group", "add", "-workspace", ws, "ops"),
		usage("group remove: missing GROUP", "group remove -workspace SLUG GROUP USER", "group", "remove", "-workspace", ws),
		usage("group grant: missing ROLE", "group grant -workspace SLUG GROUP ROLE", "group", "grant", "-workspace", ws, "ops"),
		usage(`group revoke: unexpected argument "dev"`, "group revoke -workspace SLUG GROUP ROLE", "group", "revoke", "-workspace", ws, "ops", "admin", "dev"),
		usage("user roles: missing USER", "user roles -workspace SLUG USER", "user", "roles", "-workspace", ws),
		{args: []string{"group", "frob"}, code: exitUsage, stderr: "identityd: unknown command \"group frob\"\n" +
			"Usage: identityd [-db FILE] group create -workspace SLUG NAME [-description TEXT]\n" +
			"       identityd [-db FILE] group list -workspace SLUG\n" +
			"       identityd [-db FILE] group delete -workspace SLUG GROUP\n" +
			"       identityd [-db FILE] group add -workspace SLUG GROUP USER\n" +
			"       identityd [-db FILE] group remove -workspace SLUG GROUP USER\n" +
			"       identityd [-db FILE] group grant -workspace SLUG GROUP ROLE\n" +
			"       identityd [-db FILE] group revoke -workspace SLUG GROUP ROLE\n" +
			"Run 'identityd -h' for help.\n"},
	}
}

// runAccessSteps runs accessSteps with run and checks each output.
func runAccessSteps(t *testing.T, run func(args ...string) result) {
	t.Helper()
	users := filepath.Join(t.TempDir(), "users.jsonl")
	if err := os.WriteFile(users, []byte(accessUsers), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, s := range accessSteps(users) {
		r := run(s.args...)
		if r.code != s.code || r.stdout != s.stdout || r.stderr != s.stderr {
			t.Errorf("step %d: identityd %s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
				i, strings.Join(s.args, " "), r.code, r.stdout, r.stderr, s.code, s.stdout, s.stderr)
		}
	}
}

// TestRolesAndGroups runs the commands of roles and groups on a database
// file.
func TestRolesAndGroups(t *testing.T) {
	db, _ := newDB(t)
	runAccessSteps(t, func(args ...string) result { return runCmd(t, append([]string{"-db", db}, args...)...) })
}

// TestAdminSocketRolesAndGroups runs the same commands, with the same
// output, through the admin socket of a running server: the binary finds
// the database held, so every command runs in the server, which logs it.
func TestAdminSocketRolesAndGroups(t *testing.T) {
	db, _ := newDB(t)
	p := startServe(t, db)
	runAccessSteps(t, func(args ...string) result { return runBinary(t, append([]string{"-db", db}, args...)...) })
	for _, name := range []string{"role create", "role list", "role delete", "group create", "group list", "group delete",
		"group add", "group remove", "group grant", "group revoke", "user roles"} {
		if want := fmt.Sprintf("msg=\"admin command\" command=%q", name); !strings.Contains(p.log.String(), want) {
			t.Errorf("the server's log has no %s; log:\n%s", want, p.log)
		}
	}
}
