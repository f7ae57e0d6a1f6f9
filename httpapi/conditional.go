package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/identitylib/identity"
)

// Conditional requests (RFC 9110, section 13). The version of a user, a
// claim mapper, a role or a group is its strong entity tag: 16 lowercase
// hex digits in quotes. PUT of any of them evaluates If-Match and
// If-None-Match through an identity.Precondition, so the check and the
// write are one transaction; GET of any of them answers a matching
// If-None-Match with 304.

// etag returns the entity tag of a record version: `"%016x"` of it.
func etag(version int64) string {
	if version < 0 {
		return fmt.Sprintf(`"%016x"`, version) // never stored; kept exact anyway
	}
	const digits = "0123456789abcdef"
	var b [18]byte
	b[0], b[17] = '"', '"'
	for i, v := 16, uint64(version); i > 0; i, v = i-1, v>>4 {
		b[i] = digits[v&0xf]
	}
	return string(b[:])
}

// noVersion stands in a precondition for an entity tag that names no
// version (a weak or foreign tag in If-Match): versions are never negative,
// so it matches nothing, as such a tag must.
const noVersion int64 = -1

// entityTag is one element of an If-Match or If-None-Match list.
type entityTag struct {
	weak   bool
	opaque string // between the quotes
}

// version returns the record version the tag names, if it names one.
func (t entityTag) version() (int64, bool) {
	if len(t.opaque) != 16 || strings.ToLower(t.opaque) != t.opaque {
		return 0, false
	}
	v, err := strconv.ParseUint(t.opaque, 16, 63)
	return int64(v), err == nil
}

// conditionHeader is a parsed If-Match or If-None-Match: "*" or a list of
// entity tags (possibly empty).
type conditionHeader struct {
	present bool
	star    bool
	tags    []entityTag
}

// parseCondition parses every field line of the header name in h.
func parseCondition(h http.Header, name string) (conditionHeader, error) {
	values := h.Values(name)
	c := conditionHeader{present: len(values) > 0}
	for _, v := range values {
		for s := v; ; {
			s = strings.TrimLeft(s, " \t,")
			if s == "" {
				break
			}
			var rest string
			if s[0] == '*' {
				c.star, rest = true, s[1:]
			} else {
				tag, r, ok := cutEntityTag(s)
				if !ok {
					return c, malformedCondition(name)
				}
				c.tags, rest = append(c.tags, tag), r
			}
			rest = strings.TrimLeft(rest, " \t")
			if rest != "" && rest[0] != ',' {
				return c, malformedCondition(name)
			}
			s = rest
		}
	}
	if c.star && len(c.tags) > 0 {
		return c, malformedCondition(name) // "*" stands alone
	}
	return c, nil
}

// cutEntityTag reads one entity tag from the start of s.
func cutEntityTag(s string) (entityTag, string, bool) {
	var t entityTag
	if strings.HasPrefix(s, "W/") {
		t.weak, s = true, s[2:]
	}
	if s == "" || s[0] != '"' {
		return t, s, false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return t, s, false
	}
	t.opaque = s[1 : 1+end]
	for i := 0; i < len(t.opaque); i++ {
		if c := t.opaque[i]; c < 0x21 || c == 0x7f {
			return t, s, false
		}
	}
	return t, s[end+2:], true
}

func malformedCondition(name string) error {
	return &problem{Status: http.StatusBadRequest, Code: codeMalformedPrecondition,
		Detail: name + " must be * or a comma-separated list of entity tags"}
}

// preconditionOf turns the If-Match and If-None-Match of a write into the
// library's precondition, nil when there is neither. If-Match compares
// strongly (a weak tag matches nothing); If-None-Match weakly.
func preconditionOf(h http.Header) (*identity.Precondition, error) {
	ifMatch, err := parseCondition(h, "If-Match")
	if err != nil {
		return nil, err
	}
	ifNoneMatch, err := parseCondition(h, "If-None-Match")
	if err != nil {
		return nil, err
	}
	if !ifMatch.present && !ifNoneMatch.present {
		return nil, nil
	}
	p := &identity.Precondition{Exists: ifMatch.star, Absent: ifNoneMatch.star}
	if ifMatch.present && !ifMatch.star {
		p.Versions = []int64{noVersion} // an empty list matches nothing
		for _, t := range ifMatch.tags {
			if v, ok := t.version(); ok && !t.weak {
				p.Versions = append(p.Versions, v)
			}
		}
	}
	for _, t := range ifNoneMatch.tags {
		if v, ok := t.version(); ok {
			p.NotVersions = append(p.NotVersions, v)
		}
	}
	return p, nil
}

// writeVersioned answers a GET of a versioned record, given the request's
// If-None-Match: 304 with the record's ETag when it matches (weakly, or
// "*" for any record), else 200 with the record and its ETag.
func writeVersioned(w http.ResponseWriter, ifNoneMatch conditionHeader, version int64, v any) error {
	w.Header().Set("ETag", etag(version))
	same := ifNoneMatch.star
	for _, t := range ifNoneMatch.tags {
		if tv, ok := t.version(); ok && tv == version {
			same = true
		}
	}
	if !same {
		return writeJSON(w, http.StatusOK, v)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotModified)
	return nil
}
