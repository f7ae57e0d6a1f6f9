package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// The audit trail in identityd: the operator as the actor of commands,
// audit list and audit export.

// auditTrail reads the whole trail of acme through the library, oldest
// first.
func auditTrail(t *testing.T, db string) []identity.AuditRecord {
	t.Helper()
	var out []identity.AuditRecord
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		opts := &identity.AuditPageOptions{Limit: identity.MaxPageLimit, Oldest: true}
		for {
			page, err := ws.ListAuditRecords(ctx, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page.Records...)
			if !page.HasMore {
				return
			}
			opts.Cursor = page.NextCursor
		}
	})
	return out
}

// auditLines renders records as the lines of audit export.
func auditLines(t *testing.T, records []identity.AuditRecord) string {
	t.Helper()
	var b []byte
	for _, r := range records {
		var err error
		if b, err = appendAuditLine(b, r); err != nil {
			t.Fatal(err)
		}
	}
	return string(b)
}

// actionActor is what TestAuditOperatorActor compares of a record.
type actionActor struct {
	Action identity.AuditAction
	Actor  identity.Actor
}

// me is the operator that runs the tests, as the trail names it.
func me(t *testing.T) identity.Actor {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return identity.Actor{Kind: identity.ActorOperator, ID: strconv.Itoa(os.Geteuid()), Display: u.Username}
}

func TestOperatorActor(t *testing.T) {
	if got := operatorActor(os.Geteuid()); got != me(t) {
		t.Errorf("operatorActor(this user) = %+v, want %+v", got, me(t))
	}
	const unknown = 1 << 30 // no user of the host
	want := identity.Actor{Kind: identity.ActorOperator, ID: "1073741824", Display: "1073741824"}
	if got := operatorActor(unknown); got != want {
		t.Errorf("operatorActor(a uid without a user) = %+v, want %+v", got, want)
	}
}

// TestAuditOperatorActor: commands on the file, and commands through the
// admin socket of a running server, leave records whose actor is the
// operator who ran them.
func TestAuditOperatorActor(t *testing.T) {
	db, _ := newDB(t)
	mustRun(t, "-db", db, "role", "create", "-workspace", "acme", "admin")
	_, log, stop := serveInProcess(t, db)
	mustRun(t, "-db", db, "group", "create", "-workspace", "acme", "eng")
	mustRun(t, "-db", db, "backup", "-o", filepath.Join(t.TempDir(), "backup.db"))
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	if !strings.Contains(log.String(), `msg="admin command" command="group create"`) {
		t.Fatalf("group create did not run through the admin socket; log:\n%s", log)
	}
	op := me(t)
	want := []actionActor{
		{identity.AuditWorkspaceCreated, op},
		{identity.AuditAPIKeyCreated, op},
		{identity.AuditRoleCreated, op},
		{identity.AuditGroupCreated, op},
		{identity.AuditBackup, op},
	}
	var got []actionActor
	for _, r := range auditTrail(t, db) {
		got = append(got, actionActor{r.Action, r.Actor})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the trail's actions and actors (-want +got):\n%s", diff)
	}
}

// auditTimes finds the times of the table of audit list.
var auditTimes = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// auditTable renders a table of audit list for comparison: each time as
// TIME, and the columns (two spaces or more apart) separated by "|".
func auditTable(s string) string {
	s = auditTimes.ReplaceAllString(s, "TIME")
	return regexp.MustCompile(` {2,}`).ReplaceAllString(s, "|")
}

func TestAuditList(t *testing.T) {
	db, key := newDB(t)
	keyID := key[len("idk_") : len("idk_")+16]
	for _, args := range [][]string{
		{"role", "create", "-workspace", "acme", "admin"},
		{"role", "create", "-workspace", "acme", "dev"},
		{"group", "create", "-workspace", "acme", "eng"},
	} {
		mustRun(t, append([]string{"-db", db}, args...)...)
	}
	op := me(t)
	opCell := "operator:" + op.ID
	if op.Display != op.ID {
		opCell += " (" + op.Display + ")"
	}
	const header = "TIME|ACTOR|ACTION|TARGET|OUTCOME|REASON|ADDRESS\n"
	row := func(action, target string) string {
		return "TIME|" + opCell + "|" + action + "|" + target + "|success|-|-\n"
	}
	group := row("group.created", "group:1 (eng)")
	dev := row("role.created", "role:2 (dev)")
	admin := row("role.created", "role:1 (admin)")
	apiKey := row("api_key.created", "api_key:"+keyID)
	ws := row("workspace.created", "workspace:acme")

	for _, tt := range []struct {
		name           string
		args           []string
		stdout, stderr string
	}{
		{"all", nil, header + group + dev + admin + apiKey + ws, ""},
		{"an action", []string{"-action", "role.created"}, header + dev + admin, ""},
		{"a prefix", []string{"-action", "role."}, header + dev + admin, ""},
		{"a target", []string{"-target", "role:1"}, header + admin, ""},
		{"the workspace", []string{"-target", "workspace:acme"}, header + ws, ""},
		{"an actor", []string{"-actor", "operator:" + op.ID, "-action", "role."}, header + dev + admin, ""},
		{"another actor", []string{"-actor", "system:"}, header, ""},
		{"an outcome", []string{"-outcome", "failure"}, header, ""},
		{"since, in the future", []string{"-since", "2999-01-01T00:00:00Z"}, header, ""},
		{"until, in the past", []string{"-until", "2001-01-01T00:00:00+02:00"}, header, ""},
		{"a range", []string{"-since", "2001-01-01T00:00:00Z", "-until", "2999-01-01T00:00:00Z", "-target", "group:1"}, header + group, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, append([]string{"-db", db, "audit", "list", "-workspace", "acme"}, tt.args...)...)
			if diff := cmp.Diff(tt.stdout, auditTable(r.stdout)); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
		})
	}

	// Pages: -limit, then -cursor from what the first page said.
	r := mustRun(t, "-db", db, "audit", "list", "-workspace", "acme", "-limit", "2")
	if diff := cmp.Diff(header+group+dev, auditTable(r.stdout)); diff != "" {
		t.Errorf("the first page (-want +got):\n%s", diff)
	}
	m := regexp.MustCompile(`^more records: the next page is -cursor ([0-9a-f]{32})\n$`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("the first page's stderr %q names no cursor", r.stderr)
	}
	r = mustRun(t, "-db", db, "audit", "list", "-workspace", "acme", "-limit", "2", "-cursor", m[1])
	if diff := cmp.Diff(header+admin+apiKey, auditTable(r.stdout)); diff != "" {
		t.Errorf("the second page (-want +got):\n%s", diff)
	}

	// -json: the page.
	trail := auditTrail(t, db)
	r = mustRun(t, "-db", db, "audit", "list", "-workspace", "acme", "-limit", "2", "-json")
	var page identity.AuditPage
	if err := json.Unmarshal([]byte(r.stdout), &page); err != nil {
		t.Fatalf("-json: %v\n%s", err, r.stdout)
	}
	want := identity.AuditPage{Records: []identity.AuditRecord{trail[4], trail[3]}, HasMore: true, NextCursor: trail[3].ID}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Errorf("-json (-want +got):\n%s", diff)
	}
	if r.stderr != "" {
		t.Errorf("-json: stderr %q", r.stderr)
	}
}

func TestAuditListErrors(t *testing.T) {
	db, _ := newDB(t)
	synopsis := "Usage: identityd [-db FILE] audit list -workspace SLUG [-actor kind:id] [-target kind:id] [-action A] [-outcome success|failure] " +
		"[-since RFC3339] [-until RFC3339] [-limit N] [-cursor C] [-json]\nRun 'identityd -h' for help.\n"
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, exitUsage, "identityd: audit list: -workspace is required\n" + synopsis},
		{[]string{"-workspace", "acme", "-since", "yesterday"}, exitUsage,
			"identityd: audit list: -since \"yesterday\" is not an RFC 3339 time such as 2026-01-31T00:00:00Z\n" + synopsis},
		{[]string{"-workspace", "acme", "-until", "2026-01-31"}, exitUsage,
			"identityd: audit list: -until \"2026-01-31\" is not an RFC 3339 time such as 2026-01-31T00:00:00Z\n" + synopsis},
		{[]string{"-workspace", "acme", "-limit", "0"}, exitUsage, "identityd: audit list: -limit must be between 1 and 100\n" + synopsis},
		{[]string{"-workspace", "acme", "-limit", "101"}, exitUsage, "identityd: audit list: -limit must be between 1 and 100\n" + synopsis},
		{[]string{"-workspace", "acme", "-action", "user.frobbed"}, exitError,
			"identityd: invalid audit query: action must be an action of the catalogue, or a prefix of some ending in \".\"\n"},
		{[]string{"-workspace", "acme", "-actor", "robot:7"}, exitError,
			"identityd: invalid audit query: actor must be a kind of actor: api_key, operator, user, client or system\n"},
		{[]string{"-workspace", "acme", "-actor", "system"}, exitError,
			"identityd: invalid audit query: actor must be KIND:ID, such as user:42, or KIND: for one without an id, such as system:\n"},
		{[]string{"-workspace", "acme", "-target", "user"}, exitError,
			"identityd: invalid audit query: target must be KIND:ID, such as user:42, or KIND: for one without an id, such as system:\n"},
		{[]string{"-workspace", "acme", "-outcome", "maybe"}, exitError, "identityd: invalid audit query: outcome must be success or failure\n"},
		{[]string{"-workspace", "acme", "-cursor", "next"}, exitError, "identityd: invalid audit query: cursor must be the nextCursor of a page\n"},
		{[]string{"-workspace", "nope"}, exitError, "identityd: workspace \"nope\" does not exist\n"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "audit", "list"}, tt.args...)...)
			if r.code != tt.code || r.stdout != "" || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestAuditCells(t *testing.T) {
	for _, tt := range []struct {
		kind, id, display string
		want              string
	}{
		{"system", "", "", "system"},
		{"workspace", "acme", "acme", "workspace:acme"},
		{"user", "42", "ada", "user:42 (ada)"},
		{"client", "idc_1", "Acme Corp", "client:idc_1 (Acme Corp)"},
		{"user", "", "ghost@example.com", "user (ghost@example.com)"},
		{"user", "", "a\tb", `"user (a\tb)"`},
		{"user", "", "\x1b[2Jgone", `"user (\x1b[2Jgone)"`},
		{"user", "7", "zoë", "user:7 (zoë)"},
	} {
		if got := auditParty(tt.kind, tt.id, tt.display); got != tt.want {
			t.Errorf("auditParty(%q, %q, %q) = %s, want %s", tt.kind, tt.id, tt.display, got, tt.want)
		}
	}
	for in, want := range map[string]string{"": "-", "wrong_password": "wrong_password", "a\nb": `"a\nb"`} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestAuditExport exports a trail of more than one page, whole and
// -since a time, to standard output and to a file, on the file and
// through the admin socket: the lines are the records oldest first, the
// same every way.
func TestAuditExport(t *testing.T) {
	db, _ := newDB(t)
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		for i := range 2*identity.MaxPageLimit + 10 {
			if _, err := ws.CreateRole(ctx, identity.NewRole{Name: fmt.Sprintf("role%03d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	})
	trail := auditTrail(t, db)
	if len(trail) != 2*identity.MaxPageLimit+12 {
		t.Fatalf("the trail has %d records, want %d", len(trail), 2*identity.MaxPageLimit+12)
	}
	all := auditLines(t, trail)
	since := trail[150].Time
	first := 150
	for first > 0 && !trail[first-1].Time.Before(since) {
		first-- // records of the same microsecond
	}
	fromSince := auditLines(t, trail[first:])
	dir := t.TempDir()

	check := func(how string) {
		t.Helper()
		r := mustRun(t, "-db", db, "audit", "export", "-workspace", "acme")
		if r.stdout != all || r.stderr != "" {
			t.Errorf("%s: audit export: %d bytes, stderr %q; want the %d records", how, len(r.stdout), r.stderr, len(trail))
		}
		r = mustRun(t, "-db", db, "audit", "export", "-workspace", "acme", "-since", since.Format("2006-01-02T15:04:05.999999Z07:00"))
		if r.stdout != fromSince {
			t.Errorf("%s: audit export -since: %d lines, want %d", how, strings.Count(r.stdout, "\n"), len(trail)-first)
		}
		out := filepath.Join(dir, how+".jsonl")
		r = mustRun(t, "-db", db, "audit", "export", "-workspace", "acme", "-o", out)
		if want := fmt.Sprintf("exported %d audit records from workspace acme\n", len(trail)); r.stdout != "" || r.stderr != want {
			t.Errorf("%s: audit export -o: stdout %q, stderr %q, want %q", how, r.stdout, r.stderr, want)
		}
		got, err := os.ReadFile(out)
		if err != nil || string(got) != all {
			t.Errorf("%s: the file of audit export -o: %v, %d bytes, want %d", how, err, len(got), len(all))
		}
		if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: the file of audit export -o: %v, %v; want mode 0600", how, fi, err)
		}
	}
	check("on the file")
	_, log, stop := serveInProcess(t, db)
	check("through the socket")
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	if n := strings.Count(log.String(), `msg="admin command" command="audit export"`); n != 3 {
		t.Errorf("%d exports ran through the admin socket, want 3; log:\n%s", n, log)
	}
}

func TestAuditExportErrors(t *testing.T) {
	db, _ := newDB(t)
	synopsis := "Usage: identityd [-db FILE] audit export -workspace SLUG [-since T] [-o FILE]\nRun 'identityd -h' for help.\n"
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, exitUsage, "identityd: audit export: -workspace is required\n" + synopsis},
		{[]string{"-workspace", "acme", "-since", "last week"}, exitUsage,
			"identityd: audit export: -since \"last week\" is not an RFC 3339 time such as 2026-01-31T00:00:00Z\n" + synopsis},
		{[]string{"-workspace", "acme", "-o", db}, exitError, "identityd: " + db + " is the database itself: write the export to another file\n"},
		{[]string{"-workspace", "nope"}, exitError, "identityd: workspace \"nope\" does not exist\n"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "audit", "export"}, tt.args...)...)
			if r.code != tt.code || r.stdout != "" || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestAuditMetrics: identityd metrics, through the admin socket, counts
// the records the server committed by action.
func TestAuditMetrics(t *testing.T) {
	db, key := newDB(t)
	base, log, stop := serveInProcess(t, db)
	createUser(t, base, key, "ada")
	createUser(t, base, key, "grace")
	mustRun(t, "-db", db, "role", "create", "-workspace", "acme", "admin")
	got := parseExposition(t, mustRun(t, "-db", db, "metrics").stdout)
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	for name, want := range map[string]float64{
		`identity_audit_records_total{action="user.created"}`:      2,
		`identity_audit_records_total{action="role.created"}`:      1,
		`identity_audit_records_total{action="workspace.created"}`: 0, // before serve started
		`identity_audit_records_total{action="sign_in.failed"}`:    0,
	} {
		if g, ok := got[name]; !ok {
			t.Errorf("no sample %s", name)
		} else if g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
	for _, a := range identity.AuditActions() {
		if _, ok := got[`identity_audit_records_total{action="`+string(a)+`"}`]; !ok {
			t.Errorf("no sample of the action %s", a)
		}
	}
}
