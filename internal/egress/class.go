package egress

import "net/netip"

// AddrClass names the class of an address that is refused unless a rule
// names it explicitly — the server itself, its network, the cloud
// metadata service — or "" for a public one. webfetch's guard and the
// egress proxy share it, so both draw the line in the same place.
func AddrClass(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsPrivate():
		return "private"
	case ip.Is4() && ip.As4()[0] == 0:
		return "unspecified" // 0.0.0.0/8, "this network", reaches the host on Linux
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	return ""
}
