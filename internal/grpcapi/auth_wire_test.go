package grpcapi_test

import (
	"context"
	"io"
	"sort"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

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

func TestAuthMatrixForEveryRPC(t *testing.T) {
	logBuf := &testutil.Buffer{}
	s := inproc.ServeAuth(t, logBuf)
	conn := s.Conn
	cases := []struct {
		who  string
		ctx  context.Context
		want func(rpc string) codes.Code
	}{
		{"no token", context.Background(), func(string) codes.Code { return codes.Unauthenticated }},
		{"bad token", inproc.Bearer(testutil.BadSecret), func(string) codes.Code { return codes.Unauthenticated }},
		{"not bearer", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+testutil.AgentSecret), func(string) codes.Code { return codes.Unauthenticated }},
		{"agent token", inproc.Bearer(testutil.AgentSecret), func(rpc string) codes.Code {
			if rpc == "Reload" || rpc == "ListSources" || rpc == "ListSkills" {
				return codes.PermissionDenied // SourceService is for operators
			}
			return codes.OK
		}},
		{"admin token", inproc.Bearer(testutil.AdminSecret), func(string) codes.Code { return codes.OK }},
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
	err = rpcs[len(rpcs)-1].call(inproc.Bearer(testutil.AgentSecret), conn)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, `"agent-a"`) || !strings.Contains(msg, `"admin": true`) {
		t.Errorf("reload refusal: %v", err)
	}

	// No secret, not even the rejected one, reaches the metrics or the logs.
	body, logs := s.Scrape(t), logBuf.String()
	if !strings.Contains(logs, "Unauthenticated") || !strings.Contains(logs, "PermissionDenied") {
		t.Fatalf("the refused calls were not logged:\n%s", logs)
	}
	for _, secret := range []string{testutil.AgentSecret, testutil.AdminSecret, testutil.DebugSecret, testutil.BadSecret} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics contains the token %q", secret)
		}
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain the token %q", secret)
		}
	}
}

func TestAllowlistShowsExactlyWhatExecutePermits(t *testing.T) {
	s := inproc.ServeAuth(t, nil)
	conn := s.Conn
	reg := pb.NewRegistryServiceClient(conn)
	ctx := inproc.Bearer(testutil.AgentSecret)

	list, err := reg.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil || inproc.ToolNames(list.GetTools()) != "debug_echo,mine_a" {
		t.Fatalf("ListTools as agent-a: %v %s", err, inproc.ToolNames(list.GetTools()))
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
	full, err := reg.ListTools(inproc.Bearer(testutil.AdminSecret), &pb.ListToolsRequest{})
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
	dbg, err := reg.ListTools(inproc.Bearer(testutil.DebugSecret), &pb.ListToolsRequest{})
	if err != nil || inproc.ToolNames(dbg.GetTools()) != "debug_echo,debug_fail,debug_panic,debug_sleep" {
		t.Fatalf("ListTools as dbg: %v %s", err, inproc.ToolNames(dbg.GetTools()))
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
	if err != nil || !first.GetSnapshot() || inproc.ToolNames(first.GetTools()) != "debug_echo,mine_a" {
		t.Fatalf("watch snapshot: %v %s", err, inproc.ToolNames(first.GetTools()))
	}
	late := registry.LayerID{Kind: sources.KindNative, Name: "late"}
	if err := s.Core.Registry().Replace(late, []tool.Tool{inproc.Echo("zzz_hidden")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Core.Registry().Replace(late, []tool.Tool{inproc.Echo("zzz_hidden"), inproc.Echo("mine_b")}); err != nil {
		t.Fatal(err)
	}
	next, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if next.GetRevision() != first.GetRevision()+2 || strings.Join(next.GetAdded(), ",") != "mine_b" || inproc.ToolNames(next.GetTools()) != "debug_echo,mine_a,mine_b" {
		t.Fatalf("watch change: rev %d (first %d) added %v tools %s; want only the visible change",
			next.GetRevision(), first.GetRevision(), next.GetAdded(), inproc.ToolNames(next.GetTools()))
	}
}

func TestReloadSwapsTokens(t *testing.T) {
	s := inproc.ServeAuth(t, nil)
	conn := s.Conn
	reg := pb.NewRegistryServiceClient(conn)
	t.Setenv("TN_NEW", "rotated-secret-0001")
	s.WriteConfig(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "ops", "token": "${TN_ADMIN}", "admin": true},
		{"name": "agent-b", "token": "${TN_NEW}", "tools": ["debug_*"]}]}}`)
	resp, err := pb.NewSourceServiceClient(conn).Reload(inproc.Bearer(testutil.AdminSecret), &pb.ReloadRequest{})
	if err != nil {
		t.Fatalf("Reload as admin: %v", err)
	}
	if len(resp.GetRebuilt()) != 0 || len(resp.GetRemoved()) != 0 {
		t.Fatalf("an auth-only change rebuilt %v removed %v", resp.GetRebuilt(), resp.GetRemoved())
	}
	if _, err := reg.ListTools(inproc.Bearer(testutil.AgentSecret), &pb.ListToolsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("the removed token still works: %v", err)
	}
	list, err := reg.ListTools(inproc.Bearer("rotated-secret-0001"), &pb.ListToolsRequest{})
	if err != nil || inproc.ToolNames(list.GetTools()) != "debug_echo,debug_fail,debug_panic,debug_sleep" {
		t.Fatalf("new token: %v %s", err, inproc.ToolNames(list.GetTools()))
	}
	// Turning auth off entirely is a reload too (the listener is loopback).
	s.WriteConfig(t, inproc.DebugOnly)
	if _, err := pb.NewSourceServiceClient(conn).Reload(inproc.Bearer(testutil.AdminSecret), &pb.ReloadRequest{}); err != nil {
		t.Fatal(err)
	}
	list, err = reg.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatalf("after auth was removed: %v", err)
	}
	got := strings.Split(inproc.ToolNames(list.GetTools()), ",")
	if !sort.StringsAreSorted(got) || len(got) != 6 {
		t.Fatalf("tools without auth: %v", got)
	}
}

func TestExecuteStreamAllowlist(t *testing.T) {
	conn := inproc.ServeAuth(t, nil).Conn
	reg := pb.NewRegistryServiceClient(conn)
	s, err := reg.ExecuteStream(inproc.Bearer(testutil.AgentSecret), &pb.ExecuteRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_, res := inproc.Collect(t, s)
	if res.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL || res.GetOutput() != "unknown tool: other" {
		t.Fatalf("outside the allowlist: %v", res)
	}
	s, err = reg.ExecuteStream(inproc.Bearer(testutil.AgentSecret), &pb.ExecuteRequest{Name: "mine_a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, res := inproc.Collect(t, s); res.GetIsError() {
		t.Fatalf("inside the allowlist: %v", res)
	}
}
