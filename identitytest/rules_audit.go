package identitytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
)

// The audit trail over the store under test: no secret in any record,
// retention by the fake clock, and reading by filter and cursor.

// trail reads every record of the workspace through ListAuditRecords, oldest
// first, a page of limit records at a time.
func trail(t *testing.T, e *env, ws *identity.Workspace, limit int) []identity.AuditRecord {
	t.Helper()
	var out []identity.AuditRecord
	page := &identity.AuditPageOptions{Oldest: true, Limit: limit}
	for {
		p, err := ws.ListAuditRecords(e.ctx, nil, page)
		if err != nil {
			t.Fatalf("ListAuditRecords: %v", err)
		}
		out = append(out, p.Records...)
		if !p.HasMore {
			return out
		}
		if p.NextCursor == "" || len(p.Records) != limit {
			t.Fatalf("page of %d records with more after it and cursor %q", len(p.Records), p.NextCursor)
		}
		page.Cursor = p.NextCursor
	}
}

// named is a secret of the redaction rule, with what it is.
type named struct{ what, value string }

// testRuleAuditRedaction: no record of the trail holds a secret: the
// trail of a workspace where API keys, clients and webhooks were created
// with their secrets, users were given passwords (set, changed, tried
// wrong, reset), a TOTP factor was enrolled with its recovery codes (one
// used to sign in), sessions were started and tokens issued, refreshed
// and revoked, and reset and verification links were sent and used, is
// read through ListAuditRecords and every record, JSON-encoded as a program would
// write it, is searched for each secret and for the secret part of each
// token.
func testRuleAuditRedaction(t *testing.T, e *env) {
	svc, err := identity.New(e.store, &identity.Options{
		Now: e.clock.Now, PasswordHashing: &testArgon2,
		IssuerBase: "https://id.example.com", TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.GetWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	settings := identity.DefaultSettings()
	settings.SMTP = erasureSMTP
	settings.Lockout = identity.LockoutPolicy{Threshold: 3, Duration: time.Minute}
	if err := ws.UpdateSettings(e.ctx, settings); err != nil {
		t.Fatal(err)
	}
	var secrets []named
	keep := func(what, value string) {
		if value == "" {
			t.Fatalf("%s is empty", what)
		}
		secrets = append(secrets, named{what, value})
	}
	ctx := identity.WithRequestInfo(e.ctx, identity.RequestInfo{Address: netip.MustParseAddr("192.0.2.10"), UserAgent: "rules/1"})

	key, err := ws.CreateAPIKey(ctx, "ci", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	keep("the API key", key.Secret)
	if err := ws.RevokeAPIKey(ctx, key.APIKey.ID); err != nil {
		t.Fatal(err)
	}
	client, err := ws.CreateClient(ctx, identity.NewClient{Name: "Web", RedirectURIs: []string{erasureRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	keep("the client secret", client.Secret)
	if _, err := ws.AuthenticateClient(ctx, client.Client.ID, client.Secret+"x"); err == nil {
		t.Fatal("AuthenticateClient with a wrong secret succeeded")
	}
	hook, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/audit", Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	keep("the webhook secret", hook.Secret)

	passwords := []string{"first passphrase one", "second passphrase two", "third passphrase three",
		"a wrong guess four", "fifth passphrase five", "sixth passphrase six"}
	for i, p := range passwords {
		keep(fmt.Sprintf("password %d", i+1), p)
	}
	nu := newUser("ada")
	nu.Password = passwords[0]
	u, err := ws.CreateUser(ctx, nu) // queues a verification email
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.SetPassword(ctx, u.ID, passwords[1]); err != nil {
		t.Fatal(err)
	}
	if err := ws.ChangePassword(ctx, u.ID, passwords[1], passwords[2]); err != nil {
		t.Fatal(err)
	}
	WantCode(t, ws.ChangePassword(ctx, u.ID, passwords[3], passwords[4]), identity.CodeUnauthenticated)
	_, err = ws.Authenticate(ctx, "ada", passwords[3])
	WantCode(t, err, identity.CodeUnauthenticated)
	_, err = ws.Authenticate(ctx, "nobody", passwords[3])
	WantCode(t, err, identity.CodeUnauthenticated)

	en, err := ws.BeginTOTPEnrollment(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	keep("the TOTP secret", en.Secret)
	keep("the TOTP URI", en.URI)
	codes, err := ws.ConfirmTOTPEnrollment(ctx, u.ID, e.totpCode(en.Secret))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Second)
	for i, c := range codes {
		keep(fmt.Sprintf("recovery code %d", i+1), c)
	}
	_, err = ws.Authenticate(ctx, "ada", passwords[2])
	WantCode(t, err, identity.CodeMFARequired)
	challenge := err.(*identity.Error).Challenge
	keep("the sign-in challenge", challenge)
	if _, err := ws.VerifySecondFactor(ctx, challenge, codes[0]); err != nil {
		t.Fatal(err)
	}
	fresh, err := ws.RegenerateRecoveryCodes(ctx, u.ID, e.totpCode(en.Secret))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range fresh {
		keep(fmt.Sprintf("regenerated recovery code %d", i+1), c)
	}

	created, err := ws.CreateSession(ctx, u.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep("the session token", created.Secret)
	req := identity.AuthorizationRequest{ClientID: client.Client.ID, RedirectURI: erasureRedirect, ResponseType: "code",
		Scopes: []string{"openid", "email", "offline_access"}, State: "s"}
	auth, err := ws.Provider().Authorize(ctx, req, created.Secret)
	if err != nil || auth.Code == "" {
		t.Fatalf("Authorize = %+v, %v; want a code", auth, err)
	}
	keep("the authorization code", auth.Code)
	tok, err := ws.Provider().ExchangeCode(ctx, client.Client, auth.Code, erasureRedirect, "")
	if err != nil {
		t.Fatal(err)
	}
	keep("the access token", tok.AccessToken)
	keep("the ID token", tok.IDToken)
	keep("the refresh token", tok.RefreshToken)
	next, err := ws.Provider().RefreshTokens(ctx, client.Client, tok.RefreshToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep("the refreshed access token", next.AccessToken)
	keep("the second refresh token", next.RefreshToken)
	if _, err := ws.Provider().RefreshTokens(ctx, client.Client, tok.RefreshToken, nil); err == nil {
		t.Fatal("a used refresh token was exchanged again")
	}
	if err := ws.Provider().RevokeToken(ctx, client.Client, next.RefreshToken); err != nil {
		t.Fatal(err)
	}
	if err := ws.RevokeSession(ctx, created.Session.ID); err != nil {
		t.Fatal(err)
	}

	if err := ws.RequestPasswordReset(ctx, nu.Email, nil); err != nil {
		t.Fatal(err)
	}
	verify, reset := e.sendEmails(svc, "acme")
	keep("the verification token", verify)
	keep("the reset token", reset)
	if _, err := ws.ConfirmEmail(ctx, verify); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ResetPassword(ctx, reset, passwords[4]); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetAttribute(ctx, u.ID, "apiToken", passwords[5], nil); err != nil {
		t.Fatal(err)
	}

	// Each secret, and the secret part of each token: what follows the
	// id of prefix_id_secret, the 43 characters after a secret's prefix,
	// a JWT's signature.
	var needles []named
	for _, s := range secrets {
		needles = append(needles, s)
		parts := strings.Split(s.value, "_")
		switch {
		case len(parts) >= 3 && len(parts[1]) == 16:
			needles = append(needles, named{s.what + " (its secret part)", strings.Join(parts[2:], "_")})
		case strings.Count(s.value, ".") == 2:
			needles = append(needles, named{s.what + " (its signature)", s.value[strings.LastIndexByte(s.value, '.')+1:]})
		}
	}
	records := trail(t, e, ws, 7)
	// The trail is not empty: the records of the calls where a secret
	// would most likely slip in are there.
	written := map[identity.AuditAction]int{}
	for _, r := range records {
		written[r.Action]++
	}
	for _, a := range []identity.AuditAction{
		identity.AuditUserCreated, identity.AuditPasswordSet, identity.AuditPasswordChanged, identity.AuditSignInFailed,
		identity.AuditSecondFactorEnrollStarted, identity.AuditSecondFactorEnrolled, identity.AuditSecondFactorRecoveryUsed,
		identity.AuditSignInSucceeded, identity.AuditSecondFactorCodesRenewed, identity.AuditSessionCreated,
		identity.AuditSessionRevoked, identity.AuditPasswordResetRequested, identity.AuditUserEmailVerified,
		identity.AuditPasswordReset, identity.AuditUserAttributeSet,
	} {
		if written[a] == 0 {
			t.Errorf("no record of %s in the trail", a)
		}
	}
	for _, r := range records {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range needles {
			if strings.Contains(string(data), n.value) {
				t.Errorf("the record of %s holds %s: %s", r.Action, n.what, data)
			}
		}
	}
}

// testRuleAuditRetention: Sweep removes the records older than the
// workspace's Retention.AuditDays and keeps the others, to the
// microsecond, and leaves one retention.swept record per sweep that
// removed any, counting them; AuditDays takes 0 (the default) and 1 to
// 3650.
func testRuleAuditRetention(t *testing.T, e *env) {
	const day = 24 * time.Hour
	settings := identity.DefaultSettings()
	settings.Retention.AuditDays = 1
	ws, err := e.svc.CreateWorkspace(e.ctx, "retained", &settings) // workspace.created at t0
	if err != nil {
		t.Fatal(err)
	}
	t0 := e.clock.Now()
	e.clock.Set(t0.Add(time.Hour))
	if _, err := ws.CreateUser(e.ctx, newUser("ada")); err != nil { // user.created at t0 + 1 h
		t.Fatal(err)
	}
	e.clock.Set(t0.Add(2 * time.Hour))
	if _, err := ws.CreateUser(e.ctx, newUser("bob")); err != nil { // at t0 + 2 h
		t.Fatal(err)
	}
	var got []string
	for _, c := range []struct {
		name string
		at   time.Duration
	}{
		{"t0 + 1 d - 1 µs", day - time.Microsecond},
		{"t0 + 1 d", day},
		{"t0 + 1 d + 1 µs", day + time.Microsecond},
		{"t0 + 1 d + 1 h", day + time.Hour},
		{"t0 + 1 d + 1 h + 1 µs", day + time.Hour + time.Microsecond},
		{"again", day + time.Hour + time.Microsecond},
	} {
		e.clock.Set(t0.Add(c.at))
		res, err := e.svc.Sweep(e.ctx, e.clock.Now())
		if err != nil {
			t.Fatalf("Sweep at %s: %v", c.name, err)
		}
		got = append(got, fmt.Sprintf("%s: %d removed", c.name, res.AuditRecords))
	}
	want := []string{
		"t0 + 1 d - 1 µs: 0 removed",
		"t0 + 1 d: 0 removed",
		"t0 + 1 d + 1 µs: 1 removed",
		"t0 + 1 d + 1 h: 0 removed",
		"t0 + 1 d + 1 h + 1 µs: 1 removed",
		"again: 0 removed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sweeps (-want +got):\n%s", diff)
	}
	// What is left: bob's creation, and a summary of each sweep that
	// removed anything, by the system, at the sweep's time.
	swept := func(at time.Duration) identity.AuditRecord {
		return identity.AuditRecord{Time: t0.Add(at), Workspace: "retained", Actor: identity.Actor{Kind: identity.ActorSystem},
			Action: identity.AuditRetentionSwept, Target: identity.AuditTarget{Kind: "workspace", ID: "retained", Display: "retained"},
			Outcome: identity.OutcomeSuccess, Reason: "retention",
			Changes: map[string]identity.AuditChange{"removed.auditRecords": {After: float64(1)}}}
	}
	wantLeft := []identity.AuditRecord{
		{Time: t0.Add(2 * time.Hour), Workspace: "retained", Actor: identity.Actor{Kind: identity.ActorSystem},
			Action: identity.AuditUserCreated, Target: identity.AuditTarget{Kind: "user", ID: "2", Display: "bob"},
			Outcome: identity.OutcomeSuccess, Changes: map[string]identity.AuditChange{
				"username": {After: "bob"}, "email": {After: "bob@example.com"}, "fullName": {After: "User bob"},
			}},
		swept(day + time.Microsecond),
		swept(day + time.Hour + time.Microsecond),
	}
	left := trail(t, e, ws, 100)
	for i := range left {
		left[i].ID = ""
	}
	if diff := cmp.Diff(wantLeft, left); diff != "" {
		t.Errorf("the trail after the sweeps (-want +got):\n%s", diff)
	}

	for _, days := range []int{0, 1, 3650} {
		settings.Retention.AuditDays = days
		if err := ws.UpdateSettings(e.ctx, settings); err != nil {
			t.Errorf("AuditDays %d: %v", days, err)
		}
	}
	for _, days := range []int{3651, -1} {
		settings.Retention.AuditDays = days
		err := ws.UpdateSettings(e.ctx, settings)
		WantCode(t, err, identity.CodeInvalid)
		WantFields(t, err, []identity.FieldError{fe("retention.auditDays", identity.RuleRange)})
	}
	kept, err := ws.GetSettings(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Retention.AuditDays != 3650 {
		t.Errorf("AuditDays = %d after refused updates, want 3650", kept.Retention.AuditDays)
	}
}

// testRuleAuditLog: ListAuditRecords over the store under test filters by actor,
// target (a user without id: a login no user has), action (one, or a
// prefix), outcome and time (since inclusive, until exclusive), alone
// and together; pages by cursor, newest or oldest first, with HasMore
// exact and records appended meanwhile never shifting a page; and
// refuses an invalid filter or page with CodeInvalid naming its fields.
func testRuleAuditLog(t *testing.T, e *env) {
	ws, err := e.svc.CreateWorkspace(e.ctx, "trail", nil) // at t0, by the system
	if err != nil {
		t.Fatal(err)
	}
	t0 := e.clock.Now()
	key := identity.Actor{Kind: identity.ActorAPIKey, ID: "k1", Display: "ci"}
	operator := identity.Actor{Kind: identity.ActorOperator, ID: "1000", Display: "root"}
	client := identity.Actor{Kind: identity.ActorClient, ID: "c1", Display: "Web"}
	as := func(a identity.Actor) context.Context { return identity.WithActor(e.ctx, a) }
	steps := []func(){
		func() { must(t, err2(ws.CreateUser(as(key), newUser("ada")))) },          // t0+1s user.created 1
		func() { must(t, err2(ws.CreateUser(as(operator), newUser("bob")))) },     // t0+2s user.created 2
		func() { wantRefused(t, err2(ws.Authenticate(as(client), "ada", "no"))) }, // t0+3s sign_in.failed 1
		func() { must(t, err2(ws.Authenticate(as(client), "ada", "s3cret-passphrase"))) },
		func() { must(t, err2(ws.SetAttribute(as(key), 1, "dept", "ops", nil))) },    // t0+5s
		func() { must(t, ws.DisableUser(as(key), 2)) },                               // t0+6s
		func() { wantRefused(t, err2(ws.Authenticate(as(client), "nobody", "no"))) }, // t0+7s
	}
	for _, step := range steps {
		e.clock.Advance(time.Second)
		step()
	}
	// Each record as "action target-id" (or "action @login" for a login
	// no user has).
	show := func(recs []identity.AuditRecord) []string {
		out := []string{}
		for _, r := range recs {
			id := r.Target.ID
			if id == "" {
				id = "@" + r.Target.Display
			}
			out = append(out, string(r.Action)+" "+id)
		}
		return out
	}
	all := []string{"sign_in.failed @nobody", "user.disabled 2", "user.attribute.set 1", "sign_in.succeeded 1",
		"sign_in.failed 1", "user.created 2", "user.created 1", "workspace.created trail"}
	filters := []struct {
		name   string
		filter *identity.AuditFilter
		want   []string
	}{
		{"none", nil, all},
		{"the API key", &identity.AuditFilter{ActorKind: identity.ActorAPIKey, ActorID: "k1"}, []string{"user.disabled 2", "user.attribute.set 1", "user.created 1"}},
		{"the operator", &identity.AuditFilter{ActorKind: identity.ActorOperator, ActorID: "1000"}, []string{"user.created 2"}},
		{"the client", &identity.AuditFilter{ActorKind: identity.ActorClient, ActorID: "c1"}, []string{"sign_in.failed @nobody", "sign_in.failed 1"}},
		{"ada as the actor", &identity.AuditFilter{ActorKind: identity.ActorUser, ActorID: "1"}, []string{"sign_in.succeeded 1"}},
		{"the system", &identity.AuditFilter{ActorKind: identity.ActorSystem}, []string{"workspace.created trail"}},
		{"another key", &identity.AuditFilter{ActorKind: identity.ActorAPIKey, ActorID: "k2"}, []string{}},
		{"ada as the target", &identity.AuditFilter{TargetKind: identity.TargetUser, TargetID: "1"},
			[]string{"user.attribute.set 1", "sign_in.succeeded 1", "sign_in.failed 1", "user.created 1"}},
		{"a login no user has", &identity.AuditFilter{TargetKind: identity.TargetUser}, []string{"sign_in.failed @nobody"}},
		{"the workspace", &identity.AuditFilter{TargetKind: identity.TargetWorkspace, TargetID: "trail"}, []string{"workspace.created trail"}},
		{"user.", &identity.AuditFilter{Action: "user."}, []string{"user.disabled 2", "user.attribute.set 1", "user.created 2", "user.created 1"}},
		{"sign_in.", &identity.AuditFilter{Action: "sign_in."}, []string{"sign_in.failed @nobody", "sign_in.succeeded 1", "sign_in.failed 1"}},
		{"user.created", &identity.AuditFilter{Action: "user.created"}, []string{"user.created 2", "user.created 1"}},
		{"user.attribute.", &identity.AuditFilter{Action: "user.attribute."}, []string{"user.attribute.set 1"}},
		{"failures", &identity.AuditFilter{Outcome: identity.OutcomeFailure}, []string{"sign_in.failed @nobody", "sign_in.failed 1"}},
		{"successes", &identity.AuditFilter{Outcome: identity.OutcomeSuccess},
			[]string{"user.disabled 2", "user.attribute.set 1", "sign_in.succeeded 1", "user.created 2", "user.created 1", "workspace.created trail"}},
		{"since t0+3s until t0+5s", &identity.AuditFilter{Since: t0.Add(3 * time.Second), Until: t0.Add(5 * time.Second)},
			[]string{"sign_in.succeeded 1", "sign_in.failed 1"}},
		{"since t0+7s", &identity.AuditFilter{Since: t0.Add(7 * time.Second)}, []string{"sign_in.failed @nobody"}},
		{"until t0+1s", &identity.AuditFilter{Until: t0.Add(time.Second)}, []string{"workspace.created trail"}},
		{"since t0+7s + 1 µs", &identity.AuditFilter{Since: t0.Add(7*time.Second + time.Microsecond)}, []string{}},
		{"ada's failures", &identity.AuditFilter{TargetKind: identity.TargetUser, TargetID: "1", Outcome: identity.OutcomeFailure},
			[]string{"sign_in.failed 1"}},
		{"the key's user. since t0+2s", &identity.AuditFilter{ActorKind: identity.ActorAPIKey, ActorID: "k1", Action: "user.", Since: t0.Add(2 * time.Second)},
			[]string{"user.disabled 2", "user.attribute.set 1"}},
	}
	for _, f := range filters {
		page, err := ws.ListAuditRecords(e.ctx, f.filter, nil)
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if diff := cmp.Diff(f.want, show(page.Records)); diff != "" || page.HasMore || page.NextCursor != "" {
			t.Errorf("%s: HasMore %v, cursor %q; records (-want +got):\n%s", f.name, page.HasMore, page.NextCursor, diff)
		}
	}

	// Pages of three, each way.
	pages := func(oldest bool, filter *identity.AuditFilter, between func(int)) []string {
		var out []string
		opts := &identity.AuditPageOptions{Limit: 3, Oldest: oldest}
		for i := 0; ; i++ {
			p, err := ws.ListAuditRecords(e.ctx, filter, opts)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%v more %v", show(p.Records), p.HasMore))
			if !p.HasMore {
				return out
			}
			if between != nil {
				between(i)
			}
			opts.Cursor = p.NextCursor
		}
	}
	newest := []string{
		"[sign_in.failed @nobody user.disabled 2 user.attribute.set 1] more true",
		"[sign_in.succeeded 1 sign_in.failed 1 user.created 2] more true",
		"[user.created 1 workspace.created trail] more false",
	}
	if diff := cmp.Diff(newest, pages(false, nil, nil)); diff != "" {
		t.Errorf("pages newest first (-want +got):\n%s", diff)
	}
	oldest := []string{
		"[workspace.created trail user.created 1 user.created 2] more true",
		"[sign_in.failed 1 sign_in.succeeded 1 user.attribute.set 1] more true",
		"[user.disabled 2 sign_in.failed @nobody] more false",
	}
	if diff := cmp.Diff(oldest, pages(true, nil, nil)); diff != "" {
		t.Errorf("pages oldest first (-want +got):\n%s", diff)
	}
	exact := []string{"[user.disabled 2 user.attribute.set 1 user.created 2] more true", "[user.created 1] more false"}
	if diff := cmp.Diff(exact, pages(false, &identity.AuditFilter{Action: "user."}, nil)); diff != "" {
		t.Errorf("pages of user. (-want +got):\n%s", diff)
	}
	three := []string{"[user.disabled 2 user.attribute.set 1 sign_in.succeeded 1] more false"}
	if diff := cmp.Diff(three, pages(false, &identity.AuditFilter{Outcome: identity.OutcomeSuccess, Since: t0.Add(4 * time.Second)}, nil)); diff != "" {
		t.Errorf("a page of exactly the records left (-want +got):\n%s", diff)
	}
	// Records appended between pages: newest first they are before the
	// first page, never in the next; oldest first, the last page
	// reaches them.
	appendOne := func(int) {
		e.clock.Advance(time.Second)
		must(t, ws.EnableUser(as(key), 2))
		e.clock.Advance(time.Second)
		must(t, ws.DisableUser(as(key), 2))
	}
	if diff := cmp.Diff(newest, pages(false, nil, appendOne)); diff != "" {
		t.Errorf("pages newest first, records appended meanwhile (-want +got):\n%s", diff)
	}
	// The two appends of the pages newest first, then three more
	// between the pages: 18 records.
	grown := []string{
		"[workspace.created trail user.created 1 user.created 2] more true",
		"[sign_in.failed 1 sign_in.succeeded 1 user.attribute.set 1] more true",
		"[user.disabled 2 sign_in.failed @nobody user.enabled 2] more true",
		"[user.disabled 2 user.enabled 2 user.disabled 2] more true",
		"[user.enabled 2 user.disabled 2 user.enabled 2] more true",
		"[user.disabled 2 user.enabled 2 user.disabled 2] more false",
	}
	appended := 0
	if diff := cmp.Diff(grown, pages(true, nil, func(i int) {
		if appended < 3 {
			appended++
			appendOne(i)
		}
	})); diff != "" {
		t.Errorf("pages oldest first, records appended meanwhile (-want +got):\n%s", diff)
	}

	invalid := []struct {
		name   string
		filter *identity.AuditFilter
		page   *identity.AuditPageOptions
		fields []identity.FieldError
	}{
		{"an unknown actor kind", &identity.AuditFilter{ActorKind: "robot"}, nil, []identity.FieldError{fe("actor", identity.RuleUnknown)}},
		{"an actor id without kind", &identity.AuditFilter{ActorID: "k1"}, nil, []identity.FieldError{fe("actor", identity.RuleRequired)}},
		{"an unknown target kind", &identity.AuditFilter{TargetKind: "planet", TargetID: "3"}, nil, []identity.FieldError{fe("target", identity.RuleUnknown)}},
		{"a target id without kind", &identity.AuditFilter{TargetID: "1"}, nil, []identity.FieldError{fe("target", identity.RuleRequired)}},
		{"an unknown action", &identity.AuditFilter{Action: "user.created.twice"}, nil, []identity.FieldError{fe("action", identity.RuleUnknown)}},
		{"a prefix without its dot", &identity.AuditFilter{Action: "user"}, nil, []identity.FieldError{fe("action", identity.RuleUnknown)}},
		{"a prefix of nothing", &identity.AuditFilter{Action: "planet."}, nil, []identity.FieldError{fe("action", identity.RuleUnknown)}},
		{"an unknown outcome", &identity.AuditFilter{Outcome: "maybe"}, nil, []identity.FieldError{fe("outcome", identity.RuleUnknown)}},
		{"a limit too large", nil, &identity.AuditPageOptions{Limit: identity.MaxPageLimit + 1}, []identity.FieldError{fe("limit", identity.RuleRange)}},
		{"a negative limit", nil, &identity.AuditPageOptions{Limit: -1}, []identity.FieldError{fe("limit", identity.RuleRange)}},
		{"a cursor of another shape", nil, &identity.AuditPageOptions{Cursor: "page-2"}, []identity.FieldError{fe("cursor", identity.RuleFormat)}},
		{"all at once", &identity.AuditFilter{ActorKind: "robot", TargetID: "1", Action: "nope", Outcome: "maybe"},
			&identity.AuditPageOptions{Limit: 1000, Cursor: strings.Repeat("g", 32)},
			[]identity.FieldError{fe("limit", identity.RuleRange), fe("actor", identity.RuleUnknown), fe("target", identity.RuleRequired),
				fe("action", identity.RuleUnknown), fe("outcome", identity.RuleUnknown), fe("cursor", identity.RuleFormat)}},
	}
	for _, tt := range invalid {
		_, err := ws.ListAuditRecords(e.ctx, tt.filter, tt.page)
		if identity.ErrorCode(err) != identity.CodeInvalid {
			t.Errorf("%s: err %v, want CodeInvalid", tt.name, err)
			continue
		}
		WantFields(t, err, tt.fields)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantRefused fails the test unless err is a refused sign-in.
func wantRefused(t *testing.T, err error) {
	t.Helper()
	WantCode(t, err, identity.CodeUnauthenticated)
}

// err2 drops the value of a call that returns a value and an error.
func err2[T any](_ T, err error) error { return err }
