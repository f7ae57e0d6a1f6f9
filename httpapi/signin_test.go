package httpapi_test

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestSetEmailVerified: PUT /users/{userId}/email-verified sets the flag
// either way, answers with the user and its new ETag, and answers a
// repeat the same, changing nothing.
func TestSetEmailVerified(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	path := base + "/users/1/email-verified"
	user := func(verified bool) string {
		v := "false"
		if verified {
			v = "true"
		}
		return `{"id":1,"username":"ada","email":"ada@example.com","fullName":"Ada","emailVerified":` + v +
			`,"enabled":true,"mfaEnabled":false,"createdAt":"` + testNowJSON + `","updatedAt":"` + testNowJSON + `"}`
	}
	etagOf := func() string {
		rec := e.do(t, "GET", base+"/users/1", e.allKey, nil)
		wantStatus(t, rec, 200)
		return rec.Header().Get("ETag")
	}
	before := etagOf()
	for _, verified := range []bool{true, true, false, false, true} {
		rec := e.do(t, "PUT", path, e.allKey, map[string]any{"emailVerified": verified})
		wantJSON(t, rec, 200, user(verified))
		if got, want := rec.Header().Get("ETag"), etagOf(); got != want {
			t.Errorf("PUT %v: ETag %s, GET's %s", verified, got, want)
		}
		wantJSON(t, e.do(t, "GET", base+"/users/1", e.allKey, nil), 200, user(verified))
	}
	if etagOf() == before {
		t.Errorf("the ETag did not change: %s", before)
	}
	// A repeat changes nothing, not even the version.
	same := etagOf()
	wantStatus(t, e.do(t, "PUT", path, e.allKey, map[string]any{"emailVerified": true}), 200)
	if got := etagOf(); got != same {
		t.Errorf("a repeat changed the ETag from %s to %s", same, got)
	}
}

// TestSetEmailVerifiedEvents: a change emits user.updated, a repeat
// nothing.
func TestSetEmailVerifiedEvents(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	if _, err := e.ws.CreateWebhook(t.Context(), identity.NewWebhook{URL: "https://hooks.example.com/a", Events: []string{"user.updated"}}); err != nil {
		t.Fatal(err)
	}
	for _, verified := range []bool{true, true, false} {
		wantStatus(t, e.do(t, "PUT", base+"/users/1/email-verified", e.allKey, map[string]any{"emailVerified": verified}), 200)
	}
	stats, err := e.svc.GetQueueStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := stats.Pending; got != 2 {
		t.Errorf("deliveries pending: %d, want 2 (two changes)", got)
	}
}

// TestSetEmailVerifiedErrors: the body's member is required and a
// boolean; the user must exist.
func TestSetEmailVerifiedErrors(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	e.createUser(t, "bob")
	tests := []struct {
		name   string
		path   string
		body   any
		header []string
		status int
		code   string
		fields []string
	}{
		{"no member", "/users/1/email-verified", map[string]any{}, nil, 422, "invalid", []string{"emailVerified required"}},
		{"a string", "/users/1/email-verified", map[string]any{"emailVerified": "true"}, nil, 422, "invalid", []string{"emailVerified type"}},
		{"null", "/users/1/email-verified", `{"emailVerified":null}`, nil, 422, "invalid", []string{"emailVerified type"}},
		{"the other spelling", "/users/1/email-verified", map[string]any{"verified": true}, nil, 422, "invalid", []string{"emailVerified required"}},
		{"malformed", "/users/1/email-verified", `{"emailVerified":`, nil, 400, "malformed_json", nil},
		{"not JSON", "/users/1/email-verified", `{"emailVerified":true}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type", nil},
		{"unknown user", "/users/99/email-verified", map[string]any{"emailVerified": true}, nil, 404, "not_found", nil},
		{"malformed id", "/users/x/email-verified", map[string]any{"emailVerified": true}, nil, 404, "not_found", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(t, "PUT", base+tt.path, e.allKey, tt.body, tt.header...)
			wantProblem(t, rec, tt.status, tt.code, tt.fields...)
		})
	}
	// Authentication and scope come first.
	wantProblem(t, e.do(t, "PUT", base+"/users/99/email-verified", "", map[string]any{"emailVerified": true}), 401, "unauthenticated")
	wantProblem(t, e.do(t, "PUT", base+"/users/1/email-verified", e.keys[identity.ScopeUsersRead], map[string]any{"emailVerified": true}), 403, "forbidden")
	wantProblem(t, e.do(t, "PUT", base+"/users/1/email-verified", e.otherKey, map[string]any{"emailVerified": true}), 403, "forbidden")
	if u, err := e.ws.GetUser(t.Context(), 1); err != nil || u.EmailVerified {
		t.Errorf("after the refusals: %+v %v", u, err)
	}
}

// TestUpdateUserIgnoresEmailVerified: the specification's update body
// stays as it is; emailVerified in it is ignored, as any other member.
func TestUpdateUserIgnoresEmailVerified(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	rec := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@example.com", "fullName": "Ada", "emailVerified": true})
	wantStatus(t, rec, 200)
	if u, err := e.ws.GetUser(t.Context(), 1); err != nil || u.EmailVerified {
		t.Errorf("after PUT with emailVerified: %+v %v", u, err)
	}
}

// TestRequestInfo: the library calls of a request carry its client, as
// package requestinfo reads it: the peer's address (X-Forwarded-For is
// not believed from a peer that is no trusted proxy), the User-Agent and
// the request's id, which the answer's X-Request-Id names (the client's
// own is not believed either).
func TestRequestInfo(t *testing.T) {
	e := newTestEnv(t)
	rec := e.do(t, "POST", base+"/users", e.allKey,
		map[string]any{"username": "bob", "email": "bob@example.com", "fullName": "Bob", "password": "correct horse"},
		"User-Agent", "provisioner/2.1", "X-Forwarded-For", "203.0.113.9", "X-Request-Id", "chosen-by-client")
	wantStatus(t, rec, 201)
	got := e.store.lastInfo.Load()
	if got == nil {
		t.Fatal("no store call")
	}
	// httptest.NewRequest's peer.
	id := rec.Header().Get("X-Request-Id")
	if len(id) != 32 {
		t.Errorf("X-Request-Id %q, want a fresh id of 32 hex digits", id)
	}
	want := identity.RequestInfo{Address: netip.MustParseAddr("192.0.2.1"), UserAgent: "provisioner/2.1", RequestID: id}
	if diff := cmp.Diff(want, *got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("RequestInfo (-want +got):\n%s", diff)
	}
}
