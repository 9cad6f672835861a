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
// host: when it is a TLS ClientHello naming another server (SNI), the
// tunnel is refused — it was decided for host, and a client must not
// reach a different virtual host behind an allowed name's address. It
// returns every byte it read, to go to the host first. A client that
// sends no ClientHello, or one without a server name, passes.
func (c *Command) checkSNI(conn net.Conn, br *bufio.Reader, host string) ([]byte, *Refusal) {
	if idle := c.p.cfg.Limits.Idle; idle > 0 {
		_ = conn.SetReadDeadline(time.Now().Add(idle))
	}
	b, err := br.Peek(1)
	if err != nil || b[0] != tlsHandshake {
		return pending(br), nil
	}
	rec := &recording{r: br}
	var sni string
	_ = tls.Server(rec, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni = h.ServerName
		return nil, errHelloRead
	}}).Handshake()
	data := append(rec.read, pending(br)...)
	sni = strings.ToLower(strings.TrimSuffix(sni, "."))
	if sni != "" && sni != strings.ToLower(strings.TrimSuffix(host, ".")) {
		return nil, &Refusal{Rule: "sni", Reason: fmt.Sprintf("the tunnel to %s carries TLS for %s (SNI): a tunnel reaches only the host it was decided for", host, sni)}
	}
	return data, nil
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
