package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// fixture is a real server on loopback TCP plus a client connection.
type fixture struct {
	srv     *server.Server
	conn    *grpc.ClientConn
	reg     pb.RegistryServiceClient
	src     pb.SourceServiceClient
	cfgPath string
	stop    func()
}

// launch is the one way the tests run a server: cfgJSON written to a temp
// file, a real listener on 127.0.0.1:0 (metrics too), Serve in the
// background. mod adjusts the options (logger, native tools, MCP gateway).
// stop shuts it down and reports Serve's error; it runs at cleanup anyway.
func launch(t testing.TB, cfgJSON string, mod func(*server.Options)) (srv *server.Server, cfgPath string, stop func()) {
	t.Helper()
	// dir is private (0700, as under /root or in a mktemp -d): a root
	// server's commands, which act as an unprivileged uid, reach the
	// workspace and sessions beneath it through their view (sandbox).
	dir := t.TempDir()
	cfgPath = filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfgPath, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := server.Options{
		ConfigPath:    cfgPath,
		Listen:        "127.0.0.1:0",
		MetricsListen: "127.0.0.1:0",
		Workspace:     filepath.Join(dir, "ws"),
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mod != nil {
		mod(&opts)
	}
	srv, stop = servertest.Start(t, opts)
	return srv, cfgPath, stop
}

// start serves cfgJSON with the given native tools and dials it.
func start(t *testing.T, cfgJSON string, native ...tool.Tool) *fixture {
	t.Helper()
	srv, cfgPath, stopServer := launch(t, cfgJSON, func(o *server.Options) { o.Native = native })
	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: srv, conn: conn, reg: pb.NewRegistryServiceClient(conn), src: pb.NewSourceServiceClient(conn), cfgPath: cfgPath}
	f.stop = func() {
		conn.Close()
		stopServer()
	}
	t.Cleanup(f.stop)
	return f
}

func (f *fixture) exec(t *testing.T, name, argsJSON string) *pb.ToolResult {
	t.Helper()
	resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: argsJSON}})
	if err != nil {
		t.Fatalf("Execute(%s): gRPC error %v; tool failures must be results", name, err)
	}
	return resp.GetResult()
}

func (f *fixture) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + f.srv.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// collect reads an ExecuteStream to its end (inproc.Collect).
var collect = inproc.Collect

// waitInFlight waits until a call of source is running, as the server's own
// in-flight gauge reports it (testutil.WaitInFlight).
func waitInFlight(t *testing.T, f *fixture, source string) {
	t.Helper()
	testutil.WaitInFlight(t, func() string { return f.scrape(t) }, source)
}

// scrapeAs scrapes /metrics with the given Accept header and returns the
// Content-Type and the body.
func (f *fixture) scrapeAs(t *testing.T, accept string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+f.srv.MetricsAddr().String()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type"), string(b)
}

// metricLine and modernVersion are testutil's and mcpclient's, by the
// names the whole-server tests use.
var metricLine = testutil.MetricLine

const modernVersion = mcpclient.ModernVersion
