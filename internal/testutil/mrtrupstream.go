package testutil

//lint:file-ignore SA1019 sampling and roots are deprecated in MCP 2026-07-28 but still input requests the conformance suite's fixtures make.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StartMRTRUpstream serves, on MCP 2026-07-28 over streamable HTTP on
// loopback, the conformance suite's input_required fixtures (0.2.0
// alphas, input-required-result-*): tools and a prompt that answer with
// input_required, each as its scenario describes, so toolnexus's /mcp can
// be run against the scenarios with a real upstream behind it. It returns
// the server's URL; the server stops with the test.
func StartMRTRUpstream(t testing.TB) string {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr-fixtures", Version: "1"}, nil)
	for name, h := range mrtrTools(secret) {
		s.AddTool(&mcp.Tool{Name: name, Description: "conformance fixture " + name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context first"},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if r, ok := elicited(req.Params.InputResponses, "user_context"); ok {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
					Content: &mcp.TextContent{Text: fmt.Sprintf("Context: %v", r["context"])}}}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": ask("What context should the prompt use?", "context")}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// ask is a form elicitation for one string field.
func ask(message, field string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{field: map[string]any{"type": "string"}}, "required": []any{field}}}
}

// elicited is the accepted content of the response keyed key.
func elicited(rs mcp.InputResponseMap, key string) (map[string]any, bool) {
	r, ok := rs[key].(*mcp.ElicitResult)
	if !ok || r.Action != "accept" {
		return nil, false
	}
	return r.Content, true
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func need(state string, reqs mcp.InputRequestMap) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

var sampling = &mcp.CreateMessageParams{MaxTokens: 100,
	Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "What is the capital of France?"}}}}

// mrtrTools are the fixture tools by name.
func mrtrTools(secret []byte) map[string]mcp.ToolHandler {
	sign := func(payload string) string {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(payload))
		return payload + "." + hex.EncodeToString(m.Sum(nil))
	}
	return map[string]mcp.ToolHandler{
		"test_input_required_result_elicitation": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := elicited(req.Params.InputResponses, "user_name"); ok {
				return text(fmt.Sprintf("Hello, %v!", r["name"])), nil
			}
			return need("", mcp.InputRequestMap{"user_name": ask("What is your name?", "name")}), nil
		},
		"test_input_required_result_sampling": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["sample_request"]; ok {
				b, _ := json.Marshal(r)
				return text("Sampling result: " + string(b)), nil
			}
			return need("", mcp.InputRequestMap{"sample_request": sampling}), nil
		},
		"test_input_required_result_list_roots": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["roots_request"].(*mcp.ListRootsResult); ok {
				return text(fmt.Sprintf("Found %d root(s)", len(r.Roots))), nil
			}
			return need("", mcp.InputRequestMap{"roots_request": &mcp.ListRootsParams{}}), nil
		},
		"test_input_required_result_request_state": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := elicited(req.Params.InputResponses, "confirm"); ok && req.Params.RequestState == `{"kind":"request-state"}` && r["ok"] == true {
				return text("state-ok: requestState validated"), nil
			}
			return need(`{"kind":"request-state"}`, mcp.InputRequestMap{"confirm": ask("Confirm?", "ok")}), nil
		},
		"test_input_required_result_multiple_inputs": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) >= 3 {
				return text("All inputs received"), nil
			}
			return need("multi", mcp.InputRequestMap{"user_name": ask("What is your name?", "name"), "sample_request": sampling,
				"roots_request": &mcp.ListRootsParams{}}), nil
		},
		"test_input_required_result_multi_round": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			switch req.Params.RequestState {
			case "round-1":
				return need("round-2", mcp.InputRequestMap{"color": ask("Favourite colour?", "color")}), nil
			case "round-2":
				return text("All rounds complete"), nil
			}
			return need("round-1", mcp.InputRequestMap{"name": ask("What is your name?", "name")}), nil
		},
		"test_input_required_result_tampered_state": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if st := req.Params.RequestState; st != "" {
				if st != sign("tampered-state") {
					return nil, fmt.Errorf("requestState integrity check failed")
				}
				return text("state verified"), nil
			}
			return need(sign("tampered-state"), mcp.InputRequestMap{"confirm": ask("Confirm?", "ok")}), nil
		},
		"test_input_required_result_capabilities": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) > 0 {
				return text("Capabilities respected"), nil
			}
			caps, reqs := req.ClientCapabilities(), mcp.InputRequestMap{}
			if caps != nil && caps.Sampling != nil {
				reqs["sample_request"] = sampling
			}
			if caps != nil && caps.Elicitation != nil {
				reqs["user_name"] = ask("What is your name?", "name")
			}
			return need("caps", reqs), nil
		},
	}
}
