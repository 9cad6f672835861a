// Package engine turns a config into running sources feeding one registry,
// and swaps them when the config changes: only instances whose config
// changed are rebuilt, each swap is one atomic layer replace, and a source
// that fails never affects another.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/waitctx"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/sources/debug"
	"github.com/toolnexus/toolnexus/pkg/sources/http"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/native"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
	"github.com/toolnexus/toolnexus/pkg/tool"
	"go.opentelemetry.io/otel/trace"
)

// Options configures an Engine.
type Options struct {
	Logger *slog.Logger
	// Native are the embedding program's own Go tools (layer "native").
	Native []tool.Tool
	// DrainTimeout bounds how long a source instance that a reload
	// replaced or removed stays open for the calls still running on it
	// (DefaultDrainTimeout when zero).
	DrainTimeout time.Duration
	// Tracing is handed to the sources (sources.Env.Tracing); nil = off.
	Tracing trace.TracerProvider
	// Sandbox confines the commands sources start for a model; nil runs
	// them unconfined.
	Sandbox *sandbox.Sandbox
	// Egress is where the egress proxy reports (egress.go).
	Egress EgressHooks
	// Suspended is where suspended calls are kept, shared with the
	// core's approvals so a gate can tell an answer it does not own
	// (a fresh in-memory store when nil).
	Suspended suspend.Store
	// OAuth is handed to the sources (sources.Env.OAuth).
	OAuth *oauthclient.Manager
	// Catalog stands between every source and the registry (pinning and
	// overrides, internal/catalog); nil publishes straight into the
	// registry. Apply configures it from the config's pinning and
	// overrides sections.
	Catalog *catalog.Catalog
	// Features is where MCP servers publish their resources, templates and
	// prompts (features.go); nil serves tools only. ResourceUpdated hears
	// their notifications/resources/updated.
	Features        *registry.Features
	ResourceUpdated func(id registry.LayerID, uri string)
	// StartInBackground makes the first Apply return without waiting for
	// the sources that reach out (MCP servers, OpenAPI specs, A2A agents):
	// they connect behind, shown as restarting until they do, and a
	// failure is retried as ever. WaitStarted waits for them. So a server
	// binds its listeners at once although an upstream hangs (a stdio MCP
	// server that never answers initialize holds its start for its whole
	// timeout, 30 s by default). Reloads still wait.
	StartInBackground bool
}

// Engine owns the sources and the registry they publish into.
type Engine struct {
	reg  *registry.Registry
	pub  sources.Publisher // the catalog, or reg without one
	opts Options
	log  *slog.Logger

	// ctx outlives every Start; it is cancelled by Close so background work
	// a source hangs on it ends with the engine.
	ctx    context.Context
	cancel context.CancelFunc

	// drainCtx ends the waits of replaced instances for their running
	// calls (cancelled first thing in Close); closing counts the instances
	// still waiting to be closed.
	drainCtx    context.Context
	drainCancel context.CancelFunc
	closing     sync.WaitGroup

	mu      sync.Mutex     // serialises Apply and Close
	retries sync.WaitGroup // the retry loops of failed instances (retry.go)
	// starting counts the first starts still running behind the first
	// Apply (StartInBackground, background.go); applied is set once
	// Apply has run, so later Applies (reloads) wait for their sources.
	starting  sync.WaitGroup
	applied   bool
	instances map[registry.LayerID]*instance
	skills    *skill.Source
	closed    bool

	// pending is shared by every source and outlives reloads, so a
	// suspended call stays answerable across one (pending.go).
	pending *pending.Store

	// egressPolicy is the policy section the egress proxy decides with
	// (egress.go).
	egressPolicy atomic.Pointer[config.Policy]
}

// refresher is a source that can re-read what its unchanged config points
// at (the skill source re-discovers SKILL.md files).
type refresher interface{ Rebuild() error }

type instance struct {
	src          sources.Source
	pub          *instancePublisher
	fingerprint  string
	startErr     error
	unconfigured bool
	// starting marks an instance whose first Start still runs in the
	// background (background.go); never changed once in the map.
	starting bool
	// stopRetry ends the retry loop of a failed instance (nil when none
	// runs); attempt is the publisher of a retry's start in progress, so a
	// reload can silence it. Both are guarded by Engine.mu.
	stopRetry func()
	attempt   *instancePublisher
}

// New makes an engine publishing into reg. Call Apply to load a config.
func New(reg *registry.Registry, opts Options) *Engine {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.Suspended == nil {
		opts.Suspended = suspend.NewMemory(nil, 0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	drainCtx, drainCancel := context.WithCancel(context.Background())
	var pub sources.Publisher = reg
	if opts.Catalog != nil {
		pub = opts.Catalog
	}
	return &Engine{reg: reg, pub: pub, opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel,
		drainCtx: drainCtx, drainCancel: drainCancel, instances: map[registry.LayerID]*instance{},
		pending: pending.New(opts.Suspended, pending.Limits{})}
}

// Registry returns the registry the engine publishes into.
func (e *Engine) Registry() *registry.Registry { return e.reg }

// Report says what an Apply changed.
type Report struct {
	Started []registry.LayerID // new or rebuilt instances
	Removed []registry.LayerID
	Failed  map[registry.LayerID]error
}

// planned is one source instance the config asks for.
type planned struct {
	id          registry.LayerID
	fingerprint string
	build       func() sources.Source
	// restart paces the retries of a failed start; nil for sources with
	// nothing remote to wait for (builtin, skill, debug, native).
	restart *mcp.Restart
	// unconfigured marks a source the config says nothing about (http
	// without tools or specs, skills without directories): it is listed
	// but has no toolnexus_source_up series, so a fresh install raises no
	// "source down" alert.
	unconfigured bool
}

// Apply makes the running sources match cfg. Unchanged instances keep
// running untouched; changed ones are started anew and swapped in (the new
// instance replaces the layer atomically, then the old one is closed);
// instances no longer configured are closed and their layers removed.
// A source that fails to start is reported, never fatal.
func (e *Engine) Apply(cfg *config.Config) (Report, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return Report{}, errors.New("engine is closed")
	}
	plan, err := e.plan(cfg)
	if err != nil {
		return Report{}, err
	}
	if e.opts.Catalog != nil {
		e.opts.Catalog.Configure(CatalogSettings(cfg))
	}

	rep := Report{Failed: map[registry.LayerID]error{}}
	want := map[registry.LayerID]bool{}
	var toStart []planned
	for _, p := range plan {
		want[p.id] = true
		// A failed instance is started anew whatever its fingerprint: the
		// reload is the operator saying "try again now".
		if old, ok := e.instances[p.id]; ok && old.fingerprint == p.fingerprint && !(p.restart != nil && old.failed()) {
			// Unchanged config, but what it points at may have changed
			// (new SKILL.md files): sources that can re-read do so.
			if r, ok := old.src.(refresher); ok && old.startErr == nil {
				if err := r.Rebuild(); err != nil {
					e.log.Warn("refreshing source", "source", p.id.String(), "error", err)
				}
			}
			continue
		}
		toStart = append(toStart, p)
	}

	// An instance being replaced stops publishing before its successor
	// starts, so it cannot overwrite the successor's tools.
	for _, p := range toStart {
		if old := e.instances[p.id]; old != nil {
			old.stopRetrying()
			old.pub.retire()
		}
	}
	// Start every new instance at once: each bounds itself by its own
	// timeout, so one slow MCP server does not delay the rest.
	started, behind := e.startAll(toStart)
	for i, p := range toStart {
		inst := started[i]
		old := e.instances[p.id]
		if inst.starting {
			e.instances[p.id] = inst
			rep.Started = append(rep.Started, p.id)
			if old != nil {
				e.release(p.id, old)
			}
			e.finishBehind(p, inst, behind[i])
			continue
		}
		if inst.startErr != nil {
			rep.Failed[p.id] = inst.startErr
			if old != nil {
				// The old instance's tools must not outlive it.
				_ = e.pub.Replace(p.id, nil)
				e.dropFeatures(p.id)
			}
		}
		if inst.failed() {
			e.logFailure(p, inst)
			if p.restart != nil {
				e.scheduleRetry(p, inst)
			}
		}
		e.instances[p.id] = inst
		rep.Started = append(rep.Started, p.id)
		if old != nil {
			e.release(p.id, old)
		}
		if s, ok := inst.src.(*skill.Source); ok {
			e.skills = s
		}
	}
	for id, inst := range e.instances {
		if want[id] {
			continue
		}
		inst.stopRetrying()
		inst.pub.retire()
		e.pub.Remove(id)
		e.dropFeatures(id)
		e.release(id, inst)
		delete(e.instances, id)
		rep.Removed = append(rep.Removed, id)
		if id.Kind == sources.KindSkill {
			e.skills = nil
		}
	}
	sortIDs(rep.Started)
	sortIDs(rep.Removed)
	return rep, nil
}

// sourceCloseBound bounds the Close of a source the engine retires on its
// own (a reload replaced it): killing a child and ending its goroutines
// takes far less; past it the rest ends in the background.
const sourceCloseBound = 10 * time.Second

func closeQuietly(log *slog.Logger, id registry.LayerID, src sources.Source) {
	ctx, cancel := context.WithTimeout(context.Background(), sourceCloseBound)
	defer cancel()
	if err := src.Close(ctx); err != nil {
		log.Warn("closing source", "source", id.String(), "error", err)
	}
}

// plan lists the instances cfg asks for, each with a fingerprint of
// everything that shapes it, so Apply can tell what changed.
func (e *Engine) plan(cfg *config.Config) ([]planned, error) {
	env := sources.Env{
		Logger:         e.log,
		BaseDir:        cfg.BaseDir,
		MaxOutputBytes: cfg.Limits.MaxOutputBytes,
		Tracing:        e.opts.Tracing,
		Pending:        e.pendingFor(cfg),
		OAuth:          e.opts.OAuth,
	}
	ws, err := e.workspace(cfg)
	if err != nil {
		return nil, err
	}
	env.Workspace = ws
	runner := e.sandboxRunner(cfg)
	if runner != nil {
		env.Sandbox = runner
	}

	var plan []planned
	// capped says whether the source reads Env.MaxOutputBytes (builtin,
	// http, a2a cap their own reads with it). Those that do not (mcp,
	// skill) leave it out of their fingerprint, so changing
	// limits.maxOutputBytes does not restart every MCP server: the
	// executor truncates their outputs anyway.
	add := func(id registry.LayerID, section any, capped bool, build func() sources.Source, restart *mcp.Restart) error {
		fpEnv := sources.Env{BaseDir: env.BaseDir, Workspace: env.Workspace}
		if capped {
			fpEnv.MaxOutputBytes = env.MaxOutputBytes
		}
		fp, err := json.Marshal(struct {
			Section any
			Env     sources.Env
		}{section, fpEnv})
		if err != nil {
			return fmt.Errorf("fingerprint %s: %w", id, err)
		}
		plan = append(plan, planned{id: id, fingerprint: string(fp), build: build, restart: restart})
		return nil
	}

	bcfg := cfg.Builtins
	bcfg.Workspace = ws
	bsection := struct {
		Builtins builtin.Config
		Sandbox  config.Sandbox
	}{bcfg, cfg.Sandbox}
	if err := add(registry.Layer(sources.KindBuiltin), bsection, true, func() sources.Source { return builtin.New(bcfg, env) }, nil); err != nil {
		return nil, err
	}
	scfg := cfg.Skills
	buildSkills := func() sources.Source { return skill.New(scfg, env) }
	if len(scfg.Dirs) == 0 {
		// No skill directories configured: no `skill` tool that could only
		// ever answer "not found" in the model's tool list.
		buildSkills = func() sources.Source { return sources.NewDisabled(registry.Layer(sources.KindSkill)) }
	}
	if err := add(registry.Layer(sources.KindSkill), scfg, false, buildSkills, nil); err != nil {
		return nil, err
	}
	plan[len(plan)-1].unconfigured = len(scfg.Dirs) == 0
	hcfg := cfg.HTTP
	if err := add(registry.Layer(sources.KindHTTP), hcfg, true, func() sources.Source { return http.New(hcfg, env) }, &defaultRestart); err != nil {
		return nil, err
	}
	plan[len(plan)-1].unconfigured = len(hcfg.Tools) == 0 && len(hcfg.OpenAPI) == 0
	for name, sc := range cfg.MCP {
		// A sandboxed server is started anew when the sandbox settings
		// it runs under change (network, read paths, limits, masks).
		section := any(sc)
		if sc.Sandbox != nil && runner != nil {
			section = struct {
				Server  mcp.ServerConfig
				Sandbox sandbox.Policy
				Egress  *config.Egress
			}{sc, runner.Policy, cfg.Sandbox.Egress}
		}
		if err := add(registry.LayerID{Kind: sources.KindMCP, Name: name}, section, false, func() sources.Source { return mcp.New(name, sc, env) }, &sc.Restart); err != nil {
			return nil, err
		}
	}
	for id, ac := range cfg.Agents {
		if err := add(registry.LayerID{Kind: sources.KindA2A, Name: id}, ac, true, func() sources.Source { return a2a.New(id, ac, env) }, &defaultRestart); err != nil {
			return nil, err
		}
	}
	if cfg.Debug {
		// The debug tools depend on nothing in the config, so their
		// fingerprint is constant: a reload that changes, say,
		// limits.maxOutputBytes must not rebuild them.
		plan = append(plan, planned{id: registry.Layer(sources.KindDebug), fingerprint: "debug",
			build: func() sources.Source { return debug.New() }})
	}
	if len(e.opts.Native) > 0 {
		// Native tools come from code, not config: same fingerprint every
		// time, so a reload never rebuilds them.
		plan = append(plan, planned{id: registry.Layer(sources.KindNative), fingerprint: "native",
			build: func() sources.Source { return native.New(e.opts.Native...) }})
	}
	if testPlanHook != nil {
		plan = append(plan, testPlanHook(cfg)...)
	}
	return plan, nil
}

// testPlanHook lets this package's tests add instances of sources they
// control to every plan (nil outside tests).
var testPlanHook func(cfg *config.Config) []planned

// workspace resolves the builtin tools' root: builtins.workspace (which
// --workspace overrides when the config is loaded), else ./workspace;
// relative to the config's directory. It is created if missing, so a fresh
// checkout's `make run` just works.
func (e *Engine) workspace(cfg *config.Config) (string, error) {
	ws := cfg.Builtins.Workspace
	if ws == "" {
		ws = "workspace"
	}
	ws = cfg.Resolve(ws)
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", &config.Error{Key: "builtins.workspace", Msg: err.Error()}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", &config.Error{Key: "builtins.workspace", Msg: fmt.Sprintf("cannot create %s: %v", abs, err)}
	}
	return abs, nil
}

// Close stops every source (child processes included) and waits for them
// until ctx ends.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	// Shutting down: the server has drained its calls already, so replaced
	// instances still waiting for theirs are closed now too.
	e.drainCancel()
	for _, inst := range e.instances {
		inst.stopRetrying()
	}
	// A retry loop takes mu to swap its instance in: wait for the loops
	// without it (they see closed and end).
	e.mu.Unlock()
	e.retries.Wait()
	e.mu.Lock()
	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for id, inst := range e.instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := inst.src.Close(ctx); err != nil {
				emu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := waitctx.Group(ctx, &e.closing); err != nil {
		errs = append(errs, fmt.Errorf("replaced sources still closing: %w", err))
	}
	e.cancel()
	return errors.Join(errs...)
}

// SourceInfo is one row of ListSources.
type SourceInfo struct {
	sources.Status
	ToolCount int
	Shadowed  []string
	// Configured is false for a source the config says nothing about
	// (http without tools or specs, skills without directories).
	Configured bool
}

// Sources reports every instance, sorted by precedence then name.
func (e *Engine) Sources() []SourceInfo {
	e.mu.Lock()
	insts := make([]*instance, 0, len(e.instances))
	for _, inst := range e.instances {
		insts = append(insts, inst)
	}
	e.mu.Unlock()

	snap := e.reg.Snapshot()
	shadowed := map[registry.LayerID][]string{}
	for _, s := range snap.Shadowed() {
		shadowed[s.Hidden] = append(shadowed[s.Hidden], s.Name)
	}
	out := make([]SourceInfo, 0, len(insts))
	for _, inst := range insts {
		st := inst.src.Status()
		st.Layer = inst.src.Layer()
		if inst.startErr != nil && st.State == "" {
			st.State, st.Error = sources.Failed, inst.startErr.Error()
		}
		if inst.starting && st.State != sources.Failed && st.State != sources.Disabled {
			// A source may say connected before its first Start has (MCP
			// does, from construction): until Start returns it is not.
			st.State, st.Error = sources.Restarting, startingNote
		}
		out = append(out, SourceInfo{Status: st, ToolCount: snap.LayerCount(st.Layer), Shadowed: shadowed[st.Layer], Configured: !inst.unconfigured})
	}
	slices.SortFunc(out, func(a, b SourceInfo) int { return a.Layer.Compare(b.Layer) })
	return out
}

// Skills returns the skill source, or nil when none runs.
func (e *Engine) Skills() *skill.Source {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.skills
}

func sortIDs(ids []registry.LayerID) {
	slices.SortFunc(ids, registry.LayerID.Compare)
}
