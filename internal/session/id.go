package session

import (
	"errors"
	"fmt"
	"strings"
)

// MaxIDLength is the longest session id.
const MaxIDLength = 64

// Anonymous is how the principal of sessions on a server without auth is
// shown (their principal is "").
const Anonymous = "anonymous"

// ErrInvalidID is wrapped by Validate's errors; front-ends map it to their
// "invalid argument" status.
var ErrInvalidID = errors.New("invalid session id")

// IDRule is the rule a session id follows, as error messages state it.
const IDRule = `a session id is 1 to 64 characters of A-Z, a-z, 0-9, "_", "." and "-", and not "." or ".."`

// Validate checks a session id against IDRule. The id becomes a directory
// name, so the rule keeps it one plain path component.
func Validate(id string) error {
	if id == "" || len(id) > MaxIDLength || id == "." || id == ".." {
		return fmt.Errorf("%w %q: %s", ErrInvalidID, clip(id), IDRule)
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return fmt.Errorf("%w %q: %s", ErrInvalidID, clip(id), IDRule)
		}
	}
	return nil
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// clip keeps an error message short when the id is huge.
func clip(id string) string {
	if len(id) > MaxIDLength+8 {
		return id[:MaxIDLength] + "..."
	}
	return id
}

// principalDir is the directory name of a principal's sessions: "u-" and
// the name with every byte other than a letter, digit or "-" written as
// "_XX" (hex), so any token name is one safe path component, two names never
// share a directory, and the name can be read back after a restart.
// Without auth every session belongs to Anonymous, whose directory
// ("anonymous") no token name can produce.
func principalDir(name string) string {
	if name == "" {
		return Anonymous
	}
	var b strings.Builder
	b.Grow(2 + len(name))
	b.WriteString("u-")
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// principalFromDir reverses principalDir.
func principalFromDir(dir string) (string, bool) {
	if dir == Anonymous {
		return "", true
	}
	rest, ok := strings.CutPrefix(dir, "u-")
	if !ok || rest == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(rest) {
			return "", false
		}
		var v byte
		for _, h := range []byte{rest[i+1], rest[i+2]} {
			switch {
			case h >= '0' && h <= '9':
				v = v<<4 | (h - '0')
			case h >= 'A' && h <= 'F':
				v = v<<4 | (h - 'A' + 10)
			default:
				return "", false
			}
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), true
}
