// Package executor is what the core's pipeline (internal/core/pipeline.go)
// needs to know about each tool, prepared per snapshot off the hot path:
// the tool's registry entry, its compiled input schema, its limits and
// semaphores, its metric handles and span data. The pipeline's steps use
// it to validate a call's arguments (Prepared.Arguments), to hold its
// concurrency slots and timeout (Prepared.Acquire), to run it
// (Prepared.Run) and to record it (Executor.Start, Record.End). A call is
// an atomic load, a map read and the tool itself — no lock, no per-call
// compile. The order of the steps is the core's, in one list; nothing here
// decides who may call what.
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

// Prepared is the tool called name in the current table, nil when no tool
// has that name: one atomic load and a map read. A call keeps the one it
// started with, whatever snapshot is published meanwhile.
func (x *Executor) Prepared(name string) *Prepared { return x.table.Load().tools[name] }

// Record is one call's metrics while it runs (Start), recorded when it
// ends (End). It is a value: starting one allocates nothing.
type Record struct {
	x     *Executor
	p     *Prepared
	proto int
	start time.Time
}

// Start counts a call to p (nil: a name no tool has) in flight under
// protocol's label.
func (x *Executor) Start(p *Prepared, protocol string) Record {
	r := Record{x: x, p: p, proto: protocolIndex(protocol)}
	if p != nil {
		p.sourceState.inFlight[r.proto].Inc()
		r.start = time.Now()
	}
	return r
}

// End records the call's outcome: toolnexus_tool_calls_total (a name no
// tool has under "unknown", so junk names add no series), the duration
// histogram (with the trace id as an exemplar when tracing is on), the
// in-flight gauge and the sandbox refusal, if any. It is the one place a
// call's outcome is counted.
func (r Record) End(ctx context.Context, o tool.Outcome, refusal tool.Refusal) {
	p := r.p
	if p == nil {
		r.x.metrics.Calls(UnknownLabel, UnknownLabel, o.String(), protocols[r.proto]).Inc()
		return
	}
	ss := p.sourceState
	ss.inFlight[r.proto].Dec()
	if r.x.exemplars {
		now := time.Now()
		observeTraced(ctx, ss.duration[r.proto], r.x.buckets, ss.exemplars[r.proto], now.Sub(r.start).Seconds(), now)
	} else {
		ss.duration[r.proto].Observe(time.Since(r.start).Seconds())
	}
	p.counter(r.x.metrics, r.proto, o).Inc()
	if refusal != tool.RefusalNone {
		ss.refusals.Inc(refusal)
	}
}

// Count records an outcome no call through the pipeline produced: a panic
// a front-end recovered while decoding or encoding (core.Recovered).
func (x *Executor) Count(p *Prepared, protocol string, o tool.Outcome) {
	proto := protocolIndex(protocol)
	if p == nil {
		x.metrics.Calls(UnknownLabel, UnknownLabel, o.String(), protocols[proto]).Inc()
		return
	}
	p.counter(x.metrics, proto, o).Inc()
}

// Entry is the tool's registry entry (name, source, schema, annotations).
func (p *Prepared) Entry() *registry.Entry { return p.entry }

// Source is the tool's source label.
func (p *Prepared) Source() string { return p.source }

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
	markTruncated(&res)
	return res
}

// markTruncated sets "truncated" in res's metadata, on a copy: the map
// may be the tool's own, shared by every result it returns. The output
// and the content cut both say so this way.
func markTruncated(res *tool.Result) {
	meta := make(map[string]any, len(res.Metadata)+1)
	for k, v := range res.Metadata {
		meta[k] = v
	}
	meta["truncated"] = true
	res.Metadata = meta
}

// table is everything a call needs for one snapshot, built off the hot path.
type table struct {
	snap    *registry.Snapshot
	tools   map[string]*Prepared
	sources map[string]*sourceState
}

type sourceState struct {
	inFlight [len(protocols)]Gauge
	duration [len(protocols)]Observer
	// exemplars paces the duration exemplars (tracing on only).
	exemplars [len(protocols)]exemplarClock
	// refusals counts the calls a sandbox guard or limit refused.
	refusals RefusalCounter
}

// Prepared is one tool's call state in one table. A rebuild makes them all
// in one slice (one allocation for any number of tools); what is worth
// keeping across revisions lives in toolMeta.
type Prepared struct {
	entry     *registry.Entry
	source    string
	validate  bool
	timeout   time.Duration
	maxOutput int
	global    chan struct{} // limits.maxConcurrency, shared by every tool; nil = none
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

func (s *Prepared) check(args json.RawMessage) string { return s.meta.check(args) }

// counter returns the calls_total child for this tool, created on first use
// so idle tools and unused outcomes add no series.
func (s *Prepared) counter(m Meter, proto int, o tool.Outcome) Counter {
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
		tools:   make(map[string]*Prepared, len(entries)),
		sources: map[string]*sourceState{},
	}
	states := make([]Prepared, len(entries))
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
		states[i] = Prepared{
			entry:     e,
			source:    e.Tool.Source,
			validate:  *lim.ValidateArguments,
			timeout:   *lim.Timeout,
			maxOutput: *lim.MaxOutputBytes,
			global:    x.global,
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
