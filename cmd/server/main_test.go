package main_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// buildServer compiles the real binary once per test.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolnexus-server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestConfigErrorsExit2NamingTheKey(t *testing.T) {
	bin := buildServer(t)
	dir := t.TempDir()
	cases := map[string]string{
		`{"mcpServer": {}}`:                         `mcpServer: unknown top-level key; did you mean "mcpServers"?`,
		`{"limits": {"timeout": -1}}`:               "limits.timeout",
		`{"server": {"listen": "nonsense"}}`:        "server.listen",
		`{"server": {"listen": "0.0.0.0:50051"}}`:   "server.listen",
		`{"debug": "yes"}`:                          "debug: must be true or false",
		`{"limits": {"tools": {"bash": {"x": 1}}}}`: "limits.tools.bash.x",
	}
	for cfg, want := range cases {
		path := filepath.Join(dir, "c.json")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config", path, "--metrics-listen", "off")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%s: err %v, want exit code 2", cfg, err)
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: stderr %q does not name %q", cfg, stderr.String(), want)
		}
	}
	// --check validates without serving.
	if out, err := exec.Command(bin, "--check").CombinedOutput(); err != nil || !strings.Contains(string(out), "config OK") {
		t.Errorf("--check on the embedded default: %v %s", err, out)
	}
	// --check with a deployment's flags refuses what its start would:
	// here a public listener without a credential, and sessions inside the
	// workspace the flag names.
	sessionsInside := filepath.Join(dir, "sessions.json")
	if err := os.WriteFile(sessionsInside, []byte(`{"sessions": {"root": "ws/.sessions"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for want, args := range map[string][]string{
		"server.listen": {"--check", "--listen", "0.0.0.0:50051"},
		"sessions.root": {"--check", "--config", sessionsInside, "--workspace", filepath.Join(dir, "ws")},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), want) || strings.Contains(string(out), "config OK") {
			t.Errorf("%v: %v %s, want exit 2 naming %s", args, err, out, want)
		}
	}
}

var servingLine = regexp.MustCompile(`msg="toolnexus serving" grpc=(\S+)`)

func TestServesDefaultConfigAndStopsOnSIGTERM(t *testing.T) {
	bin := buildServer(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--metrics-listen", "off", "--workspace", filepath.Join(dir, "ws"))
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	addr := ""
	for lines.Scan() {
		if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("server never said it was serving")
	}
	go io.Copy(io.Discard, stderr)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", h, err)
	}
	list, err := pb.NewRegistryServiceClient(conn).ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws")); err != nil {
		t.Errorf("workspace not created: %v", err)
	}
	t.Logf("default config serves %d tools", len(list.GetTools()))

	// SIGHUP reloads and keeps serving.
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.NewRegistryServiceClient(conn).ListTools(ctx, &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("after SIGHUP: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v, want 0", err)
	}
}
