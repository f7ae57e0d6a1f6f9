package console_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// cconfigCSRFRows are the POST routes of the workspace's configuration
// pages (settings, roles and groups, mappers), in csrfRows.
var cconfigCSRFRows = map[string]struct {
	path string
	form url.Values
}{
	"workspaces/{slug}/settings/password":         {"workspaces/acme/settings/password", url.Values{"passwordPolicy.minLength": {"12"}, "passwordPolicy.maxLength": {"100"}}},
	"workspaces/{slug}/settings/lockout":          {"workspaces/acme/settings/lockout", url.Values{"lockout.threshold": {"3"}}},
	"workspaces/{slug}/settings/mfa":              {"workspaces/acme/settings/mfa", url.Values{"mfa": {"required"}}},
	"workspaces/{slug}/settings/limits":           {"workspaces/acme/settings/limits", url.Values{"limits.roles": {"5"}}},
	"workspaces/{slug}/settings/retention":        {"workspaces/acme/settings/retention", url.Values{"retention.auditDays": {"30"}}},
	"workspaces/{slug}/settings/smtp":             {"workspaces/acme/settings/smtp", url.Values{"smtp.host": {"localhost"}, "smtp.port": {"25"}, "smtp.tls": {"none"}, "smtp.from": {"a@example.com"}}},
	"workspaces/{slug}/settings/smtp/delete":      {"workspaces/acme/settings/smtp/delete", nil},
	"workspaces/{slug}/settings/smtp/test":        {"workspaces/acme/settings/smtp/test", url.Values{"to": {"a@example.com"}}},
	"workspaces/{slug}/settings/branding":         {"workspaces/acme/settings/branding", url.Values{"branding.displayName": {"Forged"}}},
	"workspaces/{slug}/settings/branding/preview": {"workspaces/acme/settings/branding/preview", url.Values{"branding.displayName": {"Forged"}}},
	"workspaces/{slug}/settings/logo":             {"workspaces/acme/settings/logo", nil},
	"workspaces/{slug}/settings/logo/delete":      {"workspaces/acme/settings/logo/delete", nil},
}

func init() {
	for k, v := range cconfigCSRFRows {
		csrfRows[k] = v
	}
}

// settings returns the workspace's settings.
func (e *env) settings(slug string) identity.Settings {
	e.t.Helper()
	ws, err := e.svc.GetWorkspace(e.t.Context(), slug)
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := ws.GetSettings(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// TestSettingsSections: each section's form saves that section alone and
// redirects to the page; a value the library refuses, or that is no
// number, comes back with its message next to its input and the value
// typed, with status 422, and nothing saved.
func TestSettingsSections(t *testing.T) {
	e := newEnv(t)
	e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	if r := admin.get(e.url("workspaces/acme/settings")); r.status != http.StatusOK {
		t.Fatalf("settings page: %d\n%s", r.status, r.body)
	}
	refused := []struct {
		section, field, value, message string
	}{
		{"password", "passwordPolicy.minLength", "2", "must be at least 4"},
		{"password", "passwordPolicy.minLength", "eight", "must be a whole number"},
		{"lockout", "lockout.duration", "1.5s", "must be whole seconds between 1s and 720h0m0s (0 for the default, 15m0s)"},
		{"lockout", "lockout.duration", "soon", "must be a duration such as 15m, 1h30m or 24h"},
		{"mfa", "mfa", "sometimes", `must be "optional" or "required"`},
		{"limits", "limits.roles", "100001", "must be between 1 and 100000 (0 means 1000)"},
		{"retention", "retention.auditDays", "3651", "must be between 1 and 3650 days (0 means 365)"},
		{"smtp", "smtp.port", "70000", "must be between 1 and 65535"},
	}
	before := e.settings("acme")
	for _, c := range refused {
		form := url.Values{c.field: {c.value}}
		if c.section == "password" {
			form.Set("passwordPolicy.maxLength", "100")
		}
		if c.section == "smtp" {
			form.Set("smtp.host", "smtp.example.com")
			form.Set("smtp.from", "a@example.com")
		}
		r := admin.post(e.url("workspaces/acme/settings/"+c.section), form)
		want := `<p class="field-error" id="` + c.field + `-error">` + htmlEscape(c.message) + `</p>`
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, want) {
			t.Errorf("%s=%q: %d, want 422 with %s\n%s", c.field, c.value, r.status, want, r.body)
		}
		if !strings.Contains(r.body, `aria-describedby="`) || !strings.Contains(r.body, `id="`+c.field+`" name="`+c.field+`"`) {
			t.Errorf("%s: the input is missing", c.field)
		}
		if c.section != "mfa" && !strings.Contains(r.body, `value="`+c.value+`"`) {
			t.Errorf("%s=%q: the value typed is not sent back", c.field, c.value)
		}
	}
	if diff := cmp.Diff(before, e.settings("acme")); diff != "" {
		t.Errorf("a refused form changed the settings (-before +after):\n%s", diff)
	}

	saves := []struct {
		section string
		form    url.Values
	}{
		{"password", url.Values{"passwordPolicy.minLength": {"12"}, "passwordPolicy.maxLength": {"200"}, "passwordPolicy.requireDigit": {"on"}}},
		{"lockout", url.Values{"lockout.threshold": {"5"}, "lockout.duration": {"20m"}}},
		{"mfa", url.Values{"mfa": {"required"}, "requireVerifiedEmail": {"on"}}},
		{"limits", url.Values{"limits.roles": {"20"}, "limits.groups": {""}, "limits.claimNames": {"7"}}},
		{"retention", url.Values{"retention.auditDays": {"400"}, "retention.mailJobDays": {"3"}}},
	}
	for _, s := range saves {
		r := admin.post(e.url("workspaces/acme/settings/"+s.section), s.form)
		if want := e.base + "workspaces/acme/settings?saved=" + s.section; r.status != http.StatusSeeOther || r.location() != want {
			t.Errorf("save %s: %d %q, want 303 %q\n%s", s.section, r.status, r.location(), want, r.body)
		}
	}
	want := identity.DefaultSettings()
	want.PasswordPolicy = identity.PasswordPolicy{MinLength: 12, MaxLength: 200, RequireDigit: true}
	want.Lockout = identity.LockoutPolicy{Threshold: 5, Duration: 20 * time.Minute}
	want.MFA = identity.MFARequired
	want.RequireVerifiedEmail = true
	want.Limits = identity.Limits{Roles: 20, ClaimNames: 7}
	want.Retention = identity.Retention{AuditDays: 400, MailJobDays: 3}
	if diff := cmp.Diff(want, e.settings("acme")); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	r := admin.get(e.url("workspaces/acme/settings?saved=lockout"))
	for _, s := range []string{
		"The lockout shown is in force.",
		`id="passwordPolicy.minLength" name="passwordPolicy.minLength" type="text" inputmode="numeric" value="12"`,
		`id="passwordPolicy.requireDigit" name="passwordPolicy.requireDigit" value="on" checked`,
		`id="lockout.duration" name="lockout.duration" type="text" value="20m0s"`,
		`<option value="required" selected>`,
		`id="retention.auditDays" name="retention.auditDays" type="text" inputmode="numeric" value="400"`,
	} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the page lacks %s", s)
		}
	}
	if r := admin.get(e.url("workspaces/acme/settings?saved=nonsense")); strings.Contains(r.body, "in force") {
		t.Error("an unknown section has a notice")
	}
	if r := admin.get(e.url("workspaces/nonesuch/settings")); r.status != http.StatusNotFound {
		t.Errorf("an unknown workspace: %d", r.status)
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "'", "&#39;", "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

// TestSettingsSMTPPassword: the SMTP password is never on a page, not
// even in a form sent back with errors; an empty field keeps it; the
// settings can be removed.
func TestSettingsSMTPPassword(t *testing.T) {
	e := newEnv(t)
	e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	const secret = "s3cret-smtp-password"
	form := url.Values{"smtp.host": {"smtp.example.com"}, "smtp.port": {"587"}, "smtp.tls": {"starttls"},
		"smtp.username": {"mailer"}, "smtp.password": {secret}, "smtp.from": {"noreply@example.com"}, "smtp.fromName": {"Acme"}}
	if r := admin.post(e.url("workspaces/acme/settings/smtp"), form); r.status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", r.status, r.body)
	}
	r := admin.get(e.url("workspaces/acme/settings"))
	if strings.Contains(r.body, secret) || !strings.Contains(r.body, `<span class="tag">stored</span>`) ||
		!strings.Contains(r.body, `value="smtp.example.com"`) {
		t.Errorf("the page after saving:\n%s", r.body)
	}
	// Sent back with an error: the password typed is not in it either.
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("smtp.port", "0")
	bad.Set("smtp.password", "another-secret-typed")
	r = admin.post(e.url("workspaces/acme/settings/smtp"), bad)
	if r.status != http.StatusUnprocessableEntity || strings.Contains(r.body, "another-secret-typed") || strings.Contains(r.body, secret) {
		t.Errorf("sent back: %d, holds a password:\n%s", r.status, r.body)
	}
	// An empty field keeps the stored password.
	form.Set("smtp.password", "")
	form.Set("smtp.fromName", "Acme Inc")
	if r := admin.post(e.url("workspaces/acme/settings/smtp"), form); r.status != http.StatusSeeOther {
		t.Fatalf("save without the password: %d\n%s", r.status, r.body)
	}
	got := e.settings("acme").SMTP
	if got == nil || !got.PasswordSet || got.FromName != "Acme Inc" {
		t.Errorf("SMTP after a save without the password: %+v", got)
	}
	// Another section's save keeps it too.
	admin.post(e.url("workspaces/acme/settings/lockout"), url.Values{"lockout.threshold": {"4"}})
	if got := e.settings("acme").SMTP; got == nil || !got.PasswordSet {
		t.Errorf("SMTP after saving the lockout: %+v", got)
	}
	// A changed host needs the password again, next to its field.
	form.Set("smtp.host", "other.example.com")
	r = admin.post(e.url("workspaces/acme/settings/smtp"), form)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="smtp.password-error">is required with a username<`) {
		t.Errorf("changed host without password: %d\n%s", r.status, r.body)
	}
	if r := admin.post(e.url("workspaces/acme/settings/smtp/delete"), nil); r.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", r.status)
	}
	if got := e.settings("acme").SMTP; got != nil {
		t.Errorf("SMTP after removing: %+v", got)
	}
	if r := admin.get(e.url("workspaces/acme/settings?saved=smtp-removed")); !strings.Contains(r.body, "it sends no email") ||
		strings.Contains(r.body, "Remove email settings") {
		t.Errorf("after removing:\n%s", r.body)
	}
}

// pngOf returns a PNG of w×h pixels.
func pngOf(t *testing.T, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{200, 10, 10, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// postFile sends a multipart form with one file, as the logo form does.
func (b *browser) postFile(u, field, name string, data []byte) reply {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("csrf", b.csrf)
	fw, err := mw.CreateFormFile(field, name)
	if err != nil {
		b.t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, u, &body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// TestSettingsBranding: the display name and accent colour, with the
// library's errors inline; the preview of values typed saves nothing;
// the preview's style sheet takes only a colour; the logo goes through
// the library's PNG rules.
func TestSettingsBranding(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	r := admin.post(e.url("workspaces/acme/settings/branding"), url.Values{"branding.displayName": {"Acme"}, "branding.accentColor": {"#eeeeee"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="branding.accentColor-error">must have a contrast of at least 4.5:1`) ||
		!strings.Contains(r.body, `value="#eeeeee"`) {
		t.Errorf("pale accent: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/settings/branding/preview"), url.Values{"branding.displayName": {`<script>alert(1)</script>`}, "branding.accentColor": {"#AA0000"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, `branding.css?accent=%23AA0000`) ||
		!strings.Contains(r.body, `<p class="sp-name">&lt;script&gt;alert(1)&lt;/script&gt;</p>`) || strings.Contains(r.body, "<script>alert") {
		t.Errorf("preview: %d\n%s", r.status, r.body)
	}
	if got := e.settings("acme").Branding; got != (identity.Branding{}) {
		t.Errorf("the preview saved %+v", got)
	}
	r = admin.post(e.url("workspaces/acme/settings/branding"), url.Values{"branding.displayName": {"Acme Corp"}, "branding.accentColor": {"#AA0000"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", r.status, r.body)
	}
	if got, want := e.settings("acme").Branding, (identity.Branding{DisplayName: "Acme Corp", AccentColor: "#aa0000"}); got != want {
		t.Errorf("branding %+v, want %+v", got, want)
	}
	r = admin.get(e.url("workspaces/acme/settings"))
	if !strings.Contains(r.body, `<p class="sp-name">Acme Corp</p>`) || !strings.Contains(r.body, `branding.css?accent=%23aa0000`) {
		t.Errorf("preview of the saved branding:\n%s", r.body)
	}
	for accent, want := range map[string]string{"%23aa0000": "#aa0000", "%23AB12CD": "#ab12cd", "red": "#1d5fc9", "%23aa0000%7D*%7Bx:y": "#1d5fc9"} {
		r := admin.get(e.url("workspaces/acme/settings/branding.css?accent=" + accent))
		if r.status != http.StatusOK || r.body != ".signin-preview{--accent:"+want+"}\n" || r.header.Get("Content-Type") != "text/css; charset=utf-8" {
			t.Errorf("branding.css?accent=%s: %d %q %q", accent, r.status, r.header.Get("Content-Type"), r.body)
		}
	}

	// The logo.
	r = admin.postFile(e.url("workspaces/acme/settings/logo"), "logo", "logo.png", []byte("GIF89a not a png"))
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="logo-error"`) {
		t.Errorf("not a PNG: %d\n%s", r.status, r.body)
	}
	r = admin.postFile(e.url("workspaces/acme/settings/logo"), "logo", "logo.png", bytes.Repeat([]byte("x"), identity.MaxLogoBytes+1))
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="logo-error"`) {
		t.Errorf("too large: %d\n%s", r.status, r.body)
	}
	r = admin.postFile(e.url("workspaces/acme/settings/logo"), "logo", "logo.png", bytes.Repeat([]byte("x"), 2<<20))
	if r.status != http.StatusBadRequest {
		t.Errorf("far too large: %d, want 400", r.status)
	}
	r = admin.postFile(e.url("workspaces/acme/settings/logo"), "logo", "logo.png", pngOf(t, 2000, 10))
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="logo-error"`) {
		t.Errorf("too wide: %d\n%s", r.status, r.body)
	}
	r = admin.postFile(e.url("workspaces/acme/settings/logo"), "logo", "logo.png", pngOf(t, 20, 10))
	if r.status != http.StatusSeeOther {
		t.Fatalf("upload: %d\n%s", r.status, r.body)
	}
	logo, err := ws.GetLogo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r = admin.get(e.url("workspaces/acme/settings/logo"))
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "image/png" || r.body != string(logo.Data) {
		t.Errorf("logo: %d %q", r.status, r.header.Get("Content-Type"))
	}
	if r := admin.get(e.url("workspaces/acme/settings")); !strings.Contains(r.body, `class="sp-logo"`) || !strings.Contains(r.body, "Remove logo") {
		t.Errorf("no logo on the page:\n%s", r.body)
	}
	if r := admin.post(e.url("workspaces/acme/settings/logo/delete"), nil); r.status != http.StatusSeeOther {
		t.Errorf("delete logo: %d", r.status)
	}
	if _, err := ws.GetLogo(t.Context()); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("logo after delete: %v", err)
	}
	if r := admin.get(e.url("workspaces/acme/settings/logo")); r.status != http.StatusNotFound {
		t.Errorf("logo after delete: %d", r.status)
	}
}

// TestSettingsViewer: a viewer reads the settings with no form that
// writes and no submit button, and a write is refused; a workspace
// admin of another workspace may not even read.
func TestSettingsViewer(t *testing.T) {
	e := newEnv(t)
	e.workspace("acme")
	e.workspace("zeta")
	viewer := e.operator("watcher", console.RoleViewer)
	r := viewer.get(e.url("workspaces/acme/settings"))
	if r.status != http.StatusOK || !strings.Contains(r.body, "Password policy") {
		t.Fatalf("viewer: %d\n%s", r.status, r.body)
	}
	if n := strings.Count(r.body, `method="post"`); n != 1 { // signing out
		t.Errorf("the viewer's page has %d POST forms, want the sign-out's alone:\n%s", n, r.body)
	}
	if strings.Contains(r.body, `<button type="submit">`) || strings.Contains(r.body, `type="file"`) {
		t.Errorf("the viewer's page has a write button:\n%s", r.body)
	}
	if r := viewer.post(e.url("workspaces/acme/settings/password"), url.Values{"passwordPolicy.minLength": {"20"}, "passwordPolicy.maxLength": {"30"}}); r.status != http.StatusForbidden {
		t.Errorf("viewer writing: %d", r.status)
	}
	zeta := e.operator("zeta-admin", console.WorkspaceRole(console.RoleAdmin, "zeta"))
	if r := zeta.get(e.url("workspaces/acme/settings")); r.status != http.StatusForbidden {
		t.Errorf("another workspace's admin: %d", r.status)
	}
	if got := e.settings("acme").PasswordPolicy; got != identity.DefaultPasswordPolicy() {
		t.Errorf("password policy changed: %+v", got)
	}
}

// TestSettingsAudited: a change made in the console is in the trail with
// the operator as its actor.
func TestSettingsAudited(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	if r := admin.post(e.url("workspaces/acme/settings/retention"), url.Values{"retention.auditDays": {"400"}}); r.status != http.StatusSeeOther {
		t.Fatalf("save: %d", r.status)
	}
	page, err := ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditSettingsChanged)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 1 {
		t.Fatalf("%d records, want 1", len(page.Records))
	}
	rec := page.Records[0]
	if rec.Actor.Kind != identity.ActorOperator || rec.Actor.Display != "root" {
		t.Errorf("actor %+v, want the operator root", rec.Actor)
	}
	if _, ok := rec.Changes["retention"]; !ok || len(rec.Changes) != 1 {
		t.Errorf("changes %v, want retention alone", rec.Changes)
	}
}

// TestSettingsTestEmail: the test email is queued through the library to
// the address typed, a bad address shown next to its input; the notice
// tells the queue's state of that email only.
func TestSettingsTestEmail(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	if r := admin.get(e.url("workspaces/acme/settings")); strings.Contains(r.body, "Send test email") {
		t.Error("a test email is offered without SMTP settings")
	}
	form := url.Values{"smtp.host": {"smtp.example.com"}, "smtp.port": {"587"}, "smtp.from": {"noreply@example.com"}}
	if r := admin.post(e.url("workspaces/acme/settings/smtp"), form); r.status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", r.status, r.body)
	}
	r := admin.post(e.url("workspaces/acme/settings/smtp/test"), url.Values{"to": {"not an address"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="to-error">must be a plain email address`) || !strings.Contains(r.body, `value="not an address"`) {
		t.Errorf("bad address: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/settings/smtp/test"), url.Values{"to": {"admin@example.com"}})
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), e.base+"workspaces/acme/settings?mailed=") {
		t.Fatalf("send: %d %q\n%s", r.status, r.location(), r.body)
	}
	jobs, err := ws.ListEmailJobs(t.Context(), nil)
	if err != nil || len(jobs.Items) != 1 || jobs.Items[0].EventType != identity.TestEmailJob {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	if r := admin.get(e.url(strings.TrimPrefix(r.location(), e.base))); !strings.Contains(r.body, "The test email is queued") {
		t.Errorf("no notice:\n%s", r.body)
	}
	if r := admin.get(e.url("workspaces/acme/settings?mailed=99")); strings.Contains(r.body, "test email is") {
		t.Error("a link made the page claim a test email")
	}
	r = admin.post(e.url("workspaces/acme/settings/smtp/test"), url.Values{"to": {"admin@example.com"}})
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.body, "moments ago") {
		t.Errorf("again at once: %d\n%s", r.status, r.body)
	}
	page, err := ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditTestEmailSent)}, nil)
	if err != nil || len(page.Records) != 1 || page.Records[0].Actor.Kind != identity.ActorOperator {
		t.Errorf("the trail: %+v %v", page.Records, err)
	}
}
