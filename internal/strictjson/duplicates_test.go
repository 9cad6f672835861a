package strictjson

import "testing"

func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a":1,"b":2}`:                                "",
		`{"a":1,"a":2}`:                                "a",
		`{"c":"rm -rf x","c":"echo"}`:                  "c",
		`{"o":{"k":1,"k":2}}`:                          "k",
		`{"o":{"k":1},"p":{"k":2}}`:                    "",
		`{"l":[{"k":1},{"k":1}],"m":"k"}`:              "",
		`{"l":[1,"a",{"x":[]}],"x":{"y":{}},"z":null}`: "",
		`{"a":{"b":1},"a":3}`:                          "a",
		`not json`:                                     "",
	} {
		if got := DuplicateKey([]byte(in)); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
