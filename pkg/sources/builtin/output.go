package builtin

import (
	"strings"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// capWriter keeps the first max bytes written to it and counts the rest, so
// a command that prints gigabytes costs max bytes of memory. Writes never
// fail: a full buffer must not make the command see a broken pipe.
type capWriter struct {
	buf     []byte
	max     int
	omitted int64
}

func newCapWriter(max int) *capWriter { return newCapWriterHint(max, 64<<10) }

// newCapWriterHint preallocates for about hint bytes (a file's size).
func newCapWriterHint(limit int, hint int64) *capWriter {
	return &capWriter{max: limit, buf: make([]byte, 0, int(min(int64(limit), max(hint, 0))))}
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	if room := w.max - len(w.buf); room > 0 {
		k := min(room, len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
	}
	w.omitted += int64(len(p))
	return n, nil
}

// Text returns what was kept, as valid UTF-8, with the truncation marker
// when anything was dropped, and whether it was.
func (w *capWriter) Text() (string, bool) {
	kept := w.buf
	omitted := w.omitted
	if omitted > 0 {
		// Do not end on half a character: the cut is arbitrary, the
		// output must still be text.
		cut := runeBoundary(kept)
		omitted += int64(len(kept) - cut)
		kept = kept[:cut]
	}
	s := strings.ToValidUTF8(string(kept), "\uFFFD")
	if omitted > 0 {
		return s + truncationMarker(omitted), true
	}
	return s, false
}

// capText applies the same cap and marker to a string already in memory.
func capText(s string, max int) (string, bool) {
	w := capWriter{max: max}
	if len(s) <= max {
		return strings.ToValidUTF8(s, "\uFFFD"), false
	}
	w.buf = []byte(s[:max])
	w.omitted = int64(len(s) - max)
	return w.Text()
}

func truncationMarker(omitted int64) string {
	return tool.TruncationNote(omitted)
}

// runeBoundary returns the length of b without a trailing incomplete UTF-8
// sequence.
func runeBoundary(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
