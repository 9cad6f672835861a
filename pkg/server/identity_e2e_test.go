package server_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// The official TypeScript MCP SDK client, given only client credentials,
// discovers a real provider (zitadel/oidc) from /mcp's 401, gets a token
// for /mcp from it and lists the tools its groups allow; a token the
// provider made for another resource is refused.
func TestTypeScriptSDKOAuthClient(t *testing.T) {
	t.Parallel()
	node, nodeDir := testutil.NodeE2E(t)
	p := oidcop.Start(t, oidcop.Client{ID: "agent-7", Secret: "agent-7-client-secret", Groups: []string{"dev"}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mcpAddr := l.Addr().String()
	_ = l.Close()
	mcpURL := "http://" + mcpAddr + "/mcp"
	cfg := fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [],
		"auth": {"oidc": {"issuer": %q, "audience": %q, "requiredScopes": ["tools"]},
			"groups": {"dev": {"tools": ["debug_echo", "debug_fail"]}}}}`, p.Issuer, mcpURL)
	launch(t, cfg, func(o *server.Options) { o.MCPListen = mcpAddr })

	cmd := exec.Command(node, filepath.Join(nodeDir, "oauth-client.mjs"), mcpURL, p.Issuer, "agent-7", "agent-7-client-secret")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("oauth-client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var got struct {
		Tools         []string `json:"tools"`
		OtherResource struct {
			Refused bool   `json:"refused"`
			Code    int    `json:"code"`
			Error   string `json:"error"`
		} `json:"otherResource"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if !slices.Equal(got.Tools, []string{"debug_echo", "debug_fail"}) {
		t.Errorf("the SDK client listed %v, want the dev group's tools", got.Tools)
	}
	if o := got.OtherResource; !o.Refused || o.Code != 401 || !strings.Contains(o.Error, "audience is not this server") {
		t.Errorf("a token for another resource: %+v, want refused with 401", got.OtherResource)
	}
}
