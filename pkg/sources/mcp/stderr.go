package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// tailKeep bounds the stderr kept for error messages.
const tailKeep = 512

// tailWriter receives a local server's stderr: each line goes to the debug
// log, and the last few are kept so that a server that dies or fails to
// initialize can say why in its status ("stderr: missing API key").
type tailWriter struct {
	log    *slog.Logger
	name   string
	redact redactor

	mu      sync.Mutex
	partial []byte
	tail    []string
	size    int
}

func newTailWriter(log *slog.Logger, name string, redact redactor) *tailWriter {
	return &tailWriter{log: log, name: name, redact: redact}
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(string(bytes.TrimRight(w.partial[:i], "\r")))
		w.partial = w.partial[i+1:]
	}
	// A server that never writes a newline must not grow this without bound.
	if len(w.partial) > tailKeep {
		w.line(string(w.partial))
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

func (w *tailWriter) line(l string) {
	l = w.redact.Apply(strings.TrimSpace(l))
	if l == "" {
		return
	}
	if len(l) > tailKeep {
		l = l[:tailKeep]
	}
	w.log.Debug("MCP server stderr", "server", w.name, "line", l)
	w.tail = append(w.tail, l)
	w.size += len(l)
	for len(w.tail) > 1 && (w.size > tailKeep || len(w.tail) > 3) {
		w.size -= len(w.tail[0])
		w.tail = w.tail[1:]
	}
}

// Tail is the last few stderr lines joined by " | ", or "".
func (w *tailWriter) Tail() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	parts := w.tail
	if len(w.partial) > 0 {
		parts = append(parts[:len(parts):len(parts)], strings.TrimSpace(string(w.partial)))
	}
	return w.redact.Apply(strings.Join(parts, " | "))
}
