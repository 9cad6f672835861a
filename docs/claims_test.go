package docs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// normalized is text with its line breaks and runs of spaces made single
// spaces, so a sentence is found however a page wraps it.
func normalized(s string) string { return strings.Join(strings.Fields(s), " ") }

// A 2026-07-28 client that did not declare elicitation: docs/mcp-2026.md
// said it gets the toolnexus/pending result, docs/pending.md that the
// server declines on its behalf. Both pages now say what the server does —
// an upstream's elicitation or sampling is declined for it, a question (or
// an A2A input) comes back as the _meta contract — and the question half
// is asked of the shared server here (the upstream half is
// TestEverythingRelayedThroughMCPGateway in pkg/server, over
// server-everything).
func TestPagesAgreeOnAClientWithoutElicitation(t *testing.T) {
	modern := normalized(readPage(t, "docs/mcp-2026.md"))
	for _, want := range []string{
		"A client that did not declare elicitation (or, for `sampling`, sampling) is not asked: an upstream server's elicitation or sampling request is declined on its behalf and the call goes on",
		"while a `question` or an A2A `input` comes back as the `_meta[\"toolnexus/pending\"]` result",
	} {
		if !strings.Contains(modern, want) {
			t.Errorf("docs/mcp-2026.md does not say %q", want)
		}
	}
	if !strings.Contains(normalized(readPage(t, "docs/pending.md")), "A client that did not declare the capability has the request declined for it, and the call goes on.") {
		t.Error("docs/pending.md no longer says a client without the capability has the request declined for it")
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "docs-claims", Version: "1"}, nil) // declares no elicitation
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + shared.mcp + "/mcp", MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "question",
		Arguments: map[string]any{"questions": []any{map[string]any{"question": "Pick a color?", "options": []any{"red", "green"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsInput() || res.Meta["toolnexus/pending"] == nil {
		t.Fatalf("a 2026-07-28 client without elicitation asked a question: %+v; the pages say it gets the toolnexus/pending result", res)
	}
}
