package egress

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
)

// SOCKS5 (RFC 1928), CONNECT only, no authentication.
const (
	socksVersion    = 5
	socksCmdConnect = 1
	socksAtypIPv4   = 1
	socksAtypName   = 3
	socksAtypIPv6   = 4

	socksOK          = 0
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksBadCommand  = 7
	socksBadAddress  = 8
)

func (c *Command) serveSOCKS(ctx context.Context, conn net.Conn, br *bufio.Reader) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == 0
	}
	if !noAuth {
		_, _ = conn.Write([]byte{socksVersion, 0xff})
		return
	}
	if _, err := conn.Write([]byte{socksVersion, 0}); err != nil {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	host, ok := readSOCKSAddr(br, req[3])
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	rec := Record{Protocol: "socks5"}
	switch {
	case !ok:
		socksReply(conn, socksBadAddress)
		return
	case req[1] != socksCmdConnect:
		socksReply(conn, socksBadCommand)
		return
	}
	up, ref := c.connect(ctx, host, port, &rec)
	if ref != nil {
		code := byte(socksNotAllowed)
		if ref.Rule == "connect" || ref.Rule == "resolve" {
			code = socksUnreachable
		}
		socksReply(conn, code)
		c.finish(&rec, ref, nil)
		return
	}
	defer up.Close()
	// The command's end (its listener closed) ends the connection
	// to the host too, however quiet that host is.
	defer context.AfterFunc(ctx, func() { up.Close() })()
	m := &meter{c: c, ctx: ctx}
	if socksReply(conn, socksOK) == nil {
		ref = relay(conn, up, func() ([]byte, *Refusal) { return c.checkSNI(br, host) }, m)
	}
	c.finish(&rec, ref, m)
}

// readSOCKSAddr reads the request's address: a name, or an IP literal
// (decided on as the name asked).
func readSOCKSAddr(br *bufio.Reader, atyp byte) (string, bool) {
	switch atyp {
	case socksAtypIPv4, socksAtypIPv6:
		n := 4
		if atyp == socksAtypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", false
		}
		ip, _ := netip.AddrFromSlice(b)
		return ip.String(), true
	case socksAtypName:
		l, err := br.ReadByte()
		if err != nil || l == 0 {
			return "", false
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", false
		}
		return string(b), true
	}
	return "", false
}

// socksReply answers the request; the bound address is not told.
func socksReply(conn net.Conn, code byte) error {
	_, err := conn.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}
