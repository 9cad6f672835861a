package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestNonLoopbackListenNeedsAuthOrTLSOrInsecure: server.New refuses a
// listener off loopback unless auth, TLS or --insecure is set (the
// limits' protocol tests moved to internal/core).
func TestNonLoopbackListenNeedsAuthOrTLSOrInsecure(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:50051", "example.test:50051"} {
		_, err := server.New(server.Options{ConfigPath: writeTemp(t, debugOnly), Listen: listen, MetricsListen: "-", Workspace: t.TempDir(), Logger: quiet})
		var ce *server.ConfigError
		if !errors.As(err, &ce) || ce.Key != "server.listen" || !strings.Contains(ce.Msg, "--insecure") || !strings.Contains(ce.Msg, listen) {
			t.Fatalf("listen %s: %v; want a server.listen config error", listen, err)
		}
	}
	// The same address from the config file is refused the same way.
	_, err := server.New(server.Options{ConfigPath: writeTemp(t, `{"server": {"listen": "0.0.0.0:0"}, "builtins": false, "skills": []}`), MetricsListen: "-", Workspace: t.TempDir(), Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "config: server.listen: 0.0.0.0:0 is not a loopback address") {
		t.Fatalf("from config: %v", err)
	}
	// --insecure, auth or TLS each make it acceptable.
	t.Setenv("TN_LISTEN_TOKEN", "listen-token-123456")
	for _, c := range []struct {
		cfg      string
		insecure bool
	}{
		{debugOnly, true},
		{`{"builtins": false, "skills": [], "auth": {"tokens": [{"name": "a", "token": "${TN_LISTEN_TOKEN}"}]}}`, false},
	} {
		srv, err := server.New(server.Options{ConfigPath: writeTemp(t, c.cfg), Listen: "0.0.0.0:0", MetricsListen: "-", Insecure: c.insecure, Workspace: t.TempDir(), Logger: quiet})
		if err != nil {
			t.Fatalf("%s insecure=%v: %v", c.cfg, c.insecure, err)
		}
		_ = srv.Close(context.Background())
	}
	// Loopback needs nothing.
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		srv, err := server.New(server.Options{ConfigPath: writeTemp(t, debugOnly), Listen: listen, MetricsListen: "-", Workspace: t.TempDir(), Logger: quiet})
		if err != nil {
			t.Fatalf("loopback %s: %v", listen, err)
		}
		_ = srv.Close(context.Background())
	}
}

// quiet discards the logs of servers a test only builds.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// writeTemp writes a config file for server.New and returns its path.
func writeTemp(t *testing.T, cfgJSON string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "toolnexus.json")
	if err := os.WriteFile(p, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
