package identity_test

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store/memstore"
)

// TestRequestInfoAddress: the forwarded address is believed only from a
// trusted proxy, read from the right, skipping trusted hops.
func TestRequestInfoAddress(t *testing.T) {
	svc, err := identity.New(memstore.New(), &identity.Options{TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		remote  string
		headers map[string]string
		want    string
	}{
		{"no proxy", "192.0.2.7:4711", nil, "192.0.2.7"},
		{"untrusted peer's header ignored", "192.0.2.7:4711", map[string]string{"X-Forwarded-For": "198.51.100.1"}, "192.0.2.7"},
		{"trusted peer, X-Forwarded-For", "10.1.2.3:4711", map[string]string{"X-Forwarded-For": "198.51.100.1"}, "198.51.100.1"},
		{"trusted peer without a header", "10.1.2.3:4711", nil, "10.1.2.3"},
		{"rightmost untrusted hop", "10.1.2.3:4711", map[string]string{"X-Forwarded-For": "203.0.113.9, 198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"a spoofed leftmost entry is not believed", "10.1.2.3:4711", map[string]string{"X-Forwarded-For": "1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"unreadable hop ends the chain", "10.1.2.3:4711", map[string]string{"X-Forwarded-For": "198.51.100.1, unknown, 10.9.9.9"}, "10.9.9.9"},
		{"Forwarded wins over X-Forwarded-For", "10.1.2.3:4711", map[string]string{
			"Forwarded": `for=198.51.100.2;proto=https, for="[2001:db8::5]:443"`, "X-Forwarded-For": "203.0.113.9"}, "198.51.100.2"},
		{"Forwarded IPv6 client", "[2001:db8::1]:4711", map[string]string{"Forwarded": `for="[2001:db9::7]:443"`}, "2001:db9::7"},
		{"Forwarded obfuscated", "10.1.2.3:4711", map[string]string{"Forwarded": "for=_hidden"}, "10.1.2.3"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:4711", map[string]string{"X-Forwarded-For": "198.51.100.1"}, "198.51.100.1"},
		{"hop with a port", "10.1.2.3:4711", map[string]string{"X-Forwarded-For": "198.51.100.1:5555"}, "198.51.100.1"},
		{"11.0.0.1 is not in 10/8", "11.0.0.1:4711", map[string]string{"X-Forwarded-For": "198.51.100.1"}, "11.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			r.Header.Set("User-Agent", "Mozilla/5.0 test")
			info := svc.RequestInfo(r)
			if got := info.Address.String(); got != tt.want {
				t.Errorf("Address = %s, want %s", got, tt.want)
			}
			if info.UserAgent != "Mozilla/5.0 test" || info.Locale != "" {
				t.Errorf("UserAgent %q, Locale %q", info.UserAgent, info.Locale)
			}
		})
	}
}

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
