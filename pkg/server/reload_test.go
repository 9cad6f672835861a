package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Two configs a reload alternates between: they differ in the debug
// source (config-driven tools) and in limits; the native tools are in both.
const (
	reloadA = `{"debug": true, "builtins": false, "skills": [], "limits": {"timeout": 30000, "tools": {"stable": {"maxConcurrency": 64}}}}`
	reloadB = `{"debug": false, "builtins": false, "skills": [], "limits": {"timeout": 20000, "maxConcurrency": 100}}`
)

func metricValue(t *testing.T, body, name string, labels ...string) string {
	t.Helper()
	line := metricLine(body, name, labels...)
	if line == "" {
		return ""
	}
	return line[strings.LastIndexByte(line, ' ')+1:]
}

func TestReloadWhile64GoroutinesExecute(t *testing.T) {
	t.Parallel()
	f := start(t, reloadA, echoTool("stable"))
	ctx, cancel := context.WithCancel(context.Background())
	var calls, debugCalls, debugUnknown atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name, args := "stable", fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				if i%3 == 2 {
					name = "debug_echo"
				}
				resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
				calls.Add(1)
				if err != nil {
					t.Errorf("%s: gRPC error %v", name, err)
					return
				}
				r := resp.GetResult()
				switch {
				case name == "stable" && (r.GetIsError() || r.GetOutput() != args):
					// present in both configs: must never fail
					t.Errorf("stable failed during reload: %v", r)
					return
				case name == "debug_echo":
					debugCalls.Add(1)
					// only in config A: it runs, or is unknown while B serves
					if r.GetOutcome() == pb.Outcome_OUTCOME_UNKNOWN_TOOL {
						debugUnknown.Add(1)
					} else if r.GetIsError() || r.GetOutput() != args {
						t.Errorf("debug_echo: %v", r)
						return
					}
				}
			}
		}()
	}

	reloads := 0
	for i := 1; i <= 30 || calls.Load() < 3000; i++ {
		next, toB := reloadA, i%2 == 1
		if toB {
			next = reloadB
		}
		f.rewrite(t, next)
		var rebuilt, removed []string
		if i%2 == 0 {
			rep, err := f.srv.Reload(context.Background())
			if err != nil {
				t.Fatalf("reload %d: %v", i, err)
			}
			rebuilt, removed = rep.Rebuilt, rep.Removed
		} else {
			resp, err := f.src.Reload(context.Background(), &pb.ReloadRequest{})
			if err != nil {
				t.Fatalf("reload %d: %v", i, err)
			}
			rebuilt, removed = resp.GetRebuilt(), resp.GetRemoved()
		}
		reloads++
		want := [2]string{"debug/debug", ""} // B → A: debug rebuilt
		if toB {
			want = [2]string{"", "debug/debug"}
		}
		if got := [2]string{strings.Join(rebuilt, ","), strings.Join(removed, ",")}; got != want {
			t.Fatalf("reload %d: rebuilt/removed %q, want %q: only the changed source may be touched", i, got, want)
		}
		if t.Failed() {
			break
		}
	}
	cancel()
	wg.Wait()
	if debugCalls.Load() == 0 {
		t.Fatal("no call reached the reloaded debug tools")
	}
	t.Logf("debug_echo: %d calls, %d while config B (no debug tools) served", debugCalls.Load(), debugUnknown.Load())
	body := f.scrape(t)
	if got := metricValue(t, body, "toolnexus_reloads_total", `result="ok"`); got != fmt.Sprint(reloads) {
		t.Fatalf("reloads_total{ok} = %q after %d reloads", got, reloads)
	}
	t.Logf("%d calls across %d reloads", calls.Load(), reloads)
}

func (f *fixture) rewrite(t *testing.T, cfgJSON string) {
	t.Helper()
	(&served{cfgPath: f.cfgPath}).rewrite(t, cfgJSON)
}

func TestBrokenConfigIsRejectedAndOldToolsKeepWorking(t *testing.T) {
	t.Parallel()
	f := start(t, reloadA, echoTool("stable"))
	cases := []struct{ cfg, reason string }{
		{`{"debug": true,`, "config: not valid JSON: unexpected end of JSON input at line 1, column 16"},
		{`{"debgu": false}`, `config: debgu: unknown top-level key; did you mean "debug"?`},
		{`{"debug": false, "limits": {"tools": {"stable": {"timeout": -5}}}}`, "config: limits.tools.stable.timeout: must be >= 0 milliseconds (0 = no limit)"},
		{`{"debug": false, "server": {"tls": {"cert": "/nonexistent/c.pem", "key": "/nonexistent/k.pem"}}}`, "config: server.tls: load cert /nonexistent/c.pem"},
	}
	for _, c := range cases {
		f.rewrite(t, c.cfg)
		_, err := f.src.Reload(context.Background(), &pb.ReloadRequest{})
		st := status.Convert(err)
		if st.Code() != codes.FailedPrecondition || !strings.HasPrefix(st.Message(), "reload rejected, the previous config keeps serving: "+c.reason) {
			t.Errorf("%s: %v; want FailedPrecondition with %q", c.cfg, err, c.reason)
		}
		// Server.Reload (SIGHUP) gives the same reason as a *server.ConfigError.
		var ce *server.ConfigError
		if _, err := f.srv.Reload(context.Background()); !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.reason) {
			t.Errorf("%s: Server.Reload = %v", c.cfg, err)
		}
		// The old config keeps serving: debug tools (A only) and limits.
		if r := f.exec(t, "debug_echo", `{"still":"here"}`); r.GetIsError() {
			t.Fatalf("after rejected %s: debug_echo %v", c.cfg, r)
		}
		if r := f.exec(t, "stable", `{"x":1}`); r.GetOutput() != `{"x":1}` {
			t.Fatalf("after rejected %s: stable %v", c.cfg, r)
		}
	}
	body := f.scrape(t)
	if got := metricValue(t, body, "toolnexus_reloads_total", `result="error"`); got != fmt.Sprint(2*len(cases)) {
		t.Fatalf("reloads_total{error} = %q, want %d", got, 2*len(cases))
	}
	if got := metricValue(t, body, "toolnexus_reloads_total", `result="ok"`); got != "" && got != "0" {
		t.Fatalf("reloads_total{ok} = %q, want 0", got)
	}
	// A good config after the bad ones goes through.
	f.rewrite(t, reloadB)
	if resp, err := f.src.Reload(context.Background(), &pb.ReloadRequest{}); err != nil || strings.Join(resp.GetRemoved(), ",") != "debug/debug" {
		t.Fatalf("good reload: %v %v", resp, err)
	}
}

func TestReloadAppliesLimitsWithoutRebuildingSources(t *testing.T) {
	t.Parallel()
	f := start(t, reloadA, echoTool("stable"))
	if r := f.exec(t, "debug_sleep", `{"ms": 1}`); r.GetIsError() {
		t.Fatal(r)
	}
	f.rewrite(t, `{"debug": true, "builtins": false, "skills": [], "limits": {"validateArguments": false, "tools": {"debug_sleep": {"timeout": 20}}}}`)
	resp, err := f.src.Reload(context.Background(), &pb.ReloadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetRebuilt())+len(resp.GetRemoved()) != 0 {
		t.Fatalf("a limits-only change rebuilt %v removed %v", resp.GetRebuilt(), resp.GetRemoved())
	}
	if resp.GetRevision() != f.srv.Registry().Snapshot().Revision() {
		t.Fatalf("response revision %d, registry %d", resp.GetRevision(), f.srv.Registry().Snapshot().Revision())
	}
	if r := f.exec(t, "debug_sleep", `{"ms": 600000}`); r.GetOutcome() != pb.Outcome_OUTCOME_TIMEOUT || r.GetOutput() != "debug_sleep: timed out after 20ms (limits.timeout)" {
		t.Fatalf("new timeout not applied: %v", r)
	}
	if r := f.exec(t, "debug_sleep", `{"ms": "x"}`); r.GetOutput() != `debug_sleep: "ms" must be an integer >= 0` {
		t.Fatalf("validateArguments=false not applied: %v", r)
	}
}

func TestInFlightCallFinishesAcrossReload(t *testing.T) {
	t.Parallel()
	// The call must still be running when the reload lands; a debug tool
	// cannot be held open, so it sleeps long enough (3 s) that even a loaded
	// CI machine reloads first. The assertions are about outcomes, not time.
	f := start(t, reloadA)
	result := make(chan *pb.ToolResult, 1)
	go func() {
		resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_sleep", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"ms": 3000}`}})
		if err != nil {
			t.Errorf("in-flight call: %v", err)
		}
		result <- resp.GetResult()
	}()
	waitInFlight(t, f, "debug")
	f.rewrite(t, reloadB)
	if _, err := f.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := f.exec(t, "debug_sleep", `{"ms": 1}`); r.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("new calls after removal: %v", r)
	}
	if r := <-result; r.GetIsError() || r.GetOutput() != "slept 3000ms" {
		t.Fatalf("the call in flight during the reload: %v; it must finish on the tool it started with", r)
	}
}

func TestWatchToolsSeesEveryReloadInOrder(t *testing.T) {
	t.Parallel()
	f := start(t, reloadA, echoTool("stable"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := f.reg.WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || names(first.GetTools()) != "debug_echo,debug_fail,debug_panic,debug_sleep,stable" {
		t.Fatalf("first: %v %s", err, names(first.GetTools()))
	}
	rev := first.GetRevision()
	const debugNames = "debug_echo,debug_fail,debug_panic,debug_sleep"
	for i := 1; i <= 8; i++ {
		cfg, wantAdded, wantRemoved, wantTools := reloadA, debugNames, "", debugNames+",stable"
		if i%2 == 1 {
			cfg, wantAdded, wantRemoved, wantTools = reloadB, "", debugNames, "stable"
		}
		f.rewrite(t, cfg)
		if _, err := f.srv.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		m, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetRevision() != rev+1 || m.GetSnapshot() {
			t.Fatalf("reload %d: revision %d snapshot=%v after %d; want the next revision as a change", i, m.GetRevision(), m.GetSnapshot(), rev)
		}
		if got := strings.Join(m.GetAdded(), ","); got != wantAdded {
			t.Fatalf("reload %d: added %q, want %q", i, got, wantAdded)
		}
		if got := strings.Join(m.GetRemoved(), ","); got != wantRemoved {
			t.Fatalf("reload %d: removed %q, want %q", i, got, wantRemoved)
		}
		if names(m.GetTools()) != wantTools {
			t.Fatalf("reload %d: tools %s", i, names(m.GetTools()))
		}
		rev = m.GetRevision()
	}
}

func TestSlowWatcherNeverBlocksTheRegistry(t *testing.T) {
	t.Parallel()
	// Every WatchTools message carries the whole list; with ~100 KiB of
	// tools and the client's flow-control window pinned at 64 KiB, the
	// server's send blocks after a message or two while this client does
	// not read. The registry must go on regardless, and the watcher must
	// then get one fresh snapshot instead of the changes it missed.
	bulk := make([]tool.Tool, 100)
	for i := range bulk {
		bulk[i] = tool.Must(tool.Native(fmt.Sprintf("bulk_%03d", i), func(context.Context, map[string]any) (any, error) { return nil, nil },
			tool.WithDescription(strings.Repeat("A long description. ", 50))))
	}
	f := start(t, `{"builtins": false, "skills": []}`, bulk...)
	conn, err := grpc.NewClient(f.srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := pb.NewRegistryServiceClient(conn).WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || len(first.GetTools()) != 100 {
		t.Fatalf("first: %v, %d tools", err, len(first.GetTools()))
	}

	changes := registry.WatchBuffer + 40
	id := registry.LayerID{Kind: sources.KindNative, Name: "flux"}
	for i := range changes {
		// Returns even though the watcher reads nothing.
		if err := f.srv.Registry().Replace(id, []tool.Tool{echoTool(fmt.Sprintf("flux_%03d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	final := f.srv.Registry().Snapshot().Revision()
	if final != first.GetRevision()+uint64(changes) {
		t.Fatalf("registry at revision %d after %d changes from %d", final, changes, first.GetRevision())
	}

	var got []*pb.WatchToolsResponse
	last := first.GetRevision()
	for last < final {
		m, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetRevision() <= last {
			t.Fatalf("revision %d after %d: out of order", m.GetRevision(), last)
		}
		last = m.GetRevision()
		got = append(got, m)
	}
	// Somewhere in what arrives is one fresh snapshot standing in for the
	// changes that were dropped; everything after it is incremental again,
	// and the last message has the final list.
	var resync *pb.WatchToolsResponse
	for _, m := range got {
		if m.GetSnapshot() {
			if resync != nil {
				t.Fatalf("two resync snapshots (revisions %d and %d)", resync.GetRevision(), m.GetRevision())
			}
			resync = m
		}
	}
	if resync == nil {
		t.Fatalf("no resync snapshot among %d messages for %d changes", len(got), changes)
	}
	n := resync.GetRevision() - first.GetRevision()
	if len(resync.GetTools()) != 101 || len(resync.GetAdded()) != 101 || names(resync.GetTools())[len(names(resync.GetTools()))-8:] != fmt.Sprintf("flux_%03d", n-1) {
		t.Fatalf("resync at %d: %d tools, %d added, last %s; want the full list of 101 with flux_%03d",
			resync.GetRevision(), len(resync.GetTools()), len(resync.GetAdded()), names(resync.GetTools())[len(names(resync.GetTools()))-8:], n-1)
	}
	if l := got[len(got)-1]; l.GetRevision() != final || !strings.HasSuffix(names(l.GetTools()), fmt.Sprintf("flux_%03d", changes-1)) {
		t.Fatalf("last message at %d: %s", l.GetRevision(), names(l.GetTools()))
	}
	if len(got) >= changes {
		t.Fatalf("got %d messages for %d changes; the lagging watcher was not resynchronised", len(got), changes)
	}
	t.Logf("%d changes arrived as %d messages, one of them a resync snapshot", changes, len(got))
}

func TestWatchConfigReloadsOnFileChange(t *testing.T) {
	t.Parallel()
	// server.watchConfig polls the file's modification time (every 2 s).
	f := start(t, `{"debug": true, "builtins": false, "skills": [], "server": {"watchConfig": true}}`, echoTool("stable"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := f.reg.WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	f.rewrite(t, `{"debug": false, "builtins": false, "skills": [], "server": {"watchConfig": true}}`)
	m, err := stream.Recv()
	if err != nil {
		t.Fatalf("no change within 20 s of rewriting the watched config: %v", err)
	}
	if strings.Join(m.GetRemoved(), ",") != "debug_echo,debug_fail,debug_panic,debug_sleep" || names(m.GetTools()) != "stable" {
		t.Fatalf("after the file changed: removed %v, tools %s", m.GetRemoved(), names(m.GetTools()))
	}
	if got := metricValue(t, f.scrape(t), "toolnexus_reloads_total", `result="ok"`); got != "1" {
		t.Fatalf("reloads_total{ok} = %q", got)
	}
}

func TestReloadWarnsAboutSettingsThatNeedARestart(t *testing.T) {
	t.Parallel()
	s := serve(t, debugOnly, nil)
	s.rewrite(t, `{"debug": true, "builtins": false, "skills": [], "limits": {"maxRequestBytes": 8192}}`)
	if _, err := s.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "config: limits.maxRequestBytes changed; it takes effect after a restart") {
		t.Fatalf("no restart warning in:\n%s", logs)
	}
	// The flag-overridden listen address is not a change.
	if strings.Contains(logs, "server.listen changed") {
		t.Fatalf("spurious listen warning:\n%s", logs)
	}
}

// TestSIGHUPReloadsAndSIGTERMExitsZero runs server.Main in a child process
// (this test binary again) and drives it with real signals.
func TestSIGHUPReloadsAndSIGTERMExitsZero(t *testing.T) {
	t.Parallel()
	if args := os.Getenv("TN_SERVER_MAIN_ARGS"); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	dir := t.TempDir()
	cfgPath := dir + "/toolnexus.json"
	write := func(cfg string) {
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(debugOnly)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGHUPReloadsAndSIGTERMExitsZero$")
	cmd.Env = append(os.Environ(), "TN_SERVER_MAIN_ARGS=--config "+cfgPath+" --listen 127.0.0.1:0 --metrics-listen off --workspace "+dir+"/ws")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody listening any more
			}
		}
		exited <- cmd.Wait()
	}()
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr := ""
	grpcAddr := regexp.MustCompile(`grpc=(127\.0\.0\.1:\d+)`)
	for addr == "" {
		select {
		case l := <-lines:
			if m := grpcAddr.FindStringSubmatch(l); m != nil {
				addr = m[1]
			}
		case err := <-exited:
			waited = true
			t.Fatalf("server exited before serving: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("server did not report its address")
		}
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := pb.NewRegistryServiceClient(conn).WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := stream.Recv(); err != nil || len(m.GetTools()) != 4 {
		t.Fatalf("first watch message: %v %v", m, err)
	}
	write(`{"debug": false, "builtins": false, "skills": []}`)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	m, err := stream.Recv()
	if err != nil || strings.Join(m.GetRemoved(), ",") != "debug_echo,debug_fail,debug_panic,debug_sleep" {
		t.Fatalf("after SIGHUP: %v %v; want the debug tools removed", m, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The watch ends (the server is going away), then the process exits 0.
	if _, err := stream.Recv(); err == nil {
		t.Fatal("watch still open after SIGTERM")
	}
	select {
	case err := <-exited:
		waited = true
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
}

// blockingMCPServer serves, over streamable HTTP on loopback, an MCP
// server with one tool "wait" that answers only once release is closed.
func blockingMCPServer(t *testing.T, entered chan<- struct{}, release <-chan struct{}) string {
	t.Helper()
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "blocker", Version: "1.0.0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "wait", Description: "Wait until released"}, func(ctx context.Context, _ *mcpsdk.CallToolRequest, _ struct{}) (*mcpsdk.CallToolResult, any, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "released"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	return testutil.ServeMCP(t, s)
}

func TestReloadRebuildsOneMCPServerAndItsRunningCallFinishes(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	urlA := blockingMCPServer(t, entered, release)
	urlB := mcpHTTPServer(t)
	cfg := func(timeoutA int) string {
		return fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"a": {"url": %q, "timeout": %d}, "b": {"url": %q}}}`, urlA, timeoutA, urlB)
	}
	f := start(t, cfg(30000))
	if r := f.exec(t, "b_add", `{"a": 1, "b": 2}`); r.GetIsError() {
		t.Fatalf("b_add: %v", r)
	}
	result := make(chan *pb.ToolResult, 1)
	go func() {
		resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "a_wait", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
		if err != nil {
			t.Errorf("a_wait: %v", err)
		}
		result <- resp.GetResult()
	}()
	<-entered // the call is running on the MCP server

	// Change server a only: only a is rebuilt, b keeps its session.
	f.rewrite(t, cfg(40000))
	resp, err := f.src.Reload(context.Background(), &pb.ReloadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(resp.GetRebuilt(), ",") != "mcp/a" || len(resp.GetRemoved()) != 0 {
		t.Fatalf("rebuilt %v removed %v; want only mcp/a", resp.GetRebuilt(), resp.GetRemoved())
	}
	if r := f.exec(t, "b_add", `{"a": 2, "b": 40}`); r.GetIsError() || r.GetOutput() != "42" {
		t.Fatalf("b_add after the reload: %v", r)
	}
	// The call that started on the old instance of a is still running;
	// releasing it lets it finish with its real answer.
	close(release)
	if r := <-result; r.GetIsError() || r.GetOutput() != "released" {
		t.Fatalf("call in flight across the reload: %v; it must finish on the instance it started on", r)
	}
	// And the new instance of a serves new calls.
	if r := f.exec(t, "a_wait", `{}`); r.GetIsError() || r.GetOutput() != "released" {
		t.Fatalf("a_wait on the new instance: %v", r)
	}
}

// TestReloadKeepsAStdioMCPServerForItsRunningCall: a stdio MCP server is a
// child process that Close kills, so the old instance of a rebuilt server
// must stay up until the call running on it is done. The MCP server is this
// test binary again; its "wait" tool synchronises with the test through two
// named pipes: it writes to "entered" when the call is running, and answers
// once "release" is written.
func TestReloadKeepsAStdioMCPServerForItsRunningCall(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("TN_MCP_STDIO_FIFOS"); dir != "" {
		os.Exit(serveStdioMCP(dir))
	}
	dir := t.TempDir()
	for _, name := range []string{"entered", "release"} {
		if err := syscall.Mkfifo(dir+"/"+name, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := func(timeout int) string {
		return fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"s": {"command": [%q, "-test.run=^TestReloadKeepsAStdioMCPServerForItsRunningCall$"], "env": {"TN_MCP_STDIO_FIFOS": %q}, "timeout": %d}}}`,
			os.Args[0], dir, timeout)
	}
	f := start(t, cfg(30000))
	result := make(chan *pb.ToolResult, 1)
	go func() {
		resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "s_wait", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
		if err != nil {
			t.Errorf("s_wait: %v", err)
		}
		result <- resp.GetResult()
	}()
	fifo := func(name string, flag int) *os.File {
		opened := make(chan *os.File, 1)
		go func() {
			fh, err := os.OpenFile(dir+"/"+name, flag, 0)
			if err != nil {
				t.Errorf("open %s: %v", name, err)
			}
			opened <- fh
		}()
		select {
		case fh := <-opened:
			return fh
		case <-time.After(30 * time.Second):
			t.Fatalf("the MCP server never opened %s", name)
			return nil
		}
	}
	entered := fifo("entered", os.O_RDONLY)
	if _, err := entered.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	entered.Close()

	f.rewrite(t, cfg(40000))
	resp, err := f.src.Reload(context.Background(), &pb.ReloadRequest{})
	if err != nil || strings.Join(resp.GetRebuilt(), ",") != "mcp/s" {
		t.Fatalf("reload: %v %v", resp, err)
	}
	if r := f.exec(t, "s_ping", `{}`); r.GetIsError() || r.GetOutput() != "pong" {
		t.Fatalf("s_ping on the new instance: %v", r)
	}
	select {
	case r := <-result:
		t.Fatalf("the running call ended before it was released: %v", r)
	default:
	}
	release := fifo("release", os.O_WRONLY)
	if _, err := release.Write([]byte("go")); err != nil {
		t.Fatal(err)
	}
	release.Close()
	if r := <-result; r.GetIsError() || r.GetOutput() != "released" {
		t.Fatalf("call in flight across the reload: %v; the old server process must live until it is done", r)
	}
}

// serveStdioMCP is the child side of the test above. Its "wait" call ends
// with an error as soon as the server's stdin closes (the first step of
// closing a stdio MCP server), so a parent that closed the old instance
// under the call fails the test at once instead of after the kill grace.
func serveStdioMCP(dir string) int {
	stdin := &eofSignal{r: os.Stdin, eof: make(chan struct{})}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "stdio-blocker", Version: "1.0.0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "ping"}, func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "pong"}}}, nil, nil
	})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "wait"}, func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
		entered, err := os.OpenFile(dir+"/entered", os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, err
		}
		_, _ = entered.Write([]byte{1})
		entered.Close()
		released := make(chan struct{})
		go func() {
			if release, err := os.Open(dir + "/release"); err == nil {
				_, _ = release.Read(make([]byte, 2))
				release.Close()
			}
			close(released)
		}()
		select {
		case <-released:
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "released"}}}, nil, nil
		case <-stdin.eof:
			return nil, nil, errors.New("stdin closed under a running call")
		}
	})
	if err := s.Run(context.Background(), &mcpsdk.IOTransport{Reader: stdin, Writer: os.Stdout}); err != nil {
		return 1
	}
	return 0
}

// eofSignal closes eof when its reader reports the end of input.
type eofSignal struct {
	r    *os.File
	eof  chan struct{}
	once sync.Once
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

func (e *eofSignal) Close() error { return e.r.Close() }
