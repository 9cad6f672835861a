package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus/internal/egress"
)

// blockedError is a connection webfetch refused to make: the destination
// is inside (the server itself, its network, the cloud metadata service)
// and builtins.webfetch.allowHosts does not list it.
type blockedError struct {
	addr  string // ip:port actually dialled
	class string
}

func (e *blockedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s address (add it to builtins.webfetch.allowHosts to allow it)", e.addr, e.class)
}

// addrClass names the class of an address webfetch does not reach by
// default, or "" for a public one: the egress proxy's classification.
func addrClass(ip netip.Addr) string { return egress.AddrClass(ip) }

// guardedDial dials like net.Dialer but checks every address it connects
// to, after name resolution: a redirect, a DNS name that resolves inside,
// or one that changes its answer between two lookups (rebinding) all end
// at the same check. A host name listed in allowHosts skips the check for
// every address it resolves to; an address or prefix listed there allows
// those addresses whatever name led to them.
func guardedDial(allow allowList) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		if !allow.name(host) {
			d.Control = func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return &blockedError{addr: address, class: "unparsable"}
				}
				ip := ap.Addr().Unmap()
				if class := addrClass(ip); class != "" && !allow.addr(ip) {
					return &blockedError{addr: address, class: class}
				}
				return nil
			}
		}
		return d.DialContext(ctx, network, addr)
	}
}

// asBlocked finds a refused connection in a client error.
func asBlocked(err error) (*blockedError, bool) {
	var b *blockedError
	ok := errors.As(err, &b)
	return b, ok
}
