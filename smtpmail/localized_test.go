package smtpmail_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/mailtest"
	"github.com/identitylib/identity/smtpmail"
)

// The links of the emails of these tests.
const (
	verifyLink = "https://app.acme.test/verify?token=idv_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&lang=en"
	resetLink  = "https://app.acme.test/reset?token=idr_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&lang=en"
)

// sendThrough sends m through a new real SMTP server (plain text on
// loopback) and returns the one message it received, taken apart.
func sendThrough(t *testing.T, m identity.VerificationMail) (mailtest.Message, mailtest.Parsed) {
	t.Helper()
	ms := mailtest.NewServer(t, mailtest.Config{})
	m.Server = *ms.Settings(identity.SMTPNoTLS)
	res, err := smtpmail.NewSender(nil).SendVerification(t.Context(), m)
	if err != nil || res != (smtpmail.Result{Code: 250}) {
		t.Fatalf("SendVerification = %+v, %v", res, err)
	}
	msgs := ms.WaitMessages(t, 1)
	if len(msgs) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(msgs))
	}
	return msgs[0], mailtest.Parse(t, msgs[0].Data)
}

// The texts of the emails of TestSendLocalized, in each language.
const (
	verifyPlainEN = "Hello Ada Lovelace,\n\n" +
		"Please confirm that ada@example.com is your email address for Acme by\n" +
		"opening this link:\n\n" +
		verifyLink + "\n\n" +
		"The link can be used once and expires in 24 hours. If you did not expect\n" +
		"this email, you can ignore it.\n\n" +
		"This email was sent automatically by Acme.\n"
	verifyPlainDE = "Guten Tag Ada Lovelace,\n\n" +
		"bitte bestätigen Sie, dass ada@example.com Ihre E-Mail-Adresse für Acme\n" +
		"ist, indem Sie diesen Link öffnen:\n\n" +
		verifyLink + "\n\n" +
		"Der Link kann nur einmal verwendet werden und ist 24 Stunden gültig.\n" +
		"Falls Sie diese E-Mail nicht erwartet haben, können Sie sie ignorieren.\n\n" +
		"Diese E-Mail wurde automatisch von Acme versendet.\n"
	resetPlainEN = "Hello Ada Lovelace,\n\n" +
		"Someone asked to reset the password of your account at Acme. To choose a\n" +
		"new password, open this link:\n\n" +
		resetLink + "\n\n" +
		"The link can be used once and expires in 1 hour. If you did not ask for\n" +
		"this, you can ignore this email; your password stays as it is.\n\n" +
		"This email was sent automatically by Acme.\n"
	resetPlainDE = "Guten Tag Ada Lovelace,\n\n" +
		"jemand hat angefordert, das Passwort Ihres Kontos bei Acme\n" +
		"zurückzusetzen. Öffnen Sie diesen Link, um ein neues Passwort\n" +
		"festzulegen:\n\n" +
		resetLink + "\n\n" +
		"Der Link kann nur einmal verwendet werden und ist 1 Stunde gültig. Falls\n" +
		"Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren; Ihr\n" +
		"Passwort bleibt unverändert.\n\n" +
		"Diese E-Mail wurde automatisch von Acme versendet.\n"
)

// TestSendLocalized: verification and password reset emails arrive
// through a real SMTP server in the language of their locale (by its
// primary language), English for a locale the catalogue lacks or none;
// subject, both parts and Content-Language agree, and a non-ASCII subject
// is encoded per RFC 2047 while an ASCII one is not.
func TestSendLocalized(t *testing.T) {
	tests := []struct {
		name     string
		kind     identity.MailKind
		locale   string
		subject  string
		encoded  bool // the Subject header holds encoded words
		lang     string
		plain    string
		htmlHas  []string
		htmlLink string
	}{
		{
			name: "verification en", kind: identity.MailVerifyEmail, locale: "en",
			subject: "Verify your email address for Acme", lang: "en", plain: verifyPlainEN,
			htmlHas: []string{
				`<html lang="en">`,
				`<title>Verify your email address for Acme</title>`,
				`<p style="margin:0 0 16px 0;">Hello Ada Lovelace,</p>`,
				`<p style="margin:0 0 24px 0;">Please confirm that ada@example.com is your email address for Acme by opening this link:</p>`,
				`>Verify my email address</a>`,
				`<p style="margin:0 0 8px 0;font-size:14px;color:#374151;">If the button does not work, copy this address into your browser:</p>`,
				`<p style="margin:0;">The link can be used once and expires in 24 hours. If you did not expect this email, you can ignore it.</p>`,
				`>This email was sent automatically by Acme.</td>`,
			},
			htmlLink: verifyLink,
		},
		{
			name: "verification de-AT", kind: identity.MailVerifyEmail, locale: "de-AT",
			subject: "E-Mail-Adresse für Acme bestätigen", encoded: true, lang: "de", plain: verifyPlainDE,
			htmlHas: []string{
				`<html lang="de">`,
				`<title>E-Mail-Adresse für Acme bestätigen</title>`,
				`<p style="margin:0 0 16px 0;">Guten Tag Ada Lovelace,</p>`,
				`<p style="margin:0 0 24px 0;">bitte bestätigen Sie, dass ada@example.com Ihre E-Mail-Adresse für Acme ist, indem Sie diesen Link öffnen:</p>`,
				`>E-Mail-Adresse bestätigen</a>`,
				`<p style="margin:0 0 8px 0;font-size:14px;color:#374151;">Falls die Schaltfläche nicht funktioniert, kopieren Sie diese Adresse in Ihren Browser:</p>`,
				`<p style="margin:0;">Der Link kann nur einmal verwendet werden und ist 24 Stunden gültig. Falls Sie diese E-Mail nicht erwartet haben, können Sie sie ignorieren.</p>`,
				`>Diese E-Mail wurde automatisch von Acme versendet.</td>`,
			},
			htmlLink: verifyLink,
		},
		{
			name: "password reset en", kind: identity.MailPasswordReset, locale: "en-GB",
			subject: "Reset your password for Acme", lang: "en", plain: resetPlainEN,
			htmlHas: []string{
				`<html lang="en">`,
				`<title>Reset your password for Acme</title>`,
				`<p style="margin:0 0 24px 0;">Someone asked to reset the password of your account at Acme. To choose a new password, open this link:</p>`,
				`>Choose a new password</a>`,
				`<p style="margin:0;">The link can be used once and expires in 1 hour. If you did not ask for this, you can ignore this email; your password stays as it is.</p>`,
			},
			htmlLink: resetLink,
		},
		{
			name: "password reset de", kind: identity.MailPasswordReset, locale: "de",
			subject: "Passwort für Acme zurücksetzen", encoded: true, lang: "de", plain: resetPlainDE,
			htmlHas: []string{
				`<html lang="de">`,
				`<title>Passwort für Acme zurücksetzen</title>`,
				`<p style="margin:0 0 16px 0;">Guten Tag Ada Lovelace,</p>`,
				`<p style="margin:0 0 24px 0;">jemand hat angefordert, das Passwort Ihres Kontos bei Acme zurückzusetzen. Öffnen Sie diesen Link, um ein neues Passwort festzulegen:</p>`,
				`>Neues Passwort festlegen</a>`,
				`<p style="margin:0;">Der Link kann nur einmal verwendet werden und ist 1 Stunde gültig. Falls Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren; Ihr Passwort bleibt unverändert.</p>`,
			},
			htmlLink: resetLink,
		},
		{
			name: "unknown locale falls back to English", kind: identity.MailVerifyEmail, locale: "fr-FR",
			subject: "Verify your email address for Acme", lang: "en", plain: verifyPlainEN,
			htmlHas:  []string{`<html lang="en">`, `>Verify my email address</a>`},
			htmlLink: verifyLink,
		},
		{
			name: "no locale, no kind", kind: "", locale: "",
			subject: "Verify your email address for Acme", lang: "en", plain: verifyPlainEN,
			htmlHas:  []string{`<html lang="en">`, `>Verify my email address</a>`},
			htmlLink: verifyLink,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := verification(identity.SMTPSettings{}, "Ada Lovelace", 24*time.Hour)
			m.Kind, m.Locale = tt.kind, tt.locale
			if tt.kind == identity.MailPasswordReset {
				m.Link, m.Lifetime = resetLink, identity.PasswordResetTokenLifetime
			}
			msg, p := sendThrough(t, m)
			if diff := cmp.Diff([]string{"ada@example.com"}, msg.To); diff != "" || msg.From != "noreply@acme.test" {
				t.Errorf("envelope from %q to %q", msg.From, msg.To)
			}
			if p.Subject != tt.subject {
				t.Errorf("Subject = %q, want %q", p.Subject, tt.subject)
			}
			if raw := p.Header.Get("Subject"); strings.HasPrefix(raw, "=?utf-8?b?") != tt.encoded {
				t.Errorf("Subject header %q: encoded %v, want %v", raw, !tt.encoded, tt.encoded)
			}
			if got := p.Header.Get("Content-Language"); got != tt.lang {
				t.Errorf("Content-Language = %q, want %q", got, tt.lang)
			}
			// Parts come with CRLF line ends: the message is text.
			if diff := cmp.Diff(tt.plain, strings.ReplaceAll(p.Plain, "\r\n", "\n")); diff != "" {
				t.Errorf("text part mismatch (-want +got):\n%s", diff)
			}
			html := strings.ReplaceAll(p.HTML, "\r\n", "\n")
			for _, want := range tt.htmlHas {
				if !strings.Contains(html, want) {
					t.Errorf("HTML part lacks %q:\n%s", want, html)
				}
			}
			if p.Link != tt.htmlLink || p.HTMLLink() != tt.htmlLink {
				t.Errorf("links: text %q, HTML %q; want %q", p.Link, p.HTMLLink(), tt.htmlLink)
			}
			if all := p.Subject + p.Plain + p.HTML; strings.Contains(all, "!mail.") || strings.Contains(all, "%!") {
				t.Errorf("a message missing from the catalogue or a bad verb:\n%s\n%s\n%s", p.Subject, p.Plain, p.HTML)
			}
		})
	}
}

// TestMessageGreeting: a user without a full name is greeted without
// one.
func TestMessageGreeting(t *testing.T) {
	for _, c := range []struct{ locale, name, want string }{
		{"en", "Ada", "Hello Ada,\r\n\r\n"},
		{"en", "", "Hello,\r\n\r\n"},
		{"en", "  ", "Hello,\r\n\r\n"},
		{"de", "Ada", "Guten Tag Ada,\r\n\r\n"},
		{"de", "", "Guten Tag,\r\n\r\n"},
	} {
		m := verification(identity.SMTPSettings{}, c.name, time.Hour)
		m.Locale = c.locale
		data, err := smtpmail.VerificationMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if p := mailtest.Parse(t, data); !strings.HasPrefix(p.Plain, c.want) {
			t.Errorf("%s %q: text part starts %q, want %q", c.locale, c.name, p.Plain[:min(len(p.Plain), 30)], c.want)
		}
	}
}

// testPNG returns a PNG image of w×h pixels.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.NRGBA{R: 0x1d, G: 0x5f, B: 0xc9, A: 0xff})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// contentIDPattern is the form of the logo's Content-ID: random, in the
// domain of the sender's address.
var contentIDPattern = regexp.MustCompile(`^logo\.[0-9a-f]{32}@acme\.test$`)

// TestSendLogo: with a logo the HTML part and the PNG travel as a
// multipart/related inside the multipart/alternative, the image inline
// with a Content-ID that the HTML's img refers to (scaled down to fit,
// never up); without a logo, or with data that is no PNG, the HTML part
// stands alone and shows the workspace's name instead.
func TestSendLogo(t *testing.T) {
	const (
		related = "multipart/alternative(text/plain, multipart/related(text/html, image/png))"
		alone   = "multipart/alternative(text/plain, text/html)"
	)
	tests := []struct {
		name      string
		logo      []byte
		structure string
		size      string // the img's width and height; "" for no img
	}{
		{"wide logo scaled to the height", testPNG(t, 200, 100), related, `width="96" height="48"`},
		{"very wide logo scaled to the width", testPNG(t, 1000, 10), related, `width="240" height="2"`},
		{"small logo not scaled up", testPNG(t, 40, 20), related, `width="40" height="20"`},
		{"no logo", nil, alone, ""},
		{"not a PNG", []byte("GIF89a not a png"), alone, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := verification(identity.SMTPSettings{}, "Ada", time.Hour)
			if tt.logo != nil {
				m.Logo = &identity.Logo{ContentType: "image/png", Data: tt.logo}
			}
			_, p := sendThrough(t, m)
			if p.Structure != tt.structure {
				t.Errorf("structure %q, want %q", p.Structure, tt.structure)
			}
			if tt.size == "" {
				if len(p.Images) != 0 || strings.Contains(p.HTML, "cid:") || strings.Contains(p.HTML, "<img") {
					t.Errorf("%d images; HTML:\n%s", len(p.Images), p.HTML)
				}
				if want := `<p style="margin:0;font-size:20px;font-weight:bold;">Acme</p>`; !strings.Contains(p.HTML, want) {
					t.Errorf("HTML lacks the workspace's name %q:\n%s", want, p.HTML)
				}
				return
			}
			if len(p.Images) != 1 {
				t.Fatalf("%d images, want 1", len(p.Images))
			}
			img := p.Images[0]
			if img.ContentType != "image/png; name=logo.png" || img.Disposition != "inline; filename=logo.png" {
				t.Errorf("image part Content-Type %q, Content-Disposition %q", img.ContentType, img.Disposition)
			}
			if !bytes.Equal(img.Data, tt.logo) {
				t.Errorf("image data of %d bytes differs from the logo's %d", len(img.Data), len(tt.logo))
			}
			if !contentIDPattern.MatchString(img.ContentID) {
				t.Errorf("Content-ID %q", img.ContentID)
			}
			want := `<img src="cid:` + img.ContentID + `" alt="Acme" ` + tt.size + ` style="display:block;border:0;">`
			if !strings.Contains(strings.ReplaceAll(p.HTML, "\r\n", "\n"), want) {
				t.Errorf("HTML lacks %q:\n%s", want, p.HTML)
			}
		})
	}
}

// TestMessageLogoContentIDs: two messages never share a logo's
// Content-ID.
func TestMessageLogoContentIDs(t *testing.T) {
	m := verification(identity.SMTPSettings{}, "Ada", time.Hour)
	m.Logo = &identity.Logo{ContentType: "image/png", Data: testPNG(t, 10, 10)}
	ids := map[string]bool{}
	for range 2 {
		data, err := smtpmail.VerificationMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		p := mailtest.Parse(t, data)
		if len(p.Images) != 1 {
			t.Fatalf("%d images, want 1", len(p.Images))
		}
		ids[p.Images[0].ContentID] = true
	}
	if len(ids) != 2 {
		t.Errorf("two messages share the Content-ID %v", ids)
	}
}

// TestMessageAccent: the accent colours the rule above the header, the
// button and the written-out link; one that is not "#rrggbb" gives way to
// the library's default.
func TestMessageAccent(t *testing.T) {
	for _, c := range []struct{ accent, want string }{
		{"#aa0000", "#aa0000"},
		{"#0B6E4F", "#0B6E4F"},
		{"", "#1d5fc9"},
		{"red", "#1d5fc9"},
		{"#aa00001", "#1d5fc9"},
		{"#aa0000;background:url(https://evil.test/x)", "#1d5fc9"},
	} {
		m := verification(identity.SMTPSettings{}, "Ada", time.Hour)
		m.Accent = c.accent
		_, p := sendThrough(t, m)
		html := strings.ReplaceAll(p.HTML, "\r\n", "\n")
		for _, want := range []string{
			"border-top:4px solid " + c.want + ";",
			"background-color:" + c.want + ";color:#ffffff;",
			`style="color:` + c.want + `;"`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("accent %q: HTML lacks %q:\n%s", c.accent, want, html)
			}
		}
		if c.want != "#1d5fc9" && strings.Contains(html, "#1d5fc9") {
			t.Errorf("accent %q: HTML has the default accent too", c.accent)
		}
		if strings.Contains(html, "evil.test") {
			t.Errorf("accent %q reached the HTML", c.accent)
		}
	}
}

// TestMessageHostileWorkspace: a workspace name of markup is text in the
// HTML part (in the header, the title and the alt text alike), stays as
// it is in the subject and the text part, and the same for a user's name.
func TestMessageHostileWorkspace(t *testing.T) {
	m := verification(identity.SMTPSettings{}, `Ada <i>'Countess'</i>`, time.Hour)
	m.Workspace = `Evil</p><script>alert(1)</script> & "Co" <img src=x>`
	_, p := sendThrough(t, m)
	const escaped = `Evil&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;Co&#34; &lt;img src=x&gt;`
	html := strings.ReplaceAll(p.HTML, "\r\n", "\n")
	for _, want := range []string{
		`<title>Verify your email address for ` + escaped + `</title>`,
		`<p style="margin:0;font-size:20px;font-weight:bold;">` + escaped + `</p>`,
		`email address for ` + escaped + ` by opening`,
		`>This email was sent automatically by ` + escaped + `.</td>`,
		`<p style="margin:0 0 16px 0;">Hello Ada &lt;i&gt;&#39;Countess&#39;&lt;/i&gt;,</p>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q:\n%s", want, html)
		}
	}
	for _, bad := range []string{"<script", "<img src=x", "<i>"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML holds %q:\n%s", bad, html)
		}
	}
	if want := `Verify your email address for Evil</p><script>alert(1)</script> & "Co" <img src=x>`; p.Subject != want {
		t.Errorf("Subject = %q, want %q", p.Subject, want)
	}
	if want := `This email was sent automatically by Evil</p><script>alert(1)</script> & "Co" <img src=x>.`; !strings.Contains(strings.ReplaceAll(p.Plain, "\r\n", " "), want) {
		t.Errorf("text part lacks %q:\n%s", want, p.Plain)
	}

	m.Logo = &identity.Logo{ContentType: "image/png", Data: testPNG(t, 10, 10)}
	_, p = sendThrough(t, m)
	if want := `alt="` + escaped + `"`; !strings.Contains(strings.ReplaceAll(p.HTML, "\r\n", "\n"), want) {
		t.Errorf("HTML lacks %q:\n%s", want, p.HTML)
	}
}

// TestMessageHeaderInjection: line breaks in the workspace's, the
// recipient's and the sender's names add no header: the names are
// encoded (RFC 2047) or their breaks made spaces, and the message has
// exactly the headers it writes, going to the recipient alone. In the
// text part the breaks are spaces too.
func TestMessageHeaderInjection(t *testing.T) {
	m := verification(identity.SMTPSettings{}, "Ada\r\nBcc: eve@evil.test", time.Hour)
	m.Workspace = "Acme\r\nBcc: eve@evil.test\nX-Injected: 1"
	m.From.Name = "Acme\nX-Injected: 2"
	msg, p := sendThrough(t, m)
	if diff := cmp.Diff([]string{"ada@example.com"}, msg.To); diff != "" {
		t.Errorf("envelope recipients mismatch (-want +got):\n%s", diff)
	}
	var names []string
	for name := range p.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"Auto-Submitted", "Content-Language", "Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("headers mismatch (-want +got):\n%s", diff)
	}
	if want := "Verify your email address for Acme  Bcc: eve@evil.test X-Injected: 1"; p.Subject != want {
		t.Errorf("Subject = %q, want %q", p.Subject, want)
	}
	if diff := cmp.Diff(&mail.Address{Name: "Ada\r\nBcc: eve@evil.test", Address: "ada@example.com"}, p.To); diff != "" {
		t.Errorf("To mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&mail.Address{Name: "Acme\nX-Injected: 2", Address: "noreply@acme.test"}, p.From); diff != "" {
		t.Errorf("From mismatch (-want +got):\n%s", diff)
	}
	// The name's breaks are spaces: the greeting is one line.
	if first, _, _ := strings.Cut(p.Plain, "\r\n"); first != "Hello Ada  Bcc: eve@evil.test," {
		t.Errorf("text part starts %q:\n%s", first, p.Plain)
	}
	if want := "for Acme Bcc: eve@evil.test X-Injected: 1 by opening"; !strings.Contains(strings.Join(strings.Fields(p.Plain), " "), want) {
		t.Errorf("text part lacks %q:\n%s", want, p.Plain)
	}
}

// TestMessageSubjectEncoding: a subject is written as it is when it is
// printable ASCII, else (non-ASCII, something that looks like an encoded
// word, a word too long to fold) as encoded words; either way it reads
// back as it was and its lines stay within 78 characters.
func TestMessageSubjectEncoding(t *testing.T) {
	for _, c := range []struct {
		workspace string
		encoded   bool
	}{
		{"Acme", false},
		{"Zürich Bank", true},
		{strings.Repeat("ß", identity.MaxDisplayNameLength), true},
		{strings.Repeat("x", identity.MaxDisplayNameLength), false},
		{"=?utf-8?q?Fake?=", true},
		{strings.Repeat("y", 100), true},
	} {
		m := verification(identity.SMTPSettings{}, "Ada", time.Hour)
		m.Workspace = c.workspace
		data, err := smtpmail.VerificationMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		p := mailtest.Parse(t, data)
		if want := "Verify your email address for " + c.workspace; p.Subject != want {
			t.Errorf("Subject = %q, want %q", p.Subject, want)
		}
		if raw := p.Header.Get("Subject"); strings.HasPrefix(raw, "=?utf-8?b?") != c.encoded {
			t.Errorf("%q: Subject header %q, want encoded %v", c.workspace, raw, c.encoded)
		}
		head, _, _ := strings.Cut(string(data), "\r\n\r\n")
		for _, line := range strings.Split(head, "\r\n") {
			if strings.HasPrefix(line, "Subject:") || strings.HasPrefix(line, " =?") {
				if len(line) > 78 {
					t.Errorf("%q: header line of %d characters: %q", c.workspace, len(line), line)
				}
			}
		}
	}
}

// TestMessageRefused: a message that no attempt could send safely (no
// workspace; an address with a line break, a space or no domain; a link
// that is no absolute http(s) URL) is refused with its error, and sending
// it is a permanent failure that never connects to the server.
func TestMessageRefused(t *testing.T) {
	ms := mailtest.NewServer(t, mailtest.Config{})
	for _, c := range []struct {
		name   string
		change func(*identity.VerificationMail)
		want   error
	}{
		{"no workspace", func(m *identity.VerificationMail) { m.Workspace = "" }, smtpmail.ErrNoWorkspace},
		{"recipient with CRLF", func(m *identity.VerificationMail) { m.To.Address = "ada@example.com\r\nRCPT TO:<eve@evil.test>" }, smtpmail.ErrBadAddress},
		{"recipient with LF", func(m *identity.VerificationMail) { m.To.Address = "ada@example.com\nBcc: eve@evil.test" }, smtpmail.ErrBadAddress},
		{"recipient with a space", func(m *identity.VerificationMail) { m.To.Address = "ada @example.com" }, smtpmail.ErrBadAddress},
		{"recipient without domain", func(m *identity.VerificationMail) { m.To.Address = "ada@" }, smtpmail.ErrBadAddress},
		{"no recipient", func(m *identity.VerificationMail) { m.To.Address = "" }, smtpmail.ErrBadAddress},
		{"sender with CR", func(m *identity.VerificationMail) { m.From.Address = "noreply@acme.test\rX: 1" }, smtpmail.ErrBadAddress},
		{"sender without local part", func(m *identity.VerificationMail) { m.From.Address = "@acme.test" }, smtpmail.ErrBadAddress},
		{"javascript link", func(m *identity.VerificationMail) { m.Link = "javascript:alert(1)" }, smtpmail.ErrBadLink},
		{"relative link", func(m *identity.VerificationMail) { m.Link = "/verify?token=x" }, smtpmail.ErrBadLink},
		{"link with a line break", func(m *identity.VerificationMail) { m.Link = "https://app.acme.test/verify\r\nBcc: x" }, smtpmail.ErrBadLink},
		{"link with a space", func(m *identity.VerificationMail) { m.Link = "https://app.acme.test/verify?token=a b" }, smtpmail.ErrBadLink},
		{"no link", func(m *identity.VerificationMail) { m.Link = "" }, smtpmail.ErrBadLink},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := verification(*ms.Settings(identity.SMTPNoTLS), "Ada", time.Hour)
			c.change(&m)
			if _, err := smtpmail.VerificationMessage(m); !errors.Is(err, c.want) {
				t.Errorf("VerificationMessage = %v, want %v", err, c.want)
			}
			res, err := smtpmail.NewSender(nil).SendVerification(t.Context(), m)
			if !errors.Is(err, c.want) || res != (smtpmail.Result{Permanent: true}) {
				t.Errorf("SendVerification = %+v, %v; want a permanent %v", res, err, c.want)
			}
		})
	}
	if n := ms.Connections(); n != 0 {
		t.Errorf("%d connections to the server", n)
	}
}
