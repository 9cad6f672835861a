package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// newCore starts a core from cfgJSON in a fresh directory; it closes with
// the test.
func newCore(t *testing.T, cfgJSON string, opts core.Options) *core.Core {
	t.Helper()
	cfg, err := config.Parse([]byte(cfgJSON), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := core.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func principal(t *testing.T, c *core.Core, token string) *auth.Principal {
	t.Helper()
	p, err := c.Authenticator().Check(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// count is a counter's value.
func count(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func call(name, args string) core.Call {
	return core.Call{Name: name, Arguments: json.RawMessage(args), Protocol: core.ProtocolGRPC}
}

// A tool outside the caller's allowlist is refused with exactly the answer
// for a name that does not exist (so probing names tells the caller
// nothing), while the metrics still count it as denied under its source.
func TestAllowlistDeniedReadsAsUnknown(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := newCore(t, `{"builtins": false, "debug": true, "auth": {"tokens": [
		{"name": "echo-only", "token": "tok-echo-0123456789abcdef", "tools": ["debug_echo"]},
		{"name": "by-source", "token": "tok-src-0123456789abcdef", "tools": ["source:debug"]}]}}`, core.Options{Metrics: reg})
	p := principal(t, c, "tok-echo-0123456789abcdef")
	ctx := t.Context()

	denied := call("debug_fail", `{}`)
	denied.Caller = p
	missing := call("debug_nope", `{}`)
	missing.Caller = p
	dr, dsrc := c.Execute(ctx, denied)
	mr, msrc := c.Execute(ctx, missing)
	if dr.Outcome != tool.OutcomeUnknownTool || dsrc != msrc ||
		strings.ReplaceAll(dr.Output, "debug_fail", "X") != strings.ReplaceAll(mr.Output, "debug_nope", "X") {
		t.Errorf("denied: %+v (%s); missing: %+v (%s): they must read the same", dr, dsrc, mr, msrc)
	}
	if n := count(t, c.Metrics().Calls.WithLabelValues("debug", "debug_fail", "denied", core.ProtocolGRPC)); n != 1 {
		t.Errorf("denied calls counted %v, want 1", n)
	}
	allowed := call("debug_echo", `{"a":1}`)
	allowed.Caller = p
	if r, src := c.Execute(ctx, allowed); r.IsError || src != "debug" || r.Output != `{"a":1}` {
		t.Errorf("allowed call: %+v from %s", r, src)
	}
	bySource := call("debug_fail", `{"message":"x"}`)
	bySource.Caller = principal(t, c, "tok-src-0123456789abcdef")
	if r, _ := c.Execute(ctx, bySource); r.Resolved() != tool.OutcomeToolError {
		t.Errorf("a source: pattern must allow the source's tools: %+v", r)
	}
	// No principal (auth off on the path that made the call): no allowlist.
	if r, _ := c.Execute(ctx, call("debug_fail", `{"message":"x"}`)); r.Resolved() != tool.OutcomeToolError {
		t.Errorf("a call without a principal: %+v", r)
	}
}

// The core's rules, one call each: the outcome and the source label.
func TestExecuteOutcomes(t *testing.T) {
	t.Parallel()
	c := newCore(t, `{"builtins": false, "debug": true, "limits": {"tools": {"debug_sleep": {"timeout": 1}}}}`, core.Options{})
	for _, tc := range []struct {
		name, tool, args string
		outcome          tool.Outcome
		source           string
	}{
		{"ok", "debug_echo", `{}`, tool.OutcomeOK, "debug"},
		{"empty arguments mean {}", "debug_echo", ``, tool.OutcomeOK, "debug"},
		{"tool error", "debug_fail", `{}`, tool.OutcomeToolError, "debug"},
		{"panic inside the tool", "debug_panic", `{"message":"boom"}`, tool.OutcomePanic, "debug"},
		{"schema refuses", "debug_sleep", `{"ms":-1}`, tool.OutcomeInvalidArguments, "debug"},
		{"not an object", "debug_echo", `"x"`, tool.OutcomeInvalidArguments, "debug"},
		{"timeout", "debug_sleep", `{"ms":60000}`, tool.OutcomeTimeout, "debug"},
		{"unknown", "nope", `{}`, tool.OutcomeUnknownTool, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, src := c.Execute(t.Context(), call(tc.tool, tc.args))
			if r.Resolved() != tc.outcome || src != tc.source || r.IsError != (tc.outcome != tool.OutcomeOK) {
				t.Errorf("%+v from %q; want %s from %q", r, src, tc.outcome, tc.source)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if r, _ := c.Execute(ctx, call("debug_sleep", `{"ms":60000}`)); r.Resolved() != tool.OutcomeCanceled {
		t.Errorf("a call whose caller has gone: %+v, want canceled", r)
	}
}

// A panic a front-end recovers is counted once, under the tool's source,
// and becomes the caller's result.
func TestRecoveredCountsThePanic(t *testing.T) {
	t.Parallel()
	c := newCore(t, `{"builtins": false, "debug": true}`, core.Options{})
	r := c.Recovered(t.Context(), "debug_echo", core.ProtocolMCP, errors.New("encoder broke"))
	if r.Outcome != tool.OutcomePanic || !r.IsError || !strings.Contains(r.Output, "encoder broke") {
		t.Errorf("result %+v", r)
	}
	if n := count(t, c.Metrics().Calls.WithLabelValues("debug", "debug_echo", "panic", core.ProtocolMCP)); n != 1 {
		t.Errorf("panics counted %v, want 1", n)
	}
}

// Sessions: a bad id and a missing one under sessions.required are refused
// as results; only a call that reaches its tool creates the session; the
// owner lists and deletes it; past sessions.max a new one is refused with
// the session_limit refusal.
func TestSessionRules(t *testing.T) {
	t.Parallel()
	c := newCore(t, `{"builtins": true, "sessions": {"required": true, "max": 1}}`, core.Options{})
	ctx := t.Context()
	if err := c.CheckSession(""); !errors.Is(err, core.ErrSessionRequired) {
		t.Errorf("CheckSession(\"\") = %v, want ErrSessionRequired", err)
	}
	if err := c.CheckSession("../x"); err == nil {
		t.Error("CheckSession accepted a path")
	}
	if r, _ := c.Execute(ctx, call("read", `{"path":"a"}`)); r.Outcome != tool.OutcomeInvalidArguments {
		t.Errorf("a call without a session under sessions.required: %+v", r)
	}
	bad := call("read", `{"path":"a"}`)
	bad.Session = "../../etc"
	if r, _ := c.Execute(ctx, bad); r.Outcome != tool.OutcomeInvalidArguments {
		t.Errorf("a session id with a path in it: %+v", r)
	}
	unknown := call("nope", `{}`)
	unknown.Session = "ghost"
	c.Execute(ctx, unknown)
	if s := c.Sessions("", true); len(s) != 0 {
		t.Errorf("a call to an unknown tool created sessions %v", s)
	}
	w := call("write", `{"path":"a.txt","content":"hello"}`)
	w.Session = "proj-1"
	if r, _ := c.Execute(ctx, w); r.IsError {
		t.Fatalf("write in a session: %+v", r)
	}
	s := c.Sessions("", false)
	if len(s) != 1 || s[0].ID != "proj-1" || s[0].Bytes == 0 {
		t.Errorf("sessions %+v, want proj-1 holding a file", s)
	}
	other := call("read", `{"path":"a.txt"}`)
	other.Session = "proj-2"
	r, _ := c.Execute(ctx, other)
	if r.Outcome != tool.OutcomeDenied || r.Refusal != tool.RefusalSessionLimit {
		t.Errorf("a second session past sessions.max: %+v", r)
	}
	if err := c.DeleteSession("", "proj-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSession("", "proj-1"); !errors.Is(err, core.ErrSessionNotFound) {
		t.Errorf("deleting twice: %v, want ErrSessionNotFound", err)
	}
}

// Sessions are the principal's: one token cannot see or delete another's.
func TestSessionsBelongToTheirPrincipal(t *testing.T) {
	t.Parallel()
	c := newCore(t, `{"builtins": true, "auth": {"tokens": [
		{"name": "alice", "token": "tok-alice-0123456789abcdef"},
		{"name": "bob", "token": "tok-bob-0123456789abcdefgh"}]}}`, core.Options{})
	w := call("write", `{"path":"secret.txt","content":"alice's"}`)
	w.Session, w.Caller = "shared-name", principal(t, c, "tok-alice-0123456789abcdef")
	if r, _ := c.Execute(t.Context(), w); r.IsError {
		t.Fatal(r.Output)
	}
	rd := call("read", `{"path":"secret.txt"}`)
	rd.Session, rd.Caller = "shared-name", principal(t, c, "tok-bob-0123456789abcdefgh")
	if r, _ := c.Execute(t.Context(), rd); !r.IsError || strings.Contains(r.Output, "alice's") {
		t.Errorf("bob read alice's session file through the same id: %+v", r)
	}
	if s := c.Sessions("bob", false); len(s) != 1 || s[0].Principal != "bob" {
		t.Errorf("bob sees %+v", s)
	}
	if err := c.DeleteSession("bob", "nothing-here"); !errors.Is(err, core.ErrSessionNotFound) {
		t.Errorf("bob deleting a session he does not have: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the audit writer and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With the audit log on, every call writes one line saying who ran what
// and how it ended; the arguments themselves stay out unless asked for.
func TestAuditLine(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	c := newCore(t, `{"builtins": false, "debug": true, "audit": {},
		"auth": {"tokens": [{"name": "agent", "token": "tok-agent-0123456789abcdef"}]}}`, core.Options{AuditStderr: &out})
	cl := call("debug_fail", `{"message":"sk-secret-value"}`)
	cl.Caller, cl.CallID = principal(t, c, "tok-agent-0123456789abcdef"), "call-7"
	c.Execute(t.Context(), cl)
	if err := c.Close(context.Background()); err != nil { // flushes the log
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &line); err != nil {
		t.Fatalf("audit output %q: %v", out.String(), err)
	}
	for k, want := range map[string]any{"event": "execute", "method": "Execute", "protocol": "grpc", "principal": "agent",
		"tool": "debug_fail", "source": "debug", "call_id": "call-7", "outcome": "tool_error", "is_error": true} {
		if line[k] != want {
			t.Errorf("audit %s = %v, want %v (line %v)", k, line[k], want, line)
		}
	}
	if strings.Contains(out.String(), "sk-secret-value") {
		t.Error("the arguments reached the audit log without audit.arguments")
	}
}

// With tracing on, each call is one execute_tool span named after its tool,
// with the GenAI attributes, an error status on failure; a name no tool has
// does not mint a span name.
func TestExecuteSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := newCore(t, `{"builtins": false, "debug": true}`, core.Options{Tracing: tp})
	ok := call("debug_echo", `{}`)
	ok.CallID = "c1"
	c.Execute(t.Context(), ok)
	c.Execute(t.Context(), call("debug_fail", `{}`))
	c.Execute(t.Context(), call("junk-name-123", `{}`))
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
		m := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			m[kv.Key] = kv.Value.String()
		}
		return m
	}
	if s := spans[0]; s.Name() != core.SpanName("debug_echo") || s.Status().Code == codes.Error ||
		attrs(s)[core.AttrToolName] != "debug_echo" || attrs(s)[core.AttrCallID] != "c1" || attrs(s)[core.AttrOutcome] != "ok" {
		t.Errorf("ok span %s %v %v", s.Name(), s.Status(), attrs(s))
	}
	if s := spans[1]; s.Status().Code != codes.Error || attrs(s)[core.AttrOutcome] != "tool_error" {
		t.Errorf("failed span %s %v %v", s.Name(), s.Status(), attrs(s))
	}
	if s := spans[2]; s.Name() != "execute_tool" || attrs(s)[core.AttrOutcome] != "unknown_tool" {
		t.Errorf("unknown-name span %s %v", s.Name(), attrs(s))
	}
}

// Apply swaps limits and sources and reports what changed; a reload that
// changes what only a restart can change is refused and the old config
// keeps serving.
func TestApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	parse := func(s string) *config.Config {
		cfg, err := config.Parse([]byte(s), "", dir)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	c, err := core.New(parse(`{"builtins": false, "debug": true}`), core.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	rep, err := c.Apply(parse(`{"builtins": false, "debug": true, "limits": {"tools": {"debug_sleep": {"timeout": 1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Started)+len(rep.Removed) != 0 {
		t.Errorf("a limits-only reload rebuilt sources: %+v", rep)
	}
	if r, _ := c.Execute(t.Context(), call("debug_sleep", `{"ms":60000}`)); r.Outcome != tool.OutcomeTimeout {
		t.Errorf("the new limit does not apply: %+v", r)
	}
	_, err = c.Apply(parse(`{"builtins": false, "debug": true, "sandbox": {"mode": "off"}}`))
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "sandbox.mode" {
		t.Errorf("changing sandbox.mode on reload: %v, want a config error naming sandbox.mode", err)
	}
	if r, _ := c.Execute(t.Context(), call("debug_echo", `{}`)); r.IsError {
		t.Errorf("the old config stopped serving: %+v", r)
	}
}

// The skills catalog follows the caller's allowlist: a caller that may not
// run the skill tool is told there are no skills.
func TestSkillsPromptFollowsTheAllowlist(t *testing.T) {
	t.Parallel()
	c := newCore(t, `{"builtins": false, "debug": true, "auth": {"tokens": [
		{"name": "no-skills", "token": "tok-noskill-0123456789abcdef", "tools": ["debug_*"]}]}}`, core.Options{})
	const none = "No skills are currently available."
	if got := c.SkillsPromptFor(core.View{}); got != none {
		t.Errorf("without a skill source: %q", got)
	}
	view, _ := c.View(principal(t, c, "tok-noskill-0123456789abcdef"), core.ProtocolGRPC, "")
	if got := c.SkillsPromptFor(view); got != none {
		t.Errorf("a caller without the skill tool: %q", got)
	}
}
