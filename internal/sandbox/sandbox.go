// Package sandbox runs a command a model asked for inside the kernel's
// confinement: user, PID, network, IPC and UTS namespaces; no_new_privs;
// Landlock (filesystem, TCP and IPC scopes); a seccomp filter; and resource
// limits.
//
// Commands are started by a helper: this same program re-executed (any
// binary that links the package turns into the helper in init when
// TOOLNEXUS_SANDBOX_HELPER is set, and never returns to its main), started
// on the first sandboxed command inside a user namespace — and, with the
// network off, a network namespace with only a down loopback — made once
// and kept. One helper serves the commands with the network off, another
// those with it on. Per command the server builds the Landlock ruleset and
// picks the pids cgroup, and sends them with the command's files over a
// socketpair (SCM_RIGHTS); a fresh, locked helper thread joins the cgroup,
// enters new PID, IPC and UTS namespaces, drops every capability, sets
// no_new_privs, Landlock and seccomp, and forks the command, which is the
// PID namespace's init. With no user namespace per command the fork is a
// vfork of a small process, and no network namespace is made and torn down
// per command: together most of the cost when the server forked each
// command itself. The helper dies with the server (parent-death signal,
// and the socket's end), its commands die with it, a dead helper is
// replaced on the next command, and Close ends them all.
//
// Without user and PID namespaces (or for a command whose SysProcAttr asks
// for more than a process group or session), the server applies the same
// rules to one of its own locked threads and forks the command from it.
//
// A Sandbox is built once (New probes what the kernel allows); each command
// is started with Start under a Policy, which says what the command may read
// and write.
package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Mode is the `sandbox.mode` setting.
type Mode string

const (
	// ModeAuto uses every layer the kernel allows and reports the rest.
	ModeAuto Mode = "auto"
	// ModeRequired refuses to start unless every layer is available.
	ModeRequired Mode = "required"
	// ModeOff runs commands with the server's own authority.
	ModeOff Mode = "off"
)

// Modes lists the valid modes.
var Modes = []Mode{ModeAuto, ModeRequired, ModeOff}

// Layer names, as Status, the log and ListSources show them.
const (
	LayerUserNS     = "user-namespace"
	LayerPIDNS      = "pid-namespace"
	LayerNetNS      = "network-namespace"
	LayerIPCNS      = "ipc-namespace"
	LayerNoNewPrivs = "no-new-privs"
	LayerLandlock   = "landlock"
	LayerSeccomp    = "seccomp"
	LayerLimits     = "rlimits"
	LayerProcesses  = "process-limit"
)

// Limits bound one command and everything it starts. Zero means no limit.
type Limits struct {
	Memory    int64         // address space of each process, bytes (RLIMIT_AS)
	Processes int           // processes (RLIMIT_NPROC, and a pids cgroup when the server runs as root)
	FileSize  int64         // largest file a process may write, bytes (RLIMIT_FSIZE)
	OpenFiles int           // open file descriptors per process (RLIMIT_NOFILE)
	CPU       time.Duration // CPU time of each process (RLIMIT_CPU)
}

// DefaultLimits are the limits when the config gives none; CPU is the
// call's timeout, set per call.
var DefaultLimits = Limits{
	Memory:    2 << 30,
	Processes: 256,
	FileSize:  1 << 30,
	OpenFiles: 1024,
}

// Policy is what one command may reach.
type Policy struct {
	// Workspace is read-write (and executable): the call's workspace.
	Workspace string
	// TempDir is read-write: the call's private temp directory.
	TempDir string
	// WritePaths are read-write too (a sandboxed MCP server's own
	// writePaths); missing ones are skipped.
	WritePaths []string
	// ReadPaths are read-only (and executable) besides the system paths.
	ReadPaths []string
	// ExecFiles are files the command may execute (and read), and no
	// more of the directories they lie in: one Landlock rule per file,
	// and no step of the command's view, so the command must reach each
	// by a path it need not walk — the server's own binary as
	// /proc/self/exe, which is how a run_code interpreter is started.
	ExecFiles []string
	// Masks are unreadable even when they lie below a readable path.
	Masks []string
	// Private are directories the command sees as empty, but for its
	// own Workspace when that lies beneath one: another session's files
	// cannot even be stat-ed or chmod-ed there, which Landlock (it
	// governs opening, not stat, chmod or utime) cannot refuse. Applied
	// by the helper (a mount namespace per command); without one only
	// Landlock keeps them unreadable.
	Private []string
	// Network allows sockets to the network; off, the command has no
	// network interface but a down loopback and may not open sockets.
	Network bool
	// Egress, when set, replaces Network: the command gets a network
	// namespace of its own with only loopback up, the proxy's listener
	// at EgressAddr there, and the proxy variables (HTTP_PROXY and the
	// rest) in its environment; the proxy decides where it may connect.
	Egress EgressServer
	Limits Limits
}

// SystemPaths are readable (and executable) for every command.
var SystemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// devFiles are the device files a command may use.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// Layer is one mechanism of the sandbox and whether it is in force.
type Layer struct {
	Name   string
	Active bool
	// Detail says what the layer does when active, and why it is
	// missing when not.
	Detail string
}

// Status is what a Sandbox enforces.
type Status struct {
	Mode   Mode
	Layers []Layer
}

// Missing lists the layers that are not in force.
func (s Status) Missing() []Layer {
	var out []Layer
	for _, l := range s.Layers {
		if !l.Active {
			out = append(out, l)
		}
	}
	return out
}

// Active reports whether the named layer is in force.
func (s Status) Active(name string) bool {
	for _, l := range s.Layers {
		if l.Name == name {
			return l.Active
		}
	}
	return false
}

// Layer returns the named layer.
func (s Status) Layer(name string) (Layer, bool) {
	for _, l := range s.Layers {
		if l.Name == name {
			return l, true
		}
	}
	return Layer{}, false
}

// String is one line: the mode, the active layers, the missing ones and why.
func (s Status) String() string {
	if s.Mode == ModeOff {
		return "sandbox off: commands run with the server's own authority"
	}
	var on, off []string
	for _, l := range s.Layers {
		if l.Active {
			on = append(on, l.Name)
		} else {
			off = append(off, l.Name+" ("+l.Detail+")")
		}
	}
	out := fmt.Sprintf("sandbox %s: active: %s", s.Mode, strings.Join(on, ", "))
	if len(off) > 0 {
		out += "; missing: " + strings.Join(off, "; ")
	}
	return out
}

// MissingError is New's error in ModeRequired when a layer is missing.
type MissingError struct {
	Layers []Layer
}

func (e *MissingError) Error() string {
	parts := make([]string, len(e.Layers))
	for i, l := range e.Layers {
		parts[i] = l.Name + ": " + l.Detail
	}
	return "sandbox.mode is \"required\" but the kernel does not allow every layer: missing " + strings.Join(parts, "; ") +
		` (use "auto" to run with what is available)`
}

// ErrOff is returned by Start on a nil Sandbox.
var ErrOff = errors.New("sandbox: not configured")

// Runner is a Sandbox with the policy the config sets; sources get one and
// fill in each call's workspace and temp dir. A nil Runner is "off".
type Runner struct {
	Box    *Sandbox
	Policy Policy
}

// On reports whether commands started through r are confined.
func (r *Runner) On() bool { return r != nil && r.Box.On() }

// Owner is the Box's Owner, for a Runner that may be nil.
func (r *Runner) Owner() (uid, gid int, ok bool) {
	if !r.On() {
		return 0, 0, false
	}
	return r.Box.Owner()
}

// ScriptLimits are the limits the shell script before a command sets
// (LimitScript, WrapArgv): l, without the process count when a pids group
// per call counts them (a root server). Its commands share uid 65534 in
// one user namespace, where `ulimit -u` would count every call's
// processes together, letting one call's fork bomb starve the others.
func (r *Runner) ScriptLimits(l Limits) Limits {
	if r.On() && r.Box.mapped && r.Box.pids != nil {
		l.Processes = 0
	}
	return l
}
