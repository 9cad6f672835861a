package mcpgateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

const loginURL = "https://login.example.com/authorize?client_id=toolnexus&state=s"

// needsLogin is a tool that, like an MCP server with "oauth" for a caller
// without a connection, suspends on an authorization request, and runs
// once that request is answered ok.
func needsLogin() tool.Tool {
	return tool.Must(tool.New("tickets_whoami", func(_ context.Context, c tool.Call) tool.Result {
		if a := c.Answer; a != nil && a.ID == "authorization_1" && a.OK {
			return tool.Success("you are alice", nil)
		}
		return tool.Suspend(tool.Pending{ID: "authorization_1", Kind: "authorization", URL: loginURL,
			Prompt: "MCP server \"tickets\" acts with your own account there: open " + loginURL + " and log in"})
	}, tool.WithDescription("Say who you are."), tool.WithInputSchema(json.RawMessage(`{"type":"object"}`))))
}

func authorizationGateway(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(`{"builtins": false, "skills": []}`), filepath.Join(dir, "c.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler), Native: []tool.Tool{needsLogin()}})
	if err != nil {
		t.Fatal(err)
	}
	return serveGateway(t, c, mcpgateway.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)}) + mcpgateway.Path
}

// A client that declared URL-mode elicitation is asked to open the login
// page (elicitation/create, mode "url", on 2025-11-25; an input_required
// URL elicitation on 2026-07-28); its accept resumes the call. A client
// without it gets the PENDING result with the URL in the text and in
// _meta.
func TestAuthorizationIsAURLElicitation(t *testing.T) {
	url := authorizationGateway(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var asked []*mcp.ElicitParams
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept"}, nil
				}})
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tickets_whoami", Arguments: map[string]any{}})
			if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "you are alice" {
				t.Fatalf("call: %+v %v", res, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != loginURL || asked[0].ElicitationID == "" {
				t.Fatalf("asked %+v", asked)
			}
		})
	}
	t.Run("no URL elicitation", func(t *testing.T) {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				t.Error("a client without URL-mode elicitation was asked")
				return &mcp.ElicitResult{Action: "decline"}, nil
			}})
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tickets_whoami", Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, loginURL) {
			t.Fatalf("call: %+v %v", res, err)
		}
		b, _ := json.Marshal(res.Meta["toolnexus/pending"])
		if !strings.Contains(string(b), `"kind":"authorization"`) || !strings.Contains(string(b), `"url":"`+strings.ReplaceAll(loginURL, "&", `\u0026`)) {
			t.Fatalf("_meta pending %s", b)
		}
	})
}
