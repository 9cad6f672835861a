package core

import (
	"context"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// What MCP servers offer besides tools — resources, resource templates,
// prompts, completion — is served by the core as tools are: one catalog
// (registry.Features) the sources publish into, and one small pipeline
// (featurepipe.go) every front-end's request goes through, with the same
// rules as a tool call: the caller's allowlist (auth tokens' resources and
// prompts keys), narrowed by what the front-end serves (Door), the rate
// limit of the principal, the Cedar policies (Action::"read" on
// Resource::"<uri>", Action::"get" on Prompt::"<name>"), the session
// check, limits.timeout, limits.maxResourceBytes, metrics and the audit
// log. A resource or prompt the caller may not see is answered exactly as
// one that does not exist.

// Door is what a front-end serves of the features: /mcp's
// server.mcp.resources and server.mcp.prompts. A nil list serves every
// resource or prompt; a nil Door serves everything.
type Door struct{ Resources, Prompts []string }

// FeatureCall is who asks for a feature, and through which door. Make it
// with Core.FeatureCall, which sets what the door serves from the config,
// as Core.View does for tools: a front-end keeps no copy of that rule.
type FeatureCall struct {
	// Caller is the authenticated principal; nil when auth is off.
	Caller *auth.Principal
	// Protocol is ProtocolGRPC or ProtocolMCP.
	Protocol string
	// Session is the caller's session id ("" = none).
	Session string
	door    *Door
}

// FeatureCall is the call of caller through the door protocol, narrowed by
// what that door serves (/mcp: server.mcp.resources, server.mcp.prompts).
func (c *Core) FeatureCall(caller *auth.Principal, protocol, session string) FeatureCall {
	fc := FeatureCall{Caller: caller, Protocol: protocol, Session: session}
	if protocol == ProtocolMCP {
		fc.door = c.served.Load().features
	}
	return fc
}

// SeesResource reports whether the caller may see (and read) a resource:
// its URI as served, on the server of layer.
func (fc FeatureCall) SeesResource(uri string, layer registry.LayerID) bool {
	if d := fc.door; d != nil && d.Resources != nil && !auth.FeatureGlobsAllow(d.Resources, uri, layer.Name) {
		return false
	}
	return fc.Caller.AllowsResource(uri, layer.Name)
}

// SeesPrompt reports whether the caller may see (and get) a prompt.
func (fc FeatureCall) SeesPrompt(name string, layer registry.LayerID) bool {
	if d := fc.door; d != nil && d.Prompts != nil && !auth.FeatureGlobsAllow(d.Prompts, name, layer.Name) {
		return false
	}
	return fc.Caller.AllowsPrompt(name, layer.Name)
}

// Features is the catalog's current snapshot: front-ends list from it
// (narrowed with SeesResource and SeesPrompt).
func (c *Core) Features() *registry.FeatureSnapshot { return c.features.Snapshot() }

// WatchFeatures calls fn after every change of the catalog, until cancel;
// fn runs under the catalog's writer lock and must be quick.
func (c *Core) WatchFeatures(fn func(prev, next *registry.FeatureSnapshot)) (cancel func()) {
	return c.features.Subscribe(fn)
}

// ReadResource reads a resource by its URI as served. The contents' URIs
// come back as served too.
func (c *Core) ReadResource(ctx context.Context, fc FeatureCall, uri string) ([]feature.Contents, error) {
	snap := c.features.Snapshot()
	f := featureFlow{FeatureCall: fc, method: methodRead, action: policy.ActionRead}
	t := f.routeResource(snap, uri)
	var out []feature.Contents
	err := c.runFeature(ctx, &f, func(ctx context.Context) (int, error) {
		contents, err := f.server.Read(ctx, t.URI)
		if err != nil {
			return 0, err
		}
		n := 0
		for i := range contents {
			if contents[i].URI == "" {
				contents[i].URI = f.target
			} else {
				contents[i].URI = snap.Served(f.layer, contents[i].URI)
			}
			n += contents[i].Size()
		}
		out = contents
		return n, c.checkSize(n, "resource "+uri)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// routeResource resolves a resource request: the server and its own URI,
// and the request's target, the URI's one canonical served form — so a
// rewritten alias of a URI (toolnexus://SERVER/URI for a URI the server
// keeps) is allowed, refused, audited and answered as the URI itself, and
// no second name slips past a policy or an allowlist written for the first.
func (f *featureFlow) routeResource(snap *registry.FeatureSnapshot, uri string) registry.Target {
	f.target, f.asked = uri, uri
	t, ok := snap.Route(uri)
	if !ok {
		return t
	}
	f.target = snap.Served(t.Layer, t.URI)
	f.found(t.Layer, t.Server, f.SeesResource(f.target, t.Layer))
	return t
}

// GetPrompt fills in a prompt by its name as served. URIs in its messages
// come back as served.
func (c *Core) GetPrompt(ctx context.Context, fc FeatureCall, name string, args map[string]string) (feature.PromptResult, error) {
	snap := c.features.Snapshot()
	f := featureFlow{FeatureCall: fc, method: methodGet, target: name, action: policy.ActionGet}
	e, ok := snap.Prompt(name)
	if ok {
		set, _ := snap.Set(e.Layer)
		f.found(e.Layer, set.Server, fc.SeesPrompt(name, e.Layer))
	}
	var out feature.PromptResult
	err := c.runFeature(ctx, &f, func(ctx context.Context) (int, error) {
		if missing := missingArgument(e.Prompt, args); missing != "" {
			return 0, feature.Errorf(feature.InvalidArgument, "prompt %s: argument %q is required", name, missing)
		}
		res, err := f.server.GetPrompt(ctx, e.Prompt.Upstream, args)
		if err != nil {
			return 0, err
		}
		n := len(res.Description)
		for i := range res.Messages {
			res.Messages[i].Content = servedContent(snap, f.layer, res.Messages[i].Content)
			n += res.Messages[i].Content.Size()
		}
		out = res
		return n, c.checkSize(n, "prompt "+name)
	})
	return out, err
}

func missingArgument(p feature.Prompt, args map[string]string) string {
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return a.Name
		}
	}
	return ""
}

// servedContent maps the URI of an embedded resource or resource link a
// server returned into the served namespace: a server cannot hand out a URI
// that reads another server's resource.
func servedContent(snap *registry.FeatureSnapshot, layer registry.LayerID, c tool.Content) tool.Content {
	if (c.Kind == tool.ContentResource || c.Kind == tool.ContentResourceLink) && c.URI != "" {
		c.URI = snap.Served(layer, c.URI)
	}
	return c
}

// CompleteRef names what a completion is for, as served: a prompt's name
// or a resource template's URI template. Exactly one is set.
type CompleteRef struct{ Prompt, URITemplate string }

// Complete asks the server that owns the prompt or template for the values
// an argument may take.
func (c *Core) Complete(ctx context.Context, fc FeatureCall, ref CompleteRef, req feature.CompleteRequest) (feature.Completion, error) {
	snap := c.features.Snapshot()
	f := featureFlow{FeatureCall: fc, method: methodComplete}
	switch {
	case ref.Prompt != "":
		f.target, f.action = ref.Prompt, policy.ActionGet
		if e, ok := snap.Prompt(ref.Prompt); ok {
			req.Ref = feature.Ref{Prompt: e.Prompt.Upstream}
			f.resolveCompletion(snap, e.Layer, fc.SeesPrompt(ref.Prompt, e.Layer))
		}
	default:
		f.target, f.action = ref.URITemplate, policy.ActionRead
		if e, ok := snap.Template(ref.URITemplate); ok {
			req.Ref = feature.Ref{URITemplate: e.Upstream}
			f.resolveCompletion(snap, e.Layer, fc.SeesResource(ref.URITemplate, e.Layer))
		}
	}
	var out feature.Completion
	err := c.runFeature(ctx, &f, func(ctx context.Context) (int, error) {
		if !f.completes {
			return 0, nil // the server offers no completion: nothing to offer
		}
		res, err := f.server.Complete(ctx, req)
		if len(res.Values) > maxCompletionValues {
			res.Values, res.HasMore = res.Values[:maxCompletionValues], true
		}
		out = res
		n := 0
		for _, v := range res.Values {
			n += len(v)
		}
		return n, err
	})
	if out.Values == nil {
		out.Values = []string{}
	}
	return out, err
}

// maxCompletionValues is MCP's cap on one completion's values.
const maxCompletionValues = 100
