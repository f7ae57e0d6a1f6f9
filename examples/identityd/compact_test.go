package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCompact: identityd compact rewrites an idle file and reports its
// sizes; the workspace is still there. While serve holds the file it is
// refused with the way out, and the file is left as it was.
func TestCompact(t *testing.T) {
	db, _ := newDB(t)
	r := mustRun(t, "-db", db, "compact")
	if !regexp.MustCompile(`^compacted .*identity\.db: \d+ bytes before, \d+ after\n$`).MatchString(r.stdout) {
		t.Errorf("stdout %q", r.stdout)
	}
	if r := mustRun(t, "-db", db, "workspace", "list"); !strings.Contains(r.stdout, "acme") {
		t.Errorf("workspace list after compact: %q", r.stdout)
	}

	startServe(t, db)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "-db", db, "compact")
	if r.code != exitError || !strings.Contains(r.stderr, "is in use (is identityd serve running?): stop the server, then compact") {
		t.Errorf("compact of a served file: exit %d, stderr %q", r.code, r.stderr)
	}
	after, err := os.ReadFile(db)
	if err != nil || len(after) != len(before) {
		t.Errorf("the served file changed size: %d -> %d (%v)", len(before), len(after), err)
	}
	if r := runCmd(t, "-db", db+".none", "compact"); r.code != exitError || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("compact of a missing file: exit %d, stderr %q", r.code, r.stderr)
	}
}
