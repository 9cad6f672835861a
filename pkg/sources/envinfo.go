package sources

import (
	"log/slog"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"go.opentelemetry.io/otel/trace"
)

// Env is what the server hands every source besides its own config section.
type Env struct {
	// Logger is the source's logger. Never log a header value or token.
	Logger *slog.Logger
	// BaseDir resolves relative paths in the config: the config file's
	// directory, or the working directory for the embedded default config.
	BaseDir string
	// Workspace is the absolute root the builtin file tools are confined to.
	Workspace string
	// MaxOutputBytes caps what one call may return (limits.maxOutputBytes);
	// 0 means the default of 1 MiB.
	MaxOutputBytes int
	// Tracing starts the spans a source makes outside any call (an MCP
	// server's reconnect); nil when tracing is off. Inside a call, start
	// child spans from the call's context (trace.SpanFromContext), which
	// carries the call's own span.
	Tracing trace.TracerProvider `json:"-"`
	// Sandbox confines the commands a source starts for a model (bash,
	// sandboxed stdio MCP servers); nil runs them unconfined.
	Sandbox Sandbox `json:"-"`
	// Pending holds the requests of suspended calls (an MCP server's
	// elicitation or sampling); shared by every source so limits.maxPending
	// counts per principal across them. Nil: each source keeps its own.
	Pending *pending.Store `json:"-"`
	// OAuth connects each caller's own account at upstreams with an
	// "oauth" section (pkg/sources/oauthclient); nil: such an upstream fails
	// to start, saying the server has no credential vault.
	OAuth *oauthclient.Manager `json:"-"`
}

// Sandbox confines the processes a source starts for a model. The server
// hands its own to the sources it builds. A source refuses to start
// commands under any other Sandbox that reports On, rather than run them
// unconfined while its owner believes they are confined.
type Sandbox interface {
	// On reports whether commands started under the sandbox are confined.
	On() bool
}

// DefaultMaxOutputBytes is the output cap when none is configured.
const DefaultMaxOutputBytes = 1 << 20

// OutputCap is MaxOutputBytes with the default applied.
func (e Env) OutputCap() int {
	if e.MaxOutputBytes > 0 {
		return e.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

// Log is the logger, or slog.Default when none was given.
func (e Env) Log() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}
