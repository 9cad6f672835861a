package builtin

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// limitRefusal names the resource limit that killed a command, from how
// it ended (the shell reports a command killed by signal N as 128+N):
//
//   - SIGXFSZ: it wrote past the file size limit (the sandbox's, or the
//     session quota's `ulimit -f`);
//   - SIGXCPU, or SIGKILL after using its CPU time limit: the kernel sends
//     SIGKILL at the hard limit, which `ulimit -t` sets with the soft one.
//
// Without a limit in force these endings are the command's own business
// and no refusal. The exit status is all the server sees: a script that
// carries on after one of its commands was killed is not counted, and one
// that exits 153 by itself under a file size limit is.
func (t *toolset) limitRefusal(waitErr error, code int, timeout time.Duration) tool.Refusal {
	sandboxed := t.sandbox.On()
	switch {
	case code == 128+int(syscall.SIGXFSZ) && (sandboxed || t.session != nil):
		return tool.RefusalFileSizeLimit
	case sandboxed && (code == 128+int(syscall.SIGXCPU) || code == 128+int(syscall.SIGKILL)):
		limit := t.sandbox.Policy.Limits.CPU
		if limit == 0 {
			limit = timeout // what startCmd gives `ulimit -t` then
		}
		limit = (limit + time.Second - 1).Truncate(time.Second) // ulimit -t counts whole seconds
		// The kernel kills on its own sampled accounting; the rusage wait
		// reports was seen as low as two thirds of the limit on a loaded
		// machine. Half the limit still tells a spin from a kill -9.
		if cpuUsed(waitErr) >= limit/2 {
			return tool.RefusalCPULimit
		}
	}
	return tool.RefusalNone
}

// cpuUsed is the CPU time of the command and the children it waited for.
func cpuUsed(waitErr error) time.Duration {
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) && ee.ProcessState != nil {
		return ee.UserTime() + ee.SystemTime()
	}
	return 0
}
