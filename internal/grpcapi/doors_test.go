package grpcapi_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// stepFront is a front whose core records every step each call enters.
func stepFront(t *testing.T, cfgJSON string, native ...tool.Tool) (*front, *testutil.StepLog) {
	t.Helper()
	steps := testutil.NewStepLog(core.StepObserve)
	f := startFrontWith(t, cfgJSON, "", core.Options{Native: native, OnStep: func(_ context.Context, step string, c core.Call) {
		steps.Hear(c.Name, step)
	}})
	return f, steps
}

// TestGRPCDoorsPassEveryStep: Execute and ExecuteStream each take a call
// through the core's whole list of steps, in its order — the list
// docs/pipeline.md shows (core.TestPipelineDocMatchesCode) — and a call to
// a tool the caller's view hides stops at the view.
func TestGRPCDoorsPassEveryStep(t *testing.T) {
	t.Parallel()
	f, steps := stepFront(t, `{"builtins": false, "debug": true, "server": {"mcp": {"views": {"echo": {"tools": ["debug_echo"]}}}}}`)
	ctx := t.Context()
	if r := execute(t, ctx, f.registry, "debug_echo", `{"m":1}`); r.GetIsError() {
		t.Fatalf("Execute: %v", r)
	}
	stream, err := f.registry.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	want := core.Steps()
	if got := steps.Calls("debug_echo"); len(got) != 2 || !slices.Equal(got[0], want) || !slices.Equal(got[1], want) {
		t.Fatalf("steps %v, want twice %v", got, want)
	}
	viewCtx := metadata.AppendToOutgoingContext(ctx, grpcapi.ViewMetadata, "echo")
	if r := execute(t, viewCtx, f.registry, "debug_fail", `{}`); r.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("a tool outside the view: %v", r)
	}
	if got := steps.Calls("debug_fail"); len(got) != 1 || !slices.Equal(got[0], []string{core.StepObserve, core.StepView}) {
		t.Fatalf("a hidden tool's call went through %v, want observe and view only", got)
	}
}

// TestGRPCViewBindsEveryDoor is the probing attack on a named view
// (gRPC metadata toolnexus-view): through the view, every gRPC door —
// ListTools, GetTool, SearchTools, ExportTools, WatchTools, Execute —
// shows debug_echo alone, and a tool outside it reads exactly as a name
// the server never had. server.mcp.tools is /mcp's and does not narrow
// gRPC; a view the server does not have is refused, naming those it has.
func TestGRPCViewBindsEveryDoor(t *testing.T) {
	t.Parallel()
	f, _ := stepFront(t, `{"builtins": false, "debug": true, "server": {"mcp": {"tools": ["debug_sleep"],
		"views": {"echo": {"tools": ["debug_echo"]}, "debug": {"tools": ["source:debug"]}}}}}`)
	ctx := metadata.AppendToOutgoingContext(t.Context(), grpcapi.ViewMetadata, "echo")
	names := func(tools []*pb.Tool) string {
		var out []string
		for _, tl := range tools {
			out = append(out, tl.GetName())
		}
		return strings.Join(out, ",")
	}
	list, err := f.registry.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil || names(list.GetTools()) != "debug_echo" {
		t.Fatalf("ListTools through the view: %v %v", names(list.GetTools()), err)
	}
	for _, name := range []string{"debug_fail", "no_such_tool"} {
		if _, err := f.registry.GetTool(ctx, &pb.GetToolRequest{Name: name}); status.Code(err) != codes.NotFound ||
			status.Convert(err).Message() != fmt.Sprintf("no tool named %q (ListTools shows the available names)", name) {
			t.Fatalf("GetTool %s: %v", name, err)
		}
	}
	found, err := f.registry.SearchTools(ctx, &pb.SearchToolsRequest{Query: "fail sleep echo"})
	if err != nil || len(found.GetTools()) != 1 || found.GetTools()[0].GetTool().GetName() != "debug_echo" {
		t.Fatalf("SearchTools through the view: %v %v", found, err)
	}
	exported, err := f.registry.ExportTools(ctx, &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_OPENAI})
	if err != nil || strings.Contains(exported.GetJson(), "debug_fail") || !strings.Contains(exported.GetJson(), "debug_echo") {
		t.Fatalf("ExportTools through the view: %v %v", exported, err)
	}
	watch, err := f.registry.WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := watch.Recv(); err != nil || strings.Join(first.GetAdded(), ",") != "debug_echo" {
		t.Fatalf("WatchTools through the view: %v %v", first, err)
	}
	hidden, missing := execute(t, ctx, f.registry, "debug_fail", `{}`), execute(t, ctx, f.registry, "no_such_tool", `{}`)
	if hidden.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL || strings.ReplaceAll(hidden.GetOutput(), "debug_fail", "X") != strings.ReplaceAll(missing.GetOutput(), "no_such_tool", "X") {
		t.Fatalf("Execute of a tool outside the view: %v; of no tool: %v", hidden, missing)
	}
	// Without the metadata, gRPC serves every tool: server.mcp.tools is /mcp's.
	if r := execute(t, t.Context(), f.registry, "debug_fail", `{"message":"x"}`); r.GetOutcome() != pb.Outcome_OUTCOME_TOOL_ERROR {
		t.Fatalf("without a view: %v", r)
	}
	bad := metadata.AppendToOutgoingContext(t.Context(), grpcapi.ViewMetadata, "nope")
	if _, err := f.registry.ListTools(bad, &pb.ListToolsRequest{}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "debug, echo") {
		t.Fatalf("ListTools with an unknown view: %v", err)
	}
	if _, err := f.registry.Execute(bad, &pb.ExecuteRequest{Name: "debug_echo"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Execute with an unknown view: %v", err)
	}
}

// TestRunCodeBehindApprovalOverUnaryExecute is issue 45's item 10: a
// policy puts run_code itself behind an approval. Over unary Execute the
// first call is PENDING; once the approver approves, the same call with
// the answer runs the script — once, its inner call included — and the
// approval cannot be claimed again.
func TestRunCodeBehindApprovalOverUnaryExecute(t *testing.T) {
	// Not parallel: run_code's interpreter is a child process the
	// parallel tests' sandboxed commands must not run beside (its parent
	// death signal follows the thread that started it).
	dir := t.TempDir()
	pol := filepath.Join(dir, "tools.cedar")
	if err := os.WriteFile(pol, []byte(`permit(principal, action, resource);
@approval("required")
permit(principal, action, resource == Tool::"run_code");
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	counter := tool.Must(tool.New("tick", func(context.Context, tool.Call) tool.Result {
		return tool.Success(fmt.Sprint(ran.Add(1)), nil)
	}))
	f, steps := stepFront(t, fmt.Sprintf(`{"builtins": false, "codeMode": {"enabled": true},
		"auth": {"tokens": [{"name": "agent", "token": "cm-agent-4f1a"}, {"name": "reviewer", "token": "cm-reviewer-9b2c"}]},
		"policy": {"files": [%q], "approvers": ["reviewer"]}}`, pol), counter)
	agent := bearer(t.Context(), "cm-agent-4f1a")
	req := func(answer *pb.Answer) *pb.ToolResult {
		resp, err := f.registry.Execute(agent, &pb.ExecuteRequest{Name: "run_code", Answer: answer,
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"code": "return 'ticked ' + tools.tick({})"}`}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	r := req(nil)
	if r.GetOutcome() != pb.Outcome_OUTCOME_PENDING || r.GetPending().GetKind() != core.PendingKindApproval || ran.Load() != 0 {
		t.Fatalf("first call: %v (ran %d)", r, ran.Load())
	}
	id := r.GetPending().GetId()
	if _, err := f.approvals.Approve(bearer(t.Context(), "cm-reviewer-9b2c"), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	if r := req(&pb.Answer{Id: id, Ok: true}); r.GetIsError() || r.GetOutput() != `"ticked 1"` || ran.Load() != 1 {
		t.Fatalf("approved call: %v (ran %d)", r, ran.Load())
	}
	if r := req(&pb.Answer{Id: id, Ok: true}); !r.GetIsError() || ran.Load() != 1 {
		t.Fatalf("the approval was claimed twice: %v (ran %d)", r, ran.Load())
	}
	// The inner call went through every step, as a direct call does.
	if got := steps.Calls("tick"); len(got) != 1 || !slices.Equal(got[0], core.Steps()) {
		t.Fatalf("the inner call's steps: %v", got)
	}
}
