package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// smtpSettings reads the workspace acme's SMTP settings from the database
// and closes it again.
func smtpSettings(t *testing.T, db string) (m *identity.SMTPSettings) {
	t.Helper()
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		s, err := ws.GetSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m = s.SMTP
	})
	return m
}

// TestWorkspaceSMTP: workspace smtp stores the settings with the port of
// the mode, takes the password from the environment and keeps it while
// host and username stay, asks for it when they change, and -off removes
// the settings.
func TestWorkspaceSMTP(t *testing.T) {
	db, _ := newDB(t)
	base := []string{"-db", db, "workspace", "smtp", "-workspace", "acme",
		"-host", "smtp.example.com", "-from", "noreply@acme.test",
		"-verify-url", "https://app.acme.test/verify?token={token}", "-username", "mailer"}
	t.Setenv(smtpPasswordEnv, "s3cret")
	r := mustRun(t, base...)
	if r.stdout != "saved the SMTP settings of workspace acme\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	want := &identity.SMTPSettings{
		Host: "smtp.example.com", Port: 587, TLS: identity.SMTPStartTLS, Username: "mailer", PasswordSet: true,
		From: "noreply@acme.test", VerifyURL: "https://app.acme.test/verify?token={token}",
	}
	if diff := cmp.Diff(want, smtpSettings(t, db)); diff != "" {
		t.Errorf("settings mismatch (-want +got):\n%s", diff)
	}

	t.Setenv(smtpPasswordEnv, "")
	mustRun(t, append(base, "-from-name", "Acme", "-token-lifetime", "2h", "-tls", "tls", "-reset-url", "https://app.acme.test/reset?token={token}")...)
	want.FromName, want.TokenLifetime, want.TLS, want.Port = "Acme", 2*time.Hour, identity.SMTPImplicitTLS, 465
	want.ResetURL = "https://app.acme.test/reset?token={token}"
	if diff := cmp.Diff(want, smtpSettings(t, db)); diff != "" {
		t.Errorf("settings after an update without password mismatch (-want +got):\n%s", diff)
	}

	r = runCmd(t, append(base, "-host", "mail.example.com")...) // the last -host counts
	if r.code != exitError || !strings.Contains(r.stderr, smtpPasswordEnv) {
		t.Errorf("new host without password: exit %d, stderr %q", r.code, r.stderr)
	}

	r = mustRun(t, "-db", db, "workspace", "smtp", "-workspace", "acme", "-off")
	if r.stdout != "removed the SMTP settings of workspace acme\n" || smtpSettings(t, db) != nil {
		t.Errorf("-off: stdout %q, settings %+v", r.stdout, smtpSettings(t, db))
	}
}

// TestWorkspaceSMTPErrors: usage errors exit 2, settings the library
// refuses exit 1 with its field messages.
func TestWorkspaceSMTPErrors(t *testing.T) {
	db, _ := newDB(t)
	cmd := []string{"-db", db, "workspace", "smtp", "-workspace", "acme"}
	valid := []string{"-host", "smtp.example.com", "-from", "noreply@acme.test", "-verify-url", "https://app.acme.test/v/{token}"}
	tests := []struct {
		name   string
		env    string // the password in the environment
		args   []string
		code   int
		stderr string // a part of it
	}{
		{"no host", "", []string{"-from", "a@b.test", "-verify-url", "https://x.test/{token}"}, exitUsage, "-host is required"},
		{"off with settings", "", []string{"-off", "-host", "smtp.example.com"}, exitUsage, "-off takes no other settings (got -host)"},
		{"password without username", "pw", valid, exitUsage, "a password needs -username"},
		{"unknown mode", "", append([]string{"-tls", "ssl"}, valid...), exitError, "smtp.tls must be"},
		{"plain text to a remote host", "", append([]string{"-tls", "none"}, valid...), exitError, "smtp.tls may be \"none\" only for localhost"},
		{"link without token", "", []string{"-host", "smtp.example.com", "-from", "a@b.test", "-verify-url", "https://x.test/"}, exitError, "smtp.verifyUrl must contain {token}"},
		{"reset link without token", "", append([]string{"-reset-url", "https://x.test/reset"}, valid...), exitError, "smtp.resetUrl must contain {token}"},
		{"unknown workspace", "", append([]string{"-workspace", "nope"}, valid...), exitError, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(smtpPasswordEnv, tt.env)
			r := runCmd(t, append(cmd, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	if got := smtpSettings(t, db); got != nil {
		t.Errorf("settings stored after errors: %+v", got)
	}
}

// TestWorkspaceSMTPPasswordStdin: -password-stdin reads the first line.
func TestWorkspaceSMTPPasswordStdin(t *testing.T) {
	db, _ := newDB(t)
	t.Setenv(smtpPasswordEnv, "")
	var stdout, stderr bytes.Buffer
	e := &env{dbPath: db, stdin: strings.NewReader("from stdin\nignored\n"), stdout: &stdout, stderr: &stderr}
	c, _, err := lookup([]string{"workspace", "smtp"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.run(context.Background(), e, c.flagSet(&stderr), []string{"-workspace", "acme",
		"-host", "localhost", "-tls", "none", "-from", "noreply@acme.test", "-verify-url", "http://localhost:3000/v/{token}",
		"-username", "mailer", "-password-stdin"})
	if err != nil {
		t.Fatalf("workspace smtp: %v (stderr %q)", err, stderr.String())
	}
	if got := smtpSettings(t, db); got == nil || !got.PasswordSet || got.Port != 25 {
		t.Errorf("settings %+v", got)
	}
}
