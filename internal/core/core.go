// Package core is toolnexus without any wire protocol: the registry, the
// executor that runs every call, the engine that turns a config into
// running sources, the authenticator and the per-source metrics, behind
// one small API — start from a config, Execute, Watch, Apply a new config,
// Close. The gRPC service and the MCP gateway are thin front-ends over it;
// each translates only its own wire format, so a rule about calls (limits,
// validation, allowlists, panics, metrics) lives here, once.
//
// docs/architecture.md draws the rooms and the path of one call.
package core

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/engine"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Options configures a Core.
type Options struct {
	// Logger receives everything the core and the sources log (slog.Default when nil).
	Logger *slog.Logger
	// Metrics is where the toolnexus_* series register (a fresh registry when nil).
	Metrics prometheus.Registerer
	// Native are the embedding program's own Go tools (layer "native").
	Native []tool.Tool
	// SessionDeleted hears every session whose workspace was deleted
	// (reason "expired" or "deleted"), for the audit trail.
	SessionDeleted func(info SessionInfo, reason string)
	// Tracing is the tracer provider (internal/telemetry); nil = tracing
	// off: no span is started and nothing is propagated.
	Tracing trace.TracerProvider
	// AuditStderr is where the audit log goes when audit.path is empty
	// (os.Stderr when nil).
	AuditStderr io.Writer
	// Cluster is the replicas' shared control plane (cluster.redis); nil
	// keeps everything in this process.
	Cluster *cluster.Client
	// Suspended keeps the suspended calls (approvals, elicitations...);
	// an in-memory store when nil. A shared store lets any replica
	// answer a call another suspended.
	Suspended suspend.Store
	// OAuth connects each caller's own account at upstreams with an
	// "oauth" section (handed to the sources); nil: such an upstream
	// fails to start.
	OAuth *oauthclient.Manager
	// OnStep, when set, hears every step of the pipeline each call enters
	// (StepObserve, StepView...), in order: a test's way to show that a
	// door skips none. Nil costs a call nothing.
	OnStep func(ctx context.Context, step string, call Call)
	// SourcesInBackground lets New return before the sources that reach
	// an upstream (MCP, http, A2A) have connected; WaitSourcesStarted
	// waits for them (engine.Options.StartInBackground).
	SourcesInBackground bool
}

// Core is one running tool set.
type Core struct {
	log      *slog.Logger
	reg      *registry.Registry
	exec     *executor.Executor
	eng      *engine.Engine
	metrics  *metrics.Metrics
	sessions *session.Manager
	box      *sandbox.Sandbox

	cfg      atomic.Pointer[config.Config]
	auth     atomic.Pointer[auth.Authenticator]
	authOpts auth.Options // shared by the authenticators of every reload

	// policy is nil while no policy files are set; limiter nil while no
	// rate limit is (policy.go).
	policy  atomic.Pointer[policyState]
	limiter atomic.Pointer[ratelimit.Limiter]
	pol     policyParts

	applyMu sync.Mutex // serialises Apply

	// tracer starts the execute_tool spans; nil when tracing is off.
	tracer trace.Tracer
	// audit is the audit log (off unless the config has an audit section).
	audit *audit.Log
	// cluster is the shared control plane; nil with one replica.
	cluster *cluster.Client
	// handler is the pipeline, composed once (pipeline.go).
	handler handler
	// served are the doors' narrowings of the tool set (view.go).
	served atomic.Pointer[served]
	// codeMode serves run_code and describe_tools (set at start).
	codeMode bool
	// interpreters caps the run_code interpreters at once (codeMode.maxConcurrency*).
	interpreters codemode.Pool
	// catalog stands between the sources and the registry: pinning and
	// overrides (catalog.go); pinsDir is where its pins are kept ("" in
	// Redis or nowhere), fixed at start.
	catalog *catalog.Catalog
	pinsDir string

	// features are the MCP servers' resources, templates and prompts,
	// hub their subscriptions (features.go, subscriptions.go).
	features       *registry.Features
	hub            *resourceHub
	featureMetrics *metrics.Features
}

// New starts every source of cfg. Sources that fail to start are reported
// by Sources and logged; they never fail New. cfg must already be validated
// (config.Load / config.Parse) with any overrides applied.
func New(cfg *config.Config, opts Options) (*Core, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	promReg := opts.Metrics
	if promReg == nil {
		promReg = prometheus.NewRegistry()
	}
	c := &Core{log: log, reg: registry.New(registry.WithLogger(log)), cluster: opts.Cluster,
		features: registry.NewFeatures(log), hub: newResourceHub()}
	c.metrics = metrics.New(promReg)
	c.featureMetrics = metrics.NewFeatures(promReg, featureOutcomes)
	c.authOpts = authOptions(promReg, log)
	kinds := make([]string, 0, len(sources.Kinds()))
	for _, k := range sources.Kinds() {
		kinds = append(kinds, k.Name)
	}
	c.metrics.InitRefusals(kinds)
	suspended := opts.Suspended
	if suspended == nil {
		suspended = suspend.NewMemory(nil, 0)
	}
	c.initPolicy(cfg, promReg, kinds, suspended)
	box, err := newSandbox(cfg, log)
	if err != nil {
		return nil, err
	}
	c.box = box
	c.exec = executor.New(c.reg, c.metrics.ForExecutor(), cfg.Limits, log)
	native := opts.Native
	if cfg.CodeMode.Enabled {
		c.codeMode = true
		native = append(slices.Clip(native), c.codeModeTools()...)
	}
	c.handler = c.compose(opts.OnStep)
	c.served.Store(newServed(cfg.Server.MCP))
	if err := c.newCatalog(cfg, opts.Cluster, promReg, kinds); err != nil {
		c.exec.Close()
		box.Close()
		return nil, err
	}
	c.eng = engine.New(c.reg, engine.Options{Logger: log, Native: native, Tracing: opts.Tracing, Sandbox: box, Suspended: suspended, OAuth: opts.OAuth,
		Catalog:           c.catalog,
		StartInBackground: opts.SourcesInBackground,
		Egress:            engine.EgressHooks{Audit: func(r egress.Record) { c.audit.Egress(r) }, Metrics: egress.NewMetrics(promReg)},
		Features:          c.features, ResourceUpdated: c.resourceUpdated})
	c.serveForwards()
	c.audit = audit.New(opts.AuditStderr)
	if err := c.audit.Configure(cfg.Audit, cfg.AuditPath()); err != nil {
		c.exec.Close()
		box.Close()
		return nil, err
	}
	if opts.Tracing != nil {
		c.tracer = opts.Tracing.Tracer(telemetryScope)
		c.exec.EnableExemplars()
	}
	metrics.RegisterState(promReg, c.stateForMetrics)
	c.cfg.Store(cfg)
	if au := c.newAuthenticator(cfg.Auth); au != nil {
		c.auth.Store(au)
	}
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w)
	}
	root, err := cfg.SessionsRoot()
	if err != nil {
		c.exec.Close()
		_ = c.audit.Close()
		box.Close()
		return nil, err
	}
	_, err = c.eng.Apply(cfg)
	if err != nil {
		c.exec.Close()
		_ = c.audit.Close()
		box.Close()
		return nil, err
	}
	c.sessions, err = session.New(session.Options{Root: root, Limits: cfg.Sessions, Logger: log, Metrics: promReg,
		OnDelete: func(info session.Info, reason string) {
			c.audit.SessionDeleted(context.Background(), info.Principal, info.ID, reason)
			if opts.SessionDeleted != nil {
				opts.SessionDeleted(info, reason)
			}
		}})
	if err != nil {
		c.exec.Close()
		_ = c.eng.Close(context.Background())
		c.catalog.Close()
		_ = c.audit.Close()
		box.Close()
		key := "builtins.workspace"
		if cfg.Sessions.Root != "" {
			key = "sessions.root"
		}
		return nil, &config.Error{Key: key, Msg: err.Error()}
	}
	// A failed source is not fatal: the engine logged it once and retries it.
	return c, nil
}

// Registry is the core's registry, e.g. to publish tools from code.
func (c *Core) Registry() *registry.Registry { return c.reg }

// Snapshot is the snapshot calls run against right now.
func (c *Core) Snapshot() *registry.Snapshot { return c.exec.Snapshot() }

// Watch follows the registry; see registry.Registry.Watch.
func (c *Core) Watch() (*registry.Watcher, *registry.Snapshot) { return c.reg.Watch() }

// Config is the config in force.
func (c *Core) Config() *config.Config { return c.cfg.Load() }

// Metrics are the per-source series, for front-ends that count what never
// reaches Execute.
func (c *Core) Metrics() *metrics.Metrics { return c.metrics }

// Audit is the audit log: front-ends and helpers record what Execute does
// not see through it (a reload, a session deletion). Its methods are
// no-ops while the audit log is off.
func (c *Core) Audit() *audit.Log { return c.audit }

// Authenticator checks bearer tokens; nil when auth is off.
func (c *Core) Authenticator() *auth.Authenticator { return c.auth.Load() }

// Report says what Apply changed, in "kind/name" terms.
type Report struct {
	Revision uint64
	Started  []string // new or rebuilt source instances
	Removed  []string
	Failed   map[string]error
	// Replicas are every replica's outcome when a reload was broadcast
	// over the control plane (cluster.redis), this one first; ReplicasErr
	// says why the others could not be asked.
	Replicas    []cluster.ReplicaReload
	ReplicasErr error
}

// Apply makes the core run cfg: only source instances whose config changed
// are rebuilt; limits and tokens swap. An error leaves the old config in
// force (a source failing to start is not an error: it is in Failed).
// Whatever a front-end cannot apply at run time (listeners) it checks before
// calling Apply.
func (c *Core) Apply(cfg *config.Config) (Report, error) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	if err := checkSandboxMode(c.cfg.Load(), cfg); err != nil {
		return Report{}, err
	}
	if err := checkCodeMode(c.cfg.Load(), cfg); err != nil {
		return Report{}, err
	}
	if err := c.checkPinning(cfg); err != nil {
		return Report{}, err
	}
	// The audit file is (re)opened first: a path that cannot be opened
	// rejects the reload; a reload reopens it, which is how a rotated file
	// is let go.
	nextAudit, err := c.audit.Prepare(cfg.Audit, cfg.AuditPath())
	if err != nil {
		c.metrics.Reloads.WithLabelValues("error").Inc()
		return Report{}, err
	}
	rep, err := c.eng.Apply(cfg)
	if err != nil {
		nextAudit.Discard()
		c.metrics.Reloads.WithLabelValues("error").Inc()
		return Report{}, err
	}
	c.audit.Commit(nextAudit)
	for _, w := range cfg.Warnings {
		c.log.Warn("config: " + w)
	}
	c.exec.SetLimits(cfg.Limits)
	c.sessions.SetLimits(cfg.Sessions)
	c.auth.Store(c.newAuthenticator(cfg.Auth))
	c.applyPolicy(cfg)
	c.served.Store(newServed(cfg.Server.MCP))
	c.cfg.Store(cfg)
	c.metrics.Reloads.WithLabelValues("ok").Inc()
	out := Report{Revision: c.reg.Snapshot().Revision(), Failed: map[string]error{}}
	for _, id := range rep.Started {
		out.Started = append(out.Started, id.String())
	}
	for _, id := range rep.Removed {
		out.Removed = append(out.Removed, id.String())
	}
	for id, e := range rep.Failed {
		out.Failed[id.String()] = e
	}
	return out, nil
}

// RejectApply counts a reload that a front-end refused before Apply (a
// config that does not parse, a listener change it cannot make), so
// toolnexus_reloads_total sees every attempt.
func (c *Core) RejectApply() { c.metrics.Reloads.WithLabelValues("error").Inc() }

// Close stops every source, child processes included, waiting for them
// until ctx ends.
func (c *Core) Close(ctx context.Context) error {
	c.exec.Close()
	c.sessions.Close()
	c.hub.close()
	err := c.eng.Close(ctx)
	c.catalog.Close()
	if aerr := c.audit.Close(); err == nil {
		err = aerr
	}
	c.box.Close()
	return err
}

// SourceInfo is one source instance as ListSources shows it.
type SourceInfo struct {
	Kind, Name string
	State      sources.State
	Error      string
	// Sandbox is how the source's processes are confined ("" = not).
	Sandbox   string
	ToolCount int
	Shadowed  []string
	// Title and Description are what the source says about itself
	// (sources.Status), for tool search.
	Title, Description string
}

// WaitSourcesStarted waits until the sources New left connecting in the
// background (Options.SourcesInBackground) have connected or failed, or
// ctx ends.
func (c *Core) WaitSourcesStarted(ctx context.Context) error { return c.eng.WaitStarted(ctx) }

// Sources reports every source instance, in precedence order.
func (c *Core) Sources() []SourceInfo {
	infos := c.eng.Sources()
	out := make([]SourceInfo, len(infos))
	for i, in := range infos {
		out[i] = SourceInfo{Kind: in.Layer.Kind.String(), Name: in.Layer.Name, State: in.State, Error: in.Error, Sandbox: in.Sandbox,
			ToolCount: in.ToolCount, Shadowed: in.Shadowed, Title: in.Title, Description: in.Description}
	}
	return out
}

// Skill and SkippedSkill are the skill inventory's rows.
type (
	Skill        struct{ Name, Description, Dir, Path string }
	SkippedSkill struct{ Path, Reason, Detail string }
)

// Skills is the skill inventory; empty without a skill source.
func (c *Core) Skills() ([]Skill, []SkippedSkill) {
	sk := c.eng.Skills()
	if sk == nil {
		return nil, nil
	}
	skills, skipped := sk.Inventory()
	out := make([]Skill, len(skills))
	for i, k := range skills {
		out[i] = Skill{Name: k.Name, Description: k.Description, Dir: k.Dir, Path: k.Path}
	}
	outSkipped := make([]SkippedSkill, len(skipped))
	for i, k := range skipped {
		outSkipped[i] = SkippedSkill{Path: k.Path, Reason: k.Reason, Detail: k.Detail}
	}
	return out, outSkipped
}

// SkillsPrompt is the skills catalog text for a system prompt.
func (c *Core) SkillsPrompt() string { return c.eng.Skills().PromptFor(everyone) }

// everyone allows every tool: the catalog as a caller without an
// allowlist sees it.
func everyone(string, string) bool { return true }

// stateForMetrics feeds the scrape-time gauges.
func (c *Core) stateForMetrics() (map[string]int, []metrics.SourceState, uint64) {
	snap := c.reg.Snapshot()
	bySource := map[string]int{}
	for _, e := range snap.Entries() {
		bySource[e.Tool.Source]++
	}
	infos := c.eng.Sources()
	inst := make([]metrics.SourceState, 0, len(infos))
	for _, in := range infos {
		if in.Configured { // no "source down" for what the config never asked for
			inst = append(inst, metrics.SourceState{Kind: in.Layer.Kind.String(), Name: in.Layer.Name, Up: in.State == sources.Connected})
		}
	}
	return bySource, inst, snap.Revision()
}
