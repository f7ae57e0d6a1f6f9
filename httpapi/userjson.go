package httpapi

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/identitylib/identity"
)

// Users are the bodies of the hottest reads (GET user, the user list and
// search), so writeJSON writes them without reflection: appendUser and
// appendUserPage append exactly the bytes json.Marshal writes for them
// (TestUserJSON and FuzzAppendJSONString hold them to it, so a field added
// to identity.User fails those tests until it is added here).

// appendUser appends the JSON of u, or reports false when json.Marshal
// would fail on it (a time that RFC 3339 cannot write), leaving the
// answer to json.Marshal.
func appendUser(b []byte, u *identity.User) ([]byte, bool) {
	if !rfc3339(u.CreatedAt) || !rfc3339(u.UpdatedAt) {
		return b, false
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"username":`...)
	b = appendJSONString(b, u.Username)
	b = append(b, `,"email":`...)
	b = appendJSONString(b, u.Email)
	b = append(b, `,"fullName":`...)
	b = appendJSONString(b, u.FullName)
	b = append(b, `,"emailVerified":`...)
	b = strconv.AppendBool(b, u.EmailVerified)
	b = append(b, `,"enabled":`...)
	b = strconv.AppendBool(b, u.Enabled)
	b = append(b, `,"mfaEnabled":`...)
	b = strconv.AppendBool(b, u.MFAEnabled)
	b = append(b, `,"createdAt":"`...)
	b = u.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","updatedAt":"`...)
	b = u.UpdatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...), true
}

// appendUserPage appends the JSON of a page of users, or reports false as
// appendUser does.
func appendUserPage(b []byte, p *pageResponse[identity.User]) ([]byte, bool) {
	b = append(b, `{"data":`...)
	if p.Data == nil {
		b = append(b, "null"...) // never: envelope's Items are never nil
	} else {
		b = append(b, '[')
		for i := range p.Data {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendUser(b, &p.Data[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"meta":{"total":`...)
	b = strconv.AppendInt(b, int64(p.Meta.Total), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(p.Meta.Offset), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(p.Meta.Limit), 10)
	return append(b, "}}"...), true
}

// rfc3339 reports whether time.Time.MarshalJSON writes t, as RFC 3339
// with the nanoseconds of time.RFC3339Nano, rather than fail: a year of
// four digits and a zone offset of less than a day.
func rfc3339(t time.Time) bool {
	_, offset := t.Zone()
	y := t.Year()
	return y >= 0 && y <= 9999 && offset > -24*3600 && offset < 24*3600
}

// appendJSONString appends s as a JSON string the way json.Marshal writes
// one: <, > and & escaped as \u003c, \u003e and \u0026, U+2028 and U+2029
// escaped, control characters as \b \f \n \r \t or \u00XX, and each byte
// of invalid UTF-8 replaced by \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
