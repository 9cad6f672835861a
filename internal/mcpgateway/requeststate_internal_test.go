package mcpgateway

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
)

func TestRequestStateBindings(t *testing.T) {
	t.Parallel()
	s := newStateSigner([]byte(strings.Repeat("k", 32)))
	now := time.Unix(1_800_000_000, 0)
	bound := stateClaims{Tool: "question", Args: digestOf(json.RawMessage(`{"a": 1, "b": 2}`)), Principal: "alice", Session: "s1"}
	issued := bound
	issued.Pending, issued.Kind, issued.Expires = "question_1", kindQuestion, now.Add(time.Minute).Unix()
	state := s.sign(issued)

	with := func(f func(*stateClaims)) stateClaims { c := bound; f(&c); return c }
	for _, tc := range []struct {
		name  string
		state string
		want  stateClaims
		at    time.Time
		err   error
	}{
		{"same call, whitespace aside", state, with(func(c *stateClaims) { c.Args = digestOf(json.RawMessage(`{ "a" : 1 ,"b":2}`)) }), now, nil},
		{"same call, keys reordered", state, with(func(c *stateClaims) { c.Args = digestOf(json.RawMessage(`{"b":2,"a":1}`)) }), now, nil},
		{"other principal", state, with(func(c *stateClaims) { c.Principal = "bob" }), now, errStateMoved},
		{"no principal", state, with(func(c *stateClaims) { c.Principal = "" }), now, errStateMoved},
		{"other session", state, with(func(c *stateClaims) { c.Session = "s2" }), now, errStateMoved},
		{"other tool", state, with(func(c *stateClaims) { c.Tool = "bash" }), now, errStateMoved},
		{"other arguments", state, with(func(c *stateClaims) { c.Args = digestOf(json.RawMessage(`{"a":2,"b":2}`)) }), now, errStateMoved},
		{"expired", state, bound, now.Add(2 * time.Minute), errStateExpired},
		{"other key", newStateSigner([]byte(strings.Repeat("j", 32))).sign(issued), bound, now, errStateForged},
		{"truncated mac", state[:len(state)-3], bound, now, errStateForged},
		{"no dot", strings.ReplaceAll(state, ".", ""), bound, now, errStateMalformed},
		{"bad base64", "!!." + strings.SplitN(state, ".", 2)[1], bound, now, errStateMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := s.open(tc.state, tc.want, tc.at)
			if !errors.Is(err, tc.err) {
				t.Fatalf("open: %v, want %v", err, tc.err)
			}
			if err == nil && (c.Pending != "question_1" || c.Kind != kindQuestion) {
				t.Fatalf("claims: %+v", c)
			}
		})
	}
}

// BenchmarkRequestState is the cost a suspended call pays to issue its
// requestState and its retry pays to check it, next to
// BenchmarkRequestStateBaseline: decoding the same call's params, which
// every tools/call pays anyway.
func BenchmarkRequestState(b *testing.B) {
	s := newStateSigner(nil)
	args := json.RawMessage(`{"questions":[{"question":"Pick a color?","header":"Color","options":["red","green"]},{"question":"Why?"}]}`)
	c := stateClaims{Pending: "question_0123456789abcdef", Kind: kindQuestion, Tool: "question", Args: digestOf(args), Principal: "alice", Session: "s1", Expires: time.Now().Add(time.Hour).Unix()}
	b.ReportAllocs()
	for b.Loop() {
		st := s.sign(c)
		if _, err := s.open(st, stateClaims{Tool: "question", Args: digestOf(args), Principal: "alice", Session: "s1"}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestStateBaseline(b *testing.B) {
	body := []byte(`{"name":"question","arguments":{"questions":[{"question":"Pick a color?","header":"Color","options":["red","green"]},{"question":"Why?"}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      map[string]any  `json:"_meta"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// digestOf is the arguments' digest as bindings takes it.
func digestOf(args json.RawMessage) string {
	d, _ := suspend.Digest(args)
	return d
}

// TestPromptStateSealed: a prompt's requestState opens only under its key,
// for its exact call, before its expiry, and any changed byte is refused.
func TestPromptStateSealed(t *testing.T) {
	t.Parallel()
	s := newStateSigner([]byte(strings.Repeat("k", 32)))
	now := time.Unix(1_800_000_000, 0)
	bound := stateClaims{Tool: "prompts/get p", Args: digestOf(json.RawMessage(`{}`)), Principal: "alice", Session: "s1"}
	issued := promptClaims{stateClaims: bound, Requests: json.RawMessage(`{"k":{"method":"roots/list","params":{}}}`), State: "upstream-secret"}
	issued.Expires = now.Add(time.Minute).Unix()
	state := s.seal(issued)
	if strings.Contains(state, "upstream") || s.seal(issued) == state {
		t.Fatalf("the seal is readable or not randomized: %s", state)
	}
	// Flip a bit of the sealed bytes, not of their text: a flipped
	// character can leave the base64 alphabet, which is another refusal.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, promptStatePrefix))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-5] ^= 2
	flipped := promptStatePrefix + base64.RawURLEncoding.EncodeToString(raw)
	moved := bound
	moved.Principal = "bob"
	for _, tc := range []struct {
		name, state string
		want        stateClaims
		at          time.Time
		err         error
	}{
		{"its call", state, bound, now, nil},
		{"a changed byte", flipped, bound, now, errStateForged},
		{"other key", newStateSigner([]byte(strings.Repeat("j", 32))).seal(issued), bound, now, errStateForged},
		{"other principal", state, moved, now, errStateMoved},
		{"expired", state, bound, now.Add(2 * time.Minute), errStateExpired},
		{"a tool call's state", s.sign(bound), bound, now, errStateMalformed},
	} {
		c, err := s.unseal(tc.state, tc.want, tc.at)
		if !errors.Is(err, tc.err) || err == nil && (c.State != "upstream-secret" || string(c.Requests) != string(issued.Requests)) {
			t.Errorf("%s: %+v %v, want %v", tc.name, c, err, tc.err)
		}
	}
}
