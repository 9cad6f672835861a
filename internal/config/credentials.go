package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
)

// Web is server.web: the listener for people's browsers (internal/web),
// where a login at an OAuth upstream ends (/oauth/callback) and, later,
// the console.
type Web struct {
	// Listen is HOST:PORT; empty = off (--web-listen turns it on).
	Listen string `json:"listen"`
	// PublicURL is the listener's external base URL when a proxy fronts
	// it (https://tools.example.com); empty = the listener's own URL.
	PublicURL string `json:"publicUrl"`
	// Console is server.web.console: false keeps the console's pages
	// off this listener (console.go).
	Console *bool `json:"console"`
	// SessionTimeoutMS is server.web.sessionTimeout: how long a console
	// login lasts, in ms (SessionTTL).
	SessionTimeoutMS int64 `json:"sessionTimeout"`
	// OIDC is server.web.oidc: the console's login at an auth.oidc
	// issuer (console.go).
	OIDC *WebOIDC `json:"oidc"`
}

// Credentials is the `credentials` section: where the OAuth tokens of
// each caller's connections (internal/vault) are kept, sealed.
type Credentials struct {
	// Dir holds the sealed records (one replica); with cluster.redis they
	// live in Redis instead. Absolute (resolved against the config's
	// directory).
	Dir string
	// KeyFile holds the AES-256 keys, one per line (the first seals).
	// Absolute.
	KeyFile string
}

// Enabled reports whether the section is set.
func (c Credentials) Enabled() bool { return c.KeyFile != "" }

func parseWeb(raw json.RawMessage) (Web, error) {
	var w Web
	if raw == nil {
		return w, nil
	}
	if err := strictDecode("server.web", raw, &w); err != nil {
		return w, err
	}
	if w.Listen != "" {
		if _, _, err := net.SplitHostPort(w.Listen); err != nil {
			return w, keyErr("server.web.listen", "%q is not HOST:PORT (e.g. 127.0.0.1:8090)", w.Listen)
		}
	}
	if w.PublicURL != "" {
		u, err := url.Parse(w.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return w, keyErr("server.web.publicUrl", "%q must be a base URL such as https://tools.example.com (no path, no query)", w.PublicURL)
		}
		w.PublicURL = strings.TrimRight(w.PublicURL, "/")
	}
	return w, w.checkConsoleKeys()
}

func parseCredentials(raw json.RawMessage, baseDir string) (Credentials, error) {
	var c Credentials
	if raw == nil {
		return c, nil
	}
	var r struct {
		Dir     string `json:"dir"`
		KeyFile string `json:"keyFile"`
	}
	if err := strictDecode("credentials", raw, &r); err != nil {
		return c, err
	}
	if strings.TrimSpace(r.KeyFile) == "" {
		return c, keyErr("credentials.keyFile", "is required: a file of one 32-byte key per line, base64 (e.g. `openssl rand -base64 32 > vault.key`), which seals the OAuth tokens at rest")
	}
	c.KeyFile = (&Config{BaseDir: baseDir}).Resolve(r.KeyFile)
	if r.Dir != "" {
		c.Dir = (&Config{BaseDir: baseDir}).Resolve(r.Dir)
	}
	return c, nil
}

// checkCredentials is the rule across sections: credentials keep their
// records in credentials.dir, or in Redis with cluster.redis.
func checkCredentials(cfg *Config) error {
	if cfg.Credentials.Enabled() && cfg.Credentials.Dir == "" && cfg.Cluster.Redis == nil {
		return keyErr("credentials.dir", "is required without cluster.redis: the directory the sealed tokens are kept in (e.g. /var/lib/toolnexus/credentials)")
	}
	return nil
}

// OAuthServers are the names of the enabled MCP servers with an oauth
// section, sorted.
func (c *Config) OAuthServers() []string {
	var out []string
	for name, sc := range c.MCP {
		if sc.OAuth != nil && !sc.Disabled {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// OAuthWarnings are what a start (and --check) warns about the OAuth
// connections' storage.
func (c *Config) OAuthWarnings() []string {
	servers := c.OAuthServers()
	if len(servers) == 0 || c.Credentials.Enabled() {
		return nil
	}
	msg := fmt.Sprintf("credentials is not set: the OAuth connections of mcpServers.%s are kept in memory, so every caller logs in again after a restart", strings.Join(servers, ", mcpServers."))
	if c.Cluster.Redis != nil {
		msg += " and on every replica"
	}
	return []string{msg + "; set credentials {\"dir\", \"keyFile\"} to keep them sealed on disk (with cluster.redis, in Redis)"}
}

// CheckOAuth refuses an oauth section nothing can complete a login for:
// the login ends at the web listener's /oauth/callback.
func (c *Config) CheckOAuth() error {
	servers := c.OAuthServers()
	if len(servers) == 0 || c.Server.Web.Listen != "" {
		return nil
	}
	return keyErr("mcpServers."+servers[0]+".oauth", "a caller's login ends at the web listener's /oauth/callback, which is off: set server.web.listen or --web-listen (e.g. 127.0.0.1:8090), and server.web.publicUrl when browsers reach it through a proxy")
}
