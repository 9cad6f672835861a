package egress_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/proxy"

	"github.com/toolnexus/toolnexus/internal/egress"
)

// resolver answers from a map and counts lookups.
type resolver struct {
	m     map[string][]netip.Addr
	calls atomic.Int64
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	if a, ok := r.m[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// public is the address the tests' names resolve to: a public one (TEST-NET-3),
// which the test dialler takes to the test servers on 127.0.0.1 — only an
// entry naming 127.0.0.1 itself may reach loopback.
const public = "203.0.113.1"

// toLoopback dials the port of a checked address on 127.0.0.1, where every
// test server listens.
func toLoopback(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), a.Port()).String())
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// running is a proxy served on a loopback listener, as the sandbox serves
// it inside a command's namespace; stop closes the listener and waits.
type running struct {
	addr   string
	dialed []string
	mu     sync.Mutex
	recs   []egress.Record
	stop   func()
}

func (r *running) records() []egress.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]egress.Record(nil), r.recs...)
}

func start(t *testing.T, allow, deny []string, res *resolver, lim egress.Limits, decide egress.Decider) *running {
	t.Helper()
	rules, err := egress.ParseRules("sandbox.egress", allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{}
	px := egress.New(egress.Config{Rules: rules, Resolver: res, Limits: lim, Decide: decide,
		Audit: func(rec egress.Record) { r.mu.Lock(); r.recs = append(r.recs, rec); r.mu.Unlock() },
		Dial: func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			r.mu.Lock()
			r.dialed = append(r.dialed, a.String())
			r.mu.Unlock()
			return toLoopback(ctx, a)
		}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		px.Bind(egress.Call{Principal: "alice", Session: "s1", Tool: "bash"}).ServeEgress(ln)
	}()
	var once sync.Once
	r.addr = ln.Addr().String()
	r.stop = func() { once.Do(func() { ln.Close(); <-done }) }
	t.Cleanup(r.stop)
	return r
}

func origin(t *testing.T) (int, func()) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := r.URL.Query().Get("bytes"); n != "" {
			var size int
			fmt.Sscan(n, &size)
			w.Write(make([]byte, size))
			return
		}
		fmt.Fprintf(w, "hello %s", r.Host)
	}))
	return srv.Listener.Addr().(*net.TCPAddr).Port, srv.Close
}

func client(proxyAddr string) *http.Client {
	u, _ := url.Parse("http://" + proxyAddr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Each decision, over plain HTTP forwarding: the deny list first, then
// the allow list by name or address, then the address's class.
func TestDecisions(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{
		"pypi.test": addrs("203.0.113.1"), "files.pypi.test": addrs("203.0.113.7"), "inside.pypi.test": addrs("10.1.2.3"),
		"loop.test":      addrs("127.0.0.1"),
		"meta.pypi.test": addrs("169.254.169.254"), "bad.pypi.test": addrs("203.0.113.66"), "v6.pypi.test": addrs("::1"),
		"lan.test": addrs("10.9.0.5"), "mixed.pypi.test": addrs("203.0.113.8", "127.0.0.1"),
		"pypi.test.evil": addrs("203.0.113.10"), "only-port.test": addrs("203.0.113.11"),
	}}
	p := start(t, []string{"pypi.test", "*.pypi.test", "10.9.0.0/16", fmt.Sprintf("only-port.test:%d", port+1), "loop.test"},
		[]string{"203.0.113.66", "blocked.pypi.test"}, res, egress.DefaultLimits, nil)
	c := client(p.addr)
	for _, tc := range []struct {
		host, want string
		ok         bool
	}{
		{"pypi.test", "hello pypi.test", true},                            // exact name
		{"loop.test", "resolves to 127.0.0.1, a loopback address", false}, // even an exact name never reaches loopback
		{"files.pypi.test", "hello files.pypi.test", true},                // wildcard, public address
		{"lan.test", "hello lan.test", true},                              // an address entry allows its addresses whatever name led there
		{"10.9.0.5", "hello 10.9.0.5", true},                              // IP literal inside an allowed prefix
		{"pypi.test.evil", "is not allowed", false},                       // a suffix is not the domain
		{"blocked.pypi.test", "denied by sandbox.egress.deny[1]", false},
		{"bad.pypi.test", "denied by sandbox.egress.deny[0]", false}, // denied by its address
		{"inside.pypi.test", "resolves to 10.1.2.3, a private address", false},
		{"meta.pypi.test", "resolves to 169.254.169.254, a link-local address", false},
		{"v6.pypi.test", "resolves to ::1, a loopback address", false},
		{"mixed.pypi.test", "resolves to 127.0.0.1, a loopback address", false}, // one inside answer refuses the name
		{"127.0.0.1", "it is a loopback address", false},
		{"nowhere.pypi.test", "nowhere.pypi.test does not resolve", false},
		{"only-port.test", "is not allowed", false}, // listed for another port
	} {
		t.Run(tc.host, func(t *testing.T) {
			code, body := get(t, c, fmt.Sprintf("http://%s/", net.JoinHostPort(tc.host, fmt.Sprint(port))))
			if (code == 200) != tc.ok || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %q, want ok=%v and %q", code, body, tc.ok, tc.want)
			}
		})
	}
	p.stop() // every connection ends, and is recorded
	if lan := p.records(); len(lan) != 15 {
		t.Fatalf("%d records for 15 requests", len(lan))
	}
}

// A name is resolved once per connection, and the proxy connects to the
// address it checked: a resolver that changes its answer between a check
// and a connect (DNS rebinding) has no second lookup to change.
func TestConnectsToTheAddressChecked(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs("203.0.113.9")}}
	p := start(t, []string{"*.test"}, nil, res, egress.DefaultLimits, nil)
	code, body := get(t, client(p.addr), fmt.Sprintf("http://api.test:%d/", port))
	if code != 200 || body != "hello api.test:"+fmt.Sprint(port) {
		t.Fatalf("%d %s", code, body)
	}
	p.mu.Lock()
	dialed := append([]string(nil), p.dialed...)
	p.mu.Unlock()
	if res.calls.Load() != 1 || len(dialed) != 1 || dialed[0] != fmt.Sprintf("203.0.113.9:%d", port) {
		t.Fatalf("lookups %d, dialled %v", res.calls.Load(), dialed)
	}
}

// CONNECT and SOCKS5 are decided the same way; a refusal says why (in
// the 403's status line and body for CONNECT; reply 2, "not allowed by
// ruleset", for SOCKS5).
func TestConnectAndSOCKS5(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs(public), "evil.test": addrs(public)}}
	p := start(t, []string{"api.test"}, []string{"evil.test"}, res, egress.DefaultLimits, nil)

	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT evil.test:%d HTTP/1.1\r\nHost: evil.test:%d\r\n\r\n", port, port)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	conn.Close()
	if resp.StatusCode != 403 || !strings.Contains(resp.Status, "denied by sandbox.egress.deny[0]") || !strings.Contains(string(b), `("evil.test")`) ||
		resp.Header.Get("X-Toolnexus-Egress-Rule") != "sandbox.egress.deny[0]" {
		t.Fatalf("%s %q %v", resp.Status, b, resp.Header)
	}

	d, err := proxy.SOCKS5("tcp", p.addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.(proxy.ContextDialer).DialContext, DisableKeepAlives: true}}
	code, body := get(t, hc, fmt.Sprintf("http://api.test:%d/", port))
	if code != 200 || !strings.Contains(body, "hello api.test") {
		t.Fatalf("socks5: %d %s", code, body)
	}
	if _, err := d.Dial("tcp", fmt.Sprintf("evil.test:%d", port)); err == nil || !strings.Contains(err.Error(), "connection not allowed by ruleset") {
		t.Fatalf("socks5 to a denied host: %v", err)
	}
	p.stop() // every connection ends, and is recorded
	var socksAllowed, refused int
	for _, r := range p.records() {
		switch {
		case r.Allowed && r.Protocol == "socks5" && r.Received > 0 && r.Sent > 0:
			socksAllowed++
		case !r.Allowed && r.Rule == "sandbox.egress.deny[0]":
			refused++
		}
	}
	if socksAllowed != 1 || refused != 2 {
		t.Fatalf("%+v", p.records())
	}
}

// The policy hook decides after the rules; its refusal names the policy.
func TestPolicyDecides(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs(public)}}
	var seen egress.ConnectRequest
	p := start(t, []string{"api.test"}, nil, res, egress.DefaultLimits, func(r egress.ConnectRequest) *egress.Refusal {
		seen = r
		return &egress.Refusal{Rule: "policy no-api", Reason: "api.test is denied by policy no-api"}
	})
	code, body := get(t, client(p.addr), fmt.Sprintf("http://api.test:%d/", port))
	if code != 403 || !strings.Contains(body, "egress refused by policy no-api: api.test is denied by policy no-api") {
		t.Fatalf("%d %s", code, body)
	}
	if seen.Principal != "alice" || seen.Session != "s1" || seen.Tool != "bash" || seen.Host != "api.test" || seen.Port != port {
		t.Fatalf("policy saw %+v", seen)
	}
}

// The limits: connections per command, bytes per call, idle time.
func TestLimits(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs(public)}}
	t.Run("connections", func(t *testing.T) {
		p := start(t, []string{"api.test"}, nil, res, egress.Limits{Connections: 2}, nil)
		c := client(p.addr)
		for i := 0; i < 2; i++ {
			if code, body := get(t, c, fmt.Sprintf("http://api.test:%d/", port)); code != 200 {
				t.Fatalf("%d %s", code, body)
			}
		}
		code, body := get(t, c, fmt.Sprintf("http://api.test:%d/", port))
		if code != 403 || !strings.Contains(body, "egress refused by sandbox.egress.limits.connections") {
			t.Fatalf("third connection: %d %s", code, body)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		p := start(t, []string{"api.test"}, nil, res, egress.Limits{Bytes: 64 << 10}, nil)
		c := client(p.addr)
		_, body := get(t, c, fmt.Sprintf("http://api.test:%d/?bytes=%d", port, 1<<20))
		if len(body) >= 1<<20 {
			t.Fatalf("a 1 MiB download passed a 64 KiB limit")
		}
		code, body := get(t, c, fmt.Sprintf("http://api.test:%d/", port))
		if code != 403 || !strings.Contains(body, "sandbox.egress.limits.bytes") {
			t.Fatalf("after the limit: %d %s", code, body)
		}
	})
	t.Run("idle", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err == nil {
				io.Copy(io.Discard, c) // says nothing
				c.Close()
			}
		}()
		p := start(t, []string{"api.test"}, nil, res, egress.Limits{Idle: 100 * time.Millisecond}, nil)
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT api.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", ln.Addr().(*net.TCPAddr).Port)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("an idle tunnel must be closed by the proxy, got %v", err)
		}
	})
}

// Per-tool rules replace the global allow list; the global deny list
// still applies.
func TestToolRules(t *testing.T) {
	port, stop := origin(t)
	defer stop()
	res := &resolver{m: map[string][]netip.Addr{"api.test": addrs(public), "pkg.test": addrs(public)}}
	global, _ := egress.ParseRules("sandbox.egress", []string{"api.test"}, []string{"evil.test"})
	tool, _ := egress.ParseRules("sandbox.egress.tools.fetcher", []string{"pkg.test", "evil.test"}, nil)
	px := egress.New(egress.Config{Rules: global, Tools: map[string]egress.Rules{"fetcher": tool}, Resolver: res, Dial: toLoopback})
	for _, tc := range []struct {
		tool, host, want string
	}{
		{"bash", "api.test", "hello"},
		{"bash", "pkg.test", "is not allowed"},
		{"fetcher", "pkg.test", "hello"},
		{"fetcher", "api.test", "is not allowed"},
		{"fetcher", "evil.test", "denied by sandbox.egress.deny[0]"},
	} {
		t.Run(tc.tool+"/"+tc.host, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); px.Bind(egress.Call{Tool: tc.tool}).ServeEgress(ln) }()
			_, body := get(t, client(ln.Addr().String()), fmt.Sprintf("http://%s:%d/", tc.host, port))
			ln.Close()
			<-done
			if !strings.Contains(body, tc.want) {
				t.Fatalf("%s, want %q", body, tc.want)
			}
		})
	}
}

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"pypi.org", ""}, {"*.github.com:443", ""}, {"10.0.0.0/8", ""}, {"[::1]:8080", ""}, {"fd00::/8", ""}, {"[fd00::/8]:443", ""},
		{"127.0.0.1:80", ""},
		{"", "is empty"}, {"http://x", "has a scheme"}, {"x:0", "a port is 1 to 65535"}, {"x:http", "a port is 1 to 65535"},
		{"*", "is not a host name"}, {"a..b", "is not a host name"}, {"10.0.0.0/40", "is not a CIDR prefix"}, {"[::1", "unclosed ["},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := egress.ParsePattern("k", tc.in)
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("%v, want %q", err, tc.err)
			}
		})
	}
}

// A tunnel whose server speaks first (an SSH banner) is not held up by
// the look for a ClientHello; TLS naming another server than the one the
// tunnel was decided for is refused.
func TestTunnelFirstBytes(t *testing.T) {
	port := tcpHost(t, "SSH-2.0-test\r\n")
	res := &resolver{m: map[string][]netip.Addr{"git.test": addrs(public)}}
	p := start(t, []string{"git.test"}, nil, res, egress.DefaultLimits, nil)
	tunnel := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "CONNECT git.test:%d HTTP/1.1\r\nHost: git.test\r\n\r\n", port)
		br := bufio.NewReader(conn)
		if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		return conn, br
	}
	conn, br := tunnel()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := br.ReadString('\n'); err != nil || line != "SSH-2.0-test\r\n" {
		t.Fatalf("server-first banner: %q %v", line, err)
	}
	conn.Close()

	// The TLS client goes to a host that waits for it: against the
	// banner host its handshake would fail on the banner at once, and the
	// proxy could be stopped before it read the ClientHello it refuses.
	port = tcpHost(t, "")
	conn, _ = tunnel()
	defer conn.Close()
	tc := tls.Client(conn, &tls.Config{ServerName: "elsewhere.test", InsecureSkipVerify: true})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err == nil {
		t.Fatal("TLS for another name must not pass the tunnel")
	}
	p.stop()
	var sni bool
	for _, r := range p.records() {
		sni = sni || (r.Rule == "sni" && strings.Contains(r.Reason, "carries TLS for elsewhere.test"))
	}
	if !sni {
		t.Fatalf("%+v", p.records())
	}
}

// tcpHost is a TCP server on 127.0.0.1 that writes greeting (if any) to
// each connection, then reads it to its end; it returns its port and
// closes when the test ends.
func tcpHost(t *testing.T, greeting string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(greeting))
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// The command's end closes its tunnels, even to a host that never
// speaks: the sandbox waits for the proxy before the call returns.
func TestStopEndsQuietTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	res := &resolver{m: map[string][]netip.Addr{"quiet.test": addrs(public)}}
	p := start(t, []string{"quiet.test"}, nil, res, egress.DefaultLimits, nil)
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT quiet.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", ln.Addr().(*net.TCPAddr).Port)
	if resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	up := <-accepted
	defer up.Close()
	p.stop() // returns only once every handler has ended
	up.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := up.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the host's side must be closed: %v", err)
	}
}
