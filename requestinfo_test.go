package identity_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store/memstore"
)

// TestTrustedProxiesValidated: an invalid prefix is refused by New.
func TestTrustedProxiesValidated(t *testing.T) {
	_, err := identity.New(memstore.New(), &identity.Options{TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), {},
	}})
	identitytest.WantFields(t, err, field("TrustedProxies[1]", identity.RuleFormat))
}

// TestSessionRecordsClient: a session keeps the address and the
// User-Agent of the request that started it, the latter bounded to 256
// bytes at a character boundary, without control characters.
func TestSessionRecordsClient(t *testing.T) {
	tests := []struct {
		name, ua, wantUA string
	}{
		{"plain", "Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (X11; Linux x86_64)"},
		{"control characters", "Evil\r\nSet-Cookie: x\x00", "EvilSet-Cookie: x"},
		{"256 bytes", strings.Repeat("a", 256), strings.Repeat("a", 256)},
		{"257 bytes", strings.Repeat("a", 257), strings.Repeat("a", 256)},
		{"cut inside a character", strings.Repeat("a", 255) + "é", strings.Repeat("a", 255)},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			ctx := identity.WithRequestInfo(e.ctx, identity.RequestInfo{Address: netip.MustParseAddr("198.51.100.1"), UserAgent: tt.ua})
			created, err := e.ws.Login(ctx, "ada", adaPassword)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.ws.GetSession(e.ctx, created.Session.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Address != "198.51.100.1" || got.UserAgent != tt.wantUA {
				t.Errorf("session Address %q UserAgent %q, want %q %q", got.Address, got.UserAgent, "198.51.100.1", tt.wantUA)
			}
		})
	}
	e := newTestEnv(t, nil)
	created, err := e.ws.Login(e.ctx, "ada", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	if s := created.Session; s.Address != "" || s.UserAgent != "" {
		t.Errorf("without RequestInfo: Address %q UserAgent %q, want none", s.Address, s.UserAgent)
	}
	uaOnly := identity.WithRequestInfo(e.ctx, identity.RequestInfo{UserAgent: "curl/8.5.0"})
	created, err = e.ws.Login(uaOnly, "ada", adaPassword)
	if err != nil {
		t.Fatal(err)
	}
	if s := created.Session; s.Address != "" || s.UserAgent != "curl/8.5.0" {
		t.Errorf("a User-Agent alone: Address %q UserAgent %q, want %q %q", s.Address, s.UserAgent, "", "curl/8.5.0")
	}
}
