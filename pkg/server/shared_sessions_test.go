package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// Replicas sharing one sessions root (sessions.shared) are real server
// processes: this test binary re-run as server.Main, one per replica, all
// given the same directory as the volume every Kubernetes pod would mount.

// replicaArgsEnv carries a replica's command line to the re-run binary.
const replicaArgsEnv = "TN_SHARED_REPLICA_ARGS"

// runReplicaMain is the first line of each test that starts replicas: in
// a replica it serves and exits.
func runReplicaMain() {
	if args := os.Getenv(replicaArgsEnv); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
}

// replicaProc is one server process.
type replicaProc struct {
	name, grpc, mcp string
	cfg             string // the config file
	cmd             *exec.Cmd
	mu              sync.Mutex
	log             bytes.Buffer
	exited          chan struct{}
}

func (r *replicaProc) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

// sharedConfig is a replica's config: the builtins in a workspace of its
// own, sessions on the shared root, and an environment variable naming
// the replica so a bash call can say where it ran.
func sharedConfig(name, root, sessions string) string {
	return fmt.Sprintf(`{"debug": true, "skills": [],
  "builtins": {"tools": {"webfetch": false}, "bash": {"env": ["REPLICA=%s"]}},
  "sessions": {"shared": true, "root": %q %s}}`, name, root, sessions)
}

// startReplicaProc starts replica name of test testName on the shared
// root, with extra keys for the sessions section, and waits until it
// serves. It is stopped (SIGTERM) when the test ends, unless killed.
func startReplicaProc(t *testing.T, testName, name, root, sessions string) *replicaProc {
	t.Helper()
	return startReplicaWithConfig(t, testName, name, sharedConfig(name, root, sessions))
}

// startReplicaWithConfig starts replica name of test testName serving the
// config text cfgText (written to r.cfg, where a test may change it), and
// waits until it serves.
func startReplicaWithConfig(t *testing.T, testName, name, cfgText string) *replicaProc {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf("--config %s --workspace %s --listen 127.0.0.1:0 --metrics-listen off --mcp-listen 127.0.0.1:0",
		cfg, filepath.Join(dir, "ws"))
	r := &replicaProc{name: name, cfg: cfg, exited: make(chan struct{})}
	r.cmd = exec.Command(os.Args[0], "-test.run=^"+testName+"$")
	r.cmd.Env = append(os.Environ(), replicaArgsEnv+"="+args)
	// Its own session, with the stdio MCP servers it starts (each in a
	// process group of its own): a replica killed with SIGKILL cannot stop
	// them, the test does.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.StartTied(r.cmd); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.log.WriteString(line + "\n")
			if r.grpc == "" && strings.Contains(line, "toolnexus serving") {
				r.grpc, r.mcp = logField(line, "grpc"), logField(line, "mcp")
				close(ready)
			}
			r.mu.Unlock()
		}
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		<-r.exited
		testutil.KillSession(r.cmd.Process.Pid) // whatever it left behind
	})
	select {
	case <-ready:
	case <-r.exited:
		t.Fatalf("replica %s exited:\n%s", name, r.logText())
	}
	return r
}

// logField reads key=value from a text log line.
func logField(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	return strings.Fields(line[i+len(key)+2:])[0]
}

// kill ends the replica with SIGKILL: no drain, no cleanup.
func (r *replicaProc) kill(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.exited
}

// nginxRoundRobin is the recipe for a shared root: no hash, plain round
// robin, each request to the next replica; a replica that refuses the
// connection is skipped (grpc_next_upstream's default, "error timeout").
const nginxRoundRobin = nginxHead + `    upstream toolnexus {
%[3]s    }
    upstream toolnexus_mcp {
%[5]s    }
    server {
        listen %[4]s http2;
        location / { grpc_pass grpc://toolnexus; }
    }
    server {
        listen %[6]s;
        location / {
            proxy_pass http://toolnexus_mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
        }
    }
}
`

func dialGRPC(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestSharedRootServesASessionFromEveryReplicaBehindRoundRobin(t *testing.T) {
	t.Parallel()
	runReplicaMain()
	nginxPath(t)
	root := t.TempDir()
	var reps []*replicaProc
	var grpcAddrs, mcpAddrs []string
	for i := range 3 {
		r := startReplicaProc(t, t.Name(), fmt.Sprintf("r%d", i), root, "")
		reps = append(reps, r)
		grpcAddrs, mcpAddrs = append(grpcAddrs, r.grpc), append(mcpAddrs, r.mcp)
	}
	lb, _ := startNginxWith(t, nginxRoundRobin, grpcAddrs, mcpAddrs)
	reg := pb.NewRegistryServiceClient(dialGRPC(t, lb))
	ctx := inSession("", "agent-1")

	// The agent's model of its workspace: every read must see the last
	// write, whichever replica serves it.
	files := map[string]string{}
	served := map[string]int{}
	calls := 0
	call := func(name string, args any) *pb.ToolResult {
		t.Helper()
		calls++
		r := execIn(t, ctx, reg, name, args)
		if r.GetIsError() {
			t.Fatalf("call %d (%s %v): %s", calls, name, args, r.GetOutput())
		}
		return r
	}
	step := func(i int) {
		path := fmt.Sprintf("notes/f%d.txt", i%7)
		call("write", map[string]any{"path": path, "content": fmt.Sprintf("v%d\n", i)})
		call("edit", map[string]any{"path": path, "oldString": fmt.Sprintf("v%d", i), "newString": fmt.Sprintf("e%d", i)})
		files[path] = fmt.Sprintf("e%d\n", i)
		other := fmt.Sprintf("notes/f%d.txt", (i*3)%7)
		if want, ok := files[other]; ok {
			if got := call("read", map[string]any{"path": other}).GetOutput(); got != want {
				t.Fatalf("call %d: read %s = %q, the last write was %q", calls, other, got, want)
			}
		} else {
			call("read", map[string]any{"path": path})
		}
		out := call("bash", map[string]any{"command": `cat ` + path + `; printf %s "$REPLICA"`}).GetOutput()
		want := files[path]
		if !strings.HasPrefix(out, want) {
			t.Fatalf("call %d: bash cat %s = %q, the last write was %q", calls, path, out, want)
		}
		served[strings.TrimPrefix(out, want)]++
	}
	const steps = 75 // four calls each: 300 calls
	for i := range steps / 2 {
		step(i)
	}

	// A call in flight on r1, sent to it directly so the test knows where
	// it runs; it says when it has started by a file in the session.
	inflight := make(chan error, 1)
	go func() {
		c := pb.NewRegistryServiceClient(dialGRPC(t, reps[1].grpc))
		_, err := c.Execute(ctx, &pb.ExecuteRequest{Name: "bash",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"command": "touch started; sleep 60", "timeout": 120000}`}})
		inflight <- err
	}()
	started := filepath.Join(root, "anonymous", "agent-1", "started")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the in-flight call never started")
		}
		time.Sleep(5 * time.Millisecond) // polling the volume for the marker; no timing is asserted
	}
	reps[1].kill(t)
	if err := <-inflight; err == nil {
		t.Error("the call in flight on the killed replica succeeded")
	}

	// The agent goes on: every call lands on r0 or r2, every file is there.
	for path, want := range files {
		if got := call("read", map[string]any{"path": path}).GetOutput(); got != want {
			t.Fatalf("after kill -9 of r1: read %s = %q, want %q", path, got, want)
		}
	}
	calls -= len(files) // the check above is not part of the 300
	before := served["r1"]
	for i := steps / 2; i < steps; i++ {
		step(i)
	}
	if calls != 4*steps {
		t.Fatalf("%d calls; want %d", calls, 4*steps)
	}
	t.Logf("bash calls per replica: %v", served)
	if len(served) != 3 || served["r0"] == 0 || served["r2"] == 0 || before == 0 {
		t.Errorf("round robin used %v; want every replica before the kill", served)
	}
	if served["r1"] != before {
		t.Errorf("the killed replica served %d calls after its death", served["r1"]-before)
	}
	list, err := pb.NewSessionServiceClient(dialGRPC(t, reps[2].grpc)).ListSessions(context.Background(), &pb.ListSessionsRequest{})
	if err != nil || len(list.GetSessions()) != 1 || list.GetSessions()[0].GetId() != "agent-1" {
		t.Errorf("r2 lists %v, %v", list.GetSessions(), err)
	}
}

func TestSharedQuotaHoldsAcrossReplicaProcesses(t *testing.T) {
	t.Parallel()
	runReplicaMain()
	const maxBytes, size = 10000, 500
	root := t.TempDir()
	var clients []pb.RegistryServiceClient
	for i := range 2 {
		r := startReplicaProc(t, t.Name(), fmt.Sprintf("r%d", i), root, fmt.Sprintf(`, "maxBytes": %d`, maxBytes))
		clients = append(clients, pb.NewRegistryServiceClient(dialGRPC(t, r.grpc)))
	}
	ctx := inSession("", "quota")
	content := strings.Repeat("x", size)
	var admitted, refused atomic.Int32
	var wg sync.WaitGroup
	for ri, c := range clients {
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range 20 {
					args := fmt.Sprintf(`{"path": "r%d-w%d-%d.bin", "content": %q}`, ri, w, n, content)
					resp, err := c.Execute(ctx, &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
					switch {
					case err != nil:
						t.Errorf("Execute: %v", err)
					case !resp.GetResult().GetIsError():
						admitted.Add(1)
					case strings.Contains(resp.GetResult().GetOutput(), "sessions.maxBytes"):
						refused.Add(1)
					default:
						t.Errorf("write failed otherwise: %s", resp.GetResult().GetOutput())
					}
				}
			}()
		}
	}
	wg.Wait()
	var onDisk int64
	_ = filepath.WalkDir(filepath.Join(root, "anonymous", "quota"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				onDisk += fi.Size()
			}
		}
		return nil
	})
	t.Logf("120 writes of %d bytes through two replicas: %d admitted, %d refused, %d bytes on disk", size, admitted.Load(), refused.Load(), onDisk)
	if onDisk > maxBytes || admitted.Load() != maxBytes/size {
		t.Errorf("%d bytes on disk after %d admitted writes; the quota is %d", onDisk, admitted.Load(), maxBytes)
	}
}

func TestSharedIdleCleanupSparesACallOnAnotherReplica(t *testing.T) {
	t.Parallel()
	runReplicaMain()
	root := t.TempDir()
	// Idle after 300 ms; each janitor looks every 75 ms.
	busy := startReplicaProc(t, t.Name(), "busy", root, `, "idleTimeout": 300`)
	other := startReplicaProc(t, t.Name(), "other", root, `, "idleTimeout": 300`)
	ctx := inSession("", "long-call")
	// The call writes a file, then runs for two seconds on one replica
	// while the other's janitor looks some 25 times, then reads its file.
	r := execIn(t, ctx, pb.NewRegistryServiceClient(dialGRPC(t, busy.grpc)), "bash",
		map[string]any{"command": "echo kept > f; sleep 2; cat f"})
	if r.GetIsError() || r.GetOutput() != "kept\n" {
		t.Fatalf("the long call: %v %q (its workspace was removed under it?)", r.GetIsError(), r.GetOutput())
	}
	if strings.Contains(other.logText()+busy.logText(), "session deleted") {
		t.Fatalf("a session was deleted while its call ran:\n%s\n%s", other.logText(), busy.logText())
	}
	// Idle now: exactly one of the two removes it.
	sc := pb.NewSessionServiceClient(dialGRPC(t, other.grpc))
	for deadline := time.Now().Add(30 * time.Second); ; {
		list, err := sc.ListSessions(context.Background(), &pb.ListSessionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.GetSessions()) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session was never removed: %v", list.GetSessions())
		}
		time.Sleep(20 * time.Millisecond) // waiting for the janitors; no timing is asserted
	}
	// Each removal is logged just after it; once both replicas have
	// exited, every line they wrote has been read.
	for _, r := range []*replicaProc{busy, other} {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		<-r.exited
	}
	deleted := strings.Count(busy.logText(), "session deleted") + strings.Count(other.logText(), "session deleted")
	if deleted != 1 {
		t.Errorf("the session was deleted %d times; want once", deleted)
	}
	if _, err := os.Stat(filepath.Join(root, "anonymous", "long-call")); !os.IsNotExist(err) {
		t.Errorf("its workspace is still there: %v", err)
	}
}
