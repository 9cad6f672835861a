package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// DuplicateKey reports the first object key that repeats an earlier key of
// the same object, as Go's encoding/json matches keys to struct fields:
// exactly, or differing only in letter case ("command", "COMMAND" and
// "Command" are one key). found is false when none does, or when data is
// not well-formed JSON before one does. (The empty key is a key too:
// {"":1,"":2} repeats it.)
// Decoders disagree on which of two equal keys wins (Go's and most take
// the last, some the first), and Go's also takes "COMMAND" for a field
// named "command", so a check that reads one value while a tool reads the
// other could be bypassed: whoever decides on arguments refuses them
// instead.
func DuplicateKey(data []byte) (key string, found bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	type frame struct {
		keys      map[string]struct{}
		object    bool
		expectKey bool
	}
	var stack []frame
	for {
		tok, err := d.Token()
		if err == io.EOF || err != nil {
			return "", false
		}
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top >= 0 && stack[top].object {
					stack[top].expectKey = true
				}
				stack = append(stack, frame{keys: map[string]struct{}{}, object: true, expectKey: true})
			case '[':
				if top >= 0 && stack[top].object {
					stack[top].expectKey = true
				}
				stack = append(stack, frame{})
			default:
				stack = stack[:top]
			}
		case string:
			if top >= 0 && stack[top].object && stack[top].expectKey {
				folded := FoldKey(t)
				if _, dup := stack[top].keys[folded]; dup {
					return t, true
				}
				stack[top].keys[folded] = struct{}{}
				stack[top].expectKey = false
				continue
			}
			if top >= 0 && stack[top].object {
				stack[top].expectKey = true
			}
		default:
			if top >= 0 && stack[top].object {
				stack[top].expectKey = true
			}
		}
	}
}

// FoldKey is key in the form in which encoding/json compares an object key
// with a field name: two keys with the same FoldKey are the same field to
// it (FoldKey(a) == FoldKey(b) exactly when bytes.EqualFold(a, b)).
func FoldKey(key string) string {
	plain := true
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= utf8.RuneSelf || ('a' <= c && c <= 'z') {
			plain = false
			break
		}
	}
	if plain {
		return key
	}
	return string(AppendFoldedKey(make([]byte, 0, len(key)), []byte(key)))
}

// AppendFoldedKey appends FoldKey(key) to out.
func AppendFoldedKey(out, key []byte) []byte {
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune is the smallest rune of r's case-folding orbit, the one rune
// encoding/json folds all of them to (K, k and the Kelvin sign K).
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// ErrDuplicateKey words a DuplicateKey finding for a model.
func ErrDuplicateKey(key string) error {
	return fmt.Errorf("the arguments repeat the key %q in one object (keys that differ only in letter case are the same key to the tool); send each key once, spelt as the tool's input schema has it", key)
}
