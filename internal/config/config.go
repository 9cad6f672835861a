// Package config reads the toolnexus config file: a superset of the
// Claude-desktop mcp.json, validated up front so a typo fails loudly with
// the key that is wrong instead of silently disabling a source.
package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/internal/strictjson"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/sources/http"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

//go:embed default.json
var defaultJSON []byte

// Default returns the embedded default config text: builtins confined to
// ./workspace and the sample skills in ./skills.
func Default() []byte { return bytes.Clone(defaultJSON) }

// Config is a parsed, validated config file.
type Config struct {
	// MCP holds the MCP servers by name (from mcpServers | servers | mcp, or a bare server map).
	MCP      map[string]mcp.ServerConfig
	Builtins builtin.Config
	Skills   skill.Config
	HTTP     http.Config
	Agents   map[string]a2a.AgentConfig
	Limits   Limits
	// Pending is limits.pendingTimeout and limits.maxPending.
	Pending  Pending
	Auth     Auth
	Server   Server
	Sessions Sessions
	Sandbox  Sandbox
	Debug    bool
	// Telemetry is OpenTelemetry tracing (internal/telemetry).
	Telemetry Telemetry
	// Audit is the audit log (internal/audit).
	Audit Audit
	// Policy is Cedar policies and approvals (internal/policy).
	Policy Policy
	// RateLimits are the per-principal and per-tool call rates.
	RateLimits RateLimits
	// Cluster is the state the replicas share (cluster.redis).
	Cluster Cluster
	// CodeMode is run_code and describe_tools (docs/codemode.md).
	CodeMode CodeMode
	// Search is how tool search ranks (docs/search.md).
	Search Search
	// Credentials is where each caller's OAuth connections are kept
	// (credentials.go).
	Credentials Credentials
	// Pinning and ToolOverrides are the `pinning` and `overrides`
	// sections: the catalog between the sources and the registry
	// (internal/catalog, docs/catalog.md).
	Pinning       Pinning
	ToolOverrides map[string]ToolOverride

	// Path is the file the config came from; empty for the embedded default.
	Path string
	// BaseDir resolves relative paths: the file's directory, or the working
	// directory for the embedded default.
	BaseDir string
	// Warnings are non-fatal findings (unknown names in filter maps...).
	Warnings []string
}

// Error is a config problem: the key that is wrong and what to do about it.
type Error struct {
	Key string
	Msg string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return "config: " + e.Msg
	}
	return "config: " + e.Key + ": " + e.Msg
}

func keyErr(key string, format string, args ...any) error {
	return &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// wrapSection puts a source's typed config error (keyed inside its
// section, "fs.command") under the section's key ("mcpServers.fs.command").
// A source error that carries no key is keyed by the section itself.
func wrapSection(section string, err error) error {
	if err == nil {
		return nil
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return &Error{Key: field.Join(section, fe.Key), Msg: fe.Msg}
	}
	var ce *Error
	if errors.As(err, &ce) {
		return &Error{Key: field.Join(section, ce.Key), Msg: ce.Msg}
	}
	return &Error{Key: section, Msg: err.Error()}
}

// TopLevelKeys are the config's sections, in the order the reference lists
// them (a copy: callers may keep it).
func TopLevelKeys() []string { return slices.Clone(topLevelKeys) }

var topLevelKeys = []string{"mcpServers", "servers", "mcp", "builtins", "skills", "http",
	"openapi", "agents", "limits", "auth", "server", "sessions", "sandbox", "debug", "telemetry", "audit", "policy", "cluster", "codeMode", "search",
	"credentials", "pinning", "overrides"}

// Load reads and parses the file at path. An empty path means the embedded default.
func Load(path string) (*Config, error) {
	if path == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, &Error{Msg: "cannot determine the working directory: " + err.Error()}
		}
		return Parse(defaultJSON, "", wd)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("cannot read config file %s: %v (check --config / TOOLNEXUS_CONFIG)", path, err)}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return Parse(data, abs, filepath.Dir(abs))
}

// Parse validates config text. path is recorded for messages; baseDir
// resolves relative paths.
func Parse(data []byte, path, baseDir string) (*Config, error) {
	top, err := decodeTop(data)
	if err != nil {
		return nil, err
	}
	cfg := &Config{Path: path, BaseDir: baseDir}
	if err := parseSources(cfg, top); err != nil {
		return nil, err
	}
	limitsRaw := nonNull(top["limits"])
	if cfg.Pending, limitsRaw, err = splitPending(limitsRaw); err != nil {
		return nil, err
	}
	if cfg.RateLimits, limitsRaw, err = splitRateLimits(limitsRaw); err != nil {
		return nil, err
	}
	if cfg.Policy, err = parsePolicy(nonNull(top["policy"]), baseDir); err != nil {
		return nil, err
	}
	if cfg.Limits, err = parseLimits(limitsRaw); err != nil {
		return nil, err
	}
	applyDefaultToolCaps(&cfg.Limits)
	applyDefaultPerPrincipalCaps(&cfg.Limits)
	if cfg.Auth, err = parseAuth(nonNull(top["auth"])); err != nil {
		return nil, err
	}
	if cfg.Server, err = parseServer(nonNull(top["server"])); err != nil {
		return nil, err
	}
	cfg.Auth.Resource = cfg.Server.MCP.Resource
	warns, err := checkApprovers(cfg.Policy.Approvers, cfg.Auth.Groups)
	if err != nil {
		return nil, err
	}
	cfg.Warnings = append(cfg.Warnings, warns...)
	if cfg.Sessions, err = parseSessions(nonNull(top["sessions"])); err != nil {
		return nil, err
	}
	if cfg.Telemetry, err = parseTelemetry(nonNull(top["telemetry"])); err != nil {
		return nil, err
	}
	if cfg.Audit, err = parseAudit(nonNull(top["audit"])); err != nil {
		return nil, err
	}
	if cfg.Sandbox, err = parseSandbox(nonNull(top["sandbox"]), baseDir); err != nil {
		return nil, err
	}
	if cfg.Cluster, err = parseCluster(nonNull(top["cluster"])); err != nil {
		return nil, err
	}
	if cfg.CodeMode, err = parseCodeMode(nonNull(top["codeMode"])); err != nil {
		return nil, err
	}
	if cfg.Search, err = parseSearch(nonNull(top["search"])); err != nil {
		return nil, err
	}
	if cfg.Credentials, err = parseCredentials(nonNull(top["credentials"]), baseDir); err != nil {
		return nil, err
	}
	if err := checkCredentials(cfg); err != nil {
		return nil, err
	}
	if cfg.Pinning, err = parsePinning(nonNull(top["pinning"]), cfg.Cluster); err != nil {
		return nil, err
	}
	if cfg.ToolOverrides, err = parseOverrides(nonNull(top["overrides"])); err != nil {
		return nil, err
	}
	if err := checkConsole(cfg); err != nil {
		return nil, err
	}
	if raw := nonNull(top["debug"]); raw != nil {
		if err := json.Unmarshal(raw, &cfg.Debug); err != nil {
			return nil, keyErr("debug", "must be true or false")
		}
	}
	return cfg, nil
}

// decodeTop reads the config's top-level object, a bare server map
// turned into {"mcpServers": ...}, and refuses an unknown top-level key with
// the likeliest fix.
func decodeTop(data []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, &Error{Msg: fmt.Sprintf("the config must be a JSON object ({\"mcpServers\": ...}), not %s", jsonValueName(te.Value))}
		}
		return nil, &Error{Msg: "not valid JSON: " + describeJSONError(data, err)}
	}
	if top == nil {
		return nil, &Error{Msg: "the config must be a JSON object ({\"mcpServers\": ...}), not null"}
	}
	if isBareServerMap(top) {
		return map[string]json.RawMessage{"mcpServers": data}, nil
	}
	var unknown []string
	for k := range top {
		if !slices.Contains(topLevelKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return top, nil
	}
	sort.Strings(unknown)
	k := unknown[0]
	msg := "unknown top-level key"
	if looksLikeServer(top[k]) {
		msg += "; it looks like an MCP server: move it under \"mcpServers\""
	} else if s := sources.Suggest(k, topLevelKeys); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; valid keys are " + strings.Join(topLevelKeys, ", ")
	}
	return nil, &Error{Key: k, Msg: msg}
}

// parseSources parses the sections that declare tool sources — MCP servers
// (under the first of mcpServers, servers, mcp present), builtins, skills,
// http, openapi and agents — into cfg, with their warnings.
func parseSources(cfg *Config, top map[string]json.RawMessage) error {
	for _, key := range []string{"mcpServers", "servers", "mcp"} {
		raw, ok := top[key]
		if !ok || field.IsNull(raw) {
			continue
		}
		servers, warns, err := mcp.ParseConfig(raw)
		if err != nil {
			return wrapSection(key, err)
		}
		cfg.MCP = servers
		cfg.Warnings = append(cfg.Warnings, prefix(key, warns)...)
		break // the first present key wins
	}

	var err error
	var warns []string
	if cfg.Builtins, warns, err = builtin.ParseConfig(nonNull(top["builtins"])); err != nil {
		return wrapSection("builtins", err)
	}
	cfg.Warnings = append(cfg.Warnings, prefix("builtins", warns)...)

	if cfg.Skills, warns, err = skill.ParseConfig(nonNull(top["skills"])); err != nil {
		return wrapSection("skills", err)
	}
	cfg.Warnings = append(cfg.Warnings, prefix("skills", warns)...)

	if cfg.HTTP.Tools, err = http.ParseTools(nonNull(top["http"])); err != nil {
		return wrapSection("http", err)
	}
	if cfg.HTTP.OpenAPI, err = http.ParseOpenAPI(nonNull(top["openapi"])); err != nil {
		return wrapSection("openapi", err)
	}

	if cfg.Agents, warns, err = a2a.ParseConfig(nonNull(top["agents"])); err != nil {
		return wrapSection("agents", err)
	}
	cfg.Warnings = append(cfg.Warnings, prefix("agents", warns)...)
	return nil
}

// isBareServerMap recognises a file that is nothing but a server map
// ({"fs": {"command": ...}}): no known top-level key, and every value is an
// object with a command or a url.
func isBareServerMap(top map[string]json.RawMessage) bool {
	if len(top) == 0 {
		return false
	}
	for k, v := range top {
		if slices.Contains(topLevelKeys, k) || !looksLikeServer(v) {
			return false
		}
	}
	return true
}

// looksLikeServer reports whether v is an object with a command or a url.
func looksLikeServer(v json.RawMessage) bool {
	var probe struct {
		Command json.RawMessage `json:"command"`
		URL     json.RawMessage `json:"url"`
	}
	return json.Unmarshal(v, &probe) == nil && (probe.Command != nil || probe.URL != nil)
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if field.IsNull(raw) {
		return nil
	}
	return raw
}

func prefix(section string, warns []string) []string {
	out := make([]string, len(warns))
	for i, w := range warns {
		out[i] = section + "." + w
	}
	return out
}

// describeJSONError adds the line and column to a syntax error.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		// Offset counts the bytes read, the offending one included; at the
		// end of the input the problem is just past the last byte.
		end := int(se.Offset) - 1
		if int(se.Offset) >= len(data) && strings.HasPrefix(se.Error(), "unexpected end") {
			end = len(data)
		}
		for _, c := range data[:max(0, end)] {
			if c == '\n' {
				line++
				col = 1
			} else {
				col++
			}
		}
		return fmt.Sprintf("%v at line %d, column %d", err, line, col)
	}
	return err.Error()
}

// strictDecode decodes raw into v rejecting unknown keys, and turns the
// failure into a config error under section.
func strictDecode(section string, raw json.RawMessage, v any) error {
	err := strictjson.Decode(raw, v)
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case strictjson.WrongType:
		want := map[string]string{"integer": "an integer", "number": "a number", "boolean": "true or false",
			"string": "a string", "array": "an array", "object": "an object"}[se.Want]
		return keyErr(field.Join(section, se.Field), "must be %s, not %s", want, jsonValueName(se.Got))
	case strictjson.UnknownField:
		return keyErr(field.Join(section, se.Field), "unknown key (check the spelling; see the README's config reference)")
	}
	return keyErr(section, "%v", se)
}

// jsonValueName names a JSON value kind as UnmarshalTypeError reports it.
func jsonValueName(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "":
		return "this value"
	}
	return "a " + v
}

// Resolve makes a config-relative path absolute (against BaseDir).
func (c *Config) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.BaseDir, p)
}
