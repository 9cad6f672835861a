package grpcapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// front is the gRPC front-end alone over a real core, served on loopback:
// no pkg/server, no listeners of its own, no reload.
type front struct {
	core      *core.Core
	registry  pb.RegistryServiceClient
	sources   pb.SourceServiceClient
	sessions  pb.SessionServiceClient
	approvals pb.ApprovalServiceClient
	features  pb.FeatureServiceClient
}

// reportTool reports progress twice, then returns: the native tool every
// test core serves beside the config's.
func reportTool() tool.Tool {
	return tool.Must(tool.New("report", func(ctx context.Context, _ tool.Call) tool.Result {
		tool.Progress(ctx, 1, 2, "half way")
		tool.Log(ctx, "info", "report", "logged")
		return tool.Result{Output: "reported"}
	}, tool.WithInputSchema(json.RawMessage(`{"type":"object"}`))))
}

func startFront(t testing.TB, cfgJSON string) *front {
	t.Helper()
	return startFrontReloading(t, cfgJSON, "")
}

// startFrontReloading is startFront whose SourceService.Reload applies
// reloadJSON (config.Parse refusing it fails the reload, as a bad file does).
func startFrontReloading(t testing.TB, cfgJSON, reloadJSON string) *front {
	t.Helper()
	return startFrontWith(t, cfgJSON, reloadJSON, core.Options{})
}

// startFrontWith is startFrontReloading over a core with these options
// (its logger and the report tool added), e.g. OnStep or more native tools.
func startFrontWith(t testing.TB, cfgJSON, reloadJSON string, opts core.Options) *front {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(cfgJSON), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	opts.Logger = log
	opts.Native = append([]tool.Tool{reportTool()}, opts.Native...)
	c, err := core.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	shutdown := make(chan struct{})
	reload := func(context.Context) (core.Report, error) {
		next, err := config.Parse([]byte(reloadJSON), "", dir)
		if err != nil {
			return core.Report{}, err
		}
		return c.Apply(next)
	}
	api := grpcapi.New(c, grpcapi.Options{Logger: log, Shutdown: shutdown, Reload: reload})
	gs := grpc.NewServer(api.ServerOptions()...)
	api.Register(gs)
	t.Cleanup(func() { // after the server stopped
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	conn := testutil.ServeGRPC(t, gs)
	t.Cleanup(func() { close(shutdown) }) // before the server stops: its streams end
	return &front{core: c, registry: pb.NewRegistryServiceClient(conn), sources: pb.NewSourceServiceClient(conn), sessions: pb.NewSessionServiceClient(conn),
		approvals: pb.NewApprovalServiceClient(conn), features: pb.NewFeatureServiceClient(conn)}
}

func bearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

func execute(t *testing.T, ctx context.Context, c pb.RegistryServiceClient, name, args string) *pb.ToolResult {
	t.Helper()
	resp, err := c.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatalf("Execute %s: %v", name, err)
	}
	return resp.GetResult()
}

// A tool failing in any way is a result with is_error and gRPC status OK;
// only a malformed request is a gRPC error.
func TestExecuteFailuresAreValues(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": false, "debug": true, "limits": {"tools": {"debug_sleep": {"timeout": 1}}}}`)
	for _, tc := range []struct {
		name, tool, args string
		outcome          pb.Outcome
		output           string
	}{
		{"ok", "debug_echo", `{"m":"hi"}`, pb.Outcome_OUTCOME_OK, `{"m":"hi"}`},
		{"tool error", "debug_fail", `{"message":"broke"}`, pb.Outcome_OUTCOME_TOOL_ERROR, "broke"},
		{"panic", "debug_panic", `{"message":"boom"}`, pb.Outcome_OUTCOME_PANIC, "boom"},
		{"invalid arguments", "debug_sleep", `{"ms":"long"}`, pb.Outcome_OUTCOME_INVALID_ARGUMENTS, "ms"},
		{"arguments not an object", "debug_echo", `[1]`, pb.Outcome_OUTCOME_INVALID_ARGUMENTS, ""},
		{"timeout", "debug_sleep", `{"ms":60000}`, pb.Outcome_OUTCOME_TIMEOUT, "limits.timeout"},
		{"unknown tool", "no_such_tool", `{}`, pb.Outcome_OUTCOME_UNKNOWN_TOOL, "no_such_tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := execute(t, t.Context(), f.registry, tc.tool, tc.args)
			if res.GetOutcome() != tc.outcome || res.GetIsError() != (tc.outcome != pb.Outcome_OUTCOME_OK) || !strings.Contains(res.GetOutput(), tc.output) {
				t.Errorf("result %v; want outcome %s with %q in the output", res, tc.outcome, tc.output)
			}
		})
	}
	if _, err := f.registry.Execute(t.Context(), &pb.ExecuteRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Execute without a name: %v, want INVALID_ARGUMENT", err)
	}
}

// The bearer-token check over the wire: no token and a wrong token are
// refused; a restricted token sees and runs only its tools, and a tool
// outside its allowlist answers exactly as a name the server never had, so
// a caller probing names learns nothing.
func TestAuthRefusalsAndAllowlists(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": false, "debug": true, "auth": {"tokens": [
		{"name": "echo-only", "token": "tok-echo-0123456789abcdef", "tools": ["debug_echo"]}]}}`)
	ctx := t.Context()
	if _, err := f.registry.ListTools(ctx, &pb.ListToolsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("ListTools without a token: %v, want UNAUTHENTICATED", err)
	}
	if _, err := f.registry.Execute(bearer(ctx, "tok-wrong-0123456789abcdef"), &pb.ExecuteRequest{Name: "debug_echo"}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("Execute with a wrong token: %v, want UNAUTHENTICATED", err)
	}
	ctx = bearer(ctx, "tok-echo-0123456789abcdef")
	list, err := f.registry.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetTools()) != 1 || list.GetTools()[0].GetName() != "debug_echo" {
		t.Errorf("a restricted token lists %v, want debug_echo alone", list.GetTools())
	}
	denied := execute(t, ctx, f.registry, "debug_fail", `{}`)
	missing := execute(t, ctx, f.registry, "debug_nope", `{}`)
	if denied.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL ||
		strings.ReplaceAll(denied.GetOutput(), "debug_fail", "X") != strings.ReplaceAll(missing.GetOutput(), "debug_nope", "X") {
		t.Errorf("a denied tool answers %v, a missing one %v: they must read the same", denied, missing)
	}
	_, errDenied := f.registry.GetTool(ctx, &pb.GetToolRequest{Name: "debug_fail"})
	_, errMissing := f.registry.GetTool(ctx, &pb.GetToolRequest{Name: "debug_nope"})
	if status.Code(errDenied) != status.Code(errMissing) || status.Code(errDenied) == codes.OK {
		t.Errorf("GetTool of a denied tool: %v; of a missing one: %v", errDenied, errMissing)
	}
	if res := execute(t, ctx, f.registry, "debug_echo", `{}`); res.GetIsError() {
		t.Errorf("the allowed tool failed: %v", res)
	}
}

// ExecuteStream sends what the tool reports while it runs, then exactly one
// result, last.
func TestExecuteStreamEventsThenResult(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": false}`)
	st, err := f.registry.ExecuteStream(t.Context(), &pb.ExecuteRequest{Name: "report"})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.GetEvent().(type) {
		case *pb.ExecuteEvent_Progress:
			kinds = append(kinds, "progress:"+e.Progress.GetMessage())
		case *pb.ExecuteEvent_Log:
			kinds = append(kinds, "log:"+e.Log.GetData().GetStringValue())
		case *pb.ExecuteEvent_Result:
			kinds = append(kinds, "result:"+e.Result.GetOutput())
		}
	}
	if got, want := strings.Join(kinds, " "), "progress:half way log:logged result:reported"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

// ListTools pages in byte order of the names and the pages cover the set.
func TestListToolsPages(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": false, "debug": true}`)
	var names []string
	tok := ""
	for pages := 0; ; pages++ {
		resp, err := f.registry.ListTools(t.Context(), &pb.ListToolsRequest{PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetTools()) > 2 {
			t.Fatalf("a page of %d tools, asked for 2", len(resp.GetTools()))
		}
		for _, tl := range resp.GetTools() {
			names = append(names, tl.GetName())
		}
		if tok = resp.GetNextPageToken(); tok == "" {
			break
		}
	}
	if got, want := strings.Join(names, " "), "debug_echo debug_fail debug_panic debug_sleep report"; got != want {
		t.Errorf("pages cover %q, want %q", got, want)
	}
	if _, err := f.registry.ListTools(t.Context(), &pb.ListToolsRequest{PageToken: "forged!"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a forged page token: %v, want INVALID_ARGUMENT", err)
	}
	exp, err := f.registry.ExportTools(t.Context(), &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_OPENAI, Names: []string{"debug_echo"}})
	if err != nil {
		t.Fatal(err)
	}
	var openai []struct {
		Type     string `json:"type"`
		Function struct{ Name string }
	}
	if err := json.Unmarshal([]byte(exp.GetJson()), &openai); err != nil || len(openai) != 1 || openai[0].Function.Name != "debug_echo" || openai[0].Type != "function" {
		t.Errorf("export %s (%v)", exp.GetJson(), err)
	}
}

// WatchTools starts with the full list and then tells what changed.
func TestWatchToolsFollowsTheRegistry(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": false}`)
	st, err := f.registry.WatchTools(t.Context(), &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if !first.GetSnapshot() || strings.Join(first.GetAdded(), " ") != "report" {
		t.Fatalf("first message %v, want a snapshot listing report", first)
	}
	extra := tool.Must(tool.New("extra", func(context.Context, tool.Call) tool.Result { return tool.Result{} }))
	if err := f.core.Registry().Replace(registry.LayerID{Kind: sources.KindNative, Name: "test"}, []tool.Tool{extra}); err != nil {
		t.Fatal(err)
	}
	next, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(next.GetAdded(), " ") != "extra" || next.GetRevision() <= first.GetRevision() {
		t.Errorf("after publishing extra: %v", next)
	}
}

// A session id that breaks the rule is refused before the call; with
// sessions.required a call without one is refused too. SessionService
// lists and deletes the caller's sessions.
func TestSessionsOverTheWire(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": true, "sessions": {"required": true}}`)
	ctx := t.Context()
	if _, err := f.registry.Execute(ctx, &pb.ExecuteRequest{Name: "report"}); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(status.Convert(err).Message(), grpcapi.SessionMetadata) {
		t.Errorf("a call without a session under sessions.required: %v", err)
	}
	bad := metadata.AppendToOutgoingContext(ctx, grpcapi.SessionMetadata, "../../etc")
	if _, err := f.registry.Execute(bad, &pb.ExecuteRequest{Name: "report"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a session id with a path in it: %v, want INVALID_ARGUMENT", err)
	}
	in := metadata.AppendToOutgoingContext(ctx, grpcapi.SessionMetadata, "proj-1")
	if res := execute(t, in, f.registry, "write", `{"path":"a.txt","content":"x"}`); res.GetIsError() {
		t.Fatalf("write in a session: %v", res)
	}
	list, err := f.sessions.ListSessions(ctx, &pb.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetSessions()) != 1 || list.GetSessions()[0].GetId() != "proj-1" || list.GetSessions()[0].GetBytes() == 0 {
		t.Errorf("sessions %v, want proj-1 holding a file", list.GetSessions())
	}
	if _, err := f.sessions.DeleteSession(ctx, &pb.DeleteSessionRequest{Id: "proj-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sessions.DeleteSession(ctx, &pb.DeleteSessionRequest{Id: "proj-1"}); status.Code(err) != codes.NotFound {
		t.Errorf("deleting it twice: %v, want NOT_FOUND", err)
	}
	if _, err := f.sessions.DeleteSession(ctx, &pb.DeleteSessionRequest{Id: "a/b"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("deleting a malformed id: %v, want INVALID_ARGUMENT", err)
	}
}

// SourceService reports the sources in precedence order, the sandbox and
// the skill inventory; GetSkillsPrompt answers without a skill source.
func TestSourceInventory(t *testing.T) {
	t.Parallel()
	f := startFront(t, `{"builtins": false, "debug": true}`)
	resp, err := f.sources.ListSources(t.Context(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range resp.GetSources() {
		kinds = append(kinds, s.GetKind())
	}
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "debug ") || !strings.Contains(got, "native") {
		t.Errorf("source kinds %q: want debug first and native among them", got)
	}
	if resp.GetSandbox() == nil {
		t.Error("no sandbox status")
	}
	sk, err := f.sources.ListSkills(t.Context(), &pb.ListSkillsRequest{})
	if err != nil || len(sk.GetSkills()) != 0 {
		t.Errorf("skills %v, %v; want none", sk, err)
	}
	pr, err := f.registry.GetSkillsPrompt(t.Context(), &pb.GetSkillsPromptRequest{})
	if err != nil || pr.GetPrompt() != "No skills are currently available." {
		t.Errorf("skills prompt %q, %v", pr.GetPrompt(), err)
	}
}

// Reload applies the new config and reports what it removed; a config that
// does not parse is FAILED_PRECONDITION and the old one keeps serving.
func TestReload(t *testing.T) {
	t.Parallel()
	f := startFrontReloading(t, `{"builtins": false, "debug": true}`, `{"builtins": false, "debug": false}`)
	resp, err := f.sources.Reload(t.Context(), &pb.ReloadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetRevision() == 0 || strings.Join(resp.GetRemoved(), " ") != "debug/debug" {
		t.Errorf("reload %v: want the debug source removed", resp)
	}
	if res := execute(t, t.Context(), f.registry, "debug_echo", `{}`); res.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Errorf("debug_echo after debug was turned off: %v", res)
	}

	bad := startFrontReloading(t, `{"builtins": false, "debug": true}`, `{"debug": "yes"}`)
	if _, err := bad.sources.Reload(t.Context(), &pb.ReloadRequest{}); status.Code(err) != codes.FailedPrecondition ||
		!strings.Contains(err.Error(), "debug") {
		t.Errorf("a reload to a bad config: %v, want FAILED_PRECONDITION naming the key", err)
	}
	if res := execute(t, t.Context(), bad.registry, "debug_echo", `{}`); res.GetIsError() {
		t.Errorf("the old config stopped serving after a rejected reload: %v", res)
	}
}
