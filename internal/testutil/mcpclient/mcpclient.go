// Package mcpclient is the MCP client side of the tests of /mcp: a go-sdk
// client session on a URL (with a bearer token, extra headers, a pinned
// protocol), the calls and lists a test makes through it, waiting for
// list_changed, and a real upstream MCP server to proxy. The tests of the
// gateway in its own package and the multi-process tests in pkg/server
// share it, so both speak to /mcp the same way.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionProtocol pins a go-sdk client to 2025-11-25, the newest protocol
// with sessions (initialize, Mcp-Session-Id, logging/setLevel): the tests
// using it are about those. The go-sdk's default, 2026-07-28, has none.
var SessionProtocol = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// Dial says how a test connects.
type Dial struct {
	// Token is sent as a bearer token ("" sends none).
	Token string
	// Header are more name, value pairs sent with every request.
	Header []string
	// Client may carry a list_changed handler (ListChanged).
	Client *mcp.ClientOptions
	// Session is the session's options; nil pins SessionProtocol. Use
	// &mcp.ClientSessionOptions{} for the go-sdk's default protocol.
	Session *mcp.ClientSessionOptions
	// Retry keeps the go-sdk's retries of a broken event stream; without
	// it the client fails at once, so a test sees a refusal as it is.
	Retry bool
}

// HeaderClient is an HTTP client that sends these headers (name, value
// pairs) with every request.
func HeaderClient(kv ...string) *http.Client {
	return &http.Client{Transport: headers{http.DefaultTransport, kv}}
}

// headers adds its name, value pairs to every request.
type headers struct {
	rt http.RoundTripper
	kv []string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for i := 0; i+1 < len(h.kv); i += 2 {
		r.Header.Set(h.kv[i], h.kv[i+1])
	}
	return h.rt.RoundTrip(r)
}

// HTTPClient sends the token (if any) and the headers with every request.
func HTTPClient(token string, header ...string) *http.Client {
	if token != "" {
		header = append([]string{"Authorization", "Bearer " + token}, header...)
	}
	if len(header) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headers{http.DefaultTransport, header}}
}

// Connect opens a go-sdk client session on url; it closes with the test.
func Connect(t testing.TB, url string, d Dial) (*mcp.ClientSession, error) {
	t.Helper()
	sopts := d.Session
	if sopts == nil {
		sopts = SessionProtocol
	}
	retries := -1
	if d.Retry {
		retries = 0
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "toolnexus-test", Version: "1"}, d.Client)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: HTTPClient(d.Token, d.Header...), MaxRetries: retries}, sopts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

// MustConnect is Connect failing the test on an error.
func MustConnect(t testing.TB, url string, d Dial) *mcp.ClientSession {
	t.Helper()
	cs, err := Connect(t, url, d)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	return cs
}

// Call is a tools/call; a protocol error fails the test, since a tool's
// failure must be an isError result.
func Call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v; tool failures must be isError results", name, err)
	}
	return res
}

// Text is the one text part a gateway result must have.
func Text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content has %d parts, want exactly one text part: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content part is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// List is every tool of tools/list, across its pages.
func List(t testing.TB, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out = append(out, tl)
	}
	return out
}

// Names are the tools' names, in order.
func Names(tools []*mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = tl.Name
	}
	return out
}

// Listed is tools/list's names, joined by commas.
func Listed(t testing.TB, cs *mcp.ClientSession) string {
	t.Helper()
	return strings.Join(Names(List(t, cs)), ",")
}

// MustBeUnknown calls name and wants exactly the answer the MCP server
// gives for a tool it does not have.
func MustBeUnknown(t testing.TB, cs *mcp.ClientSession, name string) {
	t.Helper()
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || werr.Message != fmt.Sprintf("unknown tool %q", name) {
		t.Fatalf("tools/call %s: %v, want the invalid-params error for an unknown tool", name, err)
	}
}

// ListChanged returns client options whose list_changed notifications
// arrive on the channel.
func ListChanged() (*mcp.ClientOptions, <-chan struct{}) {
	ch := make(chan struct{}, 16)
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}, ch
}

// Await waits for a notification. The timeout only guards against a hang;
// the notification normally arrives within milliseconds.
func Await(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/tools/list_changed after %s", what)
	}
}

// AwaitTools re-lists after each notification until the names are want:
// notifications are debounced, so one may cover several changes and the
// first may arrive before the last change.
func AwaitTools(t testing.TB, cs *mcp.ClientSession, ch <-chan struct{}, what string, want ...string) {
	t.Helper()
	for {
		Await(t, ch, what)
		if got := Listed(t, cs); got == strings.Join(want, ",") {
			return
		}
	}
}

// InitializeBody is a raw initialize request at 2025-06-18.
const InitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// RawPost sends one JSON-RPC message to url as plain HTTP, with a token
// and a session (at 2025-06-18) when they are not empty.
func RawPost(t testing.TB, url, token, session, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Upstream is a real MCP server (the go-sdk over streamable HTTP on
// loopback) with one tool, greet, for a gateway to proxy through an mcp
// source; its endpoint is URL+"/mcp" (any path serves). It closes with
// the test.
func Upstream(t testing.TB) (string, *mcp.Server) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	type in struct {
		Who string `json:"who" jsonschema:"who to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + a.Who}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL, s
}

// JSONEqual compares two JSON documents by value.
func JSONEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}
