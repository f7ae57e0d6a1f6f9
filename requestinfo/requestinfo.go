// Package requestinfo reads from an HTTP request what the identity
// library knows of the client behind a call (identity.RequestInfo): the
// client's address, believing forwarded headers only from the Service's
// trusted proxies, and its User-Agent. The adapters (httpapi, oidc) put
// it in the context of every library call a request makes.
package requestinfo

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/identitylib/identity"
)

// From returns what r says of its client: the peer's address, or, when
// the peer is one of the Service's trusted proxies
// (identity.Options.TrustedProxies), the address the proxies forwarded
// (the Forwarded header of RFC 7239, or else X-Forwarded-For), read from
// the right and skipping every hop that is itself a trusted proxy; and
// the User-Agent. Locale is left for the adapter to choose. Every adapter
// asks here, so REST, the provider and the pages agree on who a client
// is.
func From(s *identity.Service, r *http.Request) identity.RequestInfo {
	return identity.RequestInfo{Address: clientAddress(s, r), UserAgent: r.UserAgent()}
}

// clientAddress is the address From reports for r.
func clientAddress(s *identity.Service, r *http.Request) netip.Addr {
	peer := remoteAddr(r.RemoteAddr)
	if !peer.IsValid() || !s.TrustsProxy(peer) {
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
		if !s.TrustsProxy(hop) {
			return hop
		}
		peer = hop
	}
	return peer
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
