package requestinfo_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/requestinfo"
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
			info := requestinfo.From(svc, r)
			if got := info.Address.String(); got != tt.want {
				t.Errorf("Address = %s, want %s", got, tt.want)
			}
			if info.UserAgent != "Mozilla/5.0 test" || info.Locale != "" {
				t.Errorf("UserAgent %q, Locale %q", info.UserAgent, info.Locale)
			}
		})
	}
}
