package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// tallyTool reports progress three times, then appends one byte to a file
// in the call's session workspace and answers with the replica's name and
// the file's length: the count goes up by one per call only if every
// replica works in the same session.
func tallyTool(replica string) tool.Tool {
	return tool.Must(tool.Native("tally", func(ctx context.Context, _ map[string]any) (any, error) {
		ws := tool.WorkspaceFrom(ctx)
		if ws == nil {
			return nil, errors.New("the call has no session")
		}
		for i := 1; i <= 3; i++ {
			tool.Progress(ctx, float64(i), 3, "step")
		}
		path := filepath.Join(ws.Dir(), "tally")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString("x")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("%s %d", replica, fi.Size()), nil
	}, tool.WithDescription("Counts its calls in the session's workspace.")))
}

func TestSharedMCPSessionWorksOnEveryReplicaBehindRoundRobin(t *testing.T) {
	t.Parallel()
	node, nodeDir := testutil.NodeE2E(t)
	nginxPath(t)
	root := t.TempDir()
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [], "sessions": {"shared": true, "root": %q}}`, root)
	var grpcAddrs, mcpAddrs []string
	for i := range 3 {
		srv, _, _ := launch(t, cfg, func(o *server.Options) {
			o.Native = []tool.Tool{tallyTool(fmt.Sprintf("r%d", i))}
			o.MetricsListen = "-"
			o.MCPListen = "127.0.0.1:0"
		})
		grpcAddrs, mcpAddrs = append(grpcAddrs, srv.Addr().String()), append(mcpAddrs, srv.MCPAddr().String())
	}
	_, lb := startNginxWith(t, nginxRoundRobin, grpcAddrs, mcpAddrs)

	const calls = 50
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // a guard against a wedged child only
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "mcp-roundrobin-client.mjs"), nodeDir,
		"http://"+lb+server.MCPPath, "tally", fmt.Sprint(calls))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client through nginx: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		SessionID string `json:"sessionId"`
		Calls     []struct {
			Text     string    `json:"text"`
			IsError  bool      `json:"isError"`
			Progress []float64 `json:"progress"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	if out.SessionID == "" || len(out.Calls) != calls {
		t.Fatalf("session %q, %d calls", out.SessionID, len(out.Calls))
	}
	replicas := map[string]int{}
	for i, c := range out.Calls {
		name, count, _ := strings.Cut(c.Text, " ")
		if c.IsError || count != fmt.Sprint(i+1) {
			t.Errorf("call %d: %q (error %v); want the count %d", i+1, c.Text, c.IsError, i+1)
		}
		if fmt.Sprint(c.Progress) != "[1 2 3]" {
			t.Errorf("call %d on %s: progress %v; want [1 2 3]", i+1, name, c.Progress)
		}
		replicas[name]++
	}
	t.Logf("MCP session %s: calls per replica %v", out.SessionID, replicas)
	if len(replicas) != 3 {
		t.Errorf("round robin used %v; want all three replicas", replicas)
	}
	// The MCP session is a toolnexus session on the shared root.
	if _, err := os.Stat(filepath.Join(root, "anonymous", out.SessionID, "tally")); err != nil {
		t.Errorf("the MCP session's workspace: %v", err)
	}
}

// mcpPost sends one JSON-RPC request to a stateless /mcp as a bare HTTP
// client would, and returns the status and body.
func mcpPost(t *testing.T, url, token, sessionID, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// On a stateless /mcp the Mcp-Session-Id is only a name: a hostile client
// that sends another token's session id gets a workspace of its own, and
// one that sends a path gets 400.
func TestSharedMCPSessionIDCannotReachAnotherPrincipal(t *testing.T) {
	t.Setenv("TN_SHARED_A", "token-of-agent-a-0123456789")
	t.Setenv("TN_SHARED_B", "token-of-agent-b-0123456789")
	root := t.TempDir()
	srv, _, _ := launch(t, fmt.Sprintf(`{"skills": [], "builtins": {"tools": {"webfetch": false}},
  "auth": {"tokens": [{"name": "a", "token": "${TN_SHARED_A}"}, {"name": "b", "token": "${TN_SHARED_B}"}]},
  "sessions": {"shared": true, "root": %q}}`, root), func(o *server.Options) {
		o.MetricsListen = "-"
		o.MCPListen = "127.0.0.1:0"
	})
	url := "http://" + srv.MCPAddr().String() + server.MCPPath
	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}

	// initialize names a fresh session for the client to keep.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer token-of-agent-a-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, Mcp-Session-Id %q", resp.StatusCode, id)
	}

	if code, body := mcpPost(t, url, "token-of-agent-a-0123456789", id, call("write", `{"path":"secret.txt","content":"a's secret"}`)); code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("a writes: %d %s", code, body)
	}
	if code, body := mcpPost(t, url, "token-of-agent-a-0123456789", id, call("read", `{"path":"secret.txt"}`)); !strings.Contains(body, "a's secret") {
		t.Fatalf("a reads its own file back: %d %s", code, body)
	}
	// b presents a's session id: its own, empty workspace.
	if _, body := mcpPost(t, url, "token-of-agent-b-0123456789", id, call("read", `{"path":"secret.txt"}`)); strings.Contains(body, "a's secret") || !strings.Contains(body, `"isError":true`) {
		t.Errorf("b read a's file through a's session id: %s", body)
	}
	if _, body := mcpPost(t, url, "token-of-agent-b-0123456789", id, call("bash", `{"command":"cat ../../u-a/*/secret.txt; cat `+root+`/u-a/*/secret.txt"}`)); strings.Contains(body, "a's secret") {
		t.Errorf("b's bash read a's file: %s", body)
	}
	for _, bad := range []string{"../u-a", "a/b", strings.Repeat("x", 65)} {
		if code, body := mcpPost(t, url, "token-of-agent-b-0123456789", bad, call("read", `{"path":"secret.txt"}`)); code != http.StatusBadRequest || !strings.Contains(body, "Mcp-Session-Id") {
			t.Errorf("Mcp-Session-Id %q: %d %s", bad, code, body)
		}
	}
	// Without a token nothing is served, id or not.
	if code, _ := mcpPost(t, url, "", id, call("read", `{"path":"secret.txt"}`)); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
}
