package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// serveHTTP serves HTTP proxy requests on one client connection: a
// CONNECT becomes a tunnel; an absolute-URI request is forwarded, each on
// a connection of its own decided afresh (so a redirect to another host
// is decided like any request), until the client closes.
func (c *Command) serveHTTP(ctx context.Context, conn net.Conn, br *bufio.Reader) {
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.Method == http.MethodConnect {
			c.tunnel(ctx, conn, br, req)
			return
		}
		if !c.forward(ctx, conn, req) {
			return
		}
	}
}

// hostPort splits a request's authority, with def as the default port.
func hostPort(authority string, def int) (string, int) {
	host, p, err := net.SplitHostPort(authority)
	if err != nil {
		return strings.Trim(authority, "[]"), def
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return host, 0
	}
	return host, port
}

func (c *Command) tunnel(ctx context.Context, conn net.Conn, br *bufio.Reader, req *http.Request) {
	host, port := hostPort(req.Host, 443)
	rec := Record{Protocol: "connect"}
	up, ref := c.connect(ctx, host, port, &rec)
	if ref != nil {
		refuseHTTP(conn, ref)
		c.finish(&rec, ref, nil)
		return
	}
	defer up.Close()
	m := &meter{c: c}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err == nil {
		relay(conn, up, br, m)
	}
	c.finish(&rec, nil, m)
}

// forward relays one plain request and its response; it reports whether
// the client connection may carry another request.
func (c *Command) forward(ctx context.Context, conn net.Conn, req *http.Request) bool {
	defer req.Body.Close()
	rec := Record{Protocol: "http"}
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		ref := &Refusal{Rule: "request", Reason: "the proxy forwards absolute http:// URLs and tunnels CONNECT; this request is neither"}
		refuseHTTP(conn, ref)
		c.finish(&rec, ref, nil)
		return false
	}
	host, port := hostPort(req.URL.Host, 80)
	up, ref := c.connect(ctx, host, port, &rec)
	if ref != nil {
		refuseHTTP(conn, ref)
		c.finish(&rec, ref, nil)
		return !req.Close
	}
	defer up.Close()
	m := &meter{c: c}
	mu := &metered{Conn: up, m: m}
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.RequestURI = ""
	ok := false
	if err := req.Write(&countWriter{mu, m}); err == nil {
		resp, err := http.ReadResponse(bufio.NewReaderSize(mu, 64<<10), req)
		if err == nil {
			err = resp.Write(conn)
			resp.Body.Close()
			ok = err == nil && !resp.Close && !req.Close
		}
		if err != nil {
			ref = &Refusal{Rule: "connect", Reason: fmt.Sprintf("%s:%d: %v", host, port, err)}
			rec.Reason = ref.Reason
		}
	}
	c.finish(&rec, nil, m)
	return ok
}

// countWriter counts what the command sends to the host.
type countWriter struct {
	w *metered
	m *meter
}

func (cw *countWriter) Write(b []byte) (int, error) {
	n, err := cw.w.Write(b)
	cw.m.sent.Add(int64(n))
	cw.m.c.bytes.Add(int64(n))
	return n, err
}

// refuseHTTP answers a refused request with 403: the reason in the status
// line (what `curl -v` shows for a refused CONNECT), in a header, and as
// the body.
func refuseHTTP(conn net.Conn, ref *Refusal) {
	body := "egress refused by " + ref.Rule + ": " + ref.Reason + "\n"
	status := strings.NewReplacer("\r", " ", "\n", " ").Replace(body[:len(body)-1])
	fmt.Fprintf(conn, "HTTP/1.1 403 %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Toolnexus-Egress-Rule: %s\r\nContent-Length: %d\r\n\r\n%s",
		status, strings.NewReplacer("\r", " ", "\n", " ").Replace(ref.Rule), len(body), body)
}
