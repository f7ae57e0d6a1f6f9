package identity

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits. Lengths count Unicode code points, not bytes.
const (
	MaxUsernameLength       = 255
	MaxEmailLength          = 254
	MaxFullNameLength       = 255
	MaxAttributeKeyLength   = 64
	MaxAttributeValueLength = 1024
	MaxClaimNameLength      = 128
	MaxClaimMappers         = 20
	MaxWebhookURLLength     = 2048
	MaxDescriptionLength    = 1024
	MaxAPIKeyNameLength     = 255
	// MinPasswordLength is the floor no workspace policy can go below.
	MinPasswordLength = 4
	// MaxPasswordPolicyLength is the largest MaxLength a policy may set;
	// it bounds the work one login can cause.
	MaxPasswordPolicyLength = 4096
	DefaultPageLimit        = 20
	MaxPageLimit            = 100
	// MaxImportBatch is the most users one ImportUsers call takes.
	MaxImportBatch = 10000
)

// checkText reports whether s is valid UTF-8 of min..max code points, adding
// a problem for field otherwise. It returns false when a problem was added.
func checkText(p *problems, field, s string, min, max int) bool {
	if !checkUTF8(p, field, s) {
		return false
	}
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0 && min > 0:
		p.add(field, RuleRequired, "is required")
		return false
	case n < min:
		p.add(field, RuleMinLength, "must be at least %d characters", min)
		return false
	case n > max:
		p.add(field, RuleMaxLength, "must be at most %d characters", max)
		return false
	}
	return true
}

func checkUTF8(p *problems, field, s string) bool {
	if !utf8.ValidString(s) {
		p.add(field, RuleUTF8, "must be valid UTF-8")
		return false
	}
	return true
}

func checkUsername(p *problems, field, username string) {
	if !checkText(p, field, username, 1, MaxUsernameLength) {
		return
	}
	for _, r := range username {
		if !isUsernameRune(r) {
			p.add(field, RulePattern, "may contain only letters a-z and A-Z, digits, '.', '_' and '-'")
			return
		}
	}
}

func isUsernameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == '-'
}

// checkEmail accepts a plain address as net/mail parses it: no display name,
// no angle brackets, nothing around it.
func checkEmail(p *problems, field, email string) {
	if !checkText(p, field, email, 1, MaxEmailLength) {
		return
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email {
		p.add(field, RuleFormat, "must be a plain email address such as name@example.com")
	}
}

func checkFullName(p *problems, field, fullName string) {
	if !checkText(p, field, fullName, 1, MaxFullNameLength) {
		return
	}
	if strings.TrimSpace(fullName) == "" {
		p.add(field, RuleRequired, "must not be blank")
		return
	}
	if strings.IndexFunc(fullName, isControlOrBidi) >= 0 {
		p.add(field, RuleControlCharacter, "must not contain control characters, bidirectional controls included")
	}
}

// checkDescription adds the problems of a free-text description: at most
// MaxDescriptionLength characters, line breaks and tabs but no other
// control characters.
func checkDescription(p *problems, field, s string) {
	if checkText(p, field, s, 0, MaxDescriptionLength) {
		checkNoControl(p, field, strings.NewReplacer("\n", "", "\t", "").Replace(s))
	}
}

func checkNoControl(p *problems, field, s string) {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		p.add(field, RuleControlCharacter, "must not contain control characters")
	}
}

// isBidiControl reports whether r is a bidirectional control: U+061C,
// U+200E, U+200F, U+202A-U+202E and U+2066-U+2069 (Unicode's Bidi_Control
// property). Invisible, they make a name display other than it reads
// ("Trojan Source"), so names refuse them under RuleControlCharacter.
func isBidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }

// isControlOrBidi reports whether r is a control character (C0, DEL, C1)
// or a bidirectional control.
func isControlOrBidi(r rune) bool { return unicode.IsControl(r) || isBidiControl(r) }

// isNULOrBidi reports whether r is NUL or a bidirectional control: what a
// key or claim name refuses, which may otherwise hold any character.
func isNULOrBidi(r rune) bool { return r == 0 || isBidiControl(r) }

// checkName checks an attribute key or a claim name: valid UTF-8, min..max
// code points, no NUL and no bidirectional control.
func checkName(p *problems, field, name string, min, max int) {
	if checkText(p, field, name, min, max) && strings.IndexFunc(name, isNULOrBidi) >= 0 {
		p.add(field, RuleControlCharacter, "must not contain NUL or bidirectional controls")
	}
}

func checkAttributeKey(p *problems, field, key string) {
	checkName(p, field, key, 1, MaxAttributeKeyLength)
}

func checkClaimName(p *problems, field, name string) {
	checkName(p, field, name, 1, MaxClaimNameLength)
}

// checkAttributeValue: a value is opaque, any valid UTF-8 of 0-1024 code
// points but NUL.
func checkAttributeValue(p *problems, field, value string) {
	if checkText(p, field, value, 0, MaxAttributeValueLength) && strings.IndexByte(value, 0) >= 0 {
		p.add(field, RuleControlCharacter, "must not contain NUL")
	}
}

// Page selects a window of a list: skip Offset items, return at most Limit.
// A nil *Page means offset 0 and limit DefaultPageLimit.
type Page struct {
	// Offset is at least 0.
	Offset int
	// Limit is 1 to MaxPageLimit.
	Limit int
}

// List is one page of a list and the size of the whole list.
type List[T any] struct {
	// Items is the page, never nil.
	Items []T
	// Total counts every item the list holds (all matches, for a search).
	Total int
	// Offset and Limit are those the page was taken with.
	Offset int
	Limit  int
}

func (pg *Page) resolve() (Page, error) {
	if pg == nil {
		return Page{Offset: 0, Limit: DefaultPageLimit}, nil
	}
	var p problems
	if pg.Offset < 0 {
		p.add("offset", RuleRange, "must be 0 or more")
	}
	if pg.Limit < 1 || pg.Limit > MaxPageLimit {
		p.add("limit", RuleRange, "must be between 1 and %d", MaxPageLimit)
	}
	return *pg, p.err("invalid page")
}
