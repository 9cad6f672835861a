package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Besides tools, a server may offer resources, resource templates, prompts
// and completion. When the publisher the source starts with takes features
// (sources.FeaturePublisher), the source lists them after its tools, on
// every (re)connect and on notifications/{resources,prompts}/list_changed,
// and publishes them as its layer's feature.Set; the Source itself is the
// set's feature.Server. Prompts are named like the tools (prefix + the
// upstream's name, sanitized); URIs are the upstream's own, the registry
// decides how they are served.

// maxFeatureItems bounds how many resources, templates or prompts one
// server may list: an upstream listing millions must not exhaust memory.
const maxFeatureItems = 10000

// codeResourceNotFound is the JSON-RPC error an unknown resource was
// before SEP-2164; since, it is invalid params (-32602) with data.uri.
const codeResourceNotFound = -32002

// featureState is the source's side of its features.
type featureState struct {
	pub sources.FeaturePublisher // nil: the publisher takes tools only

	mu sync.Mutex
	// subscribed are the upstream URIs subscribed to, resubscribed on a
	// new session.
	subscribed map[string]bool
}

// initFeatures notes whether pub takes features; Start calls it.
func (s *Source) initFeatures(pub sources.Publisher) {
	s.features.pub, _ = pub.(sources.FeaturePublisher)
	s.features.subscribed = map[string]bool{}
}

// featureHandlers adds the notifications the features need to a session's
// client options.
func (s *Source) featureHandlers(opts *sdk.ClientOptions, sess *session) {
	if s.features.pub == nil {
		return
	}
	poke := func() {
		select {
		case sess.featuresChanged <- struct{}{}:
		default: // a re-list is already due
		}
	}
	opts.ResourceListChangedHandler = func(context.Context, *sdk.ResourceListChangedRequest) { poke() }
	opts.PromptListChangedHandler = func(context.Context, *sdk.PromptListChangedRequest) { poke() }
	opts.ResourceUpdatedHandler = func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		if req.Params != nil && req.Params.URI != "" {
			s.features.pub.ResourceUpdated(s.id, req.Params.URI)
		}
	}
}

// publishFeatures lists the session's features and publishes them, then
// keeps them current until the session ends (on a goroutine Close joins).
// The tools are already published: a failed listing costs the features
// alone, with a warning.
func (s *Source) publishFeatures(sess *session) {
	if s.features.pub == nil {
		return
	}
	s.relistFeatures(sess)
	s.resubscribe(sess)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.wg.Add(1)
	go s.watchFeatures(sess)
}

// watchFeatures re-lists after a list_changed (coalesced like the tools')
// until the session dies or the source closes.
func (s *Source) watchFeatures(sess *session) {
	defer s.wg.Done()
	for {
		select {
		case <-s.closeCtx.Done():
			return
		case <-sess.dead:
			return
		case <-sess.featuresChanged:
		}
		t := time.NewTimer(listChangedDelay)
		select {
		case <-s.closeCtx.Done():
			t.Stop()
			return
		case <-sess.dead:
			t.Stop()
			return
		case <-t.C:
		}
		s.relistFeatures(sess)
	}
}

// relistFeatures lists and publishes, unless the session is no longer the
// source's.
func (s *Source) relistFeatures(sess *session) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout())
	defer cancel()
	stop := context.AfterFunc(s.closeCtx, cancel)
	defer stop()
	set := s.listFeatures(ctx, sess)
	s.publishFor(sess, func() error { return s.features.pub.ReplaceFeatures(s.id, set) }, "MCP features could not be published")
}

// listFeatures lists what the server's capabilities say it has.
func (s *Source) listFeatures(ctx context.Context, sess *session) feature.Set {
	set := feature.Set{Server: s}
	ir := sess.cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return set
	}
	caps := ir.Capabilities
	warn := func(what string, err error) {
		s.log.Warn("MCP "+what+" failed; the server's "+what+" are not served", "error", s.redact.Apply(err.Error()))
	}
	if caps.Resources != nil {
		set.Subscriptions = caps.Resources.Subscribe
		if list, err := collect(ctx, sess.cs.Resources(ctx, nil)); err != nil {
			warn("resources/list", err)
		} else {
			set.Resources = s.buildResources(list)
		}
		if list, err := collect(ctx, sess.cs.ResourceTemplates(ctx, nil)); err != nil {
			warn("resources/templates/list", err)
		} else {
			set.Templates = s.buildTemplates(list)
		}
	}
	if caps.Prompts != nil {
		if list, err := collect(ctx, sess.cs.Prompts(ctx, nil)); err != nil {
			warn("prompts/list", err)
		} else {
			set.Prompts = s.buildPrompts(list)
		}
	}
	set.Completions = caps.Completions != nil
	return set
}

// collect reads a paged list to its end, at most maxFeatureItems items.
func collect[T any](ctx context.Context, seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	var failed error
	seq(func(v T, err error) bool {
		if err != nil {
			failed = err
			return false
		}
		out = append(out, v)
		return len(out) < maxFeatureItems && ctx.Err() == nil
	})
	if failed == nil && ctx.Err() != nil {
		failed = ctx.Err()
	}
	return out, failed
}

// reserved reports (and logs) an upstream URI in toolnexus's rewrite space:
// served, it could pass for another server's resource.
func (s *Source) reserved(what, uri string) bool {
	if !strings.HasPrefix(uri, registry.RewritePrefix) {
		return false
	}
	s.log.Warn("MCP "+what+" not served: its URI is in the space toolnexus rewrites clashing URIs into", "uri", uri)
	return true
}

func (s *Source) buildResources(list []*sdk.Resource) []feature.Resource {
	out := make([]feature.Resource, 0, len(list))
	for _, r := range list {
		if r == nil || r.URI == "" || s.reserved("resource", r.URI) {
			continue
		}
		out = append(out, feature.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description,
			MIMEType: r.MIMEType, Size: r.Size, Annotations: annotationsFrom(r.Annotations)})
	}
	return out
}

func (s *Source) buildTemplates(list []*sdk.ResourceTemplate) []feature.Template {
	out := make([]feature.Template, 0, len(list))
	for _, t := range list {
		if t == nil || t.URITemplate == "" || s.reserved("resource template", t.URITemplate) {
			continue
		}
		out = append(out, feature.Template{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description,
			MIMEType: t.MIMEType, Annotations: annotationsFrom(t.Annotations)})
	}
	return out
}

func (s *Source) buildPrompts(list []*sdk.Prompt) []feature.Prompt {
	out := make([]feature.Prompt, 0, len(list))
	taken := map[string]bool{}
	for _, p := range list {
		if p == nil || p.Name == "" {
			continue
		}
		name := s.prefix + tool.Sanitize(p.Name)
		if taken[name] {
			s.log.Warn("MCP prompt dropped: its name collides with another after sanitizing", "prompt", p.Name, "name", name)
			continue
		}
		taken[name] = true
		fp := feature.Prompt{Name: name, Upstream: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			if a != nil {
				fp.Arguments = append(fp.Arguments, feature.Argument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
		}
		out = append(out, fp)
	}
	return out
}

func annotationsFrom(a *sdk.Annotations) *feature.Annotations {
	if a == nil {
		return nil
	}
	out := &feature.Annotations{Priority: a.Priority, LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, string(r))
	}
	return out
}

// featureSession is the session a feature request goes out on, as a tool
// call's would (the caller's own with tokenExchange or oauth, with the
// caller's token), and its release.
func (s *Source) featureSession(ctx context.Context) (*session, func(), error) {
	if s.callers != nil {
		principal := callerctx.Principal(ctx)
		tok, err := s.featureToken(ctx, principal)
		if err != nil {
			return nil, nil, err
		}
		c, msg := s.callerSession(ctx, principal, tok)
		if c == nil {
			return nil, nil, feature.Errorf(feature.Unavailable, "%s", msg)
		}
		return c.sess, func() { s.callers.release(c) }, nil
	}
	sess := s.live.Load()
	if sess == nil {
		return nil, nil, feature.Errorf(feature.Unavailable, "%s", s.downText())
	}
	return sess, func() {}, nil
}

// featureError turns what the SDK returned into a feature.Error: the
// server's own JSON-RPC error as such (its "resource not found" as
// NotFound), anything else as the server being down.
func (s *Source) featureError(ctx context.Context, sess *session, err error) error {
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire) && notFound(wire):
		return feature.Errorf(feature.NotFound, "%s", s.redact.Apply(wire.Message))
	case errors.As(err, &wire):
		return &feature.Error{Kind: feature.Upstream, Code: wire.Code, Msg: s.redact.Apply(fmt.Sprintf("MCP server %q: %s", s.name, wire.Message))}
	case ctx.Err() != nil:
		return feature.Errorf(feature.Unavailable, "MCP server %q did not answer: %v", s.name, ctx.Err())
	}
	s.sessionDown(sess, err)
	return feature.Errorf(feature.Unavailable, "%s", s.redact.Apply(fmt.Sprintf("MCP server %q is down (restarting): %v", s.name, err)))
}

// notFound reports whether a server's error says the resource does not
// exist, in either of the protocol's forms.
func notFound(e *jsonrpc.Error) bool {
	if e.Code == codeResourceNotFound {
		return true
	}
	var data struct {
		URI string `json:"uri"`
	}
	return e.Code == jsonrpc.CodeInvalidParams && json.Unmarshal(e.Data, &data) == nil && data.URI != ""
}

// needsInput refuses a result that asks for input: resources and prompts
// are read in one go.
func (s *Source) needsInput(what string) error {
	return feature.Errorf(feature.Upstream, "MCP server %q asked for input to %s; toolnexus answers input requests on tool calls only", s.name, what)
}

// Read implements feature.Server.
func (s *Source) Read(ctx context.Context, uri string) ([]feature.Contents, error) {
	sess, release, err := s.featureSession(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	kept := &rawRead{}
	res, err := sess.cs.ReadResource(withRawRead(ctx, kept), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, s.featureError(ctx, sess, err)
	}
	if result := kept.get(); result != nil {
		return s.readAnswer(uri, result) // rawread.go
	}
	return s.readResult(uri, res)
}

// readResult is Read's answer from the result the SDK decoded.
func (s *Source) readResult(uri string, res *sdk.ReadResourceResult) ([]feature.Contents, error) {
	if res.NeedsInput() {
		return nil, s.needsInput("read " + uri)
	}
	out := make([]feature.Contents, 0, len(res.Contents))
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		fc := feature.Contents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Blob != nil {
			fc.Data, fc.Blob, fc.Text = c.Blob, true, ""
		}
		out = append(out, fc)
	}
	return out, nil
}

// GetPrompt implements feature.Server.
func (s *Source) GetPrompt(ctx context.Context, name string, args map[string]string) (feature.PromptResult, error) {
	sess, release, err := s.featureSession(ctx)
	if err != nil {
		return feature.PromptResult{}, err
	}
	defer release()
	params := &sdk.GetPromptParams{Name: name, Arguments: args}
	in := feature.PromptInputFrom(ctx)
	if in != nil && in.Requests != nil {
		if err := answerRound(params, in); err != nil {
			return feature.PromptResult{}, err
		}
	}
	res, err := sess.cs.GetPrompt(ctx, params)
	if err != nil {
		return feature.PromptResult{}, s.featureError(ctx, sess, err)
	}
	if res.NeedsInput() {
		if in == nil || !s.suspends() || len(res.InputRequests) == 0 {
			return feature.PromptResult{}, s.needsInput("get prompt " + name)
		}
		reqs, err := json.Marshal(res.InputRequests)
		if err != nil {
			return feature.PromptResult{}, feature.Errorf(feature.Upstream, "MCP server %q asked for input to get prompt %s that cannot be passed on: %v", s.name, name, err)
		}
		return feature.PromptResult{Input: &feature.PromptInput{Requests: reqs, State: res.RequestState}}, nil
	}
	out := feature.PromptResult{Description: res.Description, Messages: make([]feature.Message, 0, len(res.Messages))}
	for _, m := range res.Messages {
		if m == nil || m.Content == nil {
			continue
		}
		if c, ok := contentOf(m.Content); ok {
			out.Messages = append(out.Messages, feature.Message{Role: string(m.Role), Content: c})
		}
	}
	return out, nil
}

// contentOf maps one MCP content part (false for a kind it does not know).
func contentOf(c sdk.Content) (tool.Content, bool) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return tool.Text(c.Text), true
	case *sdk.ImageContent:
		return tool.Image(c.MIMEType, c.Data), true
	case *sdk.AudioContent:
		return tool.Audio(c.MIMEType, c.Data), true
	case *sdk.EmbeddedResource:
		if r := c.Resource; r != nil {
			if r.Blob != nil {
				return tool.BlobResource(r.URI, r.MIMEType, r.Blob), true
			}
			return tool.TextResource(r.URI, r.MIMEType, r.Text), true
		}
	case *sdk.ResourceLink:
		return tool.ResourceLink(c.URI, c.Name, c.MIMEType), true
	}
	return tool.Content{}, false
}

// Complete implements feature.Server.
func (s *Source) Complete(ctx context.Context, req feature.CompleteRequest) (feature.Completion, error) {
	sess, release, err := s.featureSession(ctx)
	if err != nil {
		return feature.Completion{}, err
	}
	defer release()
	ref := &sdk.CompleteReference{Type: "ref/prompt", Name: req.Ref.Prompt}
	if req.Ref.URITemplate != "" {
		ref = &sdk.CompleteReference{Type: "ref/resource", URI: req.Ref.URITemplate}
	}
	params := &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
	if len(req.Context) > 0 {
		params.Context = &sdk.CompleteContext{Arguments: req.Context}
	}
	res, err := sess.cs.Complete(ctx, params)
	if err != nil {
		return feature.Completion{}, s.featureError(ctx, sess, err)
	}
	return feature.Completion{Values: res.Completion.Values, Total: res.Completion.Total, HasMore: res.Completion.HasMore}, nil
}

// Subscribe implements feature.Server. On 2026-07-28 the subscription is a
// subscriptions/listen stream that lives until Unsubscribe or the session
// ends, on a goroutine the session's close joins.
func (s *Source) Subscribe(ctx context.Context, uri string) error {
	s.features.mu.Lock()
	s.features.subscribed[uri] = true
	s.features.mu.Unlock()
	sess := s.live.Load()
	if sess == nil {
		return nil // the next session subscribes (resubscribe)
	}
	return s.subscribeOn(ctx, sess, uri)
}

func (s *Source) subscribeOn(ctx context.Context, sess *session, uri string) error {
	params := &sdk.SubscribeParams{URI: uri}
	if sess.speaksModern() {
		if !sess.goFlight(func() { _ = sess.cs.Subscribe(context.Background(), params) }) {
			return feature.Errorf(feature.Unavailable, "%s", s.downText())
		}
		return nil
	}
	if err := sess.cs.Subscribe(ctx, params); err != nil {
		return s.featureError(ctx, sess, err)
	}
	return nil
}

// Unsubscribe implements feature.Server.
func (s *Source) Unsubscribe(ctx context.Context, uri string) error {
	s.features.mu.Lock()
	delete(s.features.subscribed, uri)
	s.features.mu.Unlock()
	sess := s.live.Load()
	if sess == nil {
		return nil
	}
	if err := sess.cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		return s.featureError(ctx, sess, err)
	}
	return nil
}

// resubscribe renews the subscriptions on a new session (after a restart).
func (s *Source) resubscribe(sess *session) {
	s.features.mu.Lock()
	uris := make([]string, 0, len(s.features.subscribed))
	for u := range s.features.subscribed {
		uris = append(uris, u)
	}
	s.features.mu.Unlock()
	for _, u := range uris {
		ctx, cancel := context.WithTimeout(s.closeCtx, s.cfg.timeout())
		if err := s.subscribeOn(ctx, sess, u); err != nil {
			s.log.Warn("MCP resources/subscribe after a restart failed", "uri", u, "error", err)
		}
		cancel()
	}
}
