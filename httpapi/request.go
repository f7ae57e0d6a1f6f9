package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/identitylib/identity"
	"github.com/julienschmidt/httprouter"
)

// maxBodyBytes bounds a request body: 1 MiB.
const maxBodyBytes = 1 << 20

// maxArrayItems bounds an array of strings in a request body. The
// longest list a request names is a webhook's event types (the catalogue
// has a few dozen), so no valid request comes near it; a longer one is
// refused before its items are decoded, since a megabyte of empty
// strings is 349,000 of them, 5.6 MB as a Go slice and more while it
// grows.
const maxArrayItems = 1000

// authorize reads the bearer key of r and asks the library whether it may
// act in the workspace slug with every one of scopes; it returns the
// workspace and the key, whose id and name the audit trail shows. Nothing
// about the workspace or its data is read before this succeeds.
func (h *handler) authorize(ctx context.Context, r *http.Request, slug string, scopes []identity.Scope) (*identity.Workspace, apiKey, error) {
	secret, ok := bearerToken(r.Header)
	if !ok {
		return nil, apiKey{}, &identity.Error{Code: identity.CodeUnauthenticated, Message: "an Authorization header with a Bearer api key is required"}
	}
	a, err := h.svc.AuthorizeAPIKey(ctx, secret, slug, scopes...)
	if err != nil {
		return nil, apiKey{}, err
	}
	return a.Workspace, apiKey{ID: a.Key.ID, Name: a.Key.Name, secret: secret}, nil
}

// apiKey is the key a request authorized with.
type apiKey struct {
	// ID and Name name the key in the audit trail (identity.APIKey).
	ID, Name string
	// secret is the key as presented.
	secret string
}

// bearerToken returns the credentials of the one Authorization header if its
// scheme is Bearer (in any case, as RFC 9110 has schemes case-insensitive).
func bearerToken(header http.Header) (string, bool) {
	values := header["Authorization"]
	if len(values) != 1 {
		return "", false // absent, or ambiguous
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	return token, token != ""
}

// pathParam returns the decoded value of a path parameter. The router
// matched the escaped path (see routable), whose escapes are all valid, so
// decoding cannot fail; if it did, the raw value would name nothing anyway.
func pathParam(ps httprouter.Params, name string) string {
	raw := ps.ByName(name)
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

// call is what a route function needs of one authorized request.
type call struct {
	r      *http.Request
	ws     *identity.Workspace
	params httprouter.Params
	// key is the request's API key: it keys the fingerprint of an
	// idempotent request and is never logged or stored.
	key string
	// pattern is the route's path pattern, as the log names it.
	pattern string
}

// param returns the decoded path parameter name.
func (c *call) param(name string) string { return pathParam(c.params, name) }

// id returns the path parameter name as an id. Ids are positive decimal
// integers without sign; anything else names no resource, so it is a 404
// (what, e.g. "user", says which resource) rather than a 400.
func (c *call) id(name, what string) (int64, error) {
	s := c.param(name)
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, notFoundID(what)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, notFoundID(what)
	}
	return id, nil
}

func notFoundID(what string) error {
	return &identity.Error{Code: identity.CodeNotFound, Message: what + " not found"}
}

// pageOf reads the offset and limit query parameters. Without either it
// returns nil, the library's default page; an absent one of the two takes
// its default. Values that are not integers are reported here, by name;
// whether integers are in range is the library's rule.
func pageOf(q url.Values) (*identity.Page, error) {
	offset, hasOffset := q["offset"]
	limit, hasLimit := q["limit"]
	if !hasOffset && !hasLimit {
		return nil, nil
	}
	page := &identity.Page{Offset: 0, Limit: identity.DefaultPageLimit}
	var fields []identity.FieldError
	if hasOffset {
		fields = parseIntParam(fields, "offset", offset[0], &page.Offset)
	}
	if hasLimit {
		fields = parseIntParam(fields, "limit", limit[0], &page.Limit)
	}
	if len(fields) > 0 {
		return nil, invalid("invalid page", fields)
	}
	return page, nil
}

// parseIntParam parses s into dst, or appends the problem with it.
func parseIntParam(fields []identity.FieldError, name, s string, dst *int) []identity.FieldError {
	n, err := strconv.Atoi(s)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return append(fields, identity.FieldError{Field: name, Rule: identity.RuleRange, Message: "is out of range"})
	case err != nil:
		return append(fields, identity.FieldError{Field: name, Rule: ruleType, Message: "must be an integer"})
	}
	*dst = n
	return fields
}

// tokenKindOf reads the required query parameter token: exactly "access"
// or "id". Absent is invalid here; any other value the library refuses,
// naming the parameter.
func tokenKindOf(q url.Values) (identity.TokenKind, error) {
	values, ok := q["token"]
	if !ok {
		return 0, invalid("invalid token kind", []identity.FieldError{
			{Field: "token", Rule: identity.RuleRequired, Message: "is required: access or id"},
		})
	}
	switch values[0] {
	case "access":
		return identity.AccessToken, nil
	case "id":
		return identity.IDToken, nil
	}
	return 0, nil
}

// query parses the query string of r, refusing a malformed one (a bad
// escape, a semicolon separator) rather than silently dropping parts of it.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, &problem{Status: http.StatusBadRequest, Code: codeMalformedQuery, Detail: "the query string is malformed"}
	}
	return q, nil
}

// member binds one member of a JSON request object to where its value goes.
type member struct {
	name string
	dst  any // *string, **bool or *[]string
	// required is set only where absence must be told from the zero value,
	// which the library then accepts (an attribute value may be ""). Every
	// other requirement is the library's to check.
	required bool
}

// field binds the optional member name to dst.
func field(name string, dst any) member { return member{name: name, dst: dst} }

// requiredField binds the member name to dst and reports its absence.
func requiredField(name string, dst any) member { return member{name: name, dst: dst, required: true} }

// decodeBody reads r's body as one JSON object and stores the members into
// their destinations. Members are matched by exact name (encoding/json
// alone would also take "USERNAME" for "username"); others are ignored.
// Errors: a Content-Type other than application/json 415, a body over
// maxBodyBytes 413 (refused before reading it when its Content-Length says
// so), malformed JSON or data after the object 400, a body that is not an
// object, a string of invalid UTF-8 anywhere in it, a null or wrongly typed
// member, or a missing required member 422 naming every such member.
func decodeBody(w http.ResponseWriter, r *http.Request, members ...member) error {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	// A declared length over the limit is refused before the body is
	// touched: net/http answers "Expect: 100-continue" with "100 Continue"
	// on the first read, which would invite the client to send it all.
	if r.ContentLength > maxBodyBytes {
		return tooLarge()
	}
	obj, fields, err := readObject(w, r)
	if err != nil {
		return err
	}
	for _, m := range members {
		raw, present := obj[m.name]
		switch {
		case !present && m.required:
			fields = append(fields, identity.FieldError{Field: m.name, Rule: identity.RuleRequired, Message: "is required"})
		case !present:
		case bytes.Equal(raw, []byte("null")):
			fields = append(fields, identity.FieldError{Field: m.name, Rule: ruleType, Message: "must be " + kindOf(m.dst)})
		case isStrings(m.dst) && arrayLonger(raw, maxArrayItems):
			fields = append(fields, identity.FieldError{Field: m.name, Rule: identity.RuleMaxLength, Message: fmt.Sprintf("must hold at most %d items", maxArrayItems)})
		case json.Unmarshal(raw, m.dst) != nil:
			fields = append(fields, identity.FieldError{Field: m.name, Rule: ruleType, Message: "must be " + kindOf(m.dst)})
		}
	}
	if len(fields) > 0 {
		return invalid("invalid request body", fields)
	}
	return nil
}

// isStrings reports whether dst takes an array of strings.
func isStrings(dst any) bool {
	_, ok := dst.(*[]string)
	return ok
}

// arrayLonger reports whether raw, a JSON value, is an array of more than
// max items, reading no further than the item past max. Anything else
// (an object, a string, a malformed array) is left to json.Unmarshal to
// refuse.
func arrayLonger(raw []byte, max int) bool {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('[') {
		return false
	}
	for n := 0; d.More(); n++ {
		if n == max {
			return true
		}
		// A RawMessage skips one item whatever its type.
		var item json.RawMessage
		if err := d.Decode(&item); err != nil {
			return false
		}
	}
	return false
}

// kindOf names the JSON type a destination takes, for messages.
func kindOf(dst any) string {
	switch dst.(type) {
	case *string:
		return "a string"
	case **bool:
		return "a boolean"
	case *[]string:
		return "an array of strings"
	}
	return "of another type"
}

// checkContentType accepts application/json, with no charset or UTF-8
// (RFC 8259 has JSON in UTF-8); a missing header is refused too, as the
// body cannot be taken for JSON on faith.
func checkContentType(value string) error {
	mediaType, params, err := mime.ParseMediaType(value)
	if err == nil && mediaType == "application/json" {
		if charset, ok := params["charset"]; !ok || strings.EqualFold(charset, "utf-8") {
			return nil
		}
	}
	return &problem{Status: http.StatusUnsupportedMediaType, Code: codeUnsupportedMediaType, Detail: "the request body must be application/json (UTF-8)"}
}

// readObject reads the body of r, at most maxBodyBytes, as exactly one JSON
// object. It returns the object's members and a utf8 problem for every
// string of the body (member names included, members the route ignores
// too) that is not valid UTF-8, which encoding/json would silently turn
// into U+FFFD (see utf8Problems); the caller refuses the body with them.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, []identity.FieldError, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, bodyError(err)
	}
	switch err := dec.Decode(&json.RawMessage{}); {
	case err == nil:
		return nil, nil, malformed("the request body holds data after the JSON value")
	case err != io.EOF:
		return nil, nil, bodyError(err)
	}
	fields := utf8Problems(raw)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, nil, invalid("the request body must be a JSON object", append(fields, identity.FieldError{
			Field: "body", Rule: ruleType, Message: "must be a JSON object",
		}))
	}
	return obj, fields, nil
}

// bodyError describes a failure to read the body as JSON.
func bodyError(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return tooLarge()
	}
	if err == io.EOF {
		return malformed("the request body is empty")
	}
	if _, ok := errors.AsType[*json.SyntaxError](err); ok || err == io.ErrUnexpectedEOF {
		return malformed("the request body is not valid JSON: " + err.Error())
	}
	// Reading the body failed (the client went away mid-body, say); the
	// request cannot be served, and the server is not at fault.
	return malformed("the request body could not be read")
}

// tooLarge is the 413 of a body over maxBodyBytes, declared or sent.
func tooLarge() error { return tooLargeFor(maxBodyBytes) }

// tooLargeFor is the 413 of a body over limit bytes, declared or sent.
func tooLargeFor(limit int64) error {
	return &problem{Status: http.StatusRequestEntityTooLarge, Code: codeBodyTooLarge, Detail: fmt.Sprintf("the request body exceeds %d bytes", limit)}
}

func malformed(detail string) error {
	return &problem{Status: http.StatusBadRequest, Code: codeMalformedJSON, Detail: detail}
}

// maxUTF8Problems bounds the utf8 problems listed for one body: a 1 MiB
// body could hold a quarter of a million bad strings.
const maxUTF8Problems = 20

// utf8Problems returns a problem of rule utf8 for every string of the JSON
// value raw that is not valid UTF-8: one holding bytes that are not UTF-8,
// or a \u escape of a UTF-16 surrogate (U+D800 to U+DFFF) that is not the
// high half of a pair followed at once by its low half. encoding/json
// decodes both as U+FFFD without a word, so the raw bytes are checked, at
// most the first maxUTF8Problems strings reported. raw must be valid JSON
// syntax, as a json.Decoder returned it.
//
// The field is the path of the string as FieldError spells fields:
// member names joined by ".", array indexes in brackets ("events[2]",
// "a.b[0].c"), and "body" for the body itself. A member name that is
// not valid UTF-8 cannot be named, so its problem is reported at the
// object holding it ("body" for a member of the body).
func utf8Problems(raw []byte) []identity.FieldError {
	if utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u`)) {
		return nil // the common case: no string can be invalid
	}
	s := &utf8Scan{data: raw, seen: map[string]bool{}}
	s.value(nil)
	return s.fields
}

// utf8Scan walks a syntactically valid JSON value for utf8Problems.
type utf8Scan struct {
	data   []byte
	i      int
	fields []identity.FieldError
	seen   map[string]bool
}

// pathSegment is one step of the path to a value: a member, by its raw
// JSON string, or an array index.
type pathSegment struct {
	member []byte // nil for an index
	index  int
}

// value scans the value at s.i, which path leads to, and moves past it.
func (s *utf8Scan) value(path []pathSegment) {
	s.space()
	if s.i >= len(s.data) {
		return
	}
	switch s.data[s.i] {
	case '{':
		s.i++
		for s.i < len(s.data) {
			s.space()
			switch s.data[s.i] {
			case '}':
				s.i++
				return
			case ',':
				s.i++
				continue
			}
			start := s.i
			if !s.str() {
				s.report(path)
			}
			name := s.data[start:s.i]
			s.space()
			s.i++ // the colon
			s.value(append(path, pathSegment{member: name}))
		}
	case '[':
		s.i++
		for n := 0; s.i < len(s.data); {
			s.space()
			switch s.data[s.i] {
			case ']':
				s.i++
				return
			case ',':
				s.i++
				continue
			}
			s.value(append(path, pathSegment{index: n}))
			n++
		}
	case '"':
		if !s.str() {
			s.report(path)
		}
	default: // a number, true, false or null
		for s.i < len(s.data) && !strings.ContainsRune(",]} \t\r\n", rune(s.data[s.i])) {
			s.i++
		}
	}
}

// space moves past JSON white space.
func (s *utf8Scan) space() {
	for s.i < len(s.data) && strings.ContainsRune(" \t\r\n", rune(s.data[s.i])) {
		s.i++
	}
}

// str moves past the string at s.i and reports whether it is valid UTF-8
// once its escapes are decoded.
func (s *utf8Scan) str() bool {
	valid := true
	s.i++ // the opening quote
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			return valid
		case c == '\\' && s.i+1 < len(s.data) && s.data[s.i+1] == 'u':
			r := s.hex4(s.i + 2)
			s.i += 6
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				valid = false // a low half without its high half
			case r >= 0xD800 && r <= 0xDBFF:
				if low := s.hex4(s.i + 2); s.i+1 < len(s.data) && s.data[s.i] == '\\' && s.data[s.i+1] == 'u' &&
					low >= 0xDC00 && low <= 0xDFFF {
					s.i += 6 // the low half of the pair
				} else {
					valid = false // a high half without its low half
				}
			}
		case c == '\\':
			s.i += 2
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.data[s.i:])
			if r == utf8.RuneError && size == 1 {
				valid = false
			}
			s.i += size
		}
	}
	return valid
}

// hex4 returns the value of the four hex digits at i, or -1 if there are
// not four.
func (s *utf8Scan) hex4(i int) rune {
	if i < 0 || i+4 > len(s.data) {
		return -1
	}
	n, err := strconv.ParseUint(string(s.data[i:i+4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// report adds the problem of the string path leads to, once per path.
func (s *utf8Scan) report(path []pathSegment) {
	if len(s.fields) == maxUTF8Problems {
		return
	}
	field := fieldPath(path)
	if s.seen[field] {
		return
	}
	s.seen[field] = true
	s.fields = append(s.fields, identity.FieldError{Field: field, Rule: identity.RuleUTF8, Message: "must be valid UTF-8"})
}

// fieldPath spells path as FieldError.Field does.
func fieldPath(path []pathSegment) string {
	if len(path) == 0 {
		return "body"
	}
	var b strings.Builder
	for _, seg := range path {
		if seg.member == nil {
			fmt.Fprintf(&b, "[%d]", seg.index)
			continue
		}
		var name string
		json.Unmarshal(seg.member, &name) // valid syntax, so it decodes
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(name)
	}
	return b.String()
}
