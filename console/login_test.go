package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

var (
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
	secretText  = regexp.MustCompile(`id="secret">([^<]*)<`)
	titleText   = regexp.MustCompile(`<h1>([^<]*)</h1>`)
)

// hiddenFields returns the hidden fields of the first form of a page.
func hiddenFields(body string) url.Values {
	form, _, _ := strings.Cut(body, "</form>")
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(form, -1) {
		v.Add(m[1], html.UnescapeString(m[2]))
	}
	return v
}

func titleOf(body string) string {
	m := titleText.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// follow gets the location of a redirect, made absolute on the env's
// server.
func (e *env) follow(b *browser, r reply) reply {
	e.t.Helper()
	if r.status != http.StatusSeeOther && r.status != http.StatusFound {
		e.t.Fatalf("want a redirect, got %d: %s", r.status, r.body)
	}
	loc := r.location()
	if strings.HasPrefix(loc, "/") {
		loc = e.srv.URL + loc
	}
	return b.get(loc)
}

// submitForm posts the first form of page to its action (on the env's
// server) with its hidden fields and the fields set.
func (e *env) submitForm(b *browser, page reply, set map[string]string) reply {
	e.t.Helper()
	m := regexp.MustCompile(`<form[^>]* action="([^"]*)"`).FindStringSubmatch(page.body)
	if m == nil {
		e.t.Fatalf("no form on the page: %s", page.body)
	}
	action := html.UnescapeString(m[1])
	if strings.HasPrefix(action, "/") {
		action = e.srv.URL + action
	}
	form := hiddenFields(page.body)
	for k, v := range set {
		form.Set(k, v)
	}
	return b.post(action, form)
}

// setUp completes the setup page of a link as the operator would.
func (e *env) setUp(b *browser, link, email, password string) reply {
	e.t.Helper()
	page := b.get(link)
	if page.status != http.StatusOK {
		e.t.Fatalf("setup page: %d %s", page.status, page.body)
	}
	return e.submitForm(b, page, map[string]string{"email": email, "fullName": "Ada Lovelace", "password": password, "password2": password})
}

// signIn signs b in to the console from its sign-in, through the
// provider's hosted pages: the password, the second factor's enrolment
// when the operator has none (whose secret it returns) or the code of
// secret, then back to the console; or straight back when the provider's
// session signs b in. It returns the console's first page.
func (e *env) signIn(b *browser, login, password, secret string) (reply, string) {
	e.t.Helper()
	r := b.get(e.url("login?next=" + url.QueryEscape(e.base+"workspaces")))
	if !strings.HasPrefix(r.location(), e.srv.URL+"/t/operators/authorize?") {
		e.t.Fatalf("login: %d %q, want a redirect to the provider", r.status, r.location())
	}
	r = e.follow(b, r) // the provider's authorize
	if strings.HasPrefix(r.location(), e.url("callback?")) {
		// Signed in at the provider already (single sign-on).
		return e.follow(b, e.follow(b, r)), secret
	}
	r = e.follow(b, r) // the sign-in page
	r = e.submitForm(b, r, map[string]string{"login": login, "password": password})
	if secret == "" {
		m := secretText.FindStringSubmatch(r.body)
		if m == nil {
			e.t.Fatalf("no enrolment after the password: %d %s", r.status, r.body)
		}
		secret = strings.ReplaceAll(html.UnescapeString(m[1]), " ", "")
	}
	code, err := totp.GenerateCode(secret, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	r = e.submitForm(b, r, map[string]string{"code": code})
	if strings.Contains(r.body, "recovery") {
		r = e.submitForm(b, r, map[string]string{"saved": "1"})
	}
	if !strings.HasPrefix(r.location(), e.url("callback?")) {
		e.t.Fatalf("after the second factor: %d %q, want the console's callback: %s", r.status, r.location(), r.body)
	}
	r = e.follow(b, r)
	return e.follow(b, r), secret
}

// TestFirstRun: Invite's link sets up an operator, who signs in through
// the provider, enrols a second factor there, and lands on the console
// with a session of the operator workspace; the link works once.
func TestFirstRun(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if has, err := e.console.HasOperator(ctx); has || err != nil {
		t.Fatalf("HasOperator before = %v, %v", has, err)
	}
	link, err := e.console.Invite(ctx, "ada", console.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, e.url("setup?token=idas_")) {
		t.Fatalf("link %q", link)
	}
	if has, _ := e.console.HasOperator(ctx); has {
		t.Fatal("an invited operator counts before the setup")
	}
	b := e.browser()
	// The passwords must match; the page says which field is wrong.
	page := b.get(link)
	if !strings.Contains(page.body, "<strong>ada</strong>") || strings.Contains(page.body, "operators.invalid") {
		t.Errorf("setup page:\n%s", page.body)
	}
	r := e.submitForm(b, page, map[string]string{"email": "ada@example.com", "fullName": "Ada", "password": "a long password", "password2": "another"})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="password2-error"`) {
		t.Errorf("passwords differ: %d\n%s", r.status, r.body)
	}
	r = e.submitForm(b, page, map[string]string{"email": "ada@example.com", "fullName": "Ada", "password": "short", "password2": "short"})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="password-error"`) {
		t.Errorf("short password: %d\n%s", r.status, r.body)
	}
	r = e.setUp(b, link, "ada@example.com", "analytical engine")
	if r.status != http.StatusOK || titleOf(r.body) != "Your account is ready" {
		t.Fatalf("setup: %d %s", r.status, r.body)
	}
	if has, err := e.console.HasOperator(ctx); !has || err != nil {
		t.Errorf("HasOperator after = %v, %v", has, err)
	}
	if r := b.get(link); r.status != http.StatusBadRequest || !strings.Contains(r.body, "used already") {
		t.Errorf("the link again: %d %s", r.status, r.body)
	}

	first, _ := e.signIn(b, "ada", "analytical engine", "")
	if first.status != http.StatusOK || titleOf(first.body) != "Workspaces" || !strings.Contains(first.body, "Signed in as <strong>ada</strong>") {
		t.Fatalf("after the sign-in: %d %s", first.status, first.body)
	}
	u, err := e.ops.GetUser(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !u.MFAEnabled || !u.Enabled || u.Email != "ada@example.com" {
		t.Errorf("operator %+v: want enabled, with a second factor and the email chosen", u)
	}
	// The console's own session is a session of the operator workspace,
	// with the methods of the sign-in.
	sessions, err := e.ops.ListSessions(ctx, u.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var amrs [][]string
	for _, s := range sessions.Items {
		if s.Active(e.clock.Now()) {
			amrs = append(amrs, s.AMR)
		}
	}
	if diff := cmp.Diff([][]string{{"pwd", "otp", "mfa"}, {"pwd", "otp", "mfa"}}, amrs); diff != "" {
		t.Errorf("active sessions' AMR (the provider's and the console's) (-want +got):\n%s", diff)
	}
	// The console's session.created names the operator as its actor.
	trail, err := e.ops.ListAuditRecords(ctx, &identity.AuditFilter{Action: string(identity.AuditSessionCreated)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var actors []identity.Actor
	for _, r := range trail.Records {
		actors = append(actors, r.Actor)
	}
	slices.SortFunc(actors, func(a, b identity.Actor) int { return strings.Compare(string(a.Kind), string(b.Kind)) })
	if diff := cmp.Diff([]identity.Actor{
		{Kind: identity.ActorOperator, ID: "1", Display: "ada"}, // the console's
		{Kind: identity.ActorUser, ID: "1", Display: "ada"},     // the provider's
	}, actors); diff != "" {
		t.Errorf("session.created actors (-want +got):\n%s", diff)
	}
}

// TestSignInRefusals: a callback that does not match the sign-in the
// browser started creates no session.
func TestSignInRefusals(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	tests := map[string]string{
		"no sign-in started":      "callback?code=x&state=y",
		"error from the provider": "callback?error=access_denied&state=",
	}
	for name, path := range tests {
		if r := b.get(e.url(path)); r.status != http.StatusBadRequest || titleOf(r.body) != "Sign-in failed" {
			t.Errorf("%s: %d %s", name, r.status, titleOf(r.body))
		}
	}
	// A started sign-in whose state is not the callback's.
	b.get(e.url("login"))
	if r := b.get(e.url("callback?code=x&state=other")); r.status != http.StatusBadRequest {
		t.Errorf("wrong state: %d", r.status)
	}
	// A code that is not the provider's.
	r := b.get(e.url("login"))
	state := mustQuery(t, r.location()).Get("state")
	if r := b.get(e.url("callback?code=idac_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&state=" + state)); r.status != http.StatusBadRequest {
		t.Errorf("forged code: %d", r.status)
	}
}

func mustQuery(t *testing.T, u string) url.Values {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Query()
}

// TestSessionLimits: the console session ends after IdleTimeout unused
// and after SessionLifetime however used, and at sign-out; each time the
// session of the operator workspace is revoked.
func TestSessionLimits(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	link, err := e.console.Invite(ctx, "ada", console.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.setUp(b, link, "ada@example.com", "analytical engine")
	_, secret := e.signIn(b, "ada", "analytical engine", "")
	signedOut := func(r reply) bool {
		return r.status == http.StatusSeeOther && strings.HasPrefix(r.location(), e.base+"login?")
	}

	// Used every 29 minutes: still signed in after 7 h 44 min.
	for range 16 {
		e.clock.Advance(29 * time.Minute)
		if r := b.get(e.url("workspaces")); r.status != http.StatusOK {
			t.Fatalf("at %s: %d", e.clock.Now(), r.status)
		}
	}
	// Past 8 hours: over, however active.
	e.clock.Advance(20 * time.Minute)
	if r := b.get(e.url("workspaces")); !signedOut(r) {
		t.Fatalf("after 8 h: %d %q", r.status, r.location())
	}

	// Idle: a new sign-in (the provider's own session is reused, with its
	// second factor), unused for 30 minutes.
	e.clock.Advance(time.Minute)
	e.signIn(b, "ada", "analytical engine", secret)
	e.clock.Advance(29 * time.Minute)
	if r := b.get(e.url("workspaces")); r.status != http.StatusOK {
		t.Fatalf("after 29 min: %d", r.status)
	}
	e.clock.Advance(30 * time.Minute)
	if r := b.get(e.url("workspaces")); !signedOut(r) {
		t.Fatalf("after 30 idle minutes: %d %q", r.status, r.location())
	}

	// Sign-out revokes the session and goes to the provider's logout.
	e.clock.Advance(time.Minute)
	e.signIn(b, "ada", "analytical engine", secret)
	r := b.get(e.url("workspaces"))
	r = b.post(e.url("logout"), nil)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), e.srv.URL+"/t/operators/end_session?") ||
		mustQuery(t, r.location()).Get("post_logout_redirect_uri") != e.url("") {
		t.Fatalf("logout: %d %q", r.status, r.location())
	}
	if r := b.get(e.url("workspaces")); !signedOut(r) {
		t.Errorf("after logout: %d", r.status)
	}
	sessions, err := e.ops.ListSessions(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	console := 0
	for _, s := range sessions.Items {
		if s.RevokedAt != nil {
			console++
		}
	}
	if console != 3 {
		t.Errorf("%d sessions revoked, want the console's 3", console)
	}
}

// TestAuditActor: what an operator does is recorded with the operator as
// the actor and the request's address.
func TestAuditActor(t *testing.T) {
	e := newEnv(t)
	admin := e.operator("root", console.RoleAdmin)
	if r := admin.post(e.url("workspaces"), url.Values{"slug": {"acme"}}); r.status != http.StatusSeeOther {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	ws, err := e.svc.GetWorkspace(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	page, err := ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditWorkspaceCreated)}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("records %+v, %v", page, err)
	}
	rec := page.Records[0]
	root, err := findOperator(e, "root")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"actor": rec.Actor, "address": rec.Request.Address}
	want := map[string]any{"actor": identity.Actor{Kind: identity.ActorOperator, ID: root, Display: "root"}, "address": "127.0.0.1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
}

// findOperator returns the id, in decimal, of the operator username.
func findOperator(e *env, username string) (string, error) {
	l, err := e.ops.ListUsers(e.t.Context(), username, nil)
	if err != nil || len(l.Items) == 0 {
		return "", err
	}
	return strconv.FormatInt(l.Items[0].ID, 10), nil
}

// TestFirstOperatorChoosesUsername: Invite without a username makes the
// first operator (as "admin"), who chooses their username on the setup
// page and signs in with it; while an operator admin can sign in,
// inviting without a username is refused.
func TestFirstOperatorChoosesUsername(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	link, err := e.console.Invite(ctx, "", console.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	page := b.get(link)
	if !strings.Contains(page.body, `<input id="username" name="username" type="text" value="admin"`) {
		t.Fatalf("no username field:\n%s", page.body)
	}
	form := map[string]string{"username": "not a name!", "email": "grace@example.com", "fullName": "Grace Hopper",
		"password": "compiler compiler", "password2": "compiler compiler"}
	if r := e.submitForm(b, page, form); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="username-error"`) {
		t.Errorf("bad username: %d\n%s", r.status, r.body)
	}
	form["username"] = "grace"
	if r := e.submitForm(b, page, form); r.status != http.StatusOK || !strings.Contains(r.body, "<strong>grace</strong>") {
		t.Fatalf("setup: %d\n%s", r.status, r.body)
	}
	first, _ := e.signIn(b, "grace", "compiler compiler", "")
	if !strings.Contains(first.body, "Signed in as <strong>grace</strong>") {
		t.Errorf("signed in:\n%s", first.body)
	}
	// A named invitation shows the name, and a username sent anyway is
	// refused by the library.
	named, err := e.console.Invite(ctx, "alan", console.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	other := e.browser()
	page = other.get(named)
	if strings.Contains(page.body, `id="username"`) || !strings.Contains(page.body, "<strong>alan</strong>") {
		t.Errorf("named setup page:\n%s", page.body)
	}
	r := e.submitForm(other, page, map[string]string{"username": "mallory", "email": "alan@example.com", "password": "enigma machine", "password2": "enigma machine"})
	if r.status != http.StatusOK || !strings.Contains(r.body, "<strong>alan</strong>") {
		t.Errorf("a username sent to a named link: %d\n%s", r.status, r.body)
	}
	if has, _ := e.console.HasOperator(ctx); !has {
		t.Error("HasOperator false")
	}
	// The placeholder name is free again once renamed; kept, it is an
	// operator's, and inviting without a username is refused.
	again, err := e.console.Invite(ctx, "", console.RoleAdmin)
	if err != nil {
		t.Fatalf("the placeholder is free again once renamed: %v", err)
	}
	e.setUp(e.browser(), again, "admin@example.com", "keeps the name")
	if _, err := e.console.Invite(ctx, "", console.RoleAdmin); err == nil {
		t.Error("invited without a username while an operator admin can sign in")
	}
}
