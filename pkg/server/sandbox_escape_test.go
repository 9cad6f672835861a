package server_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// escapeKit is a server with TLS whose key, certificate and config file sit
// in directories the sandbox may read (sandbox.readPaths), so only the
// masks stand between a model's command and them.
type escapeKit struct {
	s       *served
	reg     pb.RegistryServiceClient
	src     pb.SourceServiceClient
	keyFile string
	status  *pb.Sandbox
}

func newEscapeKit(t *testing.T, extra string) *escapeKit {
	t.Helper()
	authority := newCA(t, "tn-sandbox")
	cert, key, _ := authority.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	if extra != "" {
		extra = ", " + extra
	}
	cfg := fmt.Sprintf(`{"debug": true, "skills": [], "limits": {"timeout": 60000},
		"server": {"tls": {"cert": %q, "key": %q}},
		"sandbox": {"readPaths": [".", %q]%s}}`, cert, key, filepath.Dir(key), extra)
	s := serve(t, cfg, nil)
	conn := s.dial(t, grpc.WithTransportCredentials(clientTLS(authority.Pool)))
	k := &escapeKit{s: s, reg: pb.NewRegistryServiceClient(conn), src: pb.NewSourceServiceClient(conn), keyFile: key}
	srcs, err := k.src.ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	k.status = srcs.GetSandbox()
	return k
}

// layer skips the test when ListSources says the layer is missing.
func (k *escapeKit) need(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		for _, l := range k.status.GetLayers() {
			if l.GetName() == name && !l.GetActive() {
				t.Skipf("ListSources says sandbox layer %s is missing here (%s); this attack is not run", name, l.GetDetail())
			}
		}
	}
}

// bash runs a command as a model would send it.
func (k *escapeKit) bash(t *testing.T, ctx context.Context, command string, timeoutMS int) *pb.ToolResult {
	t.Helper()
	args := fmt.Sprintf(`{"command": %q}`, command)
	if timeoutMS > 0 {
		args = fmt.Sprintf(`{"command": %q, "timeout": %d}`, command, timeoutMS)
	}
	resp, err := k.reg.Execute(ctx, &pb.ExecuteRequest{Name: "bash", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatalf("Execute bash: %v", err)
	}
	return resp.GetResult()
}

func (k *escapeKit) echo(t *testing.T) {
	t.Helper()
	resp, err := k.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"still":"serving"}`}})
	if err != nil || resp.GetResult().GetIsError() {
		t.Fatalf("the server stopped serving others: %v %v", err, resp.GetResult())
	}
}

// refused checks that the result carries the marker line of the refused
// step and the kernel's reason, for the model to read.
func refused(t *testing.T, r *pb.ToolResult, marker string, reasons ...string) {
	t.Helper()
	out := r.GetOutput()
	if !strings.Contains(out, marker) {
		t.Errorf("want %q in the result:\n%s", marker, out)
	}
	for _, reason := range reasons {
		if strings.Contains(out, reason) {
			return
		}
	}
	t.Errorf("no reason among %q in the result:\n%s", reasons, out)
}

func TestSandboxEscapesThroughExecute(t *testing.T) {
	t.Setenv("TOOLNEXUS_ESCAPE_SECRET", "hunter2")
	k := newEscapeKit(t, "")
	k.need(t, sandbox.LayerLandlock, sandbox.LayerPIDNS)
	ctx := context.Background()
	pid := strconv.Itoa(os.Getpid())

	t.Run("server environ", func(t *testing.T) {
		r := k.bash(t, ctx, "cat /proc/"+pid+"/environ; echo environ=$?", 0)
		refused(t, r, "environ=1", "Permission denied")
		if strings.Contains(r.GetOutput(), "hunter2") {
			t.Fatal("read the server's environment")
		}
	})
	t.Run("config file and TLS key", func(t *testing.T) {
		r := k.bash(t, ctx, "cat "+k.s.cfgPath+"; echo config=$?; cat "+k.keyFile+"; echo key=$?", 0)
		refused(t, r, "config=1", "Permission denied")
		refused(t, r, "key=1", "Permission denied")
		if strings.Contains(r.GetOutput(), "PRIVATE KEY") || strings.Contains(r.GetOutput(), `"server"`) {
			t.Fatalf("read a secret:\n%s", r.GetOutput())
		}
	})
	t.Run("write outside", func(t *testing.T) {
		out := filepath.Join(filepath.Dir(k.s.cfgPath), "planted")
		r := k.bash(t, ctx, "echo x > "+out+"; echo planted=$?; echo y > /usr/planted; echo usr=$?; echo ok > \"$TMPDIR/t\" && echo tmp=ok", 0)
		refused(t, r, "planted=1", "Permission denied")
		refused(t, r, "usr=1", "Permission denied", "Read-only")
		if !strings.Contains(r.GetOutput(), "tmp=ok") {
			t.Errorf("the private temp dir is not writable:\n%s", r.GetOutput())
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a file was planted outside the workspace")
		}
	})
	t.Run("kill the server", func(t *testing.T) {
		r := k.bash(t, ctx, "kill -9 "+pid+"; echo kill=$?", 0)
		refused(t, r, "kill=1", "No such process", "Operation not permitted")
		k.echo(t)
	})
	t.Run("metrics port with the network off", func(t *testing.T) {
		k.need(t, sandbox.LayerNetNS)
		port := strconv.Itoa(k.s.srv.MetricsAddr().(*net.TCPAddr).Port)
		r := k.bash(t, ctx, "exec 3<>/dev/tcp/127.0.0.1/"+port+"; echo connect=$?", 0)
		refused(t, r, "connect=1", "Operation not permitted", "Network is unreachable", "Connection refused")
	})
	t.Run("setsid sleep outlives the call", func(t *testing.T) {
		marker := "300." + pid
		r := k.bash(t, ctx, "setsid sleep "+marker+" >/dev/null 2>&1 & disown; echo started", 0)
		if r.GetIsError() || !strings.Contains(r.GetOutput(), "started") {
			t.Fatalf("%v", r)
		}
		if pids := processesWith(marker); len(pids) > 0 {
			t.Fatalf("setsid sleep survived the call: %v", pids)
		}
	})
	t.Run("fork bomb", func(t *testing.T) {
		k.need(t, sandbox.LayerProcesses)
		var wg sync.WaitGroup
		wg.Add(1)
		var r *pb.ToolResult
		go func() {
			defer wg.Done()
			// The shell stays (sleep) so the bomb runs until the
			// call's timeout; a bare bomb ends the moment its shell
			// returns, with the PID namespace.
			r = k.bash(t, ctx, `:(){ :|:& };:; sleep 30`, 3000)
		}()
		// The server serves others while the bomb runs.
		for i := 0; i < 5; i++ {
			k.echo(t)
		}
		wg.Wait()
		if !r.GetIsError() || !strings.Contains(r.GetOutput(), "timed out after 3000ms") {
			t.Fatalf("fork bomb: %v", r)
		}
		k.echo(t)
	})
}

func TestSandboxMemoryBombEndsWithinTheCall(t *testing.T) {
	t.Parallel()
	k := newEscapeKit(t, `"limits": {"memory": 268435456}`)
	r := k.bash(t, context.Background(), `x=$(head -c 600000000 /dev/zero | tr '\0' a); echo "len=${#x}"`, 20000)
	if !r.GetIsError() || strings.Contains(r.GetOutput(), "len=600000000") {
		t.Fatalf("memory bomb under 256 MiB: %v", r)
	}
	k.echo(t)
}

func TestSandboxNetworkOn(t *testing.T) {
	t.Parallel()
	k := newEscapeKit(t, `"network": true`)
	port := strconv.Itoa(k.s.srv.MetricsAddr().(*net.TCPAddr).Port)
	r := k.bash(t, context.Background(), "exec 3<>/dev/tcp/127.0.0.1/"+port+" && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -1 <&3", 0)
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "200") {
		t.Fatalf("network on, the metrics port: %v", r)
	}
}

func TestSandboxOtherSessionsWorkspace(t *testing.T) {
	t.Parallel()
	k := newEscapeKit(t, "")
	k.need(t, sandbox.LayerLandlock)
	inSession := func(id string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "toolnexus-session", id)
	}
	r := k.bash(t, inSession("alice"), "echo alice-secret > notes.txt && pwd", 0)
	if r.GetIsError() {
		t.Fatalf("%v", r)
	}
	aliceDir := strings.TrimSpace(r.GetOutput())
	r = k.bash(t, inSession("bob"), "cat "+aliceDir+"/notes.txt; echo read=$?; echo x > "+aliceDir+"/planted; echo write=$?", 0)
	// Not there at all when the helper hides the sessions' root; denied
	// by Landlock without it.
	refused(t, r, "read=1", "No such file or directory", "Permission denied")
	refused(t, r, "write=1", "No such file or directory", "Permission denied")
	if strings.Contains(r.GetOutput(), "alice-secret") {
		t.Fatal("one session read another's workspace")
	}
}

func TestSandboxRequiredRefusesToStart(t *testing.T) {
	restore := sandbox.DisableForTest(sandbox.LayerLandlock)
	defer restore()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"sandbox": {"mode": "required"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := server.New(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-", Workspace: filepath.Join(dir, "ws")})
	var ce *server.ConfigError
	if !errors.As(err, &ce) || ce.Key != "sandbox.mode" || !strings.Contains(ce.Msg, "landlock: turned off by a test") {
		t.Fatalf("err = %v", err)
	}
	if code := server.Main([]string{"--config", cfg, "--listen", "127.0.0.1:0", "--metrics-listen", "off", "--workspace", filepath.Join(dir, "ws")}); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
}

func TestListSourcesReportsTheSandbox(t *testing.T) {
	t.Parallel()
	k := newEscapeKit(t, "")
	st := k.status
	if st.GetMode() != "auto" || len(st.GetLayers()) < 8 || !strings.HasPrefix(st.GetSummary(), "sandbox auto: active: ") {
		t.Fatalf("%v", st)
	}
	for _, l := range st.GetLayers() {
		if !l.GetActive() && !strings.Contains(st.GetSummary(), l.GetName()+" ("+l.GetDetail()+")") {
			t.Errorf("missing layer %s not in the summary %q", l.GetName(), st.GetSummary())
		}
	}
}

var processesWith = testutil.ProcessesWith

// The sandbox helper that starts every command dies mid-call: the call
// gets a result the model can read, and the next call gets a new helper.
func TestSandboxHelperKilledMidCall(t *testing.T) {
	t.Parallel()
	k := newEscapeKit(t, "")
	k.need(t, sandbox.LayerUserNS, sandbox.LayerPIDNS)
	marker := "300." + strconv.Itoa(os.Getpid()) + "7"
	done := make(chan *pb.ToolResult, 1)
	go func() {
		done <- k.bash(t, context.Background(), "sleep "+marker+"; echo finished", 0)
	}()
	var helper string
	for helper == "" {
		select {
		case r := <-done:
			t.Fatalf("the call ended before the helper was found: %v", r)
		default:
		}
		for _, pid := range processesWith(marker) {
			b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
			if err != nil {
				continue
			}
			s := string(b)
			ppid := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[1]
			if cmd, _ := os.ReadFile(filepath.Join("/proc", ppid, "cmdline")); strings.HasPrefix(string(cmd), "toolnexus-sandbox-helper") {
				helper = ppid
			}
		}
		runtime.Gosched()
	}
	pid, _ := strconv.Atoi(helper)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !r.GetIsError() || strings.Contains(r.GetOutput(), "finished") {
		t.Fatalf("the call whose helper died: %v", r)
	}
	r = k.bash(t, context.Background(), "echo again", 0)
	if r.GetIsError() || strings.TrimSpace(r.GetOutput()) != "again" {
		t.Fatalf("the call after the helper died: %v", r)
	}
	if pids := processesWith(marker); len(pids) > 0 {
		t.Fatalf("the command outlived its helper: %v", pids)
	}
}
