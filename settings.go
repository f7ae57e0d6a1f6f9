package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// Settings are a workspace's configuration.
type Settings struct {
	PasswordPolicy PasswordPolicy `json:"passwordPolicy"`
	// SMTP, when set, configures outgoing email for the workspace: new
	// users and changed email addresses then get a verification email
	// (see ConfirmEmail). Nil means SMTP is not configured and no email is
	// sent.
	SMTP *SMTPSettings `json:"smtp,omitempty"`
	// Lockout is the rule against password guessing; the zero value is
	// the default policy (on, 10 attempts, 15 minutes).
	Lockout LockoutPolicy `json:"lockout"`
	// MFA says whether users need a second factor: MFAOptional (the zero
	// value) or MFARequired.
	MFA MFAPolicy `json:"mfa,omitempty"`
	// Passkeys says whether users may, or must, have passkeys:
	// PasskeysAllowed (the zero value), PasskeysOff or PasskeysRequired.
	Passkeys PasskeyPolicy `json:"passkeys,omitempty"`
	// Limits cap attributes per user and webhook endpoints; the zero
	// value is the defaults (100 and 50).
	Limits Limits `json:"limits,omitzero"`
	// Throttle bounds failed sign-ins per client address and per login,
	// and emails per address; the zero value is the default policy (on).
	Throttle ThrottlePolicy `json:"throttle,omitzero"`
	// RequireVerifiedEmail lets only users whose email is verified sign
	// in: a right password of another user is CodeEmailUnverified, and a
	// new verification email goes out. Default false.
	RequireVerifiedEmail bool `json:"requireVerifiedEmail,omitempty"`
	// Branding is how the hosted pages and the emails present the
	// workspace; the zero value shows its slug and the default colour.
	Branding Branding `json:"branding,omitzero"`
	// Retention says how long finished jobs and ended sessions are kept;
	// the zero value is the defaults (7 days for succeeded webhook
	// deliveries, 30 for failed ones and for mail jobs, 90 for ended
	// sessions). See Sweep.
	Retention Retention `json:"retention,omitzero"`
}

// MFAPolicy says whether a workspace's users need a second factor to
// sign in.
type MFAPolicy string

// The MFA policies.
const (
	// MFAOptional: a user who enrolled a factor (or whose mfaEnabled is
	// set) gives a code at sign-in; the others sign in with a password
	// alone. The zero value MFAPolicy("") means this policy.
	MFAOptional MFAPolicy = "optional"
	// MFARequired: every user gives a code at sign-in, and a user
	// without a factor is taken through enrolment at the next sign-in,
	// before any session or token is issued.
	MFARequired MFAPolicy = "required"
)

// PasswordPolicy is a workspace's rule set for new passwords. Violations
// are CodeInvalid errors on the field "password" whose Rule names the rule.
type PasswordPolicy struct {
	// MinLength in characters; at least MinPasswordLength (4). Default 8.
	MinLength int `json:"minLength"`
	// MaxLength in characters; at least MinLength, at most
	// MaxPasswordPolicyLength. Default 1024.
	MaxLength int `json:"maxLength"`
	// Require at least one character of the class.
	RequireUpper  bool `json:"requireUpper,omitempty"`
	RequireLower  bool `json:"requireLower,omitempty"`
	RequireDigit  bool `json:"requireDigit,omitempty"`
	RequireSymbol bool `json:"requireSymbol,omitempty"`
	// AllowUsernameOrEmail permits a password equal (ignoring case) to the
	// user's username or email. Default false: such passwords are refused.
	AllowUsernameOrEmail bool `json:"allowUsernameOrEmail,omitempty"`
}

// SMTPSettings configure a workspace's outgoing email server and its
// verification emails.
//
// The password is write-only: Settings returns it empty, with PasswordSet
// reporting whether one is stored. UpdateSettings with an empty Password
// keeps the stored password when Host and Username are unchanged; changing
// either requires the password again, so that a changed host never
// receives the old password.
type SMTPSettings struct {
	// Host is the server's host name or IP address.
	Host string `json:"host"`
	// Port is 1-65535: usually 587 for STARTTLS, 465 for implicit TLS.
	Port int `json:"port"`
	// TLS is how the connection is secured; "" means SMTPStartTLS.
	// Server certificates are always verified, against the system roots or
	// delivery.Options.RootCAs.
	TLS SMTPTLSMode `json:"tls,omitempty"`
	// Username and Password, both or neither, authenticate with SASL
	// PLAIN once the connection is secured. At most 255 and 1024
	// characters.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// PasswordSet reports, in settings read back, that a password is
	// stored. It is ignored on input.
	PasswordSet bool `json:"passwordSet,omitempty"`
	// From is the sender address, a plain email address.
	From string `json:"from"`
	// FromName is an optional display name for From, such as "Acme"; at
	// most 255 characters, no control characters.
	FromName string `json:"fromName,omitempty"`
	// VerifyURL is the link template of verification emails: an absolute
	// https URL (http only for localhost or a loopback IP address), at
	// most 2048 characters, containing "{token}", which is replaced by the
	// verification token, as in "https://app.example.com/verify?token={token}".
	// The page it opens passes the token to Workspace.ConfirmEmail. The
	// token consists of URL-safe characters only. Empty means the hosted
	// verification page of package oidc, {issuer}/verify?token={token},
	// which needs the Service's IssuerBase.
	VerifyURL string `json:"verifyUrl,omitempty"`
	// TokenLifetime is how long a verification token stays valid after
	// its email is sent: 0 means DefaultVerificationTokenLifetime (24 h),
	// otherwise between MinVerificationTokenLifetime and
	// MaxVerificationTokenLifetime.
	TokenLifetime time.Duration `json:"tokenLifetime,omitempty"`
	// ResetURL is the link template of password reset emails, like
	// VerifyURL (same rules, "{token}" replaced by the reset token); the
	// page it opens passes the token to Workspace.ResetPassword. Optional:
	// without it RequestPasswordReset needs a link of its own
	// (PasswordResetOptions.Link), as the hosted pages of package oidc
	// pass.
	ResetURL string `json:"resetUrl,omitempty"`
}

// SMTPTLSMode says how the connection to an SMTP server is secured.
type SMTPTLSMode string

// The SMTP TLS modes.
const (
	// SMTPStartTLS connects in plain text and upgrades with STARTTLS, which
	// the server must offer: without it nothing is sent. The zero value
	// SMTPTLSMode("") means this mode.
	SMTPStartTLS SMTPTLSMode = "starttls"
	// SMTPImplicitTLS speaks TLS from the first byte (SMTPS, port 465).
	SMTPImplicitTLS SMTPTLSMode = "tls"
	// SMTPNoTLS sends in plain text. It is allowed only when Host is
	// localhost or a loopback IP address (a relay on the same machine),
	// and the address dialed is checked to be loopback as well.
	SMTPNoTLS SMTPTLSMode = "none"
)

// Bounds of SMTPSettings.TokenLifetime.
const (
	DefaultVerificationTokenLifetime = 24 * time.Hour
	MinVerificationTokenLifetime     = 5 * time.Minute
	MaxVerificationTokenLifetime     = 7 * 24 * time.Hour
)

// Limits of SMTPSettings fields, in characters.
const (
	maxSMTPUsernameLength = 255
	maxSMTPPasswordLength = 1024
	maxVerifyURLLength    = 2048
)

// verifyURLPlaceholder is replaced by the token in SMTPSettings.VerifyURL.
const verifyURLPlaceholder = "{token}"

// mode returns the TLS mode, the default for "".
func (m *SMTPSettings) mode() SMTPTLSMode {
	if m.TLS == "" {
		return SMTPStartTLS
	}
	return m.TLS
}

// tokenLifetime returns the lifetime of verification tokens, the default
// for 0.
func (m *SMTPSettings) tokenLifetime() time.Duration {
	if m.TokenLifetime == 0 {
		return DefaultVerificationTokenLifetime
	}
	return m.TokenLifetime
}

// isLoopbackHost reports whether host is localhost or a loopback IP
// address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

func (m *SMTPSettings) validate(p *problems) {
	if checkText(p, "smtp.host", m.Host, 1, 253) {
		if _, err := netip.ParseAddr(m.Host); err != nil && strings.ContainsAny(m.Host, " /:@[]") {
			p.add("smtp.host", RuleFormat, "must be a host name or IP address")
		}
	}
	if m.Port < 1 || m.Port > 65535 {
		p.add("smtp.port", RuleRange, "must be between 1 and 65535")
	}
	switch m.mode() {
	case SMTPStartTLS, SMTPImplicitTLS:
	case SMTPNoTLS:
		if !isLoopbackHost(m.Host) {
			p.add("smtp.tls", RuleLoopbackOnly, "may be %q only for localhost or a loopback address", SMTPNoTLS)
		}
	default:
		p.add("smtp.tls", RuleUnknown, "must be %q, %q or %q", SMTPStartTLS, SMTPImplicitTLS, SMTPNoTLS)
	}
	switch {
	case m.Username == "" && m.Password != "":
		p.add("smtp.username", RuleRequired, "is required with a password")
	case m.Username != "" && m.Password == "":
		p.add("smtp.password", RuleRequired, "is required with a username")
	case m.Username != "":
		if checkText(p, "smtp.username", m.Username, 1, maxSMTPUsernameLength) {
			checkNoControl(p, "smtp.username", m.Username)
		}
		if checkText(p, "smtp.password", m.Password, 1, maxSMTPPasswordLength) {
			checkNoControl(p, "smtp.password", m.Password)
		}
	}
	checkEmail(p, "smtp.from", m.From)
	if checkText(p, "smtp.fromName", m.FromName, 0, MaxFullNameLength) {
		checkNoControl(p, "smtp.fromName", m.FromName)
	}
	m.validateVerifyURL(p)
	if m.ResetURL != "" {
		validateLinkTemplate(p, "smtp.resetUrl", m.ResetURL)
	}
	if lt := m.TokenLifetime; lt != 0 && (lt < MinVerificationTokenLifetime || lt > MaxVerificationTokenLifetime) {
		p.add("smtp.tokenLifetime", RuleRange, "must be between %s and %s", MinVerificationTokenLifetime, MaxVerificationTokenLifetime)
	}
}

func (m *SMTPSettings) validateVerifyURL(p *problems) {
	if m.VerifyURL != "" {
		validateLinkTemplate(p, "smtp.verifyUrl", m.VerifyURL)
	}
}

// checkSettings reports every rule the settings break on this Service:
// their own, and that SMTP settings need a VerifyURL when the Service
// has no IssuerBase, since the default link is the hosted verification
// page's.
func (s *Service) checkSettings(set Settings) error {
	p := set.problems()
	if set.SMTP != nil && set.SMTP.VerifyURL == "" && s.issuerBase == "" {
		p.add("smtp.verifyUrl", RuleRequired, "is required when the Service has no IssuerBase (without one there is no hosted verification page to link to)")
	}
	return p.err("invalid settings")
}

// validateLinkTemplate checks the template of a link in an email: at
// most maxVerifyURLLength characters, containing "{token}", and a link
// checkLinkURL accepts once a token is in place.
func validateLinkTemplate(p *problems, field, template string) {
	if !checkText(p, field, template, 1, maxVerifyURLLength) {
		return
	}
	if !strings.Contains(template, verifyURLPlaceholder) {
		p.add(field, RuleFormat, "must contain %s", verifyURLPlaceholder)
		return
	}
	// Judge the URL as it will be sent, with a token in place.
	checkLinkURL(p, field, fillLink(template, verificationPrefix+"0123456789abcdef_token"))
}

// fillLink returns the link template with the token in place.
func fillLink(template, token string) string {
	return strings.ReplaceAll(template, verifyURLPlaceholder, token)
}

// checkLinkURL checks a URL that a user's browser is sent to (a
// verification link, an OAuth redirect URI): absolute, with a host and
// no user information, no white space or control characters, and https,
// or http only for localhost or a loopback IP address. It returns the
// parsed URL, or nil after adding a problem for field.
func checkLinkURL(p *problems, field, link string) *url.URL {
	u, err := url.Parse(link)
	if err != nil || u.Hostname() == "" || u.User != nil || strings.ContainsFunc(link, unicode.IsSpace) ||
		strings.IndexFunc(link, unicode.IsControl) >= 0 {
		p.add(field, RuleFormat, "must be an absolute URL with a host and no user information")
		return nil
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	case u.Scheme == "http":
		p.add(field, RuleLoopbackOnly, "may use http only for localhost or a loopback address")
		return nil
	default:
		p.add(field, RuleFormat, "must be an https URL")
		return nil
	}
	return u
}

// DefaultPasswordPolicy is the policy of a new workspace: 8 to 1024
// characters, no character-class rules, not equal to username or email.
func DefaultPasswordPolicy() PasswordPolicy {
	return PasswordPolicy{MinLength: 8, MaxLength: 1024}
}

// DefaultSettings are the settings of a workspace created without any.
func DefaultSettings() Settings {
	return Settings{PasswordPolicy: DefaultPasswordPolicy()}
}

func (s Settings) validate() error {
	p := s.problems()
	return p.err("invalid settings")
}

// problems returns every rule the settings break.
func (s Settings) problems() problems {
	var p problems
	pp := s.PasswordPolicy
	if pp.MinLength < MinPasswordLength {
		p.add("passwordPolicy.minLength", RuleRange, "must be at least %d", MinPasswordLength)
	}
	if pp.MaxLength < max(pp.MinLength, MinPasswordLength) || pp.MaxLength > MaxPasswordPolicyLength {
		p.add("passwordPolicy.maxLength", RuleRange, "must be between minLength and %d", MaxPasswordPolicyLength)
	}
	if s.SMTP != nil {
		s.SMTP.validate(&p)
	}
	s.Lockout.validate(&p)
	s.Throttle.validate(&p)
	s.Branding.validate(&p)
	s.Limits.validate(&p)
	s.Retention.validate(&p)
	switch s.MFA {
	case "", MFAOptional, MFARequired:
	default:
		p.add("mfa", RuleUnknown, "must be %q or %q", MFAOptional, MFARequired)
	}
	switch s.Passkeys {
	case "", PasskeysAllowed, PasskeysOff, PasskeysRequired:
	default:
		p.add("passkeys", RuleUnknown, "must be %q, %q or %q", PasskeysAllowed, PasskeysOff, PasskeysRequired)
	}
	return p
}

// encode validates the settings and returns their stored form, which
// holds the SMTP password. s.SMTP, which belongs to the caller, is not
// changed.
func (s Settings) encode() ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if s.SMTP != nil {
		m := *s.SMTP
		m.PasswordSet = false // derived on reading
		s.SMTP = &m
	}
	return json.Marshal(s)
}

// redacted returns the settings as reads return them: the SMTP password
// blank and PasswordSet telling whether one is stored.
func (s Settings) redacted() Settings {
	if s.SMTP != nil {
		m := *s.SMTP
		m.PasswordSet, m.Password = m.Password != "", ""
		s.SMTP = &m
	}
	return s
}

// keepPassword returns s with the stored SMTP password of cur filled in
// when s leaves it empty and names the same host and username.
func (s Settings) keepPassword(cur Settings) Settings {
	m, old := s.SMTP, cur.SMTP
	if m == nil || old == nil || m.Password != "" || m.Username == "" || old.Password == "" ||
		m.Host != old.Host || m.Username != old.Username {
		return s
	}
	kept := *m
	kept.Password = old.Password
	s.SMTP = &kept
	return s
}

func decodeSettings(b []byte) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, &Error{Code: CodeInternal, Message: "stored workspace settings are unreadable", Err: err}
	}
	return s, nil
}

// GetSettings returns the workspace's settings. The SMTP password is never
// returned: SMTPSettings.Password is empty and PasswordSet says whether one
// is stored.
func (w *Workspace) GetSettings(ctx context.Context) (Settings, error) {
	var s Settings
	err := w.view(ctx, func(tx store.Tx) (err error) {
		s, err = w.settings(tx)
		return err
	})
	return s.redacted(), fromStore(err, "workspace")
}

func (w *Workspace) settings(tx store.Tx) (Settings, error) {
	rec, err := tx.Workspace(w.slug)
	if err != nil {
		return Settings{}, err
	}
	return decodeSettings(rec.Settings)
}

// UpdateSettings replaces the workspace's settings. Existing passwords are
// not re-checked against a new policy; it applies to passwords set from
// then on. An empty SMTP password keeps the stored one if the SMTP host and
// username are unchanged (see SMTPSettings). Invalid settings are a
// CodeInvalid error naming every problem.
func (w *Workspace) UpdateSettings(ctx context.Context, s Settings) error {
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.Workspace(w.slug)
		if err != nil {
			return err
		}
		// Unreadable stored settings keep no password, and are replaced.
		cur, _ := decodeSettings(rec.Settings)
		merged := s.keepPassword(cur)
		if err := w.svc.checkSettings(merged); err != nil {
			return err
		}
		encoded, err := merged.encode()
		if err != nil {
			return err
		}
		rec.Settings = encoded
		if err := tx.PutWorkspace(rec); err != nil {
			return err
		}
		changes, err := settingsChanges(cur, merged)
		if err != nil || len(changes) == 0 {
			return err // nothing changed: nothing to record
		}
		return w.audit(ctx, tx, auditEntry{action: AuditSettingsChanged, target: w.asTarget(), changes: changes})
	})
	return fromStore(err, "workspace")
}

// settingsChanges are the changes from before to after for the audit
// trail: one per top-level field of Settings whose JSON differs, with its
// values as JSON decodes them (an object is a map[string]any, a number a
// float64, a field left out nil). The SMTP password is never among them:
// the values are those of the redacted settings (PasswordSet, never
// Password), and a changed password is the change "smtp.password", with
// no values.
func settingsChanges(before, after Settings) (auditChanges, error) {
	b, err := settingsFields(before.redacted())
	if err != nil {
		return nil, err
	}
	a, err := settingsFields(after.redacted())
	if err != nil {
		return nil, err
	}
	var changes auditChanges
	for name, raw := range a {
		if !bytes.Equal(b[name], raw) {
			changes = changes.set(name, decodedJSON(b[name]), decodedJSON(raw))
		}
	}
	for name, raw := range b {
		if _, ok := a[name]; !ok {
			changes = changes.set(name, decodedJSON(raw), nil)
		}
	}
	if smtpPassword(before) != smtpPassword(after) {
		changes = changes.set("smtp.password", nil, nil)
	}
	return changes, nil
}

// settingsFields returns the JSON of each top-level field of s that its
// encoding holds.
func settingsFields(s Settings) (map[string]json.RawMessage, error) {
	encoded, err := json.Marshal(s)
	if err != nil {
		return nil, internal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(encoded, &fields); err != nil {
		return nil, internal(err)
	}
	return fields, nil
}

// decodedJSON returns raw decoded into an any, nil for none.
func decodedJSON(raw json.RawMessage) any {
	var v any
	if len(raw) > 0 {
		json.Unmarshal(raw, &v) // raw is json.Marshal's output
	}
	return v
}

// smtpPassword is the SMTP password of s, "" without one.
func smtpPassword(s Settings) string {
	if s.SMTP == nil {
		return ""
	}
	return s.SMTP.Password
}

// SetBranding replaces the workspace's branding and keeps the rest of its
// settings, in one transaction (a program that changes only the branding
// cannot undo a concurrent change of another setting, as reading and
// writing the whole Settings could). Invalid branding is CodeInvalid on
// "branding.displayName" or "branding.accentColor".
func (w *Workspace) SetBranding(ctx context.Context, b Branding) error {
	err := w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.Workspace(w.slug)
		if err != nil {
			return err
		}
		cur, err := decodeSettings(rec.Settings)
		if err != nil {
			return err
		}
		var p problems
		b.validate(&p)
		if err := p.err("invalid branding"); err != nil {
			return err
		}
		changes := auditChanges{}.setIfChanged("displayName", emptyAsNil(cur.Branding.DisplayName), emptyAsNil(b.DisplayName)).
			setIfChanged("accentColor", emptyAsNil(cur.Branding.AccentColor), emptyAsNil(b.AccentColor))
		cur.Branding = b
		encoded, err := cur.encode()
		if err != nil {
			return err
		}
		rec.Settings = encoded
		if err := tx.PutWorkspace(rec); err != nil {
			return err
		}
		if len(changes) == 0 {
			return nil // nothing changed: nothing to record
		}
		return w.audit(ctx, tx, auditEntry{action: AuditBrandingChanged, target: w.asTarget(), changes: changes})
	})
	return fromStore(err, "workspace")
}

// check reports every rule of the policy that password breaks. username
// and email are the identity the password is for.
func (pp PasswordPolicy) check(p *problems, password, username, email string) {
	const field = "password"
	if !utf8.ValidString(password) {
		p.add(field, RuleUTF8, "must be valid UTF-8")
		return
	}
	n := utf8.RuneCountInString(password)
	if n < max(pp.MinLength, MinPasswordLength) {
		p.add(field, RulePasswordMinLength, "must be at least %d characters", max(pp.MinLength, MinPasswordLength))
	}
	if n > pp.MaxLength {
		p.add(field, RulePasswordMaxLength, "must be at most %d characters", pp.MaxLength)
	}
	classes := []struct {
		required bool
		in       func(rune) bool
		rule     string
		what     string
	}{
		{pp.RequireUpper, unicode.IsUpper, RulePasswordUpper, "an uppercase letter"},
		{pp.RequireLower, unicode.IsLower, RulePasswordLower, "a lowercase letter"},
		{pp.RequireDigit, unicode.IsDigit, RulePasswordDigit, "a digit"},
		{pp.RequireSymbol, isSymbol, RulePasswordSymbol, "a character that is not a letter or digit"},
	}
	for _, c := range classes {
		if c.required && strings.IndexFunc(password, c.in) < 0 {
			p.add(field, c.rule, "must contain %s", c.what)
		}
	}
	if !pp.AllowUsernameOrEmail && (strings.EqualFold(password, username) || strings.EqualFold(password, email)) {
		p.add(field, RulePasswordIdentity, "must not equal the username or email")
	}
}

func isSymbol(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
