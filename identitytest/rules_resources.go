package identitytest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

func testRuleAttributes(t *testing.T, e *env) {
	u := e.user("attrs")
	tests := []struct {
		name, key, value string
		fields           []identity.FieldError // nil: accepted
	}{
		{"plain", "department", "engineering", nil},
		{"empty value", "empty", "", nil},
		{"64 code points", repeat("é", 64), "v", nil},
		{"value 1024 code points", "long", repeat("ü", 1024), nil},
		{"65 code points", repeat("é", 65), "v", []identity.FieldError{fe("key", identity.RuleMaxLength)}},
		{"empty key", "", "v", []identity.FieldError{fe("key", identity.RuleRequired)}},
		{"value 1025", "k", repeat("a", 1025), []identity.FieldError{fe("value", identity.RuleMaxLength)}},
		{"both", repeat("k", 65), repeat("a", 1025), []identity.FieldError{fe("key", identity.RuleMaxLength), fe("value", identity.RuleMaxLength)}},
		{"bad utf8", "k\xff", "v", []identity.FieldError{fe("key", identity.RuleUTF8)}},
	}
	want := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ws.SetAttribute(e.ctx, u.ID, tt.key, tt.value, nil)
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("SetAttribute: %v", err)
				}
				want[tt.key] = tt.value
				return
			}
			WantCode(t, err, identity.CodeInvalid)
			WantFields(t, err, tt.fields)
		})
	}
	if _, err := e.ws.SetAttribute(e.ctx, u.ID, "department", "research", nil); err != nil { // upsert
		t.Fatal(err)
	}
	want["department"] = "research"
	got, err := e.ws.ListAttributes(e.ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Attributes mismatch (-want +got):\n%s", diff)
	}
	if _, err := e.ws.DeleteAttribute(e.ctx, u.ID, "department", nil); err != nil {
		t.Fatal(err)
	}
	WantCode(t, err2(e.ws.DeleteAttribute(e.ctx, u.ID, "department", nil)), identity.CodeNotFound)
	WantCode(t, err2(e.ws.SetAttribute(e.ctx, 999, "k", "v", nil)), identity.CodeNotFound)
	WantCode(t, err2(e.ws.DeleteAttribute(e.ctx, 999, "k", nil)), identity.CodeNotFound)
	_, err = e.ws.ListAttributes(e.ctx, 999)
	WantCode(t, err, identity.CodeNotFound)
	none, err := e.ws.ListAttributes(e.ctx, e.user("bare").ID)
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("Attributes of bare user = %#v, %v; want empty non-nil map", none, err)
	}
}

func testRuleClaimMappers(t *testing.T, e *env) {
	put := func(key string, spec identity.ClaimMapperSpec) error {
		_, err := e.ws.SetClaimMapper(e.ctx, key, spec)
		return err
	}
	if err := put("department", identity.ClaimMapperSpec{ClaimName: "dept"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		key    string
		spec   identity.ClaimMapperSpec
		code   identity.Code
		fields []identity.FieldError
	}{
		{"empty claim", "a", identity.ClaimMapperSpec{ClaimName: ""}, identity.CodeInvalid, []identity.FieldError{fe("claimName", identity.RuleRequired)}},
		{"129 code points", "a", identity.ClaimMapperSpec{ClaimName: repeat("é", 129)}, identity.CodeInvalid, []identity.FieldError{fe("claimName", identity.RuleMaxLength)}},
		{"empty key", "", identity.ClaimMapperSpec{ClaimName: "x"}, identity.CodeInvalid, []identity.FieldError{fe("attributeKey", identity.RuleRequired)}},
		{"key 65", repeat("k", 65), identity.ClaimMapperSpec{ClaimName: "x"}, identity.CodeInvalid, []identity.FieldError{fe("attributeKey", identity.RuleMaxLength)}},
		{"sub", "a", identity.ClaimMapperSpec{ClaimName: "sub"}, identity.CodeReservedClaim, nil},
		{"iss", "a", identity.ClaimMapperSpec{ClaimName: "iss"}, identity.CodeReservedClaim, nil},
		{"email", "a", identity.ClaimMapperSpec{ClaimName: "email"}, identity.CodeReservedClaim, nil},
		{"reserved ignoring case", "a", identity.ClaimMapperSpec{ClaimName: "Exp"}, identity.CodeReservedClaim, nil},
		{"taken by another mapper", "other", identity.ClaimMapperSpec{ClaimName: "dept"}, identity.CodeConflict, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := put(tt.key, tt.spec)
			WantCode(t, err, tt.code)
			if tt.fields != nil {
				WantFields(t, err, tt.fields)
			}
		})
	}
	for _, name := range []string{"aud", "exp", "nbf", "iat", "jti", "azp", "nonce", "auth_time", "acr", "amr",
		"at_hash", "c_hash", "s_hash", "sid", "scope", "client_id", "cnf", "typ", "email_verified"} {
		WantCode(t, put("a", identity.ClaimMapperSpec{ClaimName: name}), identity.CodeReservedClaim)
	}
	if err := put("a", identity.ClaimMapperSpec{ClaimName: repeat("é", 128)}); err != nil {
		t.Errorf("128-character claim name: %v", err)
	}
	// Re-PUT with its own claim name replaces the whole mapper: omitted
	// flags take their defaults again.
	if err := put("department", identity.ClaimMapperSpec{ClaimName: "dept", IncludeInAccess: ptr(false), IncludeInID: ptr(true)}); err != nil {
		t.Fatalf("re-PUT with own claim name: %v", err)
	}
	if err := put("department", identity.ClaimMapperSpec{ClaimName: "dept"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.ws.ListClaimMappers(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []identity.ClaimMapper{
		{AttributeKey: "a", ClaimName: repeat("é", 128), IncludeInAccess: true},
		{AttributeKey: "department", ClaimName: "dept", IncludeInAccess: true, IncludeInID: false},
	}
	if diff := cmp.Diff(want, got, ignoreVersions); diff != "" {
		t.Errorf("ClaimMappers mismatch (-want +got):\n%s", diff)
	}
	// Claim names are unique as JWT names are: case-sensitively.
	if err := put("b", identity.ClaimMapperSpec{ClaimName: "Dept"}); err != nil {
		t.Errorf("claim name differing in case: %v", err)
	}
	if err := e.ws.DeleteClaimMapper(e.ctx, "department"); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.DeleteClaimMapper(e.ctx, "department"), identity.CodeNotFound)
	// The freed claim name can be taken by another mapper.
	if err := put("other", identity.ClaimMapperSpec{ClaimName: "dept"}); err != nil {
		t.Errorf("reuse of a deleted mapper's claim name: %v", err)
	}
	empty, err := e.svc.CreateWorkspace(e.ctx, "empty", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := empty.ListClaimMappers(e.ctx); err != nil || m == nil || len(m) != 0 {
		t.Errorf("ClaimMappers of empty workspace = %#v, %v", m, err)
	}
}

func testRuleClaimMapperLimit(t *testing.T, e *env) {
	for i := range identity.MaxClaimMappers {
		if _, err := e.ws.SetClaimMapper(e.ctx, fmt.Sprintf("k%02d", i), identity.ClaimMapperSpec{ClaimName: fmt.Sprintf("c%02d", i)}); err != nil {
			t.Fatalf("mapper %d: %v", i, err)
		}
	}
	_, err := e.ws.SetClaimMapper(e.ctx, "k20", identity.ClaimMapperSpec{ClaimName: "c20"})
	WantCode(t, err, identity.CodeLimitReached)
	// Updating an existing mapper at the limit is allowed.
	if _, err := e.ws.SetClaimMapper(e.ctx, "k05", identity.ClaimMapperSpec{ClaimName: "renamed", IncludeInID: ptr(true)}); err != nil {
		t.Errorf("update at the limit: %v", err)
	}
	// A conflicting claim name at the limit is still a conflict for an
	// update.
	_, err = e.ws.SetClaimMapper(e.ctx, "k06", identity.ClaimMapperSpec{ClaimName: "c07"})
	WantCode(t, err, identity.CodeConflict)
	if got, err := e.ws.ListClaimMappers(e.ctx); err != nil || len(got) != 20 {
		t.Errorf("%d mappers (%v), want 20", len(got), err)
	}
	if err := e.ws.DeleteClaimMapper(e.ctx, "k00"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.SetClaimMapper(e.ctx, "k20", identity.ClaimMapperSpec{ClaimName: "c20"}); err != nil {
		t.Errorf("new mapper after a delete: %v", err)
	}
}

func testRuleClaims(t *testing.T, e *env) {
	u := e.user("claims")
	for k, v := range map[string]string{"department": "eng", "level": "7", "nickname_src": "adi"} {
		if _, err := e.ws.SetAttribute(e.ctx, u.ID, k, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	mappers := []struct {
		key  string
		spec identity.ClaimMapperSpec
	}{
		{"department", identity.ClaimMapperSpec{ClaimName: "dept"}},                                                        // access only (defaults)
		{"level", identity.ClaimMapperSpec{ClaimName: "lvl", IncludeInAccess: ptr(true), IncludeInID: ptr(true)}},          // both
		{"nickname_src", identity.ClaimMapperSpec{ClaimName: "nick", IncludeInAccess: ptr(false), IncludeInID: ptr(true)}}, // id only
		{"missing", identity.ClaimMapperSpec{ClaimName: "gone", IncludeInID: ptr(true)}},                                   // attribute absent
	}
	for _, m := range mappers {
		if _, err := e.ws.SetClaimMapper(e.ctx, m.key, m.spec); err != nil {
			t.Fatal(err)
		}
	}
	check := func(kind identity.TokenKind, want map[string]string) {
		t.Helper()
		got, err := e.ws.GetClaims(e.ctx, u.ID, kind)
		if err != nil {
			t.Fatalf("Claims(%v): %v", kind, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Claims(%v) mismatch (-want +got):\n%s", kind, diff)
		}
	}
	check(identity.AccessToken, map[string]string{"dept": "eng", "lvl": "7"})
	check(identity.IDToken, map[string]string{"lvl": "7", "nick": "adi"})
	if _, err := e.ws.DeleteAttribute(e.ctx, u.ID, "level", nil); err != nil {
		t.Fatal(err)
	}
	check(identity.AccessToken, map[string]string{"dept": "eng"})
	if err := e.ws.DeleteClaimMapper(e.ctx, "department"); err != nil {
		t.Fatal(err)
	}
	check(identity.AccessToken, map[string]string{})
	check(identity.IDToken, map[string]string{"nick": "adi"})
	_, err := e.ws.GetClaims(e.ctx, 999, identity.AccessToken)
	WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.GetClaims(e.ctx, u.ID, identity.TokenKind(0))
	WantCode(t, err, identity.CodeInvalid)
}

func testRuleWebhooks(t *testing.T, e *env) {
	created, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{
		URL: "https://hooks.example.com/identity", Description: "audit", Events: []string{"user.created", "login.failed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := identity.WebhookEndpoint{ID: 1, URL: "https://hooks.example.com/identity", Description: "audit",
		Events: []identity.EventType{"user.created", "login.failed"}, Enabled: true, CreatedAt: testNow.Truncate(1000)}
	if diff := cmp.Diff(want, created.Endpoint, ignoreVersions); diff != "" {
		t.Errorf("CreateWebhook mismatch (-want +got):\n%s", diff)
	}
	raw, ok := strings.CutPrefix(created.Secret, "whsec_")
	if b, err := base64.StdEncoding.DecodeString(raw); !ok || err != nil || len(b) != 32 {
		t.Errorf("secret %q is not whsec_ + base64 of 32 bytes", created.Secret)
	}
	second, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://b.example.com", Events: []string{"session.revoked"}})
	if err != nil {
		t.Fatal(err)
	}
	if second.Endpoint.ID != 2 || second.Endpoint.Description != "" || second.Secret == created.Secret {
		t.Errorf("second endpoint = %+v (secret reused: %v)", second.Endpoint, second.Secret == created.Secret)
	}

	bad := []struct {
		name    string
		nw      identity.NewWebhook
		message string
		fields  []identity.FieldError
	}{
		{"no events", identity.NewWebhook{URL: "https://a.example.com"}, "",
			[]identity.FieldError{fe("events", identity.RuleRequired)}},
		{"unknown events listed", identity.NewWebhook{URL: "https://a.example.com", Events: []string{"user.created", "user.exploded", "nope"}},
			"unknown event types: user.exploded, nope",
			[]identity.FieldError{fe("events[1]", identity.RuleUnknown), fe("events[2]", identity.RuleUnknown)}},
		{"duplicate event", identity.NewWebhook{URL: "https://a.example.com", Events: []string{"login.failed", "login.failed"}}, "",
			[]identity.FieldError{fe("events[1]", identity.RuleDuplicate)}},
		{"description too long", identity.NewWebhook{URL: "https://a.example.com", Description: repeat("d", 1025), Events: []string{"login.failed"}}, "",
			[]identity.FieldError{fe("description", identity.RuleMaxLength)}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ws.CreateWebhook(e.ctx, tt.nw)
			WantCode(t, err, identity.CodeInvalid)
			WantFields(t, err, tt.fields)
			if tt.message != "" && !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q does not list %q", err, tt.message)
			}
		})
	}

	list, err := e.ws.ListWebhooks(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]identity.WebhookEndpoint{created.Endpoint, second.Endpoint}, list.Items); diff != "" {
		t.Errorf("ListWebhooks mismatch (-want +got):\n%s", diff)
	}
	page, err := e.ws.ListWebhooks(e.ctx, &identity.Page{Offset: 1, Limit: 1})
	if err != nil || page.Total != 2 || len(page.Items) != 1 || page.Items[0].ID != 2 {
		t.Errorf("ListWebhooks page = %+v, %v", page, err)
	}
	_, err = e.ws.ListWebhooks(e.ctx, &identity.Page{Limit: 101})
	WantCode(t, err, identity.CodeInvalid)

	if err := e.ws.DeleteWebhook(e.ctx, 1); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.DeleteWebhook(e.ctx, 1), identity.CodeNotFound)
	WantCode(t, e.ws.DeleteWebhook(e.ctx, 0), identity.CodeNotFound)
	_, err = e.ws.GetWebhook(e.ctx, 1)
	WantCode(t, err, identity.CodeNotFound)
	third, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://c.example.com", Events: []string{"login.failed"}})
	if err != nil || third.Endpoint.ID != 3 {
		t.Errorf("id after delete = %d, %v; want 3 (ids are never reused)", third.Endpoint.ID, err)
	}
}

func testRuleWebhookURLs(t *testing.T, e *env) {
	tests := []struct {
		url  string
		rule string // "" accepted
	}{
		{"https://hooks.example.com/x?y=1", ""},
		{"HTTPS://hooks.example.com", ""},
		{"https://93.184.215.14:8443/hook", ""},
		{"https://[2606:4700::1111]/", ""},
		{"http://hooks.example.com", identity.RuleFormat},
		{"/relative", identity.RuleFormat},
		{"https://", identity.RuleFormat},
		{"https:opaque", identity.RuleFormat},
		{"ftp://example.com", identity.RuleFormat},
		{"", identity.RuleRequired},
		{"https://example.com/" + repeat("p", 2029), identity.RuleMaxLength},
		{"https://localhost/hook", identity.RulePrivateAddress},
		{"https://LOCALHOST./hook", identity.RulePrivateAddress},
		{"https://api.localhost", identity.RulePrivateAddress},
		{"https://127.0.0.1", identity.RulePrivateAddress},
		{"https://10.1.2.3", identity.RulePrivateAddress},
		{"https://172.16.0.1", identity.RulePrivateAddress},
		{"https://192.168.1.1", identity.RulePrivateAddress},
		{"https://169.254.169.254/latest/meta-data", identity.RulePrivateAddress},
		{"https://100.64.0.1", identity.RulePrivateAddress},
		{"https://0.0.0.0", identity.RulePrivateAddress},
		{"https://[::1]:8443", identity.RulePrivateAddress},
		{"https://[fd00::1]", identity.RulePrivateAddress},
		{"https://[fe80::1]", identity.RulePrivateAddress},
		{"https://[::ffff:127.0.0.1]", identity.RulePrivateAddress},
		{"https://224.0.0.1", identity.RulePrivateAddress},
	}
	for _, tt := range tests {
		_, err := e.ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: tt.url, Events: []string{"user.created"}})
		if tt.rule == "" {
			if err != nil {
				t.Errorf("CreateWebhook(%q): %v", tt.url, err)
			}
			continue
		}
		if identity.ErrorCode(err) != identity.CodeInvalid {
			t.Errorf("CreateWebhook(%q) = %s, want invalid", tt.url, describe(err))
			continue
		}
		WantFields(t, err, []identity.FieldError{fe("url", tt.rule)})
	}
	// With the guard turned off, local receivers are allowed.
	svc, err := identity.New(e.store, &identity.Options{AllowPrivateWebhooks: true, PasswordHashing: &testArgon2})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.GetWorkspace(e.ctx, e.ws.Slug())
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"https://127.0.0.1:8443/hook", "https://localhost/", "https://[::1]/"} {
		if _, err := ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: url, Events: []string{"user.created"}}); err != nil {
			t.Errorf("CreateWebhook(%q) with the guard off: %v", url, err)
		}
	}
	_, err = ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "http://127.0.0.1", Events: []string{"user.created"}})
	WantCode(t, err, identity.CodeInvalid) // still https only
}

func testRuleAPIKeys(t *testing.T, e *env) {
	created, err := e.ws.CreateAPIKey(e.ctx, "ci", []identity.Scope{identity.ScopeUsersRead, identity.ScopeWebhooksWrite})
	if err != nil {
		t.Fatal(err)
	}
	k, secret := created.APIKey, created.Secret
	if !strings.HasPrefix(secret, "idk_"+k.ID+"_") || len(secret) < 60 {
		t.Errorf("key %q does not carry its id %q", secret, k.ID)
	}
	want := identity.APIKey{ID: k.ID, Workspace: "acme", Name: "ci",
		Scopes: []identity.Scope{identity.ScopeUsersRead, identity.ScopeWebhooksWrite}, CreatedAt: testNow.Truncate(1000)}
	if diff := cmp.Diff(want, k); diff != "" {
		t.Errorf("CreateAPIKey mismatch (-want +got):\n%s", diff)
	}
	got, err := e.svc.VerifyAPIKey(e.ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VerifyAPIKey mismatch (-want +got):\n%s", diff)
	}
	// Only a hash is stored.
	var rec store.APIKey
	if err := e.store.View(e.ctx, func(tx store.Tx) (err error) { rec, err = tx.APIKey(k.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rec.SecretHash), secret[len(secret)-43:]) || len(rec.SecretHash) != 32 {
		t.Errorf("stored secret hash %x looks like the secret itself", rec.SecretHash)
	}
	flipped := "A"
	if secret[len(secret)-1] == 'A' {
		flipped = "B"
	}
	tampered := secret[:len(secret)-1] + flipped
	for _, bad := range []string{"", "idk_", secret + "x", secret[:len(secret)-1], tampered, strings.ToUpper(secret), "Bearer " + secret} {
		_, err := e.svc.VerifyAPIKey(e.ctx, bad)
		WantCode(t, err, identity.CodeUnauthenticated)
	}
	invalid := []struct {
		name   string
		scopes []identity.Scope
		kname  string
		fields []identity.FieldError
	}{
		{"no scopes", nil, "", []identity.FieldError{fe("scopes", identity.RuleRequired)}},
		{"unknown scope", []identity.Scope{"users:read", "root"}, "", []identity.FieldError{fe("scopes[1]", identity.RuleUnknown)}},
		{"duplicate scope", []identity.Scope{"users:read", "users:read"}, "", []identity.FieldError{fe("scopes[1]", identity.RuleDuplicate)}},
		{"long name", []identity.Scope{"users:read"}, repeat("n", 256), []identity.FieldError{fe("name", identity.RuleMaxLength)}},
	}
	for _, tt := range invalid {
		_, err := e.ws.CreateAPIKey(e.ctx, tt.kname, tt.scopes)
		WantCode(t, err, identity.CodeInvalid)
		WantFields(t, err, tt.fields)
	}
	all := identity.Scopes()
	if len(all) != 17 {
		t.Errorf("%d scopes, want the 17 of the management API", len(all))
	}
	created, err = e.ws.CreateAPIKey(e.ctx, "", all)
	if err != nil {
		t.Fatal(err)
	}
	k2 := created.APIKey
	keys, err := e.ws.ListAPIKeys(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("APIKeys = %d keys, want 2", len(keys))
	}
	other, err := e.svc.CreateWorkspace(e.ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	WantCode(t, other.RevokeAPIKey(e.ctx, k.ID), identity.CodeNotFound) // not its key
	if err := e.ws.RevokeAPIKey(e.ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	WantCode(t, e.ws.RevokeAPIKey(e.ctx, k.ID), identity.CodeNotFound)
	_, err = e.svc.VerifyAPIKey(e.ctx, secret)
	WantCode(t, err, identity.CodeUnauthenticated)
	keys, err = e.ws.ListAPIKeys(e.ctx)
	if err != nil || len(keys) != 1 || keys[0].ID != k2.ID {
		t.Errorf("APIKeys after revoke = %+v, %v", keys, err)
	}
}

func testRuleAuthorize(t *testing.T, e *env) {
	created, err := e.ws.CreateAPIKey(e.ctx, "reporting", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	key := created.Secret
	if _, err := e.svc.CreateWorkspace(e.ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	// Twice: the second may come from the Service's key cache, and says
	// the same.
	for range 2 {
		a, err := e.svc.AuthorizeAPIKey(e.ctx, key, "acme", identity.ScopeUsersRead)
		if err != nil || a.Workspace.Slug() != "acme" {
			t.Fatalf("Authorize = %v, %v", a, err)
		}
		if diff := cmp.Diff(created.APIKey, a.Key); diff != "" {
			t.Errorf("the key Authorize returns (-want +got):\n%s", diff)
		}
	}
	_, err = e.svc.AuthorizeAPIKey(e.ctx, "idk_nope", "acme", identity.ScopeUsersRead)
	WantCode(t, err, identity.CodeUnauthenticated)
	_, errExisting := e.svc.AuthorizeAPIKey(e.ctx, key, "other", identity.ScopeUsersRead)
	_, errMissing := e.svc.AuthorizeAPIKey(e.ctx, key, "no-such-workspace", identity.ScopeUsersRead)
	WantCode(t, errExisting, identity.CodeForbidden)
	if diff := cmp.Diff(errExisting, errMissing); diff != "" {
		t.Errorf("foreign workspace errors differ between existing and missing slugs (-existing +missing):\n%s", diff)
	}
	_, err = e.svc.AuthorizeAPIKey(e.ctx, key, "acme", identity.ScopeUsersWrite)
	WantCode(t, err, identity.CodeForbidden)
	if e, ok := err.(*identity.Error); !ok || e.Scope != identity.ScopeUsersWrite {
		t.Errorf("missing-scope error = %#v, want Scope %q", err, identity.ScopeUsersWrite)
	}
}

func testRuleAuthenticate(t *testing.T, e *env) {
	u := e.user("Login.User")
	tests := []struct {
		login, password string
		ok              bool
	}{
		{"Login.User", "s3cret-passphrase", true},
		{"login.user", "s3cret-passphrase", true},
		{"LOGIN.USER@EXAMPLE.COM", "s3cret-passphrase", true},
		{"Login.User", "wrong-passphrase", false},
		{"Login.User", "", false},
		{"nobody", "s3cret-passphrase", false},
		{"nobody@example.com", "s3cret-passphrase", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := e.ws.Authenticate(e.ctx, tt.login, tt.password)
		if tt.ok {
			if err != nil || got.ID != u.ID {
				t.Errorf("Authenticate(%q) = %+v, %v; want user %d", tt.login, got, err, u.ID)
			}
			continue
		}
		WantCode(t, err, identity.CodeUnauthenticated)
	}
	if err := e.ws.DisableUser(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.ws.Authenticate(e.ctx, "Login.User", "s3cret-passphrase")
	WantCode(t, err, identity.CodeUnauthenticated)
	if err := e.ws.EnableUser(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Authenticate(e.ctx, "Login.User", "s3cret-passphrase"); err != nil {
		t.Errorf("Authenticate after enable: %v", err)
	}
	// SetPassword applies the policy and replaces the password.
	err = e.ws.SetPassword(e.ctx, u.ID, "short")
	WantCode(t, err, identity.CodeInvalid)
	WantFields(t, err, []identity.FieldError{fe("password", identity.RulePasswordMinLength)})
	WantCode(t, e.ws.SetPassword(e.ctx, 999, "long-enough-pass"), identity.CodeNotFound)
	if err := e.ws.SetPassword(e.ctx, u.ID, "a-new-passphrase"); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.Authenticate(e.ctx, "Login.User", "s3cret-passphrase")
	WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := e.ws.Authenticate(e.ctx, "Login.User", "a-new-passphrase"); err != nil {
		t.Errorf("Authenticate with new password: %v", err)
	}
}

// Hash vectors made outside this library: PBKDF2 by Python's hashlib,
// bcrypt from the OpenBSD test vectors.
var importedHashes = []struct {
	name, hash, password string
}{
	{"bcrypt 2a", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"},
	{"bcrypt 2b", "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"},
	{"django pbkdf2", "pbkdf2_sha256$1000$seasalt123$KuEnssc6S4MzVSS8Tu48m1RDSrTAn7j3CfgvvjkvfWA=", "correct horse"},
	{"passlib pbkdf2", "$pbkdf2-sha256$1200$AAECAwQFBgcICQoLDA0ODw$djG.Q.ej.HjLOYOxC3tE9wAT5oosn6uV8P/9fG/jzzI", "correct horse"},
	{"phc pbkdf2 sha512", "$pbkdf2-sha512$i=1100,l=64$AAECAwQFBgcICQoLDA0ODw$veTsB+FrJxBhOhVEI/yeuyMLi32rz5zMgl3usnsxIj+rk1hzjClzugYUkByS2JNnFZGkWFv6G1kTIUtrBs3sKQ", "correct horse"},
	// argon2id at other parameters than the Service's (m=128, t=1, p=1),
	// made with golang.org/x/crypto/argon2 directly.
	{"argon2id other params", "$argon2id$v=19$m=128,t=1,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo", "correct horse"},
}

func testRuleImportedHashes(t *testing.T, e *env) {
	for i, h := range importedHashes {
		t.Run(h.name, func(t *testing.T) {
			username := fmt.Sprintf("imported%d", i)
			users, err := e.ws.ImportUsers(e.ctx, []identity.ImportedUser{{
				Username: username, Email: username + "@example.com", FullName: "Imported", PasswordHash: h.hash,
			}})
			if err != nil {
				t.Fatalf("ImportUsers: %v", err)
			}
			_, err = e.ws.Authenticate(e.ctx, username, h.password+"x")
			WantCode(t, err, identity.CodeUnauthenticated)
			if e.storedUser(users[0].ID).PasswordHash != h.hash {
				t.Fatal("a failed login changed the hash")
			}
			if _, err := e.ws.Authenticate(e.ctx, username, h.password); err != nil {
				t.Fatalf("Authenticate with imported hash: %v", err)
			}
			// The successful login upgraded the hash to argon2id at the
			// Service's parameters, and the password still works.
			rehashed := e.storedUser(users[0].ID).PasswordHash
			wantPrefix := fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$", testArgon2.Memory, testArgon2.Time, testArgon2.Threads)
			if !strings.HasPrefix(rehashed, wantPrefix) {
				t.Errorf("hash after login = %q, want prefix %q", rehashed, wantPrefix)
			}
			if _, err := e.ws.Authenticate(e.ctx, username, h.password); err != nil {
				t.Errorf("Authenticate after rehash: %v", err)
			}
		})
	}
}
