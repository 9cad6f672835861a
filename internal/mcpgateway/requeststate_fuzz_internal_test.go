package mcpgateway

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/suspendtest"
)

// FuzzRequestStateBinding: a requestState, the 2026-07-28 suspended
// call's binding on /mcp, opens for the retry of the same call with its
// arguments' keys in any order and any spacing, and refuses another
// principal, session, tool or argument — the binding every other
// suspended kind has (internal/suspend/pending's
// FuzzEverySuspendedKindBinding covers those).
//
//	go test -run '^$' -fuzz FuzzRequestStateBinding -fuzztime 30s ./internal/mcpgateway/
func FuzzRequestStateBinding(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":2}`, `{"questions":[{"question":"Which?","header":"H"}]}`, `{"x":{"b":[1,{"d":1,"c":2}],"a":null},"n":1.50}`, `{}`} {
		f.Add([]byte(s))
	}
	signer := newStateSigner([]byte(strings.Repeat("k", 32)))
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, args []byte) {
		var obj map[string]any
		if _, err := suspend.Digest(args); err != nil || json.Unmarshal(args, &obj) != nil || obj == nil {
			return // not one JSON object: no call suspends with it
		}
		asked := core.Call{Name: "question", Arguments: args, Caller: &auth.Principal{Name: "alice"}, Session: "s1"}
		issued := bindings(asked)
		issued.Pending, issued.Kind = "question_1", kindQuestion
		state := signer.sign(issued)
		reordered, err := suspendtest.Reordered(args)
		if err != nil {
			t.Fatal(err)
		}
		same := asked
		same.Arguments = reordered
		if _, err := signer.open(state, bindings(same), now); err != nil {
			t.Fatalf("the same call with reordered keys %s: %v (asked with %s)", reordered, err, args)
		}
		extra, err := suspendtest.WithExtraKey(args)
		if err != nil {
			t.Fatal(err)
		}
		for what, other := range map[string]func(core.Call) core.Call{
			"principal": func(c core.Call) core.Call { c.Caller = &auth.Principal{Name: "mallory"}; return c },
			"session":   func(c core.Call) core.Call { c.Session = "s2"; return c },
			"tool":      func(c core.Call) core.Call { c.Name = "bash"; return c },
			"argument":  func(c core.Call) core.Call { c.Arguments = extra; return c },
		} {
			if _, err := signer.open(state, bindings(other(asked)), now); !errors.Is(err, errStateMoved) {
				t.Fatalf("another %s: %v, want %v", what, err, errStateMoved)
			}
		}
	})
}
