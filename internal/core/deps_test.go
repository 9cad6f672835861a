package core_test

import (
	"sort"
	"strings"
	"testing"
)

// forbidden is a package (or, ending in "/", a tree of packages) that a
// root must not depend on, even indirectly, and why.
type forbidden map[string]string

// callPathBadDeps are what the call path — the executor and the core API
// types every front-end shares — must not pull in, by any route. The
// executor runs every call; whatever it depends on is linked into, and
// initialised by, every program that embeds it.
var callPathBadDeps = forbidden{
	"google.golang.org/grpc/":            "gRPC is the gRPC front-end's wire; the executor is protocol-neutral",
	"google.golang.org/grpc":             "gRPC is the gRPC front-end's wire; the executor is protocol-neutral",
	"github.com/modelcontextprotocol/":   "MCP is the MCP front-end's and the mcp source's wire",
	module + "/gen/":                     "generated protobuf belongs to the gRPC front-end",
	module + "/internal/config":          "the config parser imports every source kind (and the MCP SDK); the executor takes internal/limits",
	module + "/pkg/sources/":             "a source kind is the engine's business, never the call path's",
	module + "/internal/engine":          "the engine starts sources; the executor only runs the tools they published",
	module + "/internal/grpcapi":         "a front-end depends on the core, never the other way",
	module + "/internal/mcpgateway":      "a front-end depends on the core, never the other way",
	module + "/pkg/server":               "the server owns the process; nothing below it may import it",
	"github.com/getkin/kin-openapi/":     "OpenAPI parsing is the http source's",
	"gopkg.in/yaml.v3":                   "YAML is the skill source's (SKILL.md front matter)",
	"github.com/JohannesKaufmann/":       "HTML to Markdown is the builtin webfetch tool's",
	"go.opentelemetry.io/otel/sdk":       "the tracing SDK is set up by the server; the call path speaks only the otel API",
	"go.opentelemetry.io/otel/exporters": "exporters are the server's",
	"google.golang.org/protobuf/":        "protobuf is the gRPC front-end's encoding",
	"github.com/prometheus/":             "the executor records through its Meter; Prometheus (and the protobuf it brings) is internal/metrics'",
	module + "/internal/metrics":         "internal/metrics adapts Prometheus to the executor's Meter, not the other way round",
}

// match reports whether pkg is the forbidden entry key or, for a key
// ending in "/", inside it.
func match(key, pkg string) bool {
	if strings.HasSuffix(key, "/") {
		return strings.HasPrefix(pkg, key)
	}
	return pkg == key
}

// TestCallPathTransitiveDeps walks every package the executor (and the
// small packages it shares with every front-end) depends on, directly or
// not, third-party ones included, as `go list -deps` reports them, and
// fails on any forbidden one, naming the route to it and the reason.
func TestCallPathTransitiveDeps(t *testing.T) {
	t.Parallel()
	roots := []string{module + "/internal/executor", module + "/internal/limits", module + "/pkg/tool", module + "/pkg/registry"}
	pkgs := listDeps(t, roots...)
	for _, root := range roots {
		routes := reachAll(pkgs, root)
		for pkg, via := range routes {
			for key, why := range callPathBadDeps {
				if match(key, pkg) {
					t.Errorf("%s depends on %s (%s): %s", root, pkg, via, why)
				}
			}
		}
	}
}

// reachAll is every package root depends on, third-party and standard
// library included, with the route by which it was first reached.
func reachAll(pkgs map[string]pkgInfo, root string) map[string]string {
	seen := map[string]string{root: root}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		imps := append([]string(nil), pkgs[p].Imports...)
		sort.Strings(imps)
		for _, imp := range imps {
			if _, ok := seen[imp]; ok {
				continue
			}
			seen[imp] = seen[p] + " → " + imp
			queue = append(queue, imp)
		}
	}
	return seen
}

// The forbidden list must bite: the config parser, which the executor used
// to import for its limits, reaches the MCP SDK through the mcp source.
func TestCallPathBadDepsCatchConfig(t *testing.T) {
	t.Parallel()
	pkgs := listDeps(t, module+"/internal/config")
	var hit []string
	for pkg := range reachAll(pkgs, module+"/internal/config") {
		for key := range callPathBadDeps {
			if match(key, pkg) {
				hit = append(hit, pkg)
			}
		}
	}
	if len(hit) == 0 {
		t.Fatal("internal/config reaches no forbidden package; the list no longer guards the call path")
	}
}
