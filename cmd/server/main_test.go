package main_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
		`{"server": {"gcHeapFloorMiB": -5}}`:        "server.gcHeapFloorMiB",
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

var metricsLine = regexp.MustCompile(`msg="toolnexus serving" grpc=\S+ metrics=(\S+)`)

// startWithMetrics runs the binary on cfg and returns its metrics address.
func startWithMetrics(t *testing.T, bin, cfg string, env ...string) (*exec.Cmd, string, *strings.Builder) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--workspace", filepath.Join(dir, "ws"))
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	log := &strings.Builder{}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if m := metricsLine.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return cmd, m[1], log
		}
	}
	t.Fatalf("server never said it was serving:\n%s", log)
	return nil, "", nil
}

// gauge reads one unlabelled sample from the server's /metrics.
func gauge(t *testing.T, addr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("%s not in /metrics", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The heap floor is process-wide, so it is the binary's business: the real
// process shows it through the Go collector's own series, a reload moves
// it, and an operator's GOGC wins over it.
func TestHeapFloorSetsTheCollectorsGoal(t *testing.T) {
	bin := buildServer(t)
	const floor = 48 << 20
	cmd, addr, _ := startWithMetrics(t, bin, `{"builtins": false, "server": {"gcHeapFloorMiB": 48}}`)
	// On a heap of a few MiB the runtime's 4 MiB minimum, scaled by GOGC,
	// reaches the floor first: 48 MiB is GOGC=1200.
	if p := gauge(t, addr, "go_gc_gogc_percent"); p != 1200 {
		t.Errorf("go_gc_gogc_percent = %v with a 48 MiB floor, want 1200", p)
	}
	if g := gauge(t, addr, "go_memstats_next_gc_bytes"); g < floor || g > floor*1.2 {
		t.Errorf("go_memstats_next_gc_bytes (the heap goal) = %.1f MiB, want the 48 MiB floor", g/(1<<20))
	}

	// A reload that sets 0 gives the collector back its own pacing.
	path := cmd.Args[2]
	if err := os.WriteFile(path, []byte(`{"builtins": false, "server": {"gcHeapFloorMiB": 0}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gauge(t, addr, "go_gc_gogc_percent") != 100 {
		if time.Now().After(deadline) {
			t.Fatal("go_gc_gogc_percent did not return to 100 after a reload to gcHeapFloorMiB 0")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// GOGC in the environment is the operator's choice: left alone, and said.
	_, addr, log := startWithMetrics(t, bin, `{"builtins": false, "server": {"gcHeapFloorMiB": 48}}`, "GOGC=150")
	if p := gauge(t, addr, "go_gc_gogc_percent"); p != 150 {
		t.Errorf("go_gc_gogc_percent = %v with GOGC=150 set, want 150", p)
	}
	if !strings.Contains(log.String(), "GOGC is set: server.gcHeapFloorMiB is not applied") {
		t.Errorf("no log line says the floor is not applied:\n%s", log)
	}
}
