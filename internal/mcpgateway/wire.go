package mcpgateway

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/feature"
)

// resources/read passes on a part the MCP source kept as its server sent
// it (feature.Contents.Wire) without decoding or encoding it again: the
// SDK encodes the result with a marker in place of each such part's text,
// and the POST's response writer writes the part's bytes where the marker
// is. The SDK does everything else as for any result: the part's URI and
// the MIME type it fills in, resultType and the cache hints on 2026-07-28,
// _meta, the event stream. Encoding a 1 MiB blob costs the SDK as much as
// the upstream's whole answer (encoding/json compacts a Marshaler's output
// twice on the way out), which is what this saves.
//
// The handler finds the POST's writer through the POST's headers, which
// the SDK hands it as req.Extra.Header: serveSDK sets wireSlotHeader to the
// writer's id, replacing any value a client sent, and forgets the writer
// when the POST is answered.

// wireSlotHeader names the response writer of the POST a request came in.
const wireSlotHeader = "Toolnexus-Internal-Wire-Slot"

// wireSlots are the writers of the POSTs being answered.
type wireSlots struct {
	marker string // this gateway's random marker prefix
	seq    atomic.Uint64
	byID   sync.Map // id → *wireWriter
}

func (s *wireSlots) init() { s.marker = "toolnexus-wire-" + rand.Text() + "." }

// open wraps a POST's writer and names it in the request's headers; done
// forgets it.
func (s *wireSlots) open(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	id := strconv.FormatUint(s.seq.Add(1), 36)
	ww := &wireWriter{ResponseWriter: w, find: []byte(`"text":"` + s.marker + id + ".")}
	s.byID.Store(id, ww)
	r2 := r.WithContext(r.Context())
	r2.Header = r.Header.Clone()
	r2.Header.Set(wireSlotHeader, id)
	return ww, r2, func() { s.byID.Delete(id) }
}

// writer is the writer of the POST req came in, or nil.
func (s *wireSlots) writer(req mcp.Request) *wireWriter {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return nil
	}
	v, ok := s.byID.Load(extra.Header.Get(wireSlotHeader))
	if !ok {
		return nil
	}
	return v.(*wireWriter)
}

// wireWriter is a POST's response writer that puts parts in place of
// their markers.
type wireWriter struct {
	http.ResponseWriter
	find []byte // `"text":"` and the marker's prefix

	mu    sync.Mutex
	parts map[string]feature.Contents // by marker
}

// Unwrap lets http.ResponseController (the SDK's flushes) reach the writer.
func (w *wireWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// put keeps a part and returns the marker the result carries as its text.
func (w *wireWriter) put(c feature.Contents) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parts == nil {
		w.parts = map[string]feature.Contents{}
	}
	m := string(w.find[len(`"text":"`):]) + strconv.Itoa(len(w.parts))
	w.parts[m] = c
	return m
}

func (w *wireWriter) take(marker string) (feature.Contents, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.parts[marker]
	delete(w.parts, marker)
	return c, ok
}

func (w *wireWriter) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.parts) > 0
}

// Write writes p with each marker's `"text":"MARKER"` replaced by its
// part's member as the MCP server sent it. The SDK writes a message (an
// event) in one Write, so a marker is never split across two.
func (w *wireWriter) Write(p []byte) (int, error) {
	if !w.pending() {
		return w.ResponseWriter.Write(p)
	}
	n := len(p)
	for {
		i := bytes.Index(p, w.find)
		if i < 0 {
			break
		}
		from := i + len(`"text":"`)
		end := bytes.IndexByte(p[from:], '"')
		if end < 0 {
			break
		}
		c, ok := w.take(string(p[from : from+end]))
		if !ok {
			if _, err := w.ResponseWriter.Write(p[:from+end+1]); err != nil {
				return 0, err
			}
			p = p[from+end+1:]
			continue
		}
		member := `"text":`
		if c.Blob {
			member = `"blob":`
		}
		for _, b := range [][]byte{p[:i], []byte(member), c.Wire} {
			if _, err := w.ResponseWriter.Write(b); err != nil {
				return 0, err
			}
		}
		p = p[from+end+1:]
	}
	if _, err := w.ResponseWriter.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// wireContents is a part as the SDK's result carries it: a part kept as
// sent becomes a marker in w, or without w (a request that came some
// other way) is decoded.
func wireContents(w *wireWriter, c feature.Contents) (*mcp.ResourceContents, error) {
	if c.Wire != nil && w != nil {
		return &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: w.put(c)}, nil
	}
	c, err := c.Decoded()
	if err != nil {
		return nil, err
	}
	rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
	if c.Blob {
		rc.Blob, rc.Text = c.Data, ""
		if rc.Blob == nil {
			rc.Blob = []byte{}
		}
	}
	return rc, nil
}
