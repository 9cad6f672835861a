package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON walker for the answer to resources/read (rawread.go): it
// finds the members of an object and the items of an array by their byte
// spans, skipping strings with bytes.IndexByte instead of decoding them, so
// a megabyte of base64 costs a memchr, not a decode. It checks the syntax
// it walks; a value it keeps as it is (a part's text or blob) is checked in
// full by wireText or wireBlob.

// maxRawDepth bounds the nesting the walker follows.
const maxRawDepth = 256

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd is the index just past the JSON string that starts at b[i]
// (a quote), or -1. A quote ends the string unless an odd run of
// backslashes precedes it.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// valueEnd is the index just past the JSON value that starts at b[i], or -1.
func valueEnd(b []byte, i, depth int) int {
	if i >= len(b) || depth > maxRawDepth {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{':
		return walkObject(b, i, depth+1, nil)
	case '[':
		return walkArray(b, i, depth+1, nil)
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte("-+.0123456789eEtruefalsn"), b[j]) >= 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// walkObject walks the object at b[i] ('{'), calling member (when not nil)
// with each key, decoded, and its value's span; it returns the index just
// past the object, or -1.
func walkObject(b []byte, i, depth int, member func(key string, from, to int)) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for i < len(b) {
		if b[i] != '"' {
			return -1
		}
		ke := stringEnd(b, i)
		if ke < 0 {
			return -1
		}
		key := string(b[i+1 : ke-1])
		if bytes.IndexByte(b[i+1:ke-1], '\\') >= 0 && json.Unmarshal(b[i:ke], &key) != nil {
			return -1
		}
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		from := skipSpace(b, i+1)
		to := valueEnd(b, from, depth)
		if to < 0 {
			return -1
		}
		if member != nil {
			member(key, from, to)
		}
		if i = skipSpace(b, to); i < len(b) && b[i] == '}' {
			return i + 1
		}
		if i >= len(b) || b[i] != ',' {
			return -1
		}
		i = skipSpace(b, i+1)
	}
	return -1
}

// walkArray is walkObject for an array, item called with each item's span.
func walkArray(b []byte, i, depth int, item func(from, to int)) int {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for i < len(b) {
		to := valueEnd(b, i, depth)
		if to < 0 {
			return -1
		}
		if item != nil {
			item(i, to)
		}
		if i = skipSpace(b, to); i < len(b) && b[i] == ']' {
			return i + 1
		}
		if i >= len(b) || b[i] != ',' {
			return -1
		}
		i = skipSpace(b, i+1)
	}
	return -1
}

// wholeObject walks b, which must be one object and nothing else.
func wholeObject(b []byte, member func(key string, from, to int)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	end := walkObject(b, i, 1, member)
	return end > 0 && skipSpace(b, end) == len(b)
}

// base64Std marks the bytes of the standard base64 alphabet.
var base64Std = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = true
	}
	return t
}()

// wireBlob checks a JSON string (quotes included) holding padded standard
// base64, and returns the bytes it decodes to.
func wireBlob(s []byte) (int, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return 0, false
	}
	s = s[1 : len(s)-1]
	if len(s)%4 != 0 {
		return 0, false
	}
	pad := 0
	for pad < 2 && len(s) > pad && s[len(s)-1-pad] == '=' {
		pad++
	}
	for _, c := range s[:len(s)-pad] {
		if !base64Std[c] {
			return 0, false
		}
	}
	return len(s)/4*3 - pad, true
}

// wireText checks a JSON string (quotes included) — valid UTF-8, no raw
// control character, valid escapes — and returns the bytes it decodes to.
func wireText(s []byte) (int, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return 0, false
	}
	s = s[1 : len(s)-1]
	if !utf8.Valid(s) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < 0x20 || c == '"':
			return 0, false
		case c != '\\':
			n++
			i++
			continue
		}
		if i+1 >= len(s) {
			return 0, false
		}
		if bytes.IndexByte([]byte(`"\/bfnrt`), s[i+1]) >= 0 {
			n++
			i += 2
			continue
		}
		r, ok := hex4(s, i)
		if !ok {
			return 0, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			if r2, ok := hex4(s, i); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
				n += 4
				i += 6
				continue
			}
			r = utf8.RuneError
		}
		n += utf8.RuneLen(r)
	}
	return n, true
}

// hex4 decodes the \uXXXX escape at s[i], if it is one.
func hex4(s []byte, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
