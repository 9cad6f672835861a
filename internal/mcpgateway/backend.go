package mcpgateway

import (
	"context"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Core is what the MCP front-end asks of the core, and nothing more:
// *core.Core is the one in production. Naming it here, where it is used,
// lets the gateway be built and tested without pkg/server.
type Core interface {
	// Execute runs one decoded tools/call; a failure is a result.
	Execute(ctx context.Context, call core.Call) (tool.Result, string)
	// Recovered records a panic the gateway caught around a call.
	Recovered(ctx context.Context, name, protocol string, v any) tool.Result
	// View is a caller's view of the tool set through /mcp: what tools/list,
	// search_tools and every call show it.
	View(caller *auth.Principal, protocol, name string) (core.View, error)
	// Watch follows the tool set that tools/list mirrors.
	Watch() (*registry.Watcher, *registry.Snapshot)
	// Registry is read for its latest snapshot when server.mcp.tools
	// changes and the list must be re-checked at once.
	Registry() *registry.Registry
	// Authenticator checks bearer tokens; nil when auth is off.
	Authenticator() *auth.Authenticator
	// CheckSession refuses a malformed Toolnexus-Session header.
	CheckSession(id string) error
	// Sources says what each source is (its title and description), for
	// search_tools' server field.
	Sources() []core.SourceInfo
	// Config is the config in force: the OAuth resource metadata reads
	// auth.oidc and server.mcp.resource from it on every request, so a
	// reload is seen at once.
	Config() *config.Config

	// The MCP servers' resources, templates and prompts (features.go).
	Features() *registry.FeatureSnapshot
	FeatureCall(caller *auth.Principal, protocol, session string) core.FeatureCall
	WatchFeatures(fn func(prev, next *registry.FeatureSnapshot)) (cancel func())
	ReadResource(ctx context.Context, fc core.FeatureCall, uri string) ([]feature.Contents, error)
	GetPrompt(ctx context.Context, fc core.FeatureCall, name string, args map[string]string) (feature.PromptResult, error)
	Complete(ctx context.Context, fc core.FeatureCall, ref core.CompleteRef, req feature.CompleteRequest) (feature.Completion, error)
	SubscribeResource(ctx context.Context, fc core.FeatureCall, uri string, notify func(uri string)) (cancel func(), err error)
}

var _ Core = (*core.Core)(nil)
