package suspendtest

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Reordered is the JSON document args with every object's keys in reverse
// order and spaces between tokens, numbers exactly as written: the same
// call as args for every suspended kind (suspend.Bind), in other bytes.
// It fails when args is not one JSON value.
func Reordered(args []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	writeReversed(&buf, v)
	return buf.Bytes(), nil
}

// WithExtraKey is the JSON object args with one more key (true under a
// name it lacks): another call's arguments. It fails when args is not an
// object.
func WithExtraKey(args []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	k := "~"
	for _, taken := m[k]; taken; _, taken = m[k] {
		k += "~"
	}
	m[k] = true
	return json.Marshal(m)
}

func writeReversed(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" , ")
			}
			kb, _ := json.Marshal(k) // a string always encodes
			buf.Write(kb)
			buf.WriteString(" : ")
			writeReversed(buf, x[k])
		}
		buf.WriteString(" }")
	case []any:
		buf.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(" , ")
			}
			writeReversed(buf, e)
		}
		buf.WriteString(" ]")
	case json.Number:
		buf.WriteString(string(x))
	default:
		b, _ := json.Marshal(x) // strings, booleans and null always encode
		buf.Write(b)
	}
}
