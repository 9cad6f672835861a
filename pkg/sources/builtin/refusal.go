package builtin

import (
	"syscall"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// limitRefusal names the resource limit that killed a command, from its
// exit status (the shell reports a command killed by signal N as 128+N):
//
//   - SIGXFSZ: it wrote past the file size limit (the sandbox's, or the
//     session quota's `ulimit -f`);
//   - SIGXCPU or SIGKILL in the sandbox: it used its CPU time limit. The
//     kernel sends SIGKILL at the hard limit, and `ulimit -t` sets the
//     hard limit with the soft one, so SIGKILL is the usual ending. (The
//     CPU time wait reports is no help: on a loaded machine it was seen
//     at two thirds of the limit the kernel killed at.)
//
// Without a limit in force these endings are the command's own business
// and no refusal. The exit status is all the server sees: a script that
// carries on after one of its commands was killed is not counted, and a
// sandboxed command that kills itself with SIGKILL, or exits 152 or 153,
// is. A call stopped at its timeout never gets here.
func (t *toolset) limitRefusal(code int) tool.Refusal {
	sandboxed := t.sandbox.On()
	switch {
	case code == 128+int(syscall.SIGXFSZ) && (sandboxed || t.session != nil):
		return tool.RefusalFileSizeLimit
	case sandboxed && (code == 128+int(syscall.SIGXCPU) || code == 128+int(syscall.SIGKILL)):
		return tool.RefusalCPULimit
	}
	return tool.RefusalNone
}
