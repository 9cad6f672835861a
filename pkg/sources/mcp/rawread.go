package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/feature"
)

// A resource read answers with the resource itself, which can be large: a
// 1 MiB blob is 1.33 MiB of base64 in one JSON string. Decoding it (JSON
// string, then base64) only for /mcp to encode it again cost as much as the
// upstream's whole answer. So over HTTP, Read keeps the answer's bytes: the
// request's context carries a rawRead, headerTransport hands the SDK a
// stand-in answer with no contents in place of the real one and keeps the
// real one's result, and Read takes the parts from it as they were sent
// (feature.Contents.Wire), each checked as the SDK would decode it
// (rawjson.go). Whatever this path does not recognise — an answer that
// came on another stream, an unusual shape, a blob with escapes or a text
// that is not UTF-8 — is decoded in full from the same bytes, as the SDK
// would have.

// maxRawAnswer bounds the bytes held while looking for the answer: the
// SDK's own bound on one event. Past it the body passes on as it is, and
// the SDK refuses it as before.
const maxRawAnswer = sdk.DefaultMaxEventSize

type rawReadKey struct{}

// rawRead is one read's capture: the JSON-RPC result of its answer.
type rawRead struct {
	mu     sync.Mutex
	result []byte
}

func withRawRead(ctx context.Context, r *rawRead) context.Context {
	return context.WithValue(ctx, rawReadKey{}, r)
}

func (r *rawRead) set(b []byte) {
	r.mu.Lock()
	r.result = b
	r.mu.Unlock()
}

func (r *rawRead) get() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

// captureRead puts a capturing reader over the body of the answer to the
// read in ctx, when req is that read's POST and the answer is a stream or
// JSON; otherwise body is returned as it is.
func captureRead(ctx context.Context, req *http.Request, resp *http.Response, body io.ReadCloser) io.ReadCloser {
	rr, _ := ctx.Value(rawReadKey{}).(*rawRead)
	if rr == nil || req.Method != http.MethodPost || resp.StatusCode != http.StatusOK || req.GetBody == nil {
		return body
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" && ct != "application/json" {
		return body
	}
	rb, err := req.GetBody()
	if err != nil {
		return body
	}
	sent, err := io.ReadAll(io.LimitReader(rb, 64<<10))
	_ = rb.Close()
	var call struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
	}
	if err != nil || json.Unmarshal(sent, &call) != nil || call.Method != "resources/read" || call.ID == nil {
		return body
	}
	return &rawBody{src: body, rr: rr, id: call.ID, sse: ct == "text/event-stream"}
}

// rawBody hands the SDK the body with the read's answer replaced by a
// stand-in, keeping the answer's result in rr. Events before the answer
// pass as they are, and so does everything after it.
type rawBody struct {
	src io.ReadCloser
	rr  *rawRead
	id  any
	sse bool

	buf     []byte // read from src, not yet looked at
	scanned int    // buf[:scanned] holds no end of an event
	out     []byte // ready for the SDK
	through bool   // the answer was met (or looking gave up): buf, then src, as they are
	err     error  // src's read error, after buf
}

func (b *rawBody) Close() error { return b.src.Close() }

func (b *rawBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.through {
			if len(b.buf) > 0 {
				b.out, b.buf = b.buf, nil
				break
			}
			if b.err != nil {
				return 0, b.err
			}
			return b.src.Read(p)
		}
		b.step()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// step reads on until it has the next output: an event, or the whole JSON
// answer.
func (b *rawBody) step() {
	if b.sse {
		if end := b.eventEnd(); end > 0 {
			ev := b.buf[:end:end]
			b.buf = b.buf[end:]
			b.scanned = 0
			b.out = b.event(ev)
			return
		}
	}
	if b.err != nil || len(b.buf) > maxRawAnswer {
		b.through = true // the end, or too big to be an answer the SDK takes
		return
	}
	if cap(b.buf)-len(b.buf) < 32<<10 {
		b.buf = append(make([]byte, 0, max(2*cap(b.buf), 64<<10)), b.buf...)
	}
	n, err := b.src.Read(b.buf[len(b.buf):cap(b.buf)])
	b.buf = b.buf[:len(b.buf)+n]
	if err != nil {
		b.err = err
		if !b.sse && err == io.EOF {
			if stand, ok := b.answer(b.buf); ok {
				b.out, b.buf = stand, nil
			}
			b.through = true
		}
	}
}

// eventEnd is the index past the blank line that ends buf's first event,
// or 0.
func (b *rawBody) eventEnd() int {
	from := max(b.scanned-3, 0)
	end := 0
	if i := bytes.Index(b.buf[from:], []byte("\n\n")); i >= 0 {
		end = from + i + 2
	}
	if i := bytes.Index(b.buf[from:], []byte("\r\n\r\n")); i >= 0 && (end == 0 || from+i+4 < end) {
		end = from + i + 4
	}
	if end == 0 {
		b.scanned = len(b.buf)
	}
	return end
}

// event is one event as the SDK gets it: the answer's replaced.
func (b *rawBody) event(ev []byte) []byte {
	var data [][]byte
	var other []byte
	for line := range bytes.Lines(ev) {
		l := bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(l, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" ")))
		} else if len(l) > 0 {
			other = append(append(other, l...), '\n')
		}
	}
	if len(data) == 0 {
		return ev
	}
	msg := data[0]
	if len(data) > 1 {
		msg = bytes.Join(data, []byte("\n"))
	}
	stand, ok := b.answer(msg)
	if !ok {
		return ev
	}
	b.through = true
	return append(append(append(other, "data: "...), stand...), "\n\n"...)
}

// answer is the stand-in the SDK gets when msg answers the read with a
// result, which goes to rr; false for any other message.
func (b *rawBody) answer(msg []byte) ([]byte, bool) {
	var id, result []byte
	isCall := false
	ok := wholeObject(msg, func(key string, from, to int) {
		switch key {
		case "id":
			id = msg[from:to]
		case "result":
			result = msg[from:to]
		case "method":
			isCall = true
		}
	})
	var got any
	if !ok || isCall || result == nil || json.Unmarshal(id, &got) != nil || !reflect.DeepEqual(got, b.id) {
		return nil, false
	}
	b.rr.set(result)
	return append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":{"contents":[]}}`...), true
}

// readAnswer is Read's answer from the result the transport kept.
func (s *Source) readAnswer(uri string, result []byte) ([]feature.Contents, error) {
	if parts, needsInput, ok := wireParts(result); ok {
		if needsInput {
			return nil, s.needsInput("read " + uri)
		}
		return parts, nil
	}
	var res sdk.ReadResourceResult
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, feature.Errorf(feature.Unavailable, "%s", s.redact.Apply(fmt.Sprintf("MCP server %q answered resources/read with a result that is not valid JSON-RPC: %v", s.name, err)))
	}
	return s.readResult(uri, &res)
}

// wireParts takes the parts of a read's result as they were sent, or
// reports that the result needs the SDK's decoding (false).
func wireParts(result []byte) (parts []feature.Contents, needsInput, ok bool) {
	var contents []byte
	resultType := ""
	ok = wholeObject(result, func(key string, from, to int) {
		switch key {
		case "contents":
			contents = result[from:to]
		case "resultType":
			if json.Unmarshal(result[from:to], &resultType) != nil {
				resultType = "?"
			}
		}
	})
	switch {
	case !ok || resultType == "?":
		return nil, false, false
	case resultType == "input_required":
		return nil, true, true
	case contents == nil || string(contents) == "null":
		return []feature.Contents{}, false, true
	case contents[0] != '[':
		return nil, false, false
	}
	parts = []feature.Contents{}
	end := walkArray(contents, 0, 1, func(from, to int) {
		if !ok || string(contents[from:to]) == "null" {
			return
		}
		var part feature.Contents
		if part, ok = wirePart(contents[from:to]); ok {
			parts = append(parts, part)
		}
	})
	return parts, false, ok && end == len(contents)
}

// wirePart is one part of a read's result, its text or blob as sent.
func wirePart(obj []byte) (feature.Contents, bool) {
	var part feature.Contents
	var text, blob []byte
	bad := false
	ok := obj[0] == '{' && wholeObject(obj, func(key string, from, to int) {
		v := obj[from:to]
		switch key {
		case "uri":
			bad = bad || json.Unmarshal(v, &part.URI) != nil
		case "mimeType":
			bad = bad || json.Unmarshal(v, &part.MIMEType) != nil
		case "text":
			text = v
		case "blob":
			blob = v
		}
	})
	switch {
	case !ok || bad:
		return part, false
	case blob != nil && string(blob) != "null":
		part.Blob, part.Wire = true, blob
		part.WireSize, ok = wireBlob(blob)
	case text != nil && string(text) != "null":
		part.Wire = text
		part.WireSize, ok = wireText(text)
	default:
		part.Wire = []byte(`""`) // neither: an empty text, as the SDK decodes it
	}
	return part, ok
}
