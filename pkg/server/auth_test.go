package server_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/sources"
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

// rpcs calls every RPC of the services once (DeleteSession has its own
// matrix in sessions_test.go); WatchTools counts as
// answered when its first message arrives.
var rpcs = []struct {
	name string
	call func(ctx context.Context, c *grpc.ClientConn) error
}{
	{"ListTools", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewRegistryServiceClient(c).ListTools(ctx, &pb.ListToolsRequest{})
		return err
	}},
	{"GetTool", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewRegistryServiceClient(c).GetTool(ctx, &pb.GetToolRequest{Name: "debug_echo"})
		return err
	}},
	{"SearchTools", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewRegistryServiceClient(c).SearchTools(ctx, &pb.SearchToolsRequest{Query: "echo"})
		return err
	}},
	{"Execute", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewRegistryServiceClient(c).Execute(ctx, &pb.ExecuteRequest{Name: "debug_echo"})
		return err
	}},
	{"ExecuteStream", func(ctx context.Context, c *grpc.ClientConn) error {
		stream, err := pb.NewRegistryServiceClient(c).ExecuteStream(ctx, &pb.ExecuteRequest{Name: "debug_echo"})
		if err != nil {
			return err
		}
		for {
			if _, err := stream.Recv(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}},
	{"WatchTools", func(ctx context.Context, c *grpc.ClientConn) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := pb.NewRegistryServiceClient(c).WatchTools(ctx, &pb.WatchToolsRequest{})
		if err != nil {
			return err
		}
		_, err = stream.Recv()
		return err
	}},
	{"ExportTools", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewRegistryServiceClient(c).ExportTools(ctx, &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_OPENAI})
		return err
	}},
	{"GetSkillsPrompt", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewRegistryServiceClient(c).GetSkillsPrompt(ctx, &pb.GetSkillsPromptRequest{})
		return err
	}},
	{"ListSources", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewSourceServiceClient(c).ListSources(ctx, &pb.ListSourcesRequest{})
		return err
	}},
	{"ListSkills", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewSourceServiceClient(c).ListSkills(ctx, &pb.ListSkillsRequest{})
		return err
	}},
	{"ListSessions", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewSessionServiceClient(c).ListSessions(ctx, &pb.ListSessionsRequest{})
		return err
	}},
	{"Reload", func(ctx context.Context, c *grpc.ClientConn) error {
		_, err := pb.NewSourceServiceClient(c).Reload(ctx, &pb.ReloadRequest{})
		return err
	}},
}

const (
	agentSecret = "agent-secret-4f9a1c7e"
	adminSecret = "admin-secret-b27d90aa"
	debugSecret = "debugonly-secret-77e1"
	badSecret   = "not-a-configured-token"
)

// authConfig: agent-a may use debug_echo and mine_*; ops is an admin with
// every tool; dbg may use the tools of source "debug".
const authConfig = `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
	{"name": "agent-a", "token": "${TN_AGENT}", "tools": ["debug_echo", "mine_*"]},
	{"name": "ops", "token": "${TN_ADMIN}", "admin": true},
	{"name": "dbg", "token": "${TN_DEBUG}", "tools": ["source:debug"]}]}}`

func authServer(t *testing.T) (*served, *grpc.ClientConn) {
	t.Helper()
	t.Setenv("TN_AGENT", agentSecret)
	t.Setenv("TN_ADMIN", adminSecret)
	t.Setenv("TN_DEBUG", debugSecret)
	s := serve(t, authConfig, nil, echoTool("mine_a"), echoTool("other"))
	return s, s.dial(t)
}

func TestAuthMatrixForEveryRPC(t *testing.T) {
	s, conn := authServer(t)
	cases := []struct {
		who  string
		ctx  context.Context
		want func(rpc string) codes.Code
	}{
		{"no token", context.Background(), func(string) codes.Code { return codes.Unauthenticated }},
		{"bad token", bearer(badSecret), func(string) codes.Code { return codes.Unauthenticated }},
		{"not bearer", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+agentSecret), func(string) codes.Code { return codes.Unauthenticated }},
		{"agent token", bearer(agentSecret), func(rpc string) codes.Code {
			if rpc == "Reload" || rpc == "ListSources" || rpc == "ListSkills" {
				return codes.PermissionDenied // SourceService is for operators
			}
			return codes.OK
		}},
		{"admin token", bearer(adminSecret), func(string) codes.Code { return codes.OK }},
	}
	for _, c := range cases {
		for _, r := range rpcs {
			err := r.call(c.ctx, conn)
			if got, want := status.Code(err), c.want(r.name); got != want {
				t.Errorf("%s, %s: %v; want %v", c.who, r.name, err, want)
			}
		}
	}
	// The refusal says how to fix it, without echoing anything secret.
	err := rpcs[0].call(context.Background(), conn)
	if !strings.Contains(status.Convert(err).Message(), "authorization: Bearer <token>") {
		t.Errorf("missing token message: %v", err)
	}
	err = rpcs[len(rpcs)-1].call(bearer(agentSecret), conn)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, `"agent-a"`) || !strings.Contains(msg, `"admin": true`) {
		t.Errorf("reload refusal: %v", err)
	}

	// Health and reflection need no token.
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

	// No secret, not even the rejected one, reaches the metrics or the logs.
	body, logs := s.scrape(t), s.logs.String()
	if !strings.Contains(logs, "Unauthenticated") || !strings.Contains(logs, "PermissionDenied") {
		t.Fatalf("the refused calls were not logged:\n%s", logs)
	}
	for _, secret := range []string{agentSecret, adminSecret, debugSecret, badSecret} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics contains the token %q", secret)
		}
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain the token %q", secret)
		}
	}
}

func names(tools []*pb.Tool) string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = tl.GetName()
	}
	return strings.Join(out, ",")
}

func TestAllowlistShowsExactlyWhatExecutePermits(t *testing.T) {
	s, conn := authServer(t)
	reg := pb.NewRegistryServiceClient(conn)
	ctx := bearer(agentSecret)

	list, err := reg.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil || names(list.GetTools()) != "debug_echo,mine_a" {
		t.Fatalf("ListTools as agent-a: %v %s", err, names(list.GetTools()))
	}
	if _, err := reg.GetTool(ctx, &pb.GetToolRequest{Name: "other"}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetTool outside the allowlist: %v, want NotFound", err)
	}
	if tl, err := reg.GetTool(ctx, &pb.GetToolRequest{Name: "mine_a"}); err != nil || tl.GetTool().GetName() != "mine_a" {
		t.Fatalf("GetTool mine_a: %v", err)
	}
	exp, err := reg.ExportTools(ctx, &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC})
	if err != nil || strings.Count(exp.GetJson(), `"name"`) != 2 || strings.Contains(exp.GetJson(), `"other"`) || strings.Contains(exp.GetJson(), "debug_sleep") {
		t.Fatalf("ExportTools as agent-a: %v %s", err, exp.GetJson())
	}
	denied, err := reg.Execute(ctx, &pb.ExecuteRequest{Name: "other", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
	if err != nil || !denied.GetResult().GetIsError() || denied.GetResult().GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL ||
		denied.GetResult().GetOutput() != `unknown tool: other` {
		t.Fatalf("Execute outside the allowlist: %v %v", err, denied.GetResult())
	}
	ok, err := reg.Execute(ctx, &pb.ExecuteRequest{Name: "mine_a", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"x":1}`}})
	if err != nil || ok.GetResult().GetIsError() {
		t.Fatalf("Execute inside the allowlist: %v %v", err, ok.GetResult())
	}
	// Every listed tool runs and every unlisted one is denied: the two views agree.
	full, err := reg.ListTools(bearer(adminSecret), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	visible := map[string]bool{}
	for _, tl := range list.GetTools() {
		visible[tl.GetName()] = true
	}
	for _, tl := range full.GetTools() {
		r, err := reg.Execute(ctx, &pb.ExecuteRequest{Name: tl.GetName(), Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"ms": 0}`}})
		if err != nil {
			t.Fatal(err)
		}
		if isDenied := r.GetResult().GetOutcome() == pb.Outcome_OUTCOME_UNKNOWN_TOOL; isDenied == visible[tl.GetName()] {
			t.Errorf("%s: listed=%v but denied=%v", tl.GetName(), visible[tl.GetName()], isDenied)
		}
	}

	// A "source:" pattern selects by source label.
	dbg, err := reg.ListTools(bearer(debugSecret), &pb.ListToolsRequest{})
	if err != nil || names(dbg.GetTools()) != "debug_echo,debug_fail,debug_panic,debug_sleep" {
		t.Fatalf("ListTools as dbg: %v %s", err, names(dbg.GetTools()))
	}

	// WatchTools: the snapshot and every change are filtered too; a change
	// the caller cannot see sends nothing.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := reg.WatchTools(wctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || !first.GetSnapshot() || names(first.GetTools()) != "debug_echo,mine_a" {
		t.Fatalf("watch snapshot: %v %s", err, names(first.GetTools()))
	}
	late := registry.LayerID{Kind: sources.KindNative, Name: "late"}
	if err := s.srv.Registry().Replace(late, []tool.Tool{echoTool("zzz_hidden")}); err != nil {
		t.Fatal(err)
	}
	if err := s.srv.Registry().Replace(late, []tool.Tool{echoTool("zzz_hidden"), echoTool("mine_b")}); err != nil {
		t.Fatal(err)
	}
	next, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if next.GetRevision() != first.GetRevision()+2 || strings.Join(next.GetAdded(), ",") != "mine_b" || names(next.GetTools()) != "debug_echo,mine_a,mine_b" {
		t.Fatalf("watch change: rev %d (first %d) added %v tools %s; want only the visible change",
			next.GetRevision(), first.GetRevision(), next.GetAdded(), names(next.GetTools()))
	}
}

func TestReloadSwapsTokens(t *testing.T) {
	s, conn := authServer(t)
	reg := pb.NewRegistryServiceClient(conn)
	t.Setenv("TN_NEW", "rotated-secret-0001")
	s.rewrite(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "ops", "token": "${TN_ADMIN}", "admin": true},
		{"name": "agent-b", "token": "${TN_NEW}", "tools": ["debug_*"]}]}}`)
	resp, err := pb.NewSourceServiceClient(conn).Reload(bearer(adminSecret), &pb.ReloadRequest{})
	if err != nil {
		t.Fatalf("Reload as admin: %v", err)
	}
	if len(resp.GetRebuilt()) != 0 || len(resp.GetRemoved()) != 0 {
		t.Fatalf("an auth-only change rebuilt %v removed %v", resp.GetRebuilt(), resp.GetRemoved())
	}
	if _, err := reg.ListTools(bearer(agentSecret), &pb.ListToolsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("the removed token still works: %v", err)
	}
	list, err := reg.ListTools(bearer("rotated-secret-0001"), &pb.ListToolsRequest{})
	if err != nil || names(list.GetTools()) != "debug_echo,debug_fail,debug_panic,debug_sleep" {
		t.Fatalf("new token: %v %s", err, names(list.GetTools()))
	}
	// Turning auth off entirely is a reload too (the listener is loopback).
	s.rewrite(t, debugOnly)
	if _, err := pb.NewSourceServiceClient(conn).Reload(bearer(adminSecret), &pb.ReloadRequest{}); err != nil {
		t.Fatal(err)
	}
	list, err = reg.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatalf("after auth was removed: %v", err)
	}
	got := strings.Split(names(list.GetTools()), ",")
	if !sort.StringsAreSorted(got) || len(got) != 6 {
		t.Fatalf("tools without auth: %v", got)
	}
}

func TestExecuteStreamAllowlist(t *testing.T) {
	_, conn := authServer(t)
	reg := pb.NewRegistryServiceClient(conn)
	s, err := reg.ExecuteStream(bearer(agentSecret), &pb.ExecuteRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_, res := collect(t, s)
	if res.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL || res.GetOutput() != "unknown tool: other" {
		t.Fatalf("outside the allowlist: %v", res)
	}
	s, err = reg.ExecuteStream(bearer(agentSecret), &pb.ExecuteRequest{Name: "mine_a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, res := collect(t, s); res.GetIsError() {
		t.Fatalf("inside the allowlist: %v", res)
	}
}
