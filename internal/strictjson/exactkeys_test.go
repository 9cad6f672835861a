package strictjson

import (
	"errors"
	"testing"
)

type inner struct {
	Name string `json:"name"`
}

type embedded struct {
	Depth int `json:"depth"`
}

type argsOf struct {
	embedded
	Command string           `json:"command"`
	Workdir *string          `json:"workdir,omitempty"`
	Opts    *inner           `json:"opts"`
	List    []inner          `json:"list"`
	ByName  map[string]inner `json:"byName"`
	Free    map[string]any   `json:"free"`
	Skipped string           `json:"-"`
	TimeMs  int
}

// A key encoding/json would match to a field only case-insensitively is an
// unknown field, at any depth; exact keys, free-form members and promoted
// fields decode as before.
func TestDecodeKeysMustMatchExactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, field string }{
		{`{"command":"echo"}`, ""},
		{`{"command":"echo","depth":2,"TimeMs":1,"workdir":"a"}`, ""},
		{`{"opts":{"name":"x"},"list":[{"name":"y"}],"byName":{"k":{"name":"z"}}}`, ""},
		{`{"free":{"Command":"anything","COMMAND":1}}`, ""},
		{`{"opts":null,"list":null}`, ""},
		{`{"Command":"rm -rf x"}`, "Command"},
		{`{"command":"echo safe","COMMAND":"rm -rf victim"}`, "COMMAND"},
		{`{"COMMAND":"rm -rf victim","command":"echo safe"}`, "COMMAND"},
		{`{"DEPTH":1}`, "DEPTH"},
		{`{"timems":1}`, "timems"},
		{`{"opts":{"NAME":"x"}}`, "opts.NAME"},
		{`{"list":[{"name":"a"},{"Name":"b"}]}`, "list.Name"},
		{`{"byName":{"k":{"nAme":"z"}}}`, "byName.k.nAme"},
		{"{\"comman\u212a\":1}", ""}, // not a fold of "command": unknown as before
	} {
		t.Run(c.in, func(t *testing.T) {
			var v argsOf
			err := Decode([]byte(c.in), &v)
			var se *Error
			switch {
			case c.in == "{\"comman\u212a\":1}":
				if !errors.As(err, &se) || se.Kind != UnknownField {
					t.Fatalf("%v, want an unknown field", err)
				}
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field != "" && (!errors.As(err, &se) || se.Kind != UnknownField || se.Field != c.field):
				t.Fatalf("%v, want unknown field %q", err, c.field)
			}
		})
	}
}

// The fold is encoding/json's: the Kelvin sign is a K, the long s an S.
func TestFoldKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"command", "COMMAND", true},
		{"command", "Command", true},
		{"kind", "\u212aind", true},
		{"path", "pat\u017f", false},
		{"ess", "e\u017f\u017f", true},
		{"a", "b", false},
		{"", "", true},
	} {
		if got := FoldKey(c.a) == FoldKey(c.b); got != c.same {
			t.Errorf("FoldKey(%q) == FoldKey(%q): %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
