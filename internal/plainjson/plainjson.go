// Package plainjson turns typed values (an SDK's result structs) into plain
// JSON values — maps, slices, strings, float64, bools and nil — so they can
// go on any wire or into a schema check.
package plainjson

import "encoding/json"

// Of round-trips v through JSON; nil when v is nil or does not encode.
func Of(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
