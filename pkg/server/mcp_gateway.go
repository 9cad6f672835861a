package server

// The MCP gateway serves the registry to agents that speak MCP rather than
// gRPC: one streamable-HTTP endpoint, /mcp, on its own listener
// (server.mcp.listen or --mcp-listen; off unless set).
//
// It is a thin front over the same pieces the gRPC service uses:
//
//   - tools/list is the SDK server's tool set, which a watcher keeps equal to
//     the registry snapshot (names verbatim, schemas as registered, sorted in
//     byte order), narrowed by server.mcp.tools. The SDK announces every
//     change to connected clients with notifications/tools/list_changed.
//   - tools/call goes through executor.Execute with the request's context,
//     so limits, validation, allowlists and the per-source metrics (with
//     protocol="mcp") are exactly those of gRPC Execute.
//   - the same bearer tokens guard it: a request without a valid
//     "Authorization: Bearer" header is refused with 401 before the SDK sees
//     it, and the token's allowlist filters tools/list and denies calls.
//
// A ToolResult becomes one text content part holding Output, with isError
// copied. The rest of the result is for the agent's code, not the model, so
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

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// MCPPath is where the gateway serves MCP streamable HTTP.
const MCPPath = "/mcp"

// Keys of the _meta objects the gateway reads and writes.
const (
	MetaSource   = "toolnexus/source"   // on each listed tool
	MetaOutcome  = "toolnexus/outcome"  // on each call result
	MetaMetadata = "toolnexus/metadata" // on a call result with metadata
	MetaPending  = "toolnexus/pending"  // on a suspended call's result
	MetaAnswer   = "toolnexus/answer"   // in tools/call params, to resume
)

// DefaultMCPName is the serverInfo.name when server.mcp.name is empty.
const DefaultMCPName = "toolnexus"

// mcpSessionTimeout closes sessions nobody has used for this long, so
// clients that vanish without a DELETE do not pile up.
const mcpSessionTimeout = 30 * time.Minute

type mcpGateway struct {
	s        *Server
	sdk      *mcp.Server
	handler  http.Handler // the SDK handler behind the bearer middleware (auth on)
	unauthed http.Handler // the SDK handler itself (auth off)

	lis   net.Listener
	srv   *http.Server
	conns connTracker

	// syncMu guards the SDK tool set bookkeeping.
	syncMu    sync.Mutex
	have      map[string]*tool.Tool // what the SDK server currently lists
	syncedRev uint64
	filter    *principal // server.mcp.tools as an allowlist; nil = every tool
	filterKey string

	watcher  *registry.Watcher
	reconf   chan struct{}
	syncDone chan struct{}

	// posts counts POST requests in flight: Shutdown lets them finish
	// before it closes the sessions (closing a session with a call still
	// running would cut its response).
	posts inflight
	// hardStop ends every call still running when the grace period is over.
	hardStop   context.Context
	hardCancel context.CancelFunc
	stopOnce   sync.Once
}

// newMCPGateway builds the gateway when server.mcp.listen is set, and starts
// keeping its tool set in step with the registry. It returns nil when the
// gateway is off.
func newMCPGateway(s *Server, cfg *config.Config) *mcpGateway {
	gc := cfg.Server.MCP
	if gc.Listen == "" {
		return nil
	}
	name := gc.Name
	if name == "" {
		name = DefaultMCPName
	}
	version := gc.Version
	if version == "" {
		version = buildVersion()
	}
	g := &mcpGateway{s: s, have: map[string]*tool.Tool{}, reconf: make(chan struct{}, 1), syncDone: make(chan struct{})}
	g.hardStop, g.hardCancel = context.WithCancel(context.Background())
	sdkLog := slog.New(sdkLogHandler{s.log.Handler()}).With("component", "mcp-gateway")
	g.sdk = mcp.NewServer(&mcp.Implementation{Name: name, Version: version}, &mcp.ServerOptions{
		Logger:       sdkLog,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	g.sdk.AddReceivingMiddleware(g.recoverPanics, g.filterList)
	sdkHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.sdk }, &mcp.StreamableHTTPOptions{
		Logger:              sdkLog,
		SessionTimeout:      mcpSessionTimeout,
		MaxRequestBodyBytes: int64(max(cfg.Limits.MaxRequestBytes, 0)), // 0 = the SDK default
	})
	// The SDK's bearer middleware is the only way to attach a TokenInfo
	// (which binds a session to its token and reaches every handler as
	// req.Extra.TokenInfo). Our own check has already run; its verifier
	// just hands over the principal found.
	g.handler = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p := principalFrom(ctx)
		if p == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.name, Extra: map[string]any{principalExtra: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdkHandler)
	g.unauthed = sdkHandler

	g.setFilter(gc.Tools)
	w, snap := s.reg.Watch()
	g.watcher = w
	g.sync(snap)
	go g.watch()
	return g
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

// setFilter installs server.mcp.tools. A pattern that is not a valid glob
// matches nothing; say so once instead of silently hiding every tool.
func (g *mcpGateway) setFilter(patterns []string) bool {
	key := strings.Join(patterns, "\x00")
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	if g.filter != nil && key == g.filterKey || g.filter == nil && len(patterns) == 0 {
		return false
	}
	for _, p := range patterns {
		if _, err := path.Match(strings.TrimPrefix(p, "source:"), ""); err != nil {
			g.s.log.Warn("server.mcp.tools: bad glob pattern; it matches nothing", "pattern", p, "error", err)
		}
	}
	g.filterKey = key
	g.filter = nil
	if len(patterns) > 0 {
		g.filter = &principal{name: "server.mcp.tools", patterns: slices.Clone(patterns)}
	}
	return true
}

// reconfigure applies a reloaded config. Only server.mcp.tools can change
// at run time; listen, name and version take a restart.
func (g *mcpGateway) reconfigure(cfg *config.Config) {
	if g == nil {
		return
	}
	if g.setFilter(cfg.Server.MCP.Tools) {
		select {
		case g.reconf <- struct{}{}:
		default: // a resync is already queued
		}
	}
}

// watch keeps the SDK tool set equal to the registry until the watcher is
// closed by shutdown.
func (g *mcpGateway) watch() {
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
			g.syncedRev = 0 // the filter changed: re-check every tool
			g.syncMu.Unlock()
			g.sync(g.s.reg.Snapshot())
		}
	}
}

// sync makes the SDK's tools those of snap that pass the filter. It compares
// by name with what the SDK has, so it is correct after a resync, a filter
// change or a dropped event alike, and it only touches tools that changed:
// every AddTool/RemoveTools makes the SDK schedule one (debounced)
// notifications/tools/list_changed to every session.
func (g *mcpGateway) sync(snap *registry.Snapshot) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	if snap.Revision() < g.syncedRev {
		return // a newer snapshot is already in place
	}
	g.syncedRev = snap.Revision()
	want := make(map[string]bool, snap.Len())
	for _, e := range snap.Entries() {
		t := e.Tool
		if !g.filter.allows(t.Name, t.Source) {
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
	return a.Name == b.Name && a.Description == b.Description && a.Source == b.Source && bytes.Equal(a.InputSchema, b.InputSchema)
}

// addTool registers one tool with the SDK. Every tool shares one handler:
// the name comes with the request. The SDK panics on a schema it cannot
// take; such a tool is left out of MCP (with a warning), never the server.
func (g *mcpGateway) addTool(t *tool.Tool) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			g.s.log.Warn("tool not served over MCP: the MCP SDK refused it", "tool", t.Name, "source", t.Source, "error", panics.Message(v))
			ok = false
		}
	}()
	g.sdk.AddTool(&mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: mcpSchema(t.InputSchema),
		Meta:        mcp.Meta{MetaSource: t.Source},
	}, g.callTool)
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
func callerFrom(extra *mcp.RequestExtra) *principal {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra[principalExtra].(*principal)
	return p
}

// recoverPanics is the backstop for a panic anywhere in handling an MCP
// request. The SDK runs handlers on their own goroutines without a
// recover, so without this one panic would end the whole server. tools/call
// has its own guard (a panic there is an isError result); anything else
// becomes a JSON-RPC internal error, the stack going to the log only.
func (g *mcpGateway) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				g.s.log.ErrorContext(ctx, "panic while handling an MCP request", "method", method, "panic", panics.Message(v), "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error (the server logged the details)"}
			}
		}()
		return next(ctx, method, req)
	}
}

// filterList narrows tools/list to what the caller's token allows, so the
// list shows exactly what tools/call permits.
func (g *mcpGateway) filterList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		p := callerFrom(req.GetExtra())
		lr, ok := res.(*mcp.ListToolsResult)
		if p == nil || p.patterns == nil || !ok {
			return res, err
		}
		kept := make([]*mcp.Tool, 0, len(lr.Tools))
		for _, t := range lr.Tools {
			src, _ := t.Meta[MetaSource].(string)
			if p.allows(t.Name, src) {
				kept = append(kept, t)
			}
		}
		out := *lr
		out.Tools = kept
		return &out, nil
	}
}

// callTool runs one tools/call through the shared Execute path.
func (g *mcpGateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	name := req.Params.Name
	defer func() {
		// Execute already turns a panicking tool into a result; this is for
		// anything around it (decoding the answer, converting the result).
		if v := recover(); v != nil {
			msg := panics.Message(v)
			g.s.log.ErrorContext(ctx, "panic while executing over MCP", "tool", name, "panic", msg, "stack", string(debug.Stack()))
			source, toolLabel := metrics.UnknownLabel, metrics.UnknownLabel
			if e, ok := g.s.exec.Snapshot().Lookup(name); ok {
				source, toolLabel = e.Tool.Source, e.Tool.Name
			}
			g.s.metrics.Calls.WithLabelValues(source, toolLabel, tool.OutcomePanic.String(), executor.ProtocolMCP).Inc()
			res, err = toCallToolResult(tool.FailureWith(tool.OutcomePanic, msg)), nil
		}
	}()
	// Shutdown cancels calls still running when its grace period is over.
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.hardStop, cancel)
	defer func() { stop(); cancel() }()

	args := req.Params.Arguments
	if bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = nil // "arguments": null is an absent arguments object
	}
	xreq := executor.Request{Name: name, Arguments: args, Protocol: executor.ProtocolMCP}
	caller := callerFrom(req.Extra)
	if caller != nil {
		xreq.Allow = caller.allows
	}
	if a, ok := req.Params.Meta[MetaAnswer]; ok {
		ans, err := answerFromMeta(a)
		if err != nil {
			return toCallToolResult(tool.FailureWith(tool.OutcomeInvalidArguments, err.Error())), nil
		}
		xreq.Answer = ans
	}
	start := time.Now()
	r, source := g.s.exec.Execute(ctx, xreq)
	if g.s.log.Enabled(ctx, slog.LevelDebug) {
		g.logCall(ctx, name, source, r, start, caller)
	}
	return toCallToolResult(r), nil
}

// logCall logs a finished call at debug, like the gRPC logging interceptor
// logs Execute; the caller checks the level first, so a call costs nothing
// here when debug is off.
func (g *mcpGateway) logCall(ctx context.Context, name, source string, r tool.Result, start time.Time, caller *principal) {
	attrs := []slog.Attr{
		slog.String("mcp.method", "tools/call"),
		slog.String("tool", name),
		slog.String("source", source),
		slog.String("outcome", r.Resolved().String()),
		slog.Float64("time_ms", float64(time.Since(start).Microseconds())/1000),
	}
	if caller != nil {
		attrs = append(attrs, slog.String("caller", caller.name))
	}
	g.s.log.LogAttrs(ctx, slog.LevelDebug, "finished MCP call", attrs...)
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

// ServeHTTP checks the bearer token (when auth is on) before the SDK sees
// the request: the same tokens as gRPC, refused with 401 and a message that
// says what to send.
func (g *mcpGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if !g.posts.enter() {
			http.Error(w, "server is shutting down; reconnect to another replica", http.StatusServiceUnavailable)
			return
		}
		defer g.posts.leave()
	}
	au := g.s.auth.Load()
	if au == nil {
		g.unauthed.ServeHTTP(w, r)
		return
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		unauthorized(w, `missing bearer token: send the header "Authorization: Bearer <token>" with a token from auth.tokens`)
		return
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(h, "bearer ")
	}
	if !ok {
		unauthorized(w, `malformed Authorization header: expected "Bearer <token>"`)
		return
	}
	p, err := au.check(tok)
	if err != nil {
		unauthorized(w, "invalid bearer token")
		return
	}
	g.handler.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), p)))
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="toolnexus"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// mux serves the gateway at MCPPath only.
func (g *mcpGateway) mux() http.Handler {
	m := http.NewServeMux()
	m.Handle(MCPPath, g)
	return m
}

// listen binds server.mcp.listen.
func (g *mcpGateway) listen(addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s (server.mcp.listen / --mcp-listen): %w", addr, err)
	}
	g.lis = lis
	return nil
}

// serve starts serving on the bound listener; TLS when server.tls is set
// (same certificates, swapped on reload, as gRPC). A serving error other
// than a normal close goes to errc.
func (g *mcpGateway) serve(errc chan<- error) {
	lis := g.lis
	if g.s.cfg.Load().Server.TLS.Enabled() {
		lis = tls.NewListener(lis, &tls.Config{
			MinVersion:         tls.VersionTLS12,
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return g.s.tlsConf.Load(), nil },
		})
	}
	g.srv = &http.Server{Handler: g.mux(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute, ConnState: g.conns.track}
	go func() {
		if err := g.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case errc <- fmt.Errorf("MCP listener: %w", err):
			default:
			}
		}
	}()
}

// shutdown stops the gateway within grace: refuse new requests, let calls
// in flight finish, then close every session (which ends the long-lived
// event streams) and the tool-set watcher. Calls still running when grace
// is over are cancelled.
func (g *mcpGateway) shutdown(grace time.Duration) {
	if g == nil {
		return
	}
	g.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		srvDone := make(chan struct{})
		if g.srv != nil {
			go func() {
				_ = g.srv.Shutdown(ctx)
				close(srvDone)
			}()
		} else {
			if g.lis != nil {
				g.lis.Close()
			}
			close(srvDone)
		}
		if !g.posts.drain(ctx) {
			g.s.log.Warn("MCP gateway: grace period over; cancelling the calls still running", "grace", grace)
		}
		g.hardCancel()
		for ss := range g.sdk.Sessions() {
			_ = ss.Close()
		}
		g.conns.closeUnused()
		select {
		case <-srvDone:
		case <-ctx.Done():
			_ = g.srv.Close()
			<-srvDone
		}
		g.watcher.Close()
		<-g.syncDone
	})
}

// connTracker knows each connection's state, so shutdown can close the
// ones that never carried a request. http.Server.Shutdown only counts such a
// connection as idle after 5 s, and HTTP clients leave them behind
// routinely (a connection dialled for a request that an idle one then
// served), which would hold every shutdown for those 5 s.
type connTracker struct {
	mu sync.Mutex
	m  map[net.Conn]http.ConnState
}

func (t *connTracker) track(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[net.Conn]http.ConnState{}
	}
	if st == http.StateClosed || st == http.StateHijacked {
		delete(t.m, c)
		return
	}
	t.m[c] = st
}

// closeUnused closes the connections with no request in progress.
func (t *connTracker) closeUnused() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c, st := range t.m {
		if st == http.StateNew || st == http.StateIdle {
			_ = c.Close()
		}
	}
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

// checkMCPExposure refuses a non-loopback MCP listener without auth or TLS
// (the caller has already allowed --insecure, auth and TLS).
func checkMCPExposure(cfg *config.Config) error {
	if l := cfg.Server.MCP.Listen; l != "" && !isLoopback(l) {
		return &config.Error{Key: "server.mcp.listen", Msg: fmt.Sprintf("%s is not a loopback address and neither auth nor TLS is configured; "+
			"configure auth.tokens or server.tls, or pass --insecure if you really mean it", l)}
	}
	return nil
}

// MCPAddr is the bound MCP gateway address, or nil when the gateway is off.
func (s *Server) MCPAddr() net.Addr {
	if s.mcp == nil || s.mcp.lis == nil {
		return nil
	}
	return s.mcp.lis.Addr()
}

// MCPHandler is the gateway's handler (serving MCPPath), for mounting it
// on your own HTTP server; nil when server.mcp.listen is not set.
func (s *Server) MCPHandler() http.Handler {
	if s.mcp == nil {
		return nil
	}
	return s.mcp.mux()
}

func (s *Server) mcpAddrString() string {
	if a := s.MCPAddr(); a != nil {
		return a.String()
	}
	return "disabled"
}

// mcpRestartOnly names the server.mcp settings a reload cannot apply: the
// listener and the serverInfo sent at initialize (server.mcp.tools does
// apply on reload).
func mcpRestartOnly(old, next *config.Config) []string {
	var keys []string
	o, n := old.Server.MCP, next.Server.MCP
	if o.Listen != n.Listen {
		keys = append(keys, "server.mcp.listen")
	}
	if o.Name != n.Name {
		keys = append(keys, "server.mcp.name")
	}
	if o.Version != n.Version {
		keys = append(keys, "server.mcp.version")
	}
	return keys
}
