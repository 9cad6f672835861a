package mcpclient

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ModernVersion is the stateless MCP protocol the gateway serves next to
// the older ones.
const ModernVersion = "2026-07-28"

// QuestionArgs asks two questions, the first with options.
const QuestionArgs = `{"questions":[{"question":"Pick a color?","header":"Color","options":["red","green"]},{"question":"Why?"}]}`

// Modern opens a 2026-07-28 client on url with the automatic multi
// round-trip off, sending these headers (name, value pairs: Authorization,
// Toolnexus-Session) on every request: a test answers by hand, as an
// attacker would.
func Modern(t testing.TB, url string, header ...string) *mcp.ClientSession {
	t.Helper()
	return MustConnect(t, url, Dial{Header: header, Session: &mcp.ClientSessionOptions{ProtocolVersion: ModernVersion},
		Client: &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return nil, errors.New("the test answers by hand")
			},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}})
}

// Suspend calls tool with args and returns the input_required result's
// requestState and its one input request's id.
func Suspend(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (state, id string) {
	t.Helper()
	res := Call(t, cs, tool, args)
	if !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("want input_required, got %+v", res)
	}
	for k := range res.InputRequests {
		id = k
	}
	return res.RequestState, id
}

// Retry retries a suspended call to tool with state and resp as the
// answer to request id.
func Retry(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any, state, id string, resp mcp.InputResponse) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, RequestState: state,
		InputResponses: mcp.InputResponseMap{id: resp}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Refused retries like Retry and returns the text of the JSON-RPC error
// the server refused the retry with, failing the test on any result.
func Refused(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any, state, id string, resp mcp.InputResponse) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, RequestState: state,
		InputResponses: mcp.InputResponseMap{id: resp}})
	if err == nil {
		t.Fatalf("the retry was not refused: %+v", res)
	}
	return err.Error()
}
