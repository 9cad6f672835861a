package strictjson

import "testing"

func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	type want struct {
		key   string
		found bool
	}
	for in, w := range map[string]want{
		`{"a":1,"b":2}`:                                {},
		`{"a":1,"a":2}`:                                {"a", true},
		`{"c":"rm -rf x","c":"echo"}`:                  {"c", true},
		`{"o":{"k":1,"k":2}}`:                          {"k", true},
		`{"o":{"k":1},"p":{"k":2}}`:                    {},
		`{"l":[{"k":1},{"k":1}],"m":"k"}`:              {},
		`{"l":[1,"a",{"x":[]}],"x":{"y":{}},"z":null}`: {},
		`{"a":{"b":1},"a":3}`:                          {"a", true},
		`{"":"rm -rf x","":"echo"}`:                    {"", true},
		`{"":1,"b":2}`:                                 {},
		`not json`:                                     {},
		`{"command":"echo safe","COMMAND":"rm -rf x"}`: {"COMMAND", true},
		`{"Command":"rm -rf x","command":"echo"}`:      {"command", true},
		`{"o":{"kind":1,"Kind":2}}`:                    {"Kind", true},
		`{"command":1,"commands":2}`:                   {},
	} {
		if key, found := DuplicateKey([]byte(in)); key != w.key || found != w.found {
			t.Errorf("%s: %q %v, want %q %v", in, key, found, w.key, w.found)
		}
	}
}
