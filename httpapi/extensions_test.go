package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
)

// TestClaimsPreview: the claims the mappers project for a user now, per
// token kind, as the library's Claims computes them.
func TestClaimsPreview(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t) // ada: dept=eng; mapper dept -> department (access only)
	ctx := t.Context()
	if _, err := e.ws.SetAttribute(ctx, 1, "tier", "gold", nil); err != nil {
		t.Fatal(err)
	}
	if rec := e.do(t, "PUT", base+"/claim-mappers/tier", e.allKey, map[string]any{"claimName": "tier", "includeInId": true}); rec.Code != 204 {
		t.Fatalf("PUT mapper: %d %s", rec.Code, rec.Body.String())
	}
	e.createUser(t, "bob") // no attributes
	tests := []struct {
		path   string
		status int
		want   string // JSON body, or the problem code and fields
		fields []string
	}{
		{"/users/1/claims?token=access", 200, `{"claims":{"department":"eng","tier":"gold"}}`, nil},
		{"/users/1/claims?token=id", 200, `{"claims":{"tier":"gold"}}`, nil},
		{"/users/2/claims?token=access", 200, `{"claims":{}}`, nil},
		{"/users/1/claims", 422, "invalid", []string{"token required"}},
		{"/users/1/claims?token=ID", 422, "invalid", []string{"token unknown"}},
		{"/users/1/claims?token=", 422, "invalid", []string{"token unknown"}},
		{"/users/99/claims?token=access", 404, "not_found", nil},
		{"/users/abc/claims?token=access", 404, "not_found", nil},
		{"/users/1/claims?token=%zz", 400, "malformed_query", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := e.do(t, "GET", base+tt.path, e.allKey, nil)
			if tt.status == 200 {
				wantJSON(t, rec, 200, tt.want)
				return
			}
			wantProblem(t, rec, tt.status, tt.want, tt.fields...)
		})
	}
	// The preview follows a mapper change at once.
	if rec := e.do(t, "DELETE", base+"/claim-mappers/tier", e.allKey, nil); rec.Code != 204 {
		t.Fatalf("DELETE mapper: %d", rec.Code)
	}
	wantJSON(t, e.do(t, "GET", base+"/users/1/claims?token=access", e.allKey, nil), 200, `{"claims":{"department":"eng"}}`)
}

// TestClaimsPreviewNeedsBothScopes: users:read alone or claim_mappers:read
// alone is 403 naming both.
func TestClaimsPreviewNeedsBothScopes(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	both := mustKey(t, e.ws, "users:read", "claim_mappers:read")
	wantStatus(t, e.do(t, "GET", base+"/users/1/claims?token=access", both, nil), http.StatusOK)
	for _, key := range []string{e.keys["users:read"], e.keys["claim_mappers:read"]} {
		rec := e.do(t, "GET", base+"/users/1/claims?token=access", key, nil)
		wantProblem(t, rec, http.StatusForbidden, "forbidden")
		want := `Bearer error="insufficient_scope", scope="users:read claim_mappers:read"`
		if got := rec.Header().Get("WWW-Authenticate"); got != want {
			t.Errorf("WWW-Authenticate %q, want %q", got, want)
		}
	}
}

// TestUnlockUser: POST /users/{userId}/unlock ends a lockout at once,
// idempotently; an unknown user is 404.
func TestUnlockUser(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	// Below the throttle's 10 failures per login, which would refuse the
	// 11th attempt before the lock could.
	s, err := e.ws.GetSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Lockout.Threshold = 5
	if err := e.ws.UpdateSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		_, _ = e.ws.Authenticate(t.Context(), "ada", "wrong password")
	}
	_, err = e.ws.Authenticate(t.Context(), "ada", "pw-ada-long")
	if identity.ErrorCode(err) != identity.CodeLocked {
		t.Fatalf("after 5 failures: %v, want locked", err)
	}
	for range 2 {
		wantNoContent(t, e.do(t, "POST", base+"/users/1/unlock", e.allKey, nil))
	}
	if _, err := e.ws.Authenticate(t.Context(), "ada", "pw-ada-long"); err != nil {
		t.Errorf("the unlocked user cannot log in: %v", err)
	}
	wantProblem(t, e.do(t, "POST", base+"/users/2/unlock", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "POST", base+"/users/0/unlock", e.allKey, nil), 404, "not_found")
}

// enrolMFA gives the user a confirmed TOTP second factor as the user
// would: with a code of the enrolment's secret at the Service's time.
func enrolMFA(tb testing.TB, ws *identity.Workspace, userID int64) {
	tb.Helper()
	ctx := context.Background()
	en, err := ws.BeginTOTPEnrollment(ctx, userID)
	if err != nil {
		tb.Fatal(err)
	}
	code, err := totp.GenerateCode(en.Secret, testNow)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ws.ConfirmTOTPEnrollment(ctx, userID, code); err != nil {
		tb.Fatal(err)
	}
}

// TestResetMFA: DELETE /users/{userId}/mfa clears the user's second
// factor and recovery codes at once, with user.mfa.reset, after which the
// password alone signs in; again it is 204 and emits nothing; an unknown
// user is 404 and a key without users:write 403, changing nothing.
func TestResetMFA(t *testing.T) {
	e := newTestEnv(t)
	ctx := t.Context()
	e.createUser(t, "ada")
	hook, err := e.ws.CreateWebhook(ctx, identity.NewWebhook{
		URL: "https://hooks.example.com/mfa", Events: []string{"user.mfa.enrolled", "user.mfa.reset"},
	})
	if err != nil {
		t.Fatal(err)
	}
	enrolMFA(t, e.ws, 1)
	mfaEnabled := func() bool {
		t.Helper()
		var u struct{ MFAEnabled bool }
		if err := json.Unmarshal(e.do(t, "GET", base+"/users/1", e.allKey, nil).Body.Bytes(), &u); err != nil {
			t.Fatal(err)
		}
		return u.MFAEnabled
	}
	if !mfaEnabled() {
		t.Fatal("mfaEnabled is false after the enrolment")
	}
	if _, err := e.ws.Authenticate(ctx, "ada", "pw-ada-long"); identity.ErrorCode(err) != identity.CodeMFARequired {
		t.Fatalf("the password of an enrolled user: %v, want mfa_required", err)
	}

	wantProblem(t, e.do(t, "DELETE", base+"/users/1/mfa", e.keys[identity.ScopeUsersRead], nil), 403, "forbidden")
	if !mfaEnabled() {
		t.Error("a refused reset cleared the second factor")
	}
	for range 2 {
		wantNoContent(t, e.do(t, "DELETE", base+"/users/1/mfa", e.allKey, nil))
	}
	if mfaEnabled() {
		t.Error("mfaEnabled is true after the reset")
	}
	st, err := e.ws.GetMFAStatus(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.MFAStatus{}, st); diff != "" {
		t.Errorf("MFA status after the reset (-want +got):\n%s", diff)
	}
	if _, err := e.ws.Authenticate(ctx, "ada", "pw-ada-long"); err != nil {
		t.Errorf("the password alone after the reset: %v", err)
	}
	ds, err := listItems(e.ws.ListDeliveries(ctx, hook.Endpoint.ID, nil))
	if err != nil {
		t.Fatal(err)
	}
	var events []identity.EventType
	for _, d := range ds {
		events = append(events, d.EventType)
	}
	if diff := cmp.Diff([]identity.EventType{identity.EventUserMFAEnrolled, identity.EventUserMFAReset}, events); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	wantProblem(t, e.do(t, "DELETE", base+"/users/2/mfa", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "DELETE", base+"/users/0/mfa", e.allKey, nil), 404, "not_found")
}

// TestEnableUser: a disabled user is enabled again, idempotently, and can
// log in.
func TestEnableUser(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	wantNoContent(t, e.do(t, "DELETE", base+"/users/1", e.allKey, nil))
	if _, err := e.ws.Authenticate(t.Context(), "ada", "pw-ada-long"); err == nil {
		t.Fatal("a disabled user logged in")
	}
	for range 2 {
		wantNoContent(t, e.do(t, "POST", base+"/users/1/enable", e.allKey, nil))
	}
	wantJSON(t, e.do(t, "GET", base+"/users/1", e.allKey, nil), 200, userJSON("1", "ada", "ada@example.com", "Ada", true))
	if _, err := e.ws.Authenticate(t.Context(), "ada", "pw-ada-long"); err != nil {
		t.Errorf("the enabled user cannot log in: %v", err)
	}
	wantProblem(t, e.do(t, "POST", base+"/users/2/enable", e.allKey, nil), 404, "not_found")
	wantProblem(t, e.do(t, "POST", base+"/users/0/enable", e.allKey, nil), 404, "not_found")
}
