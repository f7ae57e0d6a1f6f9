package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/store/memstore"
)

// openAPIFile is the document, relative to the package directory (the
// working directory of go test).
const openAPIFile = "openapi.yaml"

// documentPath is the one path of the document that needs no credentials:
// the document itself.
const documentPath = "/t/{slug}/api/v1/openapi.yaml"

// bearerScheme names the document's security scheme.
const bearerScheme = "bearerAuth"

// globalErrorStatuses are the error statuses any request may get, whatever
// its operation documents, when the request itself breaks the document: a
// request the schema rejects may be rejected by the server for any of these
// reasons first (authentication, authorization, an id that names nothing,
// the method, the body's size or media type).
var globalErrorStatuses = []int{
	http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
	http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
}

// problemCodeStatuses maps each Problem code to the statuses it may come
// with (the table of docs/api.md; TestOpenAPIEnums checks that it covers
// every code). The validator is lenient with invalid, which may be a 400 or
// a 422.
var problemCodeStatuses = map[string][]int{
	"invalid":                     {http.StatusBadRequest, http.StatusUnprocessableEntity},
	"not_found":                   {http.StatusNotFound},
	"conflict":                    {http.StatusConflict},
	"reserved_claim":              {http.StatusBadRequest},
	"limit_reached":               {http.StatusConflict},
	"unauthenticated":             {http.StatusUnauthorized},
	"forbidden":                   {http.StatusForbidden},
	"internal":                    {http.StatusInternalServerError},
	"token_invalid":               {http.StatusBadRequest},
	"token_expired":               {http.StatusGone},
	"token_used":                  {http.StatusConflict},
	"unsupported_media_type":      {http.StatusUnsupportedMediaType},
	"malformed_json":              {http.StatusBadRequest},
	"malformed_query":             {http.StatusBadRequest},
	"body_too_large":              {http.StatusRequestEntityTooLarge},
	"method_not_allowed":          {http.StatusMethodNotAllowed},
	"malformed_precondition":      {http.StatusBadRequest},
	"precondition_failed":         {http.StatusPreconditionFailed},
	"idempotency_key_reused":      {http.StatusUnprocessableEntity},
	"idempotency_key_in_use":      {http.StatusConflict},
	"invalid_grant":               {http.StatusBadRequest},
	"login_required":              {http.StatusUnauthorized},
	"locked":                      {http.StatusLocked},
	"mfa_required":                {http.StatusUnauthorized},
	"mfa_enrollment_required":     {http.StatusUnauthorized},
	"passkey_enrollment_required": {http.StatusUnauthorized},
	"rate_limited":                {http.StatusTooManyRequests},
	"email_unverified":            {http.StatusForbidden},
	"confirmation_required":       {http.StatusConflict},
	"unavailable":                 {http.StatusServiceUnavailable},
}

// loadOpenAPI reads openapi.yaml, loads it with kin-openapi and validates
// it, failing the test on any error. It returns the document and its bytes.
func loadOpenAPI(t testing.TB) (*openapi3.T, []byte) {
	t.Helper()
	raw, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatalf("read %s: %v", openAPIFile, err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load %s: %v", openAPIFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate %s: %v", openAPIFile, err)
	}
	return doc, raw
}

// specOperations maps every operation of the API (docs/api.md) to the
// scopes it needs (space separated when several); "" marks the document
// route, which needs none.
var specOperations = map[string]string{
	"GET /t/{slug}/api/v1/users":                              "users:read",
	"POST /t/{slug}/api/v1/users":                             "users:write",
	"GET /t/{slug}/api/v1/users/{userId}":                     "users:read",
	"PUT /t/{slug}/api/v1/users/{userId}":                     "users:write",
	"DELETE /t/{slug}/api/v1/users/{userId}":                  "users:write",
	"POST /t/{slug}/api/v1/users/{userId}/roles/{roleId}":     "users:write",
	"DELETE /t/{slug}/api/v1/users/{userId}/roles/{roleId}":   "users:write",
	"GET /t/{slug}/api/v1/users/{userId}/attributes":          "user_attributes:read",
	"PUT /t/{slug}/api/v1/users/{userId}/attributes/{key}":    "user_attributes:write",
	"DELETE /t/{slug}/api/v1/users/{userId}/attributes/{key}": "user_attributes:write",
	"GET /t/{slug}/api/v1/claim-mappers":                      "claim_mappers:read",
	"PUT /t/{slug}/api/v1/claim-mappers/{attributeKey}":       "claim_mappers:write",
	"DELETE /t/{slug}/api/v1/claim-mappers/{attributeKey}":    "claim_mappers:write",
	"GET /t/{slug}/api/v1/webhooks":                           "webhooks:read",
	"POST /t/{slug}/api/v1/webhooks":                          "webhooks:write",
	"DELETE /t/{slug}/api/v1/webhooks/{endpointId}":           "webhooks:write",
	"GET " + documentPath:                                     "",
	// Further operations: enabling and unlocking a user, resetting its MFA, the
	// claims preview, one mapper.
	"POST /t/{slug}/api/v1/users/{userId}/enable":                 "users:write",
	"POST /t/{slug}/api/v1/users/{userId}/unlock":                 "users:write",
	"DELETE /t/{slug}/api/v1/users/{userId}/mfa":                  "users:write",
	"GET /t/{slug}/api/v1/users/{userId}/passkeys":                "users:read",
	"DELETE /t/{slug}/api/v1/users/{userId}/passkeys/{passkeyId}": "users:write",
	"PUT /t/{slug}/api/v1/users/{userId}/email-verified":          "users:write",
	"GET /t/{slug}/api/v1/users/{userId}/claims":                  "users:read claim_mappers:read",
	"GET /t/{slug}/api/v1/claim-mappers/{attributeKey}":           "claim_mappers:read",
	// Roles and groups; the listings of users through them need users:read
	// too, and GET /groups/{groupId}/roles is the project's addition.
	"GET /t/{slug}/api/v1/users/{userId}/roles":                 "users:read",
	"GET /t/{slug}/api/v1/users/{userId}/groups":                "users:read",
	"GET /t/{slug}/api/v1/roles":                                "roles:read",
	"POST /t/{slug}/api/v1/roles":                               "roles:write",
	"GET /t/{slug}/api/v1/roles/{roleId}":                       "roles:read",
	"PUT /t/{slug}/api/v1/roles/{roleId}":                       "roles:write",
	"DELETE /t/{slug}/api/v1/roles/{roleId}":                    "roles:write",
	"GET /t/{slug}/api/v1/roles/{roleId}/users":                 "roles:read users:read",
	"GET /t/{slug}/api/v1/groups":                               "groups:read",
	"POST /t/{slug}/api/v1/groups":                              "groups:write",
	"GET /t/{slug}/api/v1/groups/{groupId}":                     "groups:read",
	"PUT /t/{slug}/api/v1/groups/{groupId}":                     "groups:write",
	"DELETE /t/{slug}/api/v1/groups/{groupId}":                  "groups:write",
	"GET /t/{slug}/api/v1/groups/{groupId}/members":             "groups:read users:read",
	"PUT /t/{slug}/api/v1/groups/{groupId}/members/{userId}":    "groups:write",
	"DELETE /t/{slug}/api/v1/groups/{groupId}/members/{userId}": "groups:write",
	"GET /t/{slug}/api/v1/groups/{groupId}/roles":               "groups:read",
	"PUT /t/{slug}/api/v1/groups/{groupId}/roles/{roleId}":      "groups:write",
	"DELETE /t/{slug}/api/v1/groups/{groupId}/roles/{roleId}":   "groups:write",
	// OAuth clients, their logos, and the workspace's branding.
	"GET /t/{slug}/api/v1/clients":                    "clients:read",
	"POST /t/{slug}/api/v1/clients":                   "clients:write",
	"GET /t/{slug}/api/v1/clients/{clientId}":         "clients:read",
	"DELETE /t/{slug}/api/v1/clients/{clientId}":      "clients:write",
	"GET /t/{slug}/api/v1/clients/{clientId}/logo":    "clients:read",
	"PUT /t/{slug}/api/v1/clients/{clientId}/logo":    "clients:write",
	"DELETE /t/{slug}/api/v1/clients/{clientId}/logo": "clients:write",
	"GET /t/{slug}/api/v1/branding":                   "branding:read",
	"PUT /t/{slug}/api/v1/branding":                   "branding:write",
	"GET /t/{slug}/api/v1/branding/logo":              "branding:read",
	"PUT /t/{slug}/api/v1/branding/logo":              "branding:write",
	"DELETE /t/{slug}/api/v1/branding/logo":           "branding:write",
	// The audit trail.
	"GET /t/{slug}/api/v1/audit": "audit:read",
}

// init lets the validator read the logo bodies, which are PNG images
// both ways: kin-openapi decodes only the media types it is told of, and
// the schema of a logo is a binary string, which a file decoder gives.
func init() {
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
}

// TestOpenAPIDocument checks that openapi.yaml is a valid OpenAPI 3.0.3
// document holding exactly the operations of the API and the document
// route; that every operation but the document route requires a bearer key
// and names its scopes (x-required-scope and description); that
// each such operation documents 401 (with WWW-Authenticate) and 403; that
// operations with a body document 400, 413, 415 and 422 and operations with
// an id in the path 404; and that every error response is a Problem.
func TestOpenAPIDocument(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "{base_url}" || doc.Servers[0].Variables["base_url"] == nil {
		t.Errorf("servers: want one entry {base_url} with a base_url variable")
	}
	scheme := doc.Components.SecuritySchemes[bearerScheme]
	if scheme == nil || scheme.Value.Type != "http" || !strings.EqualFold(scheme.Value.Scheme, "bearer") {
		t.Fatalf("components.securitySchemes.%s must be an http bearer scheme", bearerScheme)
	}
	seen := map[string]bool{}
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			name := method + " " + path
			seen[name] = true
			scope, known := specOperations[name]
			if !known {
				t.Errorf("%s: not an operation of the API", name)
				continue
			}
			checkErrorResponses(t, name, op)
			if scope == "" {
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s: want security: [] (no authentication)", name)
				}
				continue
			}
			if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0][bearerScheme] == nil {
				t.Errorf("%s: want security [{%s: []}]", name, bearerScheme)
			}
			if got, _ := op.Extensions["x-required-scope"].(string); got != scope {
				t.Errorf("%s: x-required-scope = %q, want %q", name, got, scope)
			}
			for _, s := range strings.Fields(scope) {
				if !strings.Contains(op.Description, "Required scope: ") || !strings.Contains(op.Description, "`"+s+"`") {
					t.Errorf("%s: the description does not name the scope %s", name, s)
				}
			}
			want := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError}
			if op.RequestBody != nil {
				want = append(want, http.StatusBadRequest, http.StatusRequestEntityTooLarge,
					http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)
			}
			if strings.Contains(path, "Id}") {
				want = append(want, http.StatusNotFound)
			}
			for _, status := range want {
				if op.Responses.Status(status) == nil {
					t.Errorf("%s: no %d response", name, status)
				}
			}
			if r := op.Responses.Status(http.StatusUnauthorized); r != nil {
				if h := r.Value.Headers["WWW-Authenticate"]; h == nil || !h.Value.Required {
					t.Errorf("%s: the 401 response lacks a required WWW-Authenticate", name)
				}
			}
		}
	}
	for name := range specOperations {
		if !seen[name] {
			t.Errorf("%s: missing", name)
		}
	}
}

// checkErrorResponses checks that each 4xx and 5xx response of op is an
// application/problem+json Problem and nothing else.
func checkErrorResponses(t *testing.T, name string, op *openapi3.Operation) {
	t.Helper()
	for code, ref := range op.Responses.Map() {
		if code < "4" {
			continue
		}
		content := ref.Value.Content
		mt := content.Get("application/problem+json")
		if len(content) != 1 || mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Problem" {
			t.Errorf("%s: the %s response must be application/problem+json with the Problem schema", name, code)
		}
	}
}

// errorfer is the part of testing.TB the validator reports through, so
// that its self-test can pass a recorder.
type errorfer interface {
	Errorf(format string, args ...any)
	Helper()
}

// openAPIValidator returns test middleware that checks every request and
// response passing through against openapi.yaml and reports each mismatch
// with t.Errorf. See newOpenAPIValidator.
func openAPIValidator(t testing.TB, report errorfer) func(http.Handler) http.Handler {
	t.Helper()
	doc, raw := loadOpenAPI(t)
	v, err := newOpenAPIValidator(doc, raw, report)
	if err != nil {
		t.Fatalf("openapi validator: %v", err)
	}
	return v.middleware
}

// reporter passes the validator's reports to the test now running. A fuzz
// target builds its environment once, with the *testing.F, but must report
// each input's failure through that input's *testing.T.
type reporter struct {
	mu sync.Mutex
	t  errorfer
}

// use makes t the test that receives the reports from now on.
func (r *reporter) use(t errorfer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t = t
}

func (r *reporter) current() errorfer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.t
}

// Errorf reports to the current test.
func (r *reporter) Errorf(format string, args ...any) { r.current().Errorf(format, args...) }

// Helper marks the caller as a helper of the current test.
func (r *reporter) Helper() { r.current().Helper() }

// oasValidator validates traffic against the document. It is safe for
// concurrent use: after construction it only reads its fields, and it
// reports through an errorfer, whose Errorf testing.TB allows from any
// goroutine.
type oasValidator struct {
	t      errorfer
	doc    *openapi3.T
	raw    []byte // the document's bytes: what the document route must serve
	router routers.Router
	// options is shared by every validation; kin-openapi only reads it.
	options *openapi3filter.Options
	problem *openapi3.Schema
}

// newOpenAPIValidator returns a validator of doc (whose file holds raw)
// reporting to t.
//
// How it treats requests. The tests send invalid requests on purpose (too
// long claim names, missing fields, wrong JSON types, ids such as "abc"),
// so a request that breaks the document is not an error in itself. Every
// request is validated, and when it is invalid its response must be a 4xx:
// one the operation documents, or one of globalErrorStatuses (401, 403,
// 404, 405, 413, 415), which any request can earn before its operation is
// reached. A 2xx, 3xx or 5xx for an invalid request is reported.
//
// How it treats responses. Every response to a request whose path and method
// the document knows is validated strictly with openapi3filter, the request
// being valid or not: the status must be documented for the operation
// (IncludeResponseStatus), required headers must be present and match,
// and the body must match the schema of its media type (error bodies are
// application/problem+json Problems, whose status member must equal the
// HTTP status and whose code must fit it). A documented response without
// content (204) must have an empty body. A known path with an unknown method
// must get a 405 with an Allow header listing the documented methods and,
// if it has a body, a Problem. Paths the document does not know pass
// through unchecked.
//
// Authentication. A custom AuthenticationFunc records whether the request
// presents a bearer credential and never rejects: whether the key is good is
// the handler's decision. The middleware then requires that a request
// without a credential is never answered 2xx or 403, and is answered 401
// when it is otherwise valid.
//
// Lengths. docs/rules.md counts lengths in code points while JSON Schema
// (and kin-openapi) counts UTF-16 units; a minLength/maxLength failure that
// holds when counted in code points is not treated as a failure.
func newOpenAPIValidator(doc *openapi3.T, raw []byte, t errorfer) (*oasValidator, error) {
	// Route on the path alone: the server URL {base_url} names the
	// deployment's host, which a test server does not have.
	routed := *doc
	routed.Servers = nil
	router, err := gorillamux.NewRouter(&routed)
	if err != nil {
		return nil, err
	}
	problem := doc.Components.Schemas["Problem"]
	if problem == nil || problem.Value == nil {
		return nil, errors.New("the document has no Problem schema")
	}
	options := &openapi3filter.Options{
		MultiError:            true,
		IncludeResponseStatus: true,
		// Never rewrite the request for the handler: the validator works on
		// a copy anyway, and defaults must not hide what the client sent.
		SkipSettingDefaults: true,
		AuthenticationFunc:  authenticationPresent,
	}
	options.WithCustomSchemaErrorFunc(schemaErrorMessage)
	return &oasValidator{t: t, doc: doc, raw: raw, router: router, options: options, problem: problem.Value}, nil
}

// authNote records, per request, whether it presented a bearer credential.
type authNote struct{ present bool }

// authNoteKey is the context key of a request's *authNote.
type authNoteKey struct{}

// authenticationPresent is the AuthenticationFunc of the validator: it
// notes whether the request carries "Authorization: Bearer <token>" for an
// http bearer scheme and never fails, since the handler decides 401.
func authenticationPresent(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	note, _ := ctx.Value(authNoteKey{}).(*authNote)
	if note == nil || in.SecurityScheme == nil || in.SecurityScheme.Type != "http" ||
		!strings.EqualFold(in.SecurityScheme.Scheme, "bearer") {
		return nil
	}
	scheme, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != "" {
		note.present = true
	}
	return nil
}

// schemaErrorMessage writes a schema error on one line: where, what, and
// the offending value (shortened), instead of kin-openapi's dump of the
// whole schema.
func schemaErrorMessage(err *openapi3.SchemaError) string {
	at := "/" + strings.Join(err.JSONPointer(), "/")
	reason := err.Reason
	if err.Origin != nil {
		reason = err.Origin.Error()
	}
	if reason == "" {
		reason = fmt.Sprintf("does not match %q", err.SchemaField)
	}
	value, _ := json.Marshal(err.Value)
	return fmt.Sprintf("at %s: %s (value %s)", at, reason, shorten(string(value), 80))
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// middleware is the http middleware of the validator.
func (v *oasValidator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := v.router.FindRoute(r)
		switch {
		case errors.Is(err, routers.ErrMethodNotAllowed):
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			res := rec.Result()
			v.report(r, res.StatusCode, rec.Body.Bytes(), v.checkMethodNotAllowed(r, res, rec.Body.Bytes()))
			writeThrough(w, res, rec.Body.Bytes())
			return
		case err != nil: // a path the document does not describe
			next.ServeHTTP(w, r)
			return
		}
		// The router hands out path values as sent, percent-escapes
		// included; the handler decodes each once, and so must the checks
		// of their lengths and formats.
		for name, value := range params {
			if decoded, err := url.PathUnescape(value); err == nil {
				params[name] = decoded
			}
		}

		// Buffer the body: the validator reads a copy of the request, the
		// handler gets the bytes as sent.
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			body, err = io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				v.report(r, 0, nil, []string{"reading the request body: " + err.Error()})
			}
			r = r.WithContext(r.Context()) // a shallow copy; the caller's request stays as it was
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		note := &authNote{}
		vreq := r.Clone(context.WithValue(r.Context(), authNoteKey{}, note))
		vreq.Body, vreq.GetBody = http.NoBody, nil
		if body != nil {
			vreq.Body = io.NopCloser(bytes.NewReader(body))
		}
		input := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: v.options}
		reqErr := openapi3filter.ValidateRequest(vreq.Context(), input)
		if reqErr != nil && onlyCodePointLengthArtifacts(reqErr) {
			reqErr = nil
		}

		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		res := rec.Result()
		if r.Context().Err() == nil { // else the client has gone and never sees the response
			v.report(r, res.StatusCode, rec.Body.Bytes(), v.checkResponse(input, reqErr, note, res, rec.Body.Bytes()))
		}
		writeThrough(w, res, rec.Body.Bytes())
	})
}

// writeThrough copies a recorded response to the real writer.
func writeThrough(w http.ResponseWriter, res *http.Response, body []byte) {
	maps.Copy(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	if len(body) > 0 {
		w.Write(body)
	}
}

// report calls Errorf once for the problems found with one exchange.
func (v *oasValidator) report(r *http.Request, status int, body []byte, problems []string) {
	if len(problems) == 0 {
		return
	}
	v.t.Helper()
	v.t.Errorf("openapi: %s %s -> %d:\n\t%s\n\tresponse body: %s",
		r.Method, r.URL.RequestURI(), status, strings.Join(problems, "\n\t"), shorten(string(body), 300))
}

// checkResponse validates the response to a request of a known operation
// and returns what is wrong with it.
func (v *oasValidator) checkResponse(in *openapi3filter.RequestValidationInput, reqErr error, note *authNote,
	res *http.Response, body []byte) []string {
	var problems []string
	status := res.StatusCode
	op := in.Route.Operation
	documented := op.Responses.Status(status) != nil

	if reqErr != nil {
		switch {
		case status < 400 || status > 499:
			problems = append(problems, fmt.Sprintf("the request breaks the document (%v), yet the status is %d; want a documented 4xx", reqErr, status))
		case !documented && slices.Contains(globalErrorStatuses, status):
			// Not the operation's own status, but one any bad request may
			// get: the body must still be a Problem.
			problems = append(problems, v.checkProblem(res, body)...)
			return problems
		}
	}
	secured := op.Security == nil && len(v.doc.Security) > 0 || op.Security != nil && len(*op.Security) > 0
	if secured && !note.present {
		switch {
		case status < 400 || status == http.StatusForbidden:
			problems = append(problems, fmt.Sprintf("a request without a bearer credential got %d; want 401", status))
		case reqErr == nil && status != http.StatusUnauthorized:
			problems = append(problems, fmt.Sprintf("a request without a bearer credential got %d; want 401", status))
		}
	}

	isDocument := in.Route.Path == documentPath
	options := v.options
	if isDocument {
		// The YAML decoder would parse the document into a map, which the
		// string schema rejects; the body is checked below instead.
		o := *v.options
		o.ExcludeResponseBody = true
		options = &o
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 res.Header,
		Options:                options,
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(in.Request.Context(), out); err != nil && !onlyCodePointLengthArtifacts(err) {
		problems = append(problems, err.Error())
	}
	if !documented {
		return problems
	}
	resp := op.Responses.Status(status).Value
	switch {
	case len(resp.Content) == 0 && len(body) > 0:
		problems = append(problems, fmt.Sprintf("the documented %d response has no content, yet the body has %d bytes", status, len(body)))
	case isDocument && status == http.StatusOK:
		problems = append(problems, v.checkDocument(res, body)...)
	case status >= 400:
		problems = append(problems, v.checkProblemStatus(res, body)...)
	}
	return problems
}

// checkDocument checks the document route's answer: the bytes of
// openapi.yaml, as application/yaml.
func (v *oasValidator) checkDocument(res *http.Response, body []byte) []string {
	var problems []string
	if mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err != nil || mt != "application/yaml" {
		problems = append(problems, fmt.Sprintf("the document is served as %q; want application/yaml", res.Header.Get("Content-Type")))
	}
	if !bytes.Equal(body, v.raw) {
		problems = append(problems, fmt.Sprintf("the served document (%d bytes) differs from %s (%d bytes)", len(body), openAPIFile, len(v.raw)))
	}
	return problems
}

// checkMethodNotAllowed checks the answer to a known path with a method it
// does not document: a 405 with Allow listing the documented methods and a
// Problem body. OPTIONS and HEAD may be answered otherwise, but never
// with a 5xx.
func (v *oasValidator) checkMethodNotAllowed(r *http.Request, res *http.Response, body []byte) []string {
	if r.Method == http.MethodOptions || r.Method == http.MethodHead {
		if res.StatusCode >= 500 {
			return []string{fmt.Sprintf("status %d for %s", res.StatusCode, r.Method)}
		}
		return nil
	}
	if res.StatusCode != http.StatusMethodNotAllowed {
		return []string{fmt.Sprintf("the document has no %s operation on this path, yet the status is %d; want 405", r.Method, res.StatusCode)}
	}
	var problems []string
	var documented []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, _, err := v.router.FindRoute(probe); err == nil {
			documented = append(documented, m)
		}
	}
	var allowed []string
	for m := range strings.SplitSeq(res.Header.Get("Allow"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			allowed = append(allowed, m)
		}
	}
	for _, m := range documented {
		if !slices.Contains(allowed, m) {
			problems = append(problems, fmt.Sprintf("Allow %q lacks the documented method %s", res.Header.Get("Allow"), m))
		}
	}
	for _, m := range allowed {
		if !slices.Contains(documented, m) && m != http.MethodOptions && m != http.MethodHead {
			problems = append(problems, fmt.Sprintf("Allow %q names %s, which the document does not have on this path", res.Header.Get("Allow"), m))
		}
	}
	if len(body) > 0 {
		problems = append(problems, v.checkProblem(res, body)...)
	}
	return problems
}

// checkProblem validates an error body against the Problem schema, for a
// status the operation does not document, and checks its status and code.
func (v *oasValidator) checkProblem(res *http.Response, body []byte) []string {
	if mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err != nil || mt != "application/problem+json" {
		return []string{fmt.Sprintf("an error response is %q; want application/problem+json", res.Header.Get("Content-Type"))}
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return []string{"the problem is not JSON: " + err.Error()}
	}
	err := v.problem.VisitJSON(value, openapi3.MultiErrors(), openapi3.VisitAsResponse(),
		openapi3.SetSchemaErrorMessageCustomizer(schemaErrorMessage))
	if err != nil && !onlyCodePointLengthArtifacts(err) {
		return []string{"the body does not match Problem: " + err.Error()}
	}
	return v.checkProblemStatus(res, body)
}

// checkProblemStatus checks that a Problem body's status equals the HTTP
// status and that its code may come with that status. The schema is
// checked elsewhere.
func (v *oasValidator) checkProblemStatus(res *http.Response, body []byte) []string {
	var p struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil // the schema check reports it
	}
	var problems []string
	if p.Status != res.StatusCode {
		problems = append(problems, fmt.Sprintf("the problem's status is %d, the response's %d", p.Status, res.StatusCode))
	}
	if statuses, ok := problemCodeStatuses[p.Code]; ok && !slices.Contains(statuses, res.StatusCode) {
		problems = append(problems, fmt.Sprintf("the problem code %q does not go with status %d (want %v)", p.Code, res.StatusCode, statuses))
	}
	return problems
}

// onlyCodePointLengthArtifacts reports whether every failure in err is a
// minLength or maxLength failure of a string that the limit admits when
// its length is counted in code points, as docs/rules.md counts it.
func onlyCodePointLengthArtifacts(err error) bool {
	leaves := leafErrors(err)
	if len(leaves) == 0 {
		return false
	}
	for _, leaf := range leaves {
		se, ok := leaf.(*openapi3.SchemaError)
		if !ok || se.Schema == nil || (se.SchemaField != "minLength" && se.SchemaField != "maxLength") {
			return false
		}
		s, ok := se.Value.(string)
		if !ok {
			return false
		}
		n := uint64(utf8.RuneCountInString(s))
		if n < se.Schema.MinLength || se.Schema.MaxLength != nil && n > *se.Schema.MaxLength {
			return false
		}
	}
	return true
}

// leafErrors flattens kin-openapi's error tree (multi-errors, request and
// response errors wrapping schema errors) into its leaves.
func leafErrors(err error) []error {
	switch e := err.(type) {
	case nil:
		return nil
	case *openapi3.SchemaError:
		return []error{e}
	case openapi3.MultiError:
		var out []error
		for _, inner := range e {
			out = append(out, leafErrors(inner)...)
		}
		return out
	case *openapi3filter.SecurityRequirementsError:
		return []error{e}
	case interface{ Unwrap() []error }:
		var out []error
		for _, inner := range e.Unwrap() {
			out = append(out, leafErrors(inner)...)
		}
		return out
	case interface{ Unwrap() error }:
		if inner := e.Unwrap(); inner != nil {
			return leafErrors(inner)
		}
	}
	return []error{err}
}

// errorRecorder is an errorfer that keeps what is reported, for the
// validator's self-test.
type errorRecorder struct {
	mu   sync.Mutex
	msgs []string
}

// Errorf records one report.
func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// Helper does nothing; it completes errorfer.
func (r *errorRecorder) Helper() {}

// reports returns a copy of what was reported.
func (r *errorRecorder) reports() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// fakeResponse is a canned response of a fake handler.
type fakeResponse struct {
	status int
	header map[string]string
	body   string
	ctype  string // Content-Type; "" sets none
}

// serve writes the canned response.
func (f fakeResponse) serve(w http.ResponseWriter, _ *http.Request) {
	for k, v := range f.header {
		w.Header().Set(k, v)
	}
	if f.ctype != "" {
		w.Header().Set("Content-Type", f.ctype)
	}
	w.WriteHeader(f.status)
	io.WriteString(w, f.body)
}

// Canned bodies for the self-test.
const (
	fakeUser = `{"id":1,"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace",` +
		`"emailVerified":false,"enabled":true,"mfaEnabled":false,` +
		`"createdAt":"2025-01-02T03:04:05.123456Z","updatedAt":"2025-01-02T03:04:05Z"}`
	fakeProblem404 = `{"type":"about:blank","title":"Not Found","status":404,"detail":"user 1 not found","code":"not_found"}`
	fakeProblem422 = `{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"invalid claim mapper",` +
		`"code":"invalid","errors":[{"field":"claimName","rule":"max_length","message":"must be at most 128 characters"}]}`
	fakeProblem401 = `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"invalid api key","code":"unauthenticated"}`
	fakeProblem405 = `{"type":"about:blank","title":"Method Not Allowed","status":405,"detail":"no","code":"method_not_allowed"}`
	fakeSecret     = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	fakeKey        = "Bearer idk_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// fakeAuditPage is a canned page of the audit trail.
const fakeAuditPage = `{"records":[{"id":"000632a1b2c3d4e5f001122334455667","time":"2026-03-01T12:00:00.000001Z",` +
	`"workspace":"acme","actor":{"kind":"api_key","id":"k1","display":"provisioner"},"action":"user.attribute.set",` +
	`"target":{"kind":"user","id":"1","display":"ada"},"outcome":"success",` +
	`"request":{"address":"192.0.2.1","userAgent":"curl/8","requestId":"r-1"},` +
	`"changes":{"attributes.dept":{"before":"eng","after":"ops"}}}],"hasMore":true,"nextCursor":"000632a1b2c3d4e5f001122334455667"}`

// fakeETag is the ETag header of a canned versioned response.
var fakeETag = map[string]string{"ETag": `"00000000000000ff"`}

// TestOpenAPIValidatorCatchesDrift runs the validator over fake handlers:
// it must report responses that break the document and let conforming
// exchanges, deliberately invalid requests answered as documented
// included, pass without a report.
func TestOpenAPIValidatorCatchesDrift(t *testing.T) {
	doc, raw := loadOpenAPI(t)
	const u = "/t/acme/api/v1"
	long := strings.Repeat("x", 129)
	emoji := strings.Repeat("😀", 128) // 128 code points, 256 UTF-16 units
	tests := []struct {
		name      string
		method    string
		path      string
		body      string
		ctype     string
		noAuth    bool
		response  fakeResponse
		wantError string // "" means no report
	}{
		{
			name: "conforming user", method: "GET", path: u + "/users/1",
			response: fakeResponse{status: 200, ctype: "application/json", body: fakeUser, header: fakeETag},
		},
		{
			name: "conforming audit page", method: "GET", path: u + "/audit?actor=api_key:k1&limit=1",
			response: fakeResponse{status: 200, ctype: "application/json", body: fakeAuditPage},
		},
		{
			name: "audit record of an action outside the catalogue", method: "GET", path: u + "/audit",
			response:  fakeResponse{status: 200, ctype: "application/json", body: strings.Replace(fakeAuditPage, `"user.attribute.set"`, `"user.renamed"`, 1)},
			wantError: "action",
		},
		{
			name: "audit page without hasMore", method: "GET", path: u + "/audit",
			response:  fakeResponse{status: 200, ctype: "application/json", body: strings.Replace(fakeAuditPage, `"hasMore":true,`, "", 1)},
			wantError: "hasMore",
		},
		{
			name: "user without username", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 200, ctype: "application/json", body: strings.Replace(fakeUser, `"username":"ada",`, "", 1), header: fakeETag},
			wantError: "username",
		},
		{
			name: "user without ETag", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 200, ctype: "application/json", body: fakeUser},
			wantError: "ETag",
		},
		{
			name: "weak ETag", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 200, ctype: "application/json", body: fakeUser, header: map[string]string{"ETag": `W/"00000000000000ff"`}},
			wantError: "ETag",
		},
		{
			name: "304 with ETag", method: "GET", path: u + "/users/1",
			response: fakeResponse{status: 304, header: fakeETag},
		},
		{
			name: "412 on PUT user", method: "PUT", path: u + "/users/1", ctype: "application/json",
			body: `{"email":"ada@example.com","fullName":"Ada"}`,
			response: fakeResponse{status: 412, ctype: "application/problem+json",
				body: `{"type":"about:blank","title":"Precondition Failed","status":412,"detail":"x","code":"precondition_failed"}`},
		},
		{
			name: "412 on DELETE user", method: "DELETE", path: u + "/users/1",
			response: fakeResponse{status: 412, ctype: "application/problem+json",
				body: `{"type":"about:blank","title":"Precondition Failed","status":412,"detail":"x","code":"precondition_failed"}`},
			wantError: "status is not supported",
		},
		{
			name: "claims preview", method: "GET", path: u + "/users/1/claims?token=id",
			response: fakeResponse{status: 200, ctype: "application/json", body: `{"claims":{"dept":"eng"}}`},
		},
		{
			name: "claims preview without token answered 200", method: "GET", path: u + "/users/1/claims",
			response:  fakeResponse{status: 200, ctype: "application/json", body: `{"claims":{}}`},
			wantError: "want a documented 4xx",
		},
		{
			name: "user with an extra member", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 200, ctype: "application/json", body: strings.Replace(fakeUser, `{`, `{"password":"x",`, 1), header: fakeETag},
			wantError: "password",
		},
		{
			name: "timestamp not RFC 3339", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 200, ctype: "application/json", body: strings.Replace(fakeUser, "2025-01-02T03:04:05Z", "2025-01-02 03:04:05", 1), header: fakeETag},
			wantError: "updatedAt",
		},
		{
			name: "201 where 204 is documented", method: "DELETE", path: u + "/users/1",
			response:  fakeResponse{status: 201, ctype: "application/json", body: fakeUser},
			wantError: "status is not supported",
		},
		{
			name: "204 with a body", method: "DELETE", path: u + "/users/1",
			response:  fakeResponse{status: 204, body: "{}"},
			wantError: "no content",
		},
		{
			name: "204", method: "DELETE", path: u + "/users/1",
			response: fakeResponse{status: 204},
		},
		{
			name: "201 without Location", method: "POST", path: u + "/users", ctype: "application/json",
			body:      `{"username":"ada","email":"ada@example.com","fullName":"Ada","password":"secret-password"}`,
			response:  fakeResponse{status: 201, ctype: "application/json", body: fakeUser, header: fakeETag},
			wantError: "Location",
		},
		{
			name: "201 with Location", method: "POST", path: u + "/users", ctype: "application/json",
			body:     `{"username":"ada","email":"ada@example.com","fullName":"Ada","password":"secret-password"}`,
			response: fakeResponse{status: 201, ctype: "application/json", body: fakeUser, header: map[string]string{"Location": u + "/users/1", "ETag": fakeETag["ETag"]}},
		},
		{
			name: "error as application/json", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 404, ctype: "application/json", body: fakeProblem404},
			wantError: "Content-Type",
		},
		{
			name: "problem status differs from the response's", method: "GET", path: u + "/users/2",
			response:  fakeResponse{status: 404, ctype: "application/problem+json", body: strings.Replace(fakeProblem404, `"status":404`, `"status":400`, 1)},
			wantError: "the problem's status is 400",
		},
		{
			name: "problem code does not fit the status", method: "GET", path: u + "/users/2",
			response:  fakeResponse{status: 404, ctype: "application/problem+json", body: strings.Replace(fakeProblem404, `"not_found"`, `"conflict"`, 1)},
			wantError: `code "conflict"`,
		},
		{
			name: "problem with an unknown code", method: "GET", path: u + "/users/2",
			response:  fakeResponse{status: 404, ctype: "application/problem+json", body: strings.Replace(fakeProblem404, `"not_found"`, `"nope"`, 1)},
			wantError: "code",
		},
		{
			name: "401 without WWW-Authenticate", method: "GET", path: u + "/users/1",
			response:  fakeResponse{status: 401, ctype: "application/problem+json", body: fakeProblem401},
			wantError: "WWW-Authenticate",
		},
		{
			name: "no credential answered 200", method: "GET", path: u + "/users/1", noAuth: true,
			response:  fakeResponse{status: 200, ctype: "application/json", body: fakeUser, header: fakeETag},
			wantError: "without a bearer credential",
		},
		{
			name: "no credential answered 401", method: "GET", path: u + "/users/1", noAuth: true,
			response: fakeResponse{status: 401, ctype: "application/problem+json", body: fakeProblem401, header: map[string]string{"WWW-Authenticate": "Bearer"}},
		},
		{
			name: "bad id answered 200", method: "GET", path: u + "/users/abc",
			response:  fakeResponse{status: 200, ctype: "application/json", body: fakeUser, header: fakeETag},
			wantError: "want a documented 4xx",
		},
		{
			name: "bad id answered 404", method: "GET", path: u + "/users/abc",
			response: fakeResponse{status: 404, ctype: "application/problem+json", body: fakeProblem404},
		},
		{
			name: "claim name too long answered 422", method: "PUT", path: u + "/claim-mappers/dept", ctype: "application/json",
			body:     `{"claimName":"` + long + `"}`,
			response: fakeResponse{status: 422, ctype: "application/problem+json", body: fakeProblem422},
		},
		{
			name: "claim name too long answered 204", method: "PUT", path: u + "/claim-mappers/dept", ctype: "application/json",
			body:      `{"claimName":"` + long + `"}`,
			response:  fakeResponse{status: 204},
			wantError: "want a documented 4xx",
		},
		{
			name: "claim name of 128 code points answered 204", method: "PUT", path: u + "/claim-mappers/dept", ctype: "application/json",
			body:     `{"claimName":"` + emoji + `"}`,
			response: fakeResponse{status: 204, header: fakeETag},
		},
		{
			name: "wrong media type answered 415 (undocumented on GET, allowed for a bad request)", method: "GET",
			path: u + "/users?limit=abc",
			response: fakeResponse{status: 415, ctype: "application/problem+json",
				body: `{"type":"about:blank","title":"Unsupported Media Type","status":415,"detail":"x","code":"unsupported_media_type"}`},
		},
		{
			name: "valid request answered with an undocumented 404", method: "GET", path: u + "/users",
			response:  fakeResponse{status: 404, ctype: "application/problem+json", body: fakeProblem404},
			wantError: "status is not supported",
		},
		{
			name: "page out of range answered 422", method: "GET", path: u + "/webhooks?limit=101",
			response: fakeResponse{status: 422, ctype: "application/problem+json",
				body: `{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"invalid page","code":"invalid"}`},
		},
		{
			name: "webhook created", method: "POST", path: u + "/webhooks", ctype: "application/json",
			body: `{"url":"https://hooks.example.com/x","events":["user.created"]}`,
			response: fakeResponse{status: 201, ctype: "application/json", header: map[string]string{"Location": u + "/webhooks/3"},
				body: `{"endpoint":{"id":3,"url":"https://hooks.example.com/x","description":"","events":["user.created"],` +
					`"enabled":true,"createdAt":"2025-01-02T03:04:05Z"},"secret":"` + fakeSecret + `"}`},
		},
		{
			name: "webhook with null events", method: "GET", path: u + "/webhooks",
			response: fakeResponse{status: 200, ctype: "application/json",
				body: `{"data":[{"id":3,"url":"https://hooks.example.com/x","description":"","events":null,` +
					`"enabled":true,"createdAt":"2025-01-02T03:04:05Z"}],"meta":{"total":1,"offset":0,"limit":20}}`},
			wantError: "events",
		},
		{
			name: "null attributes", method: "GET", path: u + "/users/1/attributes",
			response:  fakeResponse{status: 200, ctype: "application/json", body: `{"attributes":null}`},
			wantError: "attributes",
		},
		{
			name: "405 with Allow", method: "PATCH", path: u + "/users/1",
			response: fakeResponse{status: 405, ctype: "application/problem+json", body: fakeProblem405,
				header: map[string]string{"Allow": "GET, PUT, DELETE, OPTIONS"}},
		},
		{
			name: "405 without Allow", method: "PATCH", path: u + "/users/1",
			response:  fakeResponse{status: 405, ctype: "application/problem+json", body: fakeProblem405},
			wantError: "Allow",
		},
		{
			name: "unknown method answered 200", method: "PATCH", path: u + "/users/1",
			response:  fakeResponse{status: 200, ctype: "application/json", body: fakeUser, header: fakeETag},
			wantError: "want 405",
		},
		{
			name: "path outside the document passes", method: "GET", path: "/elsewhere",
			response: fakeResponse{status: 200, ctype: "text/html", body: "<p>hi</p>"},
		},
		{
			name: "the document", method: "GET", path: u + "/openapi.yaml", noAuth: true,
			response: fakeResponse{status: 200, ctype: "application/yaml", body: string(raw)},
		},
		{
			name: "the document as JSON", method: "GET", path: u + "/openapi.yaml", noAuth: true,
			response:  fakeResponse{status: 200, ctype: "application/json", body: `{"openapi":"3.0.3"}`},
			wantError: "application/yaml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &errorRecorder{}
			v, err := newOpenAPIValidator(doc, raw, rec)
			if err != nil {
				t.Fatal(err)
			}
			var seenBody string
			h := v.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				seenBody = string(b)
				tt.response.serve(w, r)
			}))
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			if !tt.noAuth {
				req.Header.Set("Authorization", fakeKey)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)

			if seenBody != tt.body {
				t.Errorf("the handler read body %q, want %q", seenBody, tt.body)
			}
			if w.Code != tt.response.status || w.Body.String() != tt.response.body {
				t.Errorf("the client got %d %q, want %d %q", w.Code, w.Body.String(), tt.response.status, tt.response.body)
			}
			reports := rec.reports()
			for _, r := range reports {
				t.Logf("reported: %s", r)
			}
			switch {
			case tt.wantError == "" && len(reports) > 0:
				t.Errorf("unexpected report:\n%s", strings.Join(reports, "\n"))
			case tt.wantError != "" && len(reports) == 0:
				t.Errorf("no report, want one mentioning %q", tt.wantError)
			case tt.wantError != "" && !strings.Contains(strings.Join(reports, "\n"), tt.wantError):
				t.Errorf("report does not mention %q:\n%s", tt.wantError, strings.Join(reports, "\n"))
			}
		})
	}

	t.Run("concurrent", func(t *testing.T) {
		rec := &errorRecorder{}
		v, err := newOpenAPIValidator(doc, raw, rec)
		if err != nil {
			t.Fatal(err)
		}
		h := v.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				w.Header().Set("ETag", fakeETag["ETag"])
				w.WriteHeader(http.StatusNoContent)
				return
			}
			fakeResponse{status: 200, ctype: "application/json", body: fakeUser, header: fakeETag}.serve(w, r)
		}))
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				req := httptest.NewRequest("GET", fmt.Sprintf("%s/users/%d", u, i+1), nil)
				if i%2 == 1 {
					req = httptest.NewRequest("PUT", fmt.Sprintf("%s/users/%d/attributes/k%d", u, i, i), strings.NewReader(`{"value":"v"}`))
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set("Authorization", fakeKey)
				h.ServeHTTP(httptest.NewRecorder(), req)
			})
		}
		wg.Wait()
		if reports := rec.reports(); len(reports) > 0 {
			t.Errorf("unexpected reports:\n%s", strings.Join(reports, "\n"))
		}
	})
}

// TestOpenAPIConformanceSmoke drives the real handler through the
// validator: at least one request per operation, successes and errors,
// each answer also checked for its expected status.
func TestOpenAPIConformanceSmoke(t *testing.T) {
	ctx := t.Context()
	svc, err := identity.New(memstore.New(), &identity.Options{
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	createdKey, err := ws.CreateAPIKey(ctx, "", identity.Scopes())
	if err != nil {
		t.Fatal(err)
	}
	key, keyID := createdKey.Secret, createdKey.APIKey.ID
	createdKey, err = ws.CreateAPIKey(ctx, "read", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	readKey := createdKey.Secret
	h := openAPIValidator(t, t)(httpapi.New(svc, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)}))

	const base = "/t/acme/api/v1"
	// do sends one request with the all-scopes key (auth "" sends none) and
	// checks its status; the validator checks the rest.
	do := func(method, path, body string, want int, opts ...func(*http.Request)) *httptest.ResponseRecorder {
		t.Helper()
		var rd io.Reader = http.NoBody
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for _, o := range opts {
			o(req)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("%s %s: status %d, want %d; body %s", method, path, w.Code, want, shorten(w.Body.String(), 300))
		}
		return w
	}
	header := func(k, v string) func(*http.Request) {
		return func(r *http.Request) {
			if v == "" {
				r.Header.Del(k)
			} else {
				r.Header.Set(k, v)
			}
		}
	}
	noAuth := header("Authorization", "")
	idOf := func(w *httptest.ResponseRecorder, pointer ...string) string {
		t.Helper()
		var v any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("decode %s: %v", w.Body.String(), err)
		}
		for _, p := range pointer {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		n, ok := v.(float64)
		if !ok {
			t.Fatalf("no id at %v in %s", pointer, w.Body.String())
		}
		return fmt.Sprint(int64(n))
	}

	// The document.
	do("GET", "/openapi.yaml", "", 200, noAuth)

	// Authentication and authorization.
	do("GET", "/users", "", 401, noAuth)
	do("GET", "/users/999", "", 401, header("Authorization", "Bearer nope"))
	do("POST", "/users", `{}`, 403, header("Authorization", "Bearer "+readKey))
	req := httptest.NewRequest("GET", "/t/other/api/v1/users", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	other := httptest.NewRecorder()
	h.ServeHTTP(other, req)
	if other.Code != 403 {
		t.Errorf("GET /t/other/api/v1/users: status %d, want 403", other.Code)
	}

	// Users.
	const ada = `{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace","password":"analytical engine"}`
	user := idOf(do("POST", "/users", ada, 201), "id")
	do("POST", "/users", `{"username":"grace","email":"grace@example.com","fullName":"Grace Hopper","password":"cobol-cobol"}`, 201)
	do("POST", "/users", ada, 409)
	do("POST", "/users", `{"username":"a b","email":"x","fullName":"","password":"1"}`, 422)
	do("POST", "/users", `{"username":1}`, 422)
	do("POST", "/users", `{"username":`, 400)
	do("POST", "/users", ada, 415, header("Content-Type", "text/plain"))
	do("POST", "/users", `{"fullName":"`+strings.Repeat("x", 1<<20)+`"}`, 413)
	do("GET", "/users", "", 200)
	do("GET", "/users?search=AD&offset=0&limit=5", "", 200)
	do("GET", "/users?offset=1&limit=100", "", 200)
	do("GET", "/users?limit=0", "", 422)
	do("GET", "/users?limit=abc", "", 422)
	do("GET", "/users?offset=-1", "", 422)
	do("GET", "/users?limit=%zz", "", 400)
	do("GET", "/users/"+user, "", 200)
	do("GET", "/users/999", "", 404)
	do("GET", "/users/abc", "", 404)
	do("GET", "/users/0", "", 404)
	do("PUT", "/users/"+user, `{"email":"ada@lovelace.org","fullName":"Ada, Countess of Lovelace"}`, 200)
	do("PUT", "/users/"+user, `{"email":"grace@example.com","fullName":"Ada"}`, 409)
	do("PUT", "/users/"+user, `{"email":"ada@lovelace.org"}`, 422)
	do("PUT", "/users/999", `{"email":"x@example.com","fullName":"X"}`, 404)
	role := idOf(do("POST", "/roles", `{"name":"editor"}`, 201), "id")
	do("POST", "/users/"+user+"/roles/"+role, "", 204)
	do("POST", "/users/"+user+"/roles/"+role, "", 204)
	do("DELETE", "/users/"+user+"/roles/"+role, "", 204)
	do("DELETE", "/users/"+user+"/roles/"+role, "", 404)
	do("POST", "/users/"+user+"/roles/999", "", 404)
	do("POST", "/users/999/roles/"+role, "", 404)
	do("POST", "/users/"+user+"/roles/x", "", 404)
	do("PATCH", "/users/"+user, `{}`, 405)

	// Conditional requests and idempotency keys (extensions).
	tag := do("GET", "/users/"+user, "", 200).Header().Get("ETag")
	do("GET", "/users/"+user, "", 304, header("If-None-Match", tag))
	do("GET", "/users/"+user, "", 400, header("If-None-Match", "nonsense"))
	const update = `{"email":"ada@lovelace.org","fullName":"Ada Lovelace"}`
	newTag := do("PUT", "/users/"+user, update, 200, header("If-Match", tag)).Header().Get("ETag")
	do("PUT", "/users/"+user, update, 412, header("If-Match", tag))
	do("PUT", "/users/"+user, update, 400, header("If-Match", "tag"))
	do("PUT", "/users/"+user, update, 200, header("If-Match", newTag))
	const lin = `{"username":"lin","email":"lin@example.com","fullName":"Lin","password":"correct horse"}`
	do("POST", "/users", lin, 201, header("Idempotency-Key", "create-lin"))
	do("POST", "/users", lin, 201, header("Idempotency-Key", "create-lin"))
	do("POST", "/users", ada, 422, header("Idempotency-Key", "create-lin"))
	do("POST", "/users", lin, 422, header("Idempotency-Key", strings.Repeat("k", 256)))
	do("POST", "/users/"+user+"/enable", "", 204)
	do("POST", "/users/999/enable", "", 404)
	do("POST", "/users/"+user+"/unlock", "", 204)
	do("POST", "/users/999/unlock", "", 404)
	do("DELETE", "/users/"+user+"/mfa", "", 204)
	do("DELETE", "/users/999/mfa", "", 404)
	do("GET", "/users/"+user+"/claims?token=access", "", 200)
	do("GET", "/users/"+user+"/claims?token=id", "", 200)
	do("GET", "/users/"+user+"/claims", "", 422)
	do("GET", "/users/"+user+"/claims?token=refresh", "", 422)
	do("GET", "/users/999/claims?token=id", "", 404)

	// Attributes.
	do("GET", "/users/"+user+"/attributes", "", 200)
	do("PUT", "/users/"+user+"/attributes/dept", `{"value":"mathematics"}`, 204)
	do("PUT", "/users/"+user+"/attributes/empty", `{"value":""}`, 204)
	do("GET", "/users/"+user+"/attributes", "", 200)
	do("PUT", "/users/"+user+"/attributes/dept", `{"value":"`+strings.Repeat("v", 1025)+`"}`, 422)
	do("PUT", "/users/"+user+"/attributes/"+strings.Repeat("k", 65), `{"value":"v"}`, 422)
	do("PUT", "/users/"+user+"/attributes/dept", `{}`, 422)
	do("PUT", "/users/999/attributes/dept", `{"value":"v"}`, 404)
	do("DELETE", "/users/"+user+"/attributes/empty", "", 204)
	do("DELETE", "/users/"+user+"/attributes/empty", "", 404)
	userTag := do("GET", "/users/"+user, "", 200).Header().Get("ETag")
	do("PUT", "/users/"+user+"/attributes/tier", `{"value":"gold"}`, 204, header("If-Match", userTag))
	do("PUT", "/users/"+user+"/attributes/tier", `{"value":"gold"}`, 412, header("If-Match", userTag))
	do("PUT", "/users/"+user+"/attributes/tier", `{"value":"gold"}`, 400, header("If-Match", "tag"))
	do("DELETE", "/users/"+user+"/attributes/tier", "", 412, header("If-Match", userTag))
	do("DELETE", "/users/"+user+"/attributes/tier", "", 400, header("If-None-Match", "tag"))
	do("DELETE", "/users/"+user+"/attributes/tier", "", 204, header("If-Match", "*"))

	// Claim mappers.
	do("GET", "/claim-mappers", "", 200)
	do("PUT", "/claim-mappers/dept", `{"claimName":"department"}`, 204)
	do("PUT", "/claim-mappers/dept", `{"claimName":"department","includeInAccess":false,"includeInId":true}`, 204)
	do("PUT", "/claim-mappers/tier", `{"claimName":"`+strings.Repeat("😀", 128)+`"}`, 204)
	do("GET", "/claim-mappers", "", 200)
	do("PUT", "/claim-mappers/other", `{"claimName":"department"}`, 409)
	do("PUT", "/claim-mappers/other", `{"claimName":"sub"}`, 400)
	do("PUT", "/claim-mappers/other", `{"claimName":"`+strings.Repeat("c", 129)+`"}`, 422)
	do("PUT", "/claim-mappers/other", `{"claimName":""}`, 422)
	do("PUT", "/claim-mappers/other", `{"includeInId":"yes"}`, 422)
	for i := range 18 {
		do("PUT", fmt.Sprintf("/claim-mappers/k%d", i), fmt.Sprintf(`{"claimName":"c%d"}`, i), 204)
	}
	do("PUT", "/claim-mappers/one-too-many", `{"claimName":"c99"}`, 409)
	do("GET", "/claim-mappers", "", 200)
	mapperTag := do("GET", "/claim-mappers/dept", "", 200).Header().Get("ETag")
	do("GET", "/claim-mappers/dept", "", 304, header("If-None-Match", mapperTag))
	do("GET", "/claim-mappers/nosuch", "", 404)
	do("PUT", "/claim-mappers/dept", `{"claimName":"department"}`, 412, header("If-None-Match", "*"))
	do("PUT", "/claim-mappers/fresh", `{"claimName":"fresh"}`, 412, header("If-Match", "*"))
	do("PUT", "/claim-mappers/dept", `{"claimName":"department"}`, 204, header("If-Match", mapperTag))
	do("PUT", "/claim-mappers/dept", `{"claimName":"department"}`, 400, header("If-Match", "x"))
	do("DELETE", "/claim-mappers/dept", "", 204)
	do("DELETE", "/claim-mappers/dept", "", 404)

	// Webhook endpoints.
	created := do("POST", "/webhooks", `{"url":"https://hooks.example.com/identity","events":["user.created","login.failed"]}`, 201)
	hook := idOf(created, "endpoint", "id")
	do("POST", "/webhooks", `{"url":"https://hooks.example.com/b","description":"second","events":["session.revoked"]}`, 201)
	do("POST", "/webhooks", `{"url":"https://hooks.example.com/c","events":["user.created","nope","also.nope"]}`, 422)
	do("POST", "/webhooks", `{"url":"http://hooks.example.com/c","events":[]}`, 422)
	const hookC = `{"url":"https://hooks.example.com/c","events":["user.created"]}`
	do("POST", "/webhooks", hookC, 201, header("Idempotency-Key", "hook-c"))
	do("POST", "/webhooks", hookC, 201, header("Idempotency-Key", "hook-c"))
	do("POST", "/webhooks", `{"url":"https://hooks.example.com/d","events":["user.created"]}`, 422, header("Idempotency-Key", "hook-c"))
	do("GET", "/webhooks", "", 200)
	do("GET", "/webhooks?offset=1&limit=1", "", 200)
	do("GET", "/webhooks?limit=101", "", 422)
	do("DELETE", "/webhooks/"+hook, "", 204)
	do("DELETE", "/webhooks/"+hook, "", 404)
	do("DELETE", "/webhooks/abc", "", 404)

	// Roles.
	do("GET", "/roles", "", 200)
	do("GET", "/roles?search=ED&offset=0&limit=5", "", 200)
	do("GET", "/roles?limit=101", "", 422)
	do("GET", "/roles?offset=%zz", "", 400)
	do("POST", "/roles", `{"name":"EDITOR"}`, 422)
	do("POST", "/roles", `{"name":"editor"}`, 409)
	do("POST", "/roles", `{"name":1}`, 422)
	do("POST", "/roles", `{"name":`, 400)
	const auditor = `{"name":"auditor","description":"reads the audit trail"}`
	do("POST", "/roles", auditor, 201, header("Idempotency-Key", "role-auditor"))
	do("POST", "/roles", auditor, 201, header("Idempotency-Key", "role-auditor"))
	do("POST", "/roles", `{"name":"other"}`, 422, header("Idempotency-Key", "role-auditor"))
	roleTag := do("GET", "/roles/"+role, "", 200).Header().Get("ETag")
	do("GET", "/roles/"+role, "", 304, header("If-None-Match", roleTag))
	do("GET", "/roles/999", "", 404)
	do("GET", "/roles/0", "", 404)
	do("PUT", "/roles/"+role, `{"name":"editors","description":"edit pages"}`, 200, header("If-Match", roleTag))
	do("PUT", "/roles/"+role, `{"name":"editors"}`, 412, header("If-Match", roleTag))
	do("PUT", "/roles/"+role, `{"name":"auditor"}`, 409)
	do("PUT", "/roles/"+role, `{}`, 422)
	do("PUT", "/roles/999", `{"name":"x"}`, 404)
	do("GET", "/roles/"+role+"/users", "", 200)
	do("GET", "/roles/"+role+"/users?limit=0", "", 422)
	do("GET", "/roles/999/users", "", 404)

	// Groups.
	group := idOf(do("POST", "/groups", `{"name":"staff","description":"everyone"}`, 201), "id")
	do("POST", "/groups", `{"name":"staff"}`, 409)
	do("POST", "/groups", `{"name":"a b"}`, 422)
	do("POST", "/groups", `{"name":"ops"}`, 201, header("Idempotency-Key", "group-ops"))
	do("POST", "/groups", `{"name":"ops"}`, 201, header("Idempotency-Key", "group-ops"))
	do("GET", "/groups", "", 200)
	do("GET", "/groups?search=st&offset=1&limit=1", "", 200)
	do("GET", "/groups?offset=-1", "", 422)
	groupTag := do("GET", "/groups/"+group, "", 200).Header().Get("ETag")
	do("GET", "/groups/"+group, "", 304, header("If-None-Match", groupTag))
	do("GET", "/groups/999", "", 404)
	do("PUT", "/groups/"+group, `{"name":"employees"}`, 200, header("If-Match", groupTag))
	do("PUT", "/groups/"+group, `{"name":"employees"}`, 412, header("If-Match", groupTag))
	do("PUT", "/groups/"+group, `{"name":"ops"}`, 409)
	do("PUT", "/groups/"+group, `{"name":"employees"}`, 400, header("If-None-Match", "x"))
	do("PUT", "/groups/"+group+"/members/"+user, "", 204)
	do("PUT", "/groups/"+group+"/members/"+user, "", 204)
	do("PUT", "/groups/"+group+"/members/999", "", 404)
	do("PUT", "/groups/999/members/"+user, "", 404)
	do("GET", "/groups/"+group+"/members", "", 200)
	do("GET", "/groups/"+group+"/members?limit=x", "", 422)
	do("GET", "/groups/999/members", "", 404)
	do("PUT", "/groups/"+group+"/roles/"+role, "", 204)
	do("PUT", "/groups/"+group+"/roles/"+role, "", 204)
	do("PUT", "/groups/"+group+"/roles/999", "", 404)
	do("GET", "/groups/"+group+"/roles", "", 200)
	do("GET", "/groups/999/roles", "", 404)
	do("POST", "/users/"+user+"/roles/"+role, "", 204)
	do("GET", "/users/"+user+"/roles", "", 200)
	do("GET", "/users/"+user+"/groups", "", 200)
	do("GET", "/users/999/roles", "", 404)
	do("GET", "/users/999/groups", "", 404)
	do("GET", "/roles/"+role+"/users", "", 200)
	do("DELETE", "/groups/"+group+"/roles/"+role, "", 204)
	do("DELETE", "/groups/"+group+"/roles/"+role, "", 404)
	do("DELETE", "/groups/"+group+"/members/"+user, "", 204)
	do("DELETE", "/groups/"+group+"/members/"+user, "", 404)
	do("DELETE", "/groups/"+group, "", 204)
	do("DELETE", "/groups/"+group, "", 404)
	do("DELETE", "/roles/"+role, "", 204)
	do("DELETE", "/roles/"+role, "", 404)
	do("GET", "/users/"+user+"/roles", "", 200)

	// The audit trail.
	do("GET", "/audit", "", 200)
	do("GET", "/audit?actor=api_key:"+keyID+"&target=user:"+user+"&action=user.&outcome=success"+
		"&since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00%2B01:00&limit=5", "", 200)
	next := do("GET", "/audit?actor=api_key:"+keyID+"&limit=1", "", 200)
	var page struct{ NextCursor string }
	if err := json.Unmarshal(next.Body.Bytes(), &page); err != nil || page.NextCursor == "" {
		t.Errorf("audit page %s: no nextCursor (%v)", next.Body.String(), err)
	}
	do("GET", "/audit?actor=api_key:"+keyID+"&limit=1&cursor="+page.NextCursor, "", 200)
	do("GET", "/audit?actor=&action=", "", 200)
	do("GET", "/audit?actor=nobody", "", 422)
	do("GET", "/audit?outcome=maybe&limit=0", "", 422)
	do("GET", "/audit?since=yesterday", "", 422)
	do("GET", "/audit?limit=%zz", "", 400)
	do("GET", "/audit", "", 403, header("Authorization", "Bearer "+readKey))

	// Disabling is idempotent.
	do("DELETE", "/users/"+user, "", 204)
	do("DELETE", "/users/"+user, "", 204)
	do("DELETE", "/users/999", "", 404)
	do("GET", "/users/"+user, "", 200)
}
