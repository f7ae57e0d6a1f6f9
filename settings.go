package identity

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/identitylib/identity/store"
)

// Settings are a workspace's configuration.
type Settings struct {
	PasswordPolicy PasswordPolicy `json:"passwordPolicy"`
	// SMTP, when set, configures outgoing email for the workspace. Nil
	// means SMTP is not configured. (Sending verification email arrives
	// with a later release; the settings are kept and validated now.)
	SMTP *SMTPSettings `json:"smtp,omitempty"`
}

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

// SMTPSettings configure a workspace's outgoing email server.
type SMTPSettings struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// From is the sender address, a plain email address.
	From string `json:"from"`
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
	var p problems
	pp := s.PasswordPolicy
	if pp.MinLength < MinPasswordLength {
		p.add("passwordPolicy.minLength", RuleRange, "must be at least %d", MinPasswordLength)
	}
	if pp.MaxLength < max(pp.MinLength, MinPasswordLength) || pp.MaxLength > MaxPasswordPolicyLength {
		p.add("passwordPolicy.maxLength", RuleRange, "must be between minLength and %d", MaxPasswordPolicyLength)
	}
	if m := s.SMTP; m != nil {
		if checkText(&p, "smtp.host", m.Host, 1, 253) && strings.ContainsAny(m.Host, " /:@") {
			p.add("smtp.host", RuleFormat, "must be a host name or IP address")
		}
		if m.Port < 1 || m.Port > 65535 {
			p.add("smtp.port", RuleRange, "must be between 1 and 65535")
		}
		checkEmail(&p, "smtp.from", m.From)
	}
	return p.err("invalid settings")
}

func (s Settings) encode() ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func decodeSettings(b []byte) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, &Error{Code: CodeInternal, Message: "stored workspace settings are unreadable", Err: err}
	}
	return s, nil
}

// Settings returns the workspace's settings.
func (w *Workspace) Settings(ctx context.Context) (Settings, error) {
	var s Settings
	err := w.view(ctx, func(tx store.Tx) (err error) {
		s, err = w.settings(tx)
		return err
	})
	return s, fromStore(err, "workspace")
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
// then on.
func (w *Workspace) UpdateSettings(ctx context.Context, s Settings) error {
	encoded, err := s.encode()
	if err != nil {
		return err
	}
	err = w.update(ctx, func(tx store.Tx) error {
		rec, err := tx.Workspace(w.slug)
		if err != nil {
			return err
		}
		rec.Settings = encoded
		return tx.PutWorkspace(rec)
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
