package builtin_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// newSandboxKit is a kit whose bash runs in the sandbox (mode auto).
func newSandboxKit(t *testing.T, policy sandbox.Policy) (*kit, sandbox.Status) {
	t.Helper()
	box, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	dir := testutil.SandboxDir(t)
	tools, err := builtin.Tools(builtin.Config{Enabled: true}, sources.Env{Workspace: dir,
		Sandbox: &sandbox.Runner{Box: box, Policy: policy}})
	if err != nil {
		t.Fatal(err)
	}
	k := &kit{t: t, dir: dir, tools: map[string]tool.Tool{}}
	for _, tl := range tools {
		k.tools[tl.Name] = tl
	}
	return k, box.Status()
}

func TestBashSandboxed(t *testing.T) {
	k, st := newSandboxKit(t, sandbox.Policy{Limits: sandbox.DefaultLimits})
	if !st.Active(sandbox.LayerLandlock) || !st.Active(sandbox.LayerPIDNS) {
		t.Skipf("Status says Landlock or the PID namespace is missing (%s); the escapes are not tried", st)
	}
	secret := filepath.Join(outside(t), "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := k.run("bash", map[string]any{"command": `echo in > ws.txt && cat ws.txt
echo t > "$TMPDIR/t" && echo tmp-ok
cat ` + secret + `; echo "read=$?"
echo x > ` + filepath.Dir(secret) + `/new; echo "write=$?"
kill -9 ` + itoa(os.Getpid()) + `; echo "kill=$?"`})
	if r.IsError {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{"in\n", "tmp-ok", "read=1", "write=1", "kill=1"} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("want %q in %q", want, r.Output)
		}
	}
	if strings.Contains(r.Output, "s3cret") {
		t.Fatal("bash read outside the workspace")
	}
	if k.read("ws.txt") != "in\n" {
		t.Fatal("the workspace write did not land")
	}
}

func TestBashSandboxTimeoutKillsEveryDescendant(t *testing.T) {
	k, st := newSandboxKit(t, sandbox.Policy{Limits: sandbox.DefaultLimits})
	if !st.Active(sandbox.LayerPIDNS) {
		t.Skipf("Status says the PID namespace is missing (%s)", st)
	}
	marker := "301." + itoa(os.Getpid())
	r := k.run("bash", map[string]any{"command": "setsid sleep " + marker + " >/dev/null 2>&1 & disown; echo started"})
	if r.IsError || !strings.Contains(r.Output, "started") {
		t.Fatalf("%+v", r)
	}
	if pids := processesWith(marker); len(pids) > 0 {
		t.Fatalf("setsid sleep survived the call: %v", pids)
	}
}

// processesWith lists the pids whose command line holds marker.
var processesWith = testutil.ProcessesWith

func itoa(i int) string { return strconv.Itoa(i) }
