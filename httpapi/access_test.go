package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// namedJSON is the JSON of a role or a group created (and last changed)
// at testNow.
func namedJSON(id, name, description string) string {
	return `{"id":` + id + `,"name":"` + name + `","description":"` + description +
		`","createdAt":"` + testNowJSON + `","updatedAt":"` + testNowJSON + `"}`
}

// page is the JSON of a page of items.
func page(total, offset, limit string, items ...string) string {
	return `{"data":[` + strings.Join(items, ",") + `],"meta":{"total":` + total + `,"offset":` + offset + `,"limit":` + limit + `}}`
}

// wantProblemJSON fails the test unless rec is a problem+json response
// with the status and exactly the body want (a JSON text).
func wantProblemJSON(tb testing.TB, rec *httptest.ResponseRecorder, status int, want string) {
	tb.Helper()
	wantStatus(tb, rec, status)
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		tb.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("bad want %q: %v", want, err)
	}
	if diff := cmp.Diff(w, decode(tb, rec)); diff != "" {
		tb.Errorf("body mismatch (-want +got):\n%s", diff)
	}
}

// namedKinds are the two kinds of named records, which share every rule
// of the API: roles and groups.
var namedKinds = []struct{ collection, what string }{{"roles", "role"}, {"groups", "group"}}

// TestNamedCreate: POST answers 201 with the record, its Location and its
// ETag, which GET then serves.
func TestNamedCreate(t *testing.T) {
	for _, k := range namedKinds {
		t.Run(k.collection, func(t *testing.T) {
			e := newTestEnv(t)
			rec := e.do(t, "POST", base+"/"+k.collection, e.allKey, map[string]any{"name": "eng.backend:ops_1-a", "description": "line one\n\tline two"})
			wantJSON(t, rec, 201, namedJSON("1", "eng.backend:ops_1-a", `line one\n\tline two`))
			if got, want := rec.Header().Get("Location"), base+"/"+k.collection+"/1"; got != want {
				t.Errorf("Location %q, want %q", got, want)
			}
			tag := wantETag(t, rec)
			// No description: the empty one.
			wantJSON(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, map[string]any{"name": "second"}), 201, namedJSON("2", "second", ""))

			got := e.do(t, "GET", rec.Header().Get("Location"), e.allKey, nil)
			wantJSON(t, got, 200, namedJSON("1", "eng.backend:ops_1-a", `line one\n\tline two`))
			if g := wantETag(t, got); g != tag {
				t.Errorf("GET ETag %s, POST gave %s", g, tag)
			}
			// Unknown members are ignored, as everywhere.
			wantJSON(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, `{"name":"third","id":9,"members":[1]}`), 201, namedJSON("3", "third", ""))
		})
	}
}

// TestNamedValidation: 422 with the library's field errors, every one.
func TestNamedValidation(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"empty body", `{}`, []string{"name required"}},
		{"empty name", `{"name":""}`, []string{"name required"}},
		{"upper case", `{"name":"Admin"}`, []string{"name pattern"}},
		{"space", `{"name":"a b"}`, []string{"name pattern"}},
		{"slash", `{"name":"eng/backend"}`, []string{"name pattern"}},
		{"65 characters", `{"name":"` + strings.Repeat("a", 65) + `"}`, []string{"name max_length"}},
		{"long description", `{"name":"a","description":"` + strings.Repeat("d", 1025) + `"}`, []string{"description max_length"}},
		{"control character", `{"name":"a","description":"bell\u0007"}`, []string{"description control_character"}},
		{"both", `{"name":"A","description":"` + strings.Repeat("d", 1025) + `"}`, []string{"name pattern", "description max_length"}},
		{"number name", `{"name":7}`, []string{"name type"}},
		{"null description", `{"name":"a","description":null}`, []string{"description type"}},
		{"array body", `["a"]`, []string{"body type"}},
		{"invalid UTF-8", "{\"name\":\"a\",\"description\":\"\xff\"}", []string{"description utf8"}},
	}
	for _, k := range namedKinds {
		e := newTestEnv(t)
		e.seed(t)
		before := e.do(t, "GET", base+"/"+k.collection, e.allKey, nil).Body.String()
		for _, tt := range tests {
			t.Run(k.collection+" POST "+tt.name, func(t *testing.T) {
				wantProblem(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, tt.body), 422, "invalid", tt.fields...)
			})
			t.Run(k.collection+" PUT "+tt.name, func(t *testing.T) {
				wantProblem(t, e.do(t, "PUT", base+"/"+k.collection+"/1", e.allKey, tt.body), 422, "invalid", tt.fields...)
			})
		}
		wantProblemJSON(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, `{"name":"Ops"}`), 422,
			`{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"invalid `+k.what+`","code":"invalid",
			"errors":[{"field":"name","rule":"pattern","message":"must be lowercase letters, digits and . _ : -"}]}`)
		// Nothing refused was stored or changed.
		if after := e.do(t, "GET", base+"/"+k.collection, e.allKey, nil).Body.String(); after != before {
			t.Errorf("%s: refusals changed the list from %s to %s", k.collection, before, after)
		}
		// 64 characters is the bound.
		wantStatus(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, `{"name":"`+strings.Repeat("a", 64)+`"}`), 201)
	}
}

// TestNamedConflict: a name another record of the kind has, ignoring case,
// is 409 naming the field; the other kind's names do not count.
func TestNamedConflict(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // role 1 admin, role 2 viewer, group 1 staff
	wantProblemJSON(t, e.do(t, "POST", base+"/roles", e.allKey, map[string]any{"name": "admin"}), 409,
		`{"type":"about:blank","title":"Conflict","status":409,"detail":"the role name is taken","code":"conflict",
		"errors":[{"field":"name","rule":"taken","message":"is taken by role 1"}]}`)
	wantProblem(t, e.do(t, "PUT", base+"/roles/2", e.allKey, map[string]any{"name": "admin"}), 409, "conflict", "name taken")
	wantProblemJSON(t, e.do(t, "POST", base+"/groups", e.allKey, map[string]any{"name": "staff"}), 409,
		`{"type":"about:blank","title":"Conflict","status":409,"detail":"the group name is taken","code":"conflict",
		"errors":[{"field":"name","rule":"taken","message":"is taken by group 1"}]}`)
	// A role and a group may share a name; a record's own name is no
	// conflict.
	wantJSON(t, e.do(t, "POST", base+"/groups", e.allKey, map[string]any{"name": "admin"}), 201, namedJSON("2", "admin", ""))
	wantJSON(t, e.do(t, "PUT", base+"/roles/1", e.allKey, map[string]any{"name": "admin", "description": "all"}), 200, namedJSON("1", "admin", "all"))
}

// TestNamedUpdate: PUT replaces name and description (an omitted
// description is the empty one); assignments follow the id.
func TestNamedUpdate(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	ctx := t.Context()
	if _, err := e.ws.UpdateRole(ctx, 1, identity.RoleUpdate{Name: "admin", Description: "all rights"}); err != nil {
		t.Fatal(err)
	}
	rec := e.do(t, "PUT", base+"/roles/1", e.allKey, map[string]any{"name": "administrator"})
	wantJSON(t, rec, 200, namedJSON("1", "administrator", ""))
	wantJSON(t, e.do(t, "GET", base+"/roles/1", e.allKey, nil), 200, namedJSON("1", "administrator", ""))
	rec = e.do(t, "PUT", base+"/groups/1", e.allKey, map[string]any{"name": "employees", "description": "everyone"})
	wantJSON(t, rec, 200, namedJSON("1", "employees", "everyone"))
	// Ada holds the renamed role through the renamed group.
	wantJSON(t, e.do(t, "GET", base+"/users/1/roles", e.allKey, nil), 200,
		`{"roles":[`+strings.TrimSuffix(namedJSON("1", "administrator", ""), "}")+`,"direct":true,"groups":[{"id":1,"name":"employees"}]}]}`)
	wantProblem(t, e.do(t, "PUT", base+"/roles/9", e.allKey, map[string]any{"name": "x"}), 404, "not_found")
	wantProblem(t, e.do(t, "PUT", base+"/groups/9", e.allKey, map[string]any{"name": "x"}), 404, "not_found")
}

// TestNamedDelete: DELETE answers 204 and takes what refers to the record
// along; the id then names nothing.
func TestNamedDelete(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // ada holds admin directly and through staff
	wantNoContent(t, e.do(t, "DELETE", base+"/groups/1", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/groups/1", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "GET", base+"/groups/1", e.allKey, nil), 404, "not_found")
	wantJSON(t, e.do(t, "GET", base+"/users/1/groups", e.allKey, nil), 200, `{"groups":[]}`)
	wantJSON(t, e.do(t, "GET", base+"/users/1/roles", e.allKey, nil), 200,
		`{"roles":[`+strings.TrimSuffix(namedJSON("1", "admin", ""), "}")+`,"direct":true,"groups":[]}]}`)
	wantNoContent(t, e.do(t, "DELETE", base+"/roles/1", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/roles/1", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "GET", base+"/roles/1/users", e.allKey, nil), 404, "not_found")
	if body := e.do(t, "GET", base+"/users/1/roles", e.allKey, nil).Body.String(); body != `{"roles":[]}` {
		t.Errorf("roles %s, want {\"roles\":[]}", body)
	}
	// Ids are never reused.
	wantJSON(t, e.do(t, "POST", base+"/roles", e.allKey, map[string]any{"name": "admin"}), 201, namedJSON("3", "admin", ""))
	wantJSON(t, e.do(t, "POST", base+"/groups", e.allKey, map[string]any{"name": "staff"}), 201, namedJSON("2", "staff", ""))
}

// TestNamedList: pages in id order with total, offset and limit as the
// user list has them; search is a case-insensitive literal name prefix.
func TestNamedList(t *testing.T) {
	for _, k := range namedKinds {
		t.Run(k.collection, func(t *testing.T) {
			e := newTestEnv(t)
			wantJSON(t, e.do(t, "GET", base+"/"+k.collection, e.allKey, nil), 200, page("0", "0", "20"))
			if body := e.do(t, "GET", base+"/"+k.collection, e.allKey, nil).Body.String(); body != `{"data":[],"meta":{"total":0,"offset":0,"limit":20}}` {
				t.Errorf("empty page %s", body)
			}
			for _, name := range []string{"eng", "eng.backend", "ops", "eng_a"} {
				wantStatus(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, map[string]any{"name": name}), 201)
			}
			eng, backend, ops, engA := namedJSON("1", "eng", ""), namedJSON("2", "eng.backend", ""), namedJSON("3", "ops", ""), namedJSON("4", "eng_a", "")
			tests := []struct{ query, want string }{
				{"", page("4", "0", "20", eng, backend, ops, engA)},
				{"?offset=1&limit=2", page("4", "1", "2", backend, ops)},
				{"?offset=3", page("4", "3", "20", engA)},
				{"?offset=9", page("4", "9", "20")},
				{"?limit=100", page("4", "0", "100", eng, backend, ops, engA)},
				{"?search=ENG", page("3", "0", "20", eng, backend, engA)},
				{"?search=eng.&limit=1", page("1", "0", "1", backend)},
				{"?search=eng&offset=1&limit=1", page("3", "1", "1", backend)},
				{"?search=eng_", page("1", "0", "20", engA)}, // "_" is no wildcard
				{"?search=e%25", page("0", "0", "20")},
				{"?search=", page("4", "0", "20", eng, backend, ops, engA)},
			}
			for _, tt := range tests {
				t.Run(tt.query, func(t *testing.T) {
					wantJSON(t, e.do(t, "GET", base+"/"+k.collection+tt.query, e.allKey, nil), 200, tt.want)
				})
			}
			for query, fields := range map[string][]string{
				"?limit=0":            {"limit range"},
				"?limit=101":          {"limit range"},
				"?offset=-1&limit=0":  {"offset range", "limit range"},
				"?offset=x&limit=y":   {"offset type", "limit type"},
				"?offset=1.5":         {"offset type"},
				"?search=%FF":         {"search utf8"},
				"?limit=99999999999x": {"limit type"},
			} {
				wantProblem(t, e.do(t, "GET", base+"/"+k.collection+query, e.allKey, nil), 422, "invalid", fields...)
			}
			wantProblem(t, e.do(t, "GET", base+"/"+k.collection+"?limit=%zz", e.allKey, nil), 400, "malformed_query")
		})
	}
}

// TestRoleHolders: the users holding a role directly or through groups,
// each once, in id order, paged with their total; disabled users too.
func TestRoleHolders(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // ada (1) holds admin (1) directly and through staff (1)
	ctx := t.Context()
	e.createUser(t, "bob")   // 2: through staff
	e.createUser(t, "carol") // 3: directly
	e.createUser(t, "dave")  // 4: nothing
	e.createUser(t, "erin")  // 5: through ops, disabled
	ops, err := e.ws.CreateGroup(ctx, identity.NewGroup{Name: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{
		e.ws.AddGroupMember(ctx, 1, 2),
		e.ws.AssignRole(ctx, 3, 1),
		e.ws.AddGroupMember(ctx, ops.ID, 5),
		e.ws.AssignGroupRole(ctx, ops.ID, 1),
		e.ws.DisableUser(ctx, 5),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	ada, bob, carol := userJSON("1", "ada", "ada@example.com", "Ada", true), userJSON("2", "bob", "bob@example.com", "Bob", true), userJSON("3", "carol", "carol@example.com", "Carol", true)
	erin := userJSON("5", "erin", "erin@example.com", "Erin", false)
	tests := []struct{ path, want string }{
		{"/roles/1/users", page("4", "0", "20", ada, bob, carol, erin)},
		{"/roles/1/users?offset=1&limit=2", page("4", "1", "2", bob, carol)},
		{"/roles/1/users?offset=4", page("4", "4", "20")},
		{"/roles/2/users", page("0", "0", "20")},
		{"/groups/1/members", page("2", "0", "20", ada, bob)},
		{"/groups/1/members?limit=1", page("2", "0", "1", ada)},
		{"/groups/2/members?offset=0", page("1", "0", "20", erin)},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			wantJSON(t, e.do(t, "GET", base+tt.path, e.allKey, nil), 200, tt.want)
		})
	}
	wantProblem(t, e.do(t, "GET", base+"/roles/1/users?limit=101", e.allKey, nil), 422, "invalid", "limit range")
	wantProblem(t, e.do(t, "GET", base+"/groups/1/members?offset=x", e.allKey, nil), 422, "invalid", "offset type")
	wantProblem(t, e.do(t, "GET", base+"/roles/3/users", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "GET", base+"/groups/3/members", e.allKey, nil), 404, "not_found")
}

// TestGroupMembership: PUT makes a member (again: 204), DELETE ends it
// (again: 404); unknown ids are 404, the group's first.
func TestGroupMembership(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	e.createUser(t, "bob")
	for range 2 {
		wantNoContent(t, e.do(t, "PUT", base+"/groups/1/members/2", e.allKey, nil))
	}
	// A body is not read.
	wantNoContent(t, e.do(t, "PUT", base+"/groups/1/members/2", e.allKey, "not json", "Content-Type", "text/plain"))
	wantJSON(t, e.do(t, "GET", base+"/users/2/groups", e.allKey, nil), 200, `{"groups":[`+namedJSON("1", "staff", "")+`]}`)
	wantNoContent(t, e.do(t, "DELETE", base+"/groups/1/members/2", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/groups/1/members/2", e.allKey, nil), 404, "not_found")
	if body := e.do(t, "GET", base+"/users/2/groups", e.allKey, nil).Body.String(); body != `{"groups":[]}` {
		t.Errorf("groups %s, want {\"groups\":[]}", body)
	}
	for _, path := range []string{"/groups/1/members/9", "/groups/9/members/1"} {
		wantProblem(t, e.do(t, "PUT", base+path, e.allKey, nil), 404, "not_found")
		wantProblem(t, e.do(t, "DELETE", base+path, e.allKey, nil), 404, "not_found")
	}
	p := wantProblem(t, e.do(t, "PUT", base+"/groups/9/members/9", e.allKey, nil), 404, "not_found")
	if p.Detail != "group 9 not found" {
		t.Errorf("detail %q, want the group named first", p.Detail)
	}
}

// TestGroupRoles: PUT makes a group carry a role (again: 204), GET lists
// them, DELETE ends one (again: 404).
func TestGroupRoles(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // staff carries admin
	admin, viewer := namedJSON("1", "admin", ""), namedJSON("2", "viewer", "")
	wantJSON(t, e.do(t, "GET", base+"/groups/1/roles", e.allKey, nil), 200, `{"roles":[`+admin+`]}`)
	for range 2 {
		wantNoContent(t, e.do(t, "PUT", base+"/groups/1/roles/2", e.allKey, nil))
	}
	wantJSON(t, e.do(t, "GET", base+"/groups/1/roles", e.allKey, nil), 200, `{"roles":[`+admin+`,`+viewer+`]}`)
	wantNoContent(t, e.do(t, "DELETE", base+"/groups/1/roles/1", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/groups/1/roles/1", e.allKey, nil), 404, "not_found")
	wantJSON(t, e.do(t, "GET", base+"/groups/1/roles", e.allKey, nil), 200, `{"roles":[`+viewer+`]}`)
	wantProblem(t, e.do(t, "PUT", base+"/groups/1/roles/9", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "PUT", base+"/groups/9/roles/1", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "GET", base+"/groups/9/roles", e.allKey, nil), 404, "not_found")

	wantStatus(t, e.do(t, "POST", base+"/groups", e.allKey, map[string]any{"name": "empty"}), 201)
	if body := e.do(t, "GET", base+"/groups/2/roles", e.allKey, nil).Body.String(); body != `{"roles":[]}` {
		t.Errorf("roles %s, want {\"roles\":[]}", body)
	}
}

// TestEffectiveRoles: a user's roles, each once with its sources: a role
// held directly and through two groups, one through a group only, one
// directly only.
func TestEffectiveRoles(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // ada: admin (1) directly and through staff (1)
	ctx := t.Context()
	ops, err := e.ws.CreateGroup(ctx, identity.NewGroup{Name: "ops", Description: "on call"})
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := e.ws.CreateRole(ctx, identity.NewRole{Name: "deploy", Description: "ships releases"})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/groups/2/members/1", "/groups/2/roles/1", "/groups/2/roles/3"} {
		wantNoContent(t, e.do(t, "PUT", base+path, e.allKey, nil))
	}
	wantNoContent(t, e.do(t, "POST", base+"/users/1/roles/2", e.allKey, nil))
	if ops.ID != 2 || deploy.ID != 3 {
		t.Fatalf("ids %d, %d; want 2 and 3", ops.ID, deploy.ID)
	}
	wantJSON(t, e.do(t, "GET", base+"/users/1/roles", e.allKey, nil), 200, `{"roles":[
		{"id":1,"name":"admin","description":"","createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`",
		 "direct":true,"groups":[{"id":1,"name":"staff"},{"id":2,"name":"ops"}]},
		{"id":2,"name":"viewer","description":"","createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`",
		 "direct":true,"groups":[]},
		{"id":3,"name":"deploy","description":"ships releases","createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`",
		 "direct":false,"groups":[{"id":2,"name":"ops"}]}]}`)
	wantJSON(t, e.do(t, "GET", base+"/users/1/groups", e.allKey, nil), 200,
		`{"groups":[`+namedJSON("1", "staff", "")+`,`+namedJSON("2", "ops", "on call")+`]}`)

	// Removing the direct assignment leaves what the groups give; the
	// holders still list ada once.
	wantNoContent(t, e.do(t, "DELETE", base+"/users/1/roles/1", e.allKey, nil))
	wantProblem(t, e.do(t, "DELETE", base+"/users/1/roles/3", e.allKey, nil), 404, "not_found") // inherited only
	wantJSON(t, e.do(t, "GET", base+"/users/1/roles", e.allKey, nil), 200, `{"roles":[
		{"id":1,"name":"admin","description":"","createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`",
		 "direct":false,"groups":[{"id":1,"name":"staff"},{"id":2,"name":"ops"}]},
		{"id":2,"name":"viewer","description":"","createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`",
		 "direct":true,"groups":[]},
		{"id":3,"name":"deploy","description":"ships releases","createdAt":"`+testNowJSON+`","updatedAt":"`+testNowJSON+`",
		 "direct":false,"groups":[{"id":2,"name":"ops"}]}]}`)
	wantJSON(t, e.do(t, "GET", base+"/roles/1/users", e.allKey, nil), 200, page("1", "0", "20", userJSON("1", "ada", "ada@example.com", "Ada", true)))

	// A user with nothing: [] and never null.
	e.createUser(t, "bob")
	for path, want := range map[string]string{"/users/2/roles": `{"roles":[]}`, "/users/2/groups": `{"groups":[]}`} {
		if body := e.do(t, "GET", base+path, e.allKey, nil).Body.String(); body != want {
			t.Errorf("GET %s: %s, want %s", path, body, want)
		}
	}
	wantProblem(t, e.do(t, "GET", base+"/users/9/roles", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "GET", base+"/users/9/groups", e.allKey, nil), 404, "not_found")
}

// TestAssignUnknownRole: assigning a role that does not exist is 404 now
// that roles are records; the user is checked first.
func TestAssignUnknownRole(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	wantProblemJSON(t, e.do(t, "POST", base+"/users/1/roles/9", e.allKey, nil), 404,
		`{"type":"about:blank","title":"Not Found","status":404,"detail":"role 9 not found","code":"not_found"}`)
	wantProblemJSON(t, e.do(t, "POST", base+"/users/9/roles/9", e.allKey, nil), 404,
		`{"type":"about:blank","title":"Not Found","status":404,"detail":"user 9 not found","code":"not_found"}`)
}

// TestNamedScopes: the listings of users through a role or a group need
// users:read besides the record's read scope; a key with one of the two
// is refused with a challenge naming both. TestScopes covers the keys of
// one scope on every route.
func TestNamedScopes(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	tests := []struct {
		path    string
		scopes  []identity.Scope
		status  int
		missing string
	}{
		{"/roles/1/users", []identity.Scope{identity.ScopeRolesRead, identity.ScopeUsersRead}, 200, ""},
		{"/roles/1/users", []identity.Scope{identity.ScopeRolesRead, identity.ScopeRolesWrite}, 403, "roles:read users:read"},
		{"/roles/1/users", []identity.Scope{identity.ScopeUsersRead}, 403, "roles:read users:read"},
		{"/groups/1/members", []identity.Scope{identity.ScopeGroupsRead, identity.ScopeUsersRead}, 200, ""},
		{"/groups/1/members", []identity.Scope{identity.ScopeGroupsRead}, 403, "groups:read users:read"},
		{"/groups/1/members", []identity.Scope{identity.ScopeUsersRead, identity.ScopeGroupsWrite}, 403, "groups:read users:read"},
		{"/groups/1/roles", []identity.Scope{identity.ScopeGroupsRead}, 200, ""},
		{"/groups/1/roles", []identity.Scope{identity.ScopeRolesRead}, 403, "groups:read"},
		{"/users/1/roles", []identity.Scope{identity.ScopeRolesRead}, 403, "users:read"},
		{"/users/1/groups", []identity.Scope{identity.ScopeGroupsRead}, 403, "users:read"},
		{"/roles", []identity.Scope{identity.ScopeRolesWrite}, 403, "roles:read"},
		{"/groups/1", []identity.Scope{identity.ScopeGroupsWrite, identity.ScopeRolesRead}, 403, "groups:read"},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+strings.Join(stringsOf(tt.scopes), ","), func(t *testing.T) {
			rec := e.do(t, "GET", base+tt.path, mustKey(t, e.ws, tt.scopes...), nil)
			if tt.status == 200 {
				wantStatus(t, rec, 200)
				return
			}
			wantProblem(t, rec, 403, "forbidden")
			if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="`+tt.missing+`"`; got != want {
				t.Errorf("WWW-Authenticate %q, want %q", got, want)
			}
		})
	}
	// A write scope is needed for each write, the read scope not.
	key := mustKey(t, e.ws, identity.ScopeGroupsWrite)
	wantNoContent(t, e.do(t, "PUT", base+"/groups/1/roles/2", key, nil))
	wantProblem(t, e.do(t, "POST", base+"/roles", key, map[string]any{"name": "x"}), 403, "forbidden")
}

// TestNamedConditional: roles and groups carry an ETag on POST, GET and
// PUT; PUT evaluates If-Match and If-None-Match in its transaction, and
// GET answers a matching If-None-Match with 304.
func TestNamedConditional(t *testing.T) {
	const current, stale = "{current}", "{stale}"
	tests := []struct {
		name   string
		header []string
		status int
		code   string
	}{
		{"no condition", nil, 200, ""},
		{"If-Match current", []string{"If-Match", current}, 200, ""},
		{"If-Match stale", []string{"If-Match", stale}, 412, "precondition_failed"},
		{"If-Match one of two", []string{"If-Match", stale + ", " + current}, 200, ""},
		{"If-Match star", []string{"If-Match", "*"}, 200, ""},
		{"If-Match weak current", []string{"If-Match", "W/" + current}, 412, "precondition_failed"},
		{"If-None-Match star", []string{"If-None-Match", "*"}, 412, "precondition_failed"},
		{"If-None-Match current", []string{"If-None-Match", current}, 412, "precondition_failed"},
		{"If-None-Match stale", []string{"If-None-Match", stale}, 200, ""},
		{"If-Match malformed", []string{"If-Match", "abc"}, 400, "malformed_precondition"},
	}
	for _, k := range namedKinds {
		for _, tt := range tests {
			t.Run(k.collection+" "+tt.name, func(t *testing.T) {
				e := newTestEnv(t)
				path := base + "/" + k.collection + "/1"
				staleTag := wantETag(t, e.do(t, "POST", base+"/"+k.collection, e.allKey, map[string]any{"name": "first"}))
				currentTag := wantETag(t, e.do(t, "PUT", path, e.allKey, map[string]any{"name": "second"}))
				if currentTag == staleTag {
					t.Fatal("a rename kept the ETag")
				}
				tags := strings.NewReplacer(current, currentTag, stale, staleTag)
				header := make([]string, len(tt.header))
				for i, h := range tt.header {
					header[i] = tags.Replace(h)
				}
				rec := e.do(t, "PUT", path, e.allKey, map[string]any{"name": "third", "description": "d"}, header...)
				after := e.do(t, "GET", path, e.allKey, nil)
				if tt.code != "" {
					wantProblem(t, rec, tt.status, tt.code)
					wantJSON(t, after, 200, namedJSON("1", "second", ""))
					if got := wantETag(t, after); got != currentTag {
						t.Errorf("a refused PUT changed the ETag: %s, was %s", got, currentTag)
					}
					return
				}
				wantJSON(t, rec, 200, namedJSON("1", "third", "d"))
				tag := wantETag(t, rec)
				if tag == currentTag || wantETag(t, after) != tag {
					t.Errorf("PUT ETag %s (was %s), GET then %s: want a new one that GET serves", tag, currentTag, after.Header().Get("ETag"))
				}
			})
		}
		t.Run(k.collection+" GET", func(t *testing.T) {
			e := newTestEnv(t)
			path := base + "/" + k.collection + "/1"
			created := e.do(t, "POST", base+"/"+k.collection, e.allKey, map[string]any{"name": "first"})
			tag := wantETag(t, created)
			if got := wantETag(t, e.do(t, "GET", path, e.allKey, nil)); got != tag {
				t.Errorf("GET ETag %s, POST gave %s", got, tag)
			}
			for _, inm := range []string{tag, "W/" + tag, "*", `"0000000000000001", ` + tag} {
				rec := e.do(t, "GET", path, e.allKey, nil, "If-None-Match", inm)
				wantStatus(t, rec, 304)
				if rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag {
					t.Errorf("If-None-Match %s: 304 with body %q and ETag %q", inm, rec.Body.String(), rec.Header().Get("ETag"))
				}
			}
			wantJSON(t, e.do(t, "GET", path, e.allKey, nil, "If-None-Match", `"0000000000000001"`), 200, namedJSON("1", "first", ""))
			wantProblem(t, e.do(t, "GET", path, e.allKey, nil, "If-None-Match", "nonsense"), 400, "malformed_precondition")
			// A PUT that changes nothing keeps the version.
			same := e.do(t, "PUT", path, e.allKey, map[string]any{"name": "first"}, "If-Match", tag)
			wantJSON(t, same, 200, namedJSON("1", "first", ""))
			if got := wantETag(t, same); got != tag {
				t.Errorf("a PUT that changes nothing gave ETag %s, was %s", got, tag)
			}
			// A record that does not exist is 404 whatever the conditions.
			for _, h := range [][]string{{"If-Match", "*"}, {"If-Match", tag}, {"If-None-Match", "*"}} {
				wantProblem(t, e.do(t, "PUT", base+"/"+k.collection+"/7", e.allKey, map[string]any{"name": "x"}, h...), 404, "not_found")
			}
		})
	}
}

// TestNamedIdempotency: POST /roles and /groups take an Idempotency-Key
// as POST /users does: a retry gets the first response and creates
// nothing, a refusal is replayed, and a key is bound to one request of
// one route.
func TestNamedIdempotency(t *testing.T) {
	for _, k := range namedKinds {
		t.Run(k.collection, func(t *testing.T) {
			e := newTestEnv(t)
			path := base + "/" + k.collection
			body := map[string]any{"name": "ops", "description": "on call"}
			first := e.do(t, "POST", path, e.allKey, body, "Idempotency-Key", "create-ops")
			wantJSON(t, first, 201, namedJSON("1", "ops", "on call"))
			// The record changes; the replay is the first answer all the same.
			wantStatus(t, e.do(t, "PUT", path+"/1", e.allKey, map[string]any{"name": "operations"}), 200)
			again := e.do(t, "POST", path, e.allKey, body, "Idempotency-Key", "create-ops")
			sameResponse(t, first, again)
			wantETag(t, again)
			wantJSON(t, e.do(t, "GET", path, e.allKey, nil), 200, page("1", "0", "20", namedJSON("1", "operations", "")))

			wantProblem(t, e.do(t, "POST", path, e.allKey, map[string]any{"name": "other"}, "Idempotency-Key", "create-ops"), 422, "idempotency_key_reused")
			wantProblem(t, e.do(t, "POST", path, e.allKey, body, "Idempotency-Key", "a", "Idempotency-Key", "b"), 422, "invalid", "Idempotency-Key duplicate")
			wantProblem(t, e.do(t, "POST", path, e.allKey, body, "Idempotency-Key", strings.Repeat("k", 256)), 422, "invalid", "Idempotency-Key max_length")

			// A refusal by the library is the key's outcome too.
			taken := e.do(t, "POST", path, e.allKey, map[string]any{"name": "operations"}, "Idempotency-Key", "taken")
			wantProblem(t, taken, 409, "conflict", "name taken")
			wantNoContent(t, e.do(t, "DELETE", path+"/1", e.allKey, nil))
			sameResponse(t, taken, e.do(t, "POST", path, e.allKey, map[string]any{"name": "operations"}, "Idempotency-Key", "taken"))
		})
	}
	t.Run("a key on the other route", func(t *testing.T) {
		e := newTestEnv(t)
		body := map[string]any{"name": "ops"}
		wantStatus(t, e.do(t, "POST", base+"/roles", e.allKey, body, "Idempotency-Key", "k"), 201)
		for _, path := range []string{"/groups", "/users", "/webhooks"} {
			wantProblem(t, e.do(t, "POST", base+path, e.allKey, body, "Idempotency-Key", "k"), 422, "idempotency_key_reused")
		}
		list, err := e.ws.ListGroups(t.Context(), "", nil)
		if err != nil || list.Total != 0 {
			t.Errorf("%d groups (%v), want none", list.Total, err)
		}
	})
}

// TestNamedLimits: the workspace's limits are 409 limit_reached, and
// adding what is there already is not refused by them.
func TestNamedLimits(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // 2 roles, 1 group (ada in it, carrying admin)
	ctx := t.Context()
	set, err := e.ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set.Limits = identity.Limits{Roles: 2, Groups: 2, GroupsPerUser: 1, RolesPerGroup: 1}
	if err := e.ws.UpdateSettings(ctx, set); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, e.do(t, "POST", base+"/roles", e.allKey, map[string]any{"name": "third"}), 409, "limit_reached")
	wantJSON(t, e.do(t, "POST", base+"/groups", e.allKey, map[string]any{"name": "ops"}), 201, namedJSON("2", "ops", ""))
	wantProblem(t, e.do(t, "POST", base+"/groups", e.allKey, map[string]any{"name": "third"}), 409, "limit_reached")
	wantProblem(t, e.do(t, "PUT", base+"/groups/2/members/1", e.allKey, nil), 409, "limit_reached")
	wantNoContent(t, e.do(t, "PUT", base+"/groups/1/members/1", e.allKey, nil)) // a member already
	wantProblem(t, e.do(t, "PUT", base+"/groups/1/roles/2", e.allKey, nil), 409, "limit_reached")
	wantNoContent(t, e.do(t, "PUT", base+"/groups/1/roles/1", e.allKey, nil)) // carried already
}

// TestNamedEvents: the writes through the API emit the library's events,
// and a no-op emits none.
func TestNamedEvents(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	events := make([]string, 0, len(identity.EventTypes()))
	for _, et := range identity.EventTypes() {
		events = append(events, string(et))
	}
	hook, err := e.ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/all", Events: events})
	if err != nil {
		t.Fatal(err)
	}
	e.createUser(t, "ada")
	before := e.deliveryTypes(t, hook.Endpoint.ID)
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/roles", map[string]any{"name": "admin"}},
		{"POST", "/groups", map[string]any{"name": "staff"}},
		{"PUT", "/roles/1", map[string]any{"name": "admins"}},
		{"PUT", "/roles/1", map[string]any{"name": "admins"}}, // no change
		{"PUT", "/groups/1/members/1", nil},
		{"PUT", "/groups/1/members/1", nil}, // a member already
		{"PUT", "/groups/1/roles/1", nil},
		{"PUT", "/groups/1/roles/1", nil}, // carried already
		{"PUT", "/groups/1", map[string]any{"name": "employees"}},
		{"DELETE", "/groups/1/roles/1", nil},
		{"DELETE", "/groups/1/members/1", nil},
		{"DELETE", "/groups/1", nil},
		{"DELETE", "/roles/1", nil},
	} {
		if rec := e.do(t, r.method, base+r.path, e.allKey, r.body); rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", r.method, r.path, rec.Code, rec.Body.String())
		}
	}
	want := []string{"role.created", "group.created", "role.updated", "group.member.added", "group.role.assigned",
		"group.updated", "group.role.removed", "group.member.removed", "group.deleted", "role.deleted"}
	if diff := cmp.Diff(want, e.deliveryTypes(t, hook.Endpoint.ID)[len(before):]); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// deliveryTypes returns the event types of the endpoint's deliveries, in
// the order they were queued.
func (e *testEnv) deliveryTypes(tb testing.TB, endpointID int64) []string {
	tb.Helper()
	list, err := e.ws.ListDeliveries(tb.Context(), endpointID, &identity.Page{Limit: identity.MaxPageLimit})
	if err != nil {
		tb.Fatal(err)
	}
	var types []string
	for _, d := range list.Items {
		types = append(types, string(d.EventType))
	}
	return types
}
