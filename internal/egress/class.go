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

// metadataV6 is a cloud metadata service on an IPv6 address outside the
// link-local range, where no other class would catch it: AWS IMDS over
// IPv6. (The IPv4 ones are in v4Class.)
var metadataV6 = netip.MustParseAddr("fd00:ec2::254")

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

// v4Class classifies an IPv4 address by its bytes: the special-purpose
// blocks of RFC 6890 that are not the public internet. It is on every
// dial's path, so it is a switch, not a walk over prefixes.
func v4Class(ip netip.Addr) string {
	b := ip.As4()
	switch {
	case b == [4]byte{100, 100, 100, 200}, // Alibaba Cloud (in the shared address space)
		b == [4]byte{168, 63, 129, 16}: // Azure's platform endpoint (a public address)
		return ClassMetadata
	case b[0] == 127:
		return ClassLoopback
	case b[0] == 169 && b[1] == 254:
		return ClassLinkLocal
	case b[0] == 0: // "this network": reaches the host on Linux
		return ClassUnspecified
	case b[0] >= 224 && b[0] <= 239:
		return ClassMulticast
	case b[0] == 10, b[0] == 172 && b[1]&0xf0 == 16, b[0] == 192 && b[1] == 168:
		return ClassPrivate
	case b == [4]byte{255, 255, 255, 255}:
		return ClassBroadcast
	case b[0] == 100 && b[1]&0xc0 == 64: // 100.64.0.0/10: carrier-grade NAT, some clouds' internal services
		return ClassShared
	case b[0] == 198 && b[1]&0xfe == 18: // 198.18.0.0/15
		return ClassBenchmark
	case b[0] == 192 && b[1] == 0 && b[2] == 0, // 192.0.0.0/24: IETF protocol assignments
		b[0] >= 240: // 240.0.0.0/4
		return ClassReserved
	}
	return ""
}

func v6Class(ip netip.Addr) string {
	b := ip.As16()
	switch {
	case ip == metadataV6:
		return ClassMetadata
	case ip.IsUnspecified():
		return ClassUnspecified
	case ip.IsLoopback():
		return ClassLoopback
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return ClassLinkLocal
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return ClassMulticast
	case ip.IsPrivate(),
		b[0] == 0xfe && b[1]&0xc0 == 0xc0, // fec0::/10, the deprecated site-local
		b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1: // 64:ff9b:1::/48, local-use NAT64 (RFC 8215)
		return ClassPrivate
	}
	return ""
}

// embeddedV4 is an IPv4 address an IPv6 one carries, and the form.
type embeddedV4 struct {
	v4   netip.Addr
	form string
}

// embedded lists the IPv4 addresses ip carries (none for a plain IPv6
// address), by the IPv6 forms a router or the host may turn back into
// IPv4.
func embedded(ip netip.Addr) []embeddedV4 {
	b := ip.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && [8]byte(b[4:12]) == [8]byte{}:
		// 64:ff9b::/96, NAT64 (RFC 6052): the last 32 bits
		return []embeddedV4{{last, "NAT64"}}
	case [12]byte(b[:12]) == [12]byte{}:
		// ::/96, the deprecated IPv4-compatible form
		return []embeddedV4{{last, "an IPv4-compatible address"}}
	case b[0] == 0x20 && b[1] == 0x02:
		// 2002::/16, 6to4 (RFC 3056): bits 16-47
		return []embeddedV4{{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "6to4"}}
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0:
		// 2001::/32, Teredo (RFC 4380): the server in bits 32-63, the
		// client inverted in 96-127
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []embeddedV4{{netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}), "Teredo (server)"}, {client, "Teredo (client)"}}
	}
	return nil
}
