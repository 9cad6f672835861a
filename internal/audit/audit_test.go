package audit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

func tracedCtx() (context.Context, string, string) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(context.Background(), sc), tid.String(), sid.String()
}

func TestEveryFieldOfEveryEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l := audit.New(nil)
	if err := l.Configure(config.Audit{Enabled: true, Path: path}, path); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, tid, sid := tracedCtx()
	args := []byte(`{"command":"rm -rf /tmp/x"}`)
	l.Execute(ctx, audit.Call{Method: "Execute", Protocol: "grpc", Principal: "agent-a", Session: "s1", Tool: "bash",
		Source: "builtin", CallID: "c1", Outcome: "tool_error", IsError: true, Duration: 1500 * time.Microsecond, Arguments: args})
	l.Reload(ctx, audit.Reload{Principal: "ops", Trigger: "rpc", Revision: 7, Rebuilt: []string{"mcp/fs"}})
	l.Reload(context.Background(), audit.Reload{Trigger: "signal", Err: errors.New("config: limits.timeout: must be >= 0")})
	l.SessionDeleted(ctx, "agent-a", "s1", "request")

	got := testutil.JSONLines(t, path)
	if len(got) != 4 {
		t.Fatalf("%d lines, want 4", len(got))
	}
	sum := sha256.Sum256(args)
	want := []map[string]any{
		{"event": "execute", "method": "Execute", "protocol": "grpc", "principal": "agent-a", "session": "s1", "tool": "bash",
			"source": "builtin", "call_id": "c1", "outcome": "tool_error", "is_error": true, "duration_ms": 1.5,
			"argument_bytes": float64(len(args)), "argument_sha256": hex.EncodeToString(sum[:]), "trace_id": tid, "span_id": sid},
		{"event": "reload", "principal": "ops", "trigger": "rpc", "outcome": "ok", "revision": float64(7), "rebuilt": []any{"mcp/fs"}, "trace_id": tid},
		{"event": "reload", "principal": "", "trigger": "signal", "outcome": "error", "error": "config: limits.timeout: must be >= 0"},
		{"event": "session_delete", "principal": "agent-a", "session": "s1", "reason": "request", "trace_id": tid},
	}
	for i, w := range want {
		ts, _ := got[i]["time"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("line %d: time %q: %v", i, ts, err)
		}
		delete(got[i], "time")
		for k, v := range w {
			if gv, ok := got[i][k]; !ok || !equalJSON(gv, v) {
				t.Errorf("line %d: %s = %v, want %v", i, k, gv, v)
			}
		}
		for k := range got[i] {
			if _, ok := w[k]; !ok {
				t.Errorf("line %d: unexpected field %s = %v", i, k, got[i][k])
			}
		}
	}
	// Without audit.arguments the arguments are nowhere in the file.
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "rm -rf") {
		t.Error("the arguments were written without audit.arguments")
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestArgumentsOnlyWhenAsked(t *testing.T) {
	var buf testutil.Buffer
	l := audit.New(&buf)
	if err := l.Configure(config.Audit{Enabled: true, Arguments: true}, ""); err != nil {
		t.Fatal(err)
	}
	l.Execute(context.Background(), audit.Call{Tool: "bash", Arguments: []byte(`{"command":"ls"}`)})
	l.Execute(context.Background(), audit.Call{Tool: "bash", Arguments: []byte(`not json`)})
	l.Execute(context.Background(), audit.Call{Tool: "bash"})
	out := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(out) != 3 {
		t.Fatalf("stderr got %q", buf.String())
	}
	var a, b, c map[string]any
	_ = json.Unmarshal([]byte(out[0]), &a)
	_ = json.Unmarshal([]byte(out[1]), &b)
	_ = json.Unmarshal([]byte(out[2]), &c)
	if m, _ := a["arguments"].(map[string]any); m["command"] != "ls" {
		t.Errorf("arguments object = %v", a["arguments"])
	}
	if b["arguments"] != "not json" {
		t.Errorf("arguments that are not JSON are kept as a string: %v", b["arguments"])
	}
	empty := sha256.Sum256([]byte("{}"))
	if c["argument_bytes"] != float64(0) || c["argument_sha256"] != hex.EncodeToString(empty[:]) {
		t.Errorf("absent arguments: %v", c)
	}
}

// logrotate moves the file away; the next reload (Prepare+Commit, as
// core.Apply does) or Reopen starts a new file at the configured path,
// and no line is lost or split across the two, even with writers running.
func TestRotationByReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l := audit.New(nil)
	cfg := config.Audit{Enabled: true, Path: path}
	if err := l.Configure(cfg, path); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const writers = 4
	counts := make([]int, writers)
	stop := testutil.Hammer(t, writers, func(w int) bool {
		l.Execute(context.Background(), audit.Call{Tool: "t", Session: strings.Repeat("x", 100)})
		counts[w]++
		return true
	})
	for i := range 3 {
		for len(linesOrNone(path)) == 0 { // let the writers reach this file
		}
		if err := os.Rename(path, filepath.Join(dir, "audit.log."+string(rune('1'+i)))); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			n, err := l.Prepare(cfg, path)
			if err != nil {
				t.Fatal(err)
			}
			l.Commit(n)
		} else if err := l.Reopen(); err != nil {
			t.Fatal(err)
		}
	}
	for len(linesOrNone(path)) == 0 { // and reach the last file too
	}
	stop()
	total := 0
	for _, c := range counts {
		total += c
	}
	seen := 0
	for _, name := range []string{"audit.log.1", "audit.log.2", "audit.log.3", "audit.log"} {
		got := testutil.JSONLines(t, filepath.Join(dir, name))
		if len(got) == 0 {
			t.Errorf("%s is empty", name)
		}
		seen += len(got)
	}
	if seen != total {
		t.Errorf("%d lines in the files, %d written", seen, total)
	}
}

func linesOrNone(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func TestOffWritesNothingAndBadPathIsAConfigError(t *testing.T) {
	var buf testutil.Buffer
	l := audit.New(&buf)
	if err := l.Configure(config.Audit{}, ""); err != nil {
		t.Fatal(err)
	}
	if l.On() {
		t.Fatal("on without a section")
	}
	l.Execute(context.Background(), audit.Call{Tool: "x"})
	l.SessionDeleted(context.Background(), "", "s", "expired")
	if buf.String() != "" {
		t.Errorf("an audit log that is off wrote %q", buf.String())
	}
	var nilLog *audit.Log
	nilLog.SessionDeleted(context.Background(), "", "s", "expired") // no-op, no panic

	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "audit.log")
	err := l.Configure(config.Audit{Enabled: true, Path: bad}, bad)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "audit.path" {
		t.Fatalf("unopenable path: %v, want a config error on audit.path", err)
	}
}
