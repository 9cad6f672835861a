package mcp_test

//lint:file-ignore SA1019 the test upstream asks for sampling (deprecated in 2026-07-28, still an input request servers may send) to show toolnexus passes it on.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// modernServer is a go-sdk server on 2026-07-28 (stateless handler) whose
// tools ask the new way: input_required, then the retry with answers.
// "confirm" asks one elicitation; "both" asks an elicitation and a
// sampling request in the same round; "roots" asks for the client's
// roots and answers with the first root's URI.
func modernServer(t testing.TB) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "modern", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string"}}, "required": []any{"reason"}}
	sdk.AddTool(s, &sdk.Tool{Name: "confirm"}, func(_ context.Context, req *sdk.CallToolRequest, args map[string]any) (*sdk.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["ok"].(*sdk.ElicitResult); ok && req.Params.RequestState == "st-"+jsonOf(args) {
			reason, _ := r.Content["reason"].(string)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.Action + ":" + reason}}}, nil, nil
		}
		return &sdk.CallToolResult{RequestState: "st-" + jsonOf(args), InputRequests: sdk.InputRequestMap{"ok": &sdk.ElicitParams{Message: "Proceed?", RequestedSchema: schema}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "both"}, func(_ context.Context, req *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
		e, eok := req.Params.InputResponses["a-elicit"].(*sdk.ElicitResult)
		m, mok := req.Params.InputResponses["b-sample"].(*sdk.CreateMessageWithToolsResult)
		if eok && mok {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: e.Action + "+" + m.Content[0].(*sdk.TextContent).Text}}}, nil, nil
		}
		return &sdk.CallToolResult{RequestState: "s", InputRequests: sdk.InputRequestMap{
			"a-elicit": &sdk.ElicitParams{Message: "Name?", RequestedSchema: schema},
			"b-sample": &sdk.CreateMessageParams{MaxTokens: 10, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hi"}}}},
		}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "roots"}, func(_ context.Context, req *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["where"].(*sdk.ListRootsResult); ok && len(r.Roots) > 0 {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.Roots[0].URI}}}, nil, nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"where": &sdk.ListRootsParams{}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestModernUpstreamSuspendsWithoutGoroutines: 200 calls to a 2026-07-28
// upstream suspend on its input_required; none holds a goroutine (the
// count after is the count before, give or take the HTTP client's idle
// connections), and each answer reaches the upstream's retry with its own
// requestState.
func TestModernUpstreamSuspendsWithoutGoroutines(t *testing.T) {
	const n = 200
	shared := suspend.NewMemory(nil, 0)
	store := pending.New(shared, pending.Limits{MaxPerPrincipal: 2 * n})
	reg, _ := startEnv(t, "up", remoteConfig(modernServer(t)), sources.Env{Pending: store})
	ctx := context.Background()
	owner := tool.Owner{Principal: "p"}
	warm := (testutil.Direct{Reg: reg}).Execute(ctx, "up_confirm", tool.Call{Arguments: json.RawMessage(`{"i":-1}`), Owner: owner})
	if warm.Pending == nil {
		t.Fatalf("want PENDING, got %+v", warm)
	}
	runtime.GC()
	g0 := runtime.NumGoroutine()
	ids := make([]string, n)
	for i := range n {
		r := (testutil.Direct{Reg: reg}).Execute(ctx, "up_confirm", tool.Call{Arguments: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`), Owner: owner})
		if r.Pending == nil || r.Pending.Kind != "elicitation" || r.Pending.Prompt != "Proceed?" {
			t.Fatalf("call %d: want PENDING elicitation, got %+v", i, r)
		}
		ids[i] = r.Pending.ID
	}
	// Goroutines that end on their own (a connection's reader winding down,
	// the HTTP server finishing a handler) may still be counted right after
	// the last call; wait for them, up to a bound, rather than count them
	// as held. Held ones never end: 200 of them would never fall under 4.
	extra := runtime.NumGoroutine() - g0
	for deadline := time.Now().Add(5 * time.Second); extra > 4 && time.Now().Before(deadline); extra = runtime.NumGoroutine() - g0 {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	if extra > 4 {
		t.Fatalf("%d suspended calls hold %d more goroutines; want none per call", n, extra)
	}
	for i, id := range ids {
		data := map[string]any{"reason": "r" + strconv.Itoa(i)}
		r := (testutil.Direct{Reg: reg}).Execute(ctx, "up_confirm", tool.Call{Arguments: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`), Owner: owner, Answer: &tool.Answer{ID: id, OK: true, Data: data}})
		if r.IsError || !strings.Contains(r.Output, "accept:r"+strconv.Itoa(i)) {
			t.Fatalf("answer %d: %+v", i, r)
		}
	}
	// The suspended calls were entries of the store and nothing else.
	if open, err := shared.List(ctx, suspend.Filter{Open: true}); err != nil || len(open) != 1 || store.Len() != 0 { // the warm-up call is still open
		t.Fatalf("open entries after answering: %d (%v), held by this process %d; want 1 and 0", len(open), err, store.Len())
	}
}

// TestModernUpstreamAnswers covers the answers' paths: a decline reaches
// the upstream as decline; an answer not matching requestedSchema is
// refused with the request left open; two input requests in one round
// are asked in turn (elicitation, then sampling) before the one retry;
// another principal cannot answer.
func TestModernUpstreamAnswers(t *testing.T) {
	reg, _ := startEnv(t, "up", remoteConfig(modernServer(t)), sources.Env{Pending: pending.NewLocal(pending.Limits{})})
	ctx := context.Background()
	exec := func(name, args string, owner string, a *tool.Answer) tool.Result {
		return (testutil.Direct{Reg: reg}).Execute(ctx, name, tool.Call{Arguments: json.RawMessage(args), Owner: tool.Owner{Principal: owner}, Answer: a})
	}
	t.Run("decline", func(t *testing.T) {
		p := exec("up_confirm", `{"d":1}`, "p", nil).Pending
		if p == nil {
			t.Fatal("no PENDING")
		}
		if r := exec("up_confirm", `{"d":1}`, "p", &tool.Answer{ID: p.ID}); r.IsError || r.Output != "decline:" {
			t.Fatalf("decline: %+v", r)
		}
	})
	t.Run("bad answer refused, then corrected", func(t *testing.T) {
		p := exec("up_confirm", `{"d":2}`, "p", nil).Pending
		r := exec("up_confirm", `{"d":2}`, "p", &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"other": 1}})
		if !r.IsError || !strings.Contains(r.Output, "requestedSchema") {
			t.Fatalf("want refusal naming requestedSchema, got %+v", r)
		}
		if r := exec("up_confirm", `{"d":2}`, "p", &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"reason": "x"}}); r.IsError || r.Output != "accept:x" {
			t.Fatalf("corrected: %+v", r)
		}
	})
	t.Run("another principal", func(t *testing.T) {
		p := exec("up_confirm", `{"d":3}`, "p", nil).Pending
		if r := exec("up_confirm", `{"d":3}`, "intruder", &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"reason": "x"}}); !r.IsError {
			t.Fatalf("another principal answered: %+v", r)
		}
	})
	t.Run("two requests in one round", func(t *testing.T) {
		p := exec("up_both", `{}`, "p", nil).Pending
		if p == nil || p.Kind != "elicitation" || p.Prompt != "Name?" || p.Key != "a-elicit" || p.Round == "" {
			t.Fatalf("first: %+v", p)
		}
		// The round's other request, shown with it by a door that
		// answers rounds whole, under the upstream's key and no id yet.
		if len(p.Also) != 1 || p.Also[0].Key != "b-sample" || p.Also[0].Kind != "sampling" || p.Also[0].ID != "" || p.Also[0].Round != p.Round {
			t.Fatalf("the rest of the round: %+v", p.Also)
		}
		r := exec("up_both", `{}`, "p", &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"reason": "y"}})
		if r.Pending == nil || r.Pending.Kind != "sampling" || r.Pending.Prompt != "Say hi" || r.Pending.Key != "b-sample" || r.Pending.Round != p.Round || len(r.Pending.Also) != 0 {
			t.Fatalf("second: %+v", r)
		}
		r = exec("up_both", `{}`, "p", &tool.Answer{ID: r.Pending.ID, OK: true, Data: "hi there"})
		if r.IsError || r.Output != "accept+hi there" {
			t.Fatalf("result: %+v", r)
		}
	})
}

// TestModernUpstreamAsksForRoots: an upstream's roots/list input request
// is a pending request of kind roots; the answer is relayed as the
// ListRootsResult it is, after its URIs are checked (file:// only); a
// declined roots request ends the call (a roots response has no declined
// form).
func TestModernUpstreamAsksForRoots(t *testing.T) {
	reg, _ := startEnv(t, "up", remoteConfig(modernServer(t)), sources.Env{Pending: pending.NewLocal(pending.Limits{})})
	exec := func(args string, a *tool.Answer) tool.Result {
		return (testutil.Direct{Reg: reg}).Execute(context.Background(), "up_roots", tool.Call{Arguments: json.RawMessage(args), Owner: tool.Owner{Principal: "p"}, Answer: a})
	}
	p := exec(`{"n":1}`, nil).Pending
	if p == nil || p.Kind != "roots" || p.Key != "where" {
		t.Fatalf("roots request: %+v", p)
	}
	if r := exec(`{"n":1}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"roots": []any{map[string]any{"uri": "https://evil.test/"}}}}); !r.IsError || !strings.Contains(r.Output, "file://") {
		t.Fatalf("a root that is not a file:// URI: %+v", r)
	}
	if r := exec(`{"n":1}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"roots": []any{map[string]any{"uri": "file:///work", "name": "w"}}}}); r.IsError || r.Output != "file:///work" {
		t.Fatalf("roots answered: %+v", r)
	}
	p = exec(`{"n":2}`, nil).Pending
	if r := exec(`{"n":2}`, &tool.Answer{ID: p.ID}); !r.IsError || !strings.Contains(r.Output, "declined the roots request") {
		t.Fatalf("declined: %+v", r)
	}
}

// BenchmarkPendingThousandModern is BenchmarkPendingThousand against a
// go-sdk upstream on 2026-07-28 (in process, stateless streamable HTTP)
// whose tool answers input_required: the suspended call is a pending
// entry and the upstream's requestState, nothing else. The heap counted
// includes the upstream's (it holds nothing between rounds).
//
//	go test -run '^$' -bench 'BenchmarkPendingThousandModern' -benchtime 1x ./pkg/sources/mcp/
func BenchmarkPendingThousandModern(b *testing.B) {
	const n = 1000
	store := pending.NewLocal(pending.Limits{MaxPerPrincipal: 2 * n})
	reg, _ := startEnv(b, "up", remoteConfig(modernServer(b)), sources.Env{Pending: store})
	measurePending(b, reg, "up_confirm", n)
}

// TestModernUpstreamResumesOnAnotherReplica: two replicas (each its own
// source and pending layer, forwarding to each other) share one store of
// suspended calls. A 2026-07-28 upstream's input_required, suspended on
// one, is answered on the other: that replica resumes it itself from the
// store (the upstream keeps no session between rounds), and it is answered
// once. It used to be forwarded to the first replica, whose answer was
// that the request "never existed" while it was open.
func TestModernUpstreamResumesOnAnotherReplica(t *testing.T) {
	url := modernServer(t)
	shared := suspend.NewMemory(nil, 0)
	hub := pending.NewHub()
	var regs []*registry.Registry
	for _, id := range []string{"a", "b"} {
		p := pending.New(shared, pending.Limits{})
		r := hub.Join(id)
		t.Cleanup(r.Close)
		if err := p.SetRemote(r); err != nil {
			t.Fatal(err)
		}
		reg, _ := startEnv(t, "up", remoteConfig(url), sources.Env{Pending: p})
		regs = append(regs, reg)
	}
	ctx := context.Background()
	exec := func(reg *registry.Registry, args, who string, a *tool.Answer) tool.Result {
		return (testutil.Direct{Reg: reg}).Execute(ctx, "up_confirm", tool.Call{Arguments: json.RawMessage(args), Owner: tool.Owner{Principal: who}, Answer: a})
	}
	p := exec(regs[0], `{"k":1,"j":2}`, "p", nil).Pending
	if p == nil {
		t.Fatal("no PENDING")
	}
	answer := &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"reason": "elsewhere"}}
	if r := exec(regs[1], `{"k":1,"j":2}`, "intruder", answer); !r.IsError || !strings.Contains(r.Output, pending.ErrUnknown.Error()) {
		t.Fatalf("another principal on the other replica: %+v", r)
	}
	// The same arguments in another key order are the same call.
	if r := exec(regs[1], `{"j":2,"k":1}`, "p", answer); r.IsError || r.Output != "accept:elsewhere" {
		t.Fatalf("answered on the other replica: %+v", r)
	}
	if r := exec(regs[0], `{"k":1,"j":2}`, "p", answer); !r.IsError || !strings.Contains(r.Output, "already answered") {
		t.Fatalf("answered twice: %+v", r)
	}
}
