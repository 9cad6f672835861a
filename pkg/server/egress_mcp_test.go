package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

const egressChildEnv = "TN_EGRESS_MCP_CHILD"

// serveFetchMCP is this test binary as a stdio MCP server with one tool,
// fetch: a GET through the proxy its environment names (HTTP_PROXY), and
// "direct": a GET without it.
func serveFetchMCP() int {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "fetcher", Version: "1"}, nil)
	type args struct {
		URL    string `json:"url"`
		Direct bool   `json:"direct,omitempty"`
	}
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "fetch", Description: "GET a URL."},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, a args) (*mcpsdk.CallToolResult, any, error) {
			tr := &http.Transport{}
			if !a.Direct {
				// Go's ProxyFromEnvironment skips loopback URLs: name
				// the proxy explicitly.
				p, _ := url.Parse(os.Getenv("HTTP_PROXY"))
				tr.Proxy = http.ProxyURL(p)
			}
			resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(a.URL)
			text := ""
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				text = fmt.Sprintf("%d %s", resp.StatusCode, b)
			} else {
				text = err.Error()
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// A sandboxed MCP server under sandbox.egress reaches, through the proxy,
// what its own rules (sandbox.egress.tools.<server name>) allow, while
// bash, under the global rules, is refused the same host; a direct GET
// from the server finds no route.
func TestEgressSandboxedMCPServer(t *testing.T) {
	t.Parallel()
	if os.Getenv(egressChildEnv) != "" {
		os.Exit(serveFetchMCP())
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "served to the fetcher") }))
	defer web.Close()
	port := web.Listener.Addr().(*net.TCPAddr).Port
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	testutil.ReachableBySandbox(t, self)
	readPaths, _ := json.Marshal([]string{filepath.Dir(self)})
	cfg := fmt.Sprintf(`{"skills": [], "mcpServers": {"fetcher": {"command": [%q, "-test.run=^TestEgressSandboxedMCPServer$"], "env": {%q: "1"},
		"sandbox": {"readPaths": %s}}},
		"sandbox": {"egress": {"allow": ["example.org"], "tools": {"fetcher": {"allow": ["127.0.0.1:%d"]}}}}}`,
		self, egressChildEnv, readPaths, port)
	dir := testutil.ReachableBySandbox(t, t.TempDir())
	s := serve(t, cfg, func(o *server.Options) { o.Workspace = filepath.Join(dir, "ws") })
	conn := s.dial(t)
	src, err := pb.NewSourceServiceClient(conn).ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range src.GetSandbox().GetLayers() {
		if (l.GetName() == "network-namespace" || l.GetName() == "pid-namespace" || l.GetName() == "user-namespace") && !l.GetActive() {
			t.Skipf("sandbox layer %s is missing here: no egress", l.GetName())
		}
	}
	for _, so := range src.GetSources() {
		if so.GetName() == "fetcher" && !strings.Contains(so.GetSandbox(), "egress proxy") {
			t.Fatalf("ListSources, fetcher: %v", so)
		}
	}
	reg := pb.NewRegistryServiceClient(conn)
	exec := func(name, args string) string {
		t.Helper()
		resp, err := reg.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult().GetOutput()
	}
	u := fmt.Sprintf("http://127.0.0.1:%d/", port)
	if out := exec("fetcher_fetch", fmt.Sprintf(`{"url": %q}`, u)); out != "200 served to the fetcher" {
		t.Fatalf("the server's own rules allow it: %s", out)
	}
	direct := func() string { return exec("fetcher_fetch", fmt.Sprintf(`{"url": %q, "direct": true}`, u)) }
	out := direct()
	if strings.Contains(out, "is down (restarting)") {
		// Seen once in a loaded CI run and never alone: the child died
		// during this call. What it said is in the logs; the claim under
		// test is about the network, so ask the restarted server again.
		t.Logf("the fetcher died during the direct GET (%s); its logs:\n%s", out, s.logs.String())
		for i := 0; i < 50 && strings.Contains(out, "is down"); i++ {
			time.Sleep(200 * time.Millisecond)
			out = direct()
		}
	}
	if !strings.Contains(out, "connection refused") && !strings.Contains(out, "unreachable") {
		t.Fatalf("a direct GET from the sandboxed server must find nothing: %s\nlogs:\n%s", out, s.logs.String())
	}
	if out := exec("bash", fmt.Sprintf(`{"command": "curl -sS --fail-with-body %s"}`, u)); !strings.Contains(out, "is refused: it is a loopback address") {
		t.Fatalf("bash, under the global rules: %s", out)
	}
}
