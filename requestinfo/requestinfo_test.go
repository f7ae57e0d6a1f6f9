package requestinfo_test

import (
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// freshID is the form of an id the adapter makes itself.
var freshID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestRequestID: a trusted proxy's X-Request-Id names the request when
// it is one header of 1 to 128 printable ASCII characters; a client's
// own, or an unusable one, is replaced by a fresh id, as a request
// without one gets.
func TestRequestID(t *testing.T) {
	svc, err := identity.New(memstore.New(), &identity.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	const trusted, untrusted = "10.1.2.3:4711", "192.0.2.7:4711"
	longest := strings.Repeat("r", requestinfo.MaxRequestIDLength)
	tests := []struct {
		name   string
		remote string
		ids    []string // the X-Request-Id lines sent
		want   string   // "" for a fresh id
	}{
		{"trusted proxy's id honoured", trusted, []string{"req-7f3a"}, "req-7f3a"},
		{"printable punctuation and spaces", trusted, []string{"a b/c=d~!"}, "a b/c=d~!"},
		{"128 characters", trusted, []string{longest}, longest},
		{"untrusted peer's id ignored", untrusted, []string{"req-7f3a"}, ""},
		{"no header", trusted, nil, ""},
		{"129 characters replaced", trusted, []string{longest + "r"}, ""},
		{"a control character replaced", trusted, []string{"req\x01"}, ""},
		{"a tab replaced", trusted, []string{"req\tid"}, ""},
		{"non-ASCII replaced", trusted, []string{"anfrage-ü"}, ""},
		{"DEL replaced", trusted, []string{"req\x7f"}, ""},
		{"two headers replaced", trusted, []string{"one", "two"}, ""},
		{"empty replaced", trusted, []string{""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for _, id := range tt.ids {
				r.Header.Add("X-Request-Id", id)
			}
			got := requestinfo.From(svc, r).RequestID
			if tt.want != "" {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("RequestID (-want +got):\n%s", diff)
				}
				return
			}
			if !freshID.MatchString(got) {
				t.Errorf("RequestID = %q, want a fresh id of 32 hex digits", got)
			}
			if again := requestinfo.From(svc, r).RequestID; again == got {
				t.Errorf("two requests got the same fresh id %q", got)
			}
		})
	}
}
