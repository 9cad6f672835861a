package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// xattrAttackEnv makes this test binary, run by a model's command in the
// sandbox, try to set a user.* xattr on the file the variable names and
// print the outcome.
const xattrAttackEnv = "TN_XATTR_ATTACK"

// hostFile is a root-owned file outside every workspace and what it looked
// like before the attacks.
type hostFile struct {
	path  string
	mode  os.FileMode
	mtime syscall.Timespec
	uid   uint32
}

func snapshot(t *testing.T, path string) hostFile {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	return hostFile{path: path, mode: fi.Mode(), mtime: st.Mtim, uid: st.Uid}
}

func (h hostFile) unchanged(t *testing.T) {
	t.Helper()
	now := snapshot(t, h.path)
	if now.mode != h.mode || now.mtime != h.mtime || now.uid != h.uid {
		t.Errorf("%s changed: mode %v → %v, mtime %v → %v, uid %d → %d", h.path, h.mode, now.mode, h.mtime, now.mtime, h.uid, now.uid)
	}
	if n, err := unix.Listxattr(h.path, make([]byte, 256)); err == nil && n > 0 {
		t.Errorf("%s gained extended attributes", h.path)
	}
}

// TestSandboxCommandsCannotActAsTheServersUID is the attack of issue 31,
// made as a hostile model makes it, through Execute and the real bash
// tool, with the server running as root (as CI runs): a root-owned binary
// and files in a directory the sandbox may read (sandbox.readPaths, as
// /usr/local/bin and /etc are). chmod 4755, touch -d, setxattr and chown
// each fail and leave the file as it was; a root-only 0600 file stays
// unreadable; the command is not root on the host.
func TestSandboxCommandsCannotActAsTheServersUID(t *testing.T) {
	t.Parallel()
	if target := os.Getenv(xattrAttackEnv); target != "" {
		err := unix.Setxattr(target, "user.owned", []byte("yes"), 0)
		fmt.Printf("setxattr=%v\n", err)
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("the attack needs a root server; CI runs as root")
	}
	host := t.TempDir()
	if err := os.Chmod(host, 0o755); err != nil {
		t.Fatal(err)
	}
	idBin, err := os.ReadFile("/usr/bin/id")
	if err != nil {
		t.Skip("no /usr/bin/id to copy")
	}
	xid := filepath.Join(host, "x-id")
	secret := filepath.Join(host, "secret")
	stamp := filepath.Join(host, "stamp")
	for path, f := range map[string]struct {
		data []byte
		mode os.FileMode
	}{xid: {idBin, 0o755}, secret: {[]byte("root-only-4f1c\n"), 0o600}, stamp: {[]byte("x"), 0o644}} {
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	self := testutil.SandboxExecutable(t)
	k := newEscapeKit(t, fmt.Sprintf(`"readPaths": [%q, %q]`, host, filepath.Dir(self)))
	k.need(t, sandbox.LayerUserNS, sandbox.LayerLandlock)
	before := map[string]hostFile{}
	for _, p := range []string{xid, secret, stamp, host} {
		before[p] = snapshot(t, p)
	}
	ctx := context.Background()

	r := k.bash(t, ctx, fmt.Sprintf(`id -u; chmod 4755 %[1]s; echo chmod=$?; chmod 777 %[4]s; echo chmoddir=$?
touch -d 2001-01-01 %[2]s; echo touch=$?; touch %[2]s; echo touchnow=$?
chown 0:0 %[2]s; echo chown=$?; cat %[3]s; echo cat=$?
%[5]s=%[2]s %[6]s -test.run='^TestSandboxCommandsCannotActAsTheServersUID$'`, xid, stamp, secret, host, xattrAttackEnv, self), 0)
	out := r.GetOutput()
	t.Logf("attack output:\n%s", out)
	if strings.HasPrefix(strings.TrimSpace(out), "0\n") {
		t.Error("the command ran as uid 0")
	}
	for _, step := range []string{"chmod=1", "chmoddir=1", "touch=1", "touchnow=1", "chown=1", "cat=1"} {
		if !strings.Contains(out, step) {
			t.Errorf("want %q (refused) in the result", step)
		}
	}
	if strings.Contains(out, "root-only-4f1c") {
		t.Error("read a root-only 0600 file")
	}
	if !strings.Contains(out, "setxattr=") || strings.Contains(out, "setxattr=<nil>") {
		t.Error("setxattr on a root-owned file was not refused")
	}
	for _, h := range before {
		h.unchanged(t)
	}
	if st := snapshot(t, xid); st.mode&os.ModeSetuid != 0 {
		t.Fatal("the root binary became setuid")
	}
	k.echo(t)
}

// TestSandboxWorkspaceStaysUsable: with the commands acting as an
// unprivileged uid, what the file tools write a command can change
// (chmod +x, touch, append, delete), what a command makes the file tools
// can read and rewrite, and a command's files are owned by the sandbox's
// uid, not root.
func TestSandboxWorkspaceStaysUsable(t *testing.T) {
	t.Parallel()
	k := newEscapeKit(t, "")
	k.need(t, sandbox.LayerUserNS)
	ctx := context.Background()
	exec := func(name string, args map[string]any) string {
		t.Helper()
		r := execIn(t, ctx, k.reg, name, args)
		if r.GetIsError() {
			t.Fatalf("%s: %s", name, r.GetOutput())
		}
		return r.GetOutput()
	}
	exec("write", map[string]any{"path": "sub/run.sh", "content": "echo ran\n"})
	out := exec("bash", map[string]any{"command": "chmod +x sub/run.sh && ./sub/run.sh && touch sub/run.sh && echo more >> sub/run.sh && mkdir -p made && echo mine > made/f && stat -c %u made/f"})
	if !strings.Contains(out, "ran") {
		t.Fatalf("bash could not use a file the write tool made:\n%s", out)
	}
	if os.Geteuid() == 0 && !strings.Contains(out, fmt.Sprint(sandbox.DefaultCommandID)) {
		t.Errorf("a command's file is not owned by the sandbox's uid:\n%s", out)
	}
	exec("edit", map[string]any{"path": "made/f", "oldString": "mine", "newString": "edited"})
	if got := exec("read", map[string]any{"path": "made/f"}); !strings.Contains(got, "edited") {
		t.Fatalf("read after edit: %s", got)
	}
	if out := exec("bash", map[string]any{"command": "echo again >> made/f && rm sub/run.sh && cat made/f"}); !strings.Contains(out, "again") {
		t.Fatalf("bash could not change a file the edit tool rewrote:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(k.s.cfgPath), "ws", "sub", "run.sh")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command could not delete a file the write tool made: %v", err)
	}
}

// TestSandboxSessionsHiddenFromOtherPrincipals: agent-b's bash, in its own
// session and without one, tries what issue 31 found possible against
// agent-a's session — stat it, list the sessions' root, chmod 000 a file
// and 777 the directory, touch it — by its real path on the host. Each
// fails (nothing is there to find) and agent-a's files are as they were;
// agent-a's own bash still sees and changes them.
func TestSandboxSessionsHiddenFromOtherPrincipals(t *testing.T) {
	s, conn := twoPrincipals(t, "")
	reg := pb.NewRegistryServiceClient(conn)
	k := &escapeKit{s: s, reg: reg}
	srcs, err := pb.NewSourceServiceClient(conn).ListSources(bearer(tokO), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	k.status = srcs.GetSandbox()
	k.need(t, sandbox.LayerUserNS, sandbox.LayerPIDNS, sandbox.LayerLandlock)

	a := inSession(tokA, "plans")
	if r := execIn(t, a, reg, "bash", map[string]any{"command": "echo a-secret > notes.txt && chmod 640 notes.txt"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(s.cfgPath), "ws.sessions", "*", "plans", "notes.txt"))
	if len(matches) != 1 {
		t.Fatalf("agent-a's session file not found on disk: %v", matches)
	}
	file, sessionDir := matches[0], filepath.Dir(matches[0])
	root := filepath.Dir(filepath.Dir(sessionDir))
	before := []hostFile{snapshot(t, file), snapshot(t, sessionDir)}

	attack := fmt.Sprintf(`stat %[1]s; echo statdir=$?; stat %[2]s; echo statfile=$?
ls %[3]s; echo ls=$?; ls %[3]s/*; echo lsall=$?
chmod 000 %[2]s; echo chmodfile=$?; chmod 777 %[1]s; echo chmoddir=$?; touch %[2]s; echo touch=$?`, sessionDir, file, root)
	for name, ctx := range map[string]context.Context{"agent-b in a session": inSession(tokB, "other"), "agent-b without a session": bearer(tokB)} {
		t.Run(name, func(t *testing.T) {
			r := execIn(t, ctx, reg, "bash", map[string]any{"command": attack})
			out := r.GetOutput()
			for _, step := range []string{"statdir=1", "statfile=1", "chmodfile=1", "chmoddir=1", "touch=1"} {
				if !strings.Contains(out, step) {
					t.Errorf("want %q (refused) in:\n%s", step, out)
				}
			}
			if strings.Contains(out, "notes.txt") && !strings.Contains(out, "No such file") {
				t.Errorf("agent-a's file is visible:\n%s", out)
			}
			if strings.Contains(out, "a-secret") {
				t.Error("read agent-a's file")
			}
		})
	}
	for _, h := range before {
		h.unchanged(t)
	}
	if r := execIn(t, a, reg, "bash", map[string]any{"command": "cat notes.txt && chmod 600 notes.txt && pwd"}); r.GetIsError() || !strings.Contains(r.GetOutput(), "a-secret") {
		t.Fatalf("agent-a's own session: %s", r.GetOutput())
	}
}

// sandbox.uid and sandbox.gid choose the host ids a root server's commands
// act as: a file a command writes belongs to them on the host (inside its
// namespace the command sees itself as 65534, whatever the host ids are).
func TestSandboxCommandIDsAreConfigurable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the ids apply to a root server; CI runs as root")
	}
	k := newEscapeKit(t, `"uid": 65533, "gid": 65532`)
	k.need(t, sandbox.LayerUserNS)
	if r := k.bash(t, context.Background(), `echo x > owned-by-the-sandbox.txt`, 0); r.GetIsError() {
		t.Fatalf("bash: %s", r.GetOutput())
	}
	fi, err := os.Stat(filepath.Join(filepath.Dir(k.s.cfgPath), "ws", "owned-by-the-sandbox.txt"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65533 || st.Gid != 65532 {
		t.Fatalf("the command's file belongs to %d:%d on the host, want 65533:65532", st.Uid, st.Gid)
	}
}
