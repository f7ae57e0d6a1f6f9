package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestHashMemoryBudget runs identityd serve at the default argon2id
// parameters (m=19 MiB) with -hash-memory-budget 64 MiB, creates 200
// users with passwords at once over the REST API, then signs in 200 times
// at once with wrong passwords on the hosted sign-in page (one attempt per
// user, under any lockout threshold), and checks that the process's peak
// resident memory (VmHWM) stays within its baseline + the budget + a
// margin for everything else (the garbage the collector has yet to
// reclaim under serve's soft memory limit, the requests' buffers). Without
// a budget the same run peaks above 5 GB. This bounds memory, not time.
//
// For BENCHMARKS.md the run takes another budget from
// $IDENTITYD_TEST_HASH_BUDGET (bytes), and $GOMEMLIMIT passes through to
// serve (GOMEMLIMIT=off: no soft limit); the figures are logged either way.
func TestHashMemoryBudget(t *testing.T) {
	skipShort(t)
	const (
		n      = 200
		margin = 96 << 20
		mib    = 1 << 20
	)
	budget := int64(64 << 20)
	if s := os.Getenv("IDENTITYD_TEST_HASH_BUDGET"); s != "" {
		var err error
		if budget, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("$IDENTITYD_TEST_HASH_BUDGET: %v", err)
		}
	}
	db, key := newDB(t)
	rpc := registerRP(t, db, "-name", "Budget")
	// 200 wrong sign-ins from one address would be throttled after the
	// 50th, before any hash: the test measures the hashes.
	mustRun(t, "-db", db, "workspace", "throttle", "-workspace", "acme", "-throttle=false")
	// serve sets its soft memory limit unless $GOMEMLIMIT says otherwise.
	p := startPlainServe(t, db, []string{"GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT")}, "-access-log=false", "-hash-memory-budget", strconv.FormatInt(budget, 10))
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if status, _ := call(t, http.MethodGet, p.base+"/healthz", "", nil); status != http.StatusOK {
		t.Fatalf("GET /healthz: %d", status)
	}
	base := vmHWM(t, pid)

	// 200 creations at once.
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := tryCreateUser(p.base, key, fmt.Sprintf("user%03d", i))
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	created := vmHWM(t, pid)

	// 200 wrong sign-ins at once: the forms are loaded first, each in its
	// own browser, then all are posted together.
	rp := newRelyingParty(t, context.Background(), p.base, rpc)
	forms := make([]*signInForm, n)
	for i := range forms {
		f, err := loadSignInForm(newBrowser(t), rp.authURL(newFlow(i)))
		if err != nil {
			t.Fatal(err)
		}
		forms[i] = f
	}
	var wg sync.WaitGroup
	for i, f := range forms {
		wg.Go(func() {
			status, body, err := f.post(fmt.Sprintf("user%03d", i), "wrong password")
			switch {
			case err != nil:
				errs <- err
			case status != http.StatusBadRequest || !strings.Contains(body, "is not right"):
				errs <- fmt.Errorf("wrong sign-in of user%03d: status %d; want 400 and the form again with its generic error:\n%s", i, status, body)
			default:
				errs <- nil
			}
		})
	}
	wg.Wait()
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	peak := vmHWM(t, pid)

	t.Logf("VmHWM: baseline %.1f MiB, after %d creations %.1f MiB, after %d wrong sign-ins %.1f MiB; budget %d MiB, bound %.1f MiB",
		float64(base)/mib, n, float64(created)/mib, n, float64(peak)/mib, budget/mib, float64(base+budget+margin)/mib)
	if peak > base+budget+margin {
		t.Errorf("peak resident memory %.1f MiB > baseline %.1f MiB + budget %d MiB + margin %d MiB",
			float64(peak)/mib, float64(base)/mib, budget/mib, margin/mib)
	}
}

// The memory of identityd is measured as users run it: built without the
// race detector, which multiplies a process's memory (its shadow memory
// lies outside what the Go runtime accounts for and limits).
var (
	plainOnce sync.Once
	plainPath string
	plainErr  error
)

// plainBinary returns identityd built without the race detector: binary(t)
// unless the tests run with -race, else a second build, made once.
func plainBinary(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return binary(t)
	}
	skipShort(t)
	plainOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), procWait)
		defer cancel()
		plainPath = filepath.Join(binDir, "identityd-norace")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", plainPath, ".").CombinedOutput()
		if err != nil {
			plainErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainPath
}

// startPlainServe is startServeWith with plainBinary.
func startPlainServe(t *testing.T, db string, env []string, flags ...string) *process {
	t.Helper()
	return startServeBinary(t, plainBinary(t), db, env, flags...)
}

// vmHWM returns the peak resident memory of process pid in bytes, from
// /proc/PID/status.
func vmHWM(t *testing.T, pid string) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Skipf("no /proc/PID/status to read the peak memory from: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if value, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%s/status: %q: %v", pid, line, err)
			}
			return kib << 10
		}
	}
	t.Fatalf("/proc/%s/status has no VmHWM", pid)
	return 0
}

// signInForm is a loaded sign-in page: where its form posts, the hidden
// fields to send back, the names of its login and password fields, and
// the browser that holds its cookies.
type signInForm struct {
	browser         *http.Client
	action          string
	hidden          url.Values
	login, password string
}

// loadSignInForm follows an authorization request to its sign-in page
// and reads the form. It does not touch t, so that any goroutine may use
// it.
func loadSignInForm(browser *http.Client, authURL string) (*signInForm, error) {
	res, err := browser.Get(authURL)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	m := formPattern.FindStringSubmatch(string(body))
	if m == nil {
		return nil, fmt.Errorf("no form on the sign-in page (status %d):\n%s", res.StatusCode, body)
	}
	action, err := res.Request.URL.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return nil, err
	}
	f := &signInForm{browser: browser, action: action.String(), hidden: url.Values{}}
	for _, input := range inputPattern.FindAllString(string(body), -1) {
		attrs := map[string]string{}
		for _, a := range attrPattern.FindAllStringSubmatch(input, -1) {
			attrs[a[1]] = html.UnescapeString(a[2])
		}
		switch attrs["type"] {
		case "hidden":
			f.hidden.Set(attrs["name"], attrs["value"])
		case "password":
			f.password = attrs["name"]
		case "text", "email", "":
			if attrs["name"] != "" {
				f.login = attrs["name"]
			}
		}
	}
	if f.login == "" || f.password == "" {
		return nil, fmt.Errorf("the sign-in form lacks a login or password field:\n%s", body)
	}
	return f, nil
}

// post submits the form with login and password and returns the status
// and the page. Any goroutine may call it.
func (f *signInForm) post(login, password string) (status int, body string, err error) {
	form := url.Values{}
	for k, v := range f.hidden {
		form[k] = v
	}
	form.Set(f.login, login)
	form.Set(f.password, password)
	res, err := f.browser.PostForm(f.action, form)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	page, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", err
	}
	return res.StatusCode, string(page), nil
}
