package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// TestBrandingRoundTrip: GET /branding shows the defaults, a PUT sets
// both members and answers what GET then shows, and a PUT without them
// unsets them again.
func TestBrandingRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	const path = "/t/acme/api/v1/branding"
	read, write := e.keys[identity.ScopeBrandingRead], e.keys[identity.ScopeBrandingWrite]
	const defaults = `{"displayName":"","accentColor":"","effectiveName":"acme","effectiveAccentColor":"#1d5fc9"}`
	wantJSON(t, e.do(t, "GET", path, read, nil), http.StatusOK, defaults)

	const acme = `{"displayName":"Acme Corp","accentColor":"#0b5394","effectiveName":"Acme Corp","effectiveAccentColor":"#0b5394"}`
	wantJSON(t, e.do(t, "PUT", path, write, map[string]any{"displayName": "Acme Corp", "accentColor": "#0b5394"}), http.StatusOK, acme)
	wantJSON(t, e.do(t, "GET", path, read, nil), http.StatusOK, acme)
	s, err := e.ws.GetSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(identity.Branding{DisplayName: "Acme Corp", AccentColor: "#0b5394"}, s.Branding); diff != "" {
		t.Errorf("stored branding (-want +got):\n%s", diff)
	}

	const named = `{"displayName":"Acme","accentColor":"","effectiveName":"Acme","effectiveAccentColor":"#1d5fc9"}`
	wantJSON(t, e.do(t, "PUT", path, write, map[string]any{"displayName": "Acme"}), http.StatusOK, named)
	wantJSON(t, e.do(t, "PUT", path, write, map[string]any{}), http.StatusOK, defaults)
	wantJSON(t, e.do(t, "GET", path, read, nil), http.StatusOK, defaults)
}

// TestBrandingLeavesSettings: a PUT of the branding changes the branding
// and nothing else of the workspace's settings.
func TestBrandingLeavesSettings(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	s, err := e.ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.RequireVerifiedEmail = true
	s.Throttle.PerLogin = identity.Rate{Count: 7, Window: 3 * time.Minute}
	if err := e.ws.UpdateSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	before, err := e.ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := e.do(t, "PUT", "/t/acme/api/v1/branding", e.allKey, map[string]any{"displayName": "Acme Corp"})
	wantStatus(t, rec, http.StatusOK)
	after, err := e.ws.GetSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := before
	want.Branding = identity.Branding{DisplayName: "Acme Corp"}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("settings after the PUT (-want +got):\n%s", diff)
	}
	if !after.RequireVerifiedEmail || after.Throttle.PerLogin.Count != 7 {
		t.Errorf("the PUT changed other settings: %+v", after)
	}
}

// TestBrandingRefusals: invalid branding is 422 naming each member as the
// library does (branding.displayName, branding.accentColor), a member of
// the wrong type is named as sent, and a refusal changes nothing.
func TestBrandingRefusals(t *testing.T) {
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		fields []string
	}{
		{"not a colour", map[string]any{"accentColor": "blue"}, 422, "invalid", []string{"branding.accentColor format"}},
		{"short colour", map[string]any{"accentColor": "#123"}, 422, "invalid", []string{"branding.accentColor format"}},
		{"too light", map[string]any{"accentColor": "#ffff00"}, 422, "invalid", []string{"branding.accentColor range"}},
		{"long name", map[string]any{"displayName": strings.Repeat("é", 65)}, 422, "invalid", []string{"branding.displayName max_length"}},
		{"control character", map[string]any{"displayName": "Acme\u0007"}, 422, "invalid", []string{"branding.displayName control_character"}},
		{"both", map[string]any{"displayName": strings.Repeat("x", 65), "accentColor": "#fff"}, 422, "invalid",
			[]string{"branding.displayName max_length", "branding.accentColor format"}},
		{"wrong types", map[string]any{"displayName": 1, "accentColor": nil}, 422, "invalid", []string{"displayName type", "accentColor type"}},
		{"not an object", `["Acme"]`, 422, "invalid", []string{"body type"}},
		{"not json", `{`, 400, "malformed_json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			if err := e.ws.SetBranding(context.Background(), identity.Branding{DisplayName: "Before"}); err != nil {
				t.Fatal(err)
			}
			rec := e.do(t, "PUT", "/t/acme/api/v1/branding", e.keys[identity.ScopeBrandingWrite], tt.body)
			wantProblem(t, rec, tt.status, tt.code, tt.fields...)
			s, err := e.ws.GetSettings(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(identity.Branding{DisplayName: "Before"}, s.Branding); diff != "" {
				t.Errorf("branding after a refused PUT (-want +got):\n%s", diff)
			}
		})
	}
}
