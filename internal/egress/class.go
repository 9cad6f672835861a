package egress

import "net/netip"

// Address classes AddrClass names. The first four are the host's own and
// the cloud's metadata services: an allow entry reaches them only when it
// names the address literally (Strict).
const (
	ClassLoopback    = "loopback"
	ClassLinkLocal   = "link-local"
	ClassUnspecified = "unspecified"
	ClassMetadata    = "metadata"
	ClassPrivate     = "private"
	ClassShared      = "shared"
	ClassBenchmark   = "benchmarking"
	ClassReserved    = "reserved"
	ClassMulticast   = "multicast"
	ClassBroadcast   = "broadcast"
)

// metadataAddrs are cloud metadata and platform services on addresses
// outside the link-local range, where no other class would catch them.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud (shared address space)
	netip.MustParseAddr("168.63.129.16"),   // Azure's platform endpoint (a public address)
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
}

// v4Ranges are the IPv4 special-purpose blocks (RFC 6890) that netip's
// predicates leave out, each with its class.
var v4Ranges = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), ClassUnspecified}, // "this network": reaches the host on Linux
	{netip.MustParsePrefix("100.64.0.0/10"), ClassShared},  // carrier-grade NAT, some clouds' internal services
	{netip.MustParsePrefix("192.0.0.0/24"), ClassReserved}, // IETF protocol assignments
	{netip.MustParsePrefix("198.18.0.0/15"), ClassBenchmark},
	{netip.MustParsePrefix("240.0.0.0/4"), ClassReserved}, // and 255.255.255.255, caught before as broadcast
}

// IPv6 forms that carry an IPv4 address a router or the host may turn back
// into it: the IPv4 address is classified.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052: the IPv4 address in the last 32 bits
	nat64L    = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215, local-use: the site's own translator
	sixToFour = netip.MustParsePrefix("2002::/16")      // RFC 3056: the IPv4 address in bits 16-47
	teredo    = netip.MustParsePrefix("2001::/32")      // RFC 4380: the server in bits 32-63, the client inverted in 96-127
	compat    = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible
	siteLocal = netip.MustParsePrefix("fec0::/10")      // deprecated site-local: private
)

// AddrClass names the class of an address that is refused unless a rule
// names it — the server itself, its network, the cloud metadata services,
// ranges that are not the public internet — or "" for a public one. An
// IPv6 address that embeds an IPv4 one (mapped, compatible, NAT64, 6to4,
// Teredo) is classified by what it embeds, and the class says so
// ("loopback (IPv4 127.0.0.1 in NAT64)"). webfetch's guard and the egress
// proxy share it, so both draw the line in the same place.
func AddrClass(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is4() {
		return v4Class(ip)
	}
	if c := v6Class(ip); c != "" {
		return c
	}
	for _, e := range embedded(ip) {
		if c := v4Class(e.v4); c != "" {
			return c + " (IPv4 " + e.v4.String() + " in " + e.form + ")"
		}
	}
	return ""
}

// Strict reports whether class (an AddrClass) is one that only an allow
// entry naming the address itself may reach — not a host name, not a
// wildcard, not a range: loopback, link-local, unspecified and metadata,
// embedded in IPv6 or not. A name's answers are the resolver's to change,
// and a range such as 0.0.0.0/0 is written to mean "the internet".
func Strict(class string) bool {
	switch baseClass(class) {
	case ClassLoopback, ClassLinkLocal, ClassUnspecified, ClassMetadata:
		return true
	}
	return false
}

// baseClass is class without the note on the IPv6 form that embeds it.
func baseClass(class string) string {
	for i := 0; i < len(class); i++ {
		if class[i] == ' ' {
			return class[:i]
		}
	}
	return class
}

func v4Class(ip netip.Addr) string {
	switch {
	case isMetadata(ip):
		return ClassMetadata
	case ip.IsLoopback():
		return ClassLoopback
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return ClassLinkLocal
	case ip.IsMulticast():
		return ClassMulticast
	case ip.IsPrivate():
		return ClassPrivate
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return ClassBroadcast
	}
	for _, r := range v4Ranges {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	return ""
}

func v6Class(ip netip.Addr) string {
	switch {
	case isMetadata(ip):
		return ClassMetadata
	case ip.IsUnspecified():
		return ClassUnspecified
	case ip.IsLoopback():
		return ClassLoopback
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return ClassLinkLocal
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return ClassMulticast
	case ip.IsPrivate(), siteLocal.Contains(ip), nat64L.Contains(ip):
		return ClassPrivate
	}
	return ""
}

func isMetadata(ip netip.Addr) bool {
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}

// embeddedV4 is an IPv4 address an IPv6 one carries, and the form.
type embeddedV4 struct {
	v4   netip.Addr
	form string
}

// embedded lists the IPv4 addresses ip carries (none for a plain IPv6
// address).
func embedded(ip netip.Addr) []embeddedV4 {
	b := ip.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case nat64.Contains(ip):
		return []embeddedV4{{last, "NAT64"}}
	case compat.Contains(ip):
		return []embeddedV4{{last, "an IPv4-compatible address"}}
	case sixToFour.Contains(ip):
		return []embeddedV4{{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "6to4"}}
	case teredo.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []embeddedV4{{netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}), "Teredo (server)"}, {client, "Teredo (client)"}}
	}
	return nil
}
