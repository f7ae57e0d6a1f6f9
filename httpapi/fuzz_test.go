package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/identitylib/identity"
)

// FuzzHandler sends arbitrary requests (method, target, Authorization,
// Content-Type and body) and checks that none gets a 5xx, logs an error
// (a recovered panic would), or breaks the response contract.
//
// API keys are random per process, and fuzzing runs in several processes,
// so inputs name keys by placeholder: {all}, {other} (a key of workspace
// "other") or a scope in braces ({users:read}); fuzzRequest substitutes
// this process's keys.
//
//	go test -run '^$' -fuzz FuzzHandler -fuzztime 30s ./httpapi/
func FuzzHandler(f *testing.F) {
	e := newTestEnv(f)
	e.seed(f)
	for _, rc := range routeCases() {
		var body []byte
		if rc.body != nil {
			var err error
			if body, err = json.Marshal(rc.body); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(rc.method, rc.path, "Bearer {all}", "application/json", body)
		f.Add(rc.method, rc.path, "Bearer {"+string(rc.scopes[0])+"}", "application/json; charset=utf-8", body)
		f.Add(rc.method, rc.path, "bearer {users:read}", "text/plain", body)
		f.Add(rc.method, strings.Replace(rc.path, "acme", "other", 1), "Bearer {all}", "application/json", body)
	}
	for _, seed := range []struct {
		method, target, auth, contentType, body string
	}{
		{"GET", "/t/acme/api/v1/openapi.yaml", "", "", ""},
		{"GET", "/t/acme/api/v1/users?search=ad&offset=0&limit=100", "Bearer {all}", "", ""},
		{"GET", "/t/acme/api/v1/webhooks?offset=-1&limit=abc", "Bearer {all}", "", ""},
		{"GET", "/t/acme/api/v1/users/99999999999999999999", "Bearer {all}", "", ""},
		{"PUT", "/t/acme/api/v1/users/1/attributes/a%2Fb%25", "Bearer {all}", "application/json", `{"value":""}`},
		{"PUT", "/t/acme/api/v1/claim-mappers/k", "Bearer {all}", "application/json", `{"claimName":"c","includeInId":null}`},
		{"POST", "/t/acme/api/v1/webhooks", "Bearer {all}", "application/json", `{"url":"https://10.0.0.1","events":["x","user.created","user.created"]}`},
		{"POST", "/t/acme/api/v1/users", "Bearer {all}", "application/json", `{"username":"\u00e9","email":"a@b","fullName":" ","password":"\xff\xfe"}`},
		{"PATCH", "/t/acme/api/v1/users", "", "", ""},
		{"OPTIONS", "*", "", "", ""},
	} {
		f.Add(seed.method, seed.target, seed.auth, seed.contentType, []byte(seed.body))
	}

	f.Fuzz(func(t *testing.T, method, target, auth, contentType string, body []byte) {
		if !sendable(method, target) || !validHeaderValue(auth) || !validHeaderValue(contentType) {
			t.Skip("net/http would not pass this request to a handler")
		}
		e.logs.Reset()
		e.report.use(t)
		defer e.report.use(f)
		var b any
		if len(body) > 0 {
			b = body
		}
		rec := e.do(t, method, target, "", b, "Authorization", withKeys(e, auth), "Content-Type", contentType)
		checkResponse(t, e, method, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes(), rec.Header())
	})
}

// sendable reports whether method and target make a request line that
// net/http parses: the check httptest.NewRequest makes (and panics on).
func sendable(method, target string) bool {
	if method == "" || target == "" {
		return false
	}
	_, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.0\r\n\r\n")))
	return err == nil
}

// validHeaderValue reports whether a value could arrive in a header.
func validHeaderValue(v string) bool {
	return !strings.ContainsAny(v, "\r\n\x00") && strings.TrimSpace(v) == v
}

// withKeys replaces the key placeholders of auth with this process's keys.
func withKeys(e *testEnv, auth string) string {
	auth = strings.ReplaceAll(auth, "{all}", e.allKey)
	auth = strings.ReplaceAll(auth, "{other}", e.otherKey)
	for _, scope := range identity.Scopes() {
		auth = strings.ReplaceAll(auth, "{"+string(scope)+"}", e.keys[scope])
	}
	return auth
}

// checkResponse fails t unless the response keeps the API's contract: no
// 5xx, no error logged, one log line, and errors as problem+json.
func checkResponse(t *testing.T, e *testEnv, method string, status int, contentType string, body []byte, header http.Header) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("status %d; body %s; log %s", status, body, e.logs.String())
	}
	if lines := logLines(e.logs); len(lines) != 1 || strings.Contains(lines[0], "level=ERROR") {
		t.Fatalf("want one log line without an error, got:\n%s", e.logs.String())
	}
	switch {
	case status >= 400 && method != "HEAD":
		var p struct{ Code string }
		if contentType != "application/problem+json" || json.Unmarshal(body, &p) != nil || p.Code == "" {
			t.Fatalf("status %d with %q body %s, want a problem", status, contentType, body)
		}
	case status == 204 && len(body) != 0:
		t.Fatalf("204 with a body %s", body)
	case contentType == "application/json" && !json.Valid(body):
		t.Fatalf("invalid JSON body %s", body)
	}
	if status == 405 && len(header["Allow"]) == 0 {
		t.Fatal("405 without Allow")
	}
	if status == 401 && !strings.HasPrefix(strings.Join(header["Www-Authenticate"], ""), "Bearer") {
		t.Fatal("401 without WWW-Authenticate: Bearer")
	}
}

// FuzzPreconditionHeaders sends arbitrary If-Match, If-None-Match and
// Idempotency-Key values to the routes that read them and checks the
// response contract (the OpenAPI validator checks the rest): no 5xx, no
// error logged, errors as problems.
//
//	go test -run '^$' -fuzz FuzzPreconditionHeaders -fuzztime 30s ./httpapi/
func FuzzPreconditionHeaders(f *testing.F) {
	e := newTestEnv(f)
	e.seed(f)
	u, err := e.ws.GetUser(f.Context(), 1)
	if err != nil {
		f.Fatal(err)
	}
	current := fmt.Sprintf(`"%016x"`, u.Version)
	for _, seed := range []struct {
		route                            uint8
		ifMatch, ifNoneMatch, idempotent string
	}{
		{0, current, "", ""},
		{0, "*", "", ""},
		{1, "", current, ""},
		{1, "W/" + current + `, "x"`, "*", ""},
		{2, "", "*", ""},
		{2, `"0000000000000001"`, "", ""},
		{3, "", "", "key-1"},
		{3, "", "", " \x7f"},
		{4, "", "", strings.Repeat("k", 256)},
		{0, `"unterminated`, "", ""},
		{1, "", `,,, W/"a" ,`, ""},
	} {
		f.Add(seed.route, seed.ifMatch, seed.ifNoneMatch, seed.idempotent)
	}
	routes := []struct {
		method, path string
		body         any
	}{
		{"PUT", "/t/acme/api/v1/users/1", map[string]any{"email": "ada@example.com", "fullName": "Ada"}},
		{"GET", "/t/acme/api/v1/users/1", nil},
		{"PUT", "/t/acme/api/v1/claim-mappers/dept", map[string]any{"claimName": "department"}},
		{"POST", "/t/acme/api/v1/users", map[string]any{"username": "fz", "email": "fz@example.com", "fullName": "F", "password": "correct horse"}},
		{"POST", "/t/acme/api/v1/webhooks", map[string]any{"url": "https://hooks.example.com/f", "events": []string{"user.created"}}},
	}
	f.Fuzz(func(t *testing.T, route uint8, ifMatch, ifNoneMatch, idempotent string) {
		if !validHeaderValue(ifMatch) || !validHeaderValue(ifNoneMatch) || !validHeaderValue(idempotent) {
			t.Skip("net/http would not pass these headers to a handler")
		}
		rt := routes[int(route)%len(routes)]
		e.logs.Reset()
		e.report.use(t)
		defer e.report.use(f)
		rec := e.do(t, rt.method, rt.path, e.allKey, rt.body,
			"If-Match", ifMatch, "If-None-Match", ifNoneMatch, "Idempotency-Key", idempotent)
		checkResponse(t, e, rt.method, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes(), rec.Header())
	})
}
