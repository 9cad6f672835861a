// Package mcpgateway is the MCP front-end of the core: it serves the tool
// set to agents that speak MCP rather than gRPC, as one streamable-HTTP
// endpoint, /mcp. The server (pkg/server) owns its listener
// (server.mcp.listen or --mcp-listen; off unless set) and its TLS.
//
// It translates MCP to core calls and back and nothing else:
//
//   - tools/list is the SDK server's tool set, which a watcher keeps equal to
//     the registry snapshot (names verbatim, schemas as registered, sorted in
//     byte order) as /mcp serves it (server.mcp.tools), narrowed per request
//     to the caller's view (core.View: its token's allowlist, and the named
//     view of /mcp/NAME). The SDK announces every change to connected
//     clients with notifications/tools/list_changed.
//   - tools/call goes through core.Execute with the request's context, its
//     door (protocol "mcp") and its view, so limits, validation, the view,
//     policies and the per-source metrics are exactly those of gRPC
//     Execute; the core, not the gateway, holds a call to what /mcp does
//     not serve.
//   - the same bearer tokens guard it: a request without a valid
//     "Authorization: Bearer" header is refused with 401 before the SDK sees
//     it, and the token's allowlist filters tools/list and denies calls.
//
// A ToolResult becomes one text content part holding Output, with isError
// copied — or, for a rich result, its parts as MCP content (text, image,
// audio, embedded resource, resource link). A tools/call with
// _meta.progressToken gets the tool's progress as notifications/progress;
// a client that sent logging/setLevel gets the tool's log messages and live
// output as notifications/message at that level, all before the result. The rest of the result is for the agent's code, not the model, so
// it goes in the result's _meta rather than structuredContent (which MCP
// clients may hand to the model in place of the text, and which is meant to
// match an outputSchema these tools do not have):
//
//	"_meta": {
//	  "toolnexus/outcome":  "ok" | "tool_error" | "timeout" | ...  (always)
//	  "toolnexus/metadata": {...}   (the result's metadata, when any)
//	  "toolnexus/pending":  {"id","kind","prompt","url","data","expiresAt"} (a suspended call)
//	}
//
// A suspended call is resumed by calling the tool again with
// "_meta": {"toolnexus/answer": {"id","ok","data","reason"}} in the
// tools/call params. Each listed tool carries its source as
// "_meta": {"toolnexus/source": "..."}.
//
// A client on the 2026-07-28 protocol (no sessions) is served by a
// stateless handler beside the session one (modern.go), and a suspended
// call answers it with input_required and a signed requestState instead
// (input.go, requeststate.go).
package mcpgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/internal/search"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Path is where the gateway serves MCP streamable HTTP.
const Path = "/mcp"

// Keys of the _meta objects the gateway reads and writes.
const (
	MetaSource   = "toolnexus/source"   // on each listed tool
	MetaOutcome  = "toolnexus/outcome"  // on each call result
	MetaMetadata = "toolnexus/metadata" // on a call result with metadata
	MetaPending  = "toolnexus/pending"  // on a suspended call's result
	MetaAnswer   = "toolnexus/answer"   // in tools/call params, to resume
)

// SessionHeader names the toolnexus session of a request. Without it, each
// MCP session (Mcp-Session-Id) is a toolnexus session of its own.
const SessionHeader = "Toolnexus-Session"

// sessionOf is the toolnexus session a tools/call runs in: the request's
// SessionHeader, else its MCP session.
func sessionOf(req *mcp.CallToolRequest) string {
	if req.Extra != nil {
		if id := req.Extra.Header.Get(SessionHeader); id != "" {
			return id
		}
	}
	if req.Session != nil {
		return req.Session.ID()
	}
	return ""
}

// DefaultName is the serverInfo.name when server.mcp.name is empty.
const DefaultName = "toolnexus"

// sessionTimeout closes sessions nobody has used for this long, so
// clients that vanish without a DELETE do not pile up.
const sessionTimeout = 30 * time.Minute

// Gateway is the MCP front-end; it is an http.Handler serving Path.
type Gateway struct {
	core     Core
	log      *slog.Logger
	sdk      *mcp.Server
	handler  http.Handler // the SDK handler behind the bearer middleware (auth on)
	unauthed http.Handler // the SDK handler itself (auth off)
	// modern and modernUnauthed serve requests on the 2026-07-28 protocol
	// (see modern.go), which the SDK accepts only on a stateless handler.
	modern, modernUnauthed http.Handler
	// states signs and checks the requestState of input_required results
	// (requeststate.go).
	states *stateSigner

	// levels holds the sessions that sent logging/setLevel (trackLevels).
	levels sync.Map
	// resumable holds the ids of the sessions initialized at 2025-11-25
	// (resume.go).
	resumable sync.Map
	// levelWatchers are the goroutines that forget a session's entry in
	// levels when it ends; Close joins them. levelsClosed (under
	// levelsMu) stops new ones once Close has begun.
	levelWatchers sync.WaitGroup
	levelsMu      sync.Mutex
	levelsClosed  bool

	// syncMu guards the SDK tool set bookkeeping.
	syncMu    sync.Mutex
	have      map[string]*tool.Tool // what the SDK server currently lists
	syncedRev uint64
	revision  atomic.Uint64 // syncedRev, read by tools/list without syncMu

	watcher  *registry.Watcher
	reconf   chan struct{}
	syncDone chan struct{}

	// posts counts POST requests in flight: Drain lets them finish before
	// Close ends the sessions (closing a session with a call still running
	// would cut its response).
	posts inflight
	// hardStop ends every call still running when the grace period is over.
	tracing    bool
	hardStop   context.Context
	hardCancel context.CancelFunc
	closeOnce  sync.Once
	stateless  bool // see stateless.go
	// disc is progressive discovery (discovery.go); nil lists every tool.
	disc *discovery
	// base is the listener's URL, for the default OAuth resource (oauth.go).
	base listenURL
	// feat serves the MCP servers' resources, templates and prompts
	// (features.go).
	feat featureSync
	// wire passes resource parts on as their MCP server sent them (wire.go).
	wire wireSlots
}

// Options configures the gateway (the server.mcp section).
type Options struct {
	// Name and Version are the serverInfo sent at initialize.
	Name, Version string
	// MaxBodyBytes caps a request body (0: the SDK's default).
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Tracing continues the caller's trace: from _meta.traceparent in the
	// call params, else from the POST's traceparent header. Off, neither is
	// read.
	Tracing bool
	// Stateless serves /mcp so that any replica answers any request
	// (sessions.shared): see stateless.go.
	Stateless bool
	// Discovery is server.mcp.discovery: DiscoveryList (or empty) or
	// DiscoverySearch (discovery.go); Pinned the tools listed anyway.
	Discovery string
	Pinned    []string
	// Embedder is search.embeddings' semantic side, fused into
	// search_tools' ranking; nil ranks lexically. The caller owns it.
	Embedder *search.Embedder `json:"-"`
	// StateKey signs the requestState of input_required results; replicas
	// behind one load balancer need the same key. Empty: a random key of
	// this process (a retry must then reach this replica).
	StateKey []byte
	// EventStoreBytes bounds the events stateful /mcp keeps so that a
	// 2025-11-25 client can resume a cut stream (resume.go); 0:
	// DefaultEventStoreBytes.
	EventStoreBytes int
}

// New builds the gateway over c and starts keeping its tool set in step
// with the registry; Close stops that.
func New(c Core, opts Options) *Gateway {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Version == "" {
		opts.Version = buildVersion()
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	g := &Gateway{core: c, log: log, tracing: opts.Tracing, stateless: opts.Stateless, have: map[string]*tool.Tool{}, reconf: make(chan struct{}, 1), syncDone: make(chan struct{})}
	g.hardStop, g.hardCancel = context.WithCancel(context.Background())
	g.wire.init()
	sdkLog := slog.New(sdkLogHandler{log.Handler()}).With("component", "mcp-gateway")
	g.sdk = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Logger: sdkLog,
		//lint:ignore SA1019 logging is deprecated upstream but is how MCP clients get a tool's log messages
		// Stateless /mcp keeps no session to notify, so it does not claim
		// list_changed: a client then re-lists instead of waiting for news.
		Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: !opts.Stateless}, Logging: &mcp.LoggingCapabilities{}},
		SetCacheable:       g.cacheHints,
		CompletionHandler:  g.complete,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: g.unsubscribe,
	})
	g.sdk.AddReceivingMiddleware(g.recoverPanics, g.filterList, g.trackLevels, g.filterFeatures, g.declareFeatures, g.noteResumable)
	sdkOpts := &mcp.StreamableHTTPOptions{
		Logger:              sdkLog,
		SessionTimeout:      sessionTimeout,
		MaxRequestBodyBytes: max(opts.MaxBodyBytes, 0), // 0 = the SDK default
		Stateless:           opts.Stateless,
	}
	if !opts.Stateless { // resume.go
		sdkOpts.EventStore = newResumeStore(&g.wire, opts.EventStoreBytes)
	}
	sdkHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.sdk }, sdkOpts)
	g.handler = g.bearer(sdkHandler)
	g.unauthed = sdkHandler
	g.modern, g.modernUnauthed = g.handler, g.unauthed
	if !opts.Stateless {
		g.modernUnauthed = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.sdk }, &mcp.StreamableHTTPOptions{
			Logger:              sdkLog,
			MaxRequestBodyBytes: max(opts.MaxBodyBytes, 0),
			Stateless:           true,
		})
		g.modern = g.bearer(g.modernUnauthed)
	}
	g.states = newStateSigner(opts.StateKey)

	if opts.Discovery == DiscoverySearch {
		g.disc = newDiscovery(g, opts.Pinned, opts.Embedder)
	}
	w, snap := c.Watch()
	g.watcher = w
	g.sync(snap)
	go g.watch()
	g.startFeatures(opts)
	return g
}

// bearer wraps an SDK handler in the SDK's bearer middleware, the only way
// to attach a TokenInfo (which binds a session to its token and reaches
// every handler as req.Extra.TokenInfo). Our own check has already run; its
// verifier just hands over the principal found.
func (g *Gateway) bearer(h http.Handler) http.Handler {
	return sdkauth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		p := auth.From(ctx)
		if p == nil {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: p.Name, Extra: map[string]any{principalExtra: p}}, nil
	}, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// sdkLogHandler logs the SDK's info records at debug: it reports every
// session connecting and initializing at info, which would flood the log of
// a server whose agents connect all day. Warnings and errors pass as they are.
type sdkLogHandler struct{ h slog.Handler }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d sdkLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, demote(l))
}

func (d sdkLogHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return d.h.Handle(ctx, r)
}

func (d sdkLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sdkLogHandler{d.h.WithAttrs(as)}
}
func (d sdkLogHandler) WithGroup(n string) slog.Handler { return sdkLogHandler{d.h.WithGroup(n)} }

// principalExtra is the TokenInfo.Extra key holding the *principal.
const principalExtra = "toolnexus.principal"

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Reconfigure re-checks the listed tools against what /mcp serves after a
// reload (the core holds server.mcp.tools and server.mcp.views); the other
// server.mcp settings take a restart.
func (g *Gateway) Reconfigure() {
	select {
	case g.reconf <- struct{}{}:
	default: // a resync is already queued
	}
}

// watch keeps the SDK tool set equal to the registry until the watcher is
// closed by shutdown.
func (g *Gateway) watch() {
	defer close(g.syncDone)
	for {
		select {
		case ch, ok := <-g.watcher.C():
			if !ok {
				return
			}
			g.sync(ch.Next)
		case <-g.reconf:
			g.syncMu.Lock()
			g.syncedRev = 0 // what /mcp serves may have changed: re-check every tool
			g.syncMu.Unlock()
			g.sync(g.core.Registry().Snapshot())
		}
	}
}

// sync makes the SDK's tools those of snap that /mcp serves (the core's
// view of /mcp for no caller in particular). It compares by name with what
// the SDK has, so it is correct after a resync, a reload or a dropped
// event alike, and it only touches tools that changed:
// every AddTool/RemoveTools makes the SDK schedule one (debounced)
// notifications/tools/list_changed to every session.
func (g *Gateway) sync(snap *registry.Snapshot) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	if snap.Revision() < g.syncedRev {
		return // a newer snapshot is already in place
	}
	g.syncedRev = snap.Revision()
	g.revision.Store(g.syncedRev)
	served, _ := g.core.View(nil, core.ProtocolMCP, "")
	want := make(map[string]bool, snap.Len())
	for _, e := range snap.Entries() {
		t := e.Tool
		if !served.Sees(e) || g.disc != nil && isDiscoveryTool(t.Name) {
			continue
		}
		want[t.Name] = true
		if old := g.have[t.Name]; old == t || old != nil && sameForMCP(old, t) {
			g.have[t.Name] = t
			continue
		}
		if g.addTool(t) {
			g.have[t.Name] = t
		} else {
			want[t.Name] = false // an older version the SDK still has goes below
		}
	}
	var gone []string
	for name := range g.have {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		for _, n := range gone {
			delete(g.have, n)
		}
		g.sdk.RemoveTools(gone...)
	}
}

func sameForMCP(a, b *tool.Tool) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Source == b.Source && bytes.Equal(a.InputSchema, b.InputSchema) &&
		sameDescription(a, b)
}

// addTool registers one tool with the SDK. Every tool shares one handler:
// the name comes with the request. The SDK panics on a schema it cannot
// take; such a tool is left out of MCP (with a warning), never the server.
func (g *Gateway) addTool(t *tool.Tool) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			g.log.Warn("tool not served over MCP: the MCP SDK refused it", "tool", t.Name, "source", t.Source, "error", panics.Message(v))
			ok = false
		}
	}()
	mt := &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: mcpSchema(t.InputSchema),
		Meta:        mcp.Meta{MetaSource: t.Source},
	}
	describe(mt, t)
	g.sdk.AddTool(mt, g.callTool)
	return true
}

// mcpSchema returns the schema as registered, except that MCP requires an
// object schema with "type": "object" at the top: a schema without it
// (e.g. {} or {"properties":{...}} from a lax MCP server) gets it added.
// Arguments must be an object for every tool anyway, so this only states
// what the executor enforces.
func mcpSchema(raw json.RawMessage) json.RawMessage {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return tool.DefaultInputSchema()
	}
	if typ, ok := top["type"]; ok && string(bytes.TrimSpace(typ)) == `"object"` {
		return raw
	}
	top["type"] = json.RawMessage(`"object"`)
	out, err := json.Marshal(top)
	if err != nil {
		return tool.DefaultInputSchema()
	}
	return out
}

// callerFrom finds the caller's principal in an MCP request: the current
// HTTP request's token, so a reload that changes a token's allowlist
// applies to sessions already open.
func callerFrom(extra *mcp.RequestExtra) *auth.Principal {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra[principalExtra].(*auth.Principal)
	return p
}

// recoverPanics is the backstop for a panic anywhere in handling an MCP
// request. The SDK runs handlers on their own goroutines without a
// recover, so without this one panic would end the whole server. tools/call
// has its own guard (a panic there is an isError result); anything else
// becomes a JSON-RPC internal error, the stack going to the log only.
func (g *Gateway) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				g.log.ErrorContext(ctx, "panic while handling an MCP request", "method", method, "panic", panics.Message(v), "stack", panics.Stack())
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error (the server logged the details)"}
			}
		}()
		return next(ctx, method, req)
	}
}

// filterList narrows tools/list to the caller's view, so the list shows
// exactly what tools/call runs.
func (g *Gateway) filterList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		view := g.view(req.GetExtra())
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		if g.disc != nil && lr.NextCursor != "" {
			if lr, err = allPages(ctx, next, req, lr); err != nil {
				return nil, err
			}
		}
		lr = g.listRevision(lr)
		if !view.Narrowed() && g.disc == nil {
			return lr, nil
		}
		kept := make([]*mcp.Tool, 0, len(lr.Tools))
		for _, t := range lr.Tools {
			src, _ := t.Meta[MetaSource].(string)
			if g.disc != nil && !g.disc.listed(t.Name, src) {
				continue
			}
			if view.Allows(t.Name, src) || isDiscoveryTool(t.Name) && g.disc != nil {
				kept = append(kept, t)
			}
		}
		out := *lr
		out.Tools = kept
		return &out, nil
	}
}

// callTool runs one tools/call through the core's Execute.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	name := req.Params.Name
	defer func() {
		// Execute already turns a panicking tool into a result; this is for
		// anything around it (decoding the answer, converting the result).
		if v := recover(); v != nil {
			res, err = toCallToolResult(g.core.Recovered(ctx, name, core.ProtocolMCP, v)), nil
		}
	}()
	if g.tracing {
		ctx = traceContext(ctx, req)
	}
	// Close cancels calls still running when the grace period is over.
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.hardStop, cancel)
	defer func() { stop(); cancel() }()

	args := req.Params.Arguments
	if bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = nil // "arguments": null is an absent arguments object
	}
	call := core.Call{Name: name, Arguments: args, Protocol: core.ProtocolMCP, View: viewOf(req.Extra), Caller: callerFrom(req.Extra),
		Session: sessionOf(req), Relay: relayer(req)}
	if a, ok := req.Params.Meta[MetaAnswer]; ok {
		ans, err := answerFromMeta(a)
		if err != nil {
			return toCallToolResult(tool.FailureWith(tool.OutcomeInvalidArguments, err.Error())), nil
		}
		call.Answer = ans
	}
	if call.Answer == nil && (req.Params.RequestState != "" || len(req.Params.InputResponses) > 0) && multiRoundTrip(req.Session) {
		ans, relay, err := g.resumeInput(req, call)
		if err != nil {
			return nil, err
		}
		call.Answer = ans
		if relay != nil {
			call.Relay = relay
		}
	}
	start := time.Now()
	execCtx := ctx
	if sink := g.sinkFor(ctx, req); sink != nil {
		call.Stream = true
		execCtx = tool.WithEvents(ctx, sink.send)
		defer sink.stop() // before the result goes out: nothing follows it
	}
	r, source := g.core.Execute(execCtx, call)
	if r.Throttled != nil {
		return nil, rateLimited(r.Throttled)
	}
	if err := missingCapability(req, r); err != nil {
		return nil, err
	}
	if ir := g.inputRequired(req, call, r); ir != nil {
		return ir, nil
	}
	if g.log.Enabled(ctx, slog.LevelDebug) {
		g.logCall(ctx, name, source, r, start, call.Caller)
	}
	if r.Outcome == tool.OutcomeUnknownTool {
		// A tool the caller's token does not allow comes back from the
		// core as unknown; it must read exactly like a name the server has
		// never had, which the SDK answers itself with this error.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	}
	return toCallToolResult(r), nil
}

// logCall logs a finished call at debug, like the gRPC logging interceptor
// logs Execute; the caller checks the level first, so a call costs nothing
// here when debug is off.
func (g *Gateway) logCall(ctx context.Context, name, source string, r tool.Result, start time.Time, caller *auth.Principal) {
	attrs := []slog.Attr{
		slog.String("mcp.method", "tools/call"),
		slog.String("tool", name),
		slog.String("source", source),
		slog.String("outcome", r.Resolved().String()),
		slog.Float64("time_ms", float64(time.Since(start).Microseconds())/1000),
	}
	if caller != nil {
		attrs = append(attrs, slog.String("caller", caller.Name))
	}
	g.log.LogAttrs(ctx, slog.LevelDebug, "finished MCP call", attrs...)
}

// answerFromMeta decodes _meta["toolnexus/answer"].
func answerFromMeta(v any) (*tool.Answer, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("_meta.%s: %v", MetaAnswer, err)
	}
	var a struct {
		ID     string `json:"id"`
		OK     bool   `json:"ok"`
		Data   any    `json:"data"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.ID == "" {
		return nil, fmt.Errorf(`_meta.%s must be an object {"id": "<pending id>", "ok": true|false, "data": ..., "reason": "..."} with the id of the pending request`, MetaAnswer)
	}
	return &tool.Answer{ID: a.ID, OK: a.OK, Data: a.Data, Reason: a.Reason}, nil
}

// toCallToolResult is a ToolResult as MCP: one text part, isError copied,
// the rest in _meta (see the top of this file).
func toCallToolResult(r tool.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: r.Output}},
		IsError: r.IsError,
		Meta:    mcp.Meta{MetaOutcome: r.Resolved().String()},
	}
	if len(r.Content) > 0 {
		out.Content = toContent(r.Content)
	}
	structured(out, r)
	if len(r.Metadata) > 0 {
		// Marshalled here so that a value JSON cannot encode costs the
		// metadata, not the whole response.
		if b, err := json.Marshal(r.Metadata); err == nil {
			out.Meta[MetaMetadata] = json.RawMessage(b)
		}
	}
	if p := r.Pending; p != nil {
		pm := map[string]any{"id": p.ID, "kind": p.Kind, "prompt": p.Prompt}
		if p.URL != "" {
			pm["url"] = p.URL
		}
		if len(p.Data) > 0 {
			pm["data"] = p.Data
		}
		if !p.ExpiresAt.IsZero() {
			pm["expiresAt"] = p.ExpiresAt.UTC().Format(time.RFC3339Nano)
		}
		if b, err := json.Marshal(pm); err == nil {
			out.Meta[MetaPending] = json.RawMessage(b)
		}
	}
	return out
}

// ServeHTTP serves Path. It checks the bearer token (when auth is on)
// before the SDK sees the request: the same tokens as gRPC, refused with 401
// and a message that says what to send.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r, ok := g.routeView(w, r) // view.go
	if !ok {
		return
	}
	if r.Method == http.MethodPost {
		if !g.posts.enter() {
			http.Error(w, "server is shutting down; reconnect to another replica", http.StatusServiceUnavailable)
			return
		}
		defer g.posts.leave()
	}
	if id := r.Header.Get(SessionHeader); id != "" {
		if err := g.core.CheckSession(id); err != nil {
			http.Error(w, SessionHeader+": "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	au := g.core.Authenticator()
	if au == nil {
		g.serveSDK(g.unauthed, g.modernUnauthed, w, r)
		return
	}
	p, err := au.CheckHeader(r.Context(), r.Header.Get("Authorization"))
	switch {
	case errors.Is(err, auth.ErrMissing):
		g.unauthorized(w, `missing bearer token: send the header "Authorization: Bearer <token>" with a token from auth.tokens or the identity provider`, false)
		return
	case errors.Is(err, auth.ErrMalformed):
		g.unauthorized(w, `malformed Authorization header: expected "Bearer <token>"`, true)
		return
	case err != nil:
		g.unauthorized(w, err.Error(), true) // a fixed reason, never the token
		return
	}
	g.serveSDK(g.handler, g.modern, w, r.WithContext(auth.With(r.Context(), p)))
}

// serveSDK hands an authenticated request to the SDK: a request on the
// 2026-07-28 protocol to the stateless handler modern, any other to h,
// naming its toolnexus session first when /mcp is stateless.
func (g *Gateway) serveSDK(h, modern http.Handler, w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var done func()
		w, r, done = g.wire.open(w, r) // wire.go
		defer done()
	}
	if isModern(r) {
		modern.ServeHTTP(w, r)
		return
	}
	if refuseModernWithoutHeader(w, r) {
		return
	}
	if g.stateless {
		var ok bool
		if r, ok = g.statelessSession(w, r); !ok {
			return
		}
	} else if r.Method == http.MethodPost {
		g.sessionVersion(r) // resume.go
	}
	h.ServeHTTP(w, r)
}

// Drain refuses new requests and waits for the calls in flight, until ctx
// is done; it reports whether they all finished.
func (g *Gateway) Drain(ctx context.Context) bool { return g.posts.drain(ctx) }

// Close cancels the calls still running, ends every session (which ends
// the long-lived event streams) and stops following the registry.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() {
		g.hardCancel()
		g.levelsMu.Lock()
		g.levelsClosed = true
		g.levelsMu.Unlock()
		for ss := range g.sdk.Sessions() {
			_ = ss.Close()
		}
		g.levelWatchers.Wait() // each ends with its session, closed above
		g.closeFeatures()
		g.watcher.Close()
		<-g.syncDone
	})
}

// inflight counts requests and, once draining, refuses new ones.
type inflight struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{}
}

func (f *inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.draining {
		return false
	}
	f.n++
	return true
}

func (f *inflight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// drain refuses new requests and waits for those in flight, or until ctx
// is done (then it reports false).
func (f *inflight) drain(ctx context.Context) bool {
	f.mu.Lock()
	f.draining = true
	if f.n == 0 {
		f.mu.Unlock()
		return true
	}
	idle := make(chan struct{})
	f.idle = idle
	f.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}
