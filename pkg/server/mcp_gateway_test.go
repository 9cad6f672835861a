package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// gw is a real server with the MCP gateway on, on loopback TCP.
type gw struct {
	srv     *server.Server
	cfgPath string
	url     string // http://127.0.0.1:PORT/mcp
	ws      string // the builtin tools' workspace
	grpc    pb.RegistryServiceClient
	stop    func()
}

// startGateway serves cfgJSON with the gateway on an ephemeral port.
func startGateway(t testing.TB, cfgJSON string, native ...tool.Tool) *gw {
	t.Helper()
	return startGatewayLogging(t, slog.New(slog.NewTextHandler(io.Discard, nil)), cfgJSON, native...)
}

func startGatewayLogging(t testing.TB, log *slog.Logger, cfgJSON string, native ...tool.Tool) *gw {
	t.Helper()
	srv, cfgPath, stopServer := launch(t, cfgJSON, func(o *server.Options) {
		o.MCPListen = "127.0.0.1:0"
		o.Logger = log
		o.Native = native
	})
	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{srv: srv, cfgPath: cfgPath, ws: filepath.Join(filepath.Dir(cfgPath), "ws"),
		url: "http://" + srv.MCPAddr().String() + server.MCPPath, grpc: pb.NewRegistryServiceClient(conn)}
	g.stop = func() {
		conn.Close()
		stopServer()
	}
	t.Cleanup(g.stop)
	return g
}

// connect opens a go-sdk client session at 2025-11-25 (token "" sends
// none) that fails at once on a refusal; opts may carry a list_changed
// handler. The session closes with the test.
func (g *gw) connect(t testing.TB, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	return mcpclient.Connect(t, g.url, mcpclient.Dial{Token: token, Client: opts})
}

func (g *gw) mustConnect(t testing.TB, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return mcpclient.MustConnect(t, g.url, mcpclient.Dial{Token: token, Client: opts})
}

func (g *gw) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + g.srv.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func bearerCtx(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

func TestMCPGatewayOffUnlessConfigured(t *testing.T) {
	t.Parallel()
	f := start(t, debugOnly)
	if f.srv.MCPAddr() != nil || f.srv.MCPHandler() != nil {
		t.Fatalf("gateway on without server.mcp.listen: %v", f.srv.MCPAddr())
	}
}

func TestMCPGatewayNonLoopbackNeedsAuthOrTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	if err := os.WriteFile(p, []byte(`{"builtins": false, "skills": [], "server": {"mcp": {"listen": "0.0.0.0:0"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := server.New(server.Options{ConfigPath: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var ce *server.ConfigError
	if !errors.As(err, &ce) || ce.Key != "server.mcp.listen" || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("non-loopback MCP listener without auth: %v, want a config error naming server.mcp.listen", err)
	}
}

func TestMCPGatewayShutdownLetsACallFinish(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	slow := tool.Must(tool.New("slow", func(ctx context.Context, _ tool.Call) tool.Result {
		close(entered)
		select {
		case <-release:
			return tool.Success("finished", nil)
		case <-ctx.Done():
			return tool.ContextResult(ctx, "slow")
		}
	}))
	g := startGateway(t, `{"builtins": false, "skills": []}`, slow)
	opts, changed := mcpclient.ListChanged()
	// The go-sdk client fails every pending call as soon as its event stream
	// breaks without a retry left, which can beat the call's own response
	// when shutdown closes the sessions; give it its default retries.
	cs, err := mcpclient.Connect(t, g.url, mcpclient.Dial{Client: opts, Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	// The client opens its event stream in the background; a list_changed
	// arriving proves it is up, so shutdown cannot race its opening (the
	// client would then give up on the whole session).
	if err := g.srv.Registry().Replace(registry.LayerID{Kind: sources.KindNative, Name: "x"}, []tool.Tool{echoTool("x")}); err != nil {
		t.Fatal(err)
	}
	mcpclient.Await(t, changed, "a layer replace")
	got := make(chan *mcp.CallToolResult, 1)
	var callErr error
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
		callErr = err
		got <- res
	}()
	<-entered
	stopped := make(chan struct{})
	go func() { g.stop(); close(stopped) }()
	// Shutdown waits for the call; release it once new requests are refused.
	for {
		resp, err := http.Post(g.url, "application/json", strings.NewReader(`{}`))
		if err != nil {
			break // listener closed
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	close(release)
	<-stopped
	res := <-got
	if res == nil || res.IsError || mcpclient.Text(t, res) != "finished" {
		t.Fatalf("in-flight call across shutdown: %+v, %v", res, callErr)
	}
}

// selfSigned issues a server certificate for 127.0.0.1 from a fresh CA;
// the pool trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	authority := testutil.NewCA(t, "gateway")
	certFile, keyFile, _ = authority.Issue(t, "gateway", x509.ExtKeyUsageServerAuth)
	return certFile, keyFile, authority.Pool
}

func TestMCPGatewayServesTLSWhenTheServerDoes(t *testing.T) {
	t.Parallel()
	cert, key, pool := selfSigned(t)
	g := startGateway(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [], "server": {"tls": {"cert": %q, "key": %q}}}`, cert, key))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer hc.CloseIdleConnections()
	url := "https://" + g.srv.MCPAddr().String() + server.MCPPath
	c := mcp.NewClient(&mcp.Implementation{Name: "tls", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("MCP over TLS: %v", err)
	}
	defer cs.Close()
	if res := mcpclient.Call(t, cs, "debug_echo", map[string]any{"message": "sealed"}); res.IsError || !strings.Contains(mcpclient.Text(t, res), "sealed") {
		t.Fatalf("call over TLS: %q", mcpclient.Text(t, res))
	}
	if _, err := g.connect(t, "", nil); err == nil {
		t.Fatal("plaintext HTTP reached a TLS gateway")
	}
}

// benchCall is debug_echo's arguments in both benchmarks.
const benchCall = `{"message":"hello"}`

// BenchmarkGatewayMCPCall is one tools/call of debug_echo through /mcp
// (go-sdk client, streamable HTTP over loopback TCP, one shared session).
// Compare with BenchmarkGatewayGRPCCall: same tool, same executor.
func BenchmarkGatewayMCPCall(b *testing.B) {
	g := startGateway(b, debugOnly)
	cs := g.mustConnect(b, "", nil)
	params := &mcp.CallToolParams{Name: "debug_echo", Arguments: json.RawMessage(benchCall)}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Fatalf("tools/call: %v %v", err, res)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkGatewayGRPCCall is one Execute of debug_echo over gRPC on the
// same server as BenchmarkGatewayMCPCall.
func BenchmarkGatewayGRPCCall(b *testing.B) {
	g := startGateway(b, debugOnly)
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: benchCall}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(p *testing.PB) {
		for p.Next() {
			resp, err := g.grpc.Execute(context.Background(), req)
			if err != nil || resp.GetResult().GetIsError() {
				b.Fatalf("Execute: %v %v", err, resp)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// Serve your registry to MCP clients: set server.mcp.listen (or
// Options.MCPListen) and point any MCP client at http://ADDR/mcp.
func Example_mcpGateway() {
	dir, err := os.MkdirTemp("", "toolnexus-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"builtins": false, "skills": [],
		"server": {"listen": "127.0.0.1:0", "metricsListen": "", "mcp": {"listen": "127.0.0.1:0"}}}`), 0o600); err != nil {
		panic(err)
	}
	greet := tool.Must(tool.Native("greet", func(_ context.Context, args map[string]any) (any, error) {
		return fmt.Sprintf("hello, %v", args["name"]), nil
	}, tool.WithDescription("Greet someone by name.")))

	srv, err := server.New(server.Options{ConfigPath: cfg, Native: []tool.Tool{greet},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { stop(); <-served }()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + srv.MCPAddr().String() + "/mcp"}, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()
	for t, err := range session.Tools(context.Background(), nil) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s (source %v)\n", t.Name, t.Description, t.Meta["toolnexus/source"])
	}
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "gopher"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.IsError, res.Meta["toolnexus/outcome"])
	// Output:
	// greet: Greet someone by name. (source custom)
	// hello, gopher false ok
}

// BenchmarkGatewayBareSDKCall is the baseline for BenchmarkGatewayMCPCall:
// the same client calling an echo tool on a bare go-sdk streamable-HTTP
// server, so the difference is what the gateway adds (auth check, executor,
// metrics, result conversion).
func BenchmarkGatewayBareSDKCall(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "debug_echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer ts.Close()
	defer ts.CloseClientConnections()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "debug_echo", Arguments: json.RawMessage(benchCall)}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				b.Fatalf("tools/call: %v %v", err, res)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// TestMainServesMCPWithTheFlag runs server.Main in a child process (this
// test binary again) with --mcp-listen, so the flag and its wiring are
// what is tested; SIGTERM then ends it with exit 0.
func TestMainServesMCPWithTheFlag(t *testing.T) {
	t.Parallel()
	if args := os.Getenv("TN_MCP_MAIN_ARGS"); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfgPath, []byte(debugOnly), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(env ...string) (*exec.Cmd, *bytes.Buffer, <-chan string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainServesMCPWithTheFlag$")
		cmd.Env = append(os.Environ(), env...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addr := make(chan string, 1)
		var all bytes.Buffer
		go func() {
			sc := bufio.NewScanner(stderr)
			found := false
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
				if i := strings.Index(sc.Text(), " mcp="); i >= 0 && !found {
					found = true
					addr <- strings.Fields(sc.Text()[i+5:])[0]
				}
			}
			close(addr)
		}()
		return cmd, &all, addr
	}

	cmd, _, addrc := start("TN_MCP_MAIN_ARGS=--config " + cfgPath + " --listen 127.0.0.1:0 --metrics-listen off --mcp-listen 127.0.0.1:0")
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(30 * time.Second): // a guard against a wedged child only
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the server did not log its MCP address")
	}
	if addr == "" || addr == "disabled" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("MCP address %q", addr)
	}
	g := &gw{url: "http://" + addr + server.MCPPath}
	cs := g.mustConnect(t, "", nil)
	if n := len(mcpclient.List(t, cs)); n != 4 {
		t.Errorf("the served binary lists %d tools over MCP, want the 4 debug tools", n)
	}
	cs.Close()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v, want 0", err)
	}

	// The environment variable does the same, and a non-loopback address
	// without auth is a config error (exit 2) naming the key.
	cmd, out, addrc := start("TN_MCP_MAIN_ARGS=--config "+cfgPath+" --listen 127.0.0.1:0 --metrics-listen off", "TOOLNEXUS_MCP_LISTEN=0.0.0.0:0")
	for range addrc {
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != server.ExitConfig || !strings.Contains(out.String(), "server.mcp.listen") {
		t.Fatalf("TOOLNEXUS_MCP_LISTEN=0.0.0.0:0 without auth: %v, stderr:\n%s", err, out.String())
	}
}
