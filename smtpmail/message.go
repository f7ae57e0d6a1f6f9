package smtpmail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/identitylib/identity"
)

// content is what differs between the kinds of email: the subject and
// the templates of the two parts, which both take a mailText.
type content struct {
	subject string
	plain   *texttemplate.Template
	html    *htmltemplate.Template
}

// mailText is the data of both parts of a message.
type mailText struct {
	Name, Email, Link, Lifetime string
}

// verification is the content of verification emails.
var verification = content{
	subject: "Verify your email address",
	plain: texttemplate.Must(texttemplate.New("verify").Parse(`Hello {{.Name}},

Please confirm that {{.Email}} is your email address by opening this link:

{{.Link}}

The link can be used once and expires in {{.Lifetime}}. If you did not expect this
email, you can ignore it.
`)),
	// html/template escapes every value, so a user's full name cannot
	// inject markup.
	html: htmltemplate.Must(htmltemplate.New("verify").Parse(`<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>Verify your email address</title></head>
<body>
<p>Hello {{.Name}},</p>
<p>Please confirm that {{.Email}} is your email address by opening this link:</p>
<p><a href="{{.Link}}">Verify my email address</a></p>
<p>If the link does not open, copy this address into your browser:<br>{{.Link}}</p>
<p>The link can be used once and expires in {{.Lifetime}}. If you did not expect this email, you can ignore it.</p>
</body>
</html>
`)),
}

// passwordReset is the content of password reset emails.
var passwordReset = content{
	subject: "Reset your password",
	plain: texttemplate.Must(texttemplate.New("reset").Parse(`Hello {{.Name}},

Someone asked to reset the password of the account with this address.
To choose a new password, open this link:

{{.Link}}

The link can be used once and expires in {{.Lifetime}}. If you did not ask
for this, you can ignore this email; your password stays as it is.
`)),
	html: htmltemplate.Must(htmltemplate.New("reset").Parse(`<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>Reset your password</title></head>
<body>
<p>Hello {{.Name}},</p>
<p>Someone asked to reset the password of the account with this address. To choose a new password, open this link:</p>
<p><a href="{{.Link}}">Choose a new password</a></p>
<p>If the link does not open, copy this address into your browser:<br>{{.Link}}</p>
<p>The link can be used once and expires in {{.Lifetime}}. If you did not ask for this, you can ignore this email; your password stays as it is.</p>
</body>
</html>
`)),
}

// ErrUnknownKind is the error of a message whose Kind is none of the
// kinds this package writes.
var ErrUnknownKind = errors.New("unknown kind of email")

// contentOf returns the content of an email of the kind: a verification
// email for MailVerifyEmail or no kind, a password reset email for
// MailPasswordReset.
func contentOf(kind identity.MailKind) (content, error) {
	switch kind {
	case "", identity.MailVerifyEmail:
		return verification, nil
	case identity.MailPasswordReset:
		return passwordReset, nil
	}
	return content{}, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
}

// newMessageID returns a Message-ID value, unique per message, in the
// domain of the sender's address.
func newMessageID(from string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	domain := "localhost"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-1 {
		domain = from[at+1:]
	}
	return "<" + hex.EncodeToString(b) + "@" + domain + ">", nil
}

// VerificationMessage returns the email m as SMTP sends it (CRLF line
// ends): for m.Kind MailPasswordReset a password reset email, for
// MailVerifyEmail (or no kind) a verification email, and for any other
// kind ErrUnknownKind. Either is a multipart/alternative of a text/plain
// and a text/html part, both UTF-8 and quoted-printable, holding m.Link
// and m.Lifetime in words, with names and subject encoded per RFC 2047, a
// Message-ID in the domain of the sender's address, and Auto-Submitted:
// auto-generated.
func VerificationMessage(m identity.VerificationMail) ([]byte, error) {
	c, err := contentOf(m.Kind)
	if err != nil {
		return nil, err
	}
	messageID, err := newMessageID(m.From.Address)
	if err != nil {
		return nil, err
	}
	body, boundary, err := c.body(mailText{
		Name: m.To.Name, Email: m.To.Address, Link: m.Link, Lifetime: describeLifetime(m.Lifetime),
	})
	if err != nil {
		return nil, err
	}
	var msg bytes.Buffer
	header := func(name, value string) {
		msg.WriteString(name + ": " + foldHeader(len(name)+2, value) + "\r\n")
	}
	header("From", m.From.String())
	header("To", m.To.String())
	header("Subject", mime.QEncoding.Encode("utf-8", c.subject))
	header("Date", m.Date.Format(time.RFC1123Z))
	header("Message-ID", messageID)
	header("MIME-Version", "1.0")
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary}))
	// RFC 3834: no vacation replies or other automatic answers, please.
	header("Auto-Submitted", "auto-generated")
	msg.WriteString("\r\n")
	msg.Write(body)
	return msg.Bytes(), nil
}

// body returns the multipart/alternative body of the content with text,
// and its boundary.
func (c content) body(text mailText) ([]byte, string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := writeQPPart(mw, "text/plain; charset=utf-8", func(w *quotedprintable.Writer) error {
		return c.plain.Execute(w, text)
	}); err != nil {
		return nil, "", err
	}
	if err := writeQPPart(mw, "text/html; charset=utf-8", func(w *quotedprintable.Writer) error {
		return c.html.Execute(w, text)
	}); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return body.Bytes(), mw.Boundary(), nil
}

// writeQPPart writes one quoted-printable part of the given type.
func writeQPPart(mw *multipart.Writer, contentType string, write func(*quotedprintable.Writer) error) error {
	pw, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {contentType},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return err
	}
	// Not binary: line breaks in the text become CRLF.
	qw := quotedprintable.NewWriter(pw)
	if err := write(qw); err != nil {
		return err
	}
	return qw.Close()
}

// foldHeader folds a header value at spaces so that no line exceeds 78
// characters where it can be helped (RFC 5322 2.2.3); used, the first line
// already holds used characters. Encoded words and quoted names are split
// only at their spaces, which unfolding restores.
func foldHeader(used int, value string) string {
	const limit = 78
	words := strings.Split(value, " ")
	var b strings.Builder
	n := used
	for i, w := range words {
		if i > 0 {
			if n+1+len(w) > limit {
				b.WriteString("\r\n")
				n = 0
			}
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// describeLifetime says a token lifetime in words: "24 hours", "1 hour",
// "90 minutes", "7 days".
func describeLifetime(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d%(24*time.Hour) == 0 && d > 24*time.Hour:
		return plural(int64(d/(24*time.Hour)), "day")
	case d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	default:
		return plural(int64((d+time.Minute-1)/time.Minute), "minute")
	}
}
