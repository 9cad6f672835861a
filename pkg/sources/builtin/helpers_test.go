package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// kit is a workspace in a temp dir with all ten tools built over it.
type kit struct {
	t     *testing.T
	dir   string // the workspace root, symlinks resolved
	tools map[string]tool.Tool
}

func newKit(t *testing.T) *kit { return newKitCap(t, 0) }

func newKitCap(t *testing.T, maxOutput int) *kit {
	return newKitConfig(t, builtin.Config{Enabled: true}, maxOutput)
}

// newKitConfig builds the tools from cfg.
func newKitConfig(t *testing.T, cfg builtin.Config, maxOutput int) *kit {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := builtin.Tools(cfg, sources.Env{Workspace: dir, MaxOutputBytes: maxOutput})
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	k := &kit{t: t, dir: dir, tools: map[string]tool.Tool{}}
	for _, tl := range tools {
		k.tools[tl.Name] = tl
	}
	return k
}

// run calls a tool with args (a JSON string, or any value to marshal).
func (k *kit) run(name string, args any) tool.Result {
	k.t.Helper()
	return k.runCtx(context.Background(), name, args)
}

func (k *kit) runCtx(ctx context.Context, name string, args any) tool.Result {
	k.t.Helper()
	tl, ok := k.tools[name]
	if !ok {
		k.t.Fatalf("no tool %q", name)
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			k.t.Fatal(err)
		}
		raw = b
	}
	return tl.Execute(ctx, tool.Call{Name: name, Arguments: raw})
}

// write puts a file into the workspace, parents created.
func (k *kit) write(rel, content string) {
	k.t.Helper()
	p := filepath.Join(k.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		k.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		k.t.Fatal(err)
	}
}

// read returns a workspace file's content, or "<missing>".
func (k *kit) read(rel string) string {
	k.t.Helper()
	b, err := os.ReadFile(filepath.Join(k.dir, rel))
	if os.IsNotExist(err) {
		return "<missing>"
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return string(b)
}

// want is the expected result of one call; zero fields are not checked,
// except IsError which always is.
type want struct {
	output  string
	isError bool
	outcome tool.Outcome
	meta    map[string]any
}

func check(t *testing.T, got tool.Result, w want) {
	t.Helper()
	if got.Output != w.output {
		t.Errorf("output = %q\n        want %q", got.Output, w.output)
	}
	if got.IsError != w.isError {
		t.Errorf("isError = %v, want %v (output %q)", got.IsError, w.isError, got.Output)
	}
	if w.outcome != tool.OutcomeUnspecified && got.Resolved() != w.outcome {
		t.Errorf("outcome = %s, want %s", got.Resolved(), w.outcome)
	}
	if w.meta != nil && !reflect.DeepEqual(jsonOf(t, got.Metadata), jsonOf(t, w.meta)) {
		t.Errorf("metadata = %s, want %s", jsonOf(t, got.Metadata), jsonOf(t, w.meta))
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outside is a directory outside the workspace with one file in it.
func outside(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("hello secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func callOf(name, args string) tool.Call {
	return tool.Call{Name: name, Arguments: json.RawMessage(args)}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
