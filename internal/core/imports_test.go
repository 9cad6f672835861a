package core_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/toolnexus/toolnexus"

// pkgInfo is what `go list -json` says of one package.
type pkgInfo struct {
	ImportPath string
	Imports    []string
}

// listDeps returns every package the given ones depend on, by import path.
func listDeps(t *testing.T, roots ...string) map[string]pkgInfo {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=ImportPath,Imports"}, roots...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]pkgInfo{}
	dec := json.NewDecoder(out)
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

// reach walks the project's own packages from root, not descending into
// those skip says to leave out, and returns the path by which each was
// reached (for the failure message).
func reach(pkgs map[string]pkgInfo, root string, skip func(string) bool) map[string]string {
	seen := map[string]string{root: root}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range pkgs[p].Imports {
			if _, ok := seen[imp]; ok || !strings.HasPrefix(imp, module+"/") || skip(imp) {
				continue
			}
			seen[imp] = seen[p] + " → " + imp
			queue = append(queue, imp)
		}
	}
	return seen
}

// wireFormat reports whether an import is a wire protocol the core must not
// know: gRPC, protobuf (and our generated code), MCP.
func wireFormat(imp string) bool {
	for _, prefix := range []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/modelcontextprotocol/", module + "/gen/"} {
		if strings.HasPrefix(imp, prefix) {
			return true
		}
	}
	return false
}

// The core — the registry, the executor, the call path and the core API —
// imports no wire protocol: front-ends translate, the core decides. The
// walk covers the project's own packages reachable from the core and
// checks what each of them imports directly; it stops at the source
// adapters (an MCP source speaks MCP by nature) and does not judge what
// third-party libraries use inside (Prometheus' client encodes with
// protobuf, for instance).
func TestCoreImportsNoWireProtocol(t *testing.T) {
	roots := []string{module + "/internal/core", module + "/internal/executor", module + "/pkg/registry", module + "/pkg/tool", module + "/internal/auth"}
	pkgs := listDeps(t, roots...)
	isSource := func(p string) bool {
		return strings.HasPrefix(p, module+"/pkg/sources/") || p == module+"/internal/engine" || p == module+"/internal/config"
	}
	for _, root := range roots {
		for p, via := range reach(pkgs, root, isSource) {
			for _, imp := range pkgs[p].Imports {
				if wireFormat(imp) {
					t.Errorf("%s imports %s (reached as %s): the core must not know a wire protocol", p, imp, via)
				}
			}
		}
	}
	// The engine and the config wire the sources in; they may reach
	// protocol code only through a source package.
	for _, root := range []string{module + "/internal/engine", module + "/internal/config"} {
		pkgs := listDeps(t, root)
		for p, via := range reach(pkgs, root, func(p string) bool { return strings.HasPrefix(p, module+"/pkg/sources/") }) {
			for _, imp := range pkgs[p].Imports {
				if wireFormat(imp) {
					t.Errorf("%s imports %s (reached as %s) other than through a source package", p, imp, via)
				}
			}
		}
	}
}

// Each front-end translates its own wire format only: neither depends on
// the other, and neither on the server that owns them.
func TestFrontEndsAreIndependent(t *testing.T) {
	fronts := []string{module + "/internal/grpcapi", module + "/internal/mcpgateway"}
	pkgs := listDeps(t, fronts...)
	for _, f := range fronts {
		for p, via := range reach(pkgs, f, func(string) bool { return false }) {
			for _, other := range append(fronts, module+"/pkg/server") {
				if other != f && p == other {
					t.Errorf("front-end %s depends on %s (%s)", f, other, via)
				}
			}
		}
	}
	// And the gRPC front-end knows no MCP, the MCP front-end no gRPC.
	for p, via := range reach(pkgs, module+"/internal/mcpgateway", func(p string) bool {
		return strings.HasPrefix(p, module+"/pkg/sources/") || p == module+"/internal/engine" || p == module+"/internal/config"
	}) {
		for _, imp := range pkgs[p].Imports {
			if strings.HasPrefix(imp, "google.golang.org/grpc") || strings.HasPrefix(imp, module+"/gen/") {
				t.Errorf("the MCP front-end reaches %s via %s", imp, via)
			}
		}
	}
	for p, via := range reach(pkgs, module+"/internal/grpcapi", func(p string) bool {
		return strings.HasPrefix(p, module+"/pkg/sources/") || p == module+"/internal/engine" || p == module+"/internal/config"
	}) {
		for _, imp := range pkgs[p].Imports {
			if strings.HasPrefix(imp, "github.com/modelcontextprotocol/") {
				t.Errorf("the gRPC front-end reaches %s via %s", imp, via)
			}
		}
	}
}
