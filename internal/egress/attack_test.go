package egress_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/proxy"

	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// clientHello is a TLS 1.2 ClientHello record sequence naming name (none
// when ""), with bulk bytes of cipher suites and padding to make it as
// large as wanted, split into records of at most 16 KiB as TLS does.
func clientHello(name string, bulk int) []byte {
	u16 := func(n int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(n)) }
	var ext []byte
	if name != "" {
		entry := append(append([]byte{0}, u16(len(name))...), name...)
		list := append(u16(len(entry)), entry...)
		ext = append(append(append(ext, u16(0)...), u16(len(list))...), list...)
	}
	suites := []byte{0xc0, 0x2f, 0x13, 0x01}
	if bulk > 0 {
		// Half in cipher suites (up to 65534 bytes), half in padding
		// (an extension, within the 65535 bytes of all extensions).
		suites = append(suites, bytes.Repeat([]byte{0x00, 0x9c}, bulk/4)...)
		ext = append(append(append(ext, u16(0x0015)...), u16(bulk/2)...), make([]byte, bulk/2)...)
	}
	body := []byte{0x03, 0x03}
	body = append(body, make([]byte, 32)...) // random
	body = append(body, 0)                   // session id
	body = append(append(body, u16(len(suites))...), suites...)
	body = append(body, 1, 0) // compression: null
	body = append(append(body, u16(len(ext))...), ext...)
	msg := append([]byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
	var out []byte
	for len(msg) > 0 {
		frag := msg[:min(len(msg), 16384)]
		msg = msg[len(frag):]
		out = append(append(append(out, 0x16, 0x03, 0x01), u16(len(frag))...), frag...)
	}
	return out
}

// tunnelTo opens a tunnel to host:port through the proxy, by CONNECT or
// SOCKS5.
func tunnelTo(t *testing.T, proxyAddr, via, host string, port int) net.Conn {
	t.Helper()
	if via == "socks5" {
		d, err := proxy.SOCKS5("tcp", proxyAddr, nil, proxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial("tcp", fmt.Sprintf("%s:%d", host, port))
		if err != nil {
			t.Fatalf("socks5 to %s: %v", host, err)
		}
		return c
	}
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s:%d HTTP/1.1\r\nHost: %s\r\n\r\n", host, port, host)
	const ok = "HTTP/1.1 200 Connection established\r\n\r\n"
	head := make([]byte, len(ok))
	if _, err := io.ReadFull(c, head); err != nil || string(head) != ok {
		t.Fatalf("CONNECT %s: %q %v", host, head, err)
	}
	return c
}

// Issue 45, 1: a tunnel allowed for api.test carries a ClientHello that
// crypto/tls cannot read — a server name with a trailing dot
// ("secret.test."), a hello over 64 KiB — or none at all: no name was read,
// and the tunnel used to pass, reaching whatever virtual host the server
// picks. Each is refused before a byte reaches the host; a hello naming
// api.test passes.
func TestTunnelWithAnUnreadableServerNameIsRefused(t *testing.T) {
	origin := testutil.NewSink(t)
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs(public)}}
	p := start(t, []string{"api.test"}, nil, res, egress.DefaultLimits, nil)
	for _, tc := range []struct {
		name   string
		hello  []byte
		reason string
	}{
		{"trailing dot", clientHello("secret.test.", 0), "whose server name (SNI) the proxy cannot read"},
		{"over 64 KiB", clientHello("secret.test", 70<<10), "whose server name (SNI) the proxy cannot read"},
		{"no server name", clientHello("", 0), "carries TLS without a server name"},
	} {
		for _, via := range []string{"connect", "socks5"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				origin.Received.Store(0)
				c := tunnelTo(t, p.addr, via, "api.test", origin.Port)
				defer c.Close()
				go c.Write(tc.hello) // a refused hello is not read to its end
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatal("the tunnel stayed open: the hello went through")
				}
				<-origin.Closed
				if n := origin.Received.Load(); n != 0 {
					t.Fatalf("the host received %d bytes of the hello", n)
				}
			})
		}
		found := false
		for _, r := range p.records() {
			found = found || (r.Rule == "sni" && strings.Contains(r.Reason, tc.reason))
		}
		if !found {
			t.Errorf("%s: no sni refusal %q audited: %+v", tc.name, tc.reason, p.records())
		}
	}
	t.Run("the allowed name passes", func(t *testing.T) {
		origin.Received.Store(0)
		hello := clientHello("api.test", 0)
		c := tunnelTo(t, p.addr, "connect", "api.test", origin.Port)
		if _, err := c.Write(hello); err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).CloseWrite()
		<-origin.Closed
		c.Close()
		if n := origin.Received.Load(); n != int64(len(hello)) {
			t.Fatalf("the host received %d of %d bytes", n, len(hello))
		}
	})
}

// Issue 45, 2: a POST through plain forwarding sends its body under the
// command's byte limit: with a limit of 1,000,000 bytes, a 20 MB upload
// used to go out whole; the host now receives at most the limit.
func TestUploadIsCutAtTheByteLimit(t *testing.T) {
	origin := testutil.NewSink(t)
	res := &resolver{m: map[string][]netip.Addr{"upload.test": addrs(public)}}
	p := start(t, []string{"upload.test"}, nil, res, egress.Limits{Bytes: 1_000_000, Idle: time.Minute}, nil)
	const size = 20 << 20
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://upload.test:%d/", origin.Port), io.LimitReader(zeros{}, size))
	req.ContentLength = size
	resp, err := client(p.addr).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	<-origin.Closed
	if n := origin.Received.Load(); n > 1_000_000 {
		t.Fatalf("the host received %d bytes with a limit of 1,000,000", n)
	}
	p.stop()
	if recs := p.records(); len(recs) != 1 || recs[0].Sent > 1_000_000 || !strings.Contains(recs[0].Reason, "byte limit") {
		t.Fatalf("%+v", recs)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// Issue 45, 11: thirty connections download at once against a 1 MB limit.
// Each used to copy a chunk of up to 1 MiB before the bytes were counted
// (14 MB got through); each now reserves what it moves first, so all of
// them together receive at most the limit.
func TestParallelConnectionsShareTheByteLimit(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{"dl.test": addrs(public)}}
	const limit = 1_000_000
	p := start(t, []string{"dl.test"}, nil, res, egress.Limits{Bytes: limit, Idle: time.Minute}, nil)
	var got atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", p.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			// The tunnel's answer and what comes through it are all
			// counted: a connection opened once the limit is used up is
			// refused (a 403 of its own, not through the tunnel).
			fmt.Fprintf(c, "CONNECT dl.test:%d HTTP/1.1\r\nHost: dl.test\r\n\r\n", port)
			fmt.Fprintf(c, "GET /?bytes=%d HTTP/1.1\r\nHost: dl.test\r\nConnection: close\r\n\r\n", 1<<20)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != 200 {
				return
			}
			n, _ := io.Copy(io.Discard, br)
			got.Add(n)
		}()
	}
	wg.Wait()
	p.stop()
	var moved int64
	for _, r := range p.records() {
		moved += r.Sent + r.Received
	}
	if got.Load() > limit || moved > limit {
		t.Fatalf("30 connections received %d bytes (%d both ways) with a limit of %d", got.Load(), moved, limit)
	}
	if got.Load() < limit/2 {
		t.Fatalf("only %d bytes got through: the limit must be shared, not refused early", got.Load())
	}
}

// Issue 45, 12: the idle timeout holds while the proxy reads from the
// client too, not only once a tunnel is up: a request line cut off, a
// SOCKS greeting cut off, a POST whose body stalls are each closed after
// it, where they used to stay open for the command's life.
func TestIdleTimeoutWhileTheClientIsHalfWay(t *testing.T) {
	origin := testutil.NewSink(t)
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs(public)}}
	p := start(t, []string{"api.test"}, nil, res, egress.Limits{Idle: 200 * time.Millisecond}, nil)
	for _, tc := range []struct{ name, send string }{
		{"partial request line", "GET http://api.test/ HTT"},
		{"partial headers", fmt.Sprintf("GET http://api.test:%d/ HTTP/1.1\r\nHost: api.test\r\n", origin.Port)},
		{"partial socks greeting", "\x05\x02\x00"},
		{"partial socks request", "\x05\x01\x00\x05\x01\x00\x03"},
		{"stalled POST body", fmt.Sprintf("POST http://api.test:%d/ HTTP/1.1\r\nHost: api.test\r\nContent-Length: 100000\r\n\r\nhalf", origin.Port)},
		{"partial CONNECT", "CONNECT api.test:443 HTTP/1.1\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", p.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, tc.send)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.Copy(io.Discard, bufio.NewReader(c)); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("the proxy kept the half-sent request open past its idle timeout")
			}
		})
	}
}

// An allow entry never makes loopback, link-local, the unspecified
// address or a metadata service reachable unless it is that address: not
// an exact name (which used to allow every port of what it resolved to,
// the server's own gRPC port on loopback included), not a wildcard, not a
// range — 0.0.0.0/0 used to allow loopback and the metadata service.
// Private ranges stay reachable through a range that contains them.
func TestAllowEntriesNeverReachTheHostOrMetadataByNameOrRange(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{
		"grpc.test": addrs("127.0.0.1"), "meta.test": addrs("169.254.169.254"), "ali.test": addrs("100.100.100.200"),
		"v6meta.test": addrs("fd00:ec2::254"), "nat64.test": addrs("64:ff9b::7f00:1"),
	}}
	p := start(t, []string{"grpc.test", "meta.test", "*.test", "0.0.0.0/0", "::/0", fmt.Sprintf("127.0.0.2:%d", port)}, nil, res, egress.DefaultLimits, nil)
	c := client(p.addr)
	for _, tc := range []struct{ host, want string }{
		{"grpc.test", "resolves to 127.0.0.1, a loopback address"},
		{"meta.test", "resolves to 169.254.169.254, a link-local address"},
		{"ali.test", "resolves to 100.100.100.200, a metadata address"},
		{"v6meta.test", "resolves to fd00:ec2::254, a metadata address"},
		{"nat64.test", "resolves to 64:ff9b::7f00:1, a loopback (IPv4 127.0.0.1 in NAT64) address"},
		{"127.0.0.1", "it is a loopback address"},
		{"169.254.169.254", "it is a link-local address"},
		{"0.0.0.0", "it is an unspecified address"},
		{"[::1]", "it is a loopback address"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			code, body := get(t, c, fmt.Sprintf("http://%s/", net.JoinHostPort(strings.Trim(tc.host, "[]"), fmt.Sprint(port))))
			if code != 403 || !strings.Contains(body, tc.want) || !strings.Contains(body, "which no host name, wildcard or range in the allow list ever reaches") {
				t.Fatalf("%d %q, want a refusal saying %q", code, body, tc.want)
			}
			if strings.Contains(body, "add ") {
				t.Fatalf("the refusal suggests an entry: %q", body)
			}
		})
	}
	// The entry that is the address itself reaches it, at its port only.
	if code, body := get(t, c, fmt.Sprintf("http://127.0.0.2:%d/", port)); code != 200 || !strings.Contains(body, "hello 127.0.0.2") {
		t.Fatalf("127.0.0.2 listed literally: %d %q", code, body)
	}
	// A private address stays reachable through a range containing it.
	if code, body := get(t, c, fmt.Sprintf("http://10.1.2.3:%d/", port)); code != 200 {
		t.Fatalf("10.1.2.3 through 0.0.0.0/0: %d %q", code, body)
	}
}

// Issue 45, 3: the address classes cover every range that is not the
// public internet, and IPv6 forms that carry an IPv4 address are judged by
// it. A name below an allowed wildcard that resolves there is refused.
func TestEveryInsideRangeIsRefusedByName(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	cases := map[string]string{
		"100.100.100.200":             "a metadata address",
		"100.64.0.1":                  "a shared address",
		"198.18.0.1":                  "a benchmarking address",
		"240.0.0.1":                   "a reserved address",
		"192.0.0.170":                 "a reserved address",
		"64:ff9b::a9fe:a9fe":          "a link-local (IPv4 169.254.169.254 in NAT64) address",
		"64:ff9b::a00:1":              "a private (IPv4 10.0.0.1 in NAT64) address",
		"64:ff9b:1::1":                "a private address",
		"2002:7f00:1::1":              "a loopback (IPv4 127.0.0.1 in 6to4) address",
		"2002:a9fe:a9fe::1":           "a link-local (IPv4 169.254.169.254 in 6to4) address",
		"::ffff:169.254.169.254":      "169.254.169.254, a link-local address",
		"::7f00:1":                    "a loopback (IPv4 127.0.0.1 in an IPv4-compatible address) address",
		"2001:0:7f00:1::1":            "a loopback (IPv4 127.0.0.1 in Teredo (server)) address",
		"2001:0:cb00:7101::80ff:fffe": "a loopback (IPv4 127.0.0.1 in Teredo (client)) address",
		"fec0::1":                     "a private address",
	}
	m := map[string][]netip.Addr{}
	i := 0
	names := map[string]string{}
	for addr := range cases {
		name := fmt.Sprintf("h%d.corp.test", i)
		i++
		m[name] = addrs(addr)
		names[name] = addr
	}
	p := start(t, []string{"*.corp.test"}, nil, &resolver{m: m}, egress.DefaultLimits, nil)
	c := client(p.addr)
	for name, addr := range names {
		t.Run(addr, func(t *testing.T) {
			code, body := get(t, c, fmt.Sprintf("http://%s:%d/", name, port))
			if code != 403 || !strings.Contains(body, cases[addr]) {
				t.Fatalf("%s (%s): %d %q, want %q", name, addr, code, body, cases[addr])
			}
		})
	}
}
