package server_test

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

type logBuffer = testutil.Buffer

// served is a real server on loopback whose options the test chooses; the
// test dials it itself (TLS, tokens, window sizes...).
type served struct {
	srv     *server.Server
	cfgPath string
	logs    *logBuffer
}

// serve writes cfgJSON to a temp file and serves it with every log line, at
// debug level, captured in logs.
func serve(t *testing.T, cfgJSON string, mod func(*server.Options), native ...tool.Tool) *served {
	t.Helper()
	logs := &logBuffer{}
	srv, cfgPath, _ := launch(t, cfgJSON, func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		o.Native = native
		if mod != nil {
			mod(o)
		}
	})
	return &served{srv: srv, cfgPath: cfgPath, logs: logs}
}

// dial connects to the server (plaintext unless opts say otherwise) and
// closes the connection with the test.
func (s *served) dial(t *testing.T, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(s.srv.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func (s *served) rewrite(t *testing.T, cfgJSON string) {
	t.Helper()
	if err := os.WriteFile(s.cfgPath, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *served) scrape(t *testing.T) string {
	t.Helper()
	return (&fixture{srv: s.srv}).scrape(t)
}

func bearer(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

const (
	agentSecret = testutil.AgentSecret
	adminSecret = testutil.AdminSecret
	debugSecret = testutil.DebugSecret
	badSecret   = testutil.BadSecret
)

// authConfig: agent-a may use debug_echo and mine_*; ops is an admin; dbg
// may use source debug (testutil.AuthConfig).
const authConfig = testutil.AuthConfig

func authServer(t *testing.T) (*served, *grpc.ClientConn) {
	t.Helper()
	testutil.SetAuthEnv(t)
	s := serve(t, authConfig, nil, echoTool("mine_a"), echoTool("other"))
	return s, s.dial(t)
}

// names are the tools' names in their order (inproc.ToolNames).
var names = inproc.ToolNames

// TestHealthAndReflectionNeedNoToken: with auth on, the whole server's
// health and reflection services answer without a token (the auth
// matrix of the services themselves is internal/grpcapi's).
func TestHealthAndReflectionNeedNoToken(t *testing.T) {
	_, conn := authServer(t)
	if r, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without token: %v %v", r, err)
	}
	rc, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	if rr, err := rc.Recv(); err != nil || len(rr.GetListServicesResponse().GetService()) < 3 {
		t.Fatalf("reflection without token: %v %v", rr, err)
	}
	_ = rc.CloseSend()
}
