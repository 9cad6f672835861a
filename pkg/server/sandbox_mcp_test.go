package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

const sandboxChildEnv = "TN_SANDBOX_MCP_CHILD"

// serveAttackMCP is this test binary as a stdio MCP server whose tools try
// what a confined server must not: read a file, open a TCP connection.
// Each reports the error it got.
func serveAttackMCP() int {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "attack", Version: "1"}, nil)
	type args struct {
		Path string `json:"path,omitempty"`
		Addr string `json:"addr,omitempty"`
	}
	result := func(out string, err error) (*mcpsdk.CallToolResult, any, error) {
		if err != nil {
			return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: err.Error()}}}, nil, nil
		}
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: out}}}, nil, nil
	}
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "read_file", Description: "Read a file."},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, a args) (*mcpsdk.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			return result(string(b), err)
		})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "dial", Description: "Connect over TCP."},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, a args) (*mcpsdk.CallToolResult, any, error) {
			c, err := net.DialTimeout("tcp", a.Addr, 5*time.Second)
			if err == nil {
				c.Close()
			}
			return result("connected", err)
		})
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// TestSandboxedMCPServerThroughExecute is the attack through the whole
// server: a stdio MCP server configured with "sandbox": true, called with
// Execute over gRPC as a model's call would be, tries to read the
// server's config file, the server's /proc/PID/environ and to connect to
// the server's own metrics port. Each is refused, with the errno in the
// result; the same server without the sandbox succeeds at each.
// ListSources says which server is sandboxed; shutting the server down
// leaves no process of either.
func TestSandboxedMCPServerThroughExecute(t *testing.T) {
	t.Parallel()
	if os.Getenv(sandboxChildEnv) != "" {
		os.Exit(serveAttackMCP())
	}
	marker := fmt.Sprintf("attack-%d", time.Now().UnixNano())
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	server := func(sandbox string) string {
		s := fmt.Sprintf(`{"command": [%q, "-test.run=^TestSandboxedMCPServerThroughExecute$"], "env": {%q: %q}`, self, sandboxChildEnv, marker)
		if sandbox != "" {
			s += `, "sandbox": ` + sandbox
		}
		return s + "}"
	}
	readPaths, _ := json.Marshal([]string{filepath.Dir(self)})
	cfg := `{"skills": [], "builtins": false, "mcpServers": {
		"boxed": ` + server(`{"readPaths": `+string(readPaths)+`}`) + `,
		"plain": ` + server("") + `}}`
	srv, cfgPath, stop := launch(t, cfg, nil)
	conn := (&served{srv: srv}).dial(t)
	src, err := pb.NewSourceServiceClient(conn).ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var landlock bool
	for _, l := range src.GetSandbox().GetLayers() {
		if l.GetName() == "landlock" {
			landlock = l.GetActive()
		}
	}
	if !landlock {
		t.Skip("no landlock here: a sandboxed server is not confined, the attacks are not run")
	}
	for _, so := range src.GetSources() {
		switch so.GetName() {
		case "boxed":
			if so.GetStatus() != "connected" || !strings.Contains(so.GetSandbox(), "sandboxed") {
				t.Errorf("ListSources, boxed: %v", so)
			}
		case "plain":
			if so.GetStatus() != "connected" || so.GetSandbox() != "" {
				t.Errorf("ListSources, plain: %v", so)
			}
		}
	}

	reg := pb.NewRegistryServiceClient(conn)
	exec := func(name string, args map[string]string) *pb.ToolResult {
		t.Helper()
		b, _ := json.Marshal(args)
		resp, err := reg.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: string(b)}})
		if err != nil {
			t.Fatalf("Execute(%s): %v", name, err)
		}
		return resp.GetResult()
	}
	attacks := []struct {
		name, tool string
		args       map[string]string
		errnos     []string
	}{
		// Landlock's mask refuses it; under a private parent (launch's
		// t.TempDir is 0700) the command's view does not even have it.
		{"the config file", "read_file", map[string]string{"path": cfgPath}, []string{"permission denied", "no such file"}},
		{"the server's environ", "read_file", map[string]string{"path": "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"}, []string{"permission denied", "no such file"}},
		{"the server's metrics port", "dial", map[string]string{"addr": srv.MetricsAddr().String()}, []string{"operation not permitted", "permission denied", "network is unreachable"}},
	}
	for _, a := range attacks {
		r := exec("boxed_"+a.tool, a.args)
		refused := false
		for _, e := range a.errnos {
			refused = refused || strings.Contains(strings.ToLower(r.GetOutput()), e)
		}
		if !r.GetIsError() || !refused || strings.Contains(r.GetOutput(), "mcpServers") {
			t.Errorf("sandboxed server reaching %s: is_error=%v %q; want one of %q", a.name, r.GetIsError(), r.GetOutput(), a.errnos)
		}
		if p := exec("plain_"+a.tool, a.args); p.GetIsError() {
			t.Errorf("unsandboxed server reaching %s: %q; the attack must work without the sandbox", a.name, p.GetOutput())
		}
	}

	if n := len(processesWithEnv(sandboxChildEnv + "=" + marker)); n != 2 {
		t.Fatalf("want the two MCP servers running, found %d", n)
	}
	stop()
	if left := processesWithEnv(sandboxChildEnv + "=" + marker); len(left) > 0 {
		t.Fatalf("processes left after the server stopped: %v", left)
	}
}

// processesWithEnv lists the pids whose environment holds kv.
func processesWithEnv(kv string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, v := range strings.Split(string(env), "\x00") {
			if v == kv {
				out = append(out, e.Name())
			}
		}
	}
	return out
}
