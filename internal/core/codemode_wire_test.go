package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// codeModeServer serves the code-mode tools with code mode on, a Cedar
// policy forbidding cm_secret, and an audit log.
func codeModeServer(t *testing.T, extra string) (*inproc.Rig, string) {
	t.Helper()
	dir := t.TempDir()
	pol := filepath.Join(dir, "tools.cedar")
	if err := os.WriteFile(pol, []byte(`permit(principal, action, resource);
@reason("the secret is off limits")
forbid(principal, action, resource == Tool::"cm_secret");
`), 0o600); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.log")
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [], "audit": {"path": %q}, "policy": {"files": [%q]},
		"codeMode": {"enabled": true, "timeoutMs": 3000%s}}`, auditPath, pol, extra)
	return inproc.Serve(t, cfg, inproc.CodeModeTools()...), auditPath
}

func runCodeWire(t *testing.T, f *inproc.Rig, code string) *pb.ToolResult {
	t.Helper()
	return f.Execute(t, context.Background(), "run_code", fmt.Sprintf(`{"code": %q}`, code))
}

func TestRunCodeChainsThreeTools(t *testing.T) {
	f, auditPath := codeModeServer(t, "")
	r := runCodeWire(t, f, `const s = tools.cm_add({a: 2, b: 3});
const u = tools.cm_upper({text: "sum is " + s.sum});
const n = tools.cm_len({text: u});
console.log("measured");
return n;`)
	if r.GetIsError() || r.GetOutput() != "measured\n{\"length\":8,\"text\":\"SUM IS 5\"}" {
		t.Fatalf("run_code: %v", r)
	}
	// Each inner call is an ordinary call: one audit line each, plus run_code's.
	var tools []string
	for _, l := range testutil.JSONLines(t, auditPath) {
		tools = append(tools, fmt.Sprint(l["tool"]))
	}
	if strings.Join(tools, ",") != "cm_add,cm_upper,cm_len,run_code" {
		t.Fatalf("audit lines for %v, want the three inner calls then run_code", tools)
	}
	t.Run("describe_tools spells out only the named tools", func(t *testing.T) {
		d := f.Execute(t, context.Background(), "describe_tools", `{"names": ["cm_upper", "nope"]}`)
		want := "/** Upper-case a text. */\ntools.cm_upper(args: { /** the text */ text: string; }): any\n\n// nope: no such tool"
		if d.GetIsError() || d.GetOutput() != want {
			t.Fatalf("describe_tools: %q", d.GetOutput())
		}
	})
	t.Run("listed like any tool", func(t *testing.T) {
		resp, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, tl := range resp.GetTools() {
			seen[tl.GetName()] = true
		}
		if !seen["run_code"] || !seen["describe_tools"] {
			t.Fatalf("ListTools lacks code mode's tools: %v", seen)
		}
	})
}

// A hostile script is stopped with a clear error, and the server goes on
// serving.
func TestRunCodeHostileScripts(t *testing.T) {
	f, _ := codeModeServer(t, `, "maxCalls": 100, "memoryMB": 512`)
	cases := []struct{ name, code, want string }{
		{"infinite loop", `for (;;) {}`, "time limit"},
		{"4 GiB allocation", `let s = "x"; for (let i = 0; i < 32; i++) s = s + s; return s.length`, "out of memory"},
		{"10,000 inner calls", `for (let i = 0; i < 10000; i++) { try { tools.cm_add({a: i, b: 1}) } catch (e) {} } return "escaped"`, "more than 100 tool calls"},
		{"huge output", `return "x".repeat(1 << 20)`, "output limit"},
		{"no require", `return require("fs")`, "require is not defined"},
		{"calling itself", `return tools.run_code({code: "return 1"})`, "a script cannot call run_code"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCodeWire(t, f, c.code)
			if !r.GetIsError() || !strings.Contains(r.GetOutput(), c.want) {
				t.Fatalf("got %v, want an is_error containing %q", r, c.want)
			}
			if ok := f.Execute(t, context.Background(), "cm_add", `{"a": 1, "b": 1}`); ok.GetIsError() || ok.GetOutput() != `{"sum":2}` {
				t.Fatalf("the server after %s: %v", c.name, ok)
			}
		})
	}
}

// Cedar policy applies to each inner call: the forbidden one throws in the
// script (catchable) with the policy's reason.
func TestRunCodeInnerCallsObeyPolicy(t *testing.T) {
	f, _ := codeModeServer(t, "")
	r := runCodeWire(t, f, `try { return tools.cm_secret({}) } catch (e) { return "refused: " + e.message }`)
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "refused: cm_secret:") || !strings.Contains(r.GetOutput(), "the secret is off limits") ||
		strings.Contains(r.GetOutput(), "the secret\"") {
		t.Fatalf("run_code: %v", r)
	}
	if d := f.Execute(t, context.Background(), "cm_secret", `{}`); !d.GetIsError() {
		t.Fatalf("a direct call to cm_secret: %v", d)
	}
}

// An inner call needing an approval suspends the script: run_code answers
// that call's PENDING; approved, run_code resumed with the answer re-runs
// the script, replaying the calls already made and passing the answer on.
func TestRunCodeApprovalSuspendsAndResumes(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "tools.cedar")
	if err := os.WriteFile(pol, []byte(`permit(principal, action, resource);
@approval("required")
permit(principal, action, resource == Tool::"cm_upper");
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var adds atomic.Int32
	counted := append(inproc.CodeModeTools()[1:], tool.Must(tool.Native("cm_add", func(_ context.Context, a map[string]any) (any, error) {
		adds.Add(1)
		x, _ := a["a"].(float64)
		y, _ := a["b"].(float64)
		return map[string]any{"sum": x + y}, nil
	})))
	s := inproc.Serve(t, fmt.Sprintf(`{"builtins": false, "skills": [], "codeMode": {"enabled": true},
		"auth": {"tokens": [{"name": "agent", "token": "cm-agent-4f1a"}, {"name": "reviewer", "token": "cm-reviewer-9b2c"}]},
		"policy": {"files": [%q], "approvers": ["reviewer"]}}`, pol), counted...)
	conn := s.Conn
	reg, apr := pb.NewRegistryServiceClient(conn), pb.NewApprovalServiceClient(conn)
	code := `const s = tools.cm_add({a: 2, b: 3}); const u = tools.cm_upper({text: "sum " + s.sum}); return tools.cm_len({text: u});`
	run := func(answer *pb.Answer, src string) *pb.ToolResult {
		resp, err := reg.Execute(inproc.Bearer("cm-agent-4f1a"), &pb.ExecuteRequest{Name: "run_code", Answer: answer,
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: fmt.Sprintf(`{"code": %q}`, src)}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	r := run(nil, code)
	if r.GetOutcome() != pb.Outcome_OUTCOME_PENDING || r.GetPending().GetKind() != "approval" || r.GetPending().GetData().AsMap()["tool"] != "cm_upper" {
		t.Fatalf("want cm_upper's pending approval, got %v", r)
	}
	id := r.GetPending().GetId()
	t.Run("another script cannot redeem it", func(t *testing.T) {
		if r := run(&pb.Answer{Id: id, Ok: true}, code+" // changed"); !r.GetIsError() || !strings.Contains(r.GetOutput(), "resumes no suspended run_code") {
			t.Fatalf("%v", r)
		}
	})
	// The refused attempt left the suspended run to its owner.
	if _, err := apr.Approve(inproc.Bearer("cm-reviewer-9b2c"), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	before := adds.Load()
	r = run(&pb.Answer{Id: id, Ok: true}, code)
	if r.GetIsError() || r.GetOutput() != `{"length":5,"text":"SUM 5"}` {
		t.Fatalf("resumed run_code: %v", r)
	}
	if adds.Load() != before {
		t.Fatalf("cm_add ran again on resume (%d → %d): its result should be replayed", before, adds.Load())
	}
	if r := run(&pb.Answer{Id: id, Ok: true}, code); !r.GetIsError() {
		t.Fatalf("the answer was used twice: %v", r)
	}
}
