package mcpgateway

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	find   []byte // `"text":"` and marker
	seq    atomic.Uint64
	byID   sync.Map // id → *wireWriter
}

func (s *wireSlots) init() {
	s.marker = "toolnexus-wire-" + rand.Text() + "."
	s.find = []byte(`"text":"` + s.marker)
}

// wireGrace is how long the parts of an answered POST stay findable by
// their markers when the POST was cut between its handler's answer and
// the SDK writing it: the SDK stores the answer in the event store
// (resume.go) right after, and a resumed stream must replay the parts, not
// their markers.
const wireGrace = 30 * time.Second

// open wraps a POST's writer and names it in the request's headers; done
// forgets it.
func (s *wireSlots) open(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	id := strconv.FormatUint(s.seq.Add(1), 36)
	ww := &wireWriter{ResponseWriter: w, find: []byte(`"text":"` + s.marker + id + ".")}
	s.byID.Store(id, ww)
	r2 := r.WithContext(r.Context())
	r2.Header = r.Header.Clone()
	r2.Header.Set(wireSlotHeader, id)
	return ww, r2, func() {
		if ww.close() {
			s.byID.Delete(id)
			return
		}
		time.AfterFunc(wireGrace, func() { s.byID.Delete(id) })
	}
}

// part is the part a marker of any POST's writer stands for, left in
// place for the writer (resume.go stores the spliced answer first).
func (s *wireSlots) part(marker string) (feature.Contents, bool) {
	rest, ok := strings.CutPrefix(marker, s.marker)
	if !ok {
		return feature.Contents{}, false
	}
	id, _, ok := strings.Cut(rest, ".")
	if !ok {
		return feature.Contents{}, false
	}
	v, ok := s.byID.Load(id)
	if !ok {
		return feature.Contents{}, false
	}
	w := v.(*wireWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.parts[marker]
	return c, ok
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

	wrote atomic.Bool // the first Write is done

	mu     sync.Mutex
	parts  map[string]feature.Contents // by marker
	seq    int                         // parts put so far
	closed bool                        // the POST is answered: put refuses
}

// Unwrap lets http.ResponseController (the SDK's flushes) reach the writer.
func (w *wireWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// put keeps a part and returns the marker the result carries as its text;
// false once the POST is answered (nothing would write the part).
func (w *wireWriter) put(c feature.Contents) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return "", false
	}
	if w.parts == nil {
		w.parts = map[string]feature.Contents{}
	}
	m := string(w.find[len(`"text":"`):]) + strconv.Itoa(w.seq)
	w.seq++
	w.parts[m] = c
	return m, true
}

// close refuses further parts and reports whether none is left to write.
func (w *wireWriter) close() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return len(w.parts) == 0
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
// event) in one Write, so a marker is never split across two. The first
// Write gets the priming event's retry field (resume.go).
func (w *wireWriter) Write(p []byte) (int, error) {
	if !w.wrote.Swap(true) {
		if primed, ok := withRetry(p); ok {
			if _, err := w.ResponseWriter.Write(primed); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	if !w.pending() {
		return w.ResponseWriter.Write(p)
	}
	if err := splice(p, w.find, w.take, w.ResponseWriter.Write); err != nil {
		return 0, err
	}
	return len(p), nil
}

// splice hands out p in pieces, each `"text":"MARKER"` (a marker starting
// with find) whose part find finds replaced by the part's member as its
// MCP server sent it; a marker without a part passes as it is.
func splice(p, find []byte, part func(marker string) (feature.Contents, bool), out func([]byte) (int, error)) error {
	for {
		i := bytes.Index(p, find)
		if i < 0 {
			break
		}
		from := i + len(`"text":"`)
		end := bytes.IndexByte(p[from:], '"')
		if end < 0 {
			break
		}
		c, ok := part(string(p[from : from+end]))
		if !ok {
			if _, err := out(p[:from+end+1]); err != nil {
				return err
			}
			p = p[from+end+1:]
			continue
		}
		member := `"text":`
		if c.Blob {
			member = `"blob":`
		}
		for _, b := range [][]byte{p[:i], []byte(member), c.Wire} {
			if _, err := out(b); err != nil {
				return err
			}
		}
		p = p[from+end+1:]
	}
	_, err := out(p)
	return err
}

// wireContents is a part as the SDK's result carries it: a part kept as
// sent becomes a marker in w, or without w (a request that came some
// other way) is decoded.
func wireContents(w *wireWriter, c feature.Contents) (*mcp.ResourceContents, error) {
	if c.Wire != nil && w != nil {
		if m, ok := w.put(c); ok {
			return &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: m}, nil
		}
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
