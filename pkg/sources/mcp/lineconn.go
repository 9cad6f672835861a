package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLineLength bounds one inbound message from a local server, as the
// go-sdk's own stdio connection does (sdk.DefaultMaxLineLength).
const maxLineLength = sdk.DefaultMaxLineLength

// errLineTooLong ends a session whose server sent a message longer than
// maxLineLength.
var errLineTooLong = fmt.Errorf("the server sent a message longer than %d bytes", maxLineLength)

// lineTransport connects to a local server over its pipes with lineConn.
type lineTransport struct {
	r io.ReadCloser  // the server's stdout
	w io.WriteCloser // the server's stdin; Close is the stdio shutdown
}

func (t lineTransport) Connect(context.Context) (sdk.Connection, error) {
	return &lineConn{in: bufio.NewReaderSize(t.r, 64<<10), r: t.r, w: t.w}, nil
}

// lineConn is the MCP stdio connection of a local server: one JSON-RPC
// message per line, as the MCP stdio transport frames them.
//
// It speaks the same wire as the go-sdk's IOTransport connection, with
// less work per message: the SDK's connection reads each message on a
// goroutine of its own and hands it over a channel to the SDK's reader
// (one more goroutine wake-up per message), and decodes every message
// twice — first as a batch, which fails, then as one message — each with
// a fresh 32 KB decoder buffer. Here the SDK's reader reads the line
// itself and decodes it once. Close (the stdio shutdown: stdin closed,
// grace, the group killed, stdout closed) unblocks a waiting Read.
//
// A batch (a line holding a JSON array, only possible before protocol
// 2025-06-18) is read as its messages one after the other; a request in
// one is answered on its own line.
type lineConn struct {
	in *bufio.Reader
	r  io.Closer
	w  io.WriteCloser

	queue []jsonrpc.Message // the rest of a batch; Read is never concurrent

	writeMu sync.Mutex

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	for {
		line, err := c.readLine()
		if err != nil {
			if c.closing.Load() || errors.Is(err, os.ErrClosed) {
				return nil, io.EOF
			}
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '[' {
			return c.readBatch(line)
		}
		return decodeMessage(line)
	}
}

// readLine returns the next line, without sharing memory with the reader's
// buffer (a decoded message may keep parts of it). The last line of the
// stream may lack its newline.
func (c *lineConn) readLine() ([]byte, error) {
	var long []byte
	for {
		frag, err := c.in.ReadSlice('\n')
		if len(long)+len(frag) > maxLineLength {
			return nil, errLineTooLong
		}
		switch {
		case err == nil && long == nil:
			return bytes.Clone(frag), nil
		case err == nil:
			return append(long, frag...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, frag...)
		case errors.Is(err, io.EOF) && len(long)+len(frag) > 0:
			return append(long, frag...), nil
		default:
			return nil, err
		}
	}
}

func (c *lineConn) readBatch(line []byte) (jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("a malformed batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("an empty batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		msg, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = msg
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(data)
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}
