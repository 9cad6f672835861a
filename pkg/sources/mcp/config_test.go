package mcp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

var defaultRestart = mcp.Restart{InitialBackoff: 250, MaxBackoff: 30000, ResetAfter: 60000}

func TestParseConfig(t *testing.T) {
	raw := `{
	  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"DEBUG": "1"}},
	  "arr": {"command": ["node", "server.js"], "args": ["--x"], "cwd": "srv", "timeout": 5000,
	          "tools": {"write": false}, "restart": {"initialBackoff": 10, "maxBackoff": 50}},
	  "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
	  "sse": {"type": "sse", "url": "https://example.test/sse"},
	  "explicit": {"type": "local", "command": ["x"], "environment": {"A": "b"}, "enabled": true},
	  "off": {"disabled": true},
	  "off2": {"command": ["x"], "enabled": false},
	  "both": {"command": ["x"], "enabled": true, "disabled": true},
	  "claude": {"command": "x", "autoApprove": []},
	  "gh": {"command": "x", "title": "GitHub", "description": "Issues and pull requests of our organisation."}
	}`
	got, warns, err := mcp.ParseConfig(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]mcp.ServerConfig{
		"fs": {Type: "local", Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "."},
			Environment: map[string]string{"DEBUG": "1"}, Timeout: 30000, Restart: defaultRestart},
		"arr": {Type: "local", Command: []string{"node", "server.js", "--x"}, Cwd: "srv", Timeout: 5000,
			Tools: sources.Filter{"write": false}, Restart: mcp.Restart{InitialBackoff: 10, MaxBackoff: 50, ResetAfter: 60000}},
		"remote": {Type: "remote", URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
			Timeout: 30000, Restart: defaultRestart},
		"sse":      {Type: "remote", Transport: "sse", URL: "https://example.test/sse", Timeout: 30000, Restart: defaultRestart},
		"explicit": {Type: "local", Command: []string{"x"}, Environment: map[string]string{"A": "b"}, Timeout: 30000, Restart: defaultRestart},
		"off":      {Disabled: true, Timeout: 30000, Restart: defaultRestart},
		"off2":     {Type: "local", Command: []string{"x"}, Disabled: true, Timeout: 30000, Restart: defaultRestart},
		"both":     {Type: "local", Command: []string{"x"}, Disabled: true, Timeout: 30000, Restart: defaultRestart},
		"claude":   {Type: "local", Command: []string{"x"}, Timeout: 30000, Restart: defaultRestart},
		"gh": {Type: "local", Command: []string{"x"}, Timeout: 30000, Restart: defaultRestart,
			Title: "GitHub", Description: "Issues and pull requests of our organisation."},
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d servers, want %d", len(got), len(want))
	}
	if len(warns) != 1 || warns[0] != `claude: unknown key "autoApprove" is ignored` {
		t.Errorf("warnings = %q", warns)
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct{ raw, want string }{
		{`[]`, `must be an object mapping server names to server settings`},
		{`{"fs": 1}`, `fs: must be an object such as`},
		{`{"fs": {"command": 1}}`, `fs.command: must be a string or an array of strings`},
		{`{"fs": {"command": [1]}}`, `fs.command: must be a string or an array of strings`},
		{`{"fs": {"command": []}}`, `fs.command: must name a program`},
		{`{"fs": {"command": "x", "args": "y"}}`, `fs.args: must be an array of strings`},
		{`{"fs": {"args": ["y"], "url": "http://h"}}`, `fs.args: needs a "command"`},
		{`{"fs": {"command": "x", "env": {"A": 1}}}`, `fs.env.A: must be a string (quote numbers and booleans)`},
		{`{"fs": {"command": "x", "env": {}, "environment": {}}}`, `fs: "environment" and "env" are the same setting; keep only one`},
		{`{"fs": {"command": "x", "timeout": "5s"}}`, `fs.timeout: must be a positive number of milliseconds, e.g. 30000`},
		{`{"fs": {"command": "x", "timeout": -1}}`, `fs.timeout: must be a positive number of milliseconds`},
		{`{"fs": {"command": "x", "tools": {"a": "yes"}}}`, `fs.tools.a: must be true or false`},
		{`{"fs": {"command": "x", "tools": []}}`, `fs.tools: must be an object of tool names to true or false`},
		{`{"fs": {"command": "x", "disabled": "yes"}}`, `fs.disabled: must be true or false`},
		{`{"fs": {"command": "x", "elicitation": "no"}}`, `fs.elicitation: must be true or false`},
		{`{"fs": {"command": "x", "sampling": 0}}`, `fs.sampling: must be true or false`},
		{`{"fs": {"command": "x", "title": 1}}`, `fs.title: must be a string`},
		{`{"fs": {"command": "x", "description": "` + strings.Repeat("d", 513) + `"}}`, `fs.description: is 513 bytes; the limit is 512`},
		{`{"fs": {"command": "x", "restart": {"initial": 5}}}`, `fs.restart.initial: unknown setting; use initialBackoff, maxBackoff or resetAfter`},
		{`{"fs": {"type": "pipe", "command": "x"}}`, `fs.type: "pipe" is not a server type; use "local" (a command run over stdio) or "remote" (a URL)`},
		{`{"fs": {}}`, `fs: needs "command" (a local server) or "url" (a remote server)`},
		{`{"fs": {"command": "x", "url": "http://h"}}`, `fs: has both "command" and "url"; keep one, or set "type" to "local" or "remote"`},
		{`{"fs": {"type": "remote", "command": "x"}}`, `fs.url: a remote server needs "url"`},
		{`{"fs": {"type": "local", "url": "http://h"}}`, `fs.command: a local server needs "command"`},
		{`{"fs": {"url": "ftp://h"}}`, `fs.url: must be an http:// or https:// URL`},
		{`{"fs": {"url": "http://h", "headers": {"X": true}}}`, `fs.headers.X: must be a string`},
		{`{"": {"command": "x"}}`, `"": a server name must not be empty`},
		{`{"fs": {"url": "https://h/mcp", "tokenExchange": {"clientId": "x", "audience": "a"}}}`, `fs.tokenExchange.tokenUrl: `},
		{`{"fs": {"url": "https://h/mcp", "tokenExchange": {"tokenUrl": "https://idp.test/token", "audience": "a"}}}`, `fs.tokenExchange.clientId: `},
		{`{"fs": {"url": "https://h/mcp", "tokenExchange": {"tokenUrl": "https://idp.test/token", "clientId": "x"}}}`, `fs.tokenExchange.audience: set audience`},
		{`{"fs": {"url": "https://h/mcp", "tokenExchange": {"tokenUrl": "https://idp.test/token", "clientId": "x", "audience": "a", "secret": "s"}}}`, `fs.tokenExchange.secret: unknown key`},
		{`{"fs": {"command": "x", "tokenExchange": {"tokenUrl": "https://idp.test/token", "clientId": "x", "audience": "a"}}}`, `fs.tokenExchange: only a remote server`},
	}
	for _, c := range cases {
		_, _, err := mcp.ParseConfig(json.RawMessage(c.raw))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant prefix %q", c.raw, err, c.want)
		}
	}
}

func TestServerConfigFingerprintIsDeterministic(t *testing.T) {
	raw := `{"r": {"url": "https://h/mcp", "headers": {"B": "${B}", "A": "x", "C": "${C}"},
	             "env": {"Z": "1", "Y": "2"}, "tools": {"q": true, "p": true}}}`
	first, _, err := mcp.ParseConfig(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(first["r"])
	for range 20 {
		again, _, _ := mcp.ParseConfig(json.RawMessage(raw))
		b, _ := json.Marshal(again["r"])
		if string(a) != string(b) {
			t.Fatalf("fingerprints differ:\n%s\n%s", a, b)
		}
	}
	if !strings.Contains(string(a), `"B":"${B}"`) {
		t.Fatalf("header reference not kept verbatim: %s", a)
	}
}

// tokenExchange on a remote server is read as written: the secret stays a
// reference, so a config's fingerprint never holds it.
func TestParseTokenExchange(t *testing.T) {
	got, warns, err := mcp.ParseConfig(json.RawMessage(`{"r": {"url": "https://h/mcp", "tokenExchange":
		{"tokenUrl": "https://idp.test/token", "clientId": "toolnexus", "clientSecret": "${file:/run/secrets/x}", "audience": "https://h", "scope": "tools"}}}`))
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	te := got["r"].TokenExchange
	if te == nil || te.TokenURL != "https://idp.test/token" || te.ClientID != "toolnexus" || te.ClientSecret != "${file:/run/secrets/x}" || te.Audience != "https://h" || te.Scope != "tools" {
		t.Fatalf("tokenExchange %+v", te)
	}
}

func TestParseConfigEmpty(t *testing.T) {
	for _, raw := range []string{``, `null`, `{}`} {
		got, warns, err := mcp.ParseConfig(json.RawMessage(raw))
		if err != nil || len(got) != 0 || len(warns) != 0 {
			t.Errorf("%q: %v %v %v", raw, got, warns, err)
		}
	}
}
