package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The MCP servers' resources, resource templates and prompts are served at
// /mcp as the tools are: the SDK server's sets are kept equal to the core's
// feature catalog (narrowed by server.mcp.resources and server.mcp.prompts),
// so the SDK lists them in pages sorted by URI or name and tells sessions of
// every change (list_changed); each list is narrowed to what the caller's
// token allows; resources/read, prompts/get, completion/complete and
// resources/subscribe go through the core (core.ReadResource ...), where the
// allowlists, policies, limits, metrics and audit apply. Each listed item
// carries its server's name as _meta["toolnexus/server"].

// MetaServer names the MCP server of a listed resource, template or prompt.
const MetaServer = "toolnexus/server"

// maxSubscriptionsPerSession bounds the resources one MCP session may
// subscribe to: a client subscribing to everything is refused past it.
const maxSubscriptionsPerSession = 256

// Codes of the JSON-RPC errors a feature request can end with, besides the
// SDK's own (resource not found, invalid params) and CodeRateLimited.
// (-32003 and -32004 are the go-sdk's own "client/server is closing".)
const (
	// CodeDenied: a policy refused the request.
	CodeDenied = -32031
	// CodeUnavailable: the MCP server behind is down, slow, or answered
	// more than limits.maxResourceBytes.
	CodeUnavailable = -32032
)

// featureSync is the gateway's side of the features.
type featureSync struct {
	have  map[string]featureItem // "r:"+uri, "t:"+template, "p:"+name → what the SDK serves
	stop  func()                 // ends the catalog subscription
	kick  chan struct{}
	done  chan struct{}
	subs  subscriptions
	close chan struct{}
}

// featureItem is what the SDK serves for a key, to tell a change.
type featureItem struct {
	layer registry.LayerID
	item  any
}

// startFeatures registers the feature handlers and starts keeping the SDK's
// sets in step with the catalog.
func (g *Gateway) startFeatures(opts Options) {
	g.feat.have = map[string]featureItem{}
	g.feat.kick = make(chan struct{}, 1)
	g.feat.done = make(chan struct{})
	g.feat.close = make(chan struct{})
	g.feat.subs.init()
	g.feat.stop = g.core.WatchFeatures(func(_, _ *registry.FeatureSnapshot) { g.kickFeatures() })
	g.syncFeatures()
	go g.watchFeatures()
}

func (g *Gateway) kickFeatures() {
	select {
	case g.feat.kick <- struct{}{}:
	default: // a sync is already due
	}
}

func (g *Gateway) watchFeatures() {
	defer close(g.feat.done)
	for {
		select {
		case <-g.feat.close:
			return
		case <-g.feat.kick:
			g.syncFeatures()
		}
	}
}

// closeFeatures stops following the catalog and ends every subscription.
func (g *Gateway) closeFeatures() {
	g.feat.stop()
	close(g.feat.close)
	<-g.feat.done
	g.feat.subs.closeAll()
}

// syncFeatures makes the SDK's resources, templates and prompts those of
// the catalog that server.mcp serves, touching only what changed.
func (g *Gateway) syncFeatures() {
	snap := g.core.Features()
	fc := g.core.FeatureCall(nil, core.ProtocolMCP, "")
	want := map[string]featureItem{}
	for _, e := range snap.Resources() {
		if fc.SeesResource(e.Resource.URI, e.Layer) {
			want["r:"+e.Resource.URI] = featureItem{e.Layer, e.Resource}
		}
	}
	for _, e := range snap.Templates() {
		if fc.SeesResource(e.Template.URITemplate, e.Layer) {
			want["t:"+e.Template.URITemplate] = featureItem{e.Layer, e.Template}
		}
	}
	for _, e := range snap.Prompts() {
		if fc.SeesPrompt(e.Prompt.Name, e.Layer) {
			want["p:"+e.Prompt.Name] = featureItem{e.Layer, e.Prompt}
		}
	}
	for k := range want {
		if k[0] != 'p' {
			want["t:"+routeAll] = featureItem{item: routeAllTemplate{}}
			break
		}
	}
	var goneR, goneT, goneP []string
	for k := range g.feat.have {
		if _, ok := want[k]; !ok {
			switch k[0] {
			case 'r':
				goneR = append(goneR, k[2:])
			case 't':
				goneT = append(goneT, k[2:])
			default:
				goneP = append(goneP, k[2:])
			}
			delete(g.feat.have, k)
		}
	}
	g.removeFeatures(goneR, goneT, goneP)
	for k, it := range want {
		if old, ok := g.feat.have[k]; ok && old.layer == it.layer && sameItem(old.item, it.item) {
			continue
		}
		if g.addFeature(it) {
			g.feat.have[k] = it
		}
	}
}

func (g *Gateway) removeFeatures(resources, templates, prompts []string) {
	if len(resources) > 0 {
		g.sdk.RemoveResources(resources...)
	}
	if len(templates) > 0 {
		g.sdk.RemoveResourceTemplates(templates...)
	}
	if len(prompts) > 0 {
		g.sdk.RemovePrompts(prompts...)
	}
}

func sameItem(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// addFeature registers one item with the SDK; one it refuses (it panics on
// a URI it cannot parse) is left out with a warning, never the server.
func (g *Gateway) addFeature(it featureItem) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			g.log.Warn("not served over MCP: the MCP SDK refused it", "server", it.layer.Name, "item", fmt.Sprint(v))
			ok = false
		}
	}()
	meta := mcp.Meta{MetaServer: it.layer.Name}
	switch x := it.item.(type) {
	case routeAllTemplate:
		g.sdk.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: routeAll, Name: "toolnexus-route"}, g.readResource)
	case feature.Resource:
		g.sdk.AddResource(&mcp.Resource{URI: x.URI, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType,
			Size: x.Size, Annotations: annotationsOf(x.Annotations), Meta: meta}, g.readResource)
	case feature.Template:
		g.sdk.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: x.URITemplate, Name: x.Name, Title: x.Title,
			Description: x.Description, MIMEType: x.MIMEType, Annotations: annotationsOf(x.Annotations), Meta: meta}, g.readResource)
	case feature.Prompt:
		p := &mcp.Prompt{Name: x.Name, Title: x.Title, Description: x.Description, Meta: meta}
		for _, a := range x.Arguments {
			p.Arguments = append(p.Arguments, &mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		g.sdk.AddPrompt(p, g.getPrompt)
	}
	return true
}

func annotationsOf(a *feature.Annotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{Priority: a.Priority, LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, mcp.Role(r))
	}
	return out
}

// featureCall is who sends req, through this door. A request the SDK
// makes itself (the subscriptions of a 2026-07-28 subscriptions/listen)
// carries no token: its caller is the one the bearer check put in ctx.
func (g *Gateway) featureCall(ctx context.Context, req mcp.Request) core.FeatureCall {
	caller := callerFrom(req.GetExtra())
	if caller == nil {
		caller = auth.From(ctx)
	}
	fc := g.core.FeatureCall(caller, core.ProtocolMCP, "")
	if extra := req.GetExtra(); extra != nil {
		fc.Session = extra.Header.Get(SessionHeader)
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && fc.Session == "" && ss != nil {
		fc.Session = ss.ID()
	}
	return fc
}

// routeAll is a resource template that matches every URI, registered
// with the SDK whenever a resource is served: the SDK answers
// resources/read only for a URI one of its resources or templates
// matches, and the core routes more (a rewritten template's expansions).
// It is never listed.
const routeAll = "{+uri}"

type routeAllTemplate struct{}

// filterFeatures narrows resources/list, resources/templates/list and
// prompts/list to what the caller's token allows.
func (g *Gateway) filterFeatures(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		if r, ok := res.(*mcp.ListResourceTemplatesResult); ok {
			out := *r
			out.ResourceTemplates = slices.DeleteFunc(slices.Clone(r.ResourceTemplates), func(x *mcp.ResourceTemplate) bool {
				return x.URITemplate == routeAll
			})
			res = &out
		}
		fc := g.featureCall(ctx, req)
		if !fc.Caller.RestrictedFeatures() {
			return res, nil
		}
		switch r := res.(type) {
		case *mcp.ListResourcesResult:
			out := *r
			out.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(x *mcp.Resource) bool {
				return !fc.SeesResource(x.URI, serverOf(x.Meta))
			})
			return &out, nil
		case *mcp.ListResourceTemplatesResult:
			out := *r
			out.ResourceTemplates = slices.DeleteFunc(slices.Clone(r.ResourceTemplates), func(x *mcp.ResourceTemplate) bool {
				return !fc.SeesResource(x.URITemplate, serverOf(x.Meta))
			})
			return &out, nil
		case *mcp.ListPromptsResult:
			out := *r
			out.Prompts = slices.DeleteFunc(slices.Clone(r.Prompts), func(x *mcp.Prompt) bool {
				return !fc.SeesPrompt(x.Name, serverOf(x.Meta))
			})
			return &out, nil
		}
		return res, nil
	}
}

// serverOf is the layer a listed item's _meta names.
func serverOf(m mcp.Meta) registry.LayerID {
	name, _ := m[MetaServer].(string)
	return registry.LayerID{Name: name}
}

// readResource answers resources/read through the core.
func (g *Gateway) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	contents, err := g.core.ReadResource(ctx, g.featureCall(ctx, req), uri)
	if err != nil {
		return nil, featureWireError(err, uri)
	}
	out := &mcp.ReadResourceResult{Contents: make([]*mcp.ResourceContents, len(contents))}
	w := g.wire.writer(req)
	for i, c := range contents {
		if out.Contents[i], err = wireContents(w, c); err != nil { // wire.go
			return nil, &jsonrpc.Error{Code: CodeUnavailable, Message: err.Error()}
		}
	}
	return out, nil
}

// getPrompt answers prompts/get through the core.
func (g *Gateway) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	fc := g.featureCall(ctx, req)
	ctx, err := g.promptInput(ctx, req, fc)
	if err != nil {
		return nil, err
	}
	res, err := g.core.GetPrompt(ctx, fc, req.Params.Name, req.Params.Arguments)
	if err != nil {
		return nil, featureWireError(err, "")
	}
	if res.Input != nil {
		return g.promptInputRequired(req, fc, res.Input)
	}
	out := &mcp.GetPromptResult{Description: res.Description, Messages: make([]*mcp.PromptMessage, 0, len(res.Messages))}
	for _, m := range res.Messages {
		parts := toContent([]tool.Content{m.Content})
		if len(parts) == 1 {
			out.Messages = append(out.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: parts[0]})
		}
	}
	return out, nil
}

// complete answers completion/complete through the core.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	ref := core.CompleteRef{}
	switch p.Ref.Type {
	case "ref/prompt":
		ref.Prompt = p.Ref.Name
	case "ref/resource":
		ref.URITemplate = p.Ref.URI
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(`completion/complete: ref.type %q is not "ref/prompt" or "ref/resource"`, p.Ref.Type)}
	}
	in := feature.CompleteRequest{Argument: p.Argument.Name, Value: p.Argument.Value}
	if p.Context != nil {
		in.Context = p.Context.Arguments
	}
	res, err := g.core.Complete(ctx, g.featureCall(ctx, req), ref, in)
	if err != nil {
		return nil, featureWireError(err, p.Ref.URI)
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: res.Values, Total: res.Total, HasMore: res.HasMore}}, nil
}

// featureWireError is a feature error as JSON-RPC: an unknown (or hidden)
// resource exactly as the SDK answers one it never had.
func featureWireError(err error, uri string) error {
	var fe *feature.Error
	if !errors.As(err, &fe) {
		return &jsonrpc.Error{Code: CodeUnavailable, Message: err.Error()}
	}
	switch fe.Kind {
	case feature.NotFound:
		if uri != "" {
			return mcp.ResourceNotFoundError(uri)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fe.Msg}
	case feature.InvalidArgument:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fe.Msg}
	case feature.Denied:
		return &jsonrpc.Error{Code: CodeDenied, Message: fe.Msg}
	case feature.Throttled:
		return rateLimited(&tool.Throttle{Limit: fe.Limit, RetryAfter: fe.RetryAfter})
	case feature.Upstream:
		return &jsonrpc.Error{Code: fe.Code, Message: fe.Msg}
	}
	return &jsonrpc.Error{Code: CodeUnavailable, Message: fe.Msg}
}

// subscriptions are the sessions' resource subscriptions. The core is
// subscribed once per session and URI (its checks and audit are per
// caller); the first session's subscription to a URI passes the change on
// with the SDK's ResourceUpdated, which tells every session the SDK has
// subscribed to it, and only those.
type subscriptions struct {
	mu        sync.Mutex
	bySession map[*mcp.ServerSession]map[string]*subscription
	byURI     map[string][]*subscription
	watchers  sync.WaitGroup
	closed    bool
}

type subscription struct {
	cancel func()
}

func (s *subscriptions) init() {
	s.bySession = map[*mcp.ServerSession]map[string]*subscription{}
	s.byURI = map[string][]*subscription{}
}

// subscribe answers resources/subscribe (and each URI of a 2026-07-28
// subscriptions/listen).
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	ss, uri := req.Session, req.Params.URI
	s := &g.feat.subs
	s.mu.Lock()
	mine := s.bySession[ss]
	switch {
	case s.closed:
		s.mu.Unlock()
		return &jsonrpc.Error{Code: CodeUnavailable, Message: "resources/subscribe: the server is shutting down"}
	case mine[uri] != nil:
		s.mu.Unlock()
		return nil // already subscribed: subscribing is idempotent
	case len(mine) >= maxSubscriptionsPerSession:
		s.mu.Unlock()
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resources/subscribe: a session may subscribe to at most %d resources; unsubscribe from some first", maxSubscriptionsPerSession)}
	}
	s.mu.Unlock()
	sub := &subscription{}
	cancel, err := g.core.SubscribeResource(ctx, g.featureCall(ctx, req), uri, func(served string) { g.resourceChanged(sub, served) })
	if err != nil {
		return featureWireError(err, uri)
	}
	sub.cancel = cancel
	s.mu.Lock()
	if s.closed || s.bySession[ss][uri] != nil {
		s.mu.Unlock()
		cancel()
		return nil
	}
	if s.bySession[ss] == nil {
		s.bySession[ss] = map[string]*subscription{}
		s.watchers.Go(func() {
			_ = ss.Wait()
			s.endSession(ss)
		})
	}
	s.bySession[ss][uri] = sub
	s.byURI[uri] = append(s.byURI[uri], sub)
	s.mu.Unlock()
	return nil
}

// unsubscribe answers resources/unsubscribe.
func (g *Gateway) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s := &g.feat.subs
	s.mu.Lock()
	sub := s.bySession[req.Session][req.Params.URI]
	if sub != nil {
		s.dropLocked(req.Session, req.Params.URI, sub)
	}
	s.mu.Unlock()
	if sub != nil {
		sub.cancel()
	}
	return nil
}

func (s *subscriptions) dropLocked(ss *mcp.ServerSession, uri string, sub *subscription) {
	delete(s.bySession[ss], uri)
	s.byURI[uri] = slices.DeleteFunc(s.byURI[uri], func(x *subscription) bool { return x == sub })
	if len(s.byURI[uri]) == 0 {
		delete(s.byURI, uri)
	}
}

// endSession ends the subscriptions of a session that is gone.
func (s *subscriptions) endSession(ss *mcp.ServerSession) {
	s.mu.Lock()
	mine := s.bySession[ss]
	delete(s.bySession, ss)
	for uri, sub := range mine {
		s.dropLocked(ss, uri, sub)
	}
	s.mu.Unlock()
	for _, sub := range mine {
		sub.cancel()
	}
}

// closeAll refuses new subscriptions and waits for the session watchers
// (each ends with its session, which Close ends).
func (s *subscriptions) closeAll() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.watchers.Wait()
}

// resourceChanged passes one change on, once: only the URI's first
// subscription sends it.
func (g *Gateway) resourceChanged(sub *subscription, uri string) {
	s := &g.feat.subs
	s.mu.Lock()
	first := len(s.byURI[uri]) > 0 && s.byURI[uri][0] == sub
	s.mu.Unlock()
	if first {
		_ = g.sdk.ResourceUpdated(g.hardStop, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// declareFeatures makes initialize and server/discover declare what is
// served: completions and resource subscriptions only while some MCP
// server offers them (the SDK declares them whenever their handlers are
// set, which here is always).
func (g *Gateway) declareFeatures(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "initialize" && method != "server/discover" {
			return res, err
		}
		completes, subscribes := g.core.Features().Offers()
		switch r := res.(type) {
		case *mcp.InitializeResult:
			out := *r
			out.Capabilities = declared(r.Capabilities, completes, subscribes)
			return &out, nil
		case *mcp.DiscoverResult:
			out := *r
			out.Capabilities = declared(r.Capabilities, completes, subscribes)
			return &out, nil
		}
		return res, nil
	}
}

func declared(c *mcp.ServerCapabilities, completes, subscribes bool) *mcp.ServerCapabilities {
	if c == nil {
		return nil
	}
	out := *c
	if !completes {
		out.Completions = nil
	}
	if out.Resources != nil && !subscribes {
		r := *out.Resources
		r.Subscribe = false
		out.Resources = &r
	}
	return &out
}

// perCaller reports whether req's answer depends on the caller's token: the
// lists, and reads of what a token may or may not see.
func perCaller(req mcp.Request) bool {
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest, *mcp.ListPromptsRequest, *mcp.ReadResourceRequest:
		return true
	}
	return false
}
