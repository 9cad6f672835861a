package http_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	httpsrc "github.com/toolnexus/toolnexus/pkg/sources/http"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Whatever the config text, ParseConfig never panics, and what it accepts
// survives a round trip through its own JSON unchanged (the reload
// fingerprint relies on that).
func FuzzParseConfig(f *testing.F) {
	f.Add(`[{"name":"a","url":"https://x.test/{id}","method":"post","query":["q"],"body":"raw","timeout":5}]`, `[{"spec":"a.yaml","operations":{"x":false}}]`)
	f.Add(`[{"name":"a","url":"https://x.test/{id}}"}]`, `null`)
	f.Add(`[{"name":"a","url":"http://x.test/{a}{b}?c={d}","headers":{"A":"${B}"},"inputSchema":{"type":"object"}}]`, `[]`)
	f.Fuzz(func(t *testing.T, h, o string) {
		cfg, _, err := httpsrc.ParseConfig(json.RawMessage(h), json.RawMessage(o))
		if err != nil {
			return
		}
		tools, err := json.Marshal(cfg.Tools)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		specs, _ := json.Marshal(cfg.OpenAPI)
		again, _, err := httpsrc.ParseConfig(tools, specs)
		if err != nil {
			t.Fatalf("own output rejected: %v\n%s\n%s", err, tools, specs)
		}
		if !reflect.DeepEqual(normalize(cfg), normalize(again)) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v", cfg, again)
		}
	})
}

func normalize(c httpsrc.Config) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// Whatever the model sends, a call ends in a result with valid UTF-8
// output, never a panic.
func FuzzArguments(f *testing.F) {
	f.Add(`{"id":"a/b","q":[1,"x",null],"n":1e400,"body":{"k":"v"}}`)
	f.Add(`{"id":null}`)
	f.Add(`[1,2]`)
	f.Add(`{"id":"\u00ff\ud800","extra":{"deep":[[[]]]}}`)
	f.Fuzz(func(t *testing.T, args string) {
		a := newAPI(t)
		cfg := parse(t, `[
			{"name":"get","url":`+q(a.URL+"/x/{id}")+`},
			{"name":"post","method":"POST","url":`+q(a.URL+"/x/{id}")+`,"query":["q"]},
			{"name":"form","method":"POST","url":`+q(a.URL+"/x/{id}")+`,"body":"form"},
			{"name":"raw","method":"POST","url":`+q(a.URL+"/x/{id}")+`,"body":"raw"}]`, "")
		reg := mustStart(t, cfg)
		for _, name := range []string{"get", "post", "form", "raw"} {
			res := call(t, reg, name, args)
			if !utf8.ValidString(res.Output) {
				t.Fatalf("%s: output is not UTF-8: %q", name, res.Output)
			}
			if res.IsError && res.Resolved() == tool.OutcomeOK {
				t.Fatalf("%s: inconsistent result %+v", name, res)
			}
		}
	})
}
