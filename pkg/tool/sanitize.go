package tool

import "strings"

// Sanitize makes a safe tool name from a remote one: every character outside
// [a-zA-Z0-9_-] becomes "_". It works on characters, not bytes, so a
// multi-byte character becomes a single "_".
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && nameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
