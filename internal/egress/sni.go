package egress

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// tlsHandshake is the first byte of a TLS handshake record.
const tlsHandshake = 0x16

var errHelloRead = errors.New("egress: ClientHello read")

// checkSNI looks at what the client sends first through a tunnel to
// host: when it is a TLS ClientHello, its server name (SNI) must be host —
// the tunnel was decided for host, and a client must not reach a different
// virtual host behind an allowed name's address. A ClientHello the proxy
// cannot read (crypto/tls refuses it: a name with a trailing dot, a hello
// over 64 KiB, bytes that only look like TLS) is refused: its name is
// unknown, and a server may read it where the proxy could not. So is one
// without a server name through a tunnel to a name (only a tunnel to an IP
// literal may carry one: the server then picks its default virtual host,
// as for anyone who asks that address). It returns every byte it read, to
// go to the host first. A client that sends no ClientHello passes.
func (c *Command) checkSNI(br *bufio.Reader, host string) ([]byte, *Refusal) {
	b, err := br.Peek(1)
	if err != nil || b[0] != tlsHandshake {
		return pending(br), nil
	}
	rec := &recording{r: br}
	var sni string
	read := false
	err = tls.Server(rec, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni, read = h.ServerName, true
		return nil, errHelloRead
	}}).Handshake()
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch sni = strings.ToLower(sni); {
	case !read:
		return nil, &Refusal{Rule: "sni", Reason: fmt.Sprintf("the tunnel to %s carries a TLS ClientHello whose server name (SNI) the proxy cannot read (%v): a tunnel reaches only the host it was decided for, so its TLS must name that host in a form the proxy reads", host, helloError(err))}
	case sni == "" && !isAddr(host):
		return nil, &Refusal{Rule: "sni", Reason: fmt.Sprintf("the tunnel to %s carries TLS without a server name (SNI): through a tunnel to a name, TLS must name that host", host)}
	case sni != "" && sni != host:
		return nil, &Refusal{Rule: "sni", Reason: fmt.Sprintf("the tunnel to %s carries TLS for %s (SNI): a tunnel reaches only the host it was decided for", host, sni)}
	}
	return append(rec.read, pending(br)...), nil
}

// helloError is why crypto/tls could not read a ClientHello, without the
// alert it would have sent.
func helloError(err error) string {
	if err == nil {
		return "no ClientHello"
	}
	return strings.TrimPrefix(err.Error(), "remote error: ")
}

// recording is the connection crypto/tls parses the ClientHello from:
// reads come from the client's buffered reader and are kept, writes (the
// alert after the parse is cut short) go nowhere.
type recording struct {
	r    *bufio.Reader
	read []byte
}

func (r *recording) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.read = append(r.read, b[:n]...)
	return n, err
}

func (r *recording) Write(b []byte) (int, error)      { return len(b), nil }
func (r *recording) Close() error                     { return nil }
func (r *recording) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (r *recording) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (r *recording) SetDeadline(time.Time) error      { return nil }
func (r *recording) SetReadDeadline(time.Time) error  { return nil }
func (r *recording) SetWriteDeadline(time.Time) error { return nil }
