package smtpmail_test

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/mailtest"
	"github.com/identitylib/identity/smtpmail"
)

// verification is a verification email to name, through server.
func verification(server identity.SMTPSettings, name string, lifetime time.Duration) identity.VerificationMail {
	return identity.VerificationMail{
		Server:    server,
		From:      mail.Address{Name: "Acme", Address: "noreply@acme.test"},
		To:        mail.Address{Name: name, Address: "ada@example.com"},
		Link:      "https://app.acme.test/verify?token=idv_0123456789abcdef_" + strings.Repeat("A", 43) + "&lang=en",
		Lifetime:  lifetime,
		Date:      time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
		Workspace: "Acme",
	}
}

// TestVerificationMessage: the message is a multipart/alternative of a
// text and an HTML part, both quoted-printable, with the headers every
// message needs, the link in both parts, the name escaped in HTML, and the
// lifetime in words.
func TestVerificationMessage(t *testing.T) {
	m := verification(identity.SMTPSettings{}, `Ada <b>"Countess"</b> Lovelace`, 24*time.Hour)
	data, err := smtpmail.VerificationMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	p := mailtest.Parse(t, data)
	if p.Subject != "Verify your email address for Acme" {
		t.Errorf("Subject = %q", p.Subject)
	}
	if diff := cmp.Diff(&m.To, p.To); diff != "" {
		t.Errorf("To mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&m.From, p.From); diff != "" {
		t.Errorf("From mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"text/plain; charset=utf-8", "text/html; charset=utf-8"}, p.Types); diff != "" {
		t.Errorf("parts mismatch (-want +got):\n%s", diff)
	}
	if got := p.Header.Get("Date"); got != "Sat, 14 Mar 2026 15:09:26 +0000" {
		t.Errorf("Date = %q", got)
	}
	for header, want := range map[string]string{"MIME-Version": "1.0", "Auto-Submitted": "auto-generated", "Content-Language": "en"} {
		if got := p.Header.Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}
	if id := p.Header.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@acme.test>") {
		t.Errorf("Message-ID = %q", id)
	}
	if p.Link != m.Link || p.HTMLLink() != m.Link {
		t.Errorf("links: text %q, HTML %q; want %q", p.Link, p.HTMLLink(), m.Link)
	}
	if !strings.Contains(p.Plain, `Hello Ada <b>"Countess"</b> Lovelace,`) || !strings.Contains(p.Plain, "expires in 24 hours") {
		t.Errorf("text part:\n%s", p.Plain)
	}
	if !strings.Contains(p.HTML, "Hello Ada &lt;b&gt;&#34;Countess&#34;&lt;/b&gt; Lovelace,") || strings.Contains(p.HTML, "<b>") {
		t.Errorf("HTML part does not escape the name:\n%s", p.HTML)
	}
	again, err := smtpmail.VerificationMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	if id := mailtest.Parse(t, again).Header.Get("Message-ID"); id == p.Header.Get("Message-ID") {
		t.Errorf("two messages share the Message-ID %q", id)
	}
}

// TestVerificationMessageLifetime: the lifetime in words of the email's
// language, in the sentence that gives it.
func TestVerificationMessageLifetime(t *testing.T) {
	for _, c := range []struct {
		locale   string
		lifetime time.Duration
		want     string
	}{
		{"en", 5 * time.Minute, "expires in 5 minutes."},
		{"en", time.Minute, "expires in 1 minute."},
		{"en", 90 * time.Minute, "expires in 90 minutes."},
		{"en", 90*time.Minute + time.Second, "expires in 91 minutes."},
		{"en", time.Hour, "expires in 1 hour."},
		{"en", 24 * time.Hour, "expires in 24 hours."},
		{"en", 48 * time.Hour, "expires in 2 days."},
		{"en", 7 * 24 * time.Hour, "expires in 7 days."},
		{"en", 36 * time.Hour, "expires in 36 hours."},
		{"de", time.Minute, "ist 1 Minute gültig."},
		{"de", 90 * time.Minute, "ist 90 Minuten gültig."},
		{"de", time.Hour, "ist 1 Stunde gültig."},
		{"de", 24 * time.Hour, "ist 24 Stunden gültig."},
		{"de", 48 * time.Hour, "ist 2 Tage gültig."},
	} {
		m := verification(identity.SMTPSettings{}, "Ada", c.lifetime)
		m.Locale = c.locale
		data, err := smtpmail.VerificationMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		p := mailtest.Parse(t, data)
		if plain := strings.Join(strings.Fields(p.Plain), " "); !strings.Contains(plain, c.want) {
			t.Errorf("%s %s: text part does not say %q:\n%s", c.locale, c.lifetime, c.want, p.Plain)
		}
		if !strings.Contains(p.HTML, c.want) {
			t.Errorf("%s %s: HTML part does not say %q:\n%s", c.locale, c.lifetime, c.want, p.HTML)
		}
	}
}

// TestVerificationMessageNames: names of every kind come through intact
// (RFC 2047 where needed), and header lines stay within 78 characters
// where they can (an encoded word after "To: " may pass it by one).
func TestVerificationMessageNames(t *testing.T) {
	for _, name := range []string{
		"Ada Lovelace",
		`Zoë "Z" O'Brien, Jr. <zoe>`,
		"山田 太郎",
		strings.Repeat("é", identity.MaxFullNameLength),
		strings.Repeat("a b ", identity.MaxFullNameLength/4),
	} {
		data, err := smtpmail.VerificationMessage(verification(identity.SMTPSettings{}, name, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got := mailtest.Parse(t, data).To.Name; got != name { // Parse checks line lengths
			t.Errorf("To name %q, want %q", got, name)
		}
		head, _, _ := strings.Cut(string(data), "\r\n\r\n")
		for _, line := range strings.Split(head, "\r\n") {
			if len(line) > 79 {
				t.Errorf("header line of %d characters: %q", len(line), line)
			}
		}
	}
}

// TestSend: each TLS mode against a server speaking it, a login, and the
// failures: STARTTLS not offered, a wrong password, an untrusted
// certificate, a refused recipient (permanent), a server that says nothing
// (timed out), and plain text to an address that is not loopback.
func TestSend(t *testing.T) {
	plain := mailtest.NewServer(t, mailtest.Config{})
	startTLS := mailtest.NewServer(t, mailtest.Config{TLS: mailtest.StartTLS})
	implicit := mailtest.NewServer(t, mailtest.Config{TLS: mailtest.ImplicitTLS, Username: "mailer", Password: "s3cret"})
	refusing := mailtest.NewServer(t, mailtest.Config{RefuseRcpt: true})
	silent := mailtest.NewServer(t, mailtest.Config{})
	silent.Hold()
	wrongPassword := *implicit.Settings(identity.SMTPImplicitTLS)
	wrongPassword.Password = "wrong"
	notLoopback := *plain.Settings(identity.SMTPNoTLS)
	notLoopback.Host = "192.0.2.1" // documentation range: never dialed

	tests := []struct {
		name      string
		server    identity.SMTPSettings
		sender    *smtpmail.Sender
		timeout   time.Duration
		code      int
		permanent bool
		err       string // part of the error; "" for success
		to        *mailtest.Server
	}{
		{"plain text on loopback", *plain.Settings(identity.SMTPNoTLS), smtpmail.NewSender(nil), time.Minute, 250, false, "", plain},
		{"STARTTLS", *startTLS.Settings(identity.SMTPStartTLS), smtpmail.NewSender(startTLS.Roots()), time.Minute, 250, false, "", startTLS},
		{"implicit TLS with login", *implicit.Settings(identity.SMTPImplicitTLS), smtpmail.NewSender(implicit.Roots()), time.Minute, 250, false, "", implicit},
		{"STARTTLS not offered", *plain.Settings(identity.SMTPStartTLS), smtpmail.NewSender(nil), time.Minute, 0, false, "STARTTLS", nil},
		{"wrong password", wrongPassword, smtpmail.NewSender(implicit.Roots()), time.Minute, 454, false, "authenticating", nil},
		{"untrusted certificate", *startTLS.Settings(identity.SMTPStartTLS), smtpmail.NewSender(nil), time.Minute, 0, false, "certificate", nil},
		{"recipient refused", *refusing.Settings(identity.SMTPNoTLS), smtpmail.NewSender(nil), time.Minute, 550, true, "RCPT TO", nil},
		{"server says nothing", *silent.Settings(identity.SMTPNoTLS), smtpmail.NewSender(nil), 200 * time.Millisecond, 0, false, "timed out", nil},
		{"plain text elsewhere", notLoopback, smtpmail.NewSender(nil), time.Minute, 0, false, "loopback addresses only", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			res, err := tt.sender.SendVerification(ctx, verification(tt.server, "Ada", time.Hour))
			if res.Code != tt.code || res.Permanent != tt.permanent {
				t.Errorf("result %+v, want code %d permanent %v (err %v)", res, tt.code, tt.permanent, err)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
			if tt.name == "server says nothing" && !errors.Is(err, smtpmail.ErrTimedOut) {
				t.Errorf("err = %v, want ErrTimedOut", err)
			}
			if tt.to != nil && err == nil {
				msgs := tt.to.WaitMessages(t, 1)
				if diff := cmp.Diff([]string{"ada@example.com"}, msgs[0].To); diff != "" || msgs[0].From != "noreply@acme.test" {
					t.Errorf("envelope from %q to %q", msgs[0].From, msgs[0].To)
				}
			}
		})
	}
}

// TestMessageUnknownKind: a kind this package does not write is
// ErrUnknownKind, and sending it is a permanent failure that never
// connects to the server.
func TestMessageUnknownKind(t *testing.T) {
	ms := mailtest.NewServer(t, mailtest.Config{})
	m := verification(*ms.Settings(identity.SMTPNoTLS), "Ada", time.Hour)
	m.Kind = "welcome"
	if _, err := smtpmail.VerificationMessage(m); !errors.Is(err, smtpmail.ErrUnknownKind) {
		t.Errorf("VerificationMessage = %v, want ErrUnknownKind", err)
	}
	res, err := smtpmail.NewSender(nil).SendVerification(t.Context(), m)
	if !errors.Is(err, smtpmail.ErrUnknownKind) || res != (smtpmail.Result{Permanent: true}) {
		t.Errorf("SendVerification = %+v, %v; want a permanent ErrUnknownKind", res, err)
	}
	if n := ms.Connections(); n != 0 {
		t.Errorf("%d connections to the server", n)
	}
}
