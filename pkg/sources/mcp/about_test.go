package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// aboutServer is an MCP server announcing info as its serverInfo.
func aboutServer(t *testing.T, info *sdk.Implementation) string {
	t.Helper()
	s := sdk.NewServer(info, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// TestStatusSaysWhatTheServerIs: the status carries what tool search reads
// about a server — its serverInfo's title (else its name) and description,
// cut to 512 bytes when the upstream says more, unless the config's title
// and description replace them.
func TestStatusSaysWhatTheServerIs(t *testing.T) {
	long := strings.Repeat("word ", 200)
	announced := aboutServer(t, &sdk.Implementation{Name: "acme-mcp", Title: "Acme Tracker", Version: "1", Description: long})
	bare := aboutServer(t, &sdk.Implementation{Name: "bare-mcp", Version: "1"})
	configured := remoteConfig(announced)
	configured.Title, configured.Description = "Tickets", "Our ticket tracker."
	for _, tc := range []struct {
		name, url, title, desc string
	}{
		{"announced", announced, "Acme Tracker", long[:512]},
		{"name when no title", bare, "bare-mcp", ""},
	} {
		_, src := start(t, tc.name, remoteConfig(tc.url))
		if st := src.Status(); st.Title != tc.title || st.Description != tc.desc {
			t.Errorf("%s: status says %q / %q, want %q / %q", tc.name, st.Title, st.Description, tc.title, tc.desc)
		}
	}
	_, src := start(t, "configured", configured)
	if st := src.Status(); st.Title != "Tickets" || st.Description != "Our ticket tracker." {
		t.Errorf("configured: status says %q / %q, want the config's", st.Title, st.Description)
	}
}
