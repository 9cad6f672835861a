package console

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
)

// Core is what the console asks of the core: the methods the gRPC
// services call, so each page is what the same caller reads over gRPC.
// *core.Core is the one in production.
type Core interface {
	// Authenticator checks a login's token and finds the principal of a
	// session again on each request; nil when auth is off.
	Authenticator() *auth.Authenticator
	// Config is the config in force (server.web, auth.oidc).
	Config() *config.Config
	// Snapshot is the tool set (/tools, as ListTools and SearchTools).
	Snapshot() *registry.Snapshot
	// Approvals and DecideApproval are ApprovalService (/approvals).
	Approvals(ctx context.Context, p *auth.Principal) ([]approval.Entry, error)
	DecideApproval(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) (approval.Entry, error)
	// Sessions and DeleteSession are SessionService (/sessions).
	Sessions(caller string, all bool) []core.SessionInfo
	DeleteSession(principal, id string) error
	// Sources is SourceService.ListSources (/sources, admins).
	Sources() []core.SourceInfo
	// Audit is the audit log, whose recent call lines /audit shows.
	Audit() *audit.Log
}

var _ Core = (*core.Core)(nil)

// Connections are ConnectionService's calls (/connections):
// *oauthclient.Manager.
type Connections interface {
	Connect(ctx context.Context, principal, name string, listsTools bool) (oauthclient.Flow, error)
	List(ctx context.Context, principal string, all bool) ([]oauthclient.Connection, error)
	Disconnect(ctx context.Context, principal, name string) (revoked bool, err error)
	// Upstreams are the names of the MCP servers with an oauth section.
	Upstreams() []string
}

var _ Connections = (*oauthclient.Manager)(nil)

// Reloader is SourceService.Reload: it applies the config file anew.
type Reloader func(ctx context.Context) (core.Report, error)

// Store keeps sealed records with a lifetime: *vault.Vault, whose
// backends (memory, directory, Redis) pass one contract suite
// (internal/vault/vaulttest). Get of a missing or expired record is
// vault.ErrNotFound; Take reads and removes at once (a single use).
type Store interface {
	Put(ctx context.Context, key string, plaintext []byte, ttl time.Duration) error
	Get(ctx context.Context, key string) ([]byte, error)
	Take(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) (bool, error)
}
