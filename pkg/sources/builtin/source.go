package builtin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/toolnexus/toolnexus/internal/childenv"
	"github.com/toolnexus/toolnexus/internal/confine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Layer is the registry layer the builtin tools are published into.
var Layer = registry.Layer(sources.KindBuiltin)

// New makes the builtin source. The workspace is cfg.Workspace resolved
// against env.BaseDir when set, else env.Workspace (the server passes
// --workspace or its default there and creates the directory). A config
// that switches the source off gives a disabled source; a workspace that
// cannot be used gives a failed one, which does not affect other sources.
func New(cfg Config, env sources.Env) *sources.Static {
	if !cfg.Enabled {
		return sources.NewDisabled(Layer)
	}
	tools, err := Tools(cfg, env)
	if err == nil {
		warnOldSessions(cfg, env)
	}
	return sources.NewStatic(Layer, tools, err)
}

// Tools builds the enabled builtin tools, in byte order of their names, for
// embedding them without the Source machinery.
func Tools(cfg Config, env sources.Env) ([]tool.Tool, error) {
	abs, err := workspaceRoot(cfg, env)
	if err != nil {
		return nil, err
	}
	ws, err := NewWorkspace(abs)
	if err != nil {
		return nil, fmt.Errorf("builtins.workspace: %w", err)
	}
	box, err := confine.Runner(env.Sandbox)
	if err != nil {
		return nil, fmt.Errorf("builtins: %w", err)
	}
	t := newToolset(ws, env, box)
	if err := t.configure(cfg); err != nil {
		return nil, field.Under("builtins", err)
	}
	var out []tool.Tool
	for _, spec := range t.specs() {
		if !cfg.Keep(spec.name) {
			continue
		}
		run := spec.run
		if spec.files {
			run = t.perCall(spec.method)
		}
		out = append(out, tool.Must(tool.New(spec.name, run,
			tool.WithAnnotations(hints(spec.name)),
			tool.WithSource(sources.KindBuiltin.Name),
			tool.WithDescription(spec.description),
			tool.WithInputSchema(spec.schema))))
	}
	return out, nil
}

// toolset is what the ten tools share; everything in it is built once,
// when the tools are, and is safe for concurrent calls.
type toolset struct {
	ws *Workspace
	// session is the call's session workspace in a per-call copy (forCall);
	// nil in the shared toolset.
	session tool.Workspace
	cap     int
	shell   string
	log     *slog.Logger
	md      *converter.Converter
	client  *http.Client
	// bashEnv is the shell's whole environment (bash_env.go).
	bashEnv []string
	// sandbox confines bash (bash_sandbox.go); nil runs it unconfined.
	sandbox *sandbox.Runner
	flavor  sandbox.ShellFlavor
	// pending holds the questions asked (question.go).
	pending *pending.Store
}

func newToolset(ws *Workspace, env sources.Env, box *sandbox.Runner) *toolset {
	return &toolset{
		ws:      ws,
		cap:     env.OutputCap(),
		shell:   shellPath(),
		log:     env.Log(),
		md:      newMarkdownConverter(),
		client:  newFetchClient(allowList{}),
		bashEnv: childenv.Build(nil),
		sandbox: box,
		flavor:  sandbox.FlavorOf(shellPath()),
		pending: pendingStore(env),
	}
}

// pendingStore is the engine's shared store of pending requests, or one of
// the toolset's own when used without an engine.
func pendingStore(env sources.Env) *pending.Store {
	if env.Pending != nil {
		return env.Pending
	}
	return pending.NewLocal(pending.Limits{})
}

type spec struct {
	name        string
	description string
	schema      []byte
	run         tool.Func
	// method is run for the tools that work with files: they run on the
	// call's workspace (perCall).
	method func(*toolset, context.Context, tool.Call) tool.Result
	files  bool
}

// perCall runs a file tool on the call's workspace (see forCall).
func (t *toolset) perCall(m func(*toolset, context.Context, tool.Call) tool.Result) tool.Func {
	return func(ctx context.Context, c tool.Call) tool.Result {
		ct, r := t.forCall(ctx)
		if r != nil {
			return *r
		}
		if ct != t {
			defer ct.ws.Close() // the session's root, opened for this call
		}
		return m(ct, ctx, c)
	}
}

// specs lists the tools in byte order of their names.
func (t *toolset) specs() []spec {
	return []spec{
		{"apply_patch", applyPatchDescription, applyPatchSchema, nil, (*toolset).applyPatch, true},
		{"bash", bashDescription, bashSchema, nil, (*toolset).bash, true},
		{"edit", editDescription, editSchema, nil, (*toolset).edit, true},
		{"glob", globDescription, globSchema, nil, (*toolset).glob, true},
		{"grep", grepDescription, grepSchema, nil, (*toolset).grep, true},
		{"question", questionDescription, questionSchema, t.question, nil, false},
		{"read", readDescription, readSchema, nil, (*toolset).read, true},
		{"todowrite", todowriteDescription, todowriteSchema, t.todowrite, nil, false},
		{"webfetch", webfetchDescription, webfetchSchema, t.webfetch, nil, false},
		{"write", writeDescription, writeSchema, nil, (*toolset).write, true},
	}
}

// resolve confines a path argument to the workspace. The failure names the
// tool and the path exactly as the model wrote it.
func (t *toolset) resolve(name, p string) (string, *tool.Result) {
	real, err := t.ws.Resolve(p)
	if err == nil && t.hiddenFromShared(real) {
		err = ErrEscapes
	}
	if err == nil {
		return real, nil
	}
	var r tool.Result
	if errors.Is(err, ErrEscapes) {
		r = escaped("%s: path escapes the workspace: %s", name, p)
	} else {
		r = fail("%s: cannot resolve %s: %s", name, p, osReason(err))
	}
	return "", &r
}

// workspaceRoot is the shared workspace as an absolute path:
// builtins.workspace (relative to the config's directory), else the
// server's --workspace.
func workspaceRoot(cfg Config, env sources.Env) (string, error) {
	root := cfg.Workspace
	if root != "" && !filepath.IsAbs(root) {
		root = filepath.Join(env.BaseDir, root)
	}
	if root == "" {
		root = env.Workspace
	}
	if root == "" {
		return "", fmt.Errorf("builtins: no workspace directory; set builtins.workspace or --workspace")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("builtins.workspace: %w", err)
	}
	return abs, nil
}
