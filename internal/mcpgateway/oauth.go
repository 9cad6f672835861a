package mcpgateway

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/toolnexus/toolnexus/internal/config"
)

// ResourceMetadataPath is where /mcp describes itself as an OAuth 2.1
// protected resource (RFC 9728); the path-suffixed form
// ResourceMetadataPath+Path is served too, as RFC 9728 section 3.1 builds
// it for a resource URL with a path.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// listenURL is the gateway's own base URL (scheme://host:port), set when
// its listener is bound; the default resource is it plus Path.
type listenURL struct{ v atomic.Pointer[string] }

// SetBaseURL records the listener's URL, e.g. "http://127.0.0.1:7001".
func (g *Gateway) SetBaseURL(base string) { g.base.v.Store(&base) }

// resource is the URL tokens for /mcp must be meant for: server.mcp.resource,
// or the listener's URL + /mcp.
func (g *Gateway) resource(cfg *config.Config) string {
	if r := cfg.Server.MCP.Resource; r != "" {
		return r
	}
	if b := g.base.v.Load(); b != nil {
		return *b + Path
	}
	return ""
}

// metadataURL is the resource's metadata document, on the resource's own
// origin.
func (g *Gateway) metadataURL(cfg *config.Config) string {
	u, err := url.Parse(g.resource(cfg))
	if err != nil || u.Host == "" {
		return ResourceMetadataPath
	}
	return u.Scheme + "://" + u.Host + ResourceMetadataPath
}

// ResourceMetadata serves the protected resource metadata: which
// authorization servers issue tokens for /mcp and which scopes it needs,
// so an MCP client can find where to get a token from a 401 alone. Without
// auth.oidc there is none to advertise, and it is 404.
func (g *Gateway) ResourceMetadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cfg := g.core.Config()
		if len(cfg.Auth.OIDC) == 0 || (r.URL.Path != ResourceMetadataPath && r.URL.Path != ResourceMetadataPath+Path) {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		issuers := make([]string, 0, len(cfg.Auth.OIDC))
		for _, o := range cfg.Auth.OIDC {
			issuers = append(issuers, o.Issuer)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*") // browser-based MCP clients read it too
		_ = json.NewEncoder(w).Encode(map[string]any{
			"resource":                 g.resource(cfg),
			"authorization_servers":    issuers,
			"scopes_supported":         requiredScopes(cfg),
			"bearer_methods_supported": []string{"header"},
		})
	})
}

// requiredScopes is every scope some issuer requires, in config order.
func requiredScopes(cfg *config.Config) []string {
	out := []string{}
	for _, o := range cfg.Auth.OIDC {
		for _, s := range o.RequiredScopes {
			if !contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// unauthorized answers 401. With auth.oidc, the challenge points at the
// resource metadata (MCP authorization, RFC 9728 section 5.1), says
// invalid_token when a token was sent, and names the scopes required.
func (g *Gateway) unauthorized(w http.ResponseWriter, msg string, tokenSent bool) {
	cfg := g.core.Config()
	challenge := `Bearer realm="toolnexus"`
	if len(cfg.Auth.OIDC) > 0 {
		var b strings.Builder
		b.WriteString(`Bearer resource_metadata="` + g.metadataURL(cfg) + `"`)
		if tokenSent {
			b.WriteString(`, error="invalid_token"`)
		}
		if s := requiredScopes(cfg); len(s) > 0 {
			b.WriteString(`, scope="` + strings.Join(s, " ") + `"`)
		}
		challenge = b.String()
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, msg, http.StatusUnauthorized)
}
