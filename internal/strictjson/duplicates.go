package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// DuplicateKey reports the first object key that occurs twice in one
// object of data; found is false when none does, or when data is not
// well-formed JSON before one does. (The empty key is a key too: {"":1,"":2}
// repeats it.)
// Decoders disagree on which of two equal keys wins (Go's and most take
// the last, some the first), so a check that reads one value while a tool
// reads the other could be bypassed: whoever decides on arguments refuses
// them instead.
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
				if _, dup := stack[top].keys[t]; dup {
					return t, true
				}
				stack[top].keys[t] = struct{}{}
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

// ErrDuplicateKey words a DuplicateKey finding for a model.
func ErrDuplicateKey(key string) error {
	return fmt.Errorf("the arguments repeat the key %q in one object; send each key once", key)
}
