package smtpmail

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/i18n"
)

// kind is what differs between the kinds of email: the prefix of their
// messages in the catalogue, and the values of their introduction.
type kind struct {
	prefix    string
	introArgs func(m identity.VerificationMail) []any
	// linkless is a kind without a link: no button, no expiry.
	linkless bool
}

// The kinds of email this package writes.
var (
	verifyEmail = kind{prefix: "mail.verify", introArgs: func(m identity.VerificationMail) []any {
		return []any{m.To.Address, m.Workspace}
	}}
	passwordReset = kind{prefix: "mail.reset", introArgs: func(m identity.VerificationMail) []any {
		return []any{m.Workspace}
	}}
	testEmail = kind{prefix: "mail.test", linkless: true, introArgs: func(m identity.VerificationMail) []any {
		return []any{m.Workspace}
	}}
)

// kindOf returns the kind of an email: a verification email for
// MailVerifyEmail or no kind, a password reset email for
// MailPasswordReset, a test email for MailTest.
func kindOf(k identity.MailKind) (kind, error) {
	switch k {
	case "", identity.MailVerifyEmail:
		return verifyEmail, nil
	case identity.MailPasswordReset:
		return passwordReset, nil
	case identity.MailTest:
		return testEmail, nil
	}
	return kind{}, fmt.Errorf("%w: %q", ErrUnknownKind, k)
}

// words is an email's text in one language with the values filled in:
// what both parts say, each field a paragraph (or the link's label).
type words struct {
	// Lang is the catalogue's locale the words are in.
	Lang      string
	Subject   string
	Workspace string
	Greeting  string
	Intro     string
	Link      string
	// Button labels the link in HTML; CopyLink introduces the link
	// written out, for clients that do not open it.
	Button   string
	CopyLink string
	Expiry   string
	Footer   string
}

// wordsOf returns the words of the email m of the kind, in the language of
// m.Locale: a tag the catalogue has by its primary language ("de-AT" is
// German), else English. Queue.Begin fills Locale from the request that
// asked for the email, so the email speaks the language of the page the
// user was on.
func wordsOf(m identity.VerificationMail, k kind) words {
	p := i18n.For(i18n.Negotiate(m.Locale, ""))
	m.Workspace, m.To.Name = oneLine(m.Workspace), oneLine(m.To.Name)
	w := words{
		Lang:      p.Locale(),
		Subject:   p.T(k.prefix+".subject", m.Workspace),
		Workspace: m.Workspace,
		Greeting:  greeting(p, m.To.Name),
		Intro:     p.T(k.prefix+".intro", k.introArgs(m)...),
		Footer:    p.T("mail.footer", m.Workspace),
	}
	if !k.linkless {
		w.Link, w.Button, w.CopyLink = m.Link, p.T(k.prefix+".button"), p.T("mail.copyLink")
		w.Expiry = p.T(k.prefix+".expiry", describeLifetime(p, m.Lifetime))
	}
	return w
}

// greeting returns the salutation of a user with the name; a user
// without a full name is greeted without one, not as "Hello ,".
func greeting(p i18n.Printer, name string) string {
	if strings.TrimSpace(name) == "" {
		return p.T("mail.greeting.noName")
	}
	return p.T("mail.greeting.name", name)
}

// oneLine returns s with every control character (a line break, a tab)
// made a space. The library refuses them in names, but a program may
// build a VerificationMail of its own: a name must not start a line of
// the text part that looks like the email's own words.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// plainWidth is the length of the text part's lines, words permitting:
// what plain-text readers show without wrapping, with room to quote.
const plainWidth = 72

// plain returns the text part: the paragraphs wrapped, the link alone on
// its line, so that clients that turn addresses into links find all of
// it.
func (w words) plain() string {
	var paragraphs []string
	for _, p := range []string{w.Greeting, w.Intro, w.Link, w.Expiry, w.Footer} {
		if p != "" { // a test email has no link and no expiry
			paragraphs = append(paragraphs, wrap(p, plainWidth))
		}
	}
	return strings.Join(paragraphs, "\n\n") + "\n"
}

// wrap breaks s at spaces into lines of at most width characters; a word
// longer than width (a link, a long address) has a line of its own and is
// never broken.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Split(s, " ") {
		l := utf8.RuneCountInString(word)
		if i > 0 {
			if n+1+l > width {
				b.WriteByte('\n')
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(word)
		n += l
	}
	return b.String()
}

// describeLifetime says a token lifetime in words of p's language: in
// days when it is a whole number of days above one ("7 days"), else in
// hours when whole ("24 hours", "1 hour"), else in minutes, rounded up
// ("90 minutes").
func describeLifetime(p i18n.Printer, d time.Duration) string {
	n, unit := lifetimeUnit(d)
	return p.T("mail.lifetime."+unit+"."+pluralCategory(n), n)
}

// lifetimeUnit returns the lifetime as a count of the unit it is said in.
func lifetimeUnit(d time.Duration) (int64, string) {
	const day = 24 * time.Hour
	switch {
	case d%day == 0 && d > day:
		return int64(d / day), "day"
	case d%time.Hour == 0:
		return int64(d / time.Hour), "hour"
	default:
		return int64((d + time.Minute - 1) / time.Minute), "minute"
	}
}

// pluralCategory returns the CLDR plural category of a whole number n in
// the languages of the catalogue, English and German, which share the
// rule: "one" for 1, "other" for every other number. The catalogue has a
// message for each unit and category ("mail.lifetime.hour.one"); a
// language with more categories (few, many) needs its rule here and its
// keys in every locale.
func pluralCategory(n int64) string {
	if n == 1 {
		return "one"
	}
	return "other"
}
