package builtin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// startCmd starts the shell command. With a sandbox configured it runs
// confined: read-write only in the call's workspace and a private temp
// dir (TMPDIR and HOME, removed when the command ends), the configured
// read paths and masks, network as configured, and the limits, with CPU
// time bounded by the call's timeout unless the config sets it. wait
// reaps the command (and removes the temp dir). A traced ctx gets a
// sandbox.setup span for the start.
func (t *toolset) startCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (wait func() error, err error) {
	if !t.sandbox.On() {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return cmd.Wait, nil
	}
	tmp, err := os.MkdirTemp("", "toolnexus-tmp-")
	if err != nil {
		return nil, err
	}
	p := t.sandbox.Policy
	p.Workspace = t.ws.Root()
	if px, ok := p.Egress.(*egress.Proxy); ok {
		// The proxy works for this call: its caller, session and tool
		// are what its rules, policies and audit lines see.
		call := egress.Call{Principal: callerctx.Principal(ctx), Tool: "bash"}
		if t.session != nil {
			call.Session = filepath.Base(p.Workspace) // a session's directory is named by its id
		}
		p.Egress = px.Bind(call)
	}
	// A root server's commands act as an unprivileged uid: the temp dir
	// and the workspace (made by the server) must be theirs to write.
	if err := errors.Join(t.sandbox.Box.Own(tmp), t.sandbox.Box.Own(p.Workspace)); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	p.TempDir = tmp
	if p.Limits.CPU == 0 {
		p.Limits.CPU = timeout
	}
	script := t.sandbox.ScriptLimits(p.Limits)
	if t.session != nil {
		// The session's own `ulimit -f` (its quota) follows; when it is
		// the stricter one, setting ours first would only make it fail.
		if q := t.session.FileSizeLimit(); q >= 0 && (script.FileSize == 0 || q <= script.FileSize) {
			script.FileSize = 0
		}
	}
	last := len(cmd.Args) - 1
	cmd.Args[last] = sandbox.LimitScript(t.flavor, script) + cmd.Args[last]
	cmd.Env = append(slices.Clip(cmd.Env), "TMPDIR="+tmp, "HOME="+tmp)
	proc, err := t.sandbox.Box.StartContext(ctx, cmd, &p)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return func() error {
		err := proc.Wait()
		os.RemoveAll(tmp)
		return err
	}, nil
}
