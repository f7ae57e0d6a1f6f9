package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
)

// The tests of the admin socket: the commands of identityd, run while
// identityd serve holds the database, run in the server.

// rawClientEnv, when set in the environment of the test binary, makes it
// a bare client of the admin socket it names (see init): it sends
// "workspace list" without the client's checks, so that the server's own
// check of its peer can be seen.
const rawClientEnv = "IDENTITYD_TEST_RAW_ADMIN_CLIENT"

func init() {
	path := os.Getenv(rawClientEnv)
	if path == "" {
		return
	}
	os.Exit(rawClient(path))
}

// rawClient sends "workspace list" to the admin socket at path, copies
// what the server says to standard error and returns the exit status it
// sends.
func rawClient(path string) int {
	conn, err := net.Dial("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 99
	}
	req, _ := json.Marshal(adminRequest{Protocol: adminProtocol, Args: []string{"workspace", "list"}})
	if err := writeFrame(conn, frame{typ: frameRun, payload: req}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 99
	}
	for {
		f, err := readFrame(conn)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 99
		}
		switch f.typ {
		case frameStderr:
			os.Stderr.Write(f.payload)
		case frameExit:
			return int(f.payload[0])
		default:
			fmt.Fprintf(os.Stderr, "unexpected frame %q\n", f.typ)
			return 99
		}
	}
}

// execIn runs the binary bin in dir (the test's working directory if "")
// with stdin as standard input. It does not touch t, so that any
// goroutine may call it.
func execIn(bin, dir string, stdin io.Reader, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), procWait)
	defer cancel()
	var stdout, stderr testutil.SyncBuffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, stdin, &stdout, &stderr
	if err := cmd.Run(); err != nil && !errors.As(err, new(*exec.ExitError)) {
		return result{}, fmt.Errorf("identityd %s: %v", strings.Join(args, " "), err)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}, nil
}

// mustRunBinary runs the binary and fails the test unless it succeeds.
func mustRunBinary(t *testing.T, args ...string) result {
	t.Helper()
	r := runBinary(t, args...)
	if r.code != exitOK {
		t.Fatalf("identityd %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// importLine is the user import line of a plain user.
func importLine(name string) string {
	return fmt.Sprintf(`{"username":%q,"email":"%s@example.com","fullName":"User %s"}`, name, name, name)
}

// usersTotal returns the number of users of acme, over the API.
func usersTotal(t *testing.T, base, key string) int {
	t.Helper()
	status, body := call(t, http.MethodGet, base+"/t/acme/api/v1/users?limit=1", key, nil)
	var page struct{ Meta struct{ Total int } }
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil {
		t.Fatalf("list users: %d %s", status, body)
	}
	return page.Meta.Total
}

// keyID returns the id of the key named name in key list's output.
func keyID(t *testing.T, list, name string) string {
	t.Helper()
	for line := range strings.Lines(list) {
		if f := strings.Fields(line); len(f) > 1 && f[1] == name {
			return f[0]
		}
	}
	t.Fatalf("no key %s in key list:\n%s", name, list)
	return ""
}

// TestAdminSocketKeyRevoke revokes a key through the socket of a running
// server: the server refuses it from the very next request.
func TestAdminSocketKeyRevoke(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)
	r := mustRunBinary(t, "-db", db, "key", "create", "-workspace", "acme", "-scopes", "users:read", "-name", "doomed")
	if !keyPattern.MatchString(r.stdout) || r.stderr != "" {
		t.Fatalf("key create through the socket: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	doomed := strings.TrimSpace(r.stdout)
	users := p.base + "/t/acme/api/v1/users"
	if status, body := call(t, http.MethodGet, users, doomed, nil); status != http.StatusOK {
		t.Fatalf("GET users with the new key: %d %s", status, body)
	}
	id := keyID(t, mustRunBinary(t, "-db", db, "key", "list", "-workspace", "acme").stdout, "doomed")

	r = mustRunBinary(t, "-db", db, "key", "revoke", "-workspace", "acme", id)
	if want := "revoked api key " + id + "\n"; r.stdout != want {
		t.Errorf("key revoke: stdout %q, want %q", r.stdout, want)
	}
	if status, body := call(t, http.MethodGet, users, doomed, nil); status != http.StatusUnauthorized {
		t.Errorf("GET users with the revoked key: %d %s, want 401", status, body)
	}
	if status, body := call(t, http.MethodGet, users, key, nil); status != http.StatusOK {
		t.Errorf("GET users with the other key: %d %s, want 200", status, body)
	}
}

// TestAdminSocketConcurrentCommands runs key create and workspace list
// while a user import, through the socket too, waits for the rest of its
// input in the server: both finish, and so does the import.
func TestAdminSocketConcurrentCommands(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)
	bin := binary(t)

	imp := exec.Command(bin, "-db", db, "user", "import", "-workspace", "acme")
	var impOut, impErr testutil.SyncBuffer
	imp.Stdout, imp.Stderr = &impOut, &impErr
	stdin, err := imp.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	impDone := make(chan error, 1)
	go func() { impDone <- imp.Wait() }()
	t.Cleanup(func() {
		_ = imp.Process.Kill()
		<-impDone
	})
	const total = 3000
	var lines []string
	for i := range total {
		lines = append(lines, importLine(fmt.Sprintf("imported%04d", i)))
	}
	half := strings.Join(lines[:total/2], "\n") + "\n"
	// Half the input is more than a pipe holds, so once it is written
	// the client has read from the pipe, which it does only when the
	// import, running in the server, asks: the import is under way.
	if len(half) <= 64<<10 {
		t.Fatalf("the first half of the input is %d bytes, not more than a pipe holds", len(half))
	}
	if _, err := io.WriteString(stdin, half); err != nil {
		t.Fatalf("writing the import's input: %v; stderr:\n%s", err, impErr.String())
	}

	var wg sync.WaitGroup
	results := make([]result, 2)
	errs := make([]error, 2)
	for i, args := range [][]string{
		{"-db", db, "key", "create", "-workspace", "acme", "-scopes", "users:read", "-name", "meanwhile"},
		{"-db", db, "workspace", "list"},
	} {
		wg.Go(func() { results[i], errs[i] = execIn(bin, "", nil, args...) })
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil || r.code != exitOK || r.stderr != "" {
			t.Errorf("command %d while the import ran: exit %d, %v, stderr:\n%s", i, r.code, errs[i], r.stderr)
		}
	}
	if !keyPattern.MatchString(results[0].stdout) {
		t.Errorf("key create printed %q", results[0].stdout)
	}
	if !strings.Contains(results[1].stdout, "\nacme ") {
		t.Errorf("workspace list printed %q", results[1].stdout)
	}
	select {
	case err := <-impDone:
		t.Fatalf("the import ended before its input did: %v; stderr:\n%s", err, impErr.String())
	default:
	}

	if _, err := io.WriteString(stdin, strings.Join(lines[total/2:], "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := <-impDone; err != nil {
		t.Fatalf("user import: %v; stderr:\n%s", err, impErr.String())
	}
	impDone <- nil // for the cleanup
	if want := fmt.Sprintf("imported %d users into workspace acme\n", total); impOut.String() != want {
		t.Errorf("user import: stdout %q, want %q", impOut.String(), want)
	}
	if got := usersTotal(t, p.base, key); got != total {
		t.Errorf("the server has %d users, want %d", got, total)
	}
	meanwhile := strings.TrimSpace(results[0].stdout)
	if status, body := call(t, http.MethodGet, p.base+"/t/acme/api/v1/users", meanwhile, nil); status != http.StatusOK {
		t.Errorf("GET users with the key made during the import: %d %s", status, body)
	}
}

// TestAdminSocketWorkspaceList lists workspaces directly and through the
// socket, in this process and in the binary: the same output every way.
func TestAdminSocketWorkspaceList(t *testing.T) {
	db, _ := newDB(t)
	mustRun(t, "-db", db, "workspace", "create", "beta")
	direct := mustRun(t, "-db", db, "workspace", "list")
	startServe(t, db)
	for name, r := range map[string]result{
		"in this process": mustRun(t, "-db", db, "workspace", "list"),
		"binary":          mustRunBinary(t, "-db", db, "workspace", "list"),
	} {
		if diff := cmp.Diff(direct, r, cmp.AllowUnexported(result{})); diff != "" {
			t.Errorf("workspace list through the socket, %s (-direct +socket):\n%s", name, diff)
		}
	}
	r := mustRunBinary(t, "-db", db, "workspace", "create", "gamma")
	if r.stdout != "created workspace gamma\n" {
		t.Errorf("workspace create through the socket: stdout %q", r.stdout)
	}
	r = runBinary(t, "-db", db, "workspace", "create", "gamma")
	if want := "identityd: workspace \"gamma\" already exists\n"; r.code != exitError || r.stdout != "" || r.stderr != want {
		t.Errorf("workspace create of an existing one: exit %d, stdout %q, stderr %q; want %d, %q", r.code, r.stdout, r.stderr, exitError, want)
	}
	r = runBinary(t, "-db", db, "key", "create", "-workspace", "acme")
	if r.code != exitUsage || !strings.Contains(r.stderr, "key create: -scopes is required") {
		t.Errorf("usage error through the socket: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestAdminSocketOff starts serve without the socket: there is no socket
// file, and the other commands find the database in use, as before.
func TestAdminSocketOff(t *testing.T) {
	db, _ := newDB(t)
	startServeWith(t, db, nil, "-admin-socket=off")
	if _, err := os.Lstat(db + ".sock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket file with -admin-socket=off: %v", err)
	}
	r := runBinary(t, "-db", db, "workspace", "list")
	want := "identityd: database " + db + " is in use by another process (is identityd serve running?)\n"
	if r.code != exitError || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", r.code, r.stderr, exitError, want)
	}
}

// TestAdminSocketFiles imports users from a file, exports them and backs
// up through the socket, from another working directory than the
// server's: relative names are the client's, and the client reads and
// writes the files.
func TestAdminSocketFiles(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.jsonl"), []byte(importLine("ada")+"\n"+importLine("grace")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := binary(t)
	r, err := execIn(bin, dir, nil, "-db", db, "user", "import", "-workspace", "acme", "-file", "users.jsonl")
	if err != nil || r.code != exitOK || r.stdout != "imported 2 users into workspace acme\n" {
		t.Fatalf("user import -file through the socket: exit %d, %v, stdout %q, stderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	r, err = execIn(bin, dir, strings.NewReader(importLine("alan")+"\n"), "-db", db, "user", "import", "-workspace", "acme")
	if err != nil || r.code != exitOK || r.stdout != "imported 1 users into workspace acme\n" {
		t.Fatalf("user import from standard input through the socket: exit %d, %v, stdout %q, stderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	r, err = execIn(bin, dir, nil, "-db", db, "user", "import", "-workspace", "acme", "-file", "missing.jsonl")
	if want := "identityd: open missing.jsonl: no such file or directory\n"; err != nil || r.code != exitError || r.stderr != want {
		t.Errorf("user import of a missing file: exit %d, %v, stderr %q; want %q", r.code, err, r.stderr, want)
	}

	r, err = execIn(bin, dir, nil, "-db", db, "user", "export", "-workspace", "acme", "-o", "export.jsonl")
	if err != nil || r.code != exitOK || r.stderr != "exported 3 users from workspace acme\n" {
		t.Fatalf("user export -o through the socket: exit %d, %v, stderr %q", r.code, err, r.stderr)
	}
	exported, err := os.ReadFile(filepath.Join(dir, "export.jsonl"))
	if err != nil || strings.Count(string(exported), "\n") != 3 || !strings.Contains(string(exported), `"username":"grace"`) {
		t.Errorf("the export written through the socket (%v):\n%s", err, exported)
	}

	r, err = execIn(bin, dir, nil, "-db", db, "backup", "-o", "backup.db")
	if err != nil || r.code != exitOK || !strings.HasPrefix(r.stdout, "backed up "+db+" to backup.db (") {
		t.Fatalf("backup through the socket: exit %d, %v, stdout %q, stderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	fi, err := os.Stat(filepath.Join(dir, "backup.db"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the backup: %v, %v; want mode 0600", fi, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 3 {
		t.Errorf("the client's directory after the backup: %v, %v; want users.jsonl, export.jsonl and backup.db", entries, err)
	}
	r = runBinary(t, "-db", db, "backup", "-o", db)
	if want := "identityd: " + db + " is the database itself: write to another file\n"; r.code != exitError || r.stderr != want {
		t.Errorf("backup over the database: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if got := usersTotal(t, p.base, key); got != 3 {
		t.Errorf("the server has %d users after the failed backup, want 3", got)
	}

	// The backup, opened while the server still runs, holds the users.
	ctx := context.Background()
	ws, err := openDB(t, filepath.Join(dir, "backup.db")).GetWorkspace(ctx, "acme")
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
	if diff := cmp.Diff([]string{"ada", "grace", "alan"}, names); diff != "" {
		t.Errorf("users of the backup (-want +got):\n%s", diff)
	}
}

// TestAdminSocketSigningKeyRotate rotates with -alg ES256 through the
// socket: the command's option reaches the key it makes, though the
// server signs with RS256 keys.
func TestAdminSocketSigningKeyRotate(t *testing.T) {
	db, _ := newDB(t)
	p := startServe(t, db)
	mustRunBinary(t, "-db", db, "signing-key", "rotate", "-workspace", "acme", "-alg", "ES256")
	p.signal(t, os.Interrupt)
	if code := p.wait(t, procWait); code != exitOK {
		t.Fatalf("exit %d after SIGINT; log:\n%s", code, p.log)
	}
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		keys, err := ws.ListSigningKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, string(k.State)+" "+k.Algorithm)
		}
		slices.Sort(got)
		if !slices.Contains(got, "next ES256") {
			t.Errorf("keys after the rotation: %v, want a next ES256 key", got)
		}
	})
}

// TestAdminSocketLifecycle checks the socket file: a stale one is used by
// no command and replaced by serve; serve's is a socket of mode 0600,
// refuses to run serve, and is removed when serve stops.
func TestAdminSocketLifecycle(t *testing.T) {
	db, _ := newDB(t)
	sock := db + ".sock"
	// A socket left behind by a server that was killed: nothing answers.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	mustRun(t, "-db", db, "workspace", "create", "beta") // directly

	p := startServe(t, db)
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the admin socket: %v, %v; want a socket of mode 0600", fi, err)
	}
	ctx := context.Background()
	e := &env{dbPath: db, stdin: strings.NewReader("")}
	conn, err := e.dialAdmin(ctx)
	if err != nil || conn == nil {
		t.Fatalf("dialAdmin: %v, %v", conn, err)
	}
	var stdout, stderr bytes.Buffer
	e.stdout, e.stderr = &stdout, &stderr
	code := runRemote(ctx, conn, e, []string{"serve"})
	if want := "identityd: serve cannot run through the admin socket of a running server\n"; code != exitError || stdout.String() != "" || stderr.String() != want {
		t.Errorf("serve through the socket: exit %d, stdout %q, stderr %q; want %d, %q", code, stdout.String(), stderr.String(), exitError, want)
	}

	p.signal(t, os.Interrupt)
	if code := p.wait(t, procWait); code != exitOK {
		t.Fatalf("exit %d after SIGINT; log:\n%s", code, p.log)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket after serve stopped: %v", err)
	}
}

// TestAdminSocketOtherUser checks both ends: a client refuses a socket
// that another user owns, and the server refuses a client of another
// user. It runs as root, which may give files and processes to uid 65534.
func TestAdminSocketOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs as root only: it gives a socket and a process to uid 65534")
	}
	const nobody = 65534
	t.Run("client", func(t *testing.T) {
		db, _ := newDB(t)
		startServe(t, db)
		sock := db + ".sock"
		if err := os.Chown(sock, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		want := "identityd: admin socket " + sock + " belongs to uid 65534, not 0 (this user): refusing to use it; " +
			"run identityd as the user that runs identityd serve\n"
		for name, r := range map[string]result{
			"binary":          runBinary(t, "-db", db, "workspace", "list"),
			"in this process": runCmd(t, "-db", db, "workspace", "list"),
		} {
			if r.code != exitError || r.stdout != "" || r.stderr != want {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q", name, r.code, r.stdout, r.stderr, exitError, want)
			}
		}
	})
	t.Run("server", func(t *testing.T) {
		// A directory that uid 65534 may enter, for the socket and a copy
		// of this test binary, which acts as a bare client (see init).
		dir, err := os.MkdirTemp("", "adminsocket")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		code, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		client := filepath.Join(dir, "client")
		if err := os.WriteFile(client, code, 0o755); err != nil {
			t.Fatal(err)
		}
		db, _ := newDB(t)
		sock := filepath.Join(dir, "admin.sock")
		startServeWith(t, db, nil, "-admin-socket", sock)
		if err := os.Chmod(sock, 0o666); err != nil { // let it connect: the server must refuse
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), procWait)
		defer cancel()
		cmd := exec.CommandContext(ctx, client)
		cmd.Env = append(os.Environ(), rawClientEnv+"="+sock)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		want := "identityd: admin socket " + sock + ": uid 65534 may not run commands in this server, which runs as uid 0\n"
		if !errors.As(err, new(*exec.ExitError)) || cmd.ProcessState.ExitCode() != exitError || stderr.String() != want {
			t.Errorf("a client of uid 65534: %v, stderr %q; want exit %d, %q", err, stderr.String(), exitError, want)
		}
	})
}
