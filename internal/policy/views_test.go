package policy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/cedar-policy/cedar-go"

	"github.com/toolnexus/toolnexus/internal/strictjson"
)

// viewTexts are arguments that try to show a policy one command and a tool
// another: repeated keys, keys differing only in letter case (ASCII and the
// Unicode folds encoding/json applies), escapes spelling the same key.
var viewTexts = []string{
	`{"command":"echo safe"}`,
	`{"command":"echo safe","COMMAND":"rm -rf victim"}`,
	`{"COMMAND":"rm -rf victim","command":"echo safe"}`,
	`{"Command":"rm -rf x"}`,
	`{"command":"echo safe","command":"rm -rf x"}`,
	`{"\u0063ommand":"rm -rf x","command":"echo"}`,
	`{"\u0043ommand":"rm -rf x"}`,
	"{\"comman\u212a\":\"rm -rf x\"}",
	`{"command":null,"Command":"rm -rf x"}`,
	`{"other":{"Command":"x","command":"y"}}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"command":"echo","COMMAND":"rm -rf x"}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":0,"Command":"rm -rf x"}`,
}

// commandReads is what a policy reading context.arguments.command reads.
var commandReads = argumentReads{any: true, names: []string{"command"}}

// The policy's view of the arguments and the tool's are the same: whenever
// the policy accepts arguments (no error), the "command" a tool decodes
// with encoding/json (case-insensitive, last key wins — the builtins' and
// a Go MCP server's decoder) and with strictjson.Decode is the one the
// policy judged, or absent for both. go test runs the seeds; go test
// -fuzz FuzzPolicyViewEqualsToolView looks further.
func FuzzPolicyViewEqualsToolView(f *testing.F) {
	for _, text := range append(viewTexts, argumentTexts...) {
		if len(text) < 1000 { // the 10,000-deep seeds only slow the fuzzer; FuzzArgumentsRecord has them
			f.Add(text)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		rec, err := argumentsRecord([]byte(text), &commandReads)
		if err != nil {
			return
		}
		policyView, policyHas := rec.Get("command")
		var loose struct {
			Command json.RawMessage `json:"command"`
		}
		if json.Unmarshal([]byte(text), &loose) == nil {
			sameCommand(t, text, "encoding/json", loose.Command, policyView, policyHas)
		}
		var strict struct {
			Command json.RawMessage `json:"command"`
		}
		if strictjson.Decode([]byte(text), &strict) == nil {
			sameCommand(t, text, "strictjson", strict.Command, policyView, policyHas)
		}
	})
}

func sameCommand(t *testing.T, text, decoder string, tool json.RawMessage, policyView cedar.Value, policyHas bool) {
	t.Helper()
	if len(tool) == 0 || bytes.Equal(tool, []byte("null")) {
		if policyHas {
			t.Errorf("%q: the policy judged command %s, %s gives the tool none", text, policyView, decoder)
		}
		return
	}
	d := json.NewDecoder(bytes.NewReader(tool))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		t.Fatalf("%q: %s gave the tool %s", text, decoder, tool)
	}
	toolView, _ := toValue(v)
	if !policyHas || !toolView.Equal(policyView) {
		t.Errorf("%q: the policy judged command %v (present %v), %s gives the tool %s", text, policyView, policyHas, decoder, tool)
	}
}

// Keys that collide as encoding/json matches them are refused, with a
// text a model can correct from; so is a key a policy reads spelt in
// another case.
func TestCollidingKeysRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"command":"echo safe","COMMAND":"rm -rf victim"}`, `repeat the key "COMMAND"`},
		{`{"Command":"rm -rf x","command":"echo"}`, `name the key "Command"`},
		{`{"Command":"rm -rf x"}`, `name the key "Command", which a tool reads as "command"`},
		{`{"\u0043OMMAND":"rm -rf x"}`, `spell it "command"`},
		{"{\"other\":{\"\u212aey\":1,\"key\":2}}", "repeat the key \"key\""},
	} {
		t.Run(c.in, func(t *testing.T) {
			_, err := argumentsRecord([]byte(c.in), &commandReads)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
				t.Fatalf("%v, want an error saying %s", err, c.want)
			}
		})
	}
	// A key no policy reads may be spelt any way: only collisions matter.
	if _, err := argumentsRecord([]byte(`{"command":"ls","Workdir":"a"}`), &commandReads); err != nil {
		t.Fatal(err)
	}
}
