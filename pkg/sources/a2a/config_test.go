package a2a_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
)

func TestParseConfigDefaults(t *testing.T) {
	t.Parallel()
	got, warns, err := a2a.ParseConfig(json.RawMessage(`{
		"reviewer": {"card": "https://agents.example.test/.well-known/agent-card.json"},
		"coder": {"card": "http://127.0.0.1:8080/card", "headers": {"Authorization": "Bearer ${TOKEN}"},
		          "timeout": 5000, "pollEvery": 250, "enabled": true}
	}`))
	if err != nil || len(warns) != 0 {
		t.Fatalf("ParseConfig: %v, warnings %v", err, warns)
	}
	want := map[string]a2a.AgentConfig{
		"reviewer": {Card: "https://agents.example.test/.well-known/agent-card.json", Timeout: 300000, PollEvery: 1000},
		"coder": {Card: "http://127.0.0.1:8080/card", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
			Timeout: 5000, PollEvery: 250},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseConfigAbsent(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{``, `null`, ` `} {
		got, warns, err := a2a.ParseConfig(json.RawMessage(raw))
		if got != nil || warns != nil || err != nil {
			t.Errorf("%q: got %v %v %v, want nothing", raw, got, warns, err)
		}
	}
}

func TestParseConfigEnabledDisabled(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		`{}`:                                    false,
		`{"enabled": false}`:                    true,
		`{"disabled": true}`:                    true,
		`{"enabled": true, "disabled": true}`:   true,
		`{"enabled": false, "disabled": false}`: true,
		`{"disabled": false}`:                   false,
	}
	for extra, wantDisabled := range cases {
		raw := `{"a": ` + strings.Replace(extra, "{", `{"card": "https://x.test/card",`, 1) + `}`
		raw = strings.Replace(raw, `,}`, `}`, 1)
		got, _, err := a2a.ParseConfig(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got["a"].Disabled != wantDisabled {
			t.Errorf("%s: disabled = %v, want %v", extra, got["a"].Disabled, wantDisabled)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ raw, want string }{
		{`[]`, `must be an object mapping an agent id to {"card": URL, ...}`},
		{`{"a": 1}`, `a: must be an object such as {"card": "https://host/.well-known/agent-card.json"}`},
		{`{"a": {}}`, `a.card: is required: set it to the agent card URL, e.g. https://host/.well-known/agent-card.json`},
		{`{"a": {"card": 5}}`, `a.card: must be a string holding the agent card URL`},
		{`{"a": {"card": "agents.test/card"}}`, `a.card: must be an http or https URL of the agent card`},
		{`{"a": {"card": "https://x.test/c", "headers": ["x"]}}`, `a.headers: must be an object of strings`},
		{`{"a": {"card": "https://x.test/c", "headers": {"A": 1}}}`, `a.headers: must be an object of strings`},
		{`{"a": {"card": "https://x.test/c", "headers": {"Bad Name": "v"}}}`, `a.headers: "Bad Name" is not a valid header name`},
		{`{"a": {"card": "https://x.test/c", "timeout": 0}}`, `a.timeout: must be a positive whole number of milliseconds (default 300000)`},
		{`{"a": {"card": "https://x.test/c", "timeout": "5s"}}`, `a.timeout: must be a positive whole number of milliseconds`},
		{`{"a": {"card": "https://x.test/c", "pollEvery": 1.5}}`, `a.pollEvery: must be a positive whole number of milliseconds (default 1000)`},
		{`{"a": {"card": "https://x.test/c", "enabled": "yes"}}`, `a.enabled: must be true or false`},
		{`{"a": {"card": "https://x.test/c", "disabled": 1}}`, `a.disabled: must be true or false`},
		{`{"": {"card": "https://x.test/c"}}`, `agent id must not be empty`},
	}
	for _, tc := range cases {
		_, _, err := a2a.ParseConfig(json.RawMessage(tc.raw))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want prefix %q", tc.raw, err, tc.want)
		}
	}
}

func TestParseConfigUnknownKeysWarn(t *testing.T) {
	t.Parallel()
	got, warns, err := a2a.ParseConfig(json.RawMessage(`{"a": {"card": "https://x.test/c", "description": "x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`a: unknown key "description" is ignored (known keys: card, headers, timeout, pollEvery, enabled, disabled, tokenExchange)`,
	}
	if !reflect.DeepEqual(warns, want) || got["a"].PollEvery != 1000 {
		t.Errorf("warnings = %q (pollEvery %d), want %q", warns, got["a"].PollEvery, want)
	}
}

// An unknown key that would fail open is an error: a misspelt setting, or a
// tool filter an agent entry cannot have (every skill would be exposed).
func TestParseConfigUnknownKeysThatFailOpenAreErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ raw, want string }{
		{`{"a": {"card": "https://x.test/c", "pollevery": 5}}`, `a.pollevery: unknown key; did you mean "pollEvery"?`},
		{`{"a": {"card": "https://x.test/c", "tools": {"x": false}}}`, `a.tools: unknown key: it looks like a tool filter, and this entry has none`},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, _, err := a2a.ParseConfig(json.RawMessage(c.raw))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want %q", err, c.want)
			}
		})
	}
}

// The engine fingerprints the marshalled config to spot changes on reload:
// equal configs must give equal bytes, whatever the key order, and the
// ${VAR} text must stay as written.
func TestAgentConfigMarshalsDeterministically(t *testing.T) {
	t.Parallel()
	a, _, _ := a2a.ParseConfig(json.RawMessage(`{"x": {"card": "https://x.test/c", "headers": {"B": "2", "A": "${SECRET}", "C": "3"}}}`))
	b, _, _ := a2a.ParseConfig(json.RawMessage(`{"x": {"headers": {"C": "3", "A": "${SECRET}", "B": "2"}, "card": "https://x.test/c"}}`))
	ja, _ := json.Marshal(a["x"])
	jb, _ := json.Marshal(b["x"])
	want := `{"card":"https://x.test/c","headers":{"A":"${SECRET}","B":"2","C":"3"},"timeout":300000,"pollEvery":1000}`
	if string(ja) != want || string(jb) != want {
		t.Errorf("marshal =\n%s\n%s\nwant\n%s", ja, jb, want)
	}
}
