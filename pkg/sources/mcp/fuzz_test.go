package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// FuzzParseConfig: any input either fails with an error or yields configs
// that marshal the same way twice (they are reload fingerprints) and name
// a way to run every enabled server.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		`{"fs": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}}}`,
		`{"r": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}, "tools": {"a": true}}}`,
		`{"s": {"type": "sse", "url": "http://h/sse", "timeout": 10, "restart": {"initialBackoff": 5}}}`,
		`{"off": {"disabled": true}}`, `[]`, `{"x": {"command": []}}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		servers, _, err := mcp.ParseConfig(raw)
		if err != nil {
			return
		}
		for name, sc := range servers {
			a, err1 := json.Marshal(sc)
			b, err2 := json.Marshal(sc)
			if err1 != nil || err2 != nil || string(a) != string(b) {
				t.Fatalf("%s: marshal %v %v", name, err1, err2)
			}
			if sc.Disabled {
				continue
			}
			if (sc.Type == mcp.TypeLocal && len(sc.Command) == 0) || (sc.Type == mcp.TypeRemote && sc.URL == "") ||
				(sc.Type != mcp.TypeLocal && sc.Type != mcp.TypeRemote) || sc.Timeout <= 0 {
				t.Fatalf("%s: accepted an unrunnable server %+v", name, sc)
			}
		}
	})
}
