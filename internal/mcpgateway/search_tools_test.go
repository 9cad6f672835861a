package mcpgateway_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// rpc posts one JSON-RPC message as the token's caller and returns the
// result of the one response.
func (s *scriptServer) rpc(t *testing.T, token, body string) map[string]any {
	t.Helper()
	resp := s.post(t, "token="+token, []byte(body))
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	msgs := messages(t, body, resp.Header.Get("Content-Type"), raw)
	if len(msgs) == 0 {
		return nil
	}
	res, _ := msgs[len(msgs)-1].(map[string]any)["result"].(map[string]any)
	return res
}

// TestSearchToolsSaysHowAndWhy: in discovery mode, search_tools tells the
// model how to phrase a query, and each hit says which words it matched
// and where; a tool outside the token's allowlist is neither a hit nor
// named in any reason, even when the query names it exactly.
func TestSearchToolsSaysHowAndWhy(t *testing.T) {
	t.Parallel()
	const token = "tok-echo-0123456789abcdef"
	s := startScriptServer(t, &txtar.Archive{Files: []txtar.File{
		{Name: "config.json", Data: []byte(`{"builtins": false, "debug": true, "auth": {"tokens": [
			{"name": "echo-only", "token": "` + token + `", "tools": ["debug_echo", "debug_fail"]}]}}`)},
		{Name: "gateway.json", Data: []byte(`{"Discovery": "search"}`)},
	}})
	s.rpc(t, token, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	s.post(t, "token="+token, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)).Body.Close()
	list := s.rpc(t, token, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	var description string
	for _, tl := range list["tools"].([]any) {
		if m := tl.(map[string]any); m["name"] == "search_tools" {
			description, _ = m["description"].(string)
		}
	}
	for _, advice := range []string{"the action and the thing it acts on", "the product", "reason naming the words it matched", "search again with other words"} {
		if !strings.Contains(description, advice) {
			t.Errorf("search_tools' description does not say %q: %s", advice, description)
		}
	}
	for _, tc := range []struct{ query, first, reason string }{
		{"echo the message back", "debug_echo", "name: echo"},
		{"sleep for a while", "", ""}, // only debug_sleep says sleep, and the allowlist hides it
	} {
		res := s.rpc(t, token, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"`+tc.query+`"}}}`)
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		var out struct {
			Tools []struct{ Name, Reason string }
		}
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("%q: %v in %s", tc.query, err, text)
		}
		if strings.Contains(text, "debug_sleep") && tc.first == "" {
			t.Errorf("%q: a hidden tool shows in %s", tc.query, text)
		}
		if tc.first == "" {
			if len(out.Tools) != 0 {
				t.Errorf("%q: hits %+v, want none", tc.query, out.Tools)
			}
			continue
		}
		if len(out.Tools) == 0 || out.Tools[0].Name != tc.first || !strings.Contains(out.Tools[0].Reason, tc.reason) {
			t.Errorf("%q: hits %+v, want %s first with a reason naming %q", tc.query, out.Tools, tc.first, tc.reason)
		}
	}
}
