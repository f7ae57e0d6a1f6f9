package identity

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// TestRedact: the one rule that keeps secrets out of the trail, field by
// field: a field whose last dot-separated part, in any case, contains
// password, secret, token, hash, recoverycode or privatekey, or is code
// or otp, and does not end in policy, keeps Redacted for a value and nil for none; any other keeps
// its value, whatever its type. The names of the fields the library
// records are among the harmless ones.
func TestRedact(t *testing.T) {
	tests := []struct {
		field  string
		secret bool
	}{
		{"password", true},
		{"passwordHash", true},
		{"newPassword", true},
		{"secret", true},
		{"clientSecret", true},
		{"keyHash", true},
		{"token", true},
		{"refreshToken", true},
		{"accessToken", true},
		{"idToken", true},
		{"code", true},
		{"otp", true},
		{"totpSecret", true},
		{"recoveryCodes", true},
		{"privateKey", true},
		{"PASSWORD", true},
		{"OTP", true},
		{"Code", true},
		{"attributes.apiToken", true},
		{"smtp.password", true},
		{"signing.privateKeyPEM", true},
		{"webhook.secretHash", true},
		{"email", false},
		{"fullName", false},
		{"enabled", false},
		{"attributes.department", false},
		{"role", false},
		{"barcode", false},
		{"codes", false},
		{"otpauth", false},
		{"token.type", false},
		{"password.changedAt", false},
		// The fields the library records.
		{"username", false},
		{"emailVerified", false},
		{"sessionId", false},
		{"sessionsRevoked", false},
		{"clientId", false},
		{"grantId", false},
		{"method", false},
		{"codesLeft", false},
		{"failures", false},
		{"until", false},
		{"users", false},
		{"name", false},
		{"removed.auditRecords", false},
		// A policy is a rule about secrets, not one.
		{"passwordPolicy", false},
		{"tokenPolicy", false},
		{"passwordPolicyHash", true},
		// The fields of the configuration and token records.
		{"description", false},
		{"group", false},
		{"claimName", false},
		{"includeInAccess", false},
		{"includeInId", false},
		{"url", false},
		{"events", false},
		{"status", false},
		{"scopes", false},
		{"scope", false},
		{"public", false},
		{"redirectUris", false},
		{"postLogoutRedirectUris", false},
		{"grantTypes", false},
		{"claims", false},
		{"displayName", false},
		{"accentColor", false},
		{"smtp", false},
		{"mfa", false},
		{"lockout", false},
		{"active", false},
		{"next", false},
		{"bytes", false},
	}
	// stored is what the rule keeps of a value of the field.
	type stored struct {
		Secret                     bool
		String, Number, Bool, None any
		// Set is auditChanges.set of "a value" to "another";
		// SetIfSame whether setIfChanged of equal values records
		// anything.
		Set       AuditChange
		SetIfSame bool
	}
	for _, tt := range tests {
		_, same := auditChanges{}.setIfChanged(tt.field, "same", "same")[tt.field]
		got := stored{
			Secret: secretField(tt.field), String: redact(tt.field, "a value"), Number: redact(tt.field, 42),
			Bool: redact(tt.field, true), None: redact(tt.field, nil),
			Set: auditChanges{}.set(tt.field, "a value", "another")[tt.field], SetIfSame: same,
		}
		want := stored{Secret: false, String: "a value", Number: 42, Bool: true, None: nil,
			Set: AuditChange{Before: "a value", After: "another"}}
		if tt.secret {
			want = stored{Secret: true, String: Redacted, Number: Redacted, Bool: Redacted, None: nil,
				Set: AuditChange{Before: Redacted, After: Redacted}}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("field %q (-want +got):\n%s", tt.field, diff)
		}
	}
}

// TestAuditRecordStored: a record's changes are stored as their JSON, and
// a record without changes stores none (not "null"); both read back as
// they were written.
func TestAuditRecordStored(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		changes map[string]AuditChange
		stored  []byte
	}{
		{"none", nil, nil},
		{"empty", map[string]AuditChange{}, nil},
		{"one", map[string]AuditChange{"email": {Before: "a@example.com", After: "b@example.com"}},
			[]byte(`{"email":{"before":"a@example.com","after":"b@example.com"}}`)},
	} {
		rec := AuditRecord{
			ID: "0006613f1f866800aaaaaaaaaaaaaaaa", Time: at, Workspace: "acme",
			Actor: Actor{Kind: ActorAPIKey, ID: "k1", Display: "ci"}, Action: AuditUserUpdated,
			Target: AuditTarget{Kind: TargetUser, ID: "1", Display: "ada"}, Outcome: OutcomeSuccess,
			Request: AuditRequest{Address: "192.0.2.1", UserAgent: "curl/8", RequestID: "r1"}, Changes: c.changes,
		}
		s, err := rec.stored()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := store.AuditRecord{
			ID: "0006613f1f866800aaaaaaaaaaaaaaaa", Time: at, ActorKind: "api_key", ActorID: "k1", ActorDisplay: "ci",
			Action: "user.updated", TargetKind: "user", TargetID: "1", TargetDisplay: "ada", Outcome: "success",
			Address: "192.0.2.1", UserAgent: "curl/8", RequestID: "r1", Changes: c.stored,
		}
		if diff := cmp.Diff(want, s); diff != "" {
			t.Errorf("%s: stored (-want +got):\n%s", c.name, diff)
		}
		back, err := auditFromRecord("acme", s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(c.changes) == 0 {
			rec.Changes = nil
		}
		if diff := cmp.Diff(rec, back); diff != "" {
			t.Errorf("%s: read back (-want +got):\n%s", c.name, diff)
		}
	}
}
