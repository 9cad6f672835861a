package mcp

//lint:file-ignore SA1019 MCP logging is deprecated in the newest protocol but still what servers and clients use to relay log messages; toolnexus relays it both ways.

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// settleBound caps how long a streaming call waits, after its result came,
// for the notifications the server sent before that result to be relayed.
// It only matters if one of them was lost (the session closing).
const settleBound = time.Second

// relay routes one session's notifications/progress and
// notifications/message to the calls that stream.
//
// Progress carries the token the call sent, so it reaches exactly that
// call. A log message names no request; it is relayed only while a single
// call is in flight on the session and that call streams, so one caller
// never sees what another caller's call logged.
//
// Order: the SDK hands a response to its caller as soon as it is read, but
// queues notifications for a handler goroutine, so a progress notification
// read before the result could otherwise be relayed after it. The relay
// counts the notifications read off the wire (read) and those its handlers
// have finished (handled); a streaming call, once its result is in, waits
// until everything read by then was handled before it returns.
type relay struct {
	calls atomic.Int64  // calls in flight on the session
	read  atomic.Int64  // progress and log notifications read off the wire
	next  atomic.Uint64 // progress token counter

	mu      sync.Mutex
	handled int64
	changed chan struct{} // closed and replaced whenever handled grows
	streams map[string]*streamCall
}

func newRelay() *relay {
	return &relay{changed: make(chan struct{}), streams: map[string]*streamCall{}}
}

// streamCall is one streaming call's end of the relay. Its sink is called
// under its own lock, and never after end, so nothing follows the result.
type streamCall struct {
	mu   sync.Mutex
	sink tool.Sink
	done bool
}

func (c *streamCall) emit(e tool.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.sink(e)
	}
}

// begin registers a streaming call and puts its progress token and the log
// level it wants in params.
func (r *relay) begin(sink tool.Sink, params *sdk.CallToolParams) (token string, c *streamCall) {
	token = "toolnexus-" + strconv.FormatUint(r.next.Add(1), 10)
	params.SetProgressToken(token)
	// Servers on the newer protocol take the log level per request (older
	// ones were asked once, with logging/setLevel, when the session began).
	params.Meta[sdk.MetaKeyLogLevel] = sdk.LoggingLevel("debug")
	c = &streamCall{sink: sink}
	r.mu.Lock()
	r.streams[token] = c
	r.mu.Unlock()
	return token, c
}

// end waits (bounded) until the notifications read so far were relayed,
// then closes the call's end: later notifications are dropped.
func (r *relay) end(ctx context.Context, token string, c *streamCall) {
	r.settle(ctx, r.read.Load())
	r.mu.Lock()
	delete(r.streams, token)
	r.mu.Unlock()
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

func (r *relay) settle(ctx context.Context, target int64) {
	var timer *time.Timer
	for {
		r.mu.Lock()
		h, ch := r.handled, r.changed
		r.mu.Unlock()
		if h >= target {
			return
		}
		if timer == nil {
			timer = time.NewTimer(settleBound)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-timer.C:
			// Something counted was never handled: stop waiting for it,
			// now and in every later call.
			r.mu.Lock()
			r.handled = max(r.handled, target)
			r.mu.Unlock()
			return
		}
	}
}

func (r *relay) handledOne() {
	r.mu.Lock()
	r.handled++
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *relay) progress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	defer r.handledOne()
	p := req.Params
	tok, _ := p.ProgressToken.(string)
	r.mu.Lock()
	c := r.streams[tok]
	r.mu.Unlock()
	if c != nil {
		c.emit(tool.Event{Kind: tool.EventProgress, Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

func (r *relay) message(_ context.Context, req *sdk.LoggingMessageRequest) {
	defer r.handledOne()
	p := req.Params
	var c *streamCall
	r.mu.Lock()
	if len(r.streams) == 1 && r.calls.Load() == 1 {
		for _, only := range r.streams {
			c = only
		}
	}
	r.mu.Unlock()
	if c != nil {
		c.emit(tool.Event{Kind: tool.EventLog, Level: string(p.Level), Logger: p.Logger, Data: p.Data})
	}
}

// The methods the relay counts.
const (
	methodProgress = "notifications/progress"
	methodMessage  = "notifications/message"
)

// countingConn counts the relayed notifications as the SDK reads them off
// a stdio connection, in wire order.
type countingConn struct {
	sdk.Connection
	r *relay
}

func (c countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && (req.Method == methodProgress || req.Method == methodMessage) {
		c.r.read.Add(1)
	}
	return msg, err
}

// countingBody counts the relayed notifications in an HTTP response body
// (streamable HTTP and SSE), by their method names in the bytes, before the
// SDK decodes them. A method name split across two reads is still counted;
// a tool result that quotes one is counted too, which only makes the next
// streaming call wait out settleBound once.
type countingBody struct {
	io.ReadCloser
	r    *relay
	tail []byte // the last bytes of the previous read, for split names
}

var (
	quotedProgress = []byte(`"` + methodProgress + `"`)
	quotedMessage  = []byte(`"` + methodMessage + `"`)
)

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		buf := p[:n]
		if len(b.tail) > 0 {
			buf = append(b.tail, p[:n]...)
		}
		if k := bytes.Count(buf, quotedProgress) + bytes.Count(buf, quotedMessage); k > 0 {
			b.r.read.Add(int64(k))
		}
		keep := min(len(buf), len(quotedProgress)-1)
		// Keep only a possible prefix of a name, so a name counted once is
		// never counted again.
		b.tail = append(b.tail[:0], buf[len(buf)-keep:]...)
		if i := bytes.LastIndexByte(b.tail, '"'); i >= 0 {
			b.tail = b.tail[i:]
		} else {
			b.tail = b.tail[:0]
		}
	}
	return n, err
}
