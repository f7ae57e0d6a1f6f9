package smtpmail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	htmltemplate "html/template"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
	"time"

	"github.com/identitylib/identity"
)

// verificationSubject is the subject of every verification email.
const verificationSubject = "Verify your email address"

// verificationText is the data of both parts of the message.
type verificationText struct {
	Name, Email, Link, Lifetime string
}

const verificationPlain = `Hello %s,

Please confirm that %s is your email address by opening this link:

%s

The link can be used once and expires in %s. If you did not expect this
email, you can ignore it.
`

// verificationHTML is the HTML part; html/template escapes every value,
// so a user's full name cannot inject markup.
var verificationHTML = htmltemplate.Must(htmltemplate.New("verify").Parse(`<!DOCTYPE html>
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
`))

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

// VerificationMessage returns the verification email m as SMTP sends it
// (CRLF line ends): a multipart/alternative of a text/plain and a
// text/html part, both UTF-8 and quoted-printable, with names and subject
// encoded per RFC 2047, a Message-ID in the domain of the sender's
// address, and Auto-Submitted: auto-generated.
func VerificationMessage(m identity.VerificationMail) ([]byte, error) {
	messageID, err := newMessageID(m.From.Address)
	if err != nil {
		return nil, err
	}
	text := verificationText{
		Name: m.To.Name, Email: m.To.Address, Link: m.Link, Lifetime: describeLifetime(m.Lifetime),
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	plain := fmt.Sprintf(verificationPlain, text.Name, text.Email, text.Link, text.Lifetime)
	if err := writeQPPart(mw, "text/plain; charset=utf-8", func(w *quotedprintable.Writer) error {
		_, err := w.Write([]byte(plain))
		return err
	}); err != nil {
		return nil, err
	}
	if err := writeQPPart(mw, "text/html; charset=utf-8", func(w *quotedprintable.Writer) error {
		return verificationHTML.Execute(w, text)
	}); err != nil {
		return nil, err
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}

	var msg bytes.Buffer
	header := func(name, value string) {
		msg.WriteString(name + ": " + foldHeader(len(name)+2, value) + "\r\n")
	}
	header("From", m.From.String())
	header("To", m.To.String())
	header("Subject", mime.QEncoding.Encode("utf-8", verificationSubject))
	header("Date", m.Date.Format(time.RFC1123Z))
	header("Message-ID", messageID)
	header("MIME-Version", "1.0")
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	// RFC 3834: no vacation replies or other automatic answers, please.
	header("Auto-Submitted", "auto-generated")
	msg.WriteString("\r\n")
	msg.Write(body.Bytes())
	return msg.Bytes(), nil
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
