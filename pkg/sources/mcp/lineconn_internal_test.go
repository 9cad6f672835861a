package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pipes gives a lineConn over two io.Pipes and the server's ends.
func pipes(t *testing.T) (c *lineConn, serverOut *io.PipeWriter, serverIn *bufio.Reader) {
	t.Helper()
	outR, outW := io.Pipe() // server stdout -> conn
	inR, inW := io.Pipe()   // conn -> server stdin
	conn, err := lineTransport{r: outR, w: inW}.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); outW.Close(); inR.Close() })
	return conn.(*lineConn), outW, bufio.NewReader(inR)
}

func send(w io.Writer, s string) {
	go func() { _, _ = io.WriteString(w, s) }()
}

func readResponse(t *testing.T, c *lineConn) *jsonrpc.Response {
	t.Helper()
	msg, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("got %T, want a response", msg)
	}
	return r
}

// Lines in order; blank lines and CRLF endings are tolerated; a message
// longer than the read buffer arrives whole; the last line may lack its
// newline; then end of file.
func TestLineConnReads(t *testing.T) {
	c, out, _ := pipes(t)
	big := strings.Repeat("x", 300<<10)
	send(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1}}\r\n\n   \n"+
		`{"jsonrpc":"2.0","id":2,"result":{"big":"`+big+`"}}`+"\n")
	if r := readResponse(t, c); string(r.Result) != `{"a":1}` {
		t.Fatalf("first: %s", r.Result)
	}
	r := readResponse(t, c)
	var v struct{ Big string }
	if err := json.Unmarshal(r.Result, &v); err != nil || v.Big != big {
		t.Fatalf("big message: %v, %d bytes", err, len(v.Big))
	}
	// The line without a newline is complete when the stream ends.
	go func() { _, _ = io.WriteString(out, `{"jsonrpc":"2.0","id":3,"result":{}}`); out.Close() }()
	if r := readResponse(t, c); string(r.Result) != `{}` {
		t.Fatalf("last: %s", r.Result)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after the stream ended: %v, want EOF", err)
	}
}

// A batch is read as its messages, one after another.
func TestLineConnBatch(t *testing.T) {
	c, out, _ := pipes(t)
	send(out, `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}},{"jsonrpc":"2.0","id":7,"result":{}}]`+"\n")
	msg, err := c.Read(context.Background())
	if req, ok := msg.(*jsonrpc.Request); err != nil || !ok || req.Method != "notifications/progress" {
		t.Fatalf("first of the batch: %v %v", msg, err)
	}
	if r := readResponse(t, c); r.ID.Raw() != int64(7) {
		t.Fatalf("second of the batch: id %v", r.ID.Raw())
	}
}

// A malformed line is an error (the SDK then closes the session).
func TestLineConnMalformed(t *testing.T) {
	c, out, _ := pipes(t)
	send(out, "{not json\n")
	if _, err := c.Read(context.Background()); err == nil {
		t.Fatal("a malformed line was accepted")
	}
}

// A message longer than the limit ends the session instead of growing the
// buffer without bound.
func TestLineConnTooLong(t *testing.T) {
	c, out, _ := pipes(t)
	go func() {
		chunk := strings.Repeat("y", 1<<20)
		for range maxLineLength/len(chunk) + 2 {
			if _, err := io.WriteString(out, chunk); err != nil {
				return
			}
		}
	}()
	if _, err := c.Read(context.Background()); !errors.Is(err, errLineTooLong) {
		t.Fatalf("got %v, want errLineTooLong", err)
	}
}

// Close unblocks a Read waiting for the server, which then reports EOF.
func TestLineConnCloseUnblocksRead(t *testing.T) {
	c, _, _ := pipes(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("read after Close: %v, want EOF", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Write puts each message on a line of its own.
func TestLineConnWrite(t *testing.T) {
	c, _, in := pipes(t)
	id, err := jsonrpc.MakeID(float64(5))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() {
		errs <- c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`)})
	}()
	line, err := in.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["method"] != "tools/call" || m["id"] != float64(5) {
		t.Fatalf("wrote %q (%v)", line, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Write(ctx, &jsonrpc.Request{Method: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("write on a cancelled context: %v", err)
	}
}
