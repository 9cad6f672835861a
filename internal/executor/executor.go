// Package executor is the one Execute path every protocol shares (gRPC and
// the MCP gateway): resolve the name in the current snapshot, check the
// caller's allowlist, validate the arguments, apply the limits, run the tool
// and record the per-source metrics. Everything a call needs is prepared per
// snapshot, off the hot path: a call is an atomic load, a map read and the
// tool itself — no lock, no per-call compile.
package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/internal/limits"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/internal/truncation"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Protocol labels for the per-source series.
const (
	ProtocolGRPC = "grpc"
	ProtocolMCP  = "mcp"
)

var protocols = [...]string{ProtocolGRPC, ProtocolMCP}

func protocolIndex(p string) int {
	if p == ProtocolMCP {
		return 1
	}
	return 0
}

// Allow decides whether the caller may use a tool; nil allows everything.
type Allow func(name, source string) bool

// Request is one call.
type Request struct {
	Name string
	// Arguments is the arguments object as JSON; nil or empty means {}.
	Arguments json.RawMessage
	Answer    *tool.Answer
	// Protocol is ProtocolGRPC or ProtocolMCP (the metrics label).
	Protocol string
	// Allow is the caller's allowlist (nil = every tool).
	Allow Allow
	// Owner is who calls (handed to the tool as tool.Call.Owner).
	Owner tool.Owner
	// Gate is the policy step's check of this call (nil = none).
	Gate Gate
	// Principal is the caller's name, for the per-principal concurrency
	// caps ("" = the anonymous caller when auth is off).
	Principal string
}

// Executor runs calls against a registry under the configured limits.
type Executor struct {
	reg     *registry.Registry
	metrics Meter
	// buckets are the duration histogram's bounds (exemplar pacing).
	buckets []float64
	log     *slog.Logger

	table       atomic.Pointer[table]
	unsubscribe func()

	mu     sync.Mutex // serialises table rebuilds (writers only)
	limits limits.Limits
	global chan struct{}             // global concurrency cap, nil = none
	sems   map[string]chan struct{}  // per-tool caps by name, kept across rebuilds
	psems  map[string]*principalSems // per-principal caps by tool name, kept across rebuilds
	metas  map[string]*toolMeta      // per-tool metric handles and schemas, kept across rebuilds

	// exemplars attaches the trace id to duration observations (tracing on).
	exemplars bool

	// handler is the composed steps of a call (Compose), set once.
	handler Handler
}

// New makes an executor for reg and subscribes it to reg's changes, so its
// table follows every published snapshot; Close unsubscribes.
func New(reg *registry.Registry, m Meter, lim limits.Limits, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.Default()
	}
	x := &Executor{reg: reg, metrics: m, buckets: m.DurationBuckets(), log: log, sems: map[string]chan struct{}{}, psems: map[string]*principalSems{}, metas: map[string]*toolMeta{}}
	x.unsubscribe = reg.Subscribe(func(_, next *registry.Snapshot) { x.rebuild(next) })
	x.SetLimits(lim) // builds the first table from the current snapshot
	x.Compose(x.DefaultSteps()...)
	return x
}

// Close stops following the registry. Calls keep working on the last table.
func (x *Executor) Close() { x.unsubscribe() }

// Rebuild refreshes the table from the registry's current snapshot.
func (x *Executor) Rebuild() { x.rebuild(x.reg.Snapshot()) }

// SetLimits swaps the limits (on reload) and rebuilds the table.
func (x *Executor) SetLimits(l limits.Limits) {
	x.mu.Lock()
	x.limits = l
	if l.MaxConcurrency > 0 {
		if x.global == nil || cap(x.global) != l.MaxConcurrency {
			x.global = make(chan struct{}, l.MaxConcurrency)
		}
	} else {
		x.global = nil
	}
	x.mu.Unlock()
	x.rebuild(x.reg.Snapshot())
}

// Snapshot is the snapshot the current table was built from.
func (x *Executor) Snapshot() *registry.Snapshot {
	if t := x.table.Load(); t != nil {
		return t.snap
	}
	return x.reg.Snapshot()
}

// Execute runs one call. It always returns a Result; a failure is a value.
// The returned source is the label the call was counted under.
func (x *Executor) Execute(ctx context.Context, req Request) (res tool.Result, source string) {
	proto := protocolIndex(req.Protocol)
	tab := x.table.Load()
	st := tab.tools[req.Name]
	if st == nil {
		x.countUnknown(proto)
		return registry.UnknownTool(req.Name), UnknownLabel
	}
	source = st.source
	start := time.Now()
	ss := st.sourceState
	ss.inFlight[proto].Inc()
	defer func() {
		if v := recover(); v != nil {
			// Anything around the tool itself (validation, truncation...)
			// that panics is still a result, never a crashed call.
			res = tool.FailureWith(tool.OutcomePanic, panics.Log(x.log, req.Name, v))
		}
		ss.inFlight[proto].Dec()
		if x.exemplars {
			now := time.Now()
			observeTraced(ctx, ss.duration[proto], x.buckets, ss.exemplars[proto], now.Sub(start).Seconds(), now)
		} else {
			ss.duration[proto].Observe(time.Since(start).Seconds())
		}
		st.counter(x.metrics, proto, res.Resolved()).Inc()
		if res.Refusal != tool.RefusalNone {
			ss.refusals.Inc(res.Refusal)
		}
	}()
	return x.handler(ctx, Call{Request: req, Entry: st.entry, Args: req.Arguments, st: st, tab: tab}), source
}

var emptyObject = json.RawMessage("{}")

// isObject reports whether args is one well-formed JSON object. json.Valid
// does not allocate, so this costs one pass over the bytes.
func isObject(args []byte) bool {
	for _, c := range args {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return json.Valid(args)
		}
		return false
	}
	return false
}

func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func limitResult(ctx context.Context, name, which string) tool.Result {
	r := tool.ContextResult(ctx, name)
	r.Output = fmt.Sprintf("%s: not started: waited for %s until the call's deadline; retry later", name, which)
	return r
}

// TruncationMarker introduces the note appended to a truncated output.
const TruncationMarker = "\n[output truncated: "

// truncate cuts an output longer than limit and appends the one
// truncation note. When the tool already cut its output (a source bounds
// what it holds in memory), that note is taken off and its count added, so
// the caller reads one note with the true number of bytes it did not get.
func truncate(res tool.Result, limit int) tool.Result {
	body, prior := truncation.Split(res.Output)
	cut := min(limit, len(body))
	// Never split a UTF-8 character: back up to a rune start.
	for cut > 0 && cut < len(body) && body[cut]&0xC0 == 0x80 {
		cut--
	}
	omitted := prior + int64(len(body)-cut)
	res.Output = body[:cut] + fmt.Sprintf("%s%d bytes omitted; limits.maxOutputBytes is %d]", TruncationMarker, omitted, limit)
	meta := make(map[string]any, len(res.Metadata)+1)
	for k, v := range res.Metadata {
		meta[k] = v
	}
	meta["truncated"] = true
	res.Metadata = meta
	return res
}

func (x *Executor) countUnknown(proto int) {
	x.metrics.Calls(UnknownLabel, UnknownLabel, tool.OutcomeUnknownTool.String(), protocols[proto]).Inc()
}

// table is everything Execute needs for one snapshot, built off the hot path.
type table struct {
	snap    *registry.Snapshot
	tools   map[string]*toolState
	sources map[string]*sourceState
	global  chan struct{}
}

type sourceState struct {
	inFlight [len(protocols)]Gauge
	duration [len(protocols)]Observer
	// exemplars paces the duration exemplars (tracing on only).
	exemplars [len(protocols)]exemplarClock
	// refusals counts the calls a sandbox guard or limit refused.
	refusals RefusalCounter
}

// toolState is one tool's prepared call state in one table. A rebuild
// makes them all in one slice (one allocation for any number of tools);
// what is worth keeping across revisions lives in toolMeta.
type toolState struct {
	entry     *registry.Entry
	source    string
	validate  bool
	timeout   time.Duration
	maxOutput int
	sem       chan struct{}
	psem      *principalSems // nil = no per-principal cap
	meta      *toolMeta
	// sourceState holds the source's metric handles, so a call finds them
	// without a second map lookup.
	sourceState *sourceState
}

// toolMeta is what outlives a revision for a tool name: its metric handles
// and its compiled schema. It is reused as long as the tool keeps its
// source and its schema bytes, so replacing a 10,000-tool layer with the
// same tools allocates nothing per tool and recompiles nothing.
type toolMeta struct {
	name, source string
	schemaSrc    json.RawMessage

	counters [len(protocols)][tool.OutcomePending + 1]atomic.Pointer[Counter]

	// span is the tool's span name and attributes, made on its first
	// traced call (Span).
	span atomic.Pointer[ToolSpan]

	log        *slog.Logger
	schemaOnce sync.Once
	schema     schemaChecker
}

func (s *toolState) check(args json.RawMessage) string { return s.meta.check(args) }

// counter returns the calls_total child for this tool, created on first use
// so idle tools and unused outcomes add no series.
func (s *toolState) counter(m Meter, proto int, o tool.Outcome) Counter {
	if int(o) >= len(s.meta.counters[proto]) {
		o = tool.OutcomeToolError
	}
	slot := &s.meta.counters[proto][o]
	if c := slot.Load(); c != nil {
		return *c
	}
	c := m.Calls(s.meta.source, s.meta.name, o.String(), protocols[proto])
	slot.Store(&c)
	return c
}

func (x *Executor) rebuild(snap *registry.Snapshot) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.table.Load()
	if old != nil && old.snap.Revision() > snap.Revision() {
		return // a newer snapshot is already in place
	}
	entries := snap.Entries()
	t := &table{
		snap:    snap,
		tools:   make(map[string]*toolState, len(entries)),
		sources: map[string]*sourceState{},
		global:  x.global,
	}
	states := make([]toolState, len(entries))
	for i, e := range entries {
		lim := x.limits.For(e.Tool.Name)
		var sem chan struct{}
		if n := *lim.MaxConcurrency; n > 0 {
			sem = x.sems[e.Tool.Name]
			if sem == nil || cap(sem) != n {
				sem = make(chan struct{}, n)
				x.sems[e.Tool.Name] = sem
			}
		}
		var psem *principalSems
		if p := lim.MaxConcurrencyPerPrincipal; p != nil && *p > 0 {
			psem = x.psems[e.Tool.Name]
			if psem == nil || psem.n != *p {
				psem = &principalSems{n: *p}
				x.psems[e.Tool.Name] = psem
			}
		}
		meta := x.metas[e.Tool.Name]
		if meta == nil || meta.source != e.Tool.Source || !bytes.Equal(meta.schemaSrc, e.Tool.InputSchema) {
			meta = &toolMeta{name: e.Tool.Name, source: e.Tool.Source, schemaSrc: e.Tool.InputSchema, log: x.log}
			x.metas[e.Tool.Name] = meta
		}
		states[i] = toolState{
			entry:     e,
			source:    e.Tool.Source,
			validate:  *lim.ValidateArguments,
			timeout:   *lim.Timeout,
			maxOutput: *lim.MaxOutputBytes,
			sem:       sem,
			psem:      psem,
			meta:      meta,
		}
		states[i].sourceState = x.ensureSource(t, e.Tool.Source)
		t.tools[e.Tool.Name] = &states[i]
	}
	// Forget the metas of tools that are gone, so the map does not grow
	// with every name ever registered.
	if len(x.metas) > len(entries) {
		for name := range x.metas {
			if _, ok := t.tools[name]; !ok {
				delete(x.metas, name)
			}
		}
	}
	x.table.Store(t)
}

func (x *Executor) ensureSource(t *table, source string) *sourceState {
	if ss, ok := t.sources[source]; ok {
		return ss
	}
	ss := &sourceState{refusals: x.metrics.Refusals(source)}
	for i, p := range protocols {
		ss.inFlight[i] = x.metrics.InFlight(source, p)
		ss.duration[i] = x.metrics.Duration(source, p)
		if x.exemplars {
			ss.exemplars[i] = newExemplarClock(x.buckets)
		}
	}
	t.sources[source] = ss
	return ss
}
