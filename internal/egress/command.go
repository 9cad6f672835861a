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

// meter counts one connection's bytes each way against the command's
// byte limit, and keeps the idle clock both directions share.
type meter struct {
	c              *Command
	sent, received atomic.Int64
	last           atomic.Int64 // unix nanoseconds of the last byte either way
}

var errByteLimit = errors.New("egress: the call's byte limit is reached")

// metered is one side of a relayed connection: reads from the command's
// side count as sent, reads from the host's as received.
type metered struct {
	net.Conn
	m    *meter
	sent bool
}

func (mc *metered) Read(b []byte) (int, error) {
	lim := mc.m.c.p.cfg.Limits
	for {
		if lim.Idle > 0 {
			_ = mc.Conn.SetReadDeadline(time.Now().Add(lim.Idle))
		}
		n, err := mc.Conn.Read(b)
		if n > 0 {
			mc.m.last.Store(time.Now().UnixNano())
			if mc.sent {
				mc.m.sent.Add(int64(n))
			} else {
				mc.m.received.Add(int64(n))
			}
			if lim.Bytes > 0 && mc.m.c.bytes.Add(int64(n)) > lim.Bytes {
				return 0, errByteLimit
			}
			return n, err
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Since(time.Unix(0, mc.m.last.Load())) < lim.Idle {
			continue // the other direction is busy: not idle
		}
		return n, err
	}
}

// relay copies both ways until either side ends, half-closing so the
// other side sees the end of what was sent.
func relay(client, up net.Conn, clientReader io.Reader, m *meter) {
	m.last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		_, _ = io.CopyBuffer(up, &readerOnly{&metered{Conn: client, m: m, sent: true}, clientReader}, buf)
		closeWrite(up)
	}()
	buf := make([]byte, 64<<10)
	_, err := io.CopyBuffer(client, &metered{Conn: up, m: m}, buf)
	closeWrite(client)
	if err != nil {
		// A limit or an idle timeout: end the other direction too.
		client.Close()
		up.Close()
	}
	<-done
}

// readerOnly reads what the buffered reader already holds, then the
// metered connection; it hides WriterTo so CopyBuffer uses our buffer.
type readerOnly struct {
	conn *metered
	br   io.Reader
}

func (r *readerOnly) Read(b []byte) (int, error) {
	if br, ok := r.br.(*bufio.Reader); ok && br != nil && br.Buffered() > 0 {
		n, _ := br.Read(b)
		r.conn.m.sent.Add(int64(n))
		r.conn.m.c.bytes.Add(int64(n))
		return n, nil
	}
	return r.conn.Read(b)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}
