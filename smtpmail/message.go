package smtpmail

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"image/png"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/identitylib/identity"
)

// The errors of a VerificationMail that no attempt can send.
var (
	// ErrUnknownKind is the error of a message whose Kind is none of the
	// kinds this package writes.
	ErrUnknownKind = errors.New("unknown kind of email")
	// ErrNoWorkspace is the error of a message without Workspace: the
	// subject and the text name the workspace, so that a person knows
	// which account the email is about.
	ErrNoWorkspace = errors.New("the email names no workspace")
	// ErrBadAddress is the error of a sender's or recipient's address
	// that is empty or holds a control character or space: written into a
	// header or an SMTP command it could start a line of its own.
	ErrBadAddress = errors.New("bad email address")
	// ErrBadLink is the error of a link that is not an absolute http or
	// https URL without spaces or control characters: the email would
	// lead nowhere, or somewhere a person should not be sent.
	ErrBadLink = errors.New("bad link")
)

// isPermanent reports whether err is one of the errors of a message that
// no attempt can send.
func isPermanent(err error) bool {
	for _, target := range []error{ErrUnknownKind, ErrNoWorkspace, ErrBadAddress, ErrBadLink} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// check returns the error of a message that cannot be written: no
// workspace, a bad address or link.
func check(m identity.VerificationMail, k kind) error {
	if m.Workspace == "" {
		return ErrNoWorkspace
	}
	for _, a := range []struct{ role, address string }{{"sender", m.From.Address}, {"recipient", m.To.Address}} {
		if !goodAddress(a.address) {
			return fmt.Errorf("%w: %s %q", ErrBadAddress, a.role, a.address)
		}
	}
	if !k.linkless && !goodLink(m.Link) {
		return fmt.Errorf("%w: %q", ErrBadLink, m.Link)
	}
	return nil
}

// goodAddress reports whether a is local@domain, both parts non-empty,
// with no control character or space anywhere.
func goodAddress(a string) bool {
	at := strings.LastIndexByte(a, '@')
	return at > 0 && at < len(a)-1 && strings.IndexFunc(a, func(r rune) bool {
		return unicode.IsControl(r) || unicode.IsSpace(r)
	}) < 0
}

// goodLink reports whether link is an absolute http or https URL with a
// host and no control character or space.
func goodLink(link string) bool {
	if strings.IndexFunc(link, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return false
	}
	u, err := url.Parse(link)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// VerificationMessage returns the email m as SMTP sends it (CRLF line
// ends): for m.Kind MailPasswordReset a password reset email, for
// MailVerifyEmail (or no kind) a verification email, for MailTest a test
// email (no link, no expiry: m.Link and m.Lifetime are ignored), and for
// any other kind ErrUnknownKind; without m.Workspace, ErrNoWorkspace; with an
// address that could break a header, ErrBadAddress; with a link that is
// no http(s) URL, ErrBadLink.
//
// Every word is from the message catalogue (internal/i18n) in the
// language of m.Locale, English when the catalogue lacks it. The subject
// and text name m.Workspace; the HTML part's button and link take
// m.Accent (identity.DefaultAccentColor unless it is "#rrggbb"), and its
// header m.Logo, or the workspace's name when there is no logo or it is
// no PNG.
//
// The message is a multipart/alternative of a text/plain and a text/html
// part, both UTF-8 and quoted-printable, holding m.Link and m.Lifetime in
// words. With a logo the HTML part is a multipart/related (RFC 2387) of
// the HTML and the PNG, base64, inline, which the HTML shows by its
// Content-ID (RFC 2392), so that no client fetches anything from a
// server to show it. Names and subject are encoded per RFC 2047; there is
// a Message-ID in the domain of the sender's address, and
// Auto-Submitted: auto-generated.
func VerificationMessage(m identity.VerificationMail) ([]byte, error) {
	k, err := kindOf(m.Kind)
	if err != nil {
		return nil, err
	}
	if err := check(m, k); err != nil {
		return nil, err
	}
	w := wordsOf(m, k)
	messageID, err := newID("", m.From.Address)
	if err != nil {
		return nil, err
	}
	logo, err := inlineLogo(m.Logo, m.From.Address)
	if err != nil {
		return nil, err
	}
	body, boundary, err := messageBody(w, m.Accent, logo)
	if err != nil {
		return nil, err
	}
	var msg bytes.Buffer
	header := func(name, value string) {
		msg.WriteString(name + ": " + foldHeader(len(name)+2, value) + "\r\n")
	}
	header("From", m.From.String())
	header("To", m.To.String())
	header("Subject", encodeHeaderText(w.Subject))
	header("Date", m.Date.Format(time.RFC1123Z))
	header("Message-ID", "<"+messageID+">")
	header("MIME-Version", "1.0")
	header("Content-Language", w.Lang)
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary}))
	// RFC 3834: no vacation replies or other automatic answers, please.
	header("Auto-Submitted", "auto-generated")
	msg.WriteString("\r\n")
	msg.Write(body)
	return msg.Bytes(), nil
}

// newID returns an identifier for a Message-ID or Content-ID (the
// msg-id of RFC 5322 without its angle brackets), unique per call: 128
// random bits after prefix, in the domain of the sender's address.
func newID(prefix, from string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	domain := "localhost"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-1 {
		domain = from[at+1:]
	}
	return prefix + hex.EncodeToString(b) + "@" + domain, nil
}

// inlineImage is an image part of the HTML: the logo.
type inlineImage struct {
	contentID     string
	data          []byte
	width, height int
}

// cidURL is the URL by which the HTML refers to the image (RFC 2392).
func (img *inlineImage) cidURL() string { return "cid:" + url.PathEscape(img.contentID) }

// inlineLogo returns the logo as an image part, or nil when there is none
// or it is no PNG. The library stores logos decoded and encoded anew, so
// a logo that does not decode is a damaged one: the email goes without
// it rather than not at all.
func inlineLogo(logo *identity.Logo, from string) (*inlineImage, error) {
	if logo == nil || len(logo.Data) == 0 {
		return nil, nil
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(logo.Data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, nil
	}
	id, err := newID("logo.", from)
	if err != nil {
		return nil, err
	}
	return &inlineImage{contentID: id, data: logo.Data, width: cfg.Width, height: cfg.Height}, nil
}

// messageBody returns the multipart/alternative body of the words, and
// its boundary: the text part, then the HTML part (with the logo, a
// multipart/related of the HTML and the image).
func messageBody(w words, accent string, logo *inlineImage) ([]byte, string, error) {
	html, err := renderHTML(w, accent, logo)
	if err != nil {
		return nil, "", err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := writeQPPart(mw, "text/plain; charset=utf-8", w.plain()); err != nil {
		return nil, "", err
	}
	if logo == nil {
		err = writeQPPart(mw, "text/html; charset=utf-8", html)
	} else {
		err = writeRelated(mw, html, logo)
	}
	if err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return body.Bytes(), mw.Boundary(), nil
}

// writeRelated writes the HTML and the image as one multipart/related
// part, the HTML first: the root (RFC 2387), which type names. Its
// boundary is another random one; a boundary never occurs in
// quoted-printable or base64 text, which hold no "--" followed by 60 hex
// digits of a random boundary.
func writeRelated(mw *multipart.Writer, html string, img *inlineImage) error {
	var related bytes.Buffer
	rw := multipart.NewWriter(&related)
	if err := writeQPPart(rw, "text/html; charset=utf-8", html); err != nil {
		return err
	}
	if err := writeImagePart(rw, img); err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	pw, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type": {mime.FormatMediaType("multipart/related", map[string]string{"boundary": rw.Boundary(), "type": "text/html"})},
	})
	if err != nil {
		return err
	}
	_, err = pw.Write(related.Bytes())
	return err
}

// base64LineLength is the length of base64 lines (RFC 2045 6.8: at most
// 76 characters).
const base64LineLength = 76

// writeImagePart writes the image as an inline PNG part, base64 in lines
// of base64LineLength characters.
func writeImagePart(mw *multipart.Writer, img *inlineImage) error {
	pw, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {mime.FormatMediaType("image/png", map[string]string{"name": "logo.png"})},
		"Content-Transfer-Encoding": {"base64"},
		"Content-Id":                {"<" + img.contentID + ">"},
		"Content-Disposition":       {mime.FormatMediaType("inline", map[string]string{"filename": "logo.png"})},
	})
	if err != nil {
		return err
	}
	encoded := base64.StdEncoding.EncodeToString(img.data)
	var lines []string
	for len(encoded) > base64LineLength {
		lines = append(lines, encoded[:base64LineLength])
		encoded = encoded[base64LineLength:]
	}
	lines = append(lines, encoded)
	_, err = pw.Write([]byte(strings.Join(lines, "\r\n")))
	return err
}

// writeQPPart writes one quoted-printable part of the given type.
func writeQPPart(mw *multipart.Writer, contentType, text string) error {
	pw, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {contentType},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return err
	}
	// Not binary: line breaks in the text become CRLF.
	qw := quotedprintable.NewWriter(pw)
	if _, err := qw.Write([]byte(text)); err != nil {
		return err
	}
	return qw.Close()
}

// encodeHeaderText returns s as the text of a header (RFC 2047): as it is
// when it is printable ASCII that no reader could take for an encoded
// word, else as base64 encoded words of at most 64 characters, split
// between characters, so that a workspace's name shows as it is written
// whatever it holds.
func encodeHeaderText(s string) string {
	if isPlainHeaderText(s) {
		return s
	}
	// 39 bytes are 52 base64 characters: with "=?utf-8?b?" and "?=", 64,
	// and with "Subject: " the first line stays within 78.
	const chunk = 39
	var words []string
	for s != "" {
		n := min(len(s), chunk)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// isPlainHeaderText reports whether s can stand in a header unencoded:
// printable ASCII and spaces, with nothing that looks like the start of
// an encoded word, and no word too long for foldHeader to keep its line
// within 78 characters.
func isPlainHeaderText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	for _, word := range strings.Split(s, " ") {
		if len(word) > maxPlainHeaderWord {
			return false
		}
	}
	return !strings.Contains(s, "=?")
}

// maxPlainHeaderWord is the longest word a header's text holds
// unencoded: with a space of folding, a line of at most 78 characters.
const maxPlainHeaderWord = 77

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
