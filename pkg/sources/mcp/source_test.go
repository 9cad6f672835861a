package mcp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

var coreTools = []string{"add_tool", "args", "cancelled", "echo", "fail", "fail_empty", "meta", "multi", "pid", "report", "rich", "slow", "slow_started", "structured", "weird_name_v2", "where"}

func prefixed(prefix string, tools []string) []string {
	out := make([]string, len(tools))
	for i, n := range tools {
		out[i] = prefix + n
	}
	return out
}

// transports runs a test against the stdio binary and the in-process
// streamable HTTP server alike.
func transports(t *testing.T, fn func(t *testing.T, cfg mcp.ServerConfig, extra []string)) {
	t.Run("stdio", func(t *testing.T) { fn(t, localConfig(), []string{"spawn"}) })
	t.Run("http", func(t *testing.T) {
		_, ts := httpServer(t, testserver.Options{})
		fn(t, remoteConfig(ts.URL), nil)
	})
}

func TestNamingAndLayer(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, extra []string) {
		reg, src := start(t, "my server.v1", cfg)
		want := prefixed("my_server_v1_", append(slices.Clone(coreTools), extra...))
		slices.Sort(want)
		snap := reg.Snapshot()
		if got := names(snap); !slices.Equal(got, want) {
			t.Fatalf("tools = %v\nwant %v", got, want)
		}
		id := registry.LayerID{Kind: sources.KindMCP, Name: "my server.v1"}
		if src.Layer() != id || snap.LayerCount(id) != len(want) {
			t.Fatalf("layer %v has %d tools, want %v with %d", src.Layer(), snap.LayerCount(id), id, len(want))
		}
		e, _ := snap.Lookup("my_server_v1_echo")
		if e.Tool.Source != "mcp" || e.Tool.Description != "Echo the text argument." {
			t.Fatalf("echo tool = %+v", e.Tool)
		}
		var schema map[string]any
		if err := json.Unmarshal(e.Tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "text" {
			t.Fatalf("schema not passed through: %s", e.Tool.InputSchema)
		}
		if st := src.Status(); st.State != sources.Connected || st.Error != "" || st.Layer != id {
			t.Fatalf("status = %+v", st)
		}
		if r := call(t, reg, "my_server_v1_weird_name_v2", `{}`); r.Output != "weird" {
			t.Fatalf("sanitized tool answered %+v", r)
		}
	})
}

func TestResultMapping(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, _ := start(t, "s", cfg)
		cases := []struct {
			tool, args, out string
			isErr           bool
		}{
			{"s_echo", `{"text":"hello"}`, "hello", false},
			{"s_multi", `{}`, "one\ntwo", false},
			{"s_structured", `{}`, "the sum is 3", false}, // the text view; the object is StructuredContent
			{"s_fail", `{}`, "bad\n\nworse", true},
			{"s_fail_empty", `{}`, "MCP tool returned an error", true},
			// The model's JSON reaches the server verbatim: no float64 round trip.
			{"s_args", `{"n":12345678901234567890,"x":1.50}`, `{"n":12345678901234567890,"x":1.50}`, false},
		}
		for _, c := range cases {
			r := call(t, reg, c.tool, c.args)
			if r.Output != c.out || r.IsError != c.isErr {
				t.Errorf("%s: got (%q, isError=%v), want (%q, %v)", c.tool, r.Output, r.IsError, c.out, c.isErr)
			}
			if r.Metadata["server"] != "s" || len(r.Metadata) != 1 {
				t.Errorf("%s: metadata = %v, want {server: s}", c.tool, r.Metadata)
			}
		}
		// A protocol-level error (the server refuses the call) is a failure
		// with its text, and the server stays up.
		r := call(t, reg, "s_echo", `{"text":5}`)
		if !r.IsError || r.Output == "" {
			t.Fatalf("bad arguments: %+v", r)
		}
		if r := call(t, reg, "s_echo", `{"text":"still up"}`); r.Output != "still up" {
			t.Fatalf("after a refused call: %+v", r)
		}
	})
}

func TestFilter(t *testing.T) {
	_, ts := httpServer(t, testserver.Options{})
	for _, c := range []struct {
		name   string
		filter sources.Filter
		want   []string
	}{
		{"allow", sources.Filter{"echo": true, "multi": true, "nope": true}, []string{"f_echo", "f_multi"}},
		{"drop", sources.Filter{"echo": false, "slow": false}, prefixed("f_", slices.DeleteFunc(slices.Clone(coreTools), func(n string) bool { return n == "echo" || n == "slow" }))},
		{"original names", sources.Filter{"weird name.v2": true}, []string{"f_weird_name_v2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := remoteConfig(ts.URL)
			cfg.Tools = c.filter
			reg, _ := start(t, "f", cfg)
			if got := names(reg.Snapshot()); !slices.Equal(got, c.want) {
				t.Fatalf("tools = %v, want %v", got, c.want)
			}
		})
	}
}

func TestHangingServerFailsWithinTimeoutWhileAnotherWorks(t *testing.T) {
	hang := localConfig("-hang")
	hang.Timeout = 300
	good := localConfig()

	reg := registry.New()
	hangSrc, goodSrc := mcp.New("hang", hang, testEnv), mcp.New("good", good, testEnv)
	defer hangSrc.Close(context.Background())
	defer goodSrc.Close(context.Background())
	var wg sync.WaitGroup
	var hangErr, goodErr error
	wg.Add(2)
	go func() { defer wg.Done(); hangErr = hangSrc.Start(context.Background(), reg) }()
	go func() { defer wg.Done(); goodErr = goodSrc.Start(context.Background(), reg) }()
	wg.Wait()

	if goodErr != nil {
		t.Fatalf("good server: %v", goodErr)
	}
	if hangErr == nil {
		t.Fatal("a server that never answers initialize started")
	}
	want := `MCP server "hang": initialize: no answer within 300ms`
	mustContain(t, hangErr.Error(), want)
	st := hangSrc.Status()
	if st.State != sources.Failed || !strings.Contains(st.Error, want) {
		t.Fatalf("hang status = %+v", st)
	}
	if goodSrc.Status().State != sources.Connected {
		t.Fatalf("good status = %+v", goodSrc.Status())
	}
	if r := call(t, reg, "good_echo", `{"text":"ok"}`); r.Output != "ok" {
		t.Fatalf("good server call: %+v", r)
	}
	if n := reg.Snapshot().LayerCount(hangSrc.Layer()); n != 0 {
		t.Fatalf("failed server published %d tools", n)
	}
}

func TestStartFailures(t *testing.T) {
	cases := []struct {
		name string
		cfg  mcp.ServerConfig
		want string
	}{
		{"no such program", mcp.ServerConfig{Type: mcp.TypeLocal, Command: []string{"/nonexistent/mcp-server"}}, `MCP server "x": start: `},
		{"exits with a message", localConfig("-exit-on-start"), "stderr: fatal: TEST_API_KEY is not set"},
		{"nothing listening", remoteConfig("http://127.0.0.1:1/mcp"), `MCP server "x": initialize: streamable HTTP: `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := mcp.New("x", c.cfg, testEnv)
			defer src.Close(context.Background())
			err := src.Start(context.Background(), registry.New())
			if err == nil {
				t.Fatal("Start succeeded")
			}
			mustContain(t, err.Error(), c.want)
			if st := src.Status(); st.State != sources.Failed || st.Error != err.Error() {
				t.Fatalf("status = %+v", st)
			}
		})
	}
}

func TestDisabled(t *testing.T) {
	cfg := localConfig()
	cfg.Disabled = true
	reg, src := start(t, "off", cfg)
	if st := src.Status(); st.State != sources.Disabled {
		t.Fatalf("status = %+v", st)
	}
	if !slices.Contains(reg.Layers(), src.Layer()) || reg.Snapshot().Len() != 0 {
		t.Fatalf("disabled server: layers %v, %d tools", reg.Layers(), reg.Snapshot().Len())
	}
}

func TestPaginationAcrossThreePages(t *testing.T) {
	// 16 tools + 2 fillers = 18 tools in pages of 6: 6, 6, 6.
	srv, ts := httpServer(t, testserver.Options{PageSize: 6, Filler: 2})
	reg, _ := start(t, "p", remoteConfig(ts.URL))
	if n := srv.Lists.Load(); n != 3 {
		t.Fatalf("tools/list requests = %d, want 3", n)
	}
	got := names(reg.Snapshot())
	if len(got) != 18 || !slices.Contains(got, "p_filler_02") || !slices.Contains(got, "p_add_tool") {
		t.Fatalf("tools = %v", got)
	}
}

func TestListChangedAddsTool(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, _ := start(t, "lc", cfg)
		w, snap := reg.Watch()
		defer w.Close()
		if _, ok := snap.Lookup("lc_fresh"); ok {
			t.Fatal("lc_fresh exists before it was added")
		}
		if r := call(t, reg, "lc_add_tool", `{"name":"fresh"}`); r.IsError {
			t.Fatalf("add_tool: %+v", r)
		}
		waitFor(t, w, "lc_fresh", func(s *registry.Snapshot) bool { _, ok := s.Lookup("lc_fresh"); return ok })
		if r := call(t, reg, "lc_fresh", `{}`); r.Output != "I am fresh" {
			t.Fatalf("new tool answered %+v", r)
		}
	})
}

func TestCallerCancellationReachesServer(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, src := start(t, "c", cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r := testutil.Direct{Reg: reg}.Execute(ctx, "c_slow", tool.Call{Arguments: json.RawMessage(`{}`)})
		if !r.IsError || r.Outcome != tool.OutcomeTimeout || r.Metadata["server"] != "c" {
			t.Fatalf("deadline: %+v", r)
		}
		// notifications/cancelled is asynchronous: ask until the server has
		// seen it (each ask is a round trip, not a sleep).
		deadline := time.Now().Add(waitTimeout)
		for call(t, reg, "c_cancelled", `{}`).Output != "1" {
			if time.Now().After(deadline) {
				t.Fatal("the server never saw the cancellation")
			}
		}
		if st := src.Status(); st.State != sources.Connected {
			t.Fatalf("a cancelled call took the server down: %+v", st)
		}
	})
}

func TestKilledStdioServerFailsFastAndRestarts(t *testing.T) {
	reg := registry.New()
	pub := &gatedPublisher{Registry: reg, gate: make(chan struct{})}
	src := mcp.New("k", localConfig(), testEnv)
	defer src.Close(context.Background())
	if err := src.Start(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	w, _ := reg.Watch()
	defer w.Close()

	oldPID, err := strconv.Atoi(call(t, reg, "k_pid", `{}`).Output)
	if err != nil {
		t.Fatal(err)
	}
	gone := watchProcess(t, oldPID)
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !gone() {
		t.Fatal("the killed server did not exit")
	}
	// No deadline on this call: it must come back on its own, at once.
	r := call(t, reg, "k_pid", `{}`)
	if !r.IsError || r.Metadata["server"] != "k" {
		t.Fatalf("call to a dead server: %+v", r)
	}
	mustContain(t, r.Output, `MCP server "k" is down`)
	mustContain(t, r.Output, "restarting")
	if st := src.Status(); st.State != sources.Restarting || !strings.Contains(st.Error, "is down") {
		t.Fatalf("status = %+v", st)
	}

	// The down server's tools stay listed (calls to them fail fast), so wait
	// for the restart's own publish: a revision after this one.
	rev := reg.Snapshot().Revision()
	close(pub.gate) // let the restart publish
	waitFor(t, w, "the restarted server's tools", func(s *registry.Snapshot) bool {
		return s.Revision() > rev && s.LayerCount(src.Layer()) == len(coreTools)+1
	})
	// The session goes live just after its tools are published.
	for deadline := time.Now().Add(10 * time.Second); src.Status().State != sources.Connected && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	newPID, err := strconv.Atoi(call(t, reg, "k_pid", `{}`).Output)
	if err != nil || newPID == oldPID {
		t.Fatalf("after restart pid = %d (%v), was %d", newPID, err, oldPID)
	}
	if st := src.Status(); st.State != sources.Connected {
		t.Fatalf("status after restart = %+v", st)
	}
}

func TestCloseKillsProcessTree(t *testing.T) {
	reg, src := start(t, "tree", localConfig())
	pid, err := strconv.Atoi(call(t, reg, "tree_pid", `{}`).Output)
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, reg, "tree_spawn", `{}`)
	grandchild, err := strconv.Atoi(r.Output)
	if err != nil {
		t.Fatalf("spawn: %+v", r)
	}
	childGone, grandchildGone := watchProcess(t, pid), watchProcess(t, grandchild)
	if err := src.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !childGone() || !grandchildGone() {
		t.Fatal("Close left a process of the server's tree running")
	}
	if r := call(t, reg, "tree_pid", `{}`); !r.IsError || r.Output != `MCP server "tree" has been shut down` {
		t.Fatalf("call after Close: %+v", r)
	}
}

func TestOutputCapped(t *testing.T) {
	_, ts := httpServer(t, testserver.Options{})
	reg := registry.New()
	src := mcp.New("cap", remoteConfig(ts.URL), sources.Env{Logger: testEnv.Logger, MaxOutputBytes: 4})
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	// "aaaé" is five bytes; the cut falls inside é and moves back before it.
	r := call(t, reg, "cap_echo", `{"text":"aaaé"}`)
	if r.Output != "aaa\n[output truncated: 2 bytes omitted]" || r.IsError || r.Metadata["truncated"] != true || r.Metadata["server"] != "cap" {
		t.Fatalf("capped: %+v", r)
	}
	if r := call(t, reg, "cap_echo", `{"text":"abcd"}`); r.Output != "abcd" || r.Metadata["truncated"] != nil {
		t.Fatalf("at the cap: %+v", r)
	}
}

func TestRelativeCommandAndCwdResolveAgainstBaseDir(t *testing.T) {
	raw := `{"rel": {"command": ["./mcptestserver"], "cwd": "..", "env": {"MCP_TEST_VAR": "from config"}}}`
	servers, _, err := mcp.ParseConfig(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	cfg := servers["rel"]
	reg := registry.New()
	src := mcp.New("rel", cfg, sources.Env{Logger: testEnv.Logger, BaseDir: filepath.Dir(serverBin)})
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	want := filepath.Dir(filepath.Dir(serverBin)) + "\nfrom config"
	if r := call(t, reg, "rel_where", `{"name":"MCP_TEST_VAR"}`); r.Output != want {
		t.Fatalf("where = %q, want %q", r.Output, want)
	}
}
