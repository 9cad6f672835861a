package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/engine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) {
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	goleak.VerifyTestMain(m)
}

func echo(name string) tool.Tool {
	return tool.Must(tool.Native(name, func(_ context.Context, args map[string]any) (any, error) { return args, nil }))
}

// parse builds a config as the server would from a file in dir.
func parse(t *testing.T, dir, text string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(text), filepath.Join(dir, "toolnexus.json"), dir)
	if err != nil {
		t.Fatalf("config %s: %v", text, err)
	}
	return cfg
}

func newEngine(t *testing.T, native ...tool.Tool) (*engine.Engine, *registry.Registry, string) {
	t.Helper()
	dir := t.TempDir()
	reg := registry.New()
	e := engine.New(reg, engine.Options{Native: native})
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e, reg, dir
}

func ids(list []registry.LayerID) string {
	s := make([]string, len(list))
	for i, id := range list {
		s[i] = id.String()
	}
	return strings.Join(s, ",")
}

func apply(t *testing.T, e *engine.Engine, cfg *config.Config) engine.Report {
	t.Helper()
	rep, err := e.Apply(cfg)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return rep
}

func TestApplyRebuildsOnlyWhatChanged(t *testing.T) {
	e, reg, dir := newEngine(t, echo("mine"))
	withDebug := `{"debug": true, "builtins": false, "skills": []`
	a := parse(t, dir, withDebug+`}`)

	rep := apply(t, e, a)
	if got := ids(rep.Started); got != "debug/debug,builtin/builtin,skill/skill,http/http,native/native" {
		t.Fatalf("first Apply started %s", got)
	}
	if len(rep.Removed) != 0 || len(rep.Failed) != 0 {
		t.Fatalf("first Apply: removed %v failed %v", rep.Removed, rep.Failed)
	}
	if _, ok := reg.Snapshot().Lookup("debug_echo"); !ok {
		t.Fatal("debug tools not published")
	}
	rev := reg.Snapshot().Revision()

	steps := []struct {
		name, cfg        string
		started, removed string
		debugTools       bool
	}{
		{"same config", withDebug + `}`, "", "", true},
		{"limits that no source reads", withDebug + `, "limits": {"timeout": 5, "maxConcurrency": 3, "tools": {"mine": {"timeout": 1}}}}`, "", "", true},
		{"auth and server", withDebug + `, "server": {"gracePeriod": 1}}`, "", "", true},
		{"debug off", `{"debug": false, "builtins": false, "skills": []}`, "", "debug/debug", false},
		{"debug on", withDebug + `}`, "debug/debug", "", true},
		// Only sources that cap their own reads are rebuilt; skill, debug
		// and native (and mcp) do not read the cap.
		{"maxOutputBytes", withDebug + `, "limits": {"maxOutputBytes": 100}}`, "builtin/builtin,http/http", "", true},
	}
	for _, s := range steps {
		rep := apply(t, e, parse(t, dir, s.cfg))
		if ids(rep.Started) != s.started || ids(rep.Removed) != s.removed || len(rep.Failed) != 0 {
			t.Fatalf("%s: started [%s] removed [%s] failed %v; want started [%s] removed [%s]",
				s.name, ids(rep.Started), ids(rep.Removed), rep.Failed, s.started, s.removed)
		}
		_, has := reg.Snapshot().Lookup("debug_echo")
		if has != s.debugTools {
			t.Fatalf("%s: debug_echo present = %v", s.name, has)
		}
		if _, ok := reg.Snapshot().Lookup("mine"); !ok {
			t.Fatalf("%s: the native tool disappeared", s.name)
		}
		if s.started == "" && s.removed == "" && reg.Snapshot().Revision() != rev {
			t.Fatalf("%s: nothing changed but the registry moved from %d to %d", s.name, rev, reg.Snapshot().Revision())
		}
		rev = reg.Snapshot().Revision()
	}
}

func TestSourcesReportStateCountsAndShadowing(t *testing.T) {
	e, _, dir := newEngine(t, echo("debug_echo"), echo("mine"))
	apply(t, e, parse(t, dir, `{"debug": true}`))
	var debug, native *engine.SourceInfo
	infos := e.Sources()
	for i := range infos {
		switch infos[i].Layer.Kind {
		case sources.KindDebug:
			debug = &infos[i]
		case sources.KindNative:
			native = &infos[i]
		}
	}
	if debug == nil || native == nil {
		t.Fatalf("Sources() = %+v; want debug and native rows", infos)
	}
	if debug.State != sources.Connected || debug.ToolCount != 4 || strings.Join(debug.Shadowed, ",") != "debug_echo" {
		t.Fatalf("debug row %+v; want connected, 4 tools, debug_echo shadowed", *debug)
	}
	if native.State != sources.Connected || native.ToolCount != 2 || len(native.Shadowed) != 0 {
		t.Fatalf("native row %+v", *native)
	}
	// Rows come in precedence order (debug first, native after builtin).
	if infos[0].Layer.Kind != sources.KindDebug || infos[len(infos)-1].Layer.Kind != sources.KindNative {
		t.Fatalf("order: first %v last %v", infos[0].Layer, infos[len(infos)-1].Layer)
	}
}

func TestFailingSourceIsReportedNeverFatal(t *testing.T) {
	// Two native tools with one name: that layer cannot be published.
	e, reg, dir := newEngine(t, echo("twin"), echo("twin"))
	rep := apply(t, e, parse(t, dir, `{"debug": true}`))
	err, failed := rep.Failed[registry.Layer(sources.KindNative)]
	if !failed || !strings.Contains(err.Error(), `"twin" appears twice`) {
		t.Fatalf("Failed = %v; want the native layer with the duplicate name", rep.Failed)
	}
	if _, ok := reg.Snapshot().Lookup("debug_echo"); !ok {
		t.Fatal("one failing source took the others down")
	}
	for _, in := range e.Sources() {
		if in.Layer.Kind == sources.KindNative && (in.State != sources.Failed || !strings.Contains(in.Error, "twin")) {
			t.Fatalf("native row %+v; want failed with the reason", in)
		}
	}
}

func TestWorkspaceIsResolvedAndCreated(t *testing.T) {
	dir := t.TempDir()
	reg := registry.New()
	e := engine.New(reg, engine.Options{})
	defer e.Close(context.Background())
	cfg := parse(t, dir, `{"builtins": {"workspace": "rel/ws"}}`)
	apply(t, e, cfg)
	// The stub builtin section may drop the key; the default "workspace"
	// is used then. Either way the directory exists under the config dir.
	want := filepath.Join(dir, "workspace")
	if cfg.Builtins.Workspace != "" {
		want = filepath.Join(dir, cfg.Builtins.Workspace)
	}
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Fatalf("workspace %s not created: %v", want, err)
	}
}

func TestApplyAfterCloseFails(t *testing.T) {
	dir := t.TempDir()
	reg := registry.New()
	e := engine.New(reg, engine.Options{})
	apply(t, e, parse(t, dir, `{"debug": true}`))
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := e.Apply(parse(t, dir, `{}`)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Apply after Close: %v", err)
	}
}

func ExampleEngine_Apply() {
	dir, _ := os.MkdirTemp("", "engine-example")
	defer os.RemoveAll(dir)
	reg := registry.New()
	e := engine.New(reg, engine.Options{})
	defer e.Close(context.Background())

	on, _ := config.Parse([]byte(`{"debug": true}`), "", dir)
	off, _ := config.Parse([]byte(`{"debug": false, "limits": {"timeout": 1000}}`), "", dir)
	e.Apply(on)
	rep, _ := e.Apply(off)
	fmt.Println("rebuilt:", len(rep.Started), "removed:", rep.Removed)
	// Output:
	// rebuilt: 0 removed: [debug/debug]
}

// A change to the sandbox section restarts the MCP servers that run in
// the sandbox, and only those.
func TestSandboxChangeRestartsOnlySandboxedMCPServers(t *testing.T) {
	box, err := sandbox.New(sandbox.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := engine.New(registry.New(), engine.Options{Sandbox: box})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	// plain is up (a failed server is retried by every reload, whatever
	// changed); boxed fails, which does not matter: it must be rebuilt.
	plain := newLateServer(t, mcpHandler())
	plain.up()
	servers := `"builtins": false, "skills": [], "mcpServers": {
		"boxed": {"command": "/nonexistent/boxed", "sandbox": true},
		"plain": {"url": "` + plain.url("/mcp") + `"}}`
	apply(t, e, parse(t, dir, `{`+servers+`}`))
	for _, change := range []string{`"network": true`, `"readPaths": ["/opt"]`, `"limits": {"memory": 1}`} {
		rep := apply(t, e, parse(t, dir, `{`+servers+`, "sandbox": {`+change+`}}`))
		got := "," + ids(rep.Started) + ","
		if !strings.Contains(got, ",mcp/boxed,") || strings.Contains(got, ",mcp/plain,") {
			t.Errorf("sandbox {%s}: rebuilt [%s]; want mcp/boxed and not mcp/plain", change, got)
		}
		apply(t, e, parse(t, dir, `{`+servers+`}`))
	}
}
