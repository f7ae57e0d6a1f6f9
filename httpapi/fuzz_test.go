package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
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
		contentType := "application/json"
		if png, ok := rc.body.(pngBody); ok {
			body, contentType = png, "image/png"
		} else if rc.body != nil {
			var err error
			if body, err = json.Marshal(rc.body); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(rc.method, rc.path, "Bearer {all}", contentType, body)
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
		{"POST", "/t/acme/api/v1/roles", "Bearer {all}", "application/json", `{"name":"A b:\u0000","description":"\u0007\ud800"}`},
		{"POST", "/t/acme/api/v1/groups", "Bearer {groups:write}", "application/json", `{"name":["ops"],"description":{"x":1}}`},
		{"PUT", "/t/acme/api/v1/roles/1", "Bearer {all}", "application/json", `{"name":null}`},
		{"PUT", "/t/acme/api/v1/groups/1", "Bearer {all}", "application/json", `{"name":"viewer","description":""}`},
		{"GET", "/t/acme/api/v1/roles?search=%FF&offset=0&limit=100", "Bearer {roles:read}", "", ""},
		{"GET", "/t/acme/api/v1/groups?search=st%25_&offset=99999999999999999999", "Bearer {all}", "", ""},
		{"GET", "/t/acme/api/v1/roles/1/users?limit=1&offset=1", "Bearer {roles:read}", "", ""},
		{"PUT", "/t/acme/api/v1/groups/1/members/99999999999999999999", "Bearer {all}", "", ""},
		{"PUT", "/t/acme/api/v1/groups/1/roles/2", "Bearer {all}", "application/json", `{"ignored":true}`},
		{"DELETE", "/t/acme/api/v1/groups/1/roles/0", "Bearer {all}", "", ""},
		{"GET", "/t/acme/api/v1/users/1/roles", "Bearer {users:read}", "", ""},
		{"PUT", "/t/acme/api/v1/users/1/email-verified", "Bearer {all}", "application/json", `{"emailVerified":"yes","verified":true}`},
		{"PUT", "/t/acme/api/v1/users/99999999999999999999/email-verified", "Bearer {users:write}", "application/json", `{"emailVerified":false}`},
		{"PUT", "/t/acme/api/v1/users/1/email-verified", "Bearer {all}", "application/json", `{"emailVerified":true,"emailVerified":false}`},
		{"GET", "/t/acme/api/v1/users/1/email-verified", "Bearer {all}", "", ""},
		{"POST", "/t/acme/api/v1/clients", "Bearer {clients:write}", "application/json", `{"redirectUris":["http://[::1]:0/cb","HTTPS://A.example/#"],"grantTypes":["client_credentials","client_credentials"],"public":null}`},
		{"POST", "/t/acme/api/v1/clients", "Bearer {all}", "application/json", `{"name":"\u0000","redirectUris":[],"postLogoutRedirectUris":["x"],"claims":["roles","roles"]}`},
		{"GET", "/t/acme/api/v1/clients/idc_%2F..%2Flogo", "Bearer {clients:read}", "", ""},
		{"GET", "/t/acme/api/v1/clients/{client}/logo", "Bearer {all}", "", ""},
		{"PUT", "/t/acme/api/v1/clients/{client}/logo", "Bearer {all}", "image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"},
		{"PUT", "/t/acme/api/v1/branding/logo", "Bearer {branding:write}", "image/png; charset=utf-8", "GIF89a"},
		{"PUT", "/t/acme/api/v1/branding/logo", "Bearer {all}", "image/PNG", ""},
		{"DELETE", "/t/acme/api/v1/branding/logo", "Bearer {branding:read}", "", ""},
		{"PUT", "/t/acme/api/v1/branding", "Bearer {all}", "application/json", `{"displayName":"","accentColor":"#GGGGGG"}`},
		{"PUT", "/t/acme/api/v1/branding", "Bearer {all}", "application/json", `{"displayName":"\ud800","accentColor":"#000000"}`},
		{"GET", "/t/acme/api/v1/branding", "Bearer {clients:read}", "", ""},
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
// error logged, errors as problems. It also judges the conditions itself
// (readCondition), against the record as it is before the request, and
// checks the answer agrees: 400 for a malformed header, else on a PUT 412
// exactly when a condition does not hold, on a GET 304 exactly when
// If-None-Match matches, and on a POST no trace of either header.
//
//	go test -run '^$' -fuzz FuzzPreconditionHeaders -fuzztime 30s ./httpapi/
func FuzzPreconditionHeaders(f *testing.F) {
	e := newTestEnv(f)
	e.seed(f)
	// "{v}" in a condition stands for the current version's 16 hex
	// digits, so that seeds (and what the fuzzer makes of them) can name
	// the current ETag, which every successful PUT changes.
	for _, seed := range []struct {
		route                            uint8
		ifMatch, ifNoneMatch, idempotent string
	}{
		{0, `"{v}"`, "", ""},
		{0, "*", "", ""},
		{0, `W/"{v}"`, "", ""},
		{0, `"0000000000000001", "{v}"`, `"{v}"`, ""},
		{0, `"0000000000000001" , ,"{v}"`, `W/"0000000000000001"`, ""},
		{1, "", `"{v}"`, ""},
		{1, "", `W/"{v}"`, ""},
		{1, "W/" + `"{v}", "x"`, "*", ""},
		{2, "", "*", ""},
		{2, `"{v}"`, `W/"{v}"`, ""},
		{2, "*", "", ""},
		{2, `"0000000000000001"`, "", ""},
		{3, "", "", "key-1"},
		{3, "", "", " \x7f"},
		{4, "", "", strings.Repeat("k", 256)},
		{0, `"unterminated`, "", ""},
		{0, `"{v}" "{v}"`, "", ""},
		{0, `*, "{v}"`, "", ""},
		{1, "", `,,, W/"a" ,`, ""},
		{5, `"{v}"`, "", ""},
		{5, "*", `"{v}"`, ""},
		{6, "", `W/"{v}"`, ""},
		{7, `"0000000000000001"`, "", ""},
		{8, "", "*", ""},
		{9, "", "", "role-key"},
		{10, "", "", "group key"},
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
		{"PUT", "/t/acme/api/v1/roles/1", map[string]any{"name": "admin"}},
		{"GET", "/t/acme/api/v1/roles/1", nil},
		{"PUT", "/t/acme/api/v1/groups/1", map[string]any{"name": "staff"}},
		{"GET", "/t/acme/api/v1/groups/1", nil},
		{"POST", "/t/acme/api/v1/roles", map[string]any{"name": "fz"}},
		{"POST", "/t/acme/api/v1/groups", map[string]any{"name": "fz"}},
	}
	f.Fuzz(func(t *testing.T, route uint8, ifMatch, ifNoneMatch, idempotent string) {
		if !validHeaderValue(ifMatch) || !validHeaderValue(ifNoneMatch) || !validHeaderValue(idempotent) {
			t.Skip("net/http would not pass these headers to a handler")
		}
		rt := routes[int(route)%len(routes)]
		e.logs.Reset()
		e.report.use(t)
		defer e.report.use(f)
		// The record the conditions are judged against, as it is now.
		var version int64
		exists := true
		switch route := int(route) % len(routes); route {
		case 0, 1:
			u, err := e.ws.GetUser(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			version = u.Version
		case 2:
			m, err := e.ws.GetClaimMapper(t.Context(), "dept")
			switch {
			case errors.Is(err, identity.ErrNotFound):
				exists = false
			case err != nil:
				t.Fatal(err)
			}
			version = m.Version
		case 5, 6:
			r, err := e.ws.GetRole(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			version = r.Version
		case 7, 8:
			g, err := e.ws.GetGroup(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			version = g.Version
		}
		current := fmt.Sprintf("%016x", version)
		ifMatch = strings.ReplaceAll(ifMatch, "{v}", current)
		ifNoneMatch = strings.ReplaceAll(ifNoneMatch, "{v}", current)
		rec := e.do(t, rt.method, rt.path, e.allKey, rt.body,
			"If-Match", ifMatch, "If-None-Match", ifNoneMatch, "Idempotency-Key", idempotent)
		checkResponse(t, e, rt.method, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes(), rec.Header())

		im, inm := readCondition(ifMatch), readCondition(ifNoneMatch)
		code := problemCode(rec.Body.Bytes())
		switch rt.method {
		case "PUT":
			wantOK := http.StatusOK
			if strings.Contains(rt.path, "claim-mappers") {
				wantOK = http.StatusNoContent
			}
			switch held := im.holds(exists, current, true) && inm.holds(exists, current, false); {
			case im.malformed || inm.malformed:
				if rec.Code != http.StatusBadRequest || code != "malformed_precondition" {
					t.Fatalf("If-Match %q, If-None-Match %q are malformed: got %d %s", ifMatch, ifNoneMatch, rec.Code, code)
				}
			case held && rec.Code != wantOK, !held && rec.Code != http.StatusPreconditionFailed:
				t.Fatalf("If-Match %q, If-None-Match %q against %q (exists %v): the conditions hold: %v; got %d %s",
					ifMatch, ifNoneMatch, current, exists, held, rec.Code, code)
			}
		case "GET":
			// If-Match is ignored on a GET.
			switch {
			case inm.malformed:
				if rec.Code != http.StatusBadRequest || code != "malformed_precondition" {
					t.Fatalf("If-None-Match %q is malformed: got %d %s", ifNoneMatch, rec.Code, code)
				}
			case inm.holds(exists, current, false) && rec.Code != http.StatusOK,
				!inm.holds(exists, current, false) && rec.Code != http.StatusNotModified:
				t.Fatalf("If-None-Match %q against %q: got %d", ifNoneMatch, current, rec.Code)
			}
		case "POST":
			if rec.Code == http.StatusPreconditionFailed || rec.Code == http.StatusNotModified || code == "malformed_precondition" {
				t.Fatalf("a POST read If-Match %q or If-None-Match %q: got %d %s", ifMatch, ifNoneMatch, rec.Code, code)
			}
		}
	})
}

// condition is the test's own reading of an If-Match or If-None-Match
// value (RFC 9110, 13.1.1 and 13.1.2): absent (an empty value, which the
// test helper does not send), "*", or a comma-separated list of entity
// tags in which empty elements are allowed. "*" may be repeated (two
// field lines of "*" combine so) but never mixed with tags.
type condition struct {
	present, malformed, star bool
	strong, weak             []string // the opaque parts of the tags
}

// conditionElement is one element at the start of a value: leading
// separators, then "*" or an entity tag, then optional whitespace.
var conditionElement = regexp.MustCompile(`^[ \t,]*(?:(\*)|(W/)?"([^"]*)")[ \t]*`)

func readCondition(v string) condition {
	c := condition{present: v != ""}
	tags := 0
	for strings.TrimLeft(v, " \t,") != "" {
		m := conditionElement.FindStringSubmatchIndex(v)
		if m == nil {
			c.malformed = true
			return c
		}
		if m[2] >= 0 {
			c.star = true
		} else {
			opaque := v[m[6]:m[7]]
			for i := 0; i < len(opaque); i++ { // etagc: %x21 / %x23-7E / obs-text
				if b := opaque[i]; b < 0x21 || b == 0x7f {
					c.malformed = true
					return c
				}
			}
			if m[4] >= 0 {
				c.weak = append(c.weak, opaque)
			} else {
				c.strong = append(c.strong, opaque)
			}
			tags++
		}
		v = v[m[1]:]
		if v != "" && v[0] != ',' {
			c.malformed = true // elements are separated by commas
			return c
		}
	}
	c.malformed = c.star && tags > 0
	return c
}

// holds reports whether the condition holds for a record that exists or
// not, with the entity tag whose opaque part is current: If-Match
// (ifMatch true) compares strongly, If-None-Match weakly. An absent
// condition holds.
func (c condition) holds(exists bool, current string, ifMatch bool) bool {
	if !c.present {
		return true
	}
	listed := slices.Contains(c.strong, current) || !ifMatch && slices.Contains(c.weak, current)
	if ifMatch {
		return exists && (c.star || listed)
	}
	if c.star {
		return !exists
	}
	return !exists || !listed
}

// problemCode returns the code of a problem body, "" for any other body.
func problemCode(body []byte) string {
	var p struct {
		Code string `json:"code"`
	}
	json.Unmarshal(body, &p)
	return p.Code
}
