package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity"
)

const base = "/t/acme/api/v1"

// userJSON is the JSON of a user created by testEnv.createUser (or with the
// same fields through the API) at testNow.
func userJSON(id, username, email, fullName string, enabled bool) string {
	en := "false"
	if enabled {
		en = "true"
	}
	return `{"id":` + id + `,"username":"` + username + `","email":"` + email + `","fullName":"` + fullName +
		`","emailVerified":false,"enabled":` + en + `,"mfaEnabled":false,"createdAt":"` + testNowJSON + `","updatedAt":"` + testNowJSON + `"}`
}

func TestCreateUser(t *testing.T) {
	e := newTestEnv(t)
	rec := e.do(t, "POST", base+"/users", e.allKey, map[string]any{
		"username": "Ada.L", "email": "ada@example.com", "fullName": "Ada Lovelace", "password": "analytical engine",
	})
	wantJSON(t, rec, 201, userJSON("1", "Ada.L", "ada@example.com", "Ada Lovelace", true))
	if got, want := rec.Header().Get("Location"), "/t/acme/api/v1/users/1"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	// The Location names the user.
	wantJSON(t, e.do(t, "GET", rec.Header().Get("Location"), e.allKey, nil), 200, userJSON("1", "Ada.L", "ada@example.com", "Ada Lovelace", true))
	// The password works.
	if _, err := e.ws.Authenticate(t.Context(), "ada.l", "analytical engine"); err != nil {
		t.Errorf("the created user cannot log in: %v", err)
	}
}

func TestGetUser(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	e.createUser(t, "bob")
	wantJSON(t, e.do(t, "GET", base+"/users/2", e.allKey, nil), 200, userJSON("2", "bob", "bob@example.com", "Bob", true))
	// Leading zeros are still the decimal id.
	wantJSON(t, e.do(t, "GET", base+"/users/002", e.allKey, nil), 200, userJSON("2", "bob", "bob@example.com", "Bob", true))
}

func TestUpdateUser(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	e.createUser(t, "bob")
	rec := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@lovelace.org", "fullName": "Countess"})
	wantJSON(t, rec, 200, userJSON("1", "ada", "ada@lovelace.org", "Countess", true))
	wantJSON(t, e.do(t, "GET", base+"/users/1", e.allKey, nil), 200, userJSON("1", "ada", "ada@lovelace.org", "Countess", true))
	// Another user's email, in another case, is taken.
	rec = e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "BOB@example.com", "fullName": "Ada"})
	wantProblem(t, rec, 409, "conflict", "email taken")
}

func TestDisableUser(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	for range 2 { // idempotent
		rec := e.do(t, "DELETE", base+"/users/1", e.allKey, nil)
		wantNoContent(t, rec)
	}
	// Disabled, not deleted.
	wantJSON(t, e.do(t, "GET", base+"/users/1", e.allKey, nil), 200, userJSON("1", "ada", "ada@example.com", "Ada", false))
	wantProblem(t, e.do(t, "DELETE", base+"/users/2", e.allKey, nil), 404, "not_found")
}

func TestListUsers(t *testing.T) {
	e := newTestEnv(t)
	wantJSON(t, e.do(t, "GET", base+"/users", e.allKey, nil), 200, `{"data":[],"meta":{"total":0,"offset":0,"limit":20}}`)
	if !strings.Contains(e.do(t, "GET", base+"/users", e.allKey, nil).Body.String(), `"data":[]`) {
		t.Error("an empty page is not written as []")
	}
	e.createUser(t, "ada")
	e.createUser(t, "adam")
	e.createUser(t, "bob")
	ada, adam, bob := userJSON("1", "ada", "ada@example.com", "Ada", true), userJSON("2", "adam", "adam@example.com", "Adam", true), userJSON("3", "bob", "bob@example.com", "Bob", true)
	tests := []struct{ query, want string }{
		{"", `{"data":[` + ada + `,` + adam + `,` + bob + `],"meta":{"total":3,"offset":0,"limit":20}}`},
		{"?offset=1&limit=1", `{"data":[` + adam + `],"meta":{"total":3,"offset":1,"limit":1}}`},
		{"?limit=2", `{"data":[` + ada + `,` + adam + `],"meta":{"total":3,"offset":0,"limit":2}}`},
		{"?offset=2", `{"data":[` + bob + `],"meta":{"total":3,"offset":2,"limit":20}}`},
		{"?offset=5", `{"data":[],"meta":{"total":3,"offset":5,"limit":20}}`},
		{"?limit=100", `{"data":[` + ada + `,` + adam + `,` + bob + `],"meta":{"total":3,"offset":0,"limit":100}}`},
		{"?search=AD", `{"data":[` + ada + `,` + adam + `],"meta":{"total":2,"offset":0,"limit":20}}`},
		{"?search=ad&offset=1&limit=5", `{"data":[` + adam + `],"meta":{"total":2,"offset":1,"limit":5}}`},
		{"?search=bob%40", `{"data":[` + bob + `],"meta":{"total":1,"offset":0,"limit":20}}`},
		{"?search=a%2A", `{"data":[],"meta":{"total":0,"offset":0,"limit":20}}`}, // "a*": no wildcards
		{"?search=", `{"data":[` + ada + `,` + adam + `,` + bob + `],"meta":{"total":3,"offset":0,"limit":20}}`},
		{"?unknown=1", `{"data":[` + ada + `,` + adam + `,` + bob + `],"meta":{"total":3,"offset":0,"limit":20}}`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantJSON(t, e.do(t, "GET", base+"/users"+tt.query, e.allKey, nil), 200, tt.want)
		})
	}
}

func TestRoles(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	for i := 1; i <= 7; i++ { // roles 1 to 7
		if _, err := e.ws.CreateRole(t.Context(), identity.NewRole{Name: fmt.Sprintf("role-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	wantProblem(t, e.do(t, "POST", base+"/users/1/roles/9", e.allKey, nil), 404, "not_found") // no role 9
	for range 2 {                                                                             // assigning an assigned role is fine
		wantNoContent(t, e.do(t, "POST", base+"/users/1/roles/7", e.allKey, nil))
	}
	wantNoContent(t, e.do(t, "DELETE", base+"/users/1/roles/7", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/users/1/roles/7", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "DELETE", base+"/users/1/roles/8", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "POST", base+"/users/2/roles/7", e.allKey, nil), 404, "not_found")
	roles, err := e.ws.ListUserRoles(t.Context(), 1)
	if err != nil || len(roles) != 0 {
		t.Errorf("roles %v, %v; want none", roles, err)
	}
}

func TestAttributes(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	attrs := base + "/users/1/attributes"
	wantJSON(t, e.do(t, "GET", attrs, e.allKey, nil), 200, `{"attributes":{}}`)
	if !strings.Contains(e.do(t, "GET", attrs, e.allKey, nil).Body.String(), `{"attributes":{}}`) {
		t.Error("empty attributes are not written as {}")
	}
	wantNoContent(t, e.do(t, "PUT", attrs+"/dept", e.allKey, map[string]any{"value": "eng"}))
	wantNoContent(t, e.do(t, "PUT", attrs+"/tier", e.allKey, map[string]any{"value": "gold"}))
	wantNoContent(t, e.do(t, "PUT", attrs+"/dept", e.allKey, map[string]any{"value": "math"})) // replaces
	wantNoContent(t, e.do(t, "PUT", attrs+"/empty", e.allKey, map[string]any{"value": ""}))
	// Keys may hold any character, percent-encoded in the path; each is
	// decoded exactly once.
	wantNoContent(t, e.do(t, "PUT", attrs+"/https:%2F%2Fexample.com%2Fclaims", e.allKey, map[string]any{"value": "url"}))
	wantNoContent(t, e.do(t, "PUT", attrs+"/a%2541%20b", e.allKey, map[string]any{"value": "pct"}))
	wantJSON(t, e.do(t, "GET", attrs, e.allKey, nil), 200,
		`{"attributes":{"dept":"math","tier":"gold","empty":"","https://example.com/claims":"url","a%41 b":"pct"}}`)

	wantNoContent(t, e.do(t, "DELETE", attrs+"/dept", e.allKey, nil))
	wantNoContent(t, e.do(t, "DELETE", attrs+"/https:%2F%2Fexample.com%2Fclaims", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", attrs+"/dept", e.allKey, nil), 404, "not_found")
	wantJSON(t, e.do(t, "GET", attrs, e.allKey, nil), 200, `{"attributes":{"tier":"gold","empty":"","a%41 b":"pct"}}`)
	wantProblem(t, e.do(t, "GET", base+"/users/2/attributes", e.allKey, nil), 404, "not_found")
}

func TestClaimMappers(t *testing.T) {
	e := newTestEnv(t)
	wantJSON(t, e.do(t, "GET", base+"/claim-mappers", e.allKey, nil), 200, `{"mappers":[]}`)
	if !strings.Contains(e.do(t, "GET", base+"/claim-mappers", e.allKey, nil).Body.String(), `{"mappers":[]}`) {
		t.Error("no mappers are not written as []")
	}
	wantNoContent(t, e.do(t, "PUT", base+"/claim-mappers/tier", e.allKey, map[string]any{"claimName": "tier"}))
	wantNoContent(t, e.do(t, "PUT", base+"/claim-mappers/dept", e.allKey, map[string]any{"claimName": "department", "includeInAccess": false, "includeInId": true}))
	wantNoContent(t, e.do(t, "PUT", base+"/claim-mappers/emp", e.allKey, map[string]any{"claimName": "employee", "includeInId": true}))
	wantJSON(t, e.do(t, "GET", base+"/claim-mappers", e.allKey, nil), 200, `{"mappers":[
		{"attributeKey":"dept","claimName":"department","includeInAccess":false,"includeInId":true},
		{"attributeKey":"emp","claimName":"employee","includeInAccess":true,"includeInId":true},
		{"attributeKey":"tier","claimName":"tier","includeInAccess":true,"includeInId":false}]}`)

	// A PUT replaces the whole mapper: omitted flags go back to defaults,
	// and its own claim name is no conflict.
	wantNoContent(t, e.do(t, "PUT", base+"/claim-mappers/dept", e.allKey, map[string]any{"claimName": "department"}))
	wantNoContent(t, e.do(t, "DELETE", base+"/claim-mappers/emp", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/claim-mappers/emp", e.allKey, nil), 404, "not_found")
	wantJSON(t, e.do(t, "GET", base+"/claim-mappers", e.allKey, nil), 200, `{"mappers":[
		{"attributeKey":"dept","claimName":"department","includeInAccess":true,"includeInId":false},
		{"attributeKey":"tier","claimName":"tier","includeInAccess":true,"includeInId":false}]}`)
}

func TestWebhooks(t *testing.T) {
	e := newTestEnv(t)
	wantJSON(t, e.do(t, "GET", base+"/webhooks", e.allKey, nil), 200, `{"data":[],"meta":{"total":0,"offset":0,"limit":20}}`)

	rec := e.do(t, "POST", base+"/webhooks", e.allKey, map[string]any{
		"url": "https://hooks.example.com/identity", "description": "audit", "events": []string{"user.created", "login.failed"},
	})
	wantStatus(t, rec, 201)
	if got, want := rec.Header().Get("Location"), "/t/acme/api/v1/webhooks/1"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	var created struct {
		Endpoint json.RawMessage `json:"endpoint"`
		Secret   string          `json:"secret"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Secret, "whsec_") || len(created.Secret) != len("whsec_")+44 {
		t.Errorf("secret %q, want whsec_ and 44 base64 characters", created.Secret)
	}
	endpoint1 := `{"id":1,"url":"https://hooks.example.com/identity","description":"audit","events":["user.created","login.failed"],"enabled":true,"createdAt":"` + testNowJSON + `"}`
	wantJSON(t, rec, 201, `{"endpoint":`+endpoint1+`,"secret":"`+created.Secret+`"}`)

	rec = e.do(t, "POST", base+"/webhooks", e.allKey, map[string]any{"url": "https://b.example.com", "events": []string{"session.revoked"}})
	wantStatus(t, rec, 201)
	endpoint2 := `{"id":2,"url":"https://b.example.com","description":"","events":["session.revoked"],"enabled":true,"createdAt":"` + testNowJSON + `"}`

	list := e.do(t, "GET", base+"/webhooks", e.allKey, nil)
	wantJSON(t, list, 200, `{"data":[`+endpoint1+`,`+endpoint2+`],"meta":{"total":2,"offset":0,"limit":20}}`)
	if strings.Contains(list.Body.String(), "secret") || strings.Contains(list.Body.String(), created.Secret) {
		t.Errorf("the list shows a secret: %s", list.Body.String())
	}
	wantJSON(t, e.do(t, "GET", base+"/webhooks?offset=1&limit=1", e.allKey, nil), 200, `{"data":[`+endpoint2+`],"meta":{"total":2,"offset":1,"limit":1}}`)

	wantNoContent(t, e.do(t, "DELETE", base+"/webhooks/1", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/webhooks/1", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "DELETE", base+"/webhooks/3", e.allKey, nil), 404, "not_found")
	wantJSON(t, e.do(t, "GET", base+"/webhooks", e.allKey, nil), 200, `{"data":[`+endpoint2+`],"meta":{"total":1,"offset":0,"limit":20}}`)
}

// TestTimestamps: times are RFC 3339 in UTC, though the clock is not.
func TestTimestamps(t *testing.T) {
	e := newTestEnv(t)
	rec := e.do(t, "POST", base+"/users", e.allKey, newUserBody("ada", "ada@example.com"))
	wantStatus(t, rec, 201)
	var u struct{ CreatedAt, UpdatedAt string }
	if err := json.Unmarshal(rec.Body.Bytes(), &u); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{u.CreatedAt, u.UpdatedAt} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !strings.HasSuffix(s, "Z") || !tm.Equal(testNow) {
			t.Errorf("timestamp %q (%v), want RFC 3339 in UTC of %v", s, err, testNow)
		}
	}
}

// TestNoContent: every 204 has no body and no Content-Type.
func TestNoContent(t *testing.T) {
	for _, rc := range routeCases() {
		if rc.status != 204 {
			continue
		}
		t.Run(rc.method+" "+rc.path, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			wantNoContent(t, e.do(t, rc.method, rc.path, e.allKey, rc.body))
		})
	}
}

func wantNoContent(tb testing.TB, rec *httptest.ResponseRecorder) {
	tb.Helper()
	wantStatus(tb, rec, 204)
	if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
		tb.Errorf("204 with Content-Type %q and body %q, want neither", rec.Header().Get("Content-Type"), rec.Body.String())
	}
}

// TestStripPrefix: the handler works mounted under a prefix; Location is
// relative to the handler, as documented.
func TestStripPrefix(t *testing.T) {
	e := newTestEnv(t)
	e.prefix = "/identity"
	rec := e.do(t, "POST", base+"/users", e.allKey, newUserBody("ada", "ada@example.com"))
	wantStatus(t, rec, 201)
	if got, want := rec.Header().Get("Location"), "/t/acme/api/v1/users/1"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	wantJSON(t, e.do(t, "GET", base+"/users/1", e.allKey, nil), 200, userJSON("1", "ada", "ada@example.com", "Someone", true))
	wantNoContent(t, e.do(t, "PUT", base+"/users/1/attributes/a%2Fb", e.allKey, map[string]any{"value": "x"}))
	wantJSON(t, e.do(t, "GET", base+"/users/1/attributes", e.allKey, nil), 200, `{"attributes":{"a/b":"x"}}`)
	wantProblem(t, e.do(t, "GET", base+"/nosuch", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "PATCH", base+"/users", e.allKey, nil), 405, "method_not_allowed")
	wantStatus(t, e.do(t, "GET", base+"/openapi.yaml", "", nil), 200)
}

// TestResponseHeaders: JSON responses are not to be cached.
func TestResponseHeaders(t *testing.T) {
	e := newTestEnv(t)
	for _, rec := range []*httptest.ResponseRecorder{
		e.do(t, "GET", base+"/users", e.allKey, nil),
		e.do(t, "GET", base+"/users/1", e.allKey, nil),
		e.do(t, "POST", base+"/webhooks", e.allKey, map[string]any{"url": "https://b.example.com", "events": []string{"session.revoked"}}),
	} {
		if got := rec.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", got)
		}
	}
}
