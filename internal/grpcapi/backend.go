package grpcapi

import (
	"context"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Core is what the gRPC front-end asks of the core, and nothing more:
// *core.Core is the one in production. Naming it here, where it is used,
// lets the front-end be built and tested without pkg/server, and shows at a
// glance which rules the front-end leaves to the core.
type Core interface {
	// Execute runs one decoded call; a failure is a result, never an error.
	Execute(ctx context.Context, call core.Call) (tool.Result, string)
	// Recovered records a panic the front-end caught while decoding or
	// encoding, and returns the result the caller gets.
	Recovered(ctx context.Context, name, protocol string, v any) tool.Result
	// View is the caller's view of the tool set, which every listing,
	// search and call consults (view.go).
	View(caller *auth.Principal, protocol, name string) (core.View, error)
	// Snapshot is the tool set calls run against (ListTools, GetTool, Export).
	Snapshot() *registry.Snapshot
	// Watch follows the tool set (WatchTools).
	Watch() (*registry.Watcher, *registry.Snapshot)
	// Authenticator checks bearer tokens; nil when auth is off.
	Authenticator() *auth.Authenticator
	// CheckSession refuses a malformed session id, or a missing one when
	// sessions are required.
	CheckSession(id string) error
	// Sessions and DeleteSession are SessionService.
	Sessions(caller string, all bool) []core.SessionInfo
	DeleteSession(principal, id string) error
	// Sources, Sandbox and Skills are SourceService's inventory.
	Sources() []core.SourceInfo
	Sandbox() sandbox.Status
	Skills() ([]core.Skill, []core.SkippedSkill)
	// SkillsPromptFor is the skills catalog as the caller's view shows it.
	SkillsPromptFor(v core.View) string
	// Config is the config in force (server.limits.watchStreams).
	Config() *config.Config
	// Approvals and DecideApproval are ApprovalService.
	Approvals(ctx context.Context, p *auth.Principal) ([]approval.Entry, error)
	DecideApproval(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) (approval.Entry, error)
	// HeldDefinitions and DecideDefinition are ApprovalService's tool
	// definitions held by pinning (kind "definition").
	HeldDefinitions(ctx context.Context, p *auth.Principal) ([]catalog.Held, error)
	DecideDefinition(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) (catalog.Held, error)
	// The MCP servers' resources, templates and prompts (FeatureService).
	Features() *registry.FeatureSnapshot
	FeatureCall(caller *auth.Principal, protocol, session string) core.FeatureCall
	ReadResource(ctx context.Context, fc core.FeatureCall, uri string) ([]feature.Contents, error)
	GetPrompt(ctx context.Context, fc core.FeatureCall, name string, args map[string]string) (feature.PromptResult, error)
	Complete(ctx context.Context, fc core.FeatureCall, ref core.CompleteRef, req feature.CompleteRequest) (feature.Completion, error)
	SubscribeResource(ctx context.Context, fc core.FeatureCall, uri string, notify func(uri string)) (cancel func(), err error)
}

var _ Core = (*core.Core)(nil)
