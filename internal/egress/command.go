package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Command is the proxy as one command sees it: the call it works for,
// that tool's rules, and the command's limits, counted over all its
// connections (and over every listener it is served on).
type Command struct {
	p     *Proxy
	call  Call
	rules Rules

	conns atomic.Int64
	// bytes counts the bytes moved; committed those moved plus those
	// reserved by copies under way (budget.go).
	bytes, committed atomic.Int64
}

// Bind returns the proxy for one command of call.
func (p *Proxy) Bind(call Call) *Command {
	return &Command{p: p, call: call, rules: p.rulesFor(call.Tool)}
}

// ServeEgress serves an anonymous command (no call bound).
func (p *Proxy) ServeEgress(l net.Listener) { p.Bind(Call{}).ServeEgress(l) }

// serving is one listener's connections, closed when it closes.
type serving struct {
	ctx  context.Context
	mu   sync.Mutex
	open map[net.Conn]struct{}
	wg   sync.WaitGroup
}

// ServeEgress serves the command's connections on l until l is closed
// (the sandbox closes it when the command exits), then closes every
// connection still open and returns once their handlers have ended.
func (c *Command) ServeEgress(l net.Listener) {
	ctx, cancel := context.WithCancel(context.Background())
	sv := &serving{ctx: ctx, open: map[net.Conn]struct{}{}}
	for {
		conn, err := l.Accept()
		if err != nil {
			break
		}
		sv.mu.Lock()
		sv.open[conn] = struct{}{}
		sv.mu.Unlock()
		sv.wg.Add(1)
		go func() {
			defer sv.wg.Done()
			c.handle(ctx, conn)
			conn.Close()
			sv.mu.Lock()
			delete(sv.open, conn)
			sv.mu.Unlock()
		}()
	}
	cancel()
	sv.mu.Lock()
	for conn := range sv.open {
		conn.Close()
	}
	sv.mu.Unlock()
	sv.wg.Wait()
}

// handle tells SOCKS5 (first byte 5) from HTTP and serves the connection.
// Everything the proxy reads from the client itself (a request line and
// headers, a SOCKS greeting, a request body, a ClientHello) goes through
// an idleReader, so a client that stalls part-way is cut after the idle
// timeout like a quiet tunnel.
func (c *Command) handle(ctx context.Context, conn net.Conn) {
	br := bufio.NewReaderSize(idleReader{conn, c.p.cfg.Limits.Idle}, 4096)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		c.serveSOCKS(ctx, conn, br)
		return
	}
	c.serveHTTP(ctx, conn, br)
}

// idleReader reads from a client connection with the idle timeout as a
// deadline on each read: a read that waits that long without a byte fails.
type idleReader struct {
	conn net.Conn
	idle time.Duration
}

func (r idleReader) Read(b []byte) (int, error) {
	if r.idle > 0 {
		_ = r.conn.SetReadDeadline(time.Now().Add(r.idle))
	}
	return r.conn.Read(b)
}

// open decides on host:port and connects: the connection limit, the
// rules, the policy, then the dial to an address checked.
func (c *Command) connect(ctx context.Context, host string, port int, rec *Record) (net.Conn, *Refusal) {
	rec.Call, rec.Host, rec.Port = c.call, host, port
	if max := c.p.cfg.Limits.Connections; max > 0 && c.conns.Add(1) > int64(max) {
		return nil, &Refusal{Rule: "sandbox.egress.limits.connections", Reason: fmt.Sprintf("the command opened its %d connections (sandbox.egress.limits.connections)", max)}
	}
	if max := c.p.cfg.Limits.Bytes; max > 0 && c.bytes.Load() >= max {
		return nil, byteLimit(max)
	}
	addrs, ref := c.p.decide(ctx, c.call, &c.rules, host, port)
	if ref != nil {
		return nil, ref
	}
	up, addr, err := c.p.dial(ctx, addrs, port)
	if err != nil {
		return nil, &Refusal{Rule: "connect", Reason: fmt.Sprintf("%s:%d is allowed but did not answer: %v", host, port, err)}
	}
	rec.Addr, rec.Allowed = addr, true
	return up, nil
}

func byteLimit(max int64) *Refusal {
	return &Refusal{Rule: "sandbox.egress.limits.bytes", Reason: fmt.Sprintf("the call moved its %d bytes (sandbox.egress.limits.bytes)", max)}
}

// finish audits and counts one connection.
func (c *Command) finish(rec *Record, ref *Refusal, m *meter) {
	if ref != nil {
		rec.Allowed, rec.Rule, rec.Reason = false, ref.Rule, ref.Reason
	}
	if m != nil {
		rec.Sent, rec.Received = m.sent.Load(), m.received.Load()
	}
	c.p.cfg.Metrics.connection(rec.Allowed)
	c.p.cfg.Metrics.bytes(rec.Sent, rec.Received)
	if c.p.cfg.Audit != nil {
		c.p.cfg.Audit(*rec)
	}
}

// meter counts one connection's bytes each way, and keeps the idle
// clock both directions share.
type meter struct {
	c              *Command
	ctx            context.Context // the command's: its end stops a wait for budget
	sent, received atomic.Int64
	last           atomic.Int64 // unix nanoseconds of the last byte either way
}

var errByteLimit = errors.New("egress: the call's byte limit is reached")

// chunk is how much one copy moves before the limits are looked at again.
const chunk = 1 << 20

// pipe copies src to dst until src ends, in chunks, each a splice(2)
// between the two sockets when both are TCP (no copy through user
// space). With a byte limit a chunk is what src holds once it has
// something (waiting), reserved from the budget first; the read deadline
// set before each chunk is the idle timeout — a chunk that moved bytes,
// or a quiet direction while the other is busy, is not idle.
func (m *meter) pipe(dst, src net.Conn, count *atomic.Int64) error {
	lim := m.c.p.cfg.Limits
	for {
		if lim.Idle > 0 {
			_ = src.SetReadDeadline(time.Now().Add(lim.Idle))
		}
		n, moved, err := m.copyChunk(dst, src, lim.Bytes > 0)
		if moved > 0 {
			count.Add(moved)
			m.last.Store(time.Now().UnixNano())
		}
		switch {
		case err == nil && n > 0:
		case err == nil, err == io.EOF:
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded) && (moved > 0 || time.Since(time.Unix(0, m.last.Load())) < lim.Idle):
		default:
			return err
		}
	}
}

// copyChunk moves one chunk from src to dst and returns its size (0: src
// ended) and the bytes moved.
func (m *meter) copyChunk(dst, src net.Conn, limited bool) (int64, int64, error) {
	n := int64(chunk)
	if limited {
		avail, err := waiting(src, n)
		if err != nil || avail == 0 {
			return 0, 0, err
		}
		if n, err = m.c.take(m.ctx, min(avail, chunk)); err != nil {
			return 0, 0, err
		}
	}
	moved, err := io.CopyN(dst, src, n)
	m.c.moved(n, moved)
	return n, moved, err
}

// relay copies both ways until either side ends, half-closing so the
// other side sees the end of what was sent. first gives what goes to the
// host before the client's socket is spliced (what the proxy already read
// past the request, the ClientHello it inspected), or a refusal that ends
// the tunnel; the host's direction starts at once, so a protocol where
// the server speaks first is not held up by it.
func relay(client, up net.Conn, first func() ([]byte, *Refusal), m *meter) *Refusal {
	m.last.Store(time.Now().UnixNano())
	done := make(chan *Refusal, 1)
	go func() {
		data, ref := first()
		var err error
		if ref == nil && len(data) > 0 {
			_, err = (&countWriter{w: up, m: m}).Write(data)
		}
		if ref == nil && err == nil {
			err = m.pipe(up, client, &m.sent)
		}
		if ref != nil || err != nil {
			client.Close()
			up.Close()
		} else {
			closeWrite(up)
		}
		done <- ref
	}()
	if err := m.pipe(client, up, &m.received); err != nil {
		// A limit, an idle timeout or a reset: end both directions.
		client.Close()
		up.Close()
	} else {
		closeWrite(client)
	}
	return <-done
}

// countWriter is what the proxy itself writes to the host (a forwarded
// request's head and body, the bytes read while deciding): counted as
// sent, and drawn from the byte budget before it is written — a write
// past the limit writes what is left and fails.
type countWriter struct {
	w io.Writer
	m *meter
}

func (cw *countWriter) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		grant, err := cw.m.c.take(cw.m.ctx, int64(len(b)-written))
		if err != nil {
			return written, err
		}
		n, err := cw.w.Write(b[written : written+int(grant)])
		written += n
		cw.m.sent.Add(int64(n))
		cw.m.c.moved(grant, int64(n))
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// pending returns what br holds beyond what was parsed.
func pending(br *bufio.Reader) []byte {
	if br.Buffered() == 0 {
		return nil
	}
	b, _ := br.Peek(br.Buffered())
	return append([]byte(nil), b...)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}
