package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// TestOperationErrors covers the refusals of each operation that
// docs/api.md lists (Errors), with the status, code and field errors the
// API answers.
func TestOperationErrors(t *testing.T) {
	const base = "/t/acme/api/v1"
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name         string
		method, path string
		body         any
		status       int
		code         string
		fields       []string
	}{
		{"mapper reserved claim sub", "PUT", base + "/claim-mappers/tier", map[string]any{"claimName": "sub"}, 400, "reserved_claim", nil},
		{"mapper reserved claim ISS", "PUT", base + "/claim-mappers/tier", map[string]any{"claimName": "ISS"}, 400, "reserved_claim", nil},
		{"mapper reserved claim email", "PUT", base + "/claim-mappers/tier", map[string]any{"claimName": "email"}, 400, "reserved_claim", nil},
		{"mapper claim name taken", "PUT", base + "/claim-mappers/tier", map[string]any{"claimName": "department"}, 409, "conflict", nil},
		{"mapper claim name 129", "PUT", base + "/claim-mappers/tier", map[string]any{"claimName": long(129)}, 422, "invalid", []string{"claimName max_length"}},
		{"mapper claim name empty", "PUT", base + "/claim-mappers/tier", map[string]any{"claimName": ""}, 422, "invalid", []string{"claimName required"}},
		{"mapper claim name missing", "PUT", base + "/claim-mappers/tier", map[string]any{}, 422, "invalid", []string{"claimName required"}},
		{"delete missing mapper", "DELETE", base + "/claim-mappers/nosuch", nil, 404, "not_found", nil},
		{"attribute of unknown user", "PUT", base + "/users/99/attributes/tier", map[string]any{"value": "gold"}, 404, "not_found", nil},
		{"attribute key 65", "PUT", base + "/users/1/attributes/" + long(65), map[string]any{"value": "gold"}, 422, "invalid", []string{"key max_length"}},
		{"attribute value 1025", "PUT", base + "/users/1/attributes/tier", map[string]any{"value": long(1025)}, 422, "invalid", []string{"value max_length"}},
		{"attribute key and value too long", "PUT", base + "/users/1/attributes/" + long(65), map[string]any{"value": long(1025)}, 422, "invalid", []string{"key max_length", "value max_length"}},
		{"delete attribute of unknown user", "DELETE", base + "/users/99/attributes/dept", nil, 404, "not_found", nil},
		{"delete missing attribute", "DELETE", base + "/users/1/attributes/nosuch", nil, 404, "not_found", nil},
		{"username taken", "POST", base + "/users", newUserBody("ADA", "other@example.com"), 409, "conflict", []string{"username taken"}},
		{"email taken", "POST", base + "/users", newUserBody("bob", "Ada@Example.com"), 409, "conflict", []string{"email taken"}},
		{"username and email taken", "POST", base + "/users", newUserBody("ada", "ada@example.com"), 409, "conflict", []string{"username taken", "email taken"}},
		{"username pattern", "POST", base + "/users", newUserBody("ada lovelace", "al@example.com"), 422, "invalid", []string{"username pattern"}},
		{"password under policy", "POST", base + "/users", map[string]any{"username": "bob", "email": "bob@example.com", "fullName": "Bob", "password": "abc"}, 422, "invalid", []string{"password password_min_length"}},
		{"every create field missing", "POST", base + "/users", map[string]any{}, 422, "invalid", []string{"username required", "email required", "fullName required", "password required"}},
		{"webhook unknown events", "POST", base + "/webhooks", map[string]any{"url": "https://h.example.com", "events": []string{"user.created", "user.exploded", "nope"}}, 422, "invalid", []string{"events[1] unknown", "events[2] unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			rec := e.do(t, tt.method, tt.path, e.allKey, tt.body)
			wantProblem(t, rec, tt.status, tt.code, tt.fields...)
		})
	}
}

func newUserBody(username, email string) map[string]any {
	return map[string]any{"username": username, "email": email, "fullName": "Someone", "password": "correct horse"}
}

// TestUnknownEventsListed: the 422 of unknown webhook events names every
// invalid value, in the detail and one entry each in errors.
func TestUnknownEventsListed(t *testing.T) {
	e := newTestEnv(t)
	rec := e.do(t, "POST", "/t/acme/api/v1/webhooks", e.allKey, map[string]any{
		"url": "https://h.example.com", "events": []string{"user.exploded", "user.created", "moon.landed"},
	})
	p := wantProblem(t, rec, 422, "invalid", "events[0] unknown", "events[2] unknown")
	for _, value := range []string{"user.exploded", "moon.landed"} {
		if !strings.Contains(p.Detail, value) {
			t.Errorf("detail %q does not name %q", p.Detail, value)
		}
		if !slices.ContainsFunc(p.Errors, func(f fieldError) bool { return strings.Contains(f.Message, value) }) {
			t.Errorf("errors %+v do not name %q", p.Errors, value)
		}
	}
}

// TestMapperLimit: the 21st mapper is refused with 409, while replacing one
// of the 20 still works.
func TestMapperLimit(t *testing.T) {
	e := newTestEnv(t)
	for i := range identity.MaxClaimMappers {
		rec := e.do(t, "PUT", fmt.Sprintf("/t/acme/api/v1/claim-mappers/attr%d", i), e.allKey, map[string]any{"claimName": fmt.Sprintf("claim%d", i)})
		wantStatus(t, rec, 204)
	}
	rec := e.do(t, "PUT", "/t/acme/api/v1/claim-mappers/attr20", e.allKey, map[string]any{"claimName": "claim20"})
	wantProblem(t, rec, 409, "limit_reached")
	rec = e.do(t, "PUT", "/t/acme/api/v1/claim-mappers/attr0", e.allKey, map[string]any{"claimName": "renamed", "includeInId": true})
	wantStatus(t, rec, 204)
}

// TestLengthLimits: the longest valid values pass, counted in code points.
func TestLengthLimits(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	key64 := strings.Repeat("é", 64)
	rec := e.do(t, "PUT", "/t/acme/api/v1/users/1/attributes/"+key64, e.allKey, map[string]any{"value": strings.Repeat("ü", 1024)})
	wantStatus(t, rec, 204)
	rec = e.do(t, "PUT", "/t/acme/api/v1/claim-mappers/tier", e.allKey, map[string]any{"claimName": strings.Repeat("c", 128)})
	wantStatus(t, rec, 204)
	rec = e.do(t, "PUT", "/t/acme/api/v1/users/1/attributes/empty", e.allKey, map[string]any{"value": ""})
	wantStatus(t, rec, 204)
}

// TestContentType: a body must be application/json (UTF-8); anything else,
// or no Content-Type at all, is 415.
func TestContentType(t *testing.T) {
	const path = "/t/acme/api/v1/users/1/attributes/tier"
	body := `{"value":"gold"}`
	tests := []struct {
		contentType string
		status      int
	}{
		{"application/json", 204},
		{"application/json; charset=utf-8", 204},
		{"application/json;charset=UTF-8", 204},
		{"Application/JSON", 204},
		{"", 415}, // the header removed
		{"text/plain", 415},
		{"application/x-www-form-urlencoded", 415},
		{"application/jsonx", 415},
		{"application/problem+json", 415},
		{"application/json; charset=latin1", 415},
		{"application/json; charset", 415},
		{"json", 415},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			rec := e.do(t, "PUT", path, e.allKey, body, "Content-Type", tt.contentType)
			if tt.status == 415 {
				wantProblem(t, rec, 415, "unsupported_media_type")
				return
			}
			wantStatus(t, rec, tt.status)
		})
	}
}

// TestEveryBodyRouteChecksContentType: each route that takes a body refuses
// one that is not of its media type: JSON, or PNG for a logo (whose
// refusal of JSON, and of bytes that are not a PNG, is checked here too).
func TestEveryBodyRouteChecksContentType(t *testing.T) {
	for _, rc := range routeCases() {
		if rc.body == nil {
			continue
		}
		t.Run(rc.method+" "+rc.path, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			wantProblem(t, e.do(t, rc.method, rc.path, e.allKey, rc.body, "Content-Type", "text/plain"), 415, "unsupported_media_type")
			wantProblem(t, e.do(t, rc.method, rc.path, e.allKey, rc.body, "Content-Type", ""), 415, "unsupported_media_type")
			if _, logo := rc.body.(pngBody); logo {
				wantProblem(t, e.do(t, rc.method, rc.path, e.allKey, "{}"), 415, "unsupported_media_type")
				wantProblem(t, e.do(t, rc.method, rc.path, e.allKey, pngBody("{")), 422, "invalid", "logo format")
				return
			}
			wantProblem(t, e.do(t, rc.method, rc.path, e.allKey, "{"), 400, "malformed_json")
		})
	}
}

// TestMalformedBody: bodies that are not exactly one JSON value are 400,
// and bodies over 1 MiB are 413.
func TestMalformedBody(t *testing.T) {
	const path = "/t/acme/api/v1/users/1/attributes/tier"
	padded := func(n int) string { // a valid body of exactly n bytes
		const v = `{"value":"gold"}`
		return v + strings.Repeat(" ", n-len(v))
	}
	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"empty", "", 400, "malformed_json"},
		{"truncated", `{"value":`, 400, "malformed_json"},
		{"syntax", `{"value" "gold"}`, 400, "malformed_json"},
		{"single quotes", `{'value':'gold'}`, 400, "malformed_json"},
		{"trailing object", `{"value":"gold"} {}`, 400, "malformed_json"},
		{"trailing garbage", `{"value":"gold"}x`, 400, "malformed_json"},
		{"trailing bracket", `{"value":"gold"}]`, 400, "malformed_json"},
		{"trailing whitespace", "{\"value\":\"gold\"}\n\t ", 204, ""},
		{"exactly 1 MiB", padded(1 << 20), 204, ""},
		{"1 MiB and a byte", padded(1<<20 + 1), 413, "body_too_large"},
		{"2 MiB value", `{"value":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			rec := e.do(t, "PUT", path, e.allKey, []byte(tt.body))
			if tt.code == "" {
				wantStatus(t, rec, tt.status)
				return
			}
			wantProblem(t, rec, tt.status, tt.code)
		})
	}
}

// TestWrongTypes: wrongly typed members, null members, a body that is not
// an object and missing required members are 422 naming each field.
func TestWrongTypes(t *testing.T) {
	const base = "/t/acme/api/v1"
	tests := []struct {
		name         string
		method, path string
		body         string
		fields       []string
	}{
		{"number for string", "POST", base + "/users", `{"username":5,"email":"b@example.com","fullName":"B","password":"correct horse"}`, []string{"username type"}},
		{"every create field wrong", "POST", base + "/users", `{"username":1,"email":true,"fullName":[],"password":{}}`, []string{"username type", "email type", "fullName type", "password type"}},
		{"null string", "PUT", base + "/users/1", `{"email":null,"fullName":"Ada"}`, []string{"email type"}},
		{"string for boolean", "PUT", base + "/claim-mappers/tier", `{"claimName":"tier","includeInAccess":"yes"}`, []string{"includeInAccess type"}},
		{"null boolean", "PUT", base + "/claim-mappers/tier", `{"claimName":"tier","includeInId":null}`, []string{"includeInId type"}},
		{"string for array", "POST", base + "/webhooks", `{"url":"https://h.example.com","events":"user.created"}`, []string{"events type"}},
		{"number in array", "POST", base + "/webhooks", `{"url":"https://h.example.com","events":["user.created",7]}`, []string{"events type"}},
		{"number for value", "PUT", base + "/users/1/attributes/tier", `{"value":42}`, []string{"value type"}},
		{"null value", "PUT", base + "/users/1/attributes/tier", `{"value":null}`, []string{"value type"}},
		{"missing value", "PUT", base + "/users/1/attributes/tier", `{}`, []string{"value required"}},
		{"value in another case", "PUT", base + "/users/1/attributes/tier", `{"VALUE":"gold"}`, []string{"value required"}},
		{"array body", "PUT", base + "/users/1/attributes/tier", `[{"value":"gold"}]`, []string{"body type"}},
		{"string body", "POST", base + "/users", `"ada"`, []string{"body type"}},
		{"null body", "POST", base + "/webhooks", `null`, []string{"body type"}},
		{"missing update fields", "PUT", base + "/users/1", `{}`, []string{"email required", "fullName required"}},
		{"missing webhook fields", "POST", base + "/webhooks", `{}`, []string{"url required", "events required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			wantProblem(t, e.do(t, tt.method, tt.path, e.allKey, tt.body), 422, "invalid", tt.fields...)
		})
	}
}

// TestUnknownMembersIgnored: members the API does not know change nothing.
func TestUnknownMembersIgnored(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	rec := e.do(t, "PUT", "/t/acme/api/v1/users/1", e.allKey, `{"email":"ada@example.com","fullName":"Ada L","username":"hacker","enabled":false,"id":9}`)
	wantJSON(t, rec, 200, `{"id":1,"username":"ada","email":"ada@example.com","fullName":"Ada L","emailVerified":false,"enabled":true,"mfaEnabled":false,"createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`"}`)
}

// TestInvalidPathIDs: ids that are not positive decimal integers name no
// resource: 404, on every route with an id.
func TestInvalidPathIDs(t *testing.T) {
	bad := []string{"0", "-1", "abc", "1.5", "+1", "99999999999999999999", "1e3", "0x1", "%201", "1%20", "９"}
	paths := []struct{ method, pattern string }{
		{"GET", "/t/acme/api/v1/users/%s"},
		{"PUT", "/t/acme/api/v1/users/%s"},
		{"DELETE", "/t/acme/api/v1/users/%s"},
		{"POST", "/t/acme/api/v1/users/%s/roles/5"},
		{"DELETE", "/t/acme/api/v1/users/%s/roles/5"},
		{"POST", "/t/acme/api/v1/users/1/roles/%s"},
		{"DELETE", "/t/acme/api/v1/users/1/roles/%s"},
		{"GET", "/t/acme/api/v1/users/%s/attributes"},
		{"PUT", "/t/acme/api/v1/users/%s/attributes/dept"},
		{"DELETE", "/t/acme/api/v1/users/%s/attributes/dept"},
		{"DELETE", "/t/acme/api/v1/webhooks/%s"},
		{"GET", "/t/acme/api/v1/users/%s/roles"},
		{"GET", "/t/acme/api/v1/users/%s/groups"},
		{"GET", "/t/acme/api/v1/roles/%s"},
		{"PUT", "/t/acme/api/v1/roles/%s"},
		{"DELETE", "/t/acme/api/v1/roles/%s"},
		{"GET", "/t/acme/api/v1/roles/%s/users"},
		{"GET", "/t/acme/api/v1/groups/%s"},
		{"PUT", "/t/acme/api/v1/groups/%s"},
		{"DELETE", "/t/acme/api/v1/groups/%s"},
		{"GET", "/t/acme/api/v1/groups/%s/members"},
		{"PUT", "/t/acme/api/v1/groups/%s/members/1"},
		{"DELETE", "/t/acme/api/v1/groups/%s/members/1"},
		{"PUT", "/t/acme/api/v1/groups/1/members/%s"},
		{"DELETE", "/t/acme/api/v1/groups/1/members/%s"},
		{"GET", "/t/acme/api/v1/groups/%s/roles"},
		{"PUT", "/t/acme/api/v1/groups/%s/roles/1"},
		{"DELETE", "/t/acme/api/v1/groups/%s/roles/1"},
		{"PUT", "/t/acme/api/v1/groups/1/roles/%s"},
		{"DELETE", "/t/acme/api/v1/groups/1/roles/%s"},
	}
	e := newTestEnv(t)
	e.seed(t)
	for _, p := range paths {
		for _, id := range bad {
			path := fmt.Sprintf(p.pattern, id)
			t.Run(p.method+" "+path, func(t *testing.T) {
				var body any
				if p.method == "PUT" {
					body = map[string]any{"value": "x", "email": "x@example.com", "fullName": "X", "name": "x"}
				}
				wantProblem(t, e.do(t, p.method, path, e.allKey, body), 404, "not_found")
			})
		}
	}
}

// TestUnknownUser: every user route answers 404 for a user that does not
// exist.
func TestUnknownUser(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	for _, rc := range routeCases() {
		if !strings.Contains(rc.path, "/users/1") {
			continue
		}
		path := strings.Replace(rc.path, "/users/1", "/users/42", 1)
		t.Run(rc.method+" "+path, func(t *testing.T) {
			wantProblem(t, e.do(t, rc.method, path, e.allKey, rc.body), 404, "not_found")
		})
	}
}

// TestMethodNotAllowed: a known path with another method is 405 with Allow,
// before authentication.
func TestMethodNotAllowed(t *testing.T) {
	tests := []struct{ method, path, allow string }{
		{"PATCH", "/t/acme/api/v1/users", "GET, OPTIONS, POST"},
		{"DELETE", "/t/acme/api/v1/users", "GET, OPTIONS, POST"},
		{"POST", "/t/acme/api/v1/users/1", "DELETE, GET, OPTIONS, PUT"},
		{"GET", "/t/acme/api/v1/users/1/roles/5", "DELETE, OPTIONS, POST"},
		{"POST", "/t/acme/api/v1/users/1/attributes", "GET, OPTIONS"},
		{"GET", "/t/acme/api/v1/users/1/attributes/k", "DELETE, OPTIONS, PUT"},
		{"POST", "/t/acme/api/v1/claim-mappers", "GET, OPTIONS"},
		{"POST", "/t/acme/api/v1/claim-mappers/k", "DELETE, GET, OPTIONS, PUT"},
		{"GET", "/t/acme/api/v1/users/1/enable", "OPTIONS, POST"},
		{"POST", "/t/acme/api/v1/users/1/claims", "GET, OPTIONS"},
		{"PUT", "/t/acme/api/v1/webhooks", "GET, OPTIONS, POST"},
		{"GET", "/t/acme/api/v1/webhooks/1", "DELETE, OPTIONS"},
		{"HEAD", "/t/acme/api/v1/users", "GET, OPTIONS, POST"},
		{"POST", "/t/acme/api/v1/openapi.yaml", "GET, OPTIONS"},
		{"PATCH", "/t/acme/api/v1/roles", "GET, OPTIONS, POST"},
		{"POST", "/t/acme/api/v1/roles/1", "DELETE, GET, OPTIONS, PUT"},
		{"POST", "/t/acme/api/v1/roles/1/users", "GET, OPTIONS"},
		{"PUT", "/t/acme/api/v1/groups", "GET, OPTIONS, POST"},
		{"PATCH", "/t/acme/api/v1/groups/1", "DELETE, GET, OPTIONS, PUT"},
		{"POST", "/t/acme/api/v1/groups/1/members", "GET, OPTIONS"},
		{"POST", "/t/acme/api/v1/groups/1/members/1", "DELETE, OPTIONS, PUT"},
		{"POST", "/t/acme/api/v1/groups/1/roles", "GET, OPTIONS"},
		{"GET", "/t/acme/api/v1/groups/1/roles/1", "DELETE, OPTIONS, PUT"},
		{"PUT", "/t/acme/api/v1/users/1/roles", "GET, OPTIONS"},
		{"DELETE", "/t/acme/api/v1/users/1/groups", "GET, OPTIONS"},
	}
	e := newTestEnv(t)
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := e.do(t, tt.method, tt.path, "", nil)
			if tt.method == "HEAD" {
				wantStatus(t, rec, 405) // a HEAD response has no body to check
			} else {
				wantProblem(t, rec, 405, "method_not_allowed")
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}

// TestOptions: OPTIONS answers with Allow, as httprouter does by default.
func TestOptions(t *testing.T) {
	e := newTestEnv(t)
	rec := e.do(t, "OPTIONS", "/t/acme/api/v1/users/1", "", nil)
	wantStatus(t, rec, 200)
	if got, want := rec.Header().Get("Allow"), "DELETE, GET, OPTIONS, PUT"; got != want {
		t.Errorf("Allow %q, want %q", got, want)
	}
}

// TestUnknownPath: paths outside the route table are 404 problems, with no
// redirect for a trailing slash or a different case.
func TestUnknownPath(t *testing.T) {
	e := newTestEnv(t)
	for _, path := range []string{
		"/", "/t/acme", "/t/acme/api/v1", "/t/acme/api/v1/", "/t/acme/api/v2/users", "/t/acme/api/v1/users/",
		"/t/acme/api/v1/Users", "/T/acme/api/v1/users", "/t/acme/api/v1/users/1/attributes/", "/t/acme/api/v1/nosuch",
		"/t/acme/api/v1/users/1/roles/", "/t/acme/api/v1//users", "/t/acme/api/v1/users/../users",
		"/t/acme/api/v1/groups/1/users", "/t/acme/api/v1/roles/1/members", "/t/acme/api/v1/users/1/groups/1",
	} {
		t.Run(path, func(t *testing.T) {
			wantProblem(t, e.do(t, "GET", path, e.allKey, nil), 404, "not_found")
		})
	}
}

// TestPageQuery: offset and limit must be integers (checked here) in range
// (checked by the library); both problems are reported at once.
func TestPageQuery(t *testing.T) {
	tests := []struct {
		query  string
		fields []string
	}{
		{"limit=abc", []string{"limit type"}},
		{"offset=1.5", []string{"offset type"}},
		{"offset=", []string{"offset type"}},
		{"offset=x&limit=y", []string{"offset type", "limit type"}},
		{"limit=99999999999999999999", []string{"limit range"}},
		{"offset=-1", []string{"offset range"}},
		{"limit=0", []string{"limit range"}},
		{"limit=101", []string{"limit range"}},
		{"offset=-1&limit=101", []string{"offset range", "limit range"}},
	}
	e := newTestEnv(t)
	for _, path := range []string{"/t/acme/api/v1/users", "/t/acme/api/v1/webhooks"} {
		for _, tt := range tests {
			t.Run(path+"?"+tt.query, func(t *testing.T) {
				wantProblem(t, e.do(t, "GET", path+"?"+tt.query, e.allKey, nil), 422, "invalid", tt.fields...)
			})
		}
		t.Run(path+" malformed query", func(t *testing.T) {
			wantProblem(t, e.do(t, "GET", path+"?limit=%zz", e.allKey, nil), 400, "malformed_query")
			wantProblem(t, e.do(t, "GET", path+"?limit=1;offset=2", e.allKey, nil), 400, "malformed_query")
		})
	}
}

// TestProblemShape: every member of a problem, exactly.
func TestProblemShape(t *testing.T) {
	e := newTestEnv(t)
	rec := e.do(t, "POST", "/t/acme/api/v1/users", e.allKey, map[string]any{"username": "a b", "email": "nope", "fullName": "A", "password": "correct horse"})
	wantStatus(t, rec, 422)
	want := map[string]any{
		"type": "about:blank", "title": "Unprocessable Entity", "status": 422.0, "detail": "invalid user", "code": "invalid",
		"errors": []any{
			map[string]any{"field": "username", "rule": "pattern", "message": "may contain only letters a-z and A-Z, digits, '.', '_' and '-'"},
			map[string]any{"field": "email", "rule": "format", "message": "must be a plain email address such as name@example.com"},
		},
	}
	if diff := cmp.Diff(any(want), decode(t, rec)); diff != "" {
		t.Errorf("problem mismatch (-want +got):\n%s", diff)
	}
	// Without field problems there is no errors member at all.
	rec = e.do(t, "GET", "/t/acme/api/v1/users/7", e.allKey, nil)
	want = map[string]any{"type": "about:blank", "title": "Not Found", "status": 404.0, "detail": "user 7 not found", "code": "not_found"}
	if diff := cmp.Diff(any(want), decode(t, rec)); diff != "" {
		t.Errorf("problem mismatch (-want +got):\n%s", diff)
	}
}

// TestInternalError: a store failure is a 500 that tells nothing of it; the
// cause is logged.
func TestInternalError(t *testing.T) {
	e := newTestEnv(t)
	e.store.failing.Store(true)
	rec := e.do(t, "GET", "/t/acme/api/v1/users", e.allKey, nil)
	p := wantProblem(t, rec, 500, "internal")
	if diff := cmp.Diff(problemBody{Type: "about:blank", Title: "Internal Server Error", Status: 500, Detail: "internal error", Code: "internal"}, p); diff != "" {
		t.Errorf("problem mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(rec.Body.String(), "disk") {
		t.Errorf("the body leaks the cause: %s", rec.Body.String())
	}
	log := e.logs.String()
	if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, errDiskOnFire.Error()) {
		t.Errorf("the log does not hold the cause at error level: %s", log)
	}
}

// TestPanicRecovered: a panic below a route is a 500 problem without
// internals, logged with its value and stack in the request's one line.
func TestPanicRecovered(t *testing.T) {
	e := newTestEnv(t)
	e.store.panicking.Store(true)
	rec := e.do(t, "GET", "/t/acme/api/v1/users/1", e.allKey, nil)
	p := wantProblem(t, rec, 500, "internal")
	if p.Detail != "internal error" || strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("the body leaks the panic: %s", rec.Body.String())
	}
	lines := logLines(e.logs)
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1:\n%s", len(lines), e.logs.String())
	}
	for _, want := range []string{"level=ERROR", "route=/t/:slug/api/v1/users/:userId", "status=500", "panic: boom", "stack="} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line lacks %q: %s", want, lines[0])
		}
	}
}

// TestCanceledRequest: a request whose context is done is not logged as a
// server failure.
func TestCanceledRequest(t *testing.T) {
	e := newTestEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.ctx = ctx
	rec := e.do(t, "GET", "/t/acme/api/v1/users", e.allKey, nil)
	wantProblem(t, rec, 503, "unavailable")
	if strings.Contains(e.logs.String(), "level=ERROR") {
		t.Errorf("a canceled request is logged as an error: %s", e.logs.String())
	}
}
