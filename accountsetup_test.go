package identity_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestAccountSetup: a setup token lets its holder choose the password,
// email and full name of a disabled account, enables it, works once and
// for an hour, and is recorded.
func TestAccountSetup(t *testing.T) {
	e := newTestEnv(t, nil)
	pending, err := e.ws.CreateUser(e.ctx, identity.NewUser{Username: "grace", Email: "grace@setup.invalid", FullName: "grace", Password: "placeholder password"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ws.DisableUser(e.ctx, pending.ID); err != nil {
		t.Fatal(err)
	}
	setup, err := e.ws.CreateAccountSetup(e.ctx, pending.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.clock.Now().Add(time.Hour); !setup.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt %v, want %v", setup.ExpiresAt, want)
	}
	if p, err := e.ws.CheckAccountSetup(e.ctx, setup.Token); err != nil || p.User.ID != pending.ID || p.ChooseUsername {
		t.Fatalf("CheckAccountSetup = %+v, %v", p, err)
	}

	// Refusals change nothing and keep the token.
	refusals := []struct {
		name  string
		in    identity.AccountSetupInput
		code  identity.Code
		field string
	}{
		{"no password", identity.AccountSetupInput{}, identity.CodeInvalid, "password"},
		{"short password", identity.AccountSetupInput{Password: "short"}, identity.CodeInvalid, "password"},
		{"bad email", identity.AccountSetupInput{Email: "not an address", Password: "a fine password"}, identity.CodeInvalid, "email"},
		{"blank name", identity.AccountSetupInput{FullName: "   ", Password: "a fine password"}, identity.CodeInvalid, "fullName"},
		{"taken email", identity.AccountSetupInput{Email: "ADA@example.com", Password: "a fine password"}, identity.CodeConflict, "email"},
		{"a username without ChooseUsername", identity.AccountSetupInput{Username: "hopper", Password: "a fine password"}, identity.CodeInvalid, "username"},
	}
	for _, r := range refusals {
		_, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, r.in)
		var fields []string
		if ie, ok := err.(*identity.Error); ok {
			for _, f := range ie.Fields {
				fields = append(fields, f.Field)
			}
		}
		if identity.ErrorCode(err) != r.code || len(fields) != 1 || fields[0] != r.field {
			t.Errorf("%s: %v (fields %v), want %s on %s", r.name, err, fields, r.code, r.field)
		}
	}
	if _, err := e.ws.Authenticate(e.ctx, "grace", "a fine password"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Fatalf("before the setup: %v", err)
	}

	u, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, identity.AccountSetupInput{
		Email: "grace@example.com", FullName: "Grace Hopper", Password: "a fine password",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"email": u.Email, "fullName": u.FullName, "enabled": u.Enabled, "verified": u.EmailVerified}
	want := map[string]any{"email": "grace@example.com", "fullName": "Grace Hopper", "enabled": true, "verified": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user after the setup (-want +got):\n%s", diff)
	}
	if _, err := e.ws.Authenticate(e.ctx, "grace", "a fine password"); err != nil {
		t.Errorf("sign-in with the chosen password: %v", err)
	}
	if _, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, identity.AccountSetupInput{Password: "another password"}); identity.ErrorCode(err) != identity.CodeTokenUsed {
		t.Errorf("used twice: %v", err)
	}
	if _, err := e.ws.CheckAccountSetup(e.ctx, setup.Token); identity.ErrorCode(err) != identity.CodeTokenUsed {
		t.Errorf("checked after use: %v", err)
	}

	// The trail: the link (password.reset_requested) and the setup
	// (password.set), both with the reason account_setup.
	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{TargetKind: identity.TargetUser, TargetID: "2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, r := range page.Records {
		if r.Reason == "account_setup" {
			trail = append(trail, string(r.Action))
		}
	}
	slices.Sort(trail)
	if diff := cmp.Diff([]string{"password.reset_requested", "password.set"}, trail); diff != "" {
		t.Errorf("trail (-want +got):\n%s", diff)
	}
}

// TestAccountSetupExpiry: an hour after it was issued the token is
// refused; a token of another kind or malformed is invalid.
func TestAccountSetupExpiry(t *testing.T) {
	e := newTestEnv(t, nil)
	setup, err := e.ws.CreateAccountSetup(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour - time.Second)
	if _, err := e.ws.CheckAccountSetup(e.ctx, setup.Token); err != nil {
		t.Errorf("before the hour: %v", err)
	}
	e.clock.Advance(time.Second)
	if _, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, identity.AccountSetupInput{Password: "a fine password"}); identity.ErrorCode(err) != identity.CodeTokenExpired {
		t.Errorf("after the hour: %v", err)
	}
	s, err := e.ws.Login(e.ctx, "ada", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{"", "idas_", s.Secret, "idas_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := e.ws.CheckAccountSetup(e.ctx, token); identity.ErrorCode(err) != identity.CodeTokenInvalid {
			t.Errorf("token %q: %v", token, err)
		}
	}
	if _, err := e.ws.CreateAccountSetup(e.ctx, 999, nil); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("unknown user: %v", err)
	}
}

// TestVerifySessionWithin: the limits end a session that VerifySession
// would still accept, and revoke it.
func TestVerifySessionWithin(t *testing.T) {
	lim := identity.SessionLimits{MaxAge: 8 * time.Hour, IdleTimeout: 30 * time.Minute}
	tests := []struct {
		name string
		// steps are the waits before each check.
		steps []time.Duration
		// valid is whether the last check passes.
		valid bool
	}{
		{"fresh", []time.Duration{0}, true},
		{"idle 29 min", []time.Duration{29 * time.Minute}, true},
		{"idle 30 min", []time.Duration{30 * time.Minute}, false},
		{"used every 29 min for 7 h 44 min", repeat(29*time.Minute, 16), true},
		{"used every 29 min past 8 h", repeat(29*time.Minute, 17), false},
		{"exactly 8 h", append(repeat(29*time.Minute, 16), 16*time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			s, err := e.ws.Login(e.ctx, "ada", adaPassword)
			if err != nil {
				t.Fatal(err)
			}
			var last error
			for _, d := range tt.steps {
				e.clock.Advance(d)
				_, last = e.ws.VerifySessionWithin(e.ctx, s.Secret, lim)
			}
			if (last == nil) != tt.valid {
				t.Fatalf("last check: %v, want valid %v", last, tt.valid)
			}
			_, plain := e.ws.VerifySession(e.ctx, s.Secret)
			if (plain == nil) != tt.valid {
				t.Errorf("VerifySession afterwards: %v; a session over its limits is revoked", plain)
			}
		})
	}
	// No limits: VerifySession's rules alone.
	e := newTestEnv(t, nil)
	s, err := e.ws.Login(e.ctx, "ada", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(23 * time.Hour)
	if _, err := e.ws.VerifySessionWithin(e.ctx, s.Secret, identity.SessionLimits{}); err != nil {
		t.Errorf("no limits: %v", err)
	}
	if _, err := e.ws.VerifySessionWithin(e.ctx, "ids_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", lim); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Errorf("unknown token: %v", err)
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestIssuerBase: the Service tells its IssuerBase, "" without one.
func TestIssuerBase(t *testing.T) {
	e := newTestEnv(t, &identity.Options{IssuerBase: "https://id.example.com"})
	if got := e.svc.IssuerBase(); got != "https://id.example.com" {
		t.Errorf("IssuerBase() = %q", got)
	}
	if got := newTestEnv(t, nil).svc.IssuerBase(); got != "" {
		t.Errorf("IssuerBase() without one = %q", got)
	}
}

// TestAccountSetupUsername: a token issued with ChooseUsername lets its
// holder choose the username too, under the rules of a new user's.
func TestAccountSetupUsername(t *testing.T) {
	e := newTestEnv(t, nil)
	u, err := e.ws.CreateUser(e.ctx, identity.NewUser{Username: "admin", Email: "admin@setup.invalid", FullName: "admin", Password: "placeholder password"})
	if err != nil {
		t.Fatal(err)
	}
	setup, err := e.ws.CreateAccountSetup(e.ctx, u.ID, &identity.AccountSetupOptions{ChooseUsername: true})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := e.ws.CheckAccountSetup(e.ctx, setup.Token); err != nil || !p.ChooseUsername || p.User.Username != "admin" {
		t.Fatalf("CheckAccountSetup = %+v, %v", p, err)
	}
	for _, r := range []struct {
		username string
		code     identity.Code
	}{{"not a name!", identity.CodeInvalid}, {"ADA", identity.CodeConflict}} {
		_, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, identity.AccountSetupInput{Username: r.username, Password: "a fine password"})
		if ie, ok := err.(*identity.Error); !ok || ie.Code != r.code || len(ie.Fields) != 1 || ie.Fields[0].Field != "username" {
			t.Errorf("username %q: %v, want %s on username", r.username, err, r.code)
		}
	}
	got, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, identity.AccountSetupInput{Username: "grace", Password: "a fine password"})
	if err != nil || got.Username != "grace" {
		t.Fatalf("CompleteAccountSetup = %+v, %v", got, err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "grace", "a fine password"); err != nil {
		t.Errorf("sign-in with the chosen username: %v", err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "admin", "a fine password"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Errorf("the placeholder name still signs in: %v", err)
	}
	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditPasswordSet)}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("%+v, %v", page, err)
	}
	if diff := cmp.Diff(identity.AuditChange{Before: "admin", After: "grace"}, page.Records[0].Changes["username"]); diff != "" {
		t.Errorf("the record's username change (-want +got):\n%s", diff)
	}
}

// TestAccountSetupSameValues: a username, email and full name equal to
// the user's are no change: any token takes them (the username too), the
// verified email stays verified, and the record of the setup holds the
// one change, the account enabled.
func TestAccountSetupSameValues(t *testing.T) {
	e := newTestEnv(t, nil)
	imported, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{
		{Username: "grace", Email: "grace@example.com", FullName: "Grace Hopper", EmailVerified: true, Disabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := imported[0].ID
	setup, err := e.ws.CreateAccountSetup(e.ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.ws.CompleteAccountSetup(e.ctx, setup.Token, identity.AccountSetupInput{
		Username: "grace", Email: "grace@example.com", FullName: "Grace Hopper", Password: "a fine password",
	})
	if err != nil {
		t.Fatalf("CompleteAccountSetup: %v", err)
	}
	got := map[string]any{"username": u.Username, "email": u.Email, "fullName": u.FullName, "enabled": u.Enabled, "verified": u.EmailVerified}
	want := map[string]any{"username": "grace", "email": "grace@example.com", "fullName": "Grace Hopper", "enabled": true, "verified": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user after the setup (-want +got):\n%s", diff)
	}
	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditPasswordSet)}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("password.set records: %+v, %v", page, err)
	}
	if diff := cmp.Diff(map[string]identity.AuditChange{"enabled": {Before: false, After: true}}, page.Records[0].Changes); diff != "" {
		t.Errorf("the record's changes (-want +got):\n%s", diff)
	}
}
