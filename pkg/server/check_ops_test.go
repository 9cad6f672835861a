package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// checkDir writes files into a temp dir and returns a path helper.
func checkDir(t *testing.T) (dir string, write func(name, body string) string) {
	dir = t.TempDir()
	return dir, func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// --check resolves every ${VAR} and ${file:...} a source expands at start
// and refuses (exit 2) the first that does not resolve, naming the key and
// the reference. A start does not refuse these (the source fails alone and
// is retried), which is why --check must.
func TestCheckResolvesEveryReference(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	for _, c := range []struct{ name, cfg, key, ref string }{
		{"an MCP header naming an unset variable",
			`{"mcpServers": {"remote": {"url": "https://mcp.example.test/mcp", "headers": {"Authorization": "Bearer ${TOOLNEXUS_CHECK_UNSET}"}}}}`,
			"mcpServers.remote.headers.Authorization", "${TOOLNEXUS_CHECK_UNSET}"},
		{"a token exchange secret in a file that does not exist",
			`{"mcpServers": {"remote": {"url": "https://mcp.example.test/mcp", "tokenExchange": {"tokenUrl": "https://idp.example.test/token", "clientId": "tn", "clientSecret": "${file:/nonexistent/secret}", "audience": "up"}}}}`,
			"mcpServers.remote.tokenExchange.clientSecret", "${file:/nonexistent/secret}"},
		{"an MCP server's env",
			`{"mcpServers": {"local": {"command": "srv", "env": {"API_KEY": "${TOOLNEXUS_CHECK_UNSET_KEY}"}}}}`,
			"mcpServers.local.env.API_KEY", "${TOOLNEXUS_CHECK_UNSET_KEY}"},
		{"an MCP server's environment",
			`{"mcpServers": {"local": {"command": "srv", "environment": {"API_KEY": "${TOOLNEXUS_CHECK_UNSET_KEY}"}}}}`,
			"mcpServers.local.environment.API_KEY", "${TOOLNEXUS_CHECK_UNSET_KEY}"},
		{"an agent's header",
			`{"agents": {"rev": {"card": "https://a.example.test/card.json", "headers": {"X-Key": "${TOOLNEXUS_CHECK_UNSET}"}}}}`,
			"agents.rev.headers.X-Key", "${TOOLNEXUS_CHECK_UNSET}"},
		{"an OpenAPI spec's header",
			`{"openapi": [{"spec": "https://api.example.test/openapi.json", "headers": {"Authorization": "${file:relative/path}"}}]}`,
			"openapi[0].headers.Authorization", "${file:relative/path}"},
	} {
		opts := server.Options{ConfigPath: write(strings.ReplaceAll(c.name, " ", "_")+".json", c.cfg), Workspace: filepath.Join(dir, "ws")}
		t.Run(c.name, func(t *testing.T) {
			_, err := server.CheckReport(opts)
			var ce *server.ConfigError
			if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(ce.Msg, c.ref) {
				t.Fatalf("CheckReport: %v, want a config error naming %s and %s", err, c.key, c.ref)
			}
			if code := server.Main([]string{"--check", "--config", opts.ConfigPath, "--workspace", opts.Workspace}); code != server.ExitConfig {
				t.Fatalf("--check exit = %d, want %d", code, server.ExitConfig)
			}
		})
	}
	t.Run("references that resolve pass", func(t *testing.T) {
		secret := write("secret", "s3cret\n")
		opts := server.Options{ConfigPath: write("ok.json", `{"mcpServers": {"remote": {"url": "https://mcp.example.test/mcp",
			"headers": {"Authorization": "Bearer ${PATH}", "X-File": "${file:`+secret+`}"}}}}`), Workspace: filepath.Join(dir, "ws")}
		if _, err := server.CheckReport(opts); err != nil {
			t.Fatal(err)
		}
	})
}

// A misspelt filter key in an MCP entry fails closed, in --check and at
// start alike: ignoring it would expose every tool of the server.
func TestMisspeltFilterFailsClosedAtCheckAndStart(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	opts := server.Options{ConfigPath: write("typo.json", `{"builtins": false,
		"mcpServers": {"fs": {"command": "srv", "tool": {"write_file": false}}}}`), Workspace: filepath.Join(dir, "ws"),
		Listen: "127.0.0.1:0", MetricsListen: "-"}
	var ce *server.ConfigError
	if _, err := server.CheckReport(opts); !errors.As(err, &ce) || ce.Key != "mcpServers.fs.tool" || !strings.Contains(ce.Msg, `did you mean "tools"`) {
		t.Fatalf("CheckReport: %v", err)
	}
	if _, err := server.New(opts); !errors.As(err, &ce) || ce.Key != "mcpServers.fs.tool" {
		t.Fatalf("New: %v, want the same config error", err)
	}
}

// --check warns about configs that start but do not do what was meant.
func TestCheckWarnings(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	approve := write("approve.cedar", `@approval("required")
permit(principal, action, resource == Tool::"bash");
permit(principal, action, resource == Tool::"deploy_prod");
permit(principal, action, resource == Tool::"gh_create_issue");`)
	for _, c := range []struct {
		name, cfg string
		want      []string
		not       []string
	}{
		{"approvals without auth", `{"policy": {"files": ["` + approve + `"]}, "mcpServers": {"gh": {"url": "https://gh.example.test/mcp"}}}`,
			[]string{`policy.files: @approval("required") policies with no auth configured`},
			nil},
		{"a policy naming a tool no source has", `{"policy": {"files": ["` + approve + `"]}, "mcpServers": {"gh": {"url": "https://gh.example.test/mcp"}}}`,
			[]string{`policy.files: approve.cedar:3 names Tool::"deploy_prod", which no configured source offers`},
			[]string{`Tool::"bash"`, `Tool::"gh_create_issue"`}},
		{"a group no caller can be in", `{"auth": {"tokens": [{"name": "a", "token": "t0k3n-for-check-test", "groups": ["dev"]}],
			"groups": {"dev": {"tools": ["*"]}, "ops": {"tools": ["bash"]}}}}`,
			[]string{"auth.groups.ops: no token names this group and no auth.oidc issuer is configured"},
			[]string{"auth.groups.dev"}},
		{"an audience that is not /mcp's resource", `{"server": {"mcp": {"listen": "127.0.0.1:7001"}},
			"auth": {"oidc": {"issuer": "https://login.example.test/realms/a", "audience": "toolnexus"}}}`,
			[]string{`auth.oidc[0].audience: "toolnexus" is not the resource /mcp advertises in /.well-known/oauth-protected-resource (http://127.0.0.1:7001/mcp)`},
			nil},
		{"an audience that is the resource", `{"server": {"mcp": {"listen": "127.0.0.1:7001", "resource": "https://tools.example.test/mcp"}},
			"auth": {"oidc": {"issuer": "https://login.example.test/realms/a", "audience": "https://tools.example.test/mcp"}}}`,
			nil, []string{"audience"}},
		{"a stateless /mcp whose replicas each sign requestState alone", `{"server": {"mcp": {"listen": "127.0.0.1:7001", "stateless": true}}}`,
			[]string{"server.mcp.stateKeyFile is unset and /mcp is stateless"}, nil},
		{"a stateless /mcp sharing its key through Redis", `{"server": {"mcp": {"listen": "127.0.0.1:7001", "stateless": true}},
			"cluster": {"name": "prod", "redis": {"url": "redis://127.0.0.1:1"}}}`,
			nil, []string{"stateKeyFile"}},
	} {
		path := write(strings.NewReplacer(" ", "_", "/", "_").Replace(c.name)+".json", c.cfg)
		t.Run(c.name, func(t *testing.T) {
			r, err := server.CheckReport(server.Options{ConfigPath: path, Workspace: filepath.Join(dir, "ws")})
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(r.Warnings, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("warnings lack %q:\n%s", w, all)
				}
			}
			for _, w := range c.not {
				if strings.Contains(all, w) {
					t.Errorf("warnings name %q:\n%s", w, all)
				}
			}
		})
	}
}

// --check ends with a summary of listeners, sources and identity.
func TestCheckSummary(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	r, err := server.CheckReport(server.Options{ConfigPath: write("sum.json", `{"server": {"mcp": {"listen": "127.0.0.1:7001"}},
		"mcpServers": {"fs": {"command": "srv", "sandbox": true}, "gh": {"url": "https://gh.example.test/mcp"}},
		"auth": {"tokens": [{"name": "a", "token": "t0k3n-for-check-test"}]}}`), Workspace: filepath.Join(dir, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.Summary, "\n")
	for _, w := range []string{"listeners: grpc 127.0.0.1:50051, metrics 127.0.0.1:9464, mcp 127.0.0.1:7001 (resource http://127.0.0.1:7001/mcp)",
		"sources: builtins, mcp fs (local, sandboxed), mcp gh (remote)", "identity: 1 tokens"} {
		if !strings.Contains(got, w) {
			t.Errorf("summary lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "t0k3n") {
		t.Fatal("the summary shows a token")
	}
	if strings.Contains(got, "debug") || strings.Contains(got, "code mode") {
		t.Errorf("the summary names sources this config does not serve:\n%s", got)
	}
	if !strings.Contains(got, "replicas: one (") {
		t.Errorf("summary lacks what the replicas share:\n%s", got)
	}
}

// The summary names the debug tools and code mode when they are on (the
// flag counts as the config does), and --check warns that sandbox.mode
// "off" gives commands the server's authority.
func TestCheckSummaryNamesDebugCodeModeAndSandboxOff(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	r, err := server.CheckReport(server.Options{ConfigPath: write("on.json", `{"builtins": false, "skills": [],
		"codeMode": {"enabled": true}, "sandbox": {"mode": "off"}}`), Workspace: filepath.Join(dir, "ws"), Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Summary, "\n"); !strings.Contains(got, "sources: code mode (run_code, describe_tools), debug tools") {
		t.Errorf("summary:\n%s", got)
	}
	if got := strings.Join(r.Warnings, "\n"); !strings.Contains(got, `sandbox.mode: "off": every command a model starts`) {
		t.Errorf("no warning about sandbox.mode off:\n%s", got)
	}
}

// --check says whose keys a deployment uses in Redis, and refuses a
// cluster.redis with neither cluster.name nor cluster.redis.keyPrefix:
// with the shared default two deployments on one Redis approve each
// other's calls.
func TestCheckSaysTheDeploymentsRedisPrefix(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	opts := func(name, cfg string) server.Options {
		return server.Options{ConfigPath: write(name, cfg), Workspace: filepath.Join(dir, "ws")}
	}
	r, err := server.CheckReport(opts("named.json", `{"server": {"mcp": {"listen": "127.0.0.1:7001"}}, "cluster": {"name": "prod", "redis": {"url": "redis://127.0.0.1:1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Summary, "\n"); !strings.Contains(got, `keys under "toolnexus:prod:" (from cluster.name); /mcp requestState signed with a key made once in Redis`) {
		t.Fatalf("summary:\n%s", got)
	}
	_, err = server.CheckReport(opts("unnamed.json", `{"cluster": {"redis": {"url": "redis://127.0.0.1:1"}}}`))
	var ce *server.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cluster.name: is required with cluster.redis") {
		t.Fatalf("--check of cluster.redis without a name: %v", err)
	}
}

// --config-patch (and TOOLNEXUS_CONFIG_PATCHES) reach the config: a patch
// with a mistake fails --check naming its key, a good one passes.
func TestConfigPatchFlag(t *testing.T) {
	dir, write := checkDir(t)
	base := write("base.json", `{"builtins": false, "skills": []}`)
	good := write("good.json", `{"sessions": {"max": 7}}`)
	bad := write("bad.json", `{"sessions": {"maxx": 7}}`)
	ws := filepath.Join(dir, "ws")
	if code := server.Main([]string{"--check", "--config", base, "--config-patch", good, "--workspace", ws}); code != server.ExitOK {
		t.Fatalf("good patch: exit %d", code)
	}
	if code := server.Main([]string{"--check", "--config", base, "--config-patch", good, "--config-patch", bad, "--workspace", ws}); code != server.ExitConfig {
		t.Fatalf("bad patch after a good one: exit %d, want %d", code, server.ExitConfig)
	}
	t.Setenv("TOOLNEXUS_CONFIG_PATCHES", good+","+bad)
	if code := server.Main([]string{"--check", "--config", base, "--workspace", ws}); code != server.ExitConfig {
		t.Fatalf("bad patch from the environment: exit %d, want %d", code, server.ExitConfig)
	}
	// A flag replaces the environment's list.
	if code := server.Main([]string{"--check", "--config", base, "--config-patch", good, "--workspace", ws}); code != server.ExitOK {
		t.Fatalf("--config-patch over TOOLNEXUS_CONFIG_PATCHES: exit %d", code)
	}
}
