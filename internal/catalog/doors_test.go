package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// The tokens of the door tests: an agent, and an admin who approves.
const (
	agentToken = "catalog-agent-token"
	opsToken   = "catalog-ops-token-1"
)

// upstream is a real go-sdk MCP server over streamable HTTP on loopback
// whose tools change at run time: each change sends tools/list_changed.
type upstream struct {
	srv *mcp.Server
	url string
}

type weatherArgs struct {
	City  string `json:"city"`
	Units string `json:"units,omitempty"`
}

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{srv: mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)}
	u.setGet("Get the weather.")
	u.url = testutil.ServeMCP(t, u.srv)
	return u
}

// setGet (re)defines the tool "get": its answer shows the arguments it got.
func (u *upstream) setGet(desc string) {
	mcp.AddTool(u.srv, &mcp.Tool{Name: "get", Description: desc}, func(_ context.Context, _ *mcp.CallToolRequest, a weatherArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sunny in %s (%s)", a.City, a.Units)}}}, nil, nil
	})
}

func (u *upstream) addWave() {
	u.srv.AddTool(&mcp.Tool{Name: "wave", Description: "Wave.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "👋"}}}, nil
		})
}

// doors is one core behind every door: gRPC on loopback, /mcp listing
// every tool, and /mcp in discovery mode (search_tools, call_tool).
type doors struct {
	core      *core.Core
	reg       pb.RegistryServiceClient
	approvals pb.ApprovalServiceClient
	mcpURL    string
	searchURL string
	prom      *prometheus.Registry
	close     func()
}

func catalogConfig(t *testing.T, dir, upURL, extra string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`{"builtins": false, "skills": [], "sandbox": {"mode": "off"},
		"mcpServers": {"up": {"url": %q}},
		"auth": {"tokens": [{"name": "agent", "token": %q}, {"name": "ops", "token": %q, "admin": true}]}%s}`,
		upURL+"/mcp", agentToken, opsToken, extra)), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func startDoors(t *testing.T, cfg *config.Config) *doors {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	prom := prometheus.NewRegistry()
	var cl *cluster.Client
	if cfg.Cluster.Redis != nil {
		var err error
		if cl, err = cluster.New(*cfg.Cluster.Redis, cluster.Options{Logger: log, Metrics: prom}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := core.New(cfg, core.Options{Logger: log, Metrics: prom, Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	shutdown := make(chan struct{})
	api := grpcapi.New(c, grpcapi.Options{Logger: log, Shutdown: shutdown})
	gs := grpc.NewServer(api.ServerOptions()...)
	api.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	list := mcpgateway.New(c, mcpgateway.Options{Version: "test", Logger: log})
	search := mcpgateway.New(c, mcpgateway.Options{Version: "test", Logger: log, Discovery: mcpgateway.DiscoverySearch})
	hl, hs := httptest.NewServer(list), httptest.NewServer(search)
	var once sync.Once
	d := &doors{core: c, reg: pb.NewRegistryServiceClient(conn), approvals: pb.NewApprovalServiceClient(conn),
		mcpURL: hl.URL + mcpgateway.Path, searchURL: hs.URL + mcpgateway.Path, prom: prom}
	d.close = func() {
		once.Do(func() {
			hl.Close()
			hs.Close()
			list.Close()
			search.Close()
			conn.Close()
			close(shutdown)
			gs.Stop()
			if err := c.Close(context.Background()); err != nil {
				t.Error(err)
			}
			if cl != nil {
				cl.Close()
			}
		})
	}
	t.Cleanup(d.close)
	return d
}

func as(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

func (d *doors) names(t *testing.T) []string {
	t.Helper()
	resp, err := d.reg.ListTools(as(agentToken), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range resp.GetTools() {
		out = append(out, tl.GetName())
	}
	return out
}

// await polls ListTools until want(names) holds; the upstream's
// list_changed normally makes it so within milliseconds.
func (d *doors) await(t *testing.T, what string, want func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		names := d.names(t)
		if want(names) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: tools are %v", what, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func has(name string) func([]string) bool {
	return func(n []string) bool { return slices.Contains(n, name) }
}

func lacks(name string) func([]string) bool {
	return func(n []string) bool { return !slices.Contains(n, name) }
}

func (d *doors) exec(t *testing.T, name, args string) *pb.ToolResult {
	t.Helper()
	resp, err := d.reg.Execute(as(agentToken), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatalf("Execute %s: %v", name, err)
	}
	return resp.GetResult()
}

// pendingDefinitions are the held definitions ops sees, by tool.
func (d *doors) pendingDefinitions(t *testing.T) map[string]*pb.Approval {
	t.Helper()
	resp, err := d.approvals.ListApprovals(as(opsToken), &pb.ListApprovalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pb.Approval{}
	for _, a := range resp.GetApprovals() {
		if a.GetKind() == "definition" && a.GetStatus() == "pending" {
			out[a.GetTool()] = a
		}
	}
	return out
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpClient opens a go-sdk client on url at protocol version (the
// 2025-11-25 sessions, or the stateless 2026-07-28).
func mcpClient(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "catalog-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{agentToken}}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpText(r *mcp.CallToolResult) string {
	var b bytes.Buffer
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// asUnknown is what a door answered for name, with name replaced: a held
// tool must read exactly as a name no source ever offered.
func asUnknown(answer, name string) string { return strings.ReplaceAll(answer, name, "NAME") }
