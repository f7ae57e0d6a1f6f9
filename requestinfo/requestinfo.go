// Package requestinfo reads from an HTTP request what the identity
// library knows of the client behind a call (identity.RequestInfo): the
// client's address, believing forwarded headers only from the Service's
// trusted proxies, its User-Agent, and the request's id in the audit
// trail. The adapters (httpapi, oidc) put it in the context of every
// library call a request makes, and answer with the id in the
// X-Request-Id header.
package requestinfo

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/identitylib/identity"
)

// HeaderRequestID is the header that carries a request's id: read from a
// trusted proxy, and sent back by the adapters with the id they used.
const HeaderRequestID = "X-Request-Id"

// MaxRequestIDLength bounds the X-Request-Id a trusted proxy may send,
// in bytes.
const MaxRequestIDLength = 128

// From returns what r says of its client: the peer's address, or, when
// the peer is one of the Service's trusted proxies
// (identity.Options.TrustedProxies), the address the proxies forwarded
// (the Forwarded header of RFC 7239, or else X-Forwarded-For), read from
// the right and skipping every hop that is itself a trusted proxy; the
// User-Agent; and the request's id (see RequestID). Locale is left for
// the adapter to choose. Every adapter asks here, so REST, the provider
// and the pages agree on who a client is.
func From(s *identity.Service, r *http.Request) identity.RequestInfo {
	peer := remoteAddr(r.RemoteAddr)
	trusted := peer.IsValid() && s.TrustsProxy(peer)
	return identity.RequestInfo{Address: clientAddress(s, r, peer, trusted), UserAgent: r.UserAgent(), RequestID: requestID(r, trusted)}
}

// requestID is the id From reports for r: the X-Request-Id the peer sent
// when it is a trusted proxy (trusted) and the header is there once,
// with 1 to MaxRequestIDLength printable ASCII characters (space to
// tilde); otherwise a new id, 32 lowercase hex digits of 16 random
// bytes. A client that is no trusted proxy cannot choose the id the
// audit trail records for it.
func requestID(r *http.Request, trusted bool) string {
	if trusted {
		if values := r.Header.Values(HeaderRequestID); len(values) == 1 && validRequestID(values[0]) {
			return values[0]
		}
	}
	return newRequestID()
}

// validRequestID reports whether a forwarded id may be kept as it is.
func validRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// newRequestID returns a fresh request id: 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// clientAddress is the address From reports for r, whose peer is peer,
// trusted when it is one of the Service's trusted proxies.
func clientAddress(s *identity.Service, r *http.Request, peer netip.Addr, trusted bool) netip.Addr {
	if !trusted {
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
