package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

func parse(t *testing.T, text string) (*config.Config, error) {
	t.Helper()
	return config.Parse([]byte(text), "", t.TempDir())
}

// mustFail parses text and returns the *config.Error it must give.
func mustFail(t *testing.T, text string) *config.Error {
	t.Helper()
	cfg, err := parse(t, text)
	if err == nil {
		t.Fatalf("%s: parsed (%+v), want an error", text, cfg)
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %T %v is not a *config.Error", text, err, err)
	}
	return ce
}

func TestEmbeddedDefaultParses(t *testing.T) {
	cfg, err := config.Parse(config.Default(), "", t.TempDir())
	if err != nil {
		t.Fatalf("embedded default: %v", err)
	}
	if cfg.Server.Listen != "127.0.0.1:50051" || cfg.Server.MetricsListen != "127.0.0.1:9464" || cfg.Debug || cfg.Auth.Enabled() || cfg.Server.TLS.Enabled() {
		t.Fatalf("default server section: %+v", cfg.Server)
	}
	if len(cfg.Warnings) != 0 {
		t.Fatalf("the default config warns: %v", cfg.Warnings)
	}
	// Load("") is the embedded default, resolved against the working directory.
	cfg, err = config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if cfg.Path != "" || cfg.BaseDir != wd {
		t.Fatalf("Load(\"\") path %q base %q, want \"\" and %q", cfg.Path, cfg.BaseDir, wd)
	}
}

func TestDefaultsWhenSectionsAreAbsent(t *testing.T) {
	cfg, err := parse(t, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Limits
	if l.Timeout != 60*time.Second || l.MaxConcurrency != 0 || l.MaxOutputBytes != 1<<20 || !l.ValidateArguments || l.MaxRequestBytes != 4<<20 {
		t.Fatalf("default limits %+v", l)
	}
	if cfg.Server.GracePeriod != 10*time.Second || cfg.Server.WatchConfig {
		t.Fatalf("default server %+v", cfg.Server)
	}
	// null sections mean "absent", as an editor leaves them.
	if _, err := parse(t, `{"limits": null, "auth": null, "server": null, "debug": null}`); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownTopLevelKeyIsAnError(t *testing.T) {
	cases := []struct{ text, key, msg string }{
		{`{"limts": {}}`, "limits", `unknown top-level key; did you mean "limits"?`},
		{`{"mcpServer": {}}`, "", `unknown top-level key; did you mean "mcpServers"?`},
		{`{"MCPSERVERS": {}}`, "", `unknown top-level key; did you mean "mcpServers"?`},
		{`{"auht": {}}`, "", `unknown top-level key; did you mean "auth"?`},
		{`{"zzzzzzzz": 1}`, "", "unknown top-level key; valid keys are mcpServers, servers, mcp, builtins, skills, http, openapi, agents, limits, auth, server, sessions, sandbox, debug, telemetry, audit, policy, cluster, codeMode, search, credentials, pinning, overrides"},
		// A server next to real top-level keys is not a bare server map.
		{`{"fs": {"command": "npx"}, "debug": true}`, "", `unknown top-level key; it looks like an MCP server: move it under "mcpServers"`},
		// Short keys get no far-fetched suggestion.
		{`{"xy": 1}`, "", "unknown top-level key; valid keys are mcpServers, servers, mcp, builtins, skills, http, openapi, agents, limits, auth, server, sessions, sandbox, debug, telemetry, audit, policy, cluster, codeMode, search, credentials, pinning, overrides"},
	}
	for _, c := range cases {
		ce := mustFail(t, c.text)
		wantKey := strings.Split(strings.TrimPrefix(c.text, `{"`), `"`)[0]
		if ce.Key != wantKey || ce.Msg != c.msg {
			t.Errorf("%s:\n got key %q msg %q\nwant key %q msg %q", c.text, ce.Key, ce.Msg, wantKey, c.msg)
		}
	}
	// The first unknown key in byte order is the one reported, so the
	// message is the same on every run.
	if ce := mustFail(t, `{"zeta": 1, "alpha": 2, "debug": false}`); ce.Key != "alpha" {
		t.Fatalf("reported %q, want alpha", ce.Key)
	}
}

func TestSectionErrorsNameTheKey(t *testing.T) {
	t.Setenv("TN_TEST_TOKEN", "correct-horse-battery")
	cases := []struct{ text, want string }{
		// limits
		{`{"limits": 5}`, "config: limits: must be an object, not a number"},
		{`{"limits": {"timeout": -1}}`, "config: limits.timeout: must be >= 0 milliseconds (0 = no limit)"},
		{`{"limits": {"maxConcurrency": -1}}`, "config: limits.maxConcurrency: must be >= 0 (0 = no cap)"},
		{`{"limits": {"maxOutputBytes": -5}}`, "config: limits.maxOutputBytes: must be >= 0 bytes (0 = no cap)"},
		{`{"limits": {"maxRequestBytes": 10}}`, "config: limits.maxRequestBytes: must be at least 1024 bytes"},
		{`{"limits": {"timeout": "5s"}}`, "config: limits.timeout: must be an integer, not a string"},
		{`{"limits": {"validateArguments": "yes"}}`, "config: limits.validateArguments: must be true or false, not a string"},
		{`{"limits": {"timout": 5}}`, "config: limits.timout: unknown key (check the spelling; see the README's config reference)"},
		{`{"limits": {"tools": {"bash": {"maxConcurrency": -2}}}}`, "config: limits.tools.bash.maxConcurrency: must be >= 0 (0 = no cap)"},
		{`{"limits": {"tools": {"bash": {"timeout": -2}}}}`, "config: limits.tools.bash.timeout: must be >= 0 milliseconds (0 = no limit)"},
		{`{"limits": {"tools": {"bash": {"timeout": "a"}}}}`, "config: limits.tools.bash.timeout: must be an integer, not a string"},
		{`{"limits": {"tools": {"bash": {"bogus": 1}}}}`, "config: limits.tools.bash.bogus: unknown key (check the spelling; see the README's config reference)"},
		{`{"limits": {"tools": {"bash": null}}}`, `config: limits.tools.bash: must be an object such as {"timeout": 120000}`},
		{`{"limits": {"tools": []}}`, "config: limits.tools: must be an object, not an array"},
		// auth
		{`{"auth": []}`, "config: auth: must be an object, not an array"},
		{`{"auth": {"tokens": {}}}`, "config: auth.tokens: must be an array, not an object"},
		{`{"auth": {"tokens": [null]}}`, `config: auth.tokens[0]: must be an object such as {"name": "agent-a", "token": "${AGENT_A_TOKEN}"}`},
		{`{"auth": {"tokens": [{"token": "${TN_TEST_TOKEN}"}]}}`, "config: auth.tokens[0].name: is required (it names the caller in logs and metrics)"},
		{`{"auth": {"tokens": [{"name": 5, "token": "${TN_TEST_TOKEN}"}]}}`, "config: auth.tokens[0].name: must be a string, not a number"},
		{`{"auth": {"tokens": [{"name": "a", "token": "${TN_TEST_TOKEN}", "tols": []}]}}`, "config: auth.tokens[0].tols: unknown key (check the spelling; see the README's config reference)"},
		{`{"auth": {"tokens": [{"name": "a", "token": "${TN_TEST_TOKEN}", "tools": "fs_*"}]}}`, "config: auth.tokens[0].tools: must be an array, not a string"},
		{`{"auth": {"tokens": [{"name": "a", "token": "${TN_TEST_TOKEN}", "tools": ["ok", "[x"]}]}}`, `config: auth.tokens[0].tools[1]: bad glob pattern "[x": syntax error in pattern`},
		{`{"auth": {"tokens": [{"name": "a", "token": "${TN_TEST_TOKEN}", "admin": "yes"}]}}`, "config: auth.tokens[0].admin: must be true or false, not a string"},
		{`{"auth": {"tokens": [{"name": "a", "token": "short"}]}}`, `config: auth.tokens[0].token: is empty or shorter than 8 characters; use a long random secret, e.g. "${AGENT_TOKEN}"`},
		{`{"auth": {"tokens": [{"name": "a", "token": ""}]}}`, `config: auth.tokens[0].token: is empty or shorter than 8 characters; use a long random secret, e.g. "${AGENT_TOKEN}"`},
		{`{"auth": {"tokens": [{"name": "a", "token": "${TN_TEST_TOKEN}"}, {"name": "a", "token": "${TN_TEST_TOKEN}x"}]}}`, `config: auth.tokens[1].name: "a" is used twice; token names must be unique`},
		// server
		{`{"server": {"listen": "nope"}}`, `config: server.listen: "nope" is not HOST:PORT (e.g. 127.0.0.1:50051)`},
		{`{"server": {"listen": ""}}`, `config: server.listen: "" is not HOST:PORT (e.g. 127.0.0.1:50051)`},
		{`{"server": {"listen": 50051}}`, "config: server.listen: must be a string, not a number"},
		{`{"server": {"metricsListen": "x"}}`, `config: server.metricsListen: "x" is not HOST:PORT (empty disables metrics)`},
		{`{"server": {"tls": {"cert": "a.pem"}}}`, "config: server.tls: cert and key must be given together"},
		{`{"server": {"tls": {"clientCA": "ca.pem"}}}`, "config: server.tls.clientCA: needs server.tls.cert and server.tls.key too"},
		{`{"server": {"tls": {"cert": "a", "key": "b", "clientCert": "c"}}}`, "config: server.tls.clientCert: unknown key (check the spelling; see the README's config reference)"},
		{`{"server": {"mcp": {"listen": "x"}}}`, `config: server.mcp.listen: "x" is not HOST:PORT`},
		{`{"server": {"mcp": {"lissen": "x"}}}`, "config: server.mcp.lissen: unknown key (check the spelling; see the README's config reference)"},
		{`{"server": {"gracePeriod": -1}}`, "config: server.gracePeriod: must be >= 0 milliseconds"},
		{`{"server": {"gcHeapFloorMiB": -1}}`, "config: server.gcHeapFloorMiB: must be 0 (Go's own pacing) to 65536 MiB, got -1"},
		{`{"server": {"gcHeapFloorMiB": 1.5}}`, "config: server.gcHeapFloorMiB: must be an integer, not a number 1.5"},
		{`{"server": {"port": 1}}`, "config: server.port: unknown key (check the spelling; see the README's config reference)"},
		// debug
		{`{"debug": "yes"}`, "config: debug: must be true or false"},
	}
	for _, c := range cases {
		ce := mustFail(t, c.text)
		if ce.Error() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.text, ce.Error(), c.want)
		}
		if ce.Key == "" {
			t.Errorf("%s: error has no key", c.text)
		}
	}
}

func TestSourceSectionErrorsCarryTheSectionKey(t *testing.T) {
	// The source packages word their own messages; the config names where.
	for _, c := range []struct{ text, key string }{
		{`{"mcpServers": {"fs": {"command": 5}}}`, "mcpServers.fs.command"},
		{`{"servers": {"fs": {"url": 5}}}`, "servers.fs.url"},
		{`{"mcpServers": []}`, "mcpServers"},
		{`{"builtins": {"workspace": 5}}`, "builtins.workspace"},
		{`{"skills": {"dirs": "x"}}`, "skills.dirs"},
		{`{"http": [{"name": "a", "method": "GET", "url": 5}]}`, "http[0].url"},
		{`{"openapi": [{}]}`, "openapi[0].spec"},
		{`{"agents": {"r": {"card": 5}}}`, "agents.r.card"},
	} {
		if ce := mustFail(t, c.text); ce.Key != c.key || ce.Msg == "" {
			t.Errorf("%s: key %q msg %q, want key %q", c.text, ce.Key, ce.Msg, c.key)
		}
	}
	// Warnings are named the same way.
	cfg, err := parse(t, `{"builtins": {"tools": {"bsh": false}}}`)
	if err != nil || len(cfg.Warnings) != 1 || !strings.HasPrefix(cfg.Warnings[0], "builtins.tools.bsh: ") {
		t.Fatalf("warnings %v (%v)", cfg.Warnings, err)
	}
}

func TestNotAJSONObject(t *testing.T) {
	cases := []struct{ text, want string }{
		{`[]`, `config: the config must be a JSON object ({"mcpServers": ...}), not an array`},
		{`null`, `config: the config must be a JSON object ({"mcpServers": ...}), not null`},
		{`"x"`, `config: the config must be a JSON object ({"mcpServers": ...}), not a string`},
		{`{`, "config: not valid JSON: unexpected end of JSON input at line 1, column 2"},
		{"{\n  \"debug\": tru\n}", "config: not valid JSON: invalid character '\\n' in literal true (expecting 'e') at line 2, column 15"},
		{"{\n  \"debug\": true,\n}", "config: not valid JSON: invalid character '}' looking for beginning of object key string at line 3, column 1"},
		{``, "config: not valid JSON: unexpected end of JSON input at line 1, column 1"},
	}
	for _, c := range cases {
		if ce := mustFail(t, c.text); ce.Error() != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.text, ce.Error(), c.want)
		}
	}
}

func TestAuthTokensFromEnvironment(t *testing.T) {
	const secret = "s3cret-value-never-logged"
	t.Setenv("TN_AGENT_A", secret)
	t.Setenv("TN_ADMIN", "admin-"+secret)
	cfg, err := parse(t, `{"auth": {"tokens": [
		{"name": "agent-a", "token": "${TN_AGENT_A}", "tools": ["fs_*", "source:debug"]},
		{"name": "ops", "token": "${TN_ADMIN}", "admin": true}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Auth
	if !a.Enabled() || len(a.Tokens) != 2 {
		t.Fatalf("tokens %v", a.Tokens)
	}
	if a.Tokens[0].Value != secret || a.Tokens[0].Admin || strings.Join(a.Tokens[0].Tools, ",") != "fs_*,source:debug" {
		t.Fatalf("agent-a parsed wrong (name %s, admin %v, tools %v)", a.Tokens[0].Name, a.Tokens[0].Admin, a.Tokens[0].Tools)
	}
	if !a.Tokens[1].Admin || a.Tokens[1].Tools != nil {
		t.Fatalf("ops: admin %v tools %v; want admin and every tool", a.Tokens[1].Admin, a.Tokens[1].Tools)
	}
	// Printing the config by accident shows names, never secrets.
	if dump := fmt.Sprintf("%v %+v %s", cfg.Auth, cfg.Auth.Tokens, a.Tokens[0]); strings.Contains(dump, secret) || !strings.Contains(dump, "agent-a") {
		t.Fatalf("printed auth leaks or hides too much: %s", dump)
	}
}

func TestAuthMissingEnvNamesTheVariableNeverAValue(t *testing.T) {
	const secret = "present-secret-value"
	t.Setenv("TN_PRESENT", secret)
	ce := mustFail(t, `{"auth": {"tokens": [
		{"name": "a", "token": "${TN_PRESENT}"},
		{"name": "b", "token": "prefix-${TN_PRESENT}-${TN_SURELY_UNSET_VAR}"}]}}`)
	want := "config: auth.tokens[1].token: environment variable TN_SURELY_UNSET_VAR is not set (referenced as ${TN_SURELY_UNSET_VAR})"
	if ce.Error() != want {
		t.Fatalf("got %s\nwant %s", ce.Error(), want)
	}
	if strings.Contains(ce.Error(), secret) {
		t.Fatal("the error leaks a secret")
	}
}

func TestLimitsPerToolInheritGlobal(t *testing.T) {
	cfg, err := parse(t, `{"limits": {"timeout": 1500, "maxConcurrency": 8, "maxOutputBytes": 100, "validateArguments": false, "maxRequestBytes": 2048,
		"tools": {"bash": {"timeout": 120000, "maxConcurrency": 2}, "quiet": {"maxOutputBytes": 0, "validateArguments": true}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Limits
	if l.Timeout != 1500*time.Millisecond || l.MaxConcurrency != 8 || l.MaxOutputBytes != 100 || l.ValidateArguments || l.MaxRequestBytes != 2048 {
		t.Fatalf("global %+v", l)
	}
	bash := l.For("bash")
	if *bash.Timeout != 2*time.Minute || *bash.MaxConcurrency != 2 || *bash.MaxOutputBytes != 100 || *bash.ValidateArguments {
		t.Fatalf("bash: %v %v %v %v", *bash.Timeout, *bash.MaxConcurrency, *bash.MaxOutputBytes, *bash.ValidateArguments)
	}
	quiet := l.For("quiet")
	if *quiet.Timeout != 1500*time.Millisecond || *quiet.MaxConcurrency != 0 || *quiet.MaxOutputBytes != 0 || !*quiet.ValidateArguments {
		t.Fatalf("quiet: %v %v %v %v", *quiet.Timeout, *quiet.MaxConcurrency, *quiet.MaxOutputBytes, *quiet.ValidateArguments)
	}
	// The global maxConcurrency caps all calls together; it is not a
	// per-tool default.
	if other := l.For("other"); *other.MaxConcurrency != 0 || *other.Timeout != 1500*time.Millisecond {
		t.Fatalf("other: %v %v", *other.MaxConcurrency, *other.Timeout)
	}
}

func TestServerSection(t *testing.T) {
	cfg, err := parse(t, `{"server": {"listen": "0.0.0.0:7000", "metricsListen": "", "gracePeriod": 2500, "watchConfig": true,
		"tls": {"cert": "s.pem", "key": "s.key", "clientCA": "ca.pem"}, "mcp": {"listen": "127.0.0.1:7001", "tools": ["a*"]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if s.Listen != "0.0.0.0:7000" || s.MetricsListen != "" || s.GracePeriod != 2500*time.Millisecond || !s.WatchConfig {
		t.Fatalf("server %+v", s)
	}
	if !s.TLS.Enabled() || s.TLS.ClientCA != "ca.pem" || s.MCP.Listen != "127.0.0.1:7001" || s.MCP.Tools[0] != "a*" {
		t.Fatalf("tls %+v mcp %+v", s.TLS, s.MCP)
	}
	if s.GCHeapFloor != config.DefaultGCHeapFloorMiB<<20 {
		t.Fatalf("gcHeapFloorMiB unset: %d bytes, want the default %d MiB", s.GCHeapFloor, config.DefaultGCHeapFloorMiB)
	}
	for in, want := range map[string]int64{`0`: 0, `48`: 48 << 20} {
		cfg, err := parse(t, `{"server": {"gcHeapFloorMiB": `+in+`}}`)
		if err != nil || cfg.Server.GCHeapFloor != want {
			t.Fatalf("gcHeapFloorMiB %s: %d bytes, %v; want %d", in, cfg.Server.GCHeapFloor, err, want)
		}
	}
	if got := cfg.Resolve("s.pem"); got != filepath.Join(cfg.BaseDir, "s.pem") {
		t.Fatalf("Resolve relative = %s", got)
	}
	if got := cfg.Resolve("/abs/s.pem"); got != "/abs/s.pem" {
		t.Fatalf("Resolve absolute = %s", got)
	}
}

func TestBareServerMapIsAccepted(t *testing.T) {
	// A file that is only a server map (some tools write mcp.json this way).
	cfg, err := parse(t, `{"fs": {"command": "npx", "args": ["x"]}, "remote": {"url": "https://example.test/mcp"}}`)
	if err != nil {
		t.Fatalf("bare server map: %v", err)
	}
	if _, ok := cfg.MCP["fs"]; !ok || len(cfg.MCP) != 2 {
		t.Fatalf("bare server map read as %d servers: %v", len(cfg.MCP), cfg.MCP)
	}
	// An object without command or url is not a server: the key is unknown.
	if ce := mustFail(t, `{"fs": {"comand": "npx"}}`); ce.Key != "fs" || !strings.HasPrefix(ce.Msg, "unknown top-level key") {
		t.Fatalf("got %v", ce)
	}
	if ce := mustFail(t, `{"fs": "npx"}`); ce.Key != "fs" {
		t.Fatalf("got %v", ce)
	}
}

func TestLoadFromFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(p, []byte(`{"debug": true, "server": {"tls": {"cert": "c.pem", "key": "k.pem"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Debug || cfg.Path != p || cfg.BaseDir != dir || cfg.Resolve(cfg.Server.TLS.Cert) != filepath.Join(dir, "c.pem") {
		t.Fatalf("path %q base %q cert %q", cfg.Path, cfg.BaseDir, cfg.Resolve(cfg.Server.TLS.Cert))
	}
	missing := filepath.Join(dir, "nope.json")
	_, err = config.Load(missing)
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, missing) || !strings.Contains(ce.Msg, "--config") {
		t.Fatalf("missing file: %v", err)
	}
}

func ExampleParse() {
	_, err := config.Parse([]byte(`{"limts": {"timeout": 1000}}`), "", ".")
	fmt.Println(err)
	_, err = config.Parse([]byte(`{"limits": {"tools": {"bash": {"maxConcurrency": -1}}}}`), "", ".")
	fmt.Println(err)
	// Output:
	// config: limts: unknown top-level key; did you mean "limits"?
	// config: limits.tools.bash.maxConcurrency: must be >= 0 (0 = no cap)
}

func TestMCPGatewayToolPatternsAreChecked(t *testing.T) {
	_, err := config.Parse([]byte(`{"server": {"mcp": {"listen": "127.0.0.1:8080", "tools": ["fs_*", "source:["]}}}`), "", t.TempDir())
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "server.mcp.tools[1]" || !strings.Contains(ce.Msg, "bad glob pattern") {
		t.Fatalf("err = %v, want a config error naming server.mcp.tools[1]", err)
	}
}
