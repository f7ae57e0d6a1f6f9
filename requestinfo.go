package identity

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxUserAgentLength bounds the User-Agent a session keeps, in bytes:
// longer headers are cut (at a character boundary), since a client
// chooses them.
const MaxUserAgentLength = 256

// RequestInfo is what the library knows of the client behind a call: an
// adapter (package httpapi, the hosted pages of package oidc) puts it in
// the context of the calls a request makes, with WithRequestInfo. Throttling
// counts failed sign-ins per Address, a new session keeps Address and
// UserAgent, and the emails a call queues are written in Locale. A call
// whose context holds none is a call of the program itself: nothing is
// counted per address, and sessions record no client.
type RequestInfo struct {
	// Address is the client's IP address: the connection's peer, or the
	// address a trusted proxy forwarded (see Service.RequestInfo).
	Address netip.Addr
	// UserAgent is the request's User-Agent header.
	UserAgent string
	// Locale is the language tag the adapter chose for the client (from
	// ui_locales or Accept-Language), such as "de"; the emails a call
	// queues are written in it when the mailer knows it.
	Locale string
}

type requestInfoKey struct{}

// WithRequestInfo returns a context holding info, for the calls made on
// behalf of one request.
func WithRequestInfo(ctx context.Context, info RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

// RequestInfoFrom returns the RequestInfo in ctx, or the zero value.
func RequestInfoFrom(ctx context.Context) RequestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(RequestInfo)
	return info
}

// RequestInfo returns what r says of its client: the peer's address, or,
// when the peer is one of Options.TrustedProxies, the address the proxies
// forwarded (the Forwarded header of RFC 7239, or else X-Forwarded-For),
// read from the right and skipping every hop that is itself a trusted
// proxy; and the User-Agent. Locale is left for the adapter to choose.
// Every adapter asks here, so REST, the provider and the pages agree on
// who a client is.
func (s *Service) RequestInfo(r *http.Request) RequestInfo {
	return RequestInfo{Address: s.clientAddress(r), UserAgent: r.UserAgent()}
}

// clientAddress is the address RequestInfo reports for r.
func (s *Service) clientAddress(r *http.Request) netip.Addr {
	peer := remoteAddr(r.RemoteAddr)
	if !peer.IsValid() || !s.trustedProxy(peer) {
		return peer
	}
	hops := forwardedFor(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		hop := hops[i]
		if !hop.IsValid() {
			// An unreadable hop ends the chain that can be believed: the
			// last proxy that can be believed is the client as far as
			// anyone knows.
			return peer
		}
		if !s.trustedProxy(hop) {
			return hop
		}
		peer = hop
	}
	return peer
}

// checkTrustedProxies refuses an invalid prefix in Options.TrustedProxies.
func checkTrustedProxies(prefixes []netip.Prefix) error {
	var p problems
	for i, prefix := range prefixes {
		if !prefix.IsValid() {
			p.add("TrustedProxies["+strconv.Itoa(i)+"]", RuleFormat, "must be a valid address prefix")
		}
	}
	return p.err("invalid Options.TrustedProxies")
}

// trustedProxy reports whether addr is in Options.TrustedProxies.
func (s *Service) trustedProxy(addr netip.Addr) bool {
	for _, p := range s.trustedProxies {
		if p.Contains(addr) || addr.Is4In6() && p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// remoteAddr parses an http.Request's RemoteAddr ("host:port"), or returns
// the zero Addr.
func remoteAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(s)
	return a.Unmap()
}

// forwardedFor returns the client addresses the proxies in front of a
// request recorded, nearest last: the for= parameters of the Forwarded
// headers when there are any, otherwise the X-Forwarded-For lists. An
// entry that is no IP address (an obfuscated identifier, "unknown") is
// the zero Addr.
func forwardedFor(h http.Header) []netip.Addr {
	var hops []netip.Addr
	if fwd := h.Values("Forwarded"); len(fwd) > 0 {
		for _, line := range fwd {
			for elem := range strings.SplitSeq(line, ",") {
				hops = append(hops, forwardedElementFor(elem))
			}
		}
		return hops
	}
	for _, line := range h.Values("X-Forwarded-For") {
		for part := range strings.SplitSeq(line, ",") {
			hops = append(hops, parseHop(strings.TrimSpace(part)))
		}
	}
	return hops
}

// forwardedElementFor returns the for= address of one element of a
// Forwarded header (RFC 7239 section 4), or the zero Addr.
func forwardedElementFor(elem string) netip.Addr {
	for pair := range strings.SplitSeq(elem, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(name, "for") {
			return parseHop(strings.Trim(value, `"`))
		}
	}
	return netip.Addr{}
}

// parseHop parses one forwarded address: "192.0.2.1", "192.0.2.1:4711",
// "[2001:db8::1]" or "[2001:db8::1]:4711".
func parseHop(s string) netip.Addr {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap()
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, _ := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	return a.Unmap()
}

// boundedUserAgent returns ua cut to MaxUserAgentLength bytes at a
// character boundary, invalid UTF-8 and control characters replaced.
func boundedUserAgent(ua string) string {
	ua = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(ua, "\uFFFD"))
	if len(ua) <= MaxUserAgentLength {
		return ua
	}
	cut := MaxUserAgentLength
	for cut > 0 && !utf8.RuneStart(ua[cut]) {
		cut--
	}
	return ua[:cut]
}
