package identity

import "net/netip"

// addressRange is one row of addressRegistry.
type addressRange struct {
	prefix netip.Prefix
	// name is the range's name in its registry.
	name string
	// public is whether a webhook may be delivered into the range: the
	// registry's "Globally Reachable" column, where the column says N/A
	// (Teredo, the 6to4 relay anycast) false.
	public bool
	// embedded, when not nil, returns the IPv4 address an address of the
	// range carries, which is judged in its place.
	embedded func(netip.Addr) netip.Addr
}

// addressRegistry holds the IANA IPv4 and IPv6 Special-Purpose Address
// Registries (RFC 6890 and the RFCs of later entries) as of 2025, row by
// row, and the classic ranges the special-purpose registries leave to
// other registries: IPv4 multicast, the IPv4-compatible IPv6 addresses
// and IPv6 site-local, unique local and multicast addresses. An address is
// judged by the most specific range holding it, so a globally reachable
// entry inside a larger one that is not (192.0.0.9/32 in 192.0.0.0/24,
// 2001:20::/28 in 2001::/23) is public, as the registry has it.
//
// Three ranges carry an IPv4 address, which is judged instead: the
// IPv4-mapped ::ffff:0:0/96, the NAT64 well-known prefix 64:ff9b::/96
// (RFC 6052: the IPv4 address in the last 32 bits) and 6to4 2002::/16
// (RFC 3056: the IPv4 address in bits 16-47). Teredo 2001::/32 carries
// one too, obfuscated, with a relay's server address; the whole range is
// refused rather than unwrapped. Every other IPv6 address outside
// 2000::/3, the global unicast space, is refused too (see
// IsPublicAddress).
var addressRegistry = []addressRange{
	// IPv4 Special-Purpose Address Registry.
	{prefix: netip.MustParsePrefix("0.0.0.0/8"), name: `"This network"`},
	{prefix: netip.MustParsePrefix("0.0.0.0/32"), name: `"This host on this network"`},
	{prefix: netip.MustParsePrefix("10.0.0.0/8"), name: "Private-Use"},
	{prefix: netip.MustParsePrefix("100.64.0.0/10"), name: "Shared Address Space"},
	{prefix: netip.MustParsePrefix("127.0.0.0/8"), name: "Loopback"},
	{prefix: netip.MustParsePrefix("169.254.0.0/16"), name: "Link Local"},
	{prefix: netip.MustParsePrefix("172.16.0.0/12"), name: "Private-Use"},
	{prefix: netip.MustParsePrefix("192.0.0.0/24"), name: "IETF Protocol Assignments"},
	{prefix: netip.MustParsePrefix("192.0.0.0/29"), name: "IPv4 Service Continuity Prefix"},
	{prefix: netip.MustParsePrefix("192.0.0.8/32"), name: "IPv4 dummy address"},
	{prefix: netip.MustParsePrefix("192.0.0.9/32"), name: "Port Control Protocol Anycast", public: true},
	{prefix: netip.MustParsePrefix("192.0.0.10/32"), name: "Traversal Using Relays around NAT Anycast", public: true},
	{prefix: netip.MustParsePrefix("192.0.0.170/32"), name: "NAT64/DNS64 Discovery"},
	{prefix: netip.MustParsePrefix("192.0.0.171/32"), name: "NAT64/DNS64 Discovery"},
	{prefix: netip.MustParsePrefix("192.0.2.0/24"), name: "Documentation (TEST-NET-1)"},
	{prefix: netip.MustParsePrefix("192.31.196.0/24"), name: "AS112-v4", public: true},
	{prefix: netip.MustParsePrefix("192.52.193.0/24"), name: "AMT", public: true},
	{prefix: netip.MustParsePrefix("192.88.99.0/24"), name: "Deprecated (6to4 Relay Anycast)"},
	{prefix: netip.MustParsePrefix("192.168.0.0/16"), name: "Private-Use"},
	{prefix: netip.MustParsePrefix("192.175.48.0/24"), name: "Direct Delegation AS112 Service", public: true},
	{prefix: netip.MustParsePrefix("198.18.0.0/15"), name: "Benchmarking"},
	{prefix: netip.MustParsePrefix("198.51.100.0/24"), name: "Documentation (TEST-NET-2)"},
	{prefix: netip.MustParsePrefix("203.0.113.0/24"), name: "Documentation (TEST-NET-3)"},
	{prefix: netip.MustParsePrefix("240.0.0.0/4"), name: "Reserved"},
	{prefix: netip.MustParsePrefix("255.255.255.255/32"), name: "Limited Broadcast"},
	// IPv4 Multicast Address Space Registry.
	{prefix: netip.MustParsePrefix("224.0.0.0/4"), name: "Multicast"},

	// IPv6 Special-Purpose Address Registry.
	{prefix: netip.MustParsePrefix("::1/128"), name: "Loopback Address"},
	{prefix: netip.MustParsePrefix("::/128"), name: "Unspecified Address"},
	{prefix: netip.MustParsePrefix("::ffff:0:0/96"), name: "IPv4-mapped Address", embedded: lastIPv4},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), name: "IPv4-IPv6 Translat.", public: true, embedded: lastIPv4},
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), name: "IPv4-IPv6 Translat. (local use)"},
	{prefix: netip.MustParsePrefix("100::/64"), name: "Discard-Only Address Block"},
	{prefix: netip.MustParsePrefix("100:0:0:1::/64"), name: "Dummy IPv6 Prefix"},
	{prefix: netip.MustParsePrefix("2001::/23"), name: "IETF Protocol Assignments"},
	{prefix: netip.MustParsePrefix("2001::/32"), name: "TEREDO"},
	{prefix: netip.MustParsePrefix("2001:1::1/128"), name: "Port Control Protocol Anycast", public: true},
	{prefix: netip.MustParsePrefix("2001:1::2/128"), name: "Traversal Using Relays around NAT Anycast", public: true},
	{prefix: netip.MustParsePrefix("2001:1::3/128"), name: "DNS-SD Service Registration Protocol Anycast", public: true},
	{prefix: netip.MustParsePrefix("2001:2::/48"), name: "Benchmarking"},
	{prefix: netip.MustParsePrefix("2001:3::/32"), name: "AMT", public: true},
	{prefix: netip.MustParsePrefix("2001:4:112::/48"), name: "AS112-v6", public: true},
	{prefix: netip.MustParsePrefix("2001:10::/28"), name: "Deprecated (previously ORCHID)"},
	{prefix: netip.MustParsePrefix("2001:20::/28"), name: "ORCHIDv2", public: true},
	{prefix: netip.MustParsePrefix("2001:30::/28"), name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix", public: true},
	{prefix: netip.MustParsePrefix("2001:db8::/32"), name: "Documentation"},
	{prefix: netip.MustParsePrefix("2002::/16"), name: "6to4", embedded: sixToFourIPv4},
	{prefix: netip.MustParsePrefix("2620:4f:8000::/48"), name: "Direct Delegation AS112 Service", public: true},
	{prefix: netip.MustParsePrefix("3fff::/20"), name: "Documentation"},
	{prefix: netip.MustParsePrefix("5f00::/16"), name: "Segment Routing (SRv6) SIDs"},
	{prefix: netip.MustParsePrefix("fc00::/7"), name: "Unique-Local"},
	{prefix: netip.MustParsePrefix("fe80::/10"), name: "Link-Local Unicast"},
	// IPv6 Addressing Architecture (RFC 4291) and the IPv6 Address Space
	// registry.
	{prefix: netip.MustParsePrefix("::/96"), name: "IPv4-compatible IPv6 address (deprecated)"},
	{prefix: netip.MustParsePrefix("fec0::/10"), name: "Site-local unicast (deprecated)"},
	{prefix: netip.MustParsePrefix("ff00::/8"), name: "Multicast"},
}

// globalUnicast6 is IPv6's global unicast space (RFC 4291, the IANA IPv6
// Address Space registry): the rest is reserved by the IETF or special.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// lastIPv4 returns the IPv4 address in the last 32 bits of addr.
func lastIPv4(addr netip.Addr) netip.Addr {
	b := addr.As16()
	return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
}

// sixToFourIPv4 returns the IPv4 address of a 6to4 address, 2002:V4ADDR::/48.
func sixToFourIPv4(addr netip.Addr) netip.Addr {
	b := addr.As16()
	return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
}

// registryRange returns the most specific range of addressRegistry that
// holds addr.
func registryRange(addr netip.Addr) (addressRange, bool) {
	var found addressRange
	ok := false
	for _, r := range addressRegistry {
		if r.prefix.Contains(addr) && (!ok || r.prefix.Bits() > found.prefix.Bits()) {
			found, ok = r, true
		}
	}
	return found, ok
}

// IsPublicAddress reports whether a webhook may be delivered to addr: an
// address that the IANA special-purpose address registries hold globally
// reachable, or that none of their ranges holds, and that is neither IPv4
// multicast nor IPv6 outside 2000::/3 (the global unicast space). So it is
// false for private, loopback, link-local, shared (carrier-grade NAT),
// documentation, benchmarking, reserved, multicast, broadcast, unique
// local, site-local, discard-only, SRv6 and IPv4-compatible addresses,
// Teredo, the NAT64 local-use prefix 64:ff9b:1::/48 and the invalid Addr.
// An IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) or 6to4
// (2002:aabb:ccdd::/48) address is judged by the IPv4 address it carries.
// A zone is ignored.
func IsPublicAddress(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.WithZone("")
	r, ok := registryRange(addr)
	switch {
	case ok && r.embedded != nil:
		return IsPublicAddress(r.embedded(addr))
	case ok:
		return r.public
	}
	return addr.Is4() || globalUnicast6.Contains(addr)
}
