package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// attributeEnv returns a test env whose workspace "acme" has users 1-5
// (ada, bob, carol, dave, erin) with these attributes: dept sales (ada,
// carol, erin, who is disabled), Sales (bob), sales:east (dave); team ""
// (ada); cost center 4711 (bob). Workspace "other" has a user with dept
// sales.
func attributeEnv(t *testing.T) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	ctx := t.Context()
	attrs := []map[string]string{
		{"dept": "sales", "team": ""},
		{"dept": "Sales", "cost center": "4711"},
		{"dept": "sales"},
		{"dept": "sales:east"},
		{"dept": "sales"},
	}
	for i, name := range []string{"ada", "bob", "carol", "dave", "erin"} {
		u := e.createUser(t, name)
		for k, v := range attrs[i] {
			if _, err := e.ws.SetAttribute(ctx, u.ID, k, v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.ws.DisableUser(ctx, 5); err != nil {
		t.Fatal(err)
	}
	other, err := e.svc.GetWorkspace(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	u, err := other.CreateUser(ctx, identity.NewUser{Username: "olga", Email: "olga@example.com", FullName: "Olga", Password: "pw-olga-long"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.SetAttribute(ctx, u.ID, "dept", "sales", nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// userPage is a page of users as the tests compare it: the ids and meta.
type userPage struct {
	IDs                  []int64
	Total, Offset, Limit int
}

// readUserPage decodes a 200 page of users.
func readUserPage(t *testing.T, body []byte) userPage {
	t.Helper()
	var p struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
		Meta struct {
			Total  int `json:"total"`
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("page %s: %v", body, err)
	}
	if p.Data == nil {
		t.Errorf("page %s: data is not an array", body)
	}
	out := userPage{Total: p.Meta.Total, Offset: p.Meta.Offset, Limit: p.Meta.Limit}
	for _, u := range p.Data {
		out.IDs = append(out.IDs, u.ID)
	}
	return out
}

// TestFindUsersByAttribute: GET /users?attribute=KEY:VALUE pages through
// the users whose attribute has exactly the value, split at the first
// colon, with offset and limit as the list has them; bad input is 422
// naming attribute (or the page parameter), a malformed query 400.
func TestFindUsersByAttribute(t *testing.T) {
	e := attributeEnv(t)
	tests := []struct {
		name   string
		query  string
		want   userPage
		status int      // for a problem
		code   string   // of the problem
		fields []string // of the problem
	}{
		{name: "the first page", query: "attribute=dept:sales", want: userPage{[]int64{1, 3, 5}, 3, 0, 20}},
		{name: "a page", query: "attribute=dept:sales&offset=1&limit=1", want: userPage{[]int64{3}, 3, 1, 1}},
		{name: "the last page", query: "attribute=dept:sales&offset=2&limit=100", want: userPage{[]int64{5}, 3, 2, 100}},
		{name: "past the end", query: "attribute=dept:sales&offset=3", want: userPage{nil, 3, 3, 20}},
		{name: "split at the first colon", query: "attribute=dept:sales:east", want: userPage{[]int64{4}, 1, 0, 20}},
		{name: "case counts", query: "attribute=dept:Sales", want: userPage{[]int64{2}, 1, 0, 20}},
		{name: "not a prefix", query: "attribute=dept:sale", want: userPage{nil, 0, 0, 20}},
		{name: "the empty value", query: "attribute=team:", want: userPage{[]int64{1}, 1, 0, 20}},
		{name: "an escaped key", query: "attribute=cost%20center:4711", want: userPage{[]int64{2}, 1, 0, 20}},
		{name: "a plus for a space", query: "attribute=cost+center:4711", want: userPage{[]int64{2}, 1, 0, 20}},
		{name: "an escaped colon", query: "attribute=dept%3Asales", want: userPage{[]int64{1, 3, 5}, 3, 0, 20}},
		{name: "no such value", query: "attribute=dept:nobody", want: userPage{nil, 0, 0, 20}},
		{name: "the first of two", query: "attribute=dept:Sales&attribute=dept:sales", want: userPage{[]int64{2}, 1, 0, 20}},

		{name: "no colon", query: "attribute=dept", status: 422, code: "invalid", fields: []string{"attribute format"}},
		{name: "no value at all", query: "attribute=", status: 422, code: "invalid", fields: []string{"attribute format"}},
		{name: "no equals sign", query: "attribute", status: 422, code: "invalid", fields: []string{"attribute format"}},
		{name: "empty key", query: "attribute=:sales", status: 422, code: "invalid", fields: []string{"attribute required"}},
		{name: "key too long", query: "attribute=" + strings.Repeat("k", 65) + ":v", status: 422, code: "invalid", fields: []string{"attribute max_length"}},
		{name: "value too long", query: "attribute=k:" + strings.Repeat("v", 1025), status: 422, code: "invalid", fields: []string{"attribute max_length"}},
		{name: "NUL in the value", query: "attribute=dept:a%00b", status: 422, code: "invalid", fields: []string{"attribute control_character"}},
		{name: "key not UTF-8", query: "attribute=%ff:sales", status: 422, code: "invalid", fields: []string{"attribute utf8"}},
		{name: "with search", query: "attribute=dept:sales&search=a", status: 422, code: "invalid", fields: []string{"attribute not_allowed"}},
		{name: "with an empty search", query: "search=&attribute=dept:sales", status: 422, code: "invalid", fields: []string{"attribute not_allowed"}},
		{name: "bad page", query: "attribute=dept:sales&offset=-1&limit=101", status: 422, code: "invalid", fields: []string{"offset range", "limit range"}},
		{name: "page not integers", query: "attribute=dept:sales&limit=abc", status: 422, code: "invalid", fields: []string{"limit type"}},
		{name: "every adapter problem", query: "attribute=dept&search=x&offset=x", status: 422, code: "invalid",
			fields: []string{"offset type", "attribute format", "attribute not_allowed"}},
		{name: "key and value both", query: "attribute=:a%00", status: 422, code: "invalid",
			fields: []string{"attribute required", "attribute control_character"}},
		{name: "malformed query", query: "attribute=dept:sales&offset=%zz", status: 400, code: "malformed_query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(t, "GET", base+"/users?"+tt.query, e.allKey, nil)
			if tt.status != 0 {
				wantProblem(t, rec, tt.status, tt.code, tt.fields...)
				return
			}
			wantStatus(t, rec, http.StatusOK)
			if diff := cmp.Diff(tt.want, readUserPage(t, rec.Body.Bytes())); diff != "" {
				t.Errorf("GET /users?%s mismatch (-want +got):\n%s", tt.query, diff)
			}
		})
	}

	// The problem names the part of attribute the library refused.
	p := wantProblem(t, e.do(t, "GET", base+"/users?attribute=:a%00", e.allKey, nil), 422, "invalid")
	var messages []string
	for _, f := range p.Errors {
		messages = append(messages, strings.Fields(f.Message)[1])
	}
	if diff := cmp.Diff([]string{"key", "value"}, messages); diff != "" {
		t.Errorf("messages %v do not name the key, then the value (-want +got):\n%s", p.Errors, diff)
	}

	// The users are the list's users, whole.
	found := decode(t, e.do(t, "GET", base+"/users?attribute=dept:sales:east", e.allKey, nil)).(map[string]any)["data"].([]any)
	if diff := cmp.Diff(decode(t, e.do(t, "GET", base+"/users/4", e.allKey, nil)), found[0]); diff != "" {
		t.Errorf("the user found differs from GET /users/4 (-want +got):\n%s", diff)
	}

	// It follows changes at once.
	ctx := t.Context()
	if _, err := e.ws.SetAttribute(ctx, 2, "dept", "sales", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.DeleteAttribute(ctx, 3, "dept", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.DeleteUserPermanently(ctx, 5); err != nil {
		t.Fatal(err)
	}
	rec := e.do(t, "GET", base+"/users?attribute=dept:sales", e.allKey, nil)
	wantStatus(t, rec, http.StatusOK)
	if diff := cmp.Diff(userPage{[]int64{1, 2}, 2, 0, 20}, readUserPage(t, rec.Body.Bytes())); diff != "" {
		t.Errorf("after changes mismatch (-want +got):\n%s", diff)
	}
}

// TestFindUsersNeedsBothScopes: with attribute, users:read alone or
// user_attributes:read alone is 403 naming both, as every route refuses a
// missing scope, before the query is validated, however the parameter's
// name is written; without it, users:read suffices.
func TestFindUsersNeedsBothScopes(t *testing.T) {
	e := attributeEnv(t)
	both := mustKey(t, e.ws, identity.ScopeUsersRead, identity.ScopeUserAttributesRead)
	const challenge = `Bearer error="insufficient_scope", scope="users:read user_attributes:read"`
	for _, query := range []string{
		"attribute=dept:sales",
		"attribute=dept",             // invalid: the scope comes first
		"attribute",                  // no value
		"%61ttribute=dept:sales",     // the name escaped
		"attribute=dept:sales&a=%zz", // malformed elsewhere
	} {
		for name, key := range map[string]string{"users:read": e.keys[identity.ScopeUsersRead], "user_attributes:read": e.keys[identity.ScopeUserAttributesRead]} {
			rec := e.do(t, "GET", base+"/users?"+query, key, nil)
			wantProblem(t, rec, http.StatusForbidden, "forbidden")
			if got := rec.Header().Get("WWW-Authenticate"); got != challenge {
				t.Errorf("GET /users?%s with %s only: WWW-Authenticate %q, want %q", query, name, got, challenge)
			}
		}
	}
	wantStatus(t, e.do(t, "GET", base+"/users?attribute=dept:sales", both, nil), http.StatusOK)
	wantStatus(t, e.do(t, "GET", base+"/users?%61ttribute=dept:sales", both, nil), http.StatusOK)
	wantProblem(t, e.do(t, "GET", base+"/users?attribute=dept", both, nil), 422, "invalid", "attribute format")
	wantProblem(t, e.do(t, "GET", base+"/users?attribute=dept:sales&a=%zz", both, nil), 400, "malformed_query")

	// Without attribute, the list needs users:read alone; attribute-like
	// names are other parameters.
	for _, query := range []string{"", "search=a", "attributes=dept:sales", "limit=5&x=attribute"} {
		wantStatus(t, e.do(t, "GET", base+"/users?"+query, e.keys[identity.ScopeUsersRead], nil), http.StatusOK)
	}
	// A pair the query parser drops (a semicolon in it) names nothing: the
	// request is refused as malformed, after authorization by the list's
	// scope.
	wantProblem(t, e.do(t, "GET", base+"/users?attribute=dept:sales;x", e.keys[identity.ScopeUsersRead], nil), 400, "malformed_query")

	// Authentication and the workspace come first, as on every route.
	wantProblem(t, e.do(t, "GET", base+"/users?attribute=dept:sales", "", nil), http.StatusUnauthorized, "unauthenticated")
	rec := e.do(t, "GET", base+"/users?attribute=dept:sales", e.otherKey, nil)
	wantProblem(t, rec, http.StatusForbidden, "forbidden")
	if got := rec.Header().Get("WWW-Authenticate"); got != "" {
		t.Errorf("a key of another workspace: WWW-Authenticate %q, want none", got)
	}
}

// TestFindUsersDocumented: the document gives the list operation the
// scopes a request with attribute needs, as the handler checks them.
func TestFindUsersDocumented(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	op := doc.Paths.Value("/t/{slug}/api/v1/users").Get
	got, _ := op.Extensions["x-required-scope-by-parameter"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"attribute": "users:read user_attributes:read"}, got); diff != "" {
		t.Errorf("x-required-scope-by-parameter mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(op.Description, "`user_attributes:read`") {
		t.Error("the description does not name user_attributes:read")
	}
	var names []string
	for _, p := range op.Parameters {
		names = append(names, p.Value.Name)
	}
	if diff := cmp.Diff([]string{"search", "attribute", "offset", "limit"}, names); diff != "" {
		t.Errorf("parameters mismatch (-want +got):\n%s", diff)
	}
}
