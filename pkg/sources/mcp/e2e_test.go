package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// everythingBin is the real third-party server from npm, installed by
// `npm ci --prefix e2e/node`.
var everythingBin = filepath.Join("..", "..", "..", "e2e", "node", "node_modules", ".bin", "mcp-server-everything")

// TestServerEverything runs @modelcontextprotocol/server-everything (the
// TypeScript reference server) over stdio through a registry. It skips when
// the npm package is not installed, unless TOOLNEXUS_REQUIRE_E2E=1 (CI).
func TestServerEverything(t *testing.T) {
	bin, err := filepath.Abs(everythingBin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("TOOLNEXUS_REQUIRE_E2E=1 but the server is missing (run npm ci --prefix e2e/node): %v", err)
		}
		t.Skipf("@modelcontextprotocol/server-everything not installed (npm ci --prefix e2e/node): %v", err)
	}
	raw, _ := json.Marshal(map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"}}})
	servers, _, err := mcp.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := start(t, "everything", servers["everything"])

	got := names(reg.Snapshot())
	for _, want := range []string{"everything_echo", "everything_get-sum", "everything_get-structured-content"} {
		if !slices.Contains(got, want) {
			t.Fatalf("%s missing from %v", want, got)
		}
	}
	e, _ := reg.Snapshot().Lookup("everything_echo")
	if e.Tool.Description != "Echoes back the input string" || e.Tool.Source != "mcp" {
		t.Fatalf("echo tool = %+v", e.Tool)
	}

	if r := call(t, reg, "everything_echo", `{"message":"hello from Go"}`); r.IsError || r.Output != "Echo: hello from Go" {
		t.Fatalf("echo: %+v", r)
	}
	if r := call(t, reg, "everything_get-sum", `{"a":2,"b":40}`); r.IsError || r.Output != "The sum of 2 and 40 is 42." {
		t.Fatalf("get-sum (add): %+v", r)
	}
	r := call(t, reg, "everything_get-structured-content", `{"location":"New York"}`)
	var weather map[string]any
	if r.IsError || json.Unmarshal([]byte(r.Output), &weather) != nil || weather["temperature"] == nil {
		t.Fatalf("structured content: %+v", r)
	}
	if r := call(t, reg, "everything_echo", `{"message":7}`); !r.IsError {
		t.Fatalf("invalid arguments accepted: %+v", r)
	}
}

// TestServerEverythingSandboxed runs the same npm server in the command
// sandbox: node and its packages are read through the server's own
// readPaths (the e2e/node install), the rest of the filesystem, /proc and
// the network are closed to it, and its tools still list and answer. As
// root it runs a second time from a copy of the install under a private
// (0700) directory, as a clone under /root or in a `mktemp -d` is: the
// commands act as an unprivileged uid that may not search that directory,
// and the server still starts its program there.
func TestServerEverythingSandboxed(t *testing.T) {
	bin, err := filepath.Abs(everythingBin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("TOOLNEXUS_REQUIRE_E2E=1 but the server is missing (run npm ci --prefix e2e/node): %v", err)
		}
		t.Skipf("@modelcontextprotocol/server-everything not installed (npm ci --prefix e2e/node): %v", err)
	}
	install := filepath.Dir(filepath.Dir(filepath.Dir(bin))) // e2e/node
	t.Run("in place", func(t *testing.T) { everythingSandboxed(t, bin, install) })
	t.Run("under a private parent", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a non-root server's commands act as its own uid, which may search its own directories")
		}
		private := t.TempDir()
		if err := os.Chmod(private, 0o700); err != nil {
			t.Fatal(err)
		}
		// Hard links when the file system allows (fast), a copy otherwise.
		if exec.Command("cp", "-al", install, private).Run() != nil {
			if out, err := exec.Command("cp", "-a", install, private).CombinedOutput(); err != nil {
				t.Fatalf("copying %s: %v %s", install, err, out)
			}
		}
		copied := filepath.Join(private, filepath.Base(install))
		rel, _ := filepath.Rel(install, bin)
		everythingSandboxed(t, filepath.Join(copied, rel), copied)
	})
}

func everythingSandboxed(t *testing.T, bin, install string) {
	f := newSandboxFixture(t)
	raw, _ := json.Marshal(map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"},
		"sandbox": map[string]any{"readPaths": []string{install}}}})
	servers, _, err := mcp.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	reg, src := startEnv(t, "everything", servers["everything"], f.env)
	if st := src.Status(); !strings.Contains(st.Sandbox, "sandboxed") {
		t.Fatalf("status: %+v", st)
	}
	if r := call(t, reg, "everything_echo", `{"message":"hello from the sandbox"}`); r.IsError || r.Output != "Echo: hello from the sandbox" {
		t.Fatalf("echo: %+v", r)
	}
	if r := call(t, reg, "everything_get-sum", `{"a":2,"b":40}`); r.IsError || r.Output != "The sum of 2 and 40 is 42." {
		t.Fatalf("get-sum: %+v", r)
	}
	mine := ownProcessesOf(install)
	if len(mine) == 0 {
		t.Fatal("the server's node process is not found by its path")
	}
	_ = src.Close(context.Background())
	if left := stillRunning(mine); len(left) > 0 {
		t.Fatalf("processes left after Close: %q", left)
	}
}
