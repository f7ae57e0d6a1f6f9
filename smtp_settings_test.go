package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// TestSMTPSettingsValidation: every rule of SMTPSettings, as field
// errors.
func TestSMTPSettingsValidation(t *testing.T) {
	_, ws := newWorkspace(t, memstore.New(), nil, nil)
	valid := identity.SMTPSettings{
		Host: "smtp.example.com", Port: 587, From: "noreply@example.com",
		VerifyURL: "https://app.example.com/verify?token={token}",
	}
	fe := func(field, rule string) identity.FieldError { return identity.FieldError{Field: field, Rule: rule} }
	tests := []struct {
		name string
		mod  func(*identity.SMTPSettings)
		want []identity.FieldError
	}{
		{"valid", func(*identity.SMTPSettings) {}, nil},
		{"implicit TLS with login", func(m *identity.SMTPSettings) {
			m.TLS, m.Port, m.Username, m.Password = identity.SMTPImplicitTLS, 465, "u", "p"
		}, nil},
		{"plain text on localhost", func(m *identity.SMTPSettings) { m.Host, m.TLS = "localhost", identity.SMTPNoTLS }, nil},
		{"plain text on ::1", func(m *identity.SMTPSettings) { m.Host, m.TLS = "::1", identity.SMTPNoTLS }, nil},
		{"http link on loopback", func(m *identity.SMTPSettings) { m.VerifyURL = "http://127.0.0.1:3000/v/{token}" }, nil},
		{"lifetime bounds", func(m *identity.SMTPSettings) { m.TokenLifetime = identity.MaxVerificationTokenLifetime }, nil},
		{"plain text elsewhere", func(m *identity.SMTPSettings) { m.TLS = identity.SMTPNoTLS },
			[]identity.FieldError{fe("smtp.tls", identity.RuleLoopbackOnly)}},
		{"unknown TLS mode", func(m *identity.SMTPSettings) { m.TLS = "ssl" },
			[]identity.FieldError{fe("smtp.tls", identity.RuleUnknown)}},
		{"username without password", func(m *identity.SMTPSettings) { m.Username = "u" },
			[]identity.FieldError{fe("smtp.password", identity.RuleRequired)}},
		{"password without username", func(m *identity.SMTPSettings) { m.Password = "p" },
			[]identity.FieldError{fe("smtp.username", identity.RuleRequired)}},
		{"control character in username", func(m *identity.SMTPSettings) { m.Username, m.Password = "u\n", "p" },
			[]identity.FieldError{fe("smtp.username", identity.RuleControlCharacter)}},
		{"host with port", func(m *identity.SMTPSettings) { m.Host = "smtp.example.com:25" },
			[]identity.FieldError{fe("smtp.host", identity.RuleFormat)}},
		{"from with name", func(m *identity.SMTPSettings) { m.From = "Acme <noreply@example.com>" },
			[]identity.FieldError{fe("smtp.from", identity.RuleFormat)}},
		{"from name with newline", func(m *identity.SMTPSettings) { m.FromName = "Acme\r\nBcc: x@y.z" },
			[]identity.FieldError{fe("smtp.fromName", identity.RuleControlCharacter)}},
		{"no link", func(m *identity.SMTPSettings) { m.VerifyURL = "" },
			[]identity.FieldError{fe("smtp.verifyUrl", identity.RuleRequired)}},
		{"link without placeholder", func(m *identity.SMTPSettings) { m.VerifyURL = "https://app.example.com/verify" },
			[]identity.FieldError{fe("smtp.verifyUrl", identity.RuleFormat)}},
		{"http link", func(m *identity.SMTPSettings) { m.VerifyURL = "http://app.example.com/verify?t={token}" },
			[]identity.FieldError{fe("smtp.verifyUrl", identity.RuleLoopbackOnly)}},
		{"relative link", func(m *identity.SMTPSettings) { m.VerifyURL = "/verify?t={token}" },
			[]identity.FieldError{fe("smtp.verifyUrl", identity.RuleFormat)}},
		{"javascript link", func(m *identity.SMTPSettings) { m.VerifyURL = "javascript://x/{token}" },
			[]identity.FieldError{fe("smtp.verifyUrl", identity.RuleFormat)}},
		{"link with credentials", func(m *identity.SMTPSettings) { m.VerifyURL = "https://u:p@app.example.com/{token}" },
			[]identity.FieldError{fe("smtp.verifyUrl", identity.RuleFormat)}},
		{"lifetime too short", func(m *identity.SMTPSettings) { m.TokenLifetime = time.Minute },
			[]identity.FieldError{fe("smtp.tokenLifetime", identity.RuleRange)}},
		{"lifetime too long", func(m *identity.SMTPSettings) { m.TokenLifetime = 8 * 24 * time.Hour },
			[]identity.FieldError{fe("smtp.tokenLifetime", identity.RuleRange)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid
			tt.mod(&m)
			err := ws.UpdateSettings(context.Background(), identity.Settings{
				PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: &m,
			})
			var got []identity.FieldError
			if e, ok := errors.AsType[*identity.Error](err); ok {
				for _, f := range e.Fields {
					got = append(got, fe(f.Field, f.Rule))
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
