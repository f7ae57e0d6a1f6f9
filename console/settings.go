package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// The settings page of a workspace (workspaces/{slug}/settings) shows
// every section of identity.Settings the console edits, one form each,
// each a POST of its own that changes that section alone: the handler
// reads the settings, replaces the section with the form's values and
// writes them back (Workspace.UpdateSettings), so the library's rules
// and its audit record (workspace.settings_changed, with the changed
// fields) are those of every other caller. Branding goes through
// Workspace.SetBranding, which changes nothing else, and the logo
// through Workspace.SetLogo, which checks and re-encodes the PNG.
//
// The SMTP password is write-only: the page never holds it, not even in
// a form sent back with errors; an empty field keeps the stored password
// (the library's rule, as long as the host and username stay).
//
// The branding preview is a block of the console's page drawn with the
// workspace's name, accent colour and logo, not the hosted sign-in page
// in an <iframe>: the hosted pages forbid framing (frame-ancestors
// 'none'), as the console's own do, and a frame would need a sign-in
// request of a client to show anything. The accent colour reaches the
// preview through a style sheet of the console (settings/branding.css),
// since the CSP admits no inline style; "Preview" draws the values typed
// without saving them.

// settingsRoutes are the routes of the settings page.
func settingsRoutes() []route {
	rt := []route{
		{http.MethodGet, "workspaces/{slug}/settings", inWorkspace, (*Handler).serveSettings},
		{http.MethodGet, "workspaces/{slug}/settings/logo", inWorkspace, (*Handler).serveLogo},
		{http.MethodGet, "workspaces/{slug}/settings/branding.css", inWorkspace, (*Handler).serveBrandingCSS},
		{http.MethodPost, "workspaces/{slug}/settings/smtp/delete", inWorkspace, (*Handler).deleteSMTP},
		{http.MethodPost, "workspaces/{slug}/settings/smtp/test", inWorkspace, (*Handler).sendTestEmail},
		{http.MethodPost, "workspaces/{slug}/settings/branding", inWorkspace, (*Handler).saveBranding},
		{http.MethodPost, "workspaces/{slug}/settings/branding/preview", inWorkspace, (*Handler).previewBranding},
		{http.MethodPost, "workspaces/{slug}/settings/logo", inWorkspace, (*Handler).uploadLogo},
		{http.MethodPost, "workspaces/{slug}/settings/logo/delete", inWorkspace, (*Handler).deleteLogo},
	}
	for _, s := range settingsSections {
		rt = append(rt, route{http.MethodPost, "workspaces/{slug}/settings/" + s.id, inWorkspace, saveSection(s)})
	}
	return rt
}

// fieldDef is an input of a settings form. Its name is the library's
// field name ("passwordPolicy.minLength"), which is also its id.
type fieldDef struct {
	name, label, hint string
	// kind is "number", "text", "email", "url", "password", "checkbox"
	// or "select".
	kind    string
	options []option
}

// option is a choice of a select.
type option struct{ Value, Label string }

// settingsSection is a section of the settings page: its form's fields,
// how they are read from the settings and how the form's values are put
// back into them.
type settingsSection struct {
	id, title, intro, submit string
	fields                   []fieldDef
	// values returns the inputs' values of settings s.
	values func(s identity.Settings) map[string]string
	// apply puts the form's values into s, and the messages of values it
	// cannot read into bad.
	apply func(s *identity.Settings, f url.Values, bad map[string]string)
}

// settingsSections are the sections saved with UpdateSettings, in the
// page's order.
var settingsSections = []*settingsSection{
	{
		id: "password", title: "Password policy", submit: "Save password policy",
		intro: "Applies to passwords set from now on; existing passwords are not checked again.",
		fields: []fieldDef{
			{name: "passwordPolicy.minLength", label: "Minimum length", kind: "number", hint: fmt.Sprintf("Characters; at least %d.", identity.MinPasswordLength)},
			{name: "passwordPolicy.maxLength", label: "Maximum length", kind: "number", hint: fmt.Sprintf("Characters; at least the minimum, at most %d.", identity.MaxPasswordPolicyLength)},
			{name: "passwordPolicy.requireUpper", label: "Require an upper-case letter", kind: "checkbox"},
			{name: "passwordPolicy.requireLower", label: "Require a lower-case letter", kind: "checkbox"},
			{name: "passwordPolicy.requireDigit", label: "Require a digit", kind: "checkbox"},
			{name: "passwordPolicy.requireSymbol", label: "Require a symbol", kind: "checkbox"},
			{name: "passwordPolicy.allowUsernameOrEmail", label: "Allow a password equal to the username or email", kind: "checkbox"},
		},
		values: func(s identity.Settings) map[string]string {
			p := s.PasswordPolicy
			return map[string]string{
				"passwordPolicy.minLength": strconv.Itoa(p.MinLength), "passwordPolicy.maxLength": strconv.Itoa(p.MaxLength),
				"passwordPolicy.requireUpper": checked(p.RequireUpper), "passwordPolicy.requireLower": checked(p.RequireLower),
				"passwordPolicy.requireDigit": checked(p.RequireDigit), "passwordPolicy.requireSymbol": checked(p.RequireSymbol),
				"passwordPolicy.allowUsernameOrEmail": checked(p.AllowUsernameOrEmail),
			}
		},
		apply: func(s *identity.Settings, f url.Values, bad map[string]string) {
			p := &s.PasswordPolicy
			p.MinLength = formInt(f, "passwordPolicy.minLength", bad)
			p.MaxLength = formInt(f, "passwordPolicy.maxLength", bad)
			p.RequireUpper = f.Get("passwordPolicy.requireUpper") == "on"
			p.RequireLower = f.Get("passwordPolicy.requireLower") == "on"
			p.RequireDigit = f.Get("passwordPolicy.requireDigit") == "on"
			p.RequireSymbol = f.Get("passwordPolicy.requireSymbol") == "on"
			p.AllowUsernameOrEmail = f.Get("passwordPolicy.allowUsernameOrEmail") == "on"
		},
	},
	{
		id: "lockout", title: "Lockout", submit: "Save lockout",
		intro: "Locks an account after consecutive failed passwords, for a while.",
		fields: []fieldDef{
			{name: "lockout.disabled", label: "Turn lockout off", kind: "checkbox"},
			{name: "lockout.threshold", label: "Failed attempts that lock", kind: "number", hint: fmt.Sprintf("1 to %d; empty for the default, %d.", identity.MaxLockoutThreshold, identity.DefaultLockoutThreshold)},
			{name: "lockout.duration", label: "Lock duration", kind: "text", hint: fmt.Sprintf("Such as 15m or 1h30m, whole seconds up to %s; empty for the default, %s.", identity.MaxLockoutDuration, identity.DefaultLockoutDuration)},
		},
		values: func(s identity.Settings) map[string]string {
			l := s.Lockout
			return map[string]string{"lockout.disabled": checked(l.Disabled), "lockout.threshold": intOrEmpty(l.Threshold), "lockout.duration": durationOrEmpty(l.Duration)}
		},
		apply: func(s *identity.Settings, f url.Values, bad map[string]string) {
			s.Lockout = identity.LockoutPolicy{
				Disabled:  f.Get("lockout.disabled") == "on",
				Threshold: formInt(f, "lockout.threshold", bad),
				Duration:  formDuration(f, "lockout.duration", bad),
			}
		},
	},
	{
		id: "mfa", title: "Sign-in requirements", submit: "Save sign-in requirements",
		fields: []fieldDef{
			{name: "mfa", label: "Second factor", kind: "select", options: []option{
				{string(identity.MFAOptional), "Optional: users who enrolled one give a code"},
				{string(identity.MFARequired), "Required of everybody: enrolment at the next sign-in"},
			}},
			{name: "requireVerifiedEmail", label: "Only users with a verified email sign in", kind: "checkbox"},
		},
		values: func(s identity.Settings) map[string]string {
			m := s.MFA
			if m == "" {
				m = identity.MFAOptional
			}
			return map[string]string{"mfa": string(m), "requireVerifiedEmail": checked(s.RequireVerifiedEmail)}
		},
		apply: func(s *identity.Settings, f url.Values, bad map[string]string) {
			s.MFA = identity.MFAPolicy(f.Get("mfa"))
			s.RequireVerifiedEmail = f.Get("requireVerifiedEmail") == "on"
		},
	},
	{
		id: "limits", title: "Limits", submit: "Save limits",
		intro: "Lowering a limit removes nothing; it refuses additions beyond it.",
		fields: []fieldDef{
			limitField("limits.attributesPerUser", "Attributes per user", identity.MaxAttributesPerUser, identity.DefaultAttributesPerUser),
			limitField("limits.webhookEndpoints", "Webhook endpoints", identity.MaxWebhookEndpoints, identity.DefaultWebhookEndpoints),
			limitField("limits.roles", "Roles", identity.MaxRoles, identity.DefaultRoles),
			limitField("limits.groups", "Groups", identity.MaxGroups, identity.DefaultGroups),
			limitField("limits.groupsPerUser", "Groups per user", identity.MaxGroupsPerUser, identity.DefaultGroupsPerUser),
			limitField("limits.rolesPerGroup", "Roles per group", identity.MaxRolesPerGroup, identity.DefaultRolesPerGroup),
			limitField("limits.claimNames", "Names in a groups or roles claim", identity.MaxClaimNames, identity.DefaultClaimNames),
		},
		values: func(s identity.Settings) map[string]string {
			l := s.Limits
			return map[string]string{
				"limits.attributesPerUser": intOrEmpty(l.AttributesPerUser), "limits.webhookEndpoints": intOrEmpty(l.WebhookEndpoints),
				"limits.roles": intOrEmpty(l.Roles), "limits.groups": intOrEmpty(l.Groups), "limits.groupsPerUser": intOrEmpty(l.GroupsPerUser),
				"limits.rolesPerGroup": intOrEmpty(l.RolesPerGroup), "limits.claimNames": intOrEmpty(l.ClaimNames),
			}
		},
		apply: func(s *identity.Settings, f url.Values, bad map[string]string) {
			s.Limits = identity.Limits{
				AttributesPerUser: formInt(f, "limits.attributesPerUser", bad), WebhookEndpoints: formInt(f, "limits.webhookEndpoints", bad),
				Roles: formInt(f, "limits.roles", bad), Groups: formInt(f, "limits.groups", bad), GroupsPerUser: formInt(f, "limits.groupsPerUser", bad),
				RolesPerGroup: formInt(f, "limits.rolesPerGroup", bad), ClaimNames: formInt(f, "limits.claimNames", bad),
			}
		},
	},
	{
		id: "retention", title: "Retention", submit: "Save retention",
		intro: "How many days finished jobs, ended sessions and audit records are kept before the sweep removes them.",
		fields: []fieldDef{
			daysField("retention.succeededDeliveryDays", "Succeeded webhook deliveries", identity.DefaultSucceededDeliveryDays),
			daysField("retention.failedDeliveryDays", "Failed webhook deliveries", identity.DefaultFailedDeliveryDays),
			daysField("retention.mailJobDays", "Mail jobs", identity.DefaultMailJobDays),
			daysField("retention.endedSessionDays", "Ended sessions", identity.DefaultEndedSessionDays),
			daysField("retention.auditDays", "Audit records", identity.DefaultAuditDays),
		},
		values: func(s identity.Settings) map[string]string {
			r := s.Retention
			return map[string]string{
				"retention.succeededDeliveryDays": intOrEmpty(r.SucceededDeliveryDays), "retention.failedDeliveryDays": intOrEmpty(r.FailedDeliveryDays),
				"retention.mailJobDays": intOrEmpty(r.MailJobDays), "retention.endedSessionDays": intOrEmpty(r.EndedSessionDays),
				"retention.auditDays": intOrEmpty(r.AuditDays),
			}
		},
		apply: func(s *identity.Settings, f url.Values, bad map[string]string) {
			s.Retention = identity.Retention{
				SucceededDeliveryDays: formInt(f, "retention.succeededDeliveryDays", bad), FailedDeliveryDays: formInt(f, "retention.failedDeliveryDays", bad),
				MailJobDays: formInt(f, "retention.mailJobDays", bad), EndedSessionDays: formInt(f, "retention.endedSessionDays", bad),
				AuditDays: formInt(f, "retention.auditDays", bad),
			}
		},
	},
	{
		id: "smtp", title: "Email (SMTP)", submit: "Save email settings",
		intro: "The server that sends the workspace's verification and password reset emails.",
		fields: []fieldDef{
			{name: "smtp.host", label: "Host", kind: "text"},
			{name: "smtp.port", label: "Port", kind: "number", hint: "Usually 587 for STARTTLS, 465 for TLS."},
			{name: "smtp.tls", label: "Security", kind: "select", options: []option{
				{string(identity.SMTPStartTLS), "STARTTLS"}, {string(identity.SMTPImplicitTLS), "TLS from the start"},
				{string(identity.SMTPNoTLS), "None (a relay on this machine only)"},
			}},
			{name: "smtp.username", label: "Username", kind: "text", hint: "Optional; with a password."},
			{name: "smtp.password", label: "Password", kind: "password"},
			{name: "smtp.from", label: "Sender address", kind: "email"},
			{name: "smtp.fromName", label: "Sender name", kind: "text", hint: "Optional, such as Acme."},
			{name: "smtp.verifyUrl", label: "Verification link", kind: "url", hint: "Optional: an https URL holding {token}; empty for the hosted verification page."},
			{name: "smtp.resetUrl", label: "Password reset link", kind: "url", hint: "Optional: an https URL holding {token}."},
			{name: "smtp.tokenLifetime", label: "Verification link lifetime", kind: "text", hint: fmt.Sprintf("Such as 24h; %s to %s; empty for the default, %s.",
				identity.MinVerificationTokenLifetime, identity.MaxVerificationTokenLifetime, identity.DefaultVerificationTokenLifetime)},
		},
		values: func(s identity.Settings) map[string]string {
			m := s.SMTP
			if m == nil {
				return map[string]string{"smtp.port": "587", "smtp.tls": string(identity.SMTPStartTLS)}
			}
			tls := m.TLS
			if tls == "" {
				tls = identity.SMTPStartTLS
			}
			return map[string]string{
				"smtp.host": m.Host, "smtp.port": strconv.Itoa(m.Port), "smtp.tls": string(tls), "smtp.username": m.Username,
				"smtp.from": m.From, "smtp.fromName": m.FromName, "smtp.verifyUrl": m.VerifyURL, "smtp.resetUrl": m.ResetURL,
				"smtp.tokenLifetime": durationOrEmpty(m.TokenLifetime),
			}
		},
		apply: func(s *identity.Settings, f url.Values, bad map[string]string) {
			s.SMTP = &identity.SMTPSettings{
				Host: strings.TrimSpace(f.Get("smtp.host")), Port: formInt(f, "smtp.port", bad), TLS: identity.SMTPTLSMode(f.Get("smtp.tls")),
				Username: f.Get("smtp.username"), Password: f.Get("smtp.password"), From: strings.TrimSpace(f.Get("smtp.from")),
				FromName: f.Get("smtp.fromName"), VerifyURL: strings.TrimSpace(f.Get("smtp.verifyUrl")),
				ResetURL: strings.TrimSpace(f.Get("smtp.resetUrl")), TokenLifetime: formDuration(f, "smtp.tokenLifetime", bad),
			}
		},
	},
}

func limitField(name, label string, bound, def int) fieldDef {
	return fieldDef{name: name, label: label, kind: "number", hint: fmt.Sprintf("1 to %d; empty for the default, %d.", bound, def)}
}

func daysField(name, label string, def int) fieldDef {
	return fieldDef{name: name, label: label, kind: "number", hint: fmt.Sprintf("Days, 1 to %d; empty for the default, %d.", identity.MaxRetentionDays, def)}
}

func checked(b bool) string {
	if b {
		return "on"
	}
	return ""
}

func intOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// formInt reads a whole number from the form's field, 0 when it is
// empty; what is no number goes to bad.
func formInt(f url.Values, name string, bad map[string]string) int {
	s := strings.TrimSpace(f.Get(name))
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		bad[name] = "must be a whole number"
	}
	return n
}

// formDuration reads a duration ("15m", "1h30m") from the form's field,
// 0 when it is empty; what is no duration goes to bad.
func formDuration(f url.Values, name string, bad map[string]string) time.Duration {
	s := strings.TrimSpace(f.Get(name))
	if s == "" || s == "0" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		bad[name] = "must be a duration such as 15m, 1h30m or 24h"
	}
	return d
}

// formProblems is the library's kind of error for values the console
// could not read, so that they are shown as the library's are.
func formProblems(bad map[string]string) error {
	e := &identity.Error{Code: identity.CodeInvalid, Message: "invalid settings"}
	for name, msg := range bad {
		e.Fields = append(e.Fields, identity.FieldError{Field: name, Rule: identity.RuleFormat, Message: msg})
	}
	return e
}

// settingsField is an input of a section as the template shows it.
type settingsField struct {
	Name, Label, Hint, Kind string
	Options                 []option
	// Value is the stored value, or the value typed when the form is sent
	// back; never a password.
	Value string
	// Error is the field's message, if any.
	Error string
	// PasswordSet says, for the SMTP password, that one is stored.
	PasswordSet bool
}

// settingsForm is a section as the template shows it.
type settingsForm struct {
	ID, Title, Intro, Submit, Action string
	Fields                           []settingsField
}

// settingsData is the settings page's data.
type settingsData struct {
	Slug     string
	Sections []settingsForm
	// SMTPSet says the workspace has SMTP settings (which may be removed).
	SMTPSet bool
	// Branding is the stored branding, or the values typed (on an error
	// or a preview).
	Branding settingsBranding
	// Preview is the preview's branding: the stored one, or the values
	// typed when PreviewUnsaved.
	Preview        previewData
	PreviewUnsaved bool
	HasLogo        bool
	LogoVersion    string
}

// settingsBranding are the branding form's values.
type settingsBranding struct {
	DisplayName, AccentColor string
}

// previewData is what the preview of the sign-in page shows.
type previewData struct {
	Name string
	// CSS is the URL of the style sheet giving the preview its accent.
	CSS string
}

// settingsView builds the settings page of ws with stored settings s;
// sent is the section whose form is sent back with the values typed and
// the messages of fields.
func (h *Handler) settingsView(rq *request, ws *identity.Workspace, s identity.Settings, sent string, fields map[string]string) (*view, error) {
	slug := ws.Slug()
	d := settingsData{Slug: slug, SMTPSet: s.SMTP != nil}
	form := rq.r.PostForm
	for _, sec := range settingsSections {
		vals := sec.values(s)
		f := settingsForm{ID: sec.id, Title: sec.title, Intro: sec.intro, Submit: sec.submit, Action: h.href("workspaces", slug, "settings", sec.id)}
		for _, fd := range sec.fields {
			sf := settingsField{Name: fd.name, Label: fd.label, Hint: fd.hint, Kind: fd.kind, Options: fd.options, Value: vals[fd.name]}
			if sec.id == sent {
				sf.Value = form.Get(fd.name)
				sf.Error = fields[fd.name]
			}
			if fd.kind == "password" {
				sf.Value = "" // write-only, never on a page
				sf.PasswordSet = s.SMTP != nil && s.SMTP.PasswordSet
				sf.Hint = "Leave empty to keep the stored password."
				if !sf.PasswordSet {
					sf.Hint = "Optional; with a username."
				}
			}
			f.Fields = append(f.Fields, sf)
		}
		d.Sections = append(d.Sections, f)
	}
	d.Branding = settingsBranding{DisplayName: s.Branding.DisplayName, AccentColor: s.Branding.AccentColor}
	d.Preview = previewData{Name: s.Branding.Name(slug), CSS: h.brandingCSS(slug, s.Branding.Accent())}
	if sent == "branding" {
		d.Branding = settingsBranding{DisplayName: form.Get("branding.displayName"), AccentColor: form.Get("branding.accentColor")}
	}
	logo, err := ws.GetLogo(rq.ctx)
	switch {
	case err == nil:
		d.HasLogo, d.LogoVersion = true, strings.Trim(logo.ETag, `"`)
	case identity.ErrorCode(err) != identity.CodeNotFound:
		return nil, err
	}
	return &view{Title: "Settings of " + slug, Workspace: slug, Data: d}, nil
}

// brandingCSS returns the URL of the style sheet of the preview with the
// accent colour.
func (h *Handler) brandingCSS(slug, accent string) string {
	return h.href("workspaces", slug, "settings", "branding.css") + "?accent=" + url.QueryEscape(accent)
}

// settingsOf returns the workspace of the request's path and its
// settings.
func (h *Handler) settingsOf(rq *request) (*identity.Workspace, identity.Settings, error) {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return nil, identity.Settings{}, err
	}
	s, err := ws.GetSettings(rq.ctx)
	return ws, s, err
}

// savedNotices are the notices of the sections, by the "saved" query
// parameter: what they say is true whenever the page shows it.
var savedNotices = map[string]string{
	"password": "The password policy shown is in force.", "lockout": "The lockout shown is in force.",
	"mfa": "The sign-in requirements shown are in force.", "limits": "The limits shown are in force.",
	"retention": "The retention shown is in force.", "smtp": "The email settings shown are in force.",
	"branding": "The branding shown is in force.", "logo": "The logo shown is in force.",
}

// serveSettings is the settings page.
func (h *Handler) serveSettings(rq *request) error {
	ws, s, err := h.settingsOf(rq)
	if err != nil {
		return err
	}
	v, err := h.settingsView(rq, ws, s, "", nil)
	if err != nil {
		return err
	}
	q := rq.r.URL.Query()
	v.Notice = savedNotices[q.Get("saved")]
	if q.Get("saved") == "smtp-removed" && s.SMTP == nil {
		v.Notice = "The workspace has no email settings: it sends no email."
	}
	if id, err := strconv.ParseInt(q.Get("mailed"), 10, 64); err == nil {
		v.Notice = testEmailNotice(rq, ws, id)
	}
	h.render(rq, http.StatusOK, "settings", v)
	return nil
}

// saveSection returns the action that saves one section.
func saveSection(sec *settingsSection) func(h *Handler, rq *request) error {
	return func(h *Handler, rq *request) error {
		ws, s, err := h.settingsOf(rq)
		if err != nil {
			return err
		}
		bad := map[string]string{}
		next := s
		sec.apply(&next, rq.r.PostForm, bad)
		if len(bad) > 0 {
			err = formProblems(bad)
		} else {
			err = ws.UpdateSettings(rq.ctx, next)
		}
		if err != nil {
			return h.settingsFormError(rq, ws, s, sec.id, err)
		}
		h.redirectSaved(rq, ws.Slug(), sec.id)
		return nil
	}
}

// settingsFormError sends the section's form back with err.
func (h *Handler) settingsFormError(rq *request, ws *identity.Workspace, s identity.Settings, section string, err error) error {
	v, verr := h.settingsView(rq, ws, s, section, fieldErrors(err))
	if verr != nil {
		return verr
	}
	h.renderForm(rq, "settings", v, err)
	return nil
}

func (h *Handler) redirectSaved(rq *request, slug, section string) {
	http.Redirect(rq.w, rq.r, h.href("workspaces", slug, "settings")+"?saved="+url.QueryEscape(section), http.StatusSeeOther)
}

// deleteSMTP removes the workspace's SMTP settings: it sends no email
// from then on.
func (h *Handler) deleteSMTP(rq *request) error {
	ws, s, err := h.settingsOf(rq)
	if err != nil {
		return err
	}
	s.SMTP = nil
	if err := ws.UpdateSettings(rq.ctx, s); err != nil {
		return err
	}
	h.redirectSaved(rq, ws.Slug(), "smtp-removed")
	return nil
}

// saveBranding sets the display name and accent colour.
func (h *Handler) saveBranding(rq *request) error {
	ws, s, err := h.settingsOf(rq)
	if err != nil {
		return err
	}
	b := identity.Branding{DisplayName: strings.TrimSpace(rq.r.PostFormValue("branding.displayName")),
		AccentColor: strings.ToLower(strings.TrimSpace(rq.r.PostFormValue("branding.accentColor")))}
	if err := ws.SetBranding(rq.ctx, b); err != nil {
		return h.settingsFormError(rq, ws, s, "branding", err)
	}
	h.redirectSaved(rq, ws.Slug(), "branding")
	return nil
}

// hexColor is the form of an accent colour the preview's style sheet
// accepts.
var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// previewBranding shows the page with the preview drawn from the values
// typed, saving nothing.
func (h *Handler) previewBranding(rq *request) error {
	ws, s, err := h.settingsOf(rq)
	if err != nil {
		return err
	}
	v, err := h.settingsView(rq, ws, s, "branding", nil)
	if err != nil {
		return err
	}
	d := v.Data.(settingsData)
	b := identity.Branding{DisplayName: strings.TrimSpace(d.Branding.DisplayName), AccentColor: strings.TrimSpace(d.Branding.AccentColor)}
	accent := b.Accent()
	if !hexColor.MatchString(accent) {
		accent = identity.DefaultAccentColor
		v.Error = "The accent colour is not a colour as #rrggbb: the preview shows the default."
	}
	d.Preview = previewData{Name: b.Name(ws.Slug()), CSS: h.brandingCSS(ws.Slug(), accent)}
	d.PreviewUnsaved = true
	v.Data = d
	v.Notice = "The preview shows the values typed; they are not saved."
	h.render(rq, http.StatusOK, "settings", v)
	return nil
}

// serveBrandingCSS is the style sheet of the preview: the accent colour
// of the query, which must be #rrggbb (the default otherwise), as a
// custom property.
func (h *Handler) serveBrandingCSS(rq *request) error {
	accent := rq.r.URL.Query().Get("accent")
	if !hexColor.MatchString(accent) {
		accent = identity.DefaultAccentColor
	}
	rq.w.Header().Set("Content-Type", "text/css; charset=utf-8")
	fmt.Fprintf(rq.w, ".signin-preview{--accent:%s}\n", strings.ToLower(accent))
	return nil
}

// serveLogo is the workspace's logo, as the library stored it.
func (h *Handler) serveLogo(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	logo, err := ws.GetLogo(rq.ctx)
	if err != nil {
		return err
	}
	hd := rq.w.Header()
	hd.Set("Content-Type", "image/png")
	hd.Set("Content-Length", strconv.Itoa(len(logo.Data)))
	hd.Set("Content-Disposition", "inline")
	rq.w.Write(logo.Data)
	return nil
}

// uploadLogo sets the workspace's logo from the uploaded file: the
// library checks it is a PNG within its bounds and stores it re-encoded.
func (h *Handler) uploadLogo(rq *request) error {
	ws, s, err := h.settingsOf(rq)
	if err != nil {
		return err
	}
	file, _, ferr := rq.r.FormFile("logo")
	var data []byte
	if ferr == nil {
		defer file.Close()
		data, ferr = io.ReadAll(io.LimitReader(file, identity.MaxLogoBytes+1))
	}
	if ferr != nil && !errors.Is(ferr, http.ErrMissingFile) {
		return errBadForm
	}
	if errors.Is(ferr, http.ErrMissingFile) || len(data) == 0 {
		err = &identity.Error{Code: identity.CodeInvalid, Message: "no logo", Fields: []identity.FieldError{{Field: "logo", Rule: identity.RuleRequired, Message: "choose a PNG file"}}}
	} else {
		_, err = ws.SetLogo(rq.ctx, data)
	}
	if err != nil {
		return h.settingsFormError(rq, ws, s, "logo", err)
	}
	h.redirectSaved(rq, ws.Slug(), "logo")
	return nil
}

// deleteLogo removes the workspace's logo.
func (h *Handler) deleteLogo(rq *request) error {
	ws, err := h.pathWorkspace(rq)
	if err != nil {
		return err
	}
	if err := ws.DeleteLogo(rq.ctx); err != nil && identity.ErrorCode(err) != identity.CodeNotFound {
		return err
	}
	h.redirectSaved(rq, ws.Slug(), "logo")
	return nil
}

// parseMultipart reads a multipart form (the logo's upload) before the
// CSRF check, which needs its csrf field, within maxUploadBytes.
func parseMultipart(rq *request) error {
	if !strings.HasPrefix(rq.r.Header.Get("Content-Type"), "multipart/form-data") {
		return nil
	}
	rq.r.Body = http.MaxBytesReader(rq.w, rq.r.Body, maxUploadBytes)
	if err := rq.r.ParseMultipartForm(maxUploadBytes); err != nil {
		return errBadForm
	}
	return nil
}

// maxUploadBytes bounds a multipart request: a logo and the form's
// fields. It is well above identity.MaxLogoBytes, so that a logo too
// large is the library's error, shown next to the file's input, and not a
// form the console cannot read.
const maxUploadBytes = 1 << 20

// sendTestEmail queues a test email to the address typed, through the
// settings saved (Workspace.SendTestEmail).
func (h *Handler) sendTestEmail(rq *request) error {
	ws, s, err := h.settingsOf(rq)
	if err != nil {
		return err
	}
	id, err := ws.SendTestEmail(rq.ctx, strings.TrimSpace(rq.r.PostFormValue("to")))
	if err != nil {
		return h.settingsFormError(rq, ws, s, "test-email", err)
	}
	http.Redirect(rq.w, rq.r, h.href("workspaces", ws.Slug(), "settings")+"?mailed="+strconv.FormatInt(id, 10), http.StatusSeeOther)
	return nil
}

// testEmailNotice says what became of the test email queued as the
// delivery id, as the queue says now; "" when id is no test email.
func testEmailNotice(rq *request, ws *identity.Workspace, id int64) string {
	d, err := ws.GetDelivery(rq.ctx, id)
	if err != nil || d.EventType != identity.TestEmailJob {
		return ""
	}
	switch d.Status {
	case identity.DeliverySucceeded:
		return "The SMTP server took the test email. Check the mailbox it went to."
	case identity.DeliveryFailed:
		return "The test email failed: " + d.LastError
	}
	if d.Attempts > 0 {
		return "The test email is queued; its last attempt failed (" + d.LastError + ") and it will be tried again. Reload to see."
	}
	return "The test email is queued: the delivery queue sends it shortly. Reload to see whether the server took it."
}
