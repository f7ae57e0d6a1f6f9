package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
)

// TestWorkspacePolicy checks identityd workspace policy: it prints the
// policy, changes only what its flags name (the stored settings say the
// same), and refuses what the library refuses.
func TestWorkspacePolicy(t *testing.T) {
	db, _ := newDB(t)
	show := func(args ...string) string {
		t.Helper()
		return mustRun(t, append([]string{"-db", db, "workspace", "policy", "-workspace", "acme"}, args...)...).stdout
	}
	for _, step := range []struct {
		args []string
		want string
	}{
		{nil, "lockout: on\nlockout threshold: 10\nlockout duration: 15m0s\npassword length: 8-1024\nmfa: optional\nverified email: optional\n"},
		{[]string{"-lockout-threshold", "5", "-lockout-duration", "90s"}, "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 8-1024\nmfa: optional\nverified email: optional\n"},
		{[]string{"-lockout=false", "-password-min-length", "12"}, "lockout: off\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: optional\nverified email: optional\n"},
		{[]string{"-lockout"}, "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: optional\nverified email: optional\n"},
		{[]string{"-mfa", "required"}, "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: required\nverified email: optional\n"},
		{[]string{"-require-verified-email"}, "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: required\nverified email: required\n"},
		{[]string{"-require-verified-email=false"}, "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: required\nverified email: optional\n"},
		{[]string{"-require-verified-email=true"}, "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: required\nverified email: required\n"},
	} {
		if got := show(step.args...); got != step.want {
			t.Errorf("after %q:\n%s\nwant:\n%s", step.args, got, step.want)
		}
	}
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := identity.Settings{
			PasswordPolicy:       identity.PasswordPolicy{MinLength: 12, MaxLength: 1024},
			Lockout:              identity.LockoutPolicy{Threshold: 5, Duration: 90 * time.Second},
			MFA:                  identity.MFARequired,
			RequireVerifiedEmail: true,
		}
		if diff := cmp.Diff(want, s); diff != "" {
			t.Errorf("stored settings mismatch (-want +got):\n%s", diff)
		}
	})

	usage := "Usage: identityd [-db FILE] workspace policy -workspace SLUG [-lockout-threshold N] [-lockout-duration D] [-lockout=false] [-password-min-length N] [-mfa optional|required] [-require-verified-email=true|false]\nRun 'identityd -h' for help.\n"
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"threshold too high", []string{"-workspace", "acme", "-lockout-threshold", "1001"}, exitError,
			"identityd: invalid settings: lockout.threshold must be between 1 and 1000 (0 for the default, 10)\n"},
		{"duration not whole seconds", []string{"-workspace", "acme", "-lockout-duration", "1500ms"}, exitError,
			"identityd: invalid settings: lockout.duration must be whole seconds between 1s and 720h0m0s (0 for the default, 15m0s)\n"},
		{"password too short", []string{"-workspace", "acme", "-password-min-length", "3"}, exitError,
			"identityd: invalid settings: passwordPolicy.minLength must be at least 4\n"},
		{"unknown mfa policy", []string{"-workspace", "acme", "-mfa", "sometimes"}, exitError,
			"identityd: invalid settings: mfa must be \"optional\" or \"required\"\n"},
		{"unknown workspace", []string{"-workspace", "nope"}, exitError, "identityd: workspace \"nope\" does not exist\n"},
		{"missing workspace", nil, exitUsage, "identityd: workspace policy: -workspace is required\n" + usage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"-db", db, "workspace", "policy"}, tt.args...)...)
			if r.code != tt.code || r.stdout != "" || r.stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	if got, want := show(), "lockout: on\nlockout threshold: 5\nlockout duration: 1m30s\npassword length: 12-1024\nmfa: required\nverified email: required\n"; got != want {
		t.Errorf("a refused change changed the policy:\n%s", got)
	}
	if got := show("-mfa", "optional"); !strings.HasSuffix(got, "\nmfa: optional\nverified email: required\n") {
		t.Errorf("after -mfa optional:\n%s", got)
	}
}

// TestPostgresLockoutTwoProcesses sends 50 wrong passwords at once through
// the sign-in pages of two identityd processes on one PostgreSQL database,
// with a threshold of 5: exactly 5 passwords are verified, 45 attempts are
// refused for the lock, the account locks once, the right password gets
// the generic error until an administrator unlocks the account over REST.
func TestPostgresLockoutTwoProcesses(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := pgDB(t)
	mustRun(t, "-db", db, "workspace", "policy", "-workspace", "acme", "-lockout-threshold", "5", "-lockout-duration", "1h")
	// The 50 attempts name one login from one address: the throttle would
	// refuse them past its count, each process counting its own. The test
	// is of the lockout, whose count is in the database.
	mustRun(t, "-db", db, "workspace", "throttle", "-workspace", "acme", "-throttle=false")
	procs := []*process{startServe(t, db), startServe(t, db)}
	uid := createUser(t, procs[0].base, key, "ada")
	status, body := call(t, http.MethodPost, procs[0].base+"/t/acme/api/v1/webhooks", key, map[string]any{
		"url": "https://hooks.example.com/identity", "events": []string{"login.failed", "user.locked", "user.unlocked"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", status, body)
	}
	var hook struct{ Endpoint struct{ ID int64 } }
	if err := json.Unmarshal(body, &hook); err != nil {
		t.Fatal(err)
	}
	client := registerRP(t, db)
	rps := []*relyingParty{newRelyingParty(t, ctx, procs[0].base, client), newRelyingParty(t, ctx, procs[1].base, client)}

	const n = 50
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rp := *rps[i%2]
			rp.browser = newBrowser(t)
			p, err := rp.tryGet(rp.authURL(newFlow(i)))
			if err == nil {
				p, err = rp.trySubmit(p, "ada", "wrong password")
			}
			if err == nil && (p.location != "" || !strings.Contains(p.body, "is not right")) {
				err = fmt.Errorf("attempt %d: status %d, Location %q, want the generic error", i, p.status, p.location)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{}
	for _, payload := range payloadsOf(t, db, hook.Endpoint.ID) {
		var ev struct {
			Type string
			Data struct{ Reason string }
		}
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		counts[ev.Type+" "+ev.Data.Reason]++
	}
	want := map[string]int{"login.failed wrong_password": 5, "login.failed locked": 45, "user.locked ": 1}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("events of 50 wrong passwords through two processes (-want +got):\n%s", diff)
	}

	locked := rps[1].submit(t, rps[1].get(t, rps[1].authURL(newFlow(100))), "ada", "correct horse battery")
	if locked.location != "" || !strings.Contains(locked.body, "is not right") {
		t.Errorf("the right password while locked: status %d, Location %q; want the generic error", locked.status, locked.location)
	}
	mustCall(t, http.MethodPost, fmt.Sprintf("%s/t/acme/api/v1/users/%d/unlock", procs[1].base, uid), key, nil, http.StatusNoContent)
	f := newFlow(101)
	rps[0].tokens(t, ctx, f, rps[0].signIn(t, f, "ada", "correct horse battery"))
}

// payloadsOf returns the bodies of the deliveries of acme's endpoint in
// the PostgreSQL database at url, read straight from the store.
func payloadsOf(t *testing.T, url string, endpoint int64) [][]byte {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out [][]byte
	err = st.View(context.Background(), func(tx store.Tx) error {
		ds, err := tx.Deliveries("acme", endpoint)
		for _, d := range ds {
			out = append(out, d.Payload)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
