package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// runMainEnv makes the test binary act as the example's main, so the process
// test runs the real program without a separate go build.
const runMainEnv = "TOOLNEXUS_EXAMPLE_RUN_MAIN"

func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

const noDefaults = `{"builtins": false, "skills": []}`

func writeConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "toolnexus.json")
	if err := os.WriteFile(p, []byte(noDefaults), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func dial(t *testing.T, addr string) pb.RegistryServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewRegistryServiceClient(conn)
}

func execute(t *testing.T, c pb.RegistryServiceClient, name, args string) *pb.ToolResult {
	t.Helper()
	resp, err := c.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatalf("Execute(%s): %v", name, err)
	}
	return resp.GetResult()
}

// TestToolsInProcess serves tools() the way server.Main does and calls them
// over gRPC.
func TestToolsInProcess(t *testing.T) {
	srv, stop := servertest.Start(t, server.Options{ConfigPath: writeConfig(t), Listen: "127.0.0.1:0", MetricsListen: "-",
		Workspace: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Native: tools()})
	defer stop()
	c := dial(t, srv.Addr().String())

	list, err := c.ListTools(context.Background(), &pb.ListToolsRequest{Sources: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.GetTools() {
		names = append(names, tl.GetName())
	}
	if got := strings.Join(names, ","); got != "ticket_status,unit_convert" {
		t.Fatalf("tools with source acme = %s, want ticket_status,unit_convert", got)
	}
	schema, _ := json.Marshal(list.GetTools()[1].GetInputSchema().AsMap())
	for _, want := range []string{`"required":["value","from","to"]`, `"additionalProperties":false`, `"description":"The quantity to convert"`, `"value":{"description":"The quantity to convert","type":"number"}`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("unit_convert schema %s lacks %s", schema, want)
		}
	}

	if r := execute(t, c, "unit_convert", `{"value":10,"from":"km","to":"mi"}`); r.GetIsError() || r.GetOutput() != `{"value":6.2137,"unit":"mi"}` {
		t.Errorf("unit_convert: %v %q, want ok {\"value\":6.2137,\"unit\":\"mi\"}", r.GetIsError(), r.GetOutput())
	}
	if r := execute(t, c, "unit_convert", `{"value":1,"from":"km","to":"parsec"}`); !r.GetIsError() || r.GetOutcome() != pb.Outcome_OUTCOME_TOOL_ERROR ||
		r.GetOutput() != `unknown unit "parsec" in to; use one of ft, km, m, mi` {
		t.Errorf("bad unit: %v %v %q", r.GetIsError(), r.GetOutcome(), r.GetOutput())
	}
	if r := execute(t, c, "unit_convert", `{"value":"ten","from":"km","to":"mi"}`); r.GetOutcome() != pb.Outcome_OUTCOME_INVALID_ARGUMENTS || !strings.Contains(r.GetOutput(), "value") {
		t.Errorf("wrong argument type: %v %q, want invalid arguments naming the field", r.GetOutcome(), r.GetOutput())
	}
	if r := execute(t, c, "ticket_status", `{"id":"T-9"}`); !r.GetIsError() || r.GetOutput() != `ticket "T-9" not found; known tickets: T-1, T-2` {
		t.Errorf("unknown ticket: %v %q", r.GetIsError(), r.GetOutput())
	}
}

// TestMainProcess runs the example program itself: it serves, answers a
// call, and exits 0 on SIGTERM.
func TestMainProcess(t *testing.T) {
	// A bound for a wedged child, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "--config", writeConfig(t), "--listen", "127.0.0.1:0",
		"--metrics-listen", "off", "--workspace", t.TempDir(), "--log-format", "json")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The server logs its bound address once it serves.
	lines := bufio.NewScanner(stderr)
	var addr string
	for addr == "" && lines.Scan() {
		var rec struct{ Msg, Grpc string }
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec.Msg == "toolnexus serving" {
			addr = rec.Grpc
		}
	}
	if addr == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the program ended without logging \"toolnexus serving\"")
	}
	drained := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stderr); close(drained) }()

	if r := execute(t, dial(t, addr), "ticket_status", `{"id":"T-1"}`); r.GetIsError() || r.GetOutput() != "open: login page times out under load" {
		t.Errorf("ticket_status T-1: %v %q", r.GetIsError(), r.GetOutput())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; want exit 0", err)
	}
}
