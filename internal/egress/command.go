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
	bytes atomic.Int64
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
func (c *Command) handle(ctx context.Context, conn net.Conn) {
	br := bufio.NewReaderSize(conn, 4096)
	if idle := c.p.cfg.Limits.Idle; idle > 0 {
		_ = conn.SetReadDeadline(time.Now().Add(idle))
	}
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	if first[0] == socksVersion {
		c.serveSOCKS(ctx, conn, br)
		return
	}
	c.serveHTTP(ctx, conn, br)
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
	sent, received atomic.Int64
	last           atomic.Int64 // unix nanoseconds of the last byte either way
}

var errByteLimit = errors.New("egress: the call's byte limit is reached")

// chunk is how much one copy moves before the limits are looked at again.
const chunk = 1 << 20

// pipe copies src to dst until src ends, in chunks, each a splice(2)
// between the two sockets when both are TCP (no copy through user
// space): the byte limit bounds each chunk, and the read deadline set
// before it is the idle timeout — a chunk that moved bytes, or a quiet
// direction while the other is busy, is not idle.
func (m *meter) pipe(dst, src net.Conn, count *atomic.Int64) error {
	lim := m.c.p.cfg.Limits
	for {
		n := int64(chunk)
		if lim.Bytes > 0 {
			left := lim.Bytes - m.c.bytes.Load()
			if left <= 0 {
				return errByteLimit
			}
			n = min(n, left)
		}
		if lim.Idle > 0 {
			_ = src.SetReadDeadline(time.Now().Add(lim.Idle))
		}
		moved, err := io.CopyN(dst, src, n)
		if moved > 0 {
			count.Add(moved)
			m.c.bytes.Add(moved)
			m.last.Store(time.Now().UnixNano())
		}
		switch {
		case err == nil:
		case err == io.EOF:
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded) && (moved > 0 || time.Since(time.Unix(0, m.last.Load())) < lim.Idle):
		default:
			return err
		}
	}
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
			_, err = up.Write(data)
			m.sent.Add(int64(len(data)))
			m.c.bytes.Add(int64(len(data)))
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
