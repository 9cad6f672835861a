// Package inproc runs a toolnexus core with both of its doors — gRPC
// (internal/grpcapi) and /mcp (internal/mcpgateway) — on real loopback TCP
// inside the test's own process. It is what a protocol test needs and no
// more: no pkg/server, no listeners of the server's own, no signals, TLS,
// replicas or child server processes. Tests that need those stay in
// pkg/server; every other test of a door runs here, next to the door's
// code.
//
// The rig is built the way pkg/server builds a server — the config read
// from a file (relative paths resolve against its directory), the
// workspace overridden to DIR/ws, the gateway's options taken from
// server.mcp — so a test moved from pkg/server keeps its meaning.
package inproc

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Options adjust a rig. The zero value serves the config as pkg/server
// would, with a logger that discards.
type Options struct {
	// Native are the embedding program's tools, served in layer "native".
	Native []tool.Tool
	// Logger receives the core's and the doors' logs (discarded when nil).
	Logger *slog.Logger
	// Core is the core's options; Logger, Metrics and Native are the
	// rig's.
	Core core.Options
	// Gateway adjusts /mcp's options after they were taken from the
	// config (server.mcp), as pkg/server takes them.
	Gateway func(*mcpgateway.Options)
	// NoGateway serves gRPC alone.
	NoGateway bool
}

// Rig is one core served by its doors until the test ends.
type Rig struct {
	Core      *core.Core
	Conn      *grpc.ClientConn
	Registry  pb.RegistryServiceClient
	Sources   pb.SourceServiceClient
	Sessions  pb.SessionServiceClient
	Approvals pb.ApprovalServiceClient
	// URL is the HTTP server's base (http://127.0.0.1:PORT); /mcp is at
	// MCPURL. Empty with NoGateway.
	URL, MCPURL string
	// Addr is the gRPC listener's address.
	Addr string
	// ConfigPath is the config file; Reload reads it anew. Its directory
	// holds the workspace (ws).
	ConfigPath string
	// Metrics holds every series the core and the gRPC door register.
	Metrics *prometheus.Registry
	// Gateway is the /mcp door (nil with NoGateway).
	Gateway *mcpgateway.Gateway

	log      *slog.Logger
	reloadMu sync.Mutex
	// closers stop what Start started, in reverse order, once.
	closers   []func() error
	closeOnce sync.Once
	closeErr  error
}

// Start writes cfgJSON to a private temporary directory, builds a core
// from it and serves it over gRPC and /mcp on 127.0.0.1:0. Everything it
// starts stops at the test's cleanup, the core's sources included.
func Start(t testing.TB, cfgJSON string, opts Options) *Rig {
	t.Helper()
	dir := t.TempDir()
	r := &Rig{ConfigPath: filepath.Join(dir, "toolnexus.json"), Metrics: prometheus.NewRegistry(), log: opts.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if err := os.WriteFile(r.ConfigPath, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := r.load()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	copts := opts.Core
	copts.Logger, copts.Metrics, copts.Native = r.log, r.Metrics, append(opts.Native, copts.Native...)
	if r.Core, err = core.New(cfg, copts); err != nil {
		t.Fatalf("core.New: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("closing the rig: %v", err)
		}
	})
	r.closers = append(r.closers, func() error { return r.Core.Close(context.Background()) })
	r.serveGRPC(t, cfg)
	if !opts.NoGateway {
		if err := r.serveMCP(t, cfg, opts.Gateway); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// load reads the config file as pkg/server does, the workspace overridden.
func (r *Rig) load() (*config.Config, error) {
	return config.LoadWith(r.ConfigPath, config.Overrides{Workspace: filepath.Join(filepath.Dir(r.ConfigPath), "ws")})
}

func (r *Rig) serveGRPC(t testing.TB, cfg *config.Config) {
	t.Helper()
	shutdown := make(chan struct{})
	api := grpcapi.New(r.Core, grpcapi.Options{Logger: r.log, Metrics: r.Metrics, Shutdown: shutdown, Reload: r.Reload})
	gs := grpc.NewServer(append(api.ServerOptions(), grpc.MaxRecvMsgSize(cfg.Limits.MaxRequestBytes))...)
	api.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	r.Addr = lis.Addr().String()
	if r.Conn, err = grpc.NewClient(r.Addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	r.closers = append(r.closers, func() error {
		r.Conn.Close()
		close(shutdown)
		gs.GracefulStop()
		return <-served
	})
	r.Registry, r.Sources = pb.NewRegistryServiceClient(r.Conn), pb.NewSourceServiceClient(r.Conn)
	r.Sessions, r.Approvals = pb.NewSessionServiceClient(r.Conn), pb.NewApprovalServiceClient(r.Conn)
}

// serveMCP serves the gateway as pkg/server's MCP listener does: /mcp,
// the named views beneath it and the protected-resource metadata.
func (r *Rig) serveMCP(t testing.TB, cfg *config.Config, adjust func(*mcpgateway.Options)) error {
	t.Helper()
	key, err := cfg.MCPStateKey()
	if err != nil {
		return err
	}
	gc := cfg.Server.MCP
	opts := mcpgateway.Options{Name: gc.Name, Version: gc.Version, Discovery: gc.Discovery, Pinned: gc.Pinned,
		MaxBodyBytes: int64(cfg.Limits.MaxRequestBytes), Logger: r.log, Stateless: cfg.Sessions.Shared, StateKey: key}
	if adjust != nil {
		adjust(&opts)
	}
	r.Gateway = mcpgateway.New(r.Core, opts)
	mux := http.NewServeMux()
	mux.Handle(mcpgateway.Path, r.Gateway)
	mux.Handle(mcpgateway.Path+"/", r.Gateway)
	mux.Handle(mcpgateway.ResourceMetadataPath, r.Gateway.ResourceMetadata())
	mux.Handle(mcpgateway.ResourceMetadataPath+mcpgateway.Path, r.Gateway.ResourceMetadata())
	hs := httptest.NewServer(mux)
	r.URL, r.MCPURL = hs.URL, hs.URL+mcpgateway.Path
	r.Gateway.SetBaseURL(hs.URL)
	r.closers = append(r.closers, func() error {
		hs.Close()
		r.Gateway.Close()
		return nil
	})
	return nil
}

// Close stops the doors, then the core and its sources: what the test's
// cleanup does, for a test that must see the rig stopped (its logs, say)
// before it ends. Later calls return the first's error.
func (r *Rig) Close() error {
	r.closeOnce.Do(func() {
		var errs []error
		for i := len(r.closers) - 1; i >= 0; i-- {
			errs = append(errs, r.closers[i]())
		}
		r.closeErr = errors.Join(errs...)
	})
	return r.closeErr
}

// Reload applies the config file anew, as SIGHUP and SourceService.Reload
// do: a config that does not load leaves the old one serving.
func (r *Rig) Reload(context.Context) (core.Report, error) {
	r.reloadMu.Lock()
	defer r.reloadMu.Unlock()
	cfg, err := r.load()
	if err != nil {
		r.Core.RejectApply()
		return core.Report{}, err
	}
	rep, err := r.Core.Apply(cfg)
	if err == nil && r.Gateway != nil {
		r.Gateway.Reconfigure()
	}
	return rep, err
}

// Rewrite replaces the config file with cfgJSON and reloads it.
func (r *Rig) Rewrite(t testing.TB, cfgJSON string) (core.Report, error) {
	t.Helper()
	r.WriteConfig(t, cfgJSON)
	return r.Reload(context.Background())
}

// WriteConfig replaces the config file with cfgJSON; the next reload
// (SourceService.Reload, or Reload) reads it.
func (r *Rig) WriteConfig(t testing.TB, cfgJSON string) {
	t.Helper()
	if err := os.WriteFile(r.ConfigPath, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Workspace is the builtins' workspace: DIR/ws.
func (r *Rig) Workspace() string { return filepath.Join(filepath.Dir(r.ConfigPath), "ws") }

// Scrape is the Prometheus text of every series the rig registered, as
// /metrics would serve it.
func (r *Rig) Scrape(t testing.TB) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(r.Metrics, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// Execute is one unary call with arguments as the model's JSON; a gRPC
// error fails the test, since a tool's failure must be a result.
func (r *Rig) Execute(t testing.TB, ctx context.Context, name, argsJSON string) *pb.ToolResult {
	t.Helper()
	resp, err := r.Registry.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: argsJSON}})
	if err != nil {
		t.Fatalf("Execute(%s): gRPC error %v; tool failures must be results", name, err)
	}
	return resp.GetResult()
}

// errNoGateway is what asking a gRPC-only rig for /mcp says.
var errNoGateway = errors.New("inproc: this rig serves no /mcp (Options.NoGateway)")

// Post sends one JSON-RPC body to /mcp with these headers (name, value
// pairs) and returns the response; the caller closes its body.
func (r *Rig) Post(ctx context.Context, body string, header ...string) (*http.Response, error) {
	if r.MCPURL == "" {
		return nil, errNoGateway
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.MCPURL, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return http.DefaultClient.Do(req)
}

// Connect opens a go-sdk client session on /mcp at 2025-11-25 (token ""
// sends none) that fails at once on a refusal; opts may carry a
// list_changed handler. The session closes with the test.
func (r *Rig) Connect(t testing.TB, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	return mcpclient.Connect(t, r.MCPURL, mcpclient.Dial{Token: token, Client: opts})
}

// MustConnect is Connect failing the test on an error.
func (r *Rig) MustConnect(t testing.TB, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return mcpclient.MustConnect(t, r.MCPURL, mcpclient.Dial{Token: token, Client: opts})
}

// Serve is Start with these native tools and nothing else to adjust.
func Serve(t testing.TB, cfgJSON string, native ...tool.Tool) *Rig {
	t.Helper()
	return Start(t, cfgJSON, Options{Native: native})
}

// Bearer is a context whose gRPC calls carry token as their bearer token.
func Bearer(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

// WaitInFlight waits until a gRPC call of source is running, as the
// core's own in-flight gauge reports it (testutil.WaitInFlight).
func (r *Rig) WaitInFlight(t testing.TB, source string) {
	t.Helper()
	testutil.WaitInFlight(t, func() string { return r.Scrape(t) }, source)
}
