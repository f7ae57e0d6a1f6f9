package smtpmail_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/mailtest"
	"github.com/identitylib/identity/smtpmail"
)

// TestTestEmail: a test email names the workspace in both parts, in the
// language of its locale, and holds no link, button or expiry, whatever
// m.Link says; it is sent through the server like any email.
func TestTestEmail(t *testing.T) {
	m := verification(identity.SMTPSettings{}, "", 0)
	m.Kind, m.Link = identity.MailTest, ""
	data, err := smtpmail.VerificationMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	p := mailtest.Parse(t, data)
	want := "Hello,\n\nThis is a test email from Acme. It arrived, so the workspace's email\nsettings work. There is nothing to do.\n\nThis email was sent automatically by Acme.\n"
	if diff := cmp.Diff(want, strings.ReplaceAll(p.Plain, "\r\n", "\n")); diff != "" {
		t.Errorf("text part (-want +got):\n%s", diff)
	}
	if p.Subject != "Test email from Acme" || p.Link != "" || p.HTMLLink() != "" || strings.Contains(p.HTML, "<a ") ||
		!strings.Contains(p.HTML, "This is a test email from Acme.") {
		t.Errorf("subject %q, link %q, HTML:\n%s", p.Subject, p.Link, p.HTML)
	}
	m.Link, m.Locale = "https://app.acme.test/anything", "de-AT"
	p = mailtest.Parse(t, must(smtpmail.VerificationMessage(m)))
	if p.Subject != "Test-E-Mail von Acme" || p.Link != "" || strings.Contains(p.Plain, "https://") {
		t.Errorf("German: subject %q, text:\n%s", p.Subject, p.Plain)
	}

	ms := mailtest.NewServer(t, mailtest.Config{})
	m = verification(*ms.Settings(identity.SMTPNoTLS), "Ada", 0)
	m.Kind, m.Link = identity.MailTest, ""
	if res, err := smtpmail.NewSender(nil).SendVerification(t.Context(), m); err != nil || res.Code != 250 {
		t.Fatalf("SendVerification = %+v, %v", res, err)
	}
	if got := ms.WaitMessages(t, 1); len(got) != 1 || mailtest.Parse(t, got[0].Data).Subject != "Test email from Acme" {
		t.Errorf("the server got %d messages", len(got))
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
