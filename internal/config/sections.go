package config

import (
	"encoding/json"
	"fmt"
	"net"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/internal/limits"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// Defaults for the limits and server sections.
const (
	DefaultTimeout         = 60 * time.Second
	DefaultMaxOutputBytes  = 1 << 20
	DefaultMaxRequestBytes = 4 << 20
	// DefaultMaxResourceBytes is limits.maxResourceBytes: what one read of
	// an MCP server's resource (or one prompt) may return.
	DefaultMaxResourceBytes = 16 << 20
	DefaultGracePeriod      = 10 * time.Second
	DefaultListen           = "127.0.0.1:50051"
	DefaultMetricsListen    = "127.0.0.1:9464"
)

// DefaultGCHeapFloorMiB is the heap size (MiB) below which the garbage
// collector does not run: a server with ~2 MiB of live heap otherwise
// collects every few dozen MCP calls (see internal/gcfloor).
const (
	DefaultGCHeapFloorMiB = 32
	maxGCHeapFloorMiB     = 64 << 10
)

// Limits is the `limits` section: global limits plus per-tool overrides.
// The type lives in internal/limits, which the executor imports without
// importing the config (and through it every source).
type Limits = limits.Limits

// ToolLimits overrides the global limits for one tool; nil fields inherit.
type ToolLimits = limits.ToolLimits

type rawToolLimits struct {
	Timeout           *int64 `json:"timeout"`
	MaxConcurrency    *int   `json:"maxConcurrency"`
	MaxOutputBytes    *int   `json:"maxOutputBytes"`
	ValidateArguments *bool  `json:"validateArguments"`
	// Per tool only: perprincipal.go.
	MaxConcurrencyPerPrincipal *int `json:"maxConcurrencyPerPrincipal"`
}

func parseLimits(raw json.RawMessage) (Limits, error) {
	l := Limits{Timeout: DefaultTimeout, MaxOutputBytes: DefaultMaxOutputBytes, ValidateArguments: true, MaxRequestBytes: DefaultMaxRequestBytes,
		MaxResourceBytes: DefaultMaxResourceBytes}
	if raw == nil {
		return l, nil
	}
	// The per-tool objects are decoded one by one so that an error names
	// the tool (limits.tools.bash.timeout), which one decode cannot do.
	var r struct {
		Timeout           *int64                     `json:"timeout"`
		MaxConcurrency    *int                       `json:"maxConcurrency"`
		MaxOutputBytes    *int                       `json:"maxOutputBytes"`
		ValidateArguments *bool                      `json:"validateArguments"`
		MaxRequestBytes   *int                       `json:"maxRequestBytes"`
		MaxResourceBytes  *int                       `json:"maxResourceBytes"`
		Tools             map[string]json.RawMessage `json:"tools"`
	}
	if err := strictDecode("limits", raw, &r); err != nil {
		return l, err
	}
	global := rawToolLimits{Timeout: r.Timeout, MaxConcurrency: r.MaxConcurrency, MaxOutputBytes: r.MaxOutputBytes, ValidateArguments: r.ValidateArguments}
	if err := checkToolLimits("limits", global); err != nil {
		return l, err
	}
	if r.Timeout != nil {
		l.Timeout = time.Duration(*r.Timeout) * time.Millisecond
	}
	if r.MaxConcurrency != nil {
		l.MaxConcurrency = *r.MaxConcurrency
	}
	if r.MaxOutputBytes != nil {
		l.MaxOutputBytes = *r.MaxOutputBytes
	}
	if r.ValidateArguments != nil {
		l.ValidateArguments = *r.ValidateArguments
	}
	if r.MaxRequestBytes != nil {
		if *r.MaxRequestBytes < 1024 {
			return l, keyErr("limits.maxRequestBytes", "must be at least 1024 bytes")
		}
		l.MaxRequestBytes = *r.MaxRequestBytes
	}
	if r.MaxResourceBytes != nil {
		if *r.MaxResourceBytes < 1024 {
			return l, keyErr("limits.maxResourceBytes", "must be at least 1024 bytes (default %d)", DefaultMaxResourceBytes)
		}
		l.MaxResourceBytes = *r.MaxResourceBytes
	}
	if len(r.Tools) > 0 {
		l.Tools = make(map[string]ToolLimits, len(r.Tools))
	}
	for _, name := range sortedKeys(r.Tools) {
		key := "limits.tools." + name
		if field.IsNull(r.Tools[name]) {
			return l, keyErr(key, "must be an object such as {\"timeout\": 120000}")
		}
		var t rawToolLimits
		if err := strictDecode(key, r.Tools[name], &t); err != nil {
			return l, err
		}
		if err := checkToolLimits(key, t); err != nil {
			return l, err
		}
		if err := checkPerPrincipal(key, t.MaxConcurrencyPerPrincipal); err != nil {
			return l, err
		}
		tl := ToolLimits{MaxConcurrency: t.MaxConcurrency, MaxOutputBytes: t.MaxOutputBytes, ValidateArguments: t.ValidateArguments,
			MaxConcurrencyPerPrincipal: t.MaxConcurrencyPerPrincipal}
		if t.Timeout != nil {
			d := time.Duration(*t.Timeout) * time.Millisecond
			tl.Timeout = &d
		}
		l.Tools[name] = tl
	}
	return l, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkToolLimits(key string, t rawToolLimits) error {
	if t.Timeout != nil && *t.Timeout < 0 {
		return keyErr(key+".timeout", "must be >= 0 milliseconds (0 = no limit)")
	}
	if t.MaxConcurrency != nil && *t.MaxConcurrency < 0 {
		return keyErr(key+".maxConcurrency", "must be >= 0 (0 = no cap)")
	}
	if t.MaxOutputBytes != nil && *t.MaxOutputBytes < 0 {
		return keyErr(key+".maxOutputBytes", "must be >= 0 bytes (0 = no cap)")
	}
	return nil
}

// Auth is the `auth` section: bearer tokens, each with an optional allowlist.
type Auth struct {
	Tokens []Token
	// OIDC and Groups are auth.oidc and auth.groups (auth_oidc.go).
	OIDC   []OIDCIssuer
	Groups map[string]Group
	// Resource is server.mcp.resource, copied here at parse: the audience
	// /mcp advertises, which tokens may carry instead of an issuer's
	// audience (RFC 8707).
	Resource string
}

// Enabled reports whether any token or identity provider is configured
// (then every RPC but health and reflection needs a credential).
func (a Auth) Enabled() bool { return len(a.Tokens) > 0 || len(a.OIDC) > 0 }

// Token is one bearer token. Value is the expanded secret: never log it.
type Token struct {
	Name  string
	Value string
	// Tools are glob patterns (path.Match syntax) on tool names, or
	// "source:PATTERN" on source labels; nil allows every tool.
	Tools []string
	// Admin allows SourceService.Reload. Agent tokens leave it off: an
	// agent that can run tools must not also be able to re-point the
	// server at a changed config file (see pkg/server/auth.go).
	Admin bool
	// Groups name entries of auth.groups whose tools the token may use too.
	Groups []string
	// Resources and Prompts are glob patterns on the URIs and names of the
	// MCP servers' resources and prompts as served, or "server:PATTERN" on
	// the server's name; nil follows Tools: everything without Tools,
	// nothing with them.
	Resources, Prompts []string
}

// String hides the secret, so a Token printed by accident leaks nothing.
func (t Token) String() string { return fmt.Sprintf("Token{%s}", t.Name) }

func parseAuth(raw json.RawMessage) (Auth, error) {
	var a Auth
	if raw == nil {
		return a, nil
	}
	var r struct {
		Tokens []json.RawMessage `json:"tokens"`
		OIDC   json.RawMessage   `json:"oidc"`
		Groups json.RawMessage   `json:"groups"`
	}
	if err := strictDecode("auth", raw, &r); err != nil {
		return a, err
	}
	if err := parseAuthIdentity(&a, nonNull(r.OIDC), nonNull(r.Groups)); err != nil {
		return a, err
	}
	names := map[string]bool{}
	for i, rt := range r.Tokens {
		key := fmt.Sprintf("auth.tokens[%d]", i)
		var t struct {
			Name   string   `json:"name"`
			Token  string   `json:"token"`
			Tools  []string `json:"tools"`
			Admin  bool     `json:"admin"`
			Groups []string `json:"groups"`
			// Resources and Prompts: see Token.
			Resources []string `json:"resources"`
			Prompts   []string `json:"prompts"`
		}
		if field.IsNull(rt) {
			return a, keyErr(key, "must be an object such as {\"name\": \"agent-a\", \"token\": \"${AGENT_A_TOKEN}\"}")
		}
		if err := strictDecode(key, rt, &t); err != nil {
			return a, err
		}
		if t.Name == "" {
			return a, keyErr(key+".name", "is required (it names the caller in logs and metrics)")
		}
		if names[t.Name] {
			return a, keyErr(key+".name", "%q is used twice; token names must be unique", t.Name)
		}
		names[t.Name] = true
		val, err := sources.ExpandEnv(t.Token)
		if err != nil {
			return a, keyErr(key+".token", "%v", err)
		}
		if len(val) < 8 {
			return a, keyErr(key+".token", "is empty or shorter than 8 characters; use a long random secret, e.g. \"${AGENT_TOKEN}\"")
		}
		for j, p := range t.Tools {
			pat := p
			if len(pat) > 7 && pat[:7] == "source:" {
				pat = pat[7:]
			}
			if _, err := path.Match(pat, ""); err != nil {
				return a, keyErr(fmt.Sprintf("%s.tools[%d]", key, j), "bad glob pattern %q: %v", p, err)
			}
		}
		if err := checkGroupRefs(a, key+".groups", t.Groups); err != nil {
			return a, err
		}
		if err := checkFeatureGlobs(key, t.Resources, t.Prompts); err != nil {
			return a, err
		}
		a.Tokens = append(a.Tokens, Token{Name: t.Name, Value: val, Tools: t.Tools, Admin: t.Admin, Groups: t.Groups,
			Resources: t.Resources, Prompts: t.Prompts})
	}
	return a, checkIdentityNames(a)
}

// Server is the `server` section (flags override it).
type Server struct {
	Listen        string
	MetricsListen string
	TLS           TLS
	MCP           MCPGateway
	// GracePeriod bounds draining in-flight calls on shutdown.
	GracePeriod time.Duration
	// WatchConfig reloads when the config file changes.
	WatchConfig bool
	// GCHeapFloor is server.gcHeapFloorMiB in bytes: the heap size below
	// which the garbage collector does not run (0 = Go's own pacing).
	GCHeapFloor int64
	// Limits is server.limits: what one caller may hold open.
	Limits ServerLimits
	// ReadyNeedsSources is server.readyNeedsSources: while a configured
	// source has failed to start, the health service reports the
	// toolnexus services NOT_SERVING (a readiness probe holds traffic
	// until the upstreams are up). Off by default: the pod serves the
	// tools it has while the failed source is retried.
	ReadyNeedsSources bool
	// Web is server.web: the browsers' listener (credentials.go).
	Web Web
}

// TLS holds certificate paths; ClientCA turns on mutual TLS.
type TLS struct {
	Cert     string `json:"cert"`
	Key      string `json:"key"`
	ClientCA string `json:"clientCA"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.Cert != "" }

// MCPGateway is `server.mcp`: serve the registry as an MCP server too.
type MCPGateway struct {
	Listen  string   `json:"listen"`
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Tools   []string `json:"tools"`
	// Discovery is "list" (the default: tools/list shows every tool) or
	// "search" (tools/list shows search_tools, call_tool and the Pinned
	// tools; see internal/mcpgateway/discovery.go).
	Discovery string   `json:"discovery"`
	Pinned    []string `json:"pinned"`
	// Resources and Prompts narrow which MCP servers' resources and
	// prompts /mcp serves, as the auth tokens' keys of the same names do
	// (globs on the URI or name, or "server:PATTERN"); nil serves all.
	Resources []string `json:"resources"`
	Prompts   []string `json:"prompts"`
	// Resource is the URL /mcp names itself by as an OAuth protected
	// resource (RFC 9728); empty = the listener's URL + /mcp.
	Resource string `json:"resource"`
	// StateKeyFile holds the key (at least 32 bytes) that signs the
	// requestState of input_required results; replicas behind one load
	// balancer share it. Relative to the config file; empty = a random key
	// per process. Read by MCPStateKey.
	StateKeyFile string `json:"stateKeyFile"`
	// Stateless is server.mcp.stateless: /mcp keeps no MCP session in
	// memory, so any replica answers any request. Unset (nil) follows
	// sessions.shared, as before the key existed; read it through
	// Config.MCPStateless.
	Stateless *bool `json:"stateless"`
	// Views are named narrowings of what /mcp serves: /mcp/NAME serves
	// server.mcp.tools narrowed by views.NAME.tools, and over gRPC the
	// metadata "toolnexus-view: NAME" narrows a caller's tools the same
	// way (internal/core/view.go). Read and checked by parseViews.
	Views map[string]MCPView `json:"-"`
}

// MCPView is one named view (server.mcp.views.NAME).
type MCPView struct {
	// Tools are the globs of the tools the view shows (a "source:" prefix
	// matches the source), as in server.mcp.tools.
	Tools []string `json:"tools"`
}

func parseServer(raw json.RawMessage) (Server, error) {
	s := Server{Listen: DefaultListen, MetricsListen: DefaultMetricsListen, GracePeriod: DefaultGracePeriod,
		GCHeapFloor: DefaultGCHeapFloorMiB << 20, Limits: ServerLimits{WatchStreams: DefaultWatchStreams}}
	if raw == nil {
		return s, nil
	}
	var r struct {
		Listen        *string         `json:"listen"`
		MetricsListen *string         `json:"metricsListen"`
		TLSRaw        json.RawMessage `json:"tls"`
		MCPRaw        json.RawMessage `json:"mcp"`
		GracePeriod   *int64          `json:"gracePeriod"`
		WatchConfig   bool            `json:"watchConfig"`
		GCHeapFloor   *int64          `json:"gcHeapFloorMiB"`
		LimitsRaw     json.RawMessage `json:"limits"`
		ReadyNeeds    bool            `json:"readyNeedsSources"`
		WebRaw        json.RawMessage `json:"web"`
		TLS           TLS             `json:"-"`
		MCP           MCPGateway      `json:"-"`
	}
	if err := strictDecode("server", raw, &r); err != nil {
		return s, err
	}
	var err error
	if s.Limits, err = parseServerLimits(nonNull(r.LimitsRaw)); err != nil {
		return s, err
	}
	if s.Web, err = parseWeb(nonNull(r.WebRaw)); err != nil {
		return s, err
	}
	// Decoded apart so that an unknown key is named in full (server.tls.kye).
	if raw := nonNull(r.TLSRaw); raw != nil {
		if err := strictDecode("server.tls", raw, &r.TLS); err != nil {
			return s, err
		}
	}
	if raw := nonNull(r.MCPRaw); raw != nil {
		var m struct {
			MCPGateway
			Views map[string]json.RawMessage `json:"views"`
		}
		if err := strictDecode("server.mcp", raw, &m); err != nil {
			return s, err
		}
		r.MCP = m.MCPGateway
		var err error
		if r.MCP.Views, err = parseViews(m.Views); err != nil {
			return s, err
		}
		if err := checkFeatureGlobs("server.mcp", r.MCP.Resources, r.MCP.Prompts); err != nil {
			return s, err
		}
		if err := checkMCPResource(r.MCP.Resource); err != nil {
			return s, err
		}
	}
	if r.Listen != nil {
		if _, _, err := net.SplitHostPort(*r.Listen); err != nil {
			return s, keyErr("server.listen", "%q is not HOST:PORT (e.g. 127.0.0.1:50051)", *r.Listen)
		}
		s.Listen = *r.Listen
	}
	if r.MetricsListen != nil {
		if *r.MetricsListen != "" {
			if _, _, err := net.SplitHostPort(*r.MetricsListen); err != nil {
				return s, keyErr("server.metricsListen", "%q is not HOST:PORT (empty disables metrics)", *r.MetricsListen)
			}
		}
		s.MetricsListen = *r.MetricsListen
	}
	if (r.TLS.Cert == "") != (r.TLS.Key == "") {
		return s, keyErr("server.tls", "cert and key must be given together")
	}
	if r.TLS.ClientCA != "" && r.TLS.Cert == "" {
		return s, keyErr("server.tls.clientCA", "needs server.tls.cert and server.tls.key too")
	}
	s.TLS = r.TLS
	if r.MCP.Listen != "" {
		if _, _, err := net.SplitHostPort(r.MCP.Listen); err != nil {
			return s, keyErr("server.mcp.listen", "%q is not HOST:PORT", r.MCP.Listen)
		}
	}
	for j, p := range r.MCP.Tools {
		if _, err := path.Match(strings.TrimPrefix(p, "source:"), ""); err != nil {
			return s, keyErr(fmt.Sprintf("server.mcp.tools[%d]", j), "bad glob pattern %q: %v", p, err)
		}
	}
	if err := checkDiscovery(r.MCP); err != nil {
		return s, err
	}
	s.MCP = r.MCP
	if r.GracePeriod != nil {
		if *r.GracePeriod < 0 {
			return s, keyErr("server.gracePeriod", "must be >= 0 milliseconds")
		}
		s.GracePeriod = time.Duration(*r.GracePeriod) * time.Millisecond
	}
	s.WatchConfig = r.WatchConfig
	s.ReadyNeedsSources = r.ReadyNeeds
	if r.GCHeapFloor != nil {
		if *r.GCHeapFloor < 0 || *r.GCHeapFloor > maxGCHeapFloorMiB {
			return s, keyErr("server.gcHeapFloorMiB", "must be 0 (Go's own pacing) to %d MiB, got %d", maxGCHeapFloorMiB, *r.GCHeapFloor)
		}
		s.GCHeapFloor = *r.GCHeapFloor << 20
	}
	return s, nil
}
