package docs_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// shared is the one server the pages' commands run against (the tour's
// `make run`): the embedded default's sources — builtins in a workspace
// of its own, the sample skills — plus the debug tools, /metrics, /mcp
// and the web listener (the console).
var shared struct {
	grpc, metrics, mcp, web string
	dir                     string // the tour's working directory: bin/, skills, workspace
}

func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the server it starts
	stop, err := startShared()
	if err != nil {
		fmt.Fprintln(os.Stderr, "docs: starting the shared server:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(shared.dir)
	os.Exit(code)
}

func startShared() (stop func(), err error) {
	if shared.dir, err = os.MkdirTemp("", "toolnexus-docs-"); err != nil {
		return nil, err
	}
	skills, err := filepath.Abs("../skills")
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(skills, filepath.Join(shared.dir, "skills")); err != nil {
		return nil, err
	}
	cfg := filepath.Join(shared.dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"builtins": {"workspace": "./workspace"}, "skills": ["./skills"], "debug": true}`), 0o600); err != nil {
		return nil, err
	}
	srv, stopServe, err := servertest.Run(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", MCPListen: "127.0.0.1:0", WebListen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	shared.grpc, shared.metrics, shared.mcp, shared.web = srv.Addr().String(), srv.MetricsAddr().String(), srv.MCPAddr().String(), srv.WebAddr().String()
	return func() { _ = stopServe() }, nil
}
