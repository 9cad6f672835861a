package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// nginxConfig is the recipe deploy/ documents: gRPC to the replicas,
// consistent hashing on the toolnexus-session header, so a session's calls
// reach the replica that holds its files, and losing one replica moves
// only that replica's sessions.
const nginxConfig = nginxHead + `    upstream toolnexus {
        hash $http_toolnexus_session consistent;
%[3]s    }
    server {
        listen %[4]s http2;
        location / {
            grpc_pass grpc://toolnexus;
        }
    }
}
`

// nginxHead opens every config startNginxWith runs: the user line (%s),
// one worker, and the pid and every temp file in the test's directory
// (%[2]s), so nginx needs nothing of the machine's. A config goes on with
// its upstream and server blocks, and closes the http block.
const nginxHead = `%s
worker_processes 1;
pid %[2]s/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
`

// nginxPath finds nginx: on PATH, or where Debian's package puts it.
func nginxPath(t *testing.T) string {
	t.Helper()
	return testutil.Installed(t, "nginx", "the replicas-behind-a-load-balancer test", "nginx", "/usr/sbin/nginx")
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// startNginx runs nginx in the foreground in front of the replicas and
// stops it with the test.
func startNginx(t *testing.T, upstreams []string) string {
	t.Helper()
	addr, _ := startNginxWith(t, nginxConfig, upstreams, nil)
	return addr
}

// upstreamLines are an nginx upstream block's server lines.
func upstreamLines(addrs []string) string {
	var servers strings.Builder
	for _, u := range addrs {
		fmt.Fprintf(&servers, "        server %s;\n", u)
	}
	return servers.String()
}

// startNginxWith runs nginx with the config template tmpl (arguments: the
// user line, its directory, the gRPC upstream lines, the gRPC address, and
// when httpUpstreams is set the HTTP upstream lines and address) and
// returns the addresses it listens on.
func startNginxWith(t *testing.T, tmpl string, upstreams, httpUpstreams []string) (addr, httpAddr string) {
	t.Helper()
	bin := nginxPath(t)
	dir := t.TempDir()
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // the worker writes its temp files in dir, which only we may enter
	}
	addr = freeAddr(t)
	args := []any{user, dir, upstreamLines(upstreams), addr}
	if httpUpstreams != nil {
		httpAddr = freeAddr(t)
		args = append(args, upstreamLines(httpUpstreams), httpAddr)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(tmpl, args...)), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "error.log")
	// One process (no master and workers), so that it ends with the test
	// binary whatever happens: a worker would outlive a killed master.
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", logs, "-g", "daemon off; master_process off;")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := testutil.StartTied(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT) // graceful: the workers finish, then exit
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	// Ready when it accepts connections (or it failed to start).
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr, httpAddr
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logs)
			t.Fatalf("nginx exited: %v\n%s\n%s", err, out, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx never listened on %s", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sessionReplica is one toolnexus server with the builtins and a whoami
// tool naming it.
func sessionReplica(t *testing.T, name string) (addr string, stop func()) {
	t.Helper()
	whoami := tool.Must(tool.Native("whoami", func(context.Context, map[string]any) (any, error) { return name, nil },
		tool.WithDescription("Names the replica that answered.")))
	srv, _, stop := launch(t, `{"skills": [], "builtins": {"tools": {"webfetch": false}}}`, func(o *server.Options) {
		o.Native = []tool.Tool{whoami}
		o.MetricsListen = "-"
	})
	return srv.Addr().String(), stop
}

func TestSessionsStickToOneReplicaBehindNginx(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	const replicas, sessions, calls = 3, 100, 10
	addrs := make([]string, replicas)
	stops := map[string]func(){}
	for i := range replicas {
		name := fmt.Sprintf("replica-%d", i)
		var stop func()
		addrs[i], stop = sessionReplica(t, name)
		stops[name] = stop
	}
	lb := startNginx(t, addrs)
	conn, err := grpc.NewClient(lb, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := pb.NewRegistryServiceClient(conn)

	// call is Execute for the worker goroutines: a failure is reported with
	// Errorf (Fatal must not leave a goroutine other than the test's).
	call := func(ctx context.Context, name string, args string) *pb.ToolResult {
		resp, err := reg.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
		if err != nil {
			t.Errorf("Execute(%s) through nginx: %v", name, err)
			return &pb.ToolResult{IsError: true, Output: err.Error()}
		}
		return resp.GetResult()
	}
	// Each session's first call writes its file, the next ones ask who
	// answers, the last reads the file back.
	home := make([]string, sessions)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				ctx := inSession("", fmt.Sprintf("session-%03d", s))
				want := fmt.Sprintf("written by session %d in its first call", s)
				if r := call(ctx, "write", `{"path": "first.txt", "content": "`+want+`"}`); r.GetIsError() {
					t.Errorf("session %d: write: %s", s, r.GetOutput())
					continue
				}
				for c := 1; c < calls-1; c++ {
					who := call(ctx, "whoami", `{}`).GetOutput()
					if home[s] == "" {
						home[s] = who
					} else if who != home[s] {
						t.Errorf("session %d moved from %s to %s", s, home[s], who)
					}
				}
				if r := call(ctx, "read", `{"path": "first.txt"}`); r.GetOutput() != want {
					t.Errorf("session %d: last call reads %q", s, r.GetOutput())
				}
			}
		}()
	}
	for s := range sessions {
		work <- s
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		return
	}
	count := map[string]int{}
	for _, h := range home {
		count[h]++
	}
	t.Logf("sessions per replica: %v", count)
	if len(count) != replicas {
		t.Fatalf("the hash used %d of %d replicas: %v", len(count), replicas, count)
	}

	// One replica goes away: the sessions on the other two are untouched
	// (same replica, same files); the lost replica's sessions start empty
	// elsewhere.
	gone := home[0]
	stops[gone]()
	for s := range sessions {
		ctx := inSession("", fmt.Sprintf("session-%03d", s))
		r := execIn(t, ctx, reg, "read", map[string]any{"path": "first.txt"})
		who := execIn(t, ctx, reg, "whoami", map[string]any{}).GetOutput()
		switch {
		case home[s] != gone && (r.GetIsError() || who != home[s]):
			t.Errorf("session %d (on %s) after %s stopped: on %s, read %v %q", s, home[s], gone, who, r.GetIsError(), r.GetOutput())
		case home[s] == gone && (who == gone || !r.GetIsError()):
			t.Errorf("session %d of the stopped replica: on %s, read %q", s, who, r.GetOutput())
		}
	}
}
