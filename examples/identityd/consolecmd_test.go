package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// setupLink is a console setup link on the local server.
var setupLink = regexp.MustCompile(`^http://127\.0\.0\.1:\d+/console/setup\?token=idas_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`)

// get fetches a URL and returns its status and body.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServeConsole: serve mounts the console at /console/, prepares the
// operator workspace and, on a database without an operator, logs one
// line with the setup link of the first operator, who chooses their
// username on it; operator create, through
// the admin socket, invites more.
func TestServeConsole(t *testing.T) {
	db, _ := newDB(t)
	base, log, stop := serveWithDefaults(t, db) // the console is on by default
	line := waitFor(t, log, regexp.MustCompile(`msg="no console operator yet: set up the first one within an hour at" link="(\S+)"`), procWait)
	if !setupLink.MatchString(line[1]) || !strings.HasPrefix(line[1], base+"/console/") {
		t.Fatalf("link %q", line[1])
	}
	if status, body := get(t, line[1]); status != http.StatusOK || !strings.Contains(body, `id="username"`) {
		t.Errorf("the setup page: %d %s", status, body)
	}
	if status, _ := get(t, base+"/console/workspaces"); status != http.StatusOK { // the sign-in page of the provider, after redirects
		t.Errorf("the console: %d", status)
	}

	tests := []struct {
		args []string
		role string
	}{
		{[]string{"operator", "create", "bob"}, console.RoleAdmin},
		{[]string{"operator", "create", "carol", "-viewer"}, console.RoleViewer},
		{[]string{"operator", "create", "dave", "-workspace", "acme"}, "console.admin:acme"},
		{[]string{"operator", "create", "-viewer", "-workspace", "acme", "erin"}, "console.viewer:acme"},
	}
	for _, tt := range tests {
		r := mustRun(t, append([]string{"-db", db}, tt.args...)...)
		if !setupLink.MatchString(strings.TrimSuffix(r.stdout, "\n")) || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%v: stdout %q, want one setup link", tt.args, r.stdout)
		}
	}
	r := runCmd(t, "-db", db, "operator", "create", "frank", "-workspace", "nonesuch")
	if r.code != exitError || !strings.Contains(r.stderr, "nonesuch") {
		t.Errorf("unknown workspace: exit %d, stderr %q", r.code, r.stderr)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	if n := strings.Count(log.String(), "no console operator yet"); n != 1 {
		t.Errorf("the setup link is logged %d times, want once", n)
	}

	svc := openDB(t, db)
	ctx := context.Background()
	ops, err := svc.GetWorkspace(ctx, console.DefaultOperatorWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	set, err := ops.GetSettings(ctx)
	if err != nil || set.MFA != identity.MFARequired {
		t.Errorf("operator workspace settings %+v, %v: want MFA required", set, err)
	}
	for _, tt := range tests {
		name := tt.args[2]
		if strings.HasPrefix(name, "-") {
			name = tt.args[len(tt.args)-1]
		}
		l, err := ops.ListUsers(ctx, name, nil)
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("%s: %+v, %v", name, l, err)
		}
		roles, err := ops.ListUserRoles(ctx, l.Items[0].ID)
		if err != nil || len(roles) != 1 || roles[0].Name != tt.role || l.Items[0].Enabled {
			t.Errorf("%s: roles %+v, enabled %v, %v; want %s, disabled until the setup", name, roles, l.Items[0].Enabled, err, tt.role)
		}
	}
}

// TestServeWithoutConsole: -console=false serves no console, creates no
// operator workspace, and operator create says why it cannot work.
func TestServeWithoutConsole(t *testing.T) {
	db, _ := newDB(t)
	base, log, stop := serveInProcess(t, db, "-console=false")
	if status, body := get(t, base+"/console/"); status != http.StatusNotFound || strings.Contains(body, "console") {
		t.Errorf("GET /console/: %d %s", status, body)
	}
	r := runCmd(t, "-db", db, "operator", "create", "bob")
	if r.code != exitError || !strings.Contains(r.stderr, "operator create runs in identityd serve") {
		t.Errorf("operator create: exit %d, stderr %q", r.code, r.stderr)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exited %d; log:\n%s", code, log)
	}
	if strings.Contains(log.String(), "console operator") {
		t.Errorf("a setup link without a console:\n%s", log)
	}
	if _, err := openDB(t, db).GetWorkspace(context.Background(), console.DefaultOperatorWorkspace); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("the operator workspace: %v", err)
	}
}
