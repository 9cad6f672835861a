package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

// inSession, execIn and sessionIDs are the in-process rig's (the
// sessions' protocol tests moved to internal/core).
var (
	inSession  = inproc.InSession
	execIn     = inproc.ExecIn
	sessionIDs = inproc.SessionIDs
)

const (
	tokA = testutil.TokA
	tokB = testutil.TokB
	tokO = testutil.TokO
)

// twoPrincipals serves the builtins to agent-a, agent-b and the admin ops.
func twoPrincipals(t *testing.T, extra string) (*served, *grpc.ClientConn) {
	t.Helper()
	testutil.SetTwoPrincipalsEnv(t)
	s := serve(t, testutil.TwoPrincipalsConfig(extra), nil)
	return s, s.dial(t)
}

func TestSessionsSurviveReloadAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	ws := filepath.Join(dir, "ws")
	write := func(text string) {
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"skills": [], "sessions": {"idleTimeout": 3600000}}`)
	run := func() (*fixture, func()) {
		srv, stopServer := servertest.Start(t, server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", Workspace: ws,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		conn := (&served{srv: srv}).dial(t)
		return &fixture{srv: srv, conn: conn, reg: pb.NewRegistryServiceClient(conn)}, func() { stopServer(); conn.Close() }
	}
	f, stop := run()
	if r := execIn(t, inSession("", "keep"), f.reg, "write", map[string]any{"path": "k.txt", "content": "kept"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	write(`{"skills": [], "sessions": {"idleTimeout": 7200000, "maxBytes": 5000}}`)
	if _, err := f.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := execIn(t, inSession("", "keep"), f.reg, "read", map[string]any{"path": "k.txt"}); r.GetOutput() != "kept" {
		t.Fatalf("after a reload: %q", r.GetOutput())
	}
	stop()

	f, stop = run()
	defer stop()
	if got := sessionIDs(t, context.Background(), f.conn); strings.Join(got, ",") != "anonymous/keep" {
		t.Fatalf("after a restart ListSessions = %v", got)
	}
	if r := execIn(t, inSession("", "keep"), f.reg, "read", map[string]any{"path": "k.txt"}); r.GetOutput() != "kept" {
		t.Fatalf("after a restart: %q", r.GetOutput())
	}
}

// sessions.root moves the sessions; one inside the workspace is refused
// at start with exit 2 naming the key, and an old .sessions left in the
// workspace is named in a warning.
func TestSessionsRootConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := serve(t, `{"skills": [], "builtins": {"tools": {"webfetch": false}}, "sessions": {"root": "`+filepath.Join(dir, "elsewhere")+`"}}`, nil)
	reg := pb.NewRegistryServiceClient(s.dial(t))
	if r := execIn(t, inSession("", "moved"), reg, "write", map[string]any{"path": "f.txt", "content": "x"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere", "anonymous", "moved", "f.txt")); err != nil {
		t.Fatalf("sessions.root not used: %v", err)
	}

	for _, root := range []string{"ws/sessions", "ws", "."} {
		cfgDir := t.TempDir()
		cfg := filepath.Join(cfgDir, "c.json")
		if err := os.WriteFile(cfg, []byte(`{"skills": [], "sessions": {"root": "`+root+`"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-",
			Workspace: filepath.Join(cfgDir, "ws"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		var ce *server.ConfigError
		if err == nil {
			_ = srv.Close(context.Background())
		}
		if !errors.As(err, &ce) || ce.Key != "sessions.root" {
			t.Errorf("sessions.root %q: %v; want a config error naming sessions.root", root, err)
		}
	}

	var logs strings.Builder
	var mu sync.Mutex
	cfgDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgDir, "ws", builtin.SessionsDir, "anonymous", "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "c.json")
	if err := os.WriteFile(cfg, []byte(`{"skills": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-",
		Workspace: filepath.Join(cfgDir, "ws"), Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.Close(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "old sessions directory") {
		t.Errorf("no warning about the old sessions directory: %s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
