package identity

import (
	"context"
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
	// address a trusted proxy forwarded (see package requestinfo).
	Address netip.Addr
	// UserAgent is the request's User-Agent header.
	UserAgent string
	// RequestID names the request in the audit trail: the adapter's own
	// id for it, or one a trusted proxy forwarded (X-Request-Id).
	RequestID string
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

// TrustsProxy reports whether addr is in Options.TrustedProxies: whether
// a request whose peer is addr may name the client it forwards (package
// requestinfo reads the headers). An IPv4 address mapped into IPv6 is
// taken as the IPv4 address.
func (s *Service) TrustsProxy(addr netip.Addr) bool {
	for _, p := range s.trustedProxies {
		if p.Contains(addr) || addr.Is4In6() && p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
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
