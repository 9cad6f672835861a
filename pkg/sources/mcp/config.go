package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Server types, after inference.
const (
	TypeLocal  = "local"
	TypeRemote = "remote"
)

// Remote transports. The empty value means streamable HTTP, falling back to
// the older HTTP+SSE transport for servers that only speak that.
const (
	TransportAuto = ""
	TransportSSE  = "sse"
)

// Defaults, in milliseconds as the config writes them.
const (
	DefaultTimeout        = 30000
	DefaultInitialBackoff = 250
	DefaultMaxBackoff     = 30000
	DefaultResetAfter     = 60000
)

// ServerConfig is one MCP server entry, validated and normalised.
//
// It marshals deterministically (fixed field order, sorted maps) and keeps
// header values exactly as written, ${VAR} references unexpanded, so the
// server can compare two configs to see whether a reload changed anything
// without a secret ever entering the comparison.
type ServerConfig struct {
	// Type is TypeLocal (a child process over stdio) or TypeRemote (HTTP).
	Type string `json:"type"`
	// Transport is TransportSSE when the config asked for "type": "sse";
	// otherwise remote servers try streamable HTTP first.
	Transport string `json:"transport,omitempty"`
	// Command is the program and its arguments (local servers).
	Command []string `json:"command,omitempty"`
	// Environment is the child's own variables, ${VAR} and ${file:/path}
	// expanded at start; the child inherits nothing else from the server
	// but PATH, HOME, the locale, TERM, TZ, USER and LOGNAME.
	Environment map[string]string `json:"environment,omitempty"`
	// EnvironmentKey is "env" when the config spelled Environment so
	// ("" for "environment"), so that a message names the key as written.
	EnvironmentKey string `json:"-"`
	// Cwd is the child's working directory, relative to the config's directory.
	Cwd string `json:"cwd,omitempty"`
	// URL is the remote server's endpoint.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request; ${VAR} is expanded at start.
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled servers publish nothing and report status disabled.
	Disabled bool `json:"disabled,omitempty"`
	// Timeout bounds each phase (start, initialize, list), in milliseconds.
	Timeout int `json:"timeout"`
	// Tools filters the server's tools by their original names.
	Tools sources.Filter `json:"tools,omitempty"`
	// Restart tunes how a server that died is brought back.
	Restart Restart `json:"restart"`
	// Prefix goes before every tool name; nil means "<server>_". An empty
	// prefix keeps the upstream names as they are.
	Prefix *string `json:"prefix,omitempty"`
	// Sandbox, when set, runs a local server in the command sandbox
	// ("sandbox": true, or an object that tunes it).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Elicitation and Sampling, when false, stop offering the server that
	// client capability (nil = offered): its requests then never reach a
	// caller, and the server may hide the tools that need them.
	Elicitation *bool `json:"elicitation,omitempty"`
	Sampling    *bool `json:"sampling,omitempty"`
	// Title and Description say what the server is ("GitHub", "issues,
	// pull requests and code of our GitHub organisation"), for tool search:
	// they replace the title and description of the server's serverInfo.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// TokenExchange (remote servers) makes each call go out as its caller:
	// on a session of that caller's own, authenticated with the caller's
	// token exchanged for one meant for this server (percaller.go). The
	// tools are listed with the configured client's own token.
	TokenExchange *tokenexchange.Config `json:"tokenExchange,omitempty"`
	// OAuth (remote servers) makes each caller connect its own account at
	// the server's authorization server (the MCP authorization spec):
	// every call goes out on the caller's session with the caller's own
	// token (oauth.go); the tools are listed with the connection an admin
	// made with `toolnexus connect`.
	OAuth *oauthclient.Config `json:"oauth,omitempty"`
}

// Sandbox is a local server's "sandbox" setting: it runs confined like a
// model's bash — read-only system paths and sandbox.readPaths, read-write
// only its private temp dir (HOME, TMPDIR) and its cwd — with these
// changes. Paths are as written (relative to the config file's
// directory).
type Sandbox struct {
	// Network overrides sandbox.network for this server; nil keeps it.
	Network *bool `json:"network,omitempty"`
	// ReadPaths are readable (and executable) besides the system paths
	// and sandbox.readPaths: the server's own install directory.
	ReadPaths []string `json:"readPaths,omitempty"`
	// WritePaths are read-write besides its temp dir and cwd: where it
	// keeps state. They must exist when the server starts.
	WritePaths []string `json:"writePaths,omitempty"`
}

// Restart is the self-healing backoff, in milliseconds: the first retry
// waits InitialBackoff, each further one twice as long up to MaxBackoff, and
// a server that stayed up for ResetAfter starts again from InitialBackoff.
type Restart struct {
	InitialBackoff int `json:"initialBackoff"`
	MaxBackoff     int `json:"maxBackoff"`
	ResetAfter     int `json:"resetAfter"`
}

func (c ServerConfig) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout * time.Millisecond
	}
	return time.Duration(c.Timeout) * time.Millisecond
}

func (r Restart) withDefaults() Restart {
	if r.InitialBackoff <= 0 {
		r.InitialBackoff = DefaultInitialBackoff
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultMaxBackoff
	}
	if r.MaxBackoff < r.InitialBackoff {
		r.MaxBackoff = r.InitialBackoff
	}
	if r.ResetAfter <= 0 {
		r.ResetAfter = DefaultResetAfter
	}
	return r
}

// ParseConfig reads the server map: the object under mcpServers, servers or
// mcp (the caller picks the key and prefixes errors with it). Errors name the
// key path inside the section ("fs.command: ...") and say how to fix it.
// Warnings are returned for keys this source does not know, which are
// ignored so that configs written for other MCP clients still load.
func ParseConfig(raw json.RawMessage) (map[string]ServerConfig, []string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return map[string]ServerConfig{}, nil, nil
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, nil, field.Errorf("", "must be an object mapping server names to server settings, e.g. {\"fs\": {\"command\": [\"mcp-fs\"]}}")
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)

	out := make(map[string]ServerConfig, len(servers))
	var warns []string
	for _, name := range names {
		if strings.TrimSpace(name) == "" {
			return nil, nil, field.Errorf(fmt.Sprintf("%q", name), "a server name must not be empty; give the server a name")
		}
		sc, w, err := parseServer(name, servers[name])
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
		out[name] = sc
	}
	return out, warns, nil
}

// knownKeys are the server keys this source reads.
var knownKeys = map[string]bool{
	"type": true, "command": true, "args": true, "environment": true, "env": true,
	"cwd": true, "url": true, "headers": true, "enabled": true, "disabled": true,
	"timeout": true, "tools": true, "restart": true, "prefix": true, "sandbox": true,
	"elicitation": true, "sampling": true, "tokenExchange": true, "oauth": true, "title": true, "description": true,
}

// parseServer reads one server entry. Keys it does not know are warnings,
// not errors, so that an mcp.json written for another client still loads.
func parseServer(name string, raw json.RawMessage) (ServerConfig, []string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return ServerConfig{}, nil, field.Errorf(name, "must be an object such as {\"command\": [\"prog\", \"arg\"]} or {\"url\": \"https://host/mcp\"}")
	}
	key := func(k string) string { return name + "." + k }
	sc := ServerConfig{Timeout: DefaultTimeout}
	typ, err := field.Object(fields).String(name, "type", false)
	if err != nil {
		return sc, nil, err
	}
	if sc.Command, err = parseCommand(fields, key); err != nil {
		return sc, nil, err
	}
	if sc.URL, err = field.Object(fields).String(name, "url", false); err != nil {
		return sc, nil, err
	}
	if sc.Cwd, err = field.Object(fields).String(name, "cwd", false); err != nil {
		return sc, nil, err
	}
	if sc.Title, sc.Description, err = parseAbout(name, fields); err != nil {
		return sc, nil, err
	}
	if sc.Environment, err = parseEnvironment(name, fields, key); err != nil {
		return sc, nil, err
	}
	if _, ok := fields["env"]; ok {
		sc.EnvironmentKey = "env"
	}
	if sc.Headers, err = stringMap(fields, "headers", key); err != nil {
		return sc, nil, err
	}
	if sc.Disabled, err = parseDisabled(name, fields); err != nil {
		return sc, nil, err
	}
	if sc.Elicitation, sc.Sampling, err = parseAnswering(name, fields); err != nil {
		return sc, nil, err
	}
	if v, ok := fields["timeout"]; ok && !field.IsNull(v) {
		ms, ok := field.PositiveMillis(v)
		if !ok {
			return sc, nil, field.Errorf(key("timeout"), "must be a positive number of milliseconds, e.g. 30000")
		}
		sc.Timeout = ms
	}
	if sc.Tools, err = parseToolFilter(fields, key); err != nil {
		return sc, nil, err
	}
	if sc.Restart, err = parseRestart(fields, key); err != nil {
		return sc, nil, err
	}
	if sc.Prefix, err = parsePrefix(fields, key); err != nil {
		return sc, nil, err
	}
	if sc.Sandbox, err = parseSandbox(fields, key); err != nil {
		return sc, nil, err
	}
	if sc.TokenExchange, err = tokenexchange.Parse(name, field.Object(fields)); err != nil {
		return sc, nil, err
	}
	if sc.OAuth, err = oauthclient.Parse(name, field.Object(fields)); err != nil {
		return sc, nil, err
	}
	if err := inferType(&sc, name, typ, key); err != nil {
		return sc, nil, err
	}
	if err := checkRunnable(sc, name, key); err != nil {
		return sc, nil, err
	}
	warns, err := unknownKeyWarnings(name, fields)
	if err != nil {
		return sc, nil, err
	}
	return sc, warns, nil
}

// unknownKeyWarnings names, sorted, the keys of a server entry this source
// does not read; an unknown key that would fail open (a misspelt or foreign
// filter, any unknown key beside "tools") is an error (sources.UnknownKey).
func unknownKeyWarnings(name string, fields map[string]json.RawMessage) ([]string, error) {
	unknown := make([]string, 0)
	for k := range fields {
		if !knownKeys[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	known := make([]string, 0, len(knownKeys))
	for k := range knownKeys {
		known = append(known, k)
	}
	sort.Strings(known)
	_, hasFilter := fields["tools"]
	var warns []string
	for _, k := range unknown {
		fatal, msg := sources.UnknownKey(k, known, hasFilter)
		if fatal {
			return nil, field.Errorf(name+"."+k, "%s", msg)
		}
		warns = append(warns, name+": "+msg)
	}
	return warns, nil
}

// parseAbout reads "title" and "description", what the server is for tool
// search; each at most maxAbout bytes.
func parseAbout(name string, fields map[string]json.RawMessage) (title, description string, err error) {
	if title, err = field.Object(fields).String(name, "title", false); err != nil {
		return "", "", err
	}
	if description, err = field.Object(fields).String(name, "description", false); err != nil {
		return "", "", err
	}
	for k, v := range map[string]string{"title": title, "description": description} {
		if len(v) > maxAbout {
			return "", "", field.Errorf(name+"."+k, "is %d bytes; the limit is %d: say what the server is in a sentence", len(v), maxAbout)
		}
	}
	return title, description, nil
}

// maxAbout bounds a server's title and description, configured or
// announced: they are words for search, not documentation.
const maxAbout = 512

// parseCommand reads "command" (a string or a list) and appends "args",
// the two ways MCP clients write a local server's command line.
func parseCommand(fields map[string]json.RawMessage, key func(string) string) ([]string, error) {
	var command []string
	if v, ok := fields["command"]; ok && !field.IsNull(v) {
		var err error
		if command, err = stringOrList(v); err != nil {
			return nil, field.Errorf(key("command"), "must be a string or an array of strings")
		}
		if len(command) == 0 || command[0] == "" {
			return nil, field.Errorf(key("command"), "must name a program, e.g. [\"npx\", \"-y\", \"some-mcp-server\"]")
		}
	}
	if v, ok := fields["args"]; ok && !field.IsNull(v) {
		var args []string
		if err := json.Unmarshal(v, &args); err != nil {
			return nil, field.Errorf(key("args"), "must be an array of strings")
		}
		if command == nil {
			return nil, field.Errorf(key("args"), "needs a \"command\" to pass the arguments to")
		}
		command = append(command, args...)
	}
	return command, nil
}

// parseEnvironment reads "environment" or its alias "env", refusing both.
func parseEnvironment(name string, fields map[string]json.RawMessage, key func(string) string) (map[string]string, error) {
	env, err := stringMap(fields, "environment", key)
	if err != nil {
		return nil, err
	}
	alias, err := stringMap(fields, "env", key)
	if err != nil {
		return nil, err
	}
	if env != nil && alias != nil {
		return nil, field.Errorf(name, "\"environment\" and \"env\" are the same setting; keep only one")
	}
	if env == nil {
		env = alias
	}
	return env, nil
}

// parseDisabled reads "disabled" and "enabled": disabled:true wins;
// otherwise enabled:false turns the server off.
func parseDisabled(name string, fields map[string]json.RawMessage) (bool, error) {
	disabled, err := field.Object(fields).Bool(name, "disabled", "must be true or false")
	if err != nil {
		return false, err
	}
	enabled, err := field.Object(fields).Bool(name, "enabled", "must be true or false")
	if err != nil {
		return false, err
	}
	return (disabled != nil && *disabled) || (enabled != nil && !*enabled), nil
}

// parseToolFilter reads "tools", the server's tool names to true or false.
func parseToolFilter(fields map[string]json.RawMessage, key func(string) string) (sources.Filter, error) {
	v, ok := fields["tools"]
	if !ok || field.IsNull(v) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, field.Errorf(key("tools"), "must be an object of tool names to true or false, e.g. {\"write_file\": false}")
	}
	f := make(sources.Filter, len(m))
	for tn, tv := range m {
		var b bool
		if err := json.Unmarshal(tv, &b); err != nil || field.IsNull(tv) {
			return nil, field.Errorf(key("tools."+tn), "must be true or false")
		}
		f[tn] = b
	}
	if len(f) == 0 {
		return nil, nil
	}
	return f, nil
}

// parsePrefix reads "prefix"; nil means the default "<server>_".
func parsePrefix(fields map[string]json.RawMessage, key func(string) string) (*string, error) {
	v, ok := fields["prefix"]
	if !ok || field.IsNull(v) {
		return nil, nil
	}
	var p string
	if err := json.Unmarshal(v, &p); err != nil {
		return nil, field.Errorf(key("prefix"), "must be a string, e.g. \"fs_\", or \"\" to keep the server's own tool names")
	}
	if tool.Sanitize(p) != p {
		return nil, field.Errorf(key("prefix"), "%q may only use letters, digits, \"_\" and \"-\" (tool names must match [a-zA-Z0-9_-])", p)
	}
	return &p, nil
}

// inferType sets sc.Type (and Transport) from "type", the names other MCP
// clients use for it, or, without one, from whether a command or a url is
// given.
func inferType(sc *ServerConfig, name, typ string, key func(string) string) error {
	switch strings.ToLower(typ) {
	case "":
		switch {
		case sc.Command != nil && sc.URL != "":
			return field.Errorf(name, "has both \"command\" and \"url\"; keep one, or set \"type\" to \"local\" or \"remote\"")
		case sc.Command != nil:
			sc.Type = TypeLocal
		case sc.URL != "":
			sc.Type = TypeRemote
		}
	case "local", "stdio":
		sc.Type = TypeLocal
	case "remote", "http", "streamable-http", "streamablehttp", "streamable_http":
		sc.Type = TypeRemote
	case "sse":
		sc.Type, sc.Transport = TypeRemote, TransportSSE
	default:
		return field.Errorf(key("type"), "%q is not a server type; use \"local\" (a command run over stdio) or \"remote\" (a URL)", typ)
	}
	return nil
}

// checkRunnable refuses a server that will run without the means to: a
// disabled entry may be a placeholder, so it is not checked.
func checkRunnable(sc ServerConfig, name string, key func(string) string) error {
	if sc.Disabled {
		return nil
	}
	switch sc.Type {
	case "":
		return field.Errorf(name, "needs \"command\" (a local server) or \"url\" (a remote server)")
	case TypeLocal:
		if sc.Command == nil {
			return field.Errorf(key("command"), "a local server needs \"command\", e.g. [\"npx\", \"-y\", \"some-mcp-server\"]")
		}
	case TypeRemote:
		if sc.URL == "" {
			return field.Errorf(key("url"), "a remote server needs \"url\", e.g. \"https://host/mcp\"")
		}
		if !strings.HasPrefix(sc.URL, "http://") && !strings.HasPrefix(sc.URL, "https://") {
			return field.Errorf(key("url"), "must be an http:// or https:// URL")
		}
		if sc.Sandbox != nil {
			return field.Errorf(key("sandbox"), "only a local server (a command run over stdio) can be sandboxed; remove it from this remote server")
		}
	}
	if sc.TokenExchange != nil && sc.Type != TypeRemote {
		return field.Errorf(key("tokenExchange"), "only a remote server (a URL) can receive the caller's identity; remove it from this local server")
	}
	return checkOAuth(sc, key)
}

// parseSandbox reads "sandbox": true/false, or an object with network,
// readPaths and writePaths (an object turns the sandbox on). Unknown keys
// inside it are errors, not warnings: a misspelt "netwrok" must not
// silently change what a confined server may reach.
func parseSandbox(fields map[string]json.RawMessage, key func(string) string) (*Sandbox, error) {
	v, ok := fields["sandbox"]
	if !ok || field.IsNull(v) {
		return nil, nil
	}
	const want = "must be true, false, or an object such as {\"network\": false, \"readPaths\": [\"/opt/server\"], \"writePaths\": [\"/var/lib/server\"]}"
	var on bool
	if err := json.Unmarshal(v, &on); err == nil {
		if !on {
			return nil, nil
		}
		return &Sandbox{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		return nil, field.Errorf(key("sandbox"), want)
	}
	sb := &Sandbox{}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		raw := m[k]
		switch k {
		case "network":
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil || field.IsNull(raw) {
				return nil, field.Errorf(key("sandbox.network"), "must be true or false (absent: sandbox.network decides)")
			}
			sb.Network = &b
		case "readPaths", "writePaths":
			var list []string
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, field.Errorf(key("sandbox."+k), "must be an array of paths")
			}
			for i, p := range list {
				if strings.TrimSpace(p) == "" || strings.IndexByte(p, 0) >= 0 {
					return nil, field.Errorf(key(fmt.Sprintf("sandbox.%s[%d]", k, i)), "must be a directory or file path")
				}
			}
			if k == "readPaths" {
				sb.ReadPaths = list
			} else {
				sb.WritePaths = list
			}
		default:
			return nil, field.Errorf(key("sandbox."+k), "unknown setting; use network, readPaths or writePaths")
		}
	}
	return sb, nil
}

func parseRestart(fields map[string]json.RawMessage, key func(string) string) (Restart, error) {
	r := Restart{}
	if v, ok := fields["restart"]; ok && !field.IsNull(v) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return r, field.Errorf(key("restart"), "must be an object with initialBackoff, maxBackoff and resetAfter in milliseconds")
		}
		for k, raw := range m {
			ms, ok := field.PositiveMillis(raw)
			if !ok {
				return r, field.Errorf(key("restart."+k), "must be a positive number of milliseconds")
			}
			switch k {
			case "initialBackoff":
				r.InitialBackoff = ms
			case "maxBackoff":
				r.MaxBackoff = ms
			case "resetAfter":
				r.ResetAfter = ms
			default:
				return r, field.Errorf(key("restart."+k), "unknown setting; use initialBackoff, maxBackoff or resetAfter")
			}
		}
	}
	return r.withDefaults(), nil
}

func stringMap(fields map[string]json.RawMessage, k string, key func(string) string) (map[string]string, error) {
	v, ok := fields[k]
	if !ok || field.IsNull(v) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, field.Errorf(key(k), "must be an object of names to string values")
	}
	out := make(map[string]string, len(m))
	for name, raw := range m {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, field.Errorf(key(k+"."+name), "must be a string (quote numbers and booleans)")
		}
		out[name] = s
	}
	return out, nil
}

func stringOrList(v json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// checkOAuth refuses an oauth section where it cannot work: a local
// server has no HTTP to carry a token; beside tokenExchange or a
// configured Authorization header, two credentials would compete.
func checkOAuth(sc ServerConfig, key func(string) string) error {
	if sc.OAuth == nil {
		return nil
	}
	switch {
	case sc.Type != TypeRemote:
		return field.Errorf(key("oauth"), "only a remote server (a URL) authorizes with OAuth; remove it from this local server")
	case sc.TokenExchange != nil:
		return field.Errorf(key("oauth"), "oauth (each caller's own account) and tokenExchange (the caller's identity-provider token exchanged) exclude each other; keep one")
	}
	for h := range sc.Headers {
		if strings.EqualFold(h, "Authorization") {
			return field.Errorf(key("headers."+h), "with oauth each call carries its caller's own token; remove the configured Authorization header")
		}
	}
	return nil
}
