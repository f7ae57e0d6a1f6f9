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

	"github.com/identitylib/identity"
	"github.com/julienschmidt/httprouter"
)

// maxBodyBytes bounds a request body: 1 MiB.
const maxBodyBytes = 1 << 20

// authorize reads the bearer key of r and asks the library whether it may
// act in the workspace slug with every one of scopes; it returns the
// workspace and the key. Nothing about the workspace or its data is read
// before this succeeds.
func (h *handler) authorize(ctx context.Context, r *http.Request, slug string, scopes []identity.Scope) (*identity.Workspace, string, error) {
	key, ok := bearerToken(r.Header)
	if !ok {
		return nil, "", &identity.Error{Code: identity.CodeUnauthenticated, Message: "an Authorization header with a Bearer api key is required"}
	}
	ws, err := h.svc.Authorize(ctx, key, slug, scopes...)
	return ws, key, err
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
// maxBodyBytes 413, malformed JSON or data after the object 400, a body that
// is not an object, a null or wrongly typed member, or a missing required
// member 422 naming every such member.
func decodeBody(w http.ResponseWriter, r *http.Request, members ...member) error {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	obj, err := readObject(w, r)
	if err != nil {
		return err
	}
	var fields []identity.FieldError
	for _, m := range members {
		raw, present := obj[m.name]
		switch {
		case !present && m.required:
			fields = append(fields, identity.FieldError{Field: m.name, Rule: identity.RuleRequired, Message: "is required"})
		case !present:
		case bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, m.dst) != nil:
			fields = append(fields, identity.FieldError{Field: m.name, Rule: ruleType, Message: "must be " + kindOf(m.dst)})
		}
	}
	if len(fields) > 0 {
		return invalid("invalid request body", fields)
	}
	return nil
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
// object.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, bodyError(err)
	}
	switch err := dec.Decode(&json.RawMessage{}); {
	case err == nil:
		return nil, malformed("the request body holds data after the JSON value")
	case err != io.EOF:
		return nil, bodyError(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, invalid("the request body must be a JSON object", []identity.FieldError{
			{Field: "body", Rule: ruleType, Message: "must be a JSON object"},
		})
	}
	return obj, nil
}

// bodyError describes a failure to read the body as JSON.
func bodyError(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &problem{Status: http.StatusRequestEntityTooLarge, Code: codeBodyTooLarge, Detail: fmt.Sprintf("the request body exceeds %d bytes", maxBodyBytes)}
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

func malformed(detail string) error {
	return &problem{Status: http.StatusBadRequest, Code: codeMalformedJSON, Detail: detail}
}
