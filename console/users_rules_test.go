package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// userEnv is an env with workspace acme, its user ada (password
// "correct horse battery") and an admin operator.
type userEnv struct {
	*env
	ws    *identity.Workspace
	ada   identity.User
	admin *browser
}

func newUserEnv(t *testing.T) *userEnv {
	t.Helper()
	e := newEnv(t)
	ws := e.workspace("acme")
	ada, err := ws.CreateUser(t.Context(), identity.NewUser{Username: "ada", Email: "ada@example.com",
		FullName: "Ada Lovelace", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	return &userEnv{env: e, ws: ws, ada: ada, admin: e.operator("root", console.RoleAdmin)}
}

var userPostForm = regexp.MustCompile(`<form[^>]* method="post" action="([^"]+)"`)

// A viewer of the workspace reads the users pages without a single write
// control but the sign-out, and a write is refused.
func TestUsersViewer(t *testing.T) {
	e := newUserEnv(t)
	viewer := e.operator("watcher", console.WorkspaceRole(console.RoleViewer, "acme"))
	for _, path := range []string{"workspaces/acme/users", "workspaces/acme/users?q=a", "workspaces/acme/users?disabled=1",
		"workspaces/acme/users/" + strconv.FormatInt(e.ada.ID, 10), "workspaces/acme/users/" + strconv.FormatInt(e.ada.ID, 10) + "/audit"} {
		r := viewer.get(e.url(path))
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d", path, r.status)
		}
		var forms []string
		for _, m := range userPostForm.FindAllStringSubmatch(r.body, -1) {
			forms = append(forms, m[1])
		}
		if diff := cmp.Diff([]string{e.base + "logout"}, forms); diff != "" {
			t.Errorf("%s: POST forms (-want +got):\n%s", path, diff)
		}
		if strings.Contains(r.body, `type="checkbox" name="id"`) {
			t.Errorf("%s: selection checkboxes", path)
		}
	}
	r := viewer.post(e.userPage("acme", e.ada.ID, "/disable"), nil)
	if r.status != http.StatusForbidden {
		t.Errorf("a viewer's disable: %d, want 403", r.status)
	}
	if u, _ := e.ws.GetUser(t.Context(), e.ada.ID); !u.Enabled {
		t.Error("a viewer disabled ada")
	}
	// An operator of another workspace does not see these pages.
	other := e.operator("stranger", console.WorkspaceRole(console.RoleAdmin, "other"))
	if r := other.get(e.url("workspaces/acme/users")); r.status != http.StatusForbidden {
		t.Errorf("another workspace's admin: %d, want 403", r.status)
	}
}

// Hostile names are escaped wherever the users pages show them.
func TestUsersEscaping(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	const hostile = `<script>alert("x")</script>'"`
	u, err := e.ws.CreateUser(ctx, identity.NewUser{Username: "mallory", Email: "mallory@example.com", FullName: hostile, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.SetAttribute(ctx, u.ID, hostile, hostile, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.CreateGroup(ctx, identity.NewGroup{Name: "staff", Description: hostile}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"workspaces/acme/users?q=mal", "workspaces/acme/users/" + strconv.FormatInt(u.ID, 10) + "?groupq=st",
		"workspaces/acme/users?q=" + url.QueryEscape(hostile)} {
		r := e.admin.get(e.url(path))
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d", path, r.status)
		}
		if strings.Contains(r.body, "<script>alert") || strings.Contains(r.body, `"x")`) {
			t.Errorf("%s: the hostile name is not escaped", path)
		}
	}
	r := e.admin.get(e.url("workspaces/acme/users/" + strconv.FormatInt(u.ID, 10)))
	if !strings.Contains(r.body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&#39;&#34;") {
		t.Error("the user page does not show the escaped full name")
	}
}

// Every action of the users pages is audited with the operator as the
// actor.
func TestUsersActionAudited(t *testing.T) {
	e := newUserEnv(t)
	if r := e.admin.post(e.userPage("acme", e.ada.ID, "/disable"), nil); r.status != http.StatusSeeOther {
		t.Fatalf("disable: %d", r.status)
	}
	page, err := e.ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditUserDisabled)}, nil)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("user.disabled records: %v, %v", page.Records, err)
	}
	root, err := e.ops.ListUsers(t.Context(), "root", nil)
	if err != nil || len(root.Items) != 1 {
		t.Fatal(root, err)
	}
	want := identity.Actor{Kind: identity.ActorOperator, ID: strconv.FormatInt(root.Items[0].ID, 10), Display: "root"}
	if diff := cmp.Diff(want, page.Records[0].Actor); diff != "" {
		t.Errorf("actor (-want +got):\n%s", diff)
	}
	// The user page shows it in the user's trail.
	r := e.admin.get(e.userPage("acme", e.ada.ID, ""))
	if !strings.Contains(r.body, "<code>user.disabled</code></td><td>operator root</td>") {
		t.Error("the user page's trail does not show the disable by root")
	}
}

// The library's refusals come back next to the fields of the form that
// caused them, with what was typed: an invalid email, a stale version, an
// unknown role, the attribute limit.
func TestUserFormErrors(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	set, err := e.ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set.Limits.AttributesPerUser = 1
	if err := e.ws.UpdateSettings(ctx, set); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.SetAttribute(ctx, e.ada.ID, "team", "blue", nil); err != nil {
		t.Fatal(err)
	}
	ada, _ := e.ws.GetUser(ctx, e.ada.ID)
	version := strconv.FormatInt(ada.Version, 10)
	tests := []struct {
		name   string
		path   string
		form   url.Values
		status int
		// has are bits of the page sent back.
		has []string
	}{
		{"invalid email", "", url.Values{"email": {"not an address"}, "fullName": {"Ada"}, "version": {version}}, http.StatusUnprocessableEntity,
			[]string{`id="email-error"`, `value="not an address"`, `aria-invalid="true"`}},
		{"stale version", "", url.Values{"email": {"ada@example.net"}, "fullName": {"Ada"}, "version": {"1"}}, http.StatusConflict,
			[]string{"Someone changed it while you were editing", `value="ada@example.com"`}},
		{"unknown role", "/roles", url.Values{"role": {"nobody"}}, http.StatusUnprocessableEntity,
			[]string{`<p class="field-error" id="role-error">There is no role named &#34;nobody&#34; in this workspace.</p>`, `value="nobody"`}},
		{"attribute limit", "/attributes", url.Values{"key": {"floor"}, "value": {"3"}}, http.StatusUnprocessableEntity,
			[]string{`<p class="field-error" id="key-error">user ` + strconv.FormatInt(e.ada.ID, 10) + ` already has the maximum of 1 attributes</p>`, `value="floor"`}},
		{"password reset without mail", "/password-reset", nil, http.StatusConflict, []string{`role="alert"`}},
	}
	for _, tc := range tests {
		r := e.admin.post(e.userPage("acme", e.ada.ID, tc.path), tc.form)
		if r.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, r.status, tc.status)
		}
		for _, s := range tc.has {
			if !strings.Contains(r.body, s) {
				t.Errorf("%s: no %s", tc.name, s)
			}
		}
	}
	if u, _ := e.ws.GetUser(ctx, e.ada.ID); u.Email != "ada@example.com" {
		t.Errorf("ada's email changed: %s", u.Email)
	}
}

// A lock is shown with its end and can be lifted; a second factor is
// shown and can be reset; no secret of the user (session token, TOTP
// secret) is on the page.
func TestUserLockAndSecondFactor(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	en, err := e.ws.BeginTOTPEnrollment(ctx, e.ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	code, err := totp.GenerateCode(en.Secret, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	codes, err := e.ws.ConfirmTOTPEnrollment(ctx, e.ada.ID, code)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.ws.CreateSession(ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range identity.DefaultLockoutThreshold {
		if _, err := e.ws.Authenticate(ctx, "ada", "wrong password"); err == nil {
			t.Fatal("a wrong password signed ada in")
		}
	}
	page := e.userPage("acme", e.ada.ID, "")
	r := e.admin.get(page)
	for _, want := range []string{`<dt>Lock</dt><dd><span class="bad">locked</span> until <time datetime="2026-03-01T12:15:00Z">`,
		"<dt>Failed attempts</dt><dd>10 of 10</dd>", "<dt>Second factor</dt><dd>authenticator app since",
		">Unlock</button>", ">Reset the second factor</button>"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("no %s", want)
		}
	}
	for _, secret := range append([]string{s.Secret, en.Secret}, codes...) {
		if strings.Contains(r.body, secret) {
			t.Errorf("the page shows the secret %s", secret)
		}
	}
	if r := e.admin.post(page+"/unlock", nil); r.status != http.StatusSeeOther {
		t.Fatalf("unlock: %d", r.status)
	}
	if st, _ := e.ws.GetLockState(ctx, e.ada.ID); st.Locked || st.Failures != 0 {
		t.Errorf("after unlock: %+v", st)
	}
	if r := e.admin.post(page+"/mfa/reset", nil); r.status != http.StatusSeeOther {
		t.Fatalf("reset: %d", r.status)
	}
	if st, _ := e.ws.GetMFAStatus(ctx, e.ada.ID); st.Enabled {
		t.Errorf("after reset: %+v", st)
	}
	r = e.admin.get(page)
	if !strings.Contains(r.body, "<dt>Second factor</dt><dd>none</dd>") || strings.Contains(r.body, ">Unlock") {
		t.Error("the page still shows the lock or the second factor")
	}
}

// The user page lists the user's passkeys (name, authenticator, dates,
// whether synced) and an admin removes one, the last one too, audited as
// the operator; a viewer sees the list without the remove buttons.
func TestUserPasskeys(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	used := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	imported, err := e.ws.ImportUsers(ctx, []identity.ImportedUser{{Username: "kim", Email: "kim@example.com", FullName: "Kim Lee",
		PasskeyHandle: "a2ltLWhhbmRsZQ", Passkeys: []identity.ImportedPasskey{
			{ID: "AQID", Name: "Kim's phone", PublicKey: "pQECAyYgASFYIA", AAGUID: "fbfc3007-154e-4ecc-8c0b-6e020557d7bd",
				BackupEligible: true, BackupState: true, CreatedAt: time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC), LastUsedAt: used},
			{ID: "BAUG", Name: "<b>Key</b>", PublicKey: "pQECAyYgASFYIA", CreatedAt: time.Date(2026, 10, 5, 8, 0, 0, 0, time.UTC)},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	kim := imported[0].ID
	page := e.userPage("acme", kim, "")
	r := e.admin.get(page)
	for _, want := range []string{
		`<h3 id="passkeys">Passkeys (2)</h3>`,
		`<tr><th scope="row">Kim&#39;s phone</th><td>iCloud Keychain</td>`,
		`<td><time datetime="2026-11-02T09:30:00Z">2026-11-02 09:30 UTC</time></td>`,
		`<td>yes</td>`,
		`<tr><th scope="row">&lt;b&gt;Key&lt;/b&gt;</th><td>unknown</td>`,
		`<td>never</td>`,
		`<td>no: bound to the device</td>`,
		`action="/console/workspaces/acme/users/2/passkeys/BAUG/delete"`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the user page lacks %s", want)
		}
	}
	viewer := e.operator("watcher", console.WorkspaceRole(console.RoleViewer, "acme"))
	if r := viewer.get(page); !strings.Contains(r.body, `<h3 id="passkeys">Passkeys (2)</h3>`) || strings.Contains(r.body, "/delete") {
		t.Error("a viewer does not see the passkeys, or sees a remove button")
	}
	if r := viewer.post(page+"/passkeys/BAUG/delete", nil); r.status != http.StatusForbidden {
		t.Errorf("a viewer's removal: %d, want 403", r.status)
	}
	r = e.admin.post(page+"/passkeys/BAUG/delete", nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", r.status)
	}
	r = e.admin.get(e.srv.URL + r.location())
	if !strings.Contains(r.body, "Passkey removed.") || !strings.Contains(r.body, `<h3 id="passkeys">Passkeys (1)</h3>`) {
		t.Error("the page after the removal does not say it")
	}
	// The last one goes too, under "required": the user registers a new
	// one at their next password sign-in.
	set, _ := e.ws.GetSettings(ctx)
	set.Passkeys = identity.PasskeysRequired
	if err := e.ws.UpdateSettings(ctx, set); err != nil {
		t.Fatal(err)
	}
	if r := e.admin.post(page+"/passkeys/AQID/delete", nil); r.status != http.StatusSeeOther {
		t.Fatalf("remove the last: %d", r.status)
	}
	if keys, err := e.ws.ListPasskeys(ctx, kim); err != nil || len(keys) != 0 {
		t.Errorf("passkeys left: %v, %v", keys, err)
	}
	if r := e.admin.post(page+"/passkeys/AQID/delete", nil); r.status != http.StatusNotFound {
		t.Errorf("removing it again: %d, want 404", r.status)
	}
	recs, err := e.ws.ListAuditRecords(ctx, &identity.AuditFilter{Action: string(identity.AuditPasskeyRemoved)}, nil)
	if err != nil || len(recs.Records) != 2 {
		t.Fatalf("user.passkey.removed records: %v, %v", recs.Records, err)
	}
	for _, rec := range recs.Records {
		if rec.Actor.Kind != identity.ActorOperator || rec.Actor.Display != "root" {
			t.Errorf("actor %+v, want operator root", rec.Actor)
		}
	}
}

// The claims preview names the mapper behind a claim, follows the client
// and scopes asked, and says why a disabled user has none.
func TestUserClaimsPreview(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	if _, err := e.ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "department"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.SetAttribute(ctx, e.ada.ID, "dept", "engines", nil); err != nil {
		t.Fatal(err)
	}
	page := e.userPage("acme", e.ada.ID, "")
	r := e.admin.get(page)
	for _, want := range []string{`<tr><th scope="row"><code>department</code></th><td><code>&#34;engines&#34;</code></td><td>mapper of attribute dept</td></tr>`,
		"<h3>ID token</h3>", `<td>scope email</td>`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("no %s", want)
		}
	}
	r = e.admin.get(page + "?scopes=groups")
	if !strings.Contains(r.body, "No ID token without the openid scope.") {
		t.Error("scopes without openid: an ID token is shown")
	}
	r = e.admin.get(page + "?client=idc_0000000000000000")
	if r.status != http.StatusOK || !strings.Contains(r.body, "There is no such client") {
		t.Errorf("an unknown client: %d", r.status)
	}
	if err := e.ws.DisableUser(ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.admin.get(page); !strings.Contains(r.body, "A disabled user gets no tokens") {
		t.Error("a disabled user's preview does not say why it is empty")
	}
}

// Permanent deletion asks for the username typed; then the user is gone
// and the username free, which the list says.
func TestUserDelete(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	page := e.userPage("acme", e.ada.ID, "/delete")
	if r := e.admin.get(page); r.status != http.StatusOK || !strings.Contains(r.body, `<label for="confirm">Type <strong>ada</strong> to confirm</label>`) {
		t.Fatalf("confirmation page: %d", r.status)
	}
	if r := e.admin.post(page, url.Values{"confirm": {"ADA"}}); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="confirm-error"`) {
		t.Errorf("a wrong confirmation: %d", r.status)
	}
	if _, err := e.ws.GetUser(ctx, e.ada.ID); err != nil {
		t.Fatalf("ada after a wrong confirmation: %v", err)
	}
	r := e.admin.post(page, url.Values{"confirm": {"ada"}})
	want := e.base + "workspaces/acme/users?deleted=" + strconv.FormatInt(e.ada.ID, 10) + "&username=ada"
	if r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("delete: %d %q, want 303 %q", r.status, r.location(), want)
	}
	if _, err := e.ws.GetUser(ctx, e.ada.ID); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("ada after the deletion: %v", err)
	}
	if r := e.admin.get(e.srv.URL + r.location()); !strings.Contains(r.body, "User ada deleted permanently; the username is free.") {
		t.Error("no notice of the deletion")
	}
	if _, err := e.ws.CreateUser(ctx, identity.NewUser{Username: "ADA", Email: "ada@example.com", FullName: "Ada again", Password: "correct horse battery"}); err != nil {
		t.Errorf("the username is not free: %v", err)
	}
	// The notice is not shown while the username is taken.
	if r := e.admin.get(e.srv.URL + r.location()); strings.Contains(r.body, "deleted permanently") {
		t.Error("the notice shows while the username is taken again")
	}
}

var countsOnPage = regexp.MustCompile(`<p>(\d+) users ([a-z ]+)\.`)

// Bulk actions: a selection, confirmed; a search, counted and confirmed,
// handled bulkMax users per request with the next ones offered; a
// deletion only with the count typed.
func TestUsersBulk(t *testing.T) {
	e := newUserEnv(t)
	ctx := t.Context()
	users := e.importUsers(e.ws, "u", 1050, nil)
	bulk := e.url("workspaces/acme/users/bulk")

	// A selection: confirm, then done.
	sel := url.Values{"scope": {"selected"}, "action": {"disable"}, "id": {strconv.FormatInt(users[3].ID, 10), strconv.FormatInt(users[5].ID, 10), "999999"}}
	r := e.admin.post(bulk, sel)
	if r.status != http.StatusOK || !strings.Contains(r.body, "<p>Disable <strong>2</strong> users?</p>") {
		t.Fatalf("selection's confirmation: %d %s", r.status, r.body)
	}
	if u, _ := e.ws.GetUser(ctx, users[3].ID); !u.Enabled {
		t.Fatal("disabled before the confirmation")
	}
	sel.Set("confirm", "yes")
	r = e.admin.post(bulk, sel)
	if m := countsOnPage.FindStringSubmatch(r.body); m == nil || m[1] != "2" || m[2] != "disabled" {
		t.Errorf("selection's outcome: %v", m)
	}
	for _, u := range []identity.User{users[3], users[5]} {
		if got, _ := e.ws.GetUser(ctx, u.ID); got.Enabled {
			t.Errorf("%s still enabled", u.Username)
		}
	}

	// A search of 1,050 users: 1,000 in the first request, then 50.
	search := url.Values{"scope": {"search"}, "action": {"revoke"}, "q": {"u"}}
	r = e.admin.post(bulk, search)
	if !strings.Contains(r.body, "<p>Revoke every session of <strong>1000</strong> users: the search “u” matches 1050, and one request handles at most 1000 (from match 0 on)?</p>") {
		t.Errorf("search's confirmation: %s", r.body)
	}
	search.Set("confirm", "yes")
	r = e.admin.post(bulk, search)
	if m := countsOnPage.FindStringSubmatch(r.body); m == nil || m[1] != "1000" {
		t.Errorf("first request's outcome: %v", m)
	}
	if !strings.Contains(r.body, `<input type="hidden" name="from" value="1000">`) {
		t.Error("no offer to go on from 1000")
	}
	search.Set("from", "1000")
	r = e.admin.post(bulk, search)
	if m := countsOnPage.FindStringSubmatch(r.body); m == nil || m[1] != "50" || strings.Contains(r.body, `name="from"`) {
		t.Errorf("second request's outcome: %v", m)
	}

	// Deleting a search asks for the count typed.
	del := url.Values{"scope": {"search"}, "action": {"delete"}, "q": {"u000"}, "confirm": {"yes"}, "typed": {"9"}}
	if r := e.admin.post(bulk, del); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="typed-error"`) {
		t.Errorf("a wrong count: %d", r.status)
	}
	if list, _ := e.ws.ListUsers(ctx, "u000", nil); list.Total != 10 {
		t.Fatalf("deleted with a wrong count: %d left", list.Total)
	}
	del.Set("typed", "10")
	r = e.admin.post(bulk, del)
	if m := countsOnPage.FindStringSubmatch(r.body); m == nil || m[1] != "10" || m[2] != "deleted permanently" {
		t.Errorf("deletion's outcome: %v", m)
	}
	if list, _ := e.ws.ListUsers(ctx, "u000", nil); list.Total != 0 {
		t.Errorf("%d users left", list.Total)
	}
	// More than bulkMax selected is refused.
	many := url.Values{"scope": {"selected"}, "action": {"disable"}}
	for _, u := range users[:1001] {
		many.Add("id", strconv.FormatInt(u.ID, 10))
	}
	if r := e.admin.post(bulk, many); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "at most 1000 users per request") {
		t.Errorf("1,001 selected: %d", r.status)
	}
}
