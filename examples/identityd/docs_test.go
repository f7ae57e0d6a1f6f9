package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/identitylib/identity/internal/testutil"
)

// The tests in this file run the documentation: every shell block of
// README.md, CONTRIBUTING.md and docs/*.md that a reader is meant to paste
// runs here, against the identityd these tests build, so that the pages
// cannot drift from the program. CONTRIBUTING.md ("The documentation's
// shell blocks") describes the marks for readers and writers of the pages:
//
//	```sh run          run in the page's shell session, in its work directory
//	```sh run clone    run at the root of the clone (for go run ./examples/...)
//	```sh serve        identityd serve in a terminal of its own: started in
//	                   the background, waited for until it listens
//	```sh norun: WHY   never run, for the reason given
//	```text output     what the run block before it prints (stdout and
//	                   stderr): "..." in a line matches any text, a line of
//	                   "..." alone any number of lines
//
// A shell block without one of the first four marks is an error.

// docRoot is the root of the clone, seen from this package.
const docRoot = "../.."

// docShells are the info strings' languages of shell blocks.
var docShells = []string{"sh", "bash", "shell", "console"}

// docBlock is one fenced block of a page.
type docBlock struct {
	page   string
	line   int    // of the opening fence, 1-based
	lang   string // the info string's first word
	mark   string // "run", "serve", "norun", "output" or ""
	clone  bool   // run clone
	reason string // of norun
	text   string
	want   *docBlock // the output block that follows a run block
}

func (b *docBlock) where() string { return fmt.Sprintf("%s:%d", b.page, b.line) }

// docPages returns the pages whose blocks the tests check, relative to
// the root of the clone.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob(filepath.Join(docRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		rel, err := filepath.Rel(docRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, rel)
	}
	return pages
}

// readDoc reads and parses one page.
func readDoc(t *testing.T, page string) []*docBlock {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(docRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := parseDoc(page, string(src))
	for _, err := range errs {
		t.Error(err)
	}
	return blocks
}

// parseDoc returns the fenced blocks of a page, and every misuse of the
// marks. A fence may be indented (inside a list item); its indentation is
// removed from the block's lines.
func parseDoc(page, src string) (blocks []*docBlock, errs []error) {
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		open := lines[i][indent:]
		if !strings.HasPrefix(open, "```") {
			continue
		}
		b := &docBlock{page: page, line: i + 1}
		info := strings.TrimSpace(strings.TrimPrefix(open, "```"))
		b.lang, info, _ = strings.Cut(info, " ")
		info = strings.TrimSpace(info)
		var text []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			text = append(text, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
		}
		if i == len(lines) {
			errs = append(errs, fmt.Errorf("%s: the block has no closing fence", b.where()))
			break
		}
		b.text = strings.Join(text, "\n") + "\n"
		switch {
		case info == "run":
			b.mark = "run"
		case info == "run clone":
			b.mark, b.clone = "run", true
		case info == "serve":
			b.mark = "serve"
		case strings.HasPrefix(info, "norun:"):
			b.mark, b.reason = "norun", strings.TrimSpace(strings.TrimPrefix(info, "norun:"))
			if b.reason == "" {
				errs = append(errs, fmt.Errorf("%s: norun gives no reason", b.where()))
			}
		case info == "output":
			b.mark = "output"
		case info != "":
			errs = append(errs, fmt.Errorf("%s: unknown mark %q (run, run clone, serve, norun: WHY, output)", b.where(), info))
		}
		shell := slices.Contains(docShells, b.lang)
		switch {
		case shell && (b.mark == "" || b.mark == "output"):
			errs = append(errs, fmt.Errorf("%s: a shell block must be marked run, run clone, serve or norun: WHY", b.where()))
		case !shell && b.mark != "" && b.mark != "output":
			errs = append(errs, fmt.Errorf("%s: only a shell block (%s) can be marked %s", b.where(), strings.Join(docShells, ", "), b.mark))
		case b.mark == "output":
			// It belongs to the closest shell block before it, which must
			// be run, and must not have an output block already.
			var prev *docBlock
			for _, p := range slices.Backward(blocks) {
				if slices.Contains(docShells, p.lang) {
					prev = p
					break
				}
			}
			if prev == nil || prev.mark != "run" || prev.want != nil {
				errs = append(errs, fmt.Errorf("%s: an output block must follow a run block that has none", b.where()))
			} else {
				prev.want = b
			}
		case b.mark == "serve":
			if _, err := serveCommand(b.text); err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", b.where(), err))
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, errs
}

// TestDocsBlocksMarked checks the marks of every page's blocks, without
// running anything.
func TestDocsBlocksMarked(t *testing.T) {
	for _, page := range docPages(t) {
		readDoc(t, page)
	}
}

// docLink finds the targets of a page's inline links.
var docLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks that every link of a page to a file of the clone
// names a file that exists and, with a #fragment, a heading of a Markdown
// file (as GitHub makes anchors of headings).
func TestDocsLinks(t *testing.T) {
	anchors := map[string][]string{} // Markdown file, relative to the root: its anchors
	anchorsOf := func(file string) []string {
		if a, ok := anchors[file]; ok {
			return a
		}
		src, err := os.ReadFile(filepath.Join(docRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		var a []string
		fenced := false
		for line := range strings.Lines(string(src)) {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
			}
			if fenced || !strings.HasPrefix(line, "#") {
				continue
			}
			a = append(a, headingAnchor(strings.TrimLeft(strings.TrimSpace(line), "# ")))
		}
		anchors[file] = a
		return a
	}
	for _, page := range append(docPages(t), "BENCHMARKS.md") {
		src, err := os.ReadFile(filepath.Join(docRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docLink.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, fragment, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
				if _, err := os.Stat(filepath.Join(docRoot, file)); err != nil {
					t.Errorf("%s: the link %s names no file of the clone", page, target)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(file, ".md") && !slices.Contains(anchorsOf(file), fragment) {
				t.Errorf("%s: the link %s names no heading of %s", page, target, file)
			}
		}
	}
}

// headingAnchor returns the anchor GitHub gives a heading: lower case,
// spaces as hyphens, and only letters, digits, hyphens and underscores.
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsOutputMatching pins how an output block matches what a block
// printed.
func TestDocsOutputMatching(t *testing.T) {
	for _, tt := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb\n", "a\nb\n", true},
		{"a\nb\n", "a\nb", true},
		{"a\nb\n", "a\nc\n", false},
		{"a\n", "a\nb\n", false},
		{"a\n...\nd\n", "a\nb\nc\nd\n", true},
		{"a\n...\nd\n", "a\nd\n", true},
		{"...\nd\n", "x\ny\nd\n", true},
		{"a\n...\n", "a\n", true},
		{"created user ... (ada)\n", "created user 17 (ada)\n", true},
		{"created user ... (ada)\n", "created user 17 (grace)\n", false},
		{"x.y\n", "xzy\n", false},
		{"a\n...\nd\n", "a\nb\nc\n", false},
	} {
		if got := outputMatches(tt.want, tt.got); got != tt.ok {
			t.Errorf("outputMatches(%q, %q) = %v, want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}

// TestDocsServeCommand pins what a serve block may hold, and the command
// line the test runs for it.
func TestDocsServeCommand(t *testing.T) {
	for _, tt := range []struct {
		block, want string // want "" for a block that is refused
	}{
		{"identityd serve\n", "identityd serve"},
		{"identityd serve                 # logs to this terminal\n", "identityd serve"},
		{"go run ./examples/identityd serve   # the REST API\n", "identityd serve"},
		{"identityd -db other.db serve -metrics-addr 127.0.0.1:9090\n", "identityd -db other.db serve -metrics-addr 127.0.0.1:9090"},
		{"identityd serve -addr=127.0.0.1:9000\n", "identityd serve -addr=127.0.0.1:9000"},
		{"identityd serve -addr :8080\n", ""},
		{"identityd serve -metrics-addr 0.0.0.0:9090\n", ""},
		{"identityd workspace list\n", ""},
		{"identityd workspace create acme\nidentityd serve\n", ""},
	} {
		got, err := serveCommand(tt.block)
		if tt.want == "" {
			if err == nil {
				t.Errorf("serveCommand(%q) = %q, want an error", tt.block, got)
			}
		} else if err != nil || got != tt.want {
			t.Errorf("serveCommand(%q) = %q, %v; want %q", tt.block, got, err, tt.want)
		}
	}
}

// outputMatches reports whether got is what the output block want shows:
// line by line, "..." in a line matching any text and a line of "..."
// alone any number of lines. Trailing empty lines do not count.
func outputMatches(want, got string) bool {
	split := func(s string) []string {
		return strings.Split(strings.TrimRight(s, "\n"), "\n")
	}
	var pats []*regexp.Regexp // nil for a line of "..." alone
	for _, w := range split(want) {
		if strings.TrimSpace(w) == "..." {
			pats = append(pats, nil)
			continue
		}
		parts := strings.Split(w, "...")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		pats = append(pats, regexp.MustCompile(`^`+strings.Join(parts, `.*`)+`$`))
	}
	lines := split(got)
	if strings.TrimRight(got, "\n") == "" {
		lines = nil
	}
	var match func(p, l int) bool
	match = func(p, l int) bool {
		if p == len(pats) {
			return l == len(lines)
		}
		if pats[p] == nil {
			for k := l; k <= len(lines); k++ {
				if match(p+1, k) {
					return true
				}
			}
			return false
		}
		return l < len(lines) && pats[p].MatchString(lines[l]) && match(p+1, l+1)
	}
	return match(0, 0)
}

// addrPattern finds the loopback addresses a serve block names.
var addrPattern = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// docServeFlag finds a serve flag that takes an address.
var docServeFlag = regexp.MustCompile(`(?:^|\s)-(addr|metrics-addr)[ =](\S+)`)

// serveCommand returns the command line a serve block runs: its one line
// without a trailing comment, with go run ./examples/identityd as the
// identityd on PATH. It must start identityd serve, and the addresses of
// its -addr and -metrics-addr, if any, must be 127.0.0.1:PORT, which the
// test replaces with free ports.
func serveCommand(text string) (string, error) {
	line := strings.TrimSpace(text)
	if strings.Contains(line, "\n") {
		return "", fmt.Errorf("a serve block must be one command line")
	}
	if i := strings.Index(line, " #"); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	line = strings.Replace(line, "go run ./examples/identityd", "identityd", 1)
	if !regexp.MustCompile(`^identityd( .*)? serve( |$)`).MatchString(line) {
		return "", fmt.Errorf("a serve block must run identityd serve, not %q", line)
	}
	for _, m := range docServeFlag.FindAllStringSubmatch(line, -1) {
		if addrPattern.FindString(m[2]) != m[2] {
			return "", fmt.Errorf("a serve block's -%s must be 127.0.0.1:PORT, not %q", m[1], m[2])
		}
	}
	return line, nil
}

// docSession runs one page's blocks in order in one bash process, the
// reader's terminal, whose variables and working directory carry from one
// block to the next.
type docSession struct {
	t       *testing.T
	work    string // the reader's working directory: empty at the start
	scratch string // the blocks as run, and what they printed
	env     []string
	cmd     *exec.Cmd
	stdin   *os.File
	acks    chan string
	exited  chan struct{}
	log     *testutil.SyncBuffer // what bash printed outside the blocks
	subst   []string             // old, new pairs applied to run blocks and output
	servers []*docServer
	n       int
}

// docServer is what a serve block started.
type docServer struct {
	b    *docBlock
	cmd  *exec.Cmd
	log  *testutil.SyncBuffer
	done chan struct{}
}

// docEnv returns the environment of the pages' shells: identityd (the one
// these tests built) first on PATH, and HOME an empty directory of the
// test's, with the Go tool's caches and settings kept where they are.
func docEnv(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var goenv map[string]string
	if err := json.Unmarshal(out, &goenv); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"LC_ALL=C",
	}
	for k, v := range goenv {
		env = append(env, k+"="+v)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) &&
			!strings.HasPrefix(k, "IDENTITYD_") && k != "GOMEMLIMIT" {
			env = append(env, kv)
		}
	}
	return env
}

// startDocSession starts the page's shell in an empty directory.
func startDocSession(t *testing.T, bin string) *docSession {
	t.Helper()
	s := &docSession{
		t:       t,
		work:    t.TempDir(),
		scratch: t.TempDir(),
		env:     docEnv(t, bin),
		acks:    make(chan string, 1),
		exited:  make(chan struct{}),
		log:     new(testutil.SyncBuffer),
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdin = stdinW
	s.cmd = exec.Command("bash", "--noprofile", "--norc")
	s.cmd.Dir, s.cmd.Env = s.work, s.env
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = stdinR, s.log, s.log
	s.cmd.ExtraFiles = []*os.File{ackW} // fd 3
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	ackW.Close()
	go func() {
		defer ackR.Close()
		lines := bufio.NewScanner(ackR)
		for lines.Scan() {
			s.acks <- lines.Text()
		}
	}()
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.stop)
	s.send("set -euo pipefail\n")
	return s
}

// send writes commands to the shell.
func (s *docSession) send(cmds string) {
	s.t.Helper()
	if _, err := s.stdin.WriteString(cmds); err != nil {
		s.t.Fatalf("writing to the page's shell: %v; it printed:\n%s", err, s.log)
	}
}

// substitute applies the substitutions a reader's shell makes: the
// identityd on PATH for go run ./examples/identityd, and the addresses
// the servers bound for those the page names.
func (s *docSession) substitute(text string) string {
	text = strings.ReplaceAll(text, "go run ./examples/identityd", "identityd")
	return strings.NewReplacer(s.subst...).Replace(text)
}

// run runs a run block in the shell and checks that it succeeds and, when
// the page shows its output, that it prints that.
func (s *docSession) run(b *docBlock) {
	s.t.Helper()
	s.n++
	text := s.substitute(b.text)
	file := filepath.Join(s.scratch, fmt.Sprintf("%02d.sh", s.n))
	out := filepath.Join(s.scratch, fmt.Sprintf("%02d.out", s.n))
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	cmd := fmt.Sprintf("source %q 3>&- </dev/null >%q 2>&1", file, out)
	if b.clone {
		root, err := filepath.Abs(docRoot)
		if err != nil {
			s.t.Fatal(err)
		}
		cmd = fmt.Sprintf("pushd %q >/dev/null; %s; popd >/dev/null", root, cmd)
	}
	s.send(fmt.Sprintf("%s; echo %d >&3\n", cmd, s.n))
	printed := func() string {
		b, _ := os.ReadFile(out)
		return string(b)
	}
	fail := func(format string, args ...any) {
		s.t.Helper()
		s.t.Fatalf("%s: %s\nthe block, as run:\n%s\nit printed:\n%s%s", b.where(), fmt.Sprintf(format, args...), text, printed(), s.serverLogs())
	}
	select {
	case ack := <-s.acks:
		if ack != fmt.Sprint(s.n) {
			fail("the shell acknowledged block %s", ack)
		}
	case <-s.exited:
		fail("exit status %d", s.cmd.ProcessState.ExitCode())
	case <-time.After(procWait):
		fail("still running after %v", procWait)
	}
	if b.want != nil {
		want := s.substitute(b.want.text)
		if got := printed(); !outputMatches(want, got) {
			fail("the output differs from %s, which shows:\n%s", b.want.where(), want)
		}
	}
}

// serverLogs returns the logs of the page's servers, for a failure.
func (s *docSession) serverLogs() string {
	var sb strings.Builder
	for _, srv := range s.servers {
		fmt.Fprintf(&sb, "\nthe log of the server of %s:\n%s", srv.b.where(), srv.log)
	}
	return sb.String()
}

// serve starts what a serve block runs in the background, in the page's
// working directory, on free ports, and waits until it listens: the reader
// runs it in a terminal of its own, and the page's next blocks in another
// one. The addresses the block names (127.0.0.1:8080 when it names none)
// then stand for those it bound.
func (s *docSession) serve(b *docBlock) {
	s.t.Helper()
	line, err := serveCommand(b.text)
	if err != nil {
		s.t.Fatalf("%s: %v", b.where(), err)
	}
	want := map[string]string{"addr": "127.0.0.1:8080"} // flag: the address the page names
	for _, m := range docServeFlag.FindAllStringSubmatch(line, -1) {
		want[m[1]] = m[2]
	}
	line = addrPattern.ReplaceAllString(line, "127.0.0.1:0")
	if !regexp.MustCompile(`(^|\s)-addr[ =]`).MatchString(line) {
		line += " -addr 127.0.0.1:0"
	}
	srv := &docServer{b: b, log: new(testutil.SyncBuffer), done: make(chan struct{})}
	srv.cmd = exec.Command("bash", "--noprofile", "--norc", "-c", "exec "+line)
	srv.cmd.Dir, srv.cmd.Env = s.work, s.env
	srv.cmd.Stdout, srv.cmd.Stderr = srv.log, srv.log
	if err := srv.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.servers = append(s.servers, srv)
	go func() {
		_ = srv.cmd.Wait()
		close(srv.done)
	}()
	logged := map[string]*regexp.Regexp{
		"addr":         regexp.MustCompile(`msg=listening addr=(\S+)`),
		"metrics-addr": regexp.MustCompile(`msg="metrics listening" addr=(\S+)`),
	}
	for flag, orig := range want {
		m := srv.waitLog(s.t, logged[flag])
		// First, so that a later server's address wins over an earlier's.
		s.subst = append([]string{orig, m[1]}, s.subst...)
	}
}

// waitLog waits until the server logs a line matching re, and returns the
// match.
func (srv *docServer) waitLog(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(procWait)
	for {
		if m := re.FindStringSubmatch(srv.log.String()); m != nil {
			return m
		}
		select {
		case <-srv.done:
			t.Fatalf("%s: the server exited (status %d) before logging %q; log:\n%s", srv.b.where(), srv.cmd.ProcessState.ExitCode(), re, srv.log)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no log line matching %q within %v; log:\n%s", srv.b.where(), re, procWait, srv.log)
		}
	}
}

// finish ends the page: the shell exits 0 when its input ends, and each
// server stops gracefully on SIGTERM, exiting 0, as the pages say.
func (s *docSession) finish() {
	s.t.Helper()
	s.stdin.Close()
	select {
	case <-s.exited:
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			s.t.Errorf("the page's shell exited %d; it printed:\n%s", code, s.log)
		}
	case <-time.After(procWait):
		s.t.Errorf("the page's shell did not exit within %v", procWait)
	}
	for _, srv := range s.servers {
		_ = srv.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-srv.done:
			if code := srv.cmd.ProcessState.ExitCode(); code != exitOK {
				s.t.Errorf("%s: the server exited %d after SIGTERM; log:\n%s", srv.b.where(), code, srv.log)
			}
		case <-time.After(procWait):
			s.t.Errorf("%s: the server did not stop within %v of SIGTERM; log:\n%s", srv.b.where(), procWait, srv.log)
		}
	}
}

// stop kills whatever of the page still runs: the shell with everything
// it started in the background, and the servers.
func (s *docSession) stop() {
	s.stdin.Close()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
	for _, srv := range s.servers {
		select {
		case <-srv.done:
		default:
			_ = srv.cmd.Process.Kill()
			<-srv.done
		}
	}
}

// TestDocs runs every page's run and serve blocks, top to bottom, each
// page in a shell of its own that starts in an empty directory.
func TestDocs(t *testing.T) {
	bin := binary(t)
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and no %s on PATH: .ci/run installs it", tool)
			}
			t.Skipf("no %s on PATH: skipping the documentation's shell blocks", tool)
		}
	}
	for _, page := range docPages(t) {
		blocks := readDoc(t, page)
		if !slices.ContainsFunc(blocks, func(b *docBlock) bool { return b.mark == "run" || b.mark == "serve" }) {
			continue
		}
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			s := startDocSession(t, bin)
			for _, b := range blocks {
				switch b.mark {
				case "run":
					s.run(b)
				case "serve":
					s.serve(b)
				}
			}
			s.finish()
		})
	}
}

// readmeExample is the program whose function run the README shows.
const readmeExample = "../readme/main.go"

// TestDocsReadmeExample checks that the README's Go example is the
// function run of examples/readme, a program, and runs that program.
func TestDocsReadmeExample(t *testing.T) {
	var example *docBlock
	for _, b := range readDoc(t, "README.md") {
		if b.lang == "go" {
			example = b
			break
		}
	}
	if example == nil {
		t.Fatal("README.md has no Go block")
	}
	src, err := os.ReadFile(readmeExample)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "\n"+example.text) {
		t.Errorf("%s: the README's Go example is not a part of %s, line for line", example.where(), readmeExample)
	}
	const printed = "ada map[dept:mathematics]\n"
	if !strings.Contains(example.text, "// "+printed) {
		t.Errorf("%s: the README's Go example does not say it prints %q", example.where(), printed)
	}

	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), procWait)
	defer cancel()
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, "go", "run", readmeExample)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run %s: %v\n%s", readmeExample, err, stderr.String())
	}
	if string(out) != printed {
		t.Errorf("go run %s printed %q, want %q", readmeExample, out, printed)
	}
}
