package tool

import (
	"strconv"
	"strings"
)

// truncationPrefix starts the one note that says an output was cut.
const truncationPrefix = "\n[output truncated: "

// TruncationNote is the note a source or the executor appends to an output
// it cut: omitted is the true number of bytes left out, counting what any
// earlier cut already dropped.
func TruncationNote(omitted int64) string {
	return truncationPrefix + strconv.FormatInt(omitted, 10) + " bytes omitted]"
}

// SplitTruncation takes a trailing truncation note off s: the text before
// it and the bytes it says were omitted (0 and s itself without one). The
// executor uses it to cut an already cut output again and still report
// the true total, with one note.
func SplitTruncation(s string) (body string, omitted int64) {
	i := strings.LastIndex(s, truncationPrefix)
	if i < 0 || !strings.HasSuffix(s, "]") {
		return s, 0
	}
	rest := s[i+len(truncationPrefix) : len(s)-1]
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
