package server_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

const nonRootMainEnv = "TN_NONROOT_MAIN_ARGS"

// nonRootUID is the unprivileged uid the server runs as in this test.
const nonRootUID = 4242

// TestSandboxAttacksWithANonRootServer runs the attacks of issue 31
// against the server binary running as an unprivileged uid (started by
// this root test process with that uid), over gRPC: the commands act as
// the server's own uid then, so a file the server owns in a readable
// directory is the target — chmod 4755, touch -d and setxattr are each
// refused by seccomp and leave it as it was; a root-only file is
// unreadable; another principal's session cannot be stat-ed or chmod-ed.
func TestSandboxAttacksWithANonRootServer(t *testing.T) {
	t.Parallel()
	if args := os.Getenv(nonRootMainEnv); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	if os.Geteuid() != 0 {
		t.Skip("starting the server as another uid needs root; CI runs as root")
	}
	dir := testutil.ReachableBySandbox(t, t.TempDir())
	host := filepath.Join(dir, "host")
	mine := filepath.Join(host, "mine")
	secret := filepath.Join(dir, "root-secret")
	// The server itself runs as nonRootUID from go test's 0700 build
	// directory: that uid must reach its own program.
	self := testutil.ReachableBySandbox(t, testutil.SandboxExecutable(t))
	cfg := filepath.Join(dir, "conf", "toolnexus.json")
	for _, d := range []string{host, filepath.Dir(cfg)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{mine: "server-owned\n", cfg: fmt.Sprintf(`{"skills": [], "builtins": {"tools": {"webfetch": false}},
		"auth": {"tokens": [{"name": "agent-a", "token": %q}, {"name": "agent-b", "token": %q}]},
		"sandbox": {"readPaths": [%q, %q, %q]}}`, tokA, tokB, host, dir, filepath.Dir(self))}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("root-only-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, host, mine, filepath.Dir(cfg), cfg} {
		if err := os.Chown(p, nonRootUID, nonRootUID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(self, "-test.run=^TestSandboxAttacksWithANonRootServer$")
	cmd.Env = append(os.Environ(), nonRootMainEnv+"=--config "+cfg+" --listen 127.0.0.1:0 --metrics-listen off --workspace "+filepath.Join(dir, "ws"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nonRootUID, Gid: nonRootUID}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), " grpc="); i >= 0 {
				addr <- strings.Fields(sc.Text()[i+len(" grpc="):])[0]
			}
		}
		close(addr)
	}()
	var target string
	select {
	case target = <-addr:
	case <-time.After(60 * time.Second): // a guard against a wedged child only
	}
	if target == "" {
		t.Fatal("the non-root server did not start")
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := pb.NewRegistryServiceClient(conn)
	before := snapshot(t, mine)

	r := execIn(t, inSession(tokA, "plans"), reg, "bash", map[string]any{"command": fmt.Sprintf(`id -u; echo a-secret > notes.txt; pwd
chmod 4755 %[1]s; echo chmod=$?; touch -d 2001-01-01 %[1]s; echo touch=$?; cat %[2]s; echo cat=$?
%[3]s=%[1]s %[4]s -test.run='^TestSandboxCommandsCannotActAsTheServersUID$'
chmod +x notes.txt; echo chmodown=$?`, mine, secret, xattrAttackEnv, self)})
	out := r.GetOutput()
	t.Logf("agent-a:\n%s", out)
	for _, step := range []string{"chmod=1", "touch=1", "cat=1", "setxattr=operation not permitted"} {
		if !strings.Contains(out, step) {
			t.Errorf("want %q (refused) in the result", step)
		}
	}
	if strings.Contains(out, "root-only-77") {
		t.Error("read a root-only file")
	}
	before.unchanged(t)

	lines := strings.Split(strings.TrimSpace(out), "\n")
	sessionDir := lines[1]
	r = execIn(t, inSession(tokB, "other"), reg, "bash", map[string]any{"command": fmt.Sprintf(
		`stat %[1]s; echo stat=$?; chmod 777 %[1]s; echo chmod=$?; ls %[2]s; echo ls=$?`, sessionDir, filepath.Dir(filepath.Dir(sessionDir)))})
	out = r.GetOutput()
	for _, step := range []string{"stat=1", "chmod=1"} {
		if !strings.Contains(out, step) {
			t.Errorf("agent-b: want %q (refused) in:\n%s", step, out)
		}
	}
	if strings.Contains(out, "\nu-agent-a\n") { // a line of ls's listing
		t.Errorf("agent-b sees agent-a's sessions:\n%s", out)
	}
}
