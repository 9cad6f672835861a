// Package console is toolnexus's web console for the people who run it:
// approvers decide held calls, every caller connects its OAuth accounts,
// operators read sources, tools, sessions and the recent audit lines.
// It is served on the web listener (internal/web, --web-listen), never on
// the gRPC or /mcp listener.
//
// Pages are server-rendered html/template with their stylesheet and one
// small script embedded in the binary (assets/); every page reads the
// same core methods the gRPC services call, with the logged-in person's
// principal, so a page never shows more than that caller may see over
// gRPC. A person logs in with a static token (a password field) or, with
// server.web.oidc, at the auth.oidc issuer (authorization code with
// PKCE); the login is a server-side session in the store given (the
// OAuth vault: memory, a directory, or Redis with cluster.redis, sealed),
// behind an HttpOnly, SameSite=Lax cookie (Secure and __Host- under
// HTTPS). Every form carries a CSRF token and every POST must come from
// the console's own origin; pages allow no inline script or style and
// no framing. docs/console.md has the design and its threat list.
package console

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/internal/search"
)

// Options are what the console is built from.
type Options struct {
	// Core is the core the pages read and act on.
	Core Core
	// Connections are the callers' OAuth connections; nil when the
	// server has none (the /connections page then says so).
	Connections Connections
	// Store keeps the login sessions and the OIDC logins in progress.
	Store Store
	// Reload applies the config file anew (the admins' Reload button, as
	// SourceService.Reload).
	Reload Reloader
	// BaseURL is where browsers reach the web listener (its public URL):
	// the origin POSTs must come from and the OIDC redirect's base.
	BaseURL func() string
	// Definitions are the tool definitions pinning holds, listed and
	// decided on /approvals (CatalogDefinitions over the core); nil
	// leaves the section out.
	Definitions Definitions
	// Logger receives logins, logouts and refusals.
	Logger *slog.Logger
	// HTTPClient reaches the identity provider (nil = a default with a
	// timeout).
	HTTPClient *http.Client
}

// Console serves the pages.
type Console struct {
	opts    Options
	log     *slog.Logger
	search  search.Cache
	limiter *loginLimiter
	oidc    *oidcClients
}

// New makes the console.
func New(opts Options) *Console {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	return &Console{opts: opts, log: opts.Logger, limiter: newLoginLimiter(), oidc: newOIDCClients(opts.HTTPClient)}
}

// Mounter is where the console mounts its pages: a *web.Server.
type Mounter interface {
	Handle(pattern string, h http.Handler)
}

// Mount puts every page on m.
func (c *Console) Mount(m Mounter) {
	m.Handle("GET /static/", c.guard(assetHandler()))
	m.Handle("GET /{$}", c.page(c.home))
	m.Handle("GET /login", c.guard(http.HandlerFunc(c.loginPage)))
	m.Handle("POST /login", c.guard(http.HandlerFunc(c.loginToken)))
	m.Handle("GET /login/oidc", c.guard(http.HandlerFunc(c.loginOIDC)))
	m.Handle("GET "+OIDCCallbackPath, c.guard(http.HandlerFunc(c.oidcCallback)))
	m.Handle("POST /logout", c.action(c.logout))
	m.Handle("GET /approvals", c.page(c.approvalsPage))
	m.Handle("POST /approvals/{id}", c.action(c.decide))
	m.Handle("POST /definitions/{id}", c.action(c.decideDefinition))
	m.Handle("GET /connections", c.page(c.connectionsPage))
	m.Handle("POST /connections/connect", c.action(c.connect))
	m.Handle("POST /connections/disconnect", c.action(c.disconnect))
	m.Handle("GET /sources", c.page(c.sourcesPage))
	m.Handle("POST /sources/reload", c.action(c.reload))
	m.Handle("GET /tools", c.page(c.toolsPage))
	m.Handle("GET /sessions", c.page(c.sessionsPage))
	m.Handle("POST /sessions/delete", c.action(c.deleteSession))
	m.Handle("GET /audit", c.page(c.auditPage))
}

// baseURL is the listener's public base URL, without a trailing slash.
func (c *Console) baseURL() string { return strings.TrimRight(c.opts.BaseURL(), "/") }

// https reports whether browsers reach the console over HTTPS.
func (c *Console) https() bool { return strings.HasPrefix(c.baseURL(), "https://") }

// timeout bounds what one request asks of the core and the stores.
func timeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 15*time.Second)
}
