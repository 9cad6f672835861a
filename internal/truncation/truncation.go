// Package truncation is the one note that says an output was cut: written
// by sources (through tool.TruncationNote) and read back by the executor,
// which cuts an already cut output again and still reports the true total.
package truncation

import (
	"strconv"
	"strings"
)

// prefix starts the note.
const prefix = "\n[output truncated: "

// Note is the note appended to an output that was cut: omitted is the true
// number of bytes left out, counting what any earlier cut already dropped.
func Note(omitted int64) string {
	return prefix + strconv.FormatInt(omitted, 10) + " bytes omitted]"
}

// Split takes a trailing note off s: the text before it and the bytes it
// says were omitted (0 and s itself without one).
func Split(s string) (body string, omitted int64) {
	i := strings.LastIndex(s, prefix)
	if i < 0 || !strings.HasSuffix(s, "]") {
		return s, 0
	}
	rest := s[i+len(prefix) : len(s)-1]
	num, tail, ok := strings.Cut(rest, " bytes omitted")
	if !ok || (tail != "" && !strings.HasPrefix(tail, ";")) {
		return s, 0
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return s, 0
	}
	return s[:i], n
}
