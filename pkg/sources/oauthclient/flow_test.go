package oauthclient_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A caller without a connection gets a PENDING authorization; after the
// login (dynamic registration, PKCE, the real callback) its retry gets a
// token issued to the user who logged in, for the MCP server as its
// audience. Another caller is not connected by it.
func TestCallerLogsInAndGetsItsOwnToken(t *testing.T) {
	r := newRig(t, rigOpts{})
	tok := r.connect(t, "corp:alice", "alice")
	c := claims(t, tok)
	aud, _ := c["aud"].([]any)
	if c["sub"] != "alice" || c["iss"] != r.op.Issuer || !slices.Contains(aud, any(r.mcp.URL)) {
		t.Fatalf("token claims %v: want sub alice, aud %s", c, r.mcp.URL)
	}
	if got := r.op.Counts(); got.Registrations != 1 || got.CodeExchanges != 1 || got.Logins != 1 {
		t.Fatalf("provider counts %+v", got)
	}
	// Her next call uses the stored token, no login.
	again, res := r.forCall(t, call("corp:alice", `{"x": 1}`))
	if again != tok || res != nil {
		t.Fatalf("second call: %q %+v", again, res)
	}
	// Bob is not alice: he is asked to log in himself.
	p := r.pendingFor(t, call("corp:bob", `{}`))
	if strings.Contains(p.URL, "alice") {
		t.Fatal("bob's login names alice")
	}
	bob := r.connect(t, "corp:bob", "bob")
	if claims(t, bob)["sub"] != "bob" || bob == tok {
		t.Fatal("bob got alice's token")
	}
	if got := r.op.Counts().Registrations; got != 1 {
		t.Fatalf("%d registrations: the client must be registered once per deployment", got)
	}
}

// The answer must come from the call that was suspended: another
// principal's answer reads as unknown, other arguments are a mismatch,
// and a declined login ends the call.
func TestAnswerBoundToTheCall(t *testing.T) {
	r := newRig(t, rigOpts{})
	c := call("corp:alice", `{"q": 1}`)
	p := r.pendingFor(t, c)
	other := call("corp:mallory", `{"q": 1}`)
	other.Answer = &tool.Answer{ID: p.ID, OK: true}
	if _, res := r.forCall(t, other); res == nil || !strings.Contains(res.Output, "no pending request has this id") {
		t.Fatalf("another principal's answer: %+v", res)
	}
	diff := call("corp:alice", `{"q": 2}`)
	diff.Answer = &tool.Answer{ID: p.ID, OK: true}
	if _, res := r.forCall(t, diff); res == nil || !strings.Contains(res.Output, "same tool name and arguments") {
		t.Fatalf("other arguments: %+v", res)
	}
	c.Answer = &tool.Answer{ID: p.ID, OK: false}
	if _, res := r.forCall(t, c); res == nil || !strings.Contains(res.Output, "declined") {
		t.Fatalf("declined: %+v", res)
	}
	if _, res := r.forCall(t, c); res == nil || !strings.Contains(res.Output, "no pending request") {
		t.Fatalf("a spent id: %+v", res)
	}
}
