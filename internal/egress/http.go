package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
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
	// The command's end (its listener closed) ends the connection
	// to the host too, however quiet that host is.
	defer context.AfterFunc(ctx, func() { up.Close() })()
	m := &meter{c: c, ctx: ctx}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err == nil {
		ref = relay(conn, up, func() ([]byte, *Refusal) { return c.checkSNI(br, host) }, m)
	}
	c.finish(&rec, ref, m)
}

// forward relays one plain request and its response; it reports whether
// the client connection may carry another request (only after a refusal:
// a forwarded response is relayed as it comes, spliced, until the host
// closes, so the request goes out with "Connection: close" and the client
// connection ends with it — each request is decided on its own).
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
	// The command's end (its listener closed) ends the connection
	// to the host too, however quiet that host is.
	defer context.AfterFunc(ctx, func() { up.Close() })()
	m := &meter{c: c, ctx: ctx}
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Header.Set("Connection", "close")
	req.Close = true
	req.RequestURI = ""
	cw := &countWriter{w: up, m: m}
	if err := req.Write(cw); err == nil {
		closeWrite(up)
		m.last.Store(time.Now().UnixNano())
		if err := m.pipe(conn, up, &m.received); err != nil {
			rec.Reason = err.Error()
		}
	} else {
		rec.Reason = err.Error()
	}
	c.finish(&rec, nil, m)
	return false
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
