package oidc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/identitylib/identity"
)

// BenchmarkFailedSignIn measures refused sign-ins on the hosted page
// over loopback, the cost of the timing defence: every refusal waits for
// the refusal floor, so a locked account (no hash) is answered as late as
// an unknown login (a hash of the dummy) or a wrong password (a hash and
// the lockout's writes). Each op is one POST of the sign-in form by one
// of 2 or 16 concurrent browsers; the forms (an authorization request and
// its page) are fetched before the timer starts. The workspace's throttle
// is off so that the refusals measured are the three kinds, not 429s.
//
// It reports refusals a second, the median answer time, and the CPU time
// of the process (server and browsers) per refusal: what the defence
// costs the machine, as opposed to the time it makes a client wait.
//
//	go test -run '^$' -bench FailedSignIn -benchtime 400x ./oidc -bench.users 100000
func BenchmarkFailedSignIn(b *testing.B) {
	e := openBench(b)
	ctx := context.Background()
	s, err := e.ws.GetSettings(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s.Throttle.Disabled = true
	if err := e.ws.UpdateSettings(ctx, s); err != nil {
		b.Fatal(err)
	}
	locked := lockBenchUsers(b, e, 16)
	kinds := []struct {
		name  string
		login func(i int) string
	}{
		{"unknown", func(i int) string { return fmt.Sprintf("nobody%07d", i) }},
		// Wrong passwords spread over the users, a few each, so that none
		// locks.
		{"wrong_password", func(i int) string { return fmt.Sprintf("user%07d", e.user(i+1000)) }},
		{"locked", func(i int) string { return locked[i%len(locked)] }},
	}
	for _, browsers := range []int{2, 16} {
		for _, kind := range kinds {
			b.Run(fmt.Sprintf("browsers=%d/kind=%s", browsers, kind.name), func(b *testing.B) {
				e.failedSignIns(b, browsers, kind.login)
			})
		}
	}
}

// failedSignIns runs b.N refused sign-ins of the logins from the given
// number of browsers at once.
func (e *benchEnv) failedSignIns(b *testing.B, browsers int, login func(i int) string) {
	forms := make(chan signInForm, b.N)
	for i := range b.N {
		forms <- e.signInForm(b, login(i))
	}
	close(forms)
	var mu sync.Mutex
	took := make([]time.Duration, 0, b.N)
	b.SetParallelism(max(1, browsers/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f := <-forms
			t0 := time.Now()
			e.postSignIn(b, f)
			d := time.Since(t0)
			mu.Lock()
			took = append(took, d)
			mu.Unlock()
		}
	})
	elapsed, spent := time.Since(start), cpuTime(b)-cpu
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(len(took))/elapsed.Seconds(), "refusals/s")
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(spent.Microseconds())/1000/float64(len(took)), "cpu-ms/refusal")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// signInForm is a sign-in page as a browser holds it: its cookies and
// its form.
type signInForm struct {
	client *http.Client
	form   url.Values
}

// signInForm starts an authorization request and fetches its sign-in
// page, ready to post login with a wrong password.
func (e *benchEnv) signInForm(b *testing.B, login string) signInForm {
	b.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	c := &http.Client{Jar: jar, Transport: e.http.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	params := url.Values{
		"client_id": {e.client.Client.ID}, "redirect_uri": {"https://app.example/cb"}, "response_type": {"code"},
		"scope": {"openid"}, "state": {"s"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
		"code_challenge_method": {"S256"},
	}
	res, err := c.Get(e.issuer + "/authorize?" + params.Encode())
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.Contains(loc, "/login?") {
		b.Fatalf("authorize: %d to %q", res.StatusCode, loc)
	}
	page, err := c.Get(loc)
	if err != nil {
		b.Fatal(err)
	}
	body := readAll(page)
	form := hiddenFields(body)
	if form.Get("csrf") == "" || form.Get("request") == "" {
		b.Fatalf("sign-in page without its form: %d %.300s", page.StatusCode, body)
	}
	form.Set("login", login)
	form.Set("password", "not the password at all")
	return signInForm{client: c, form: form}
}

// postSignIn posts the form and fails unless the page refuses it.
func (e *benchEnv) postSignIn(b *testing.B, f signInForm) {
	res, err := f.client.PostForm(e.issuer+"/login", f.form)
	if err != nil {
		b.Error(err)
		return
	}
	body := readAll(res)
	if res.StatusCode == http.StatusFound || !strings.Contains(body, `aria-invalid="true"`) {
		b.Errorf("sign-in of %q: %d, want the form again with its error", f.form.Get("login"), res.StatusCode)
	}
}

func readAll(res *http.Response) string {
	defer res.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}

// lockBenchUsers locks n users with wrong passwords through the library
// and returns their usernames.
func lockBenchUsers(b *testing.B, e *benchEnv, n int) []string {
	b.Helper()
	ctx := context.Background()
	var names []string
	for i := range n {
		name := fmt.Sprintf("user%07d", e.user(i))
		for {
			_, err := e.ws.Authenticate(ctx, name, "wrong")
			if identity.ErrorCode(err) == identity.CodeLocked {
				break
			}
			if identity.ErrorCode(err) != identity.CodeUnauthenticated {
				b.Fatalf("locking %s: %v", name, err)
			}
		}
		names = append(names, name)
	}
	return names
}
