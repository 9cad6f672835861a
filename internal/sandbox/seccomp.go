package sandbox

import (
	"fmt"
	"slices"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in every sandbox: reaching into other
// processes, changing the filesystem topology or the machine, kernel
// interfaces a command has no need for and that widen the attack surface
// (bpf, perf, userfaultfd, io_uring, keyrings), and joining or creating
// namespaces from inside.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
	"fsmount", "fspick", "mount_setattr",
	"swapon", "swapoff", "reboot", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "acct", "quotactl",
	"settimeofday", "clock_settime", "clock_adjtime", "syslog", "iopl", "ioperm", "vhangup",
	"bpf", "perf_event_open", "userfaultfd", "fanotify_init",
	"keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"unshare", "setns", "open_by_handle_at", "name_to_handle_at",
}

// ownershipSyscalls change who owns a file or its extended attributes:
// refused in every sandbox. A command never needs chown (it owns what it
// makes), and user.* xattrs on a file it can merely see are a way to mark
// or smuggle data into files of the host.
var ownershipSyscalls = []string{
	"chown", "fchown", "lchown", "fchownat", "chown32", "fchown32", "lchown32",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

// modeSyscalls change a file's permission bits. When the server is not
// root its commands act as the server's own uid (an unprivileged process
// can map no other), so the kernel's ownership check would let them chmod
// every file the server owns that they can name — the config file, the
// TLS key — which Landlock does not cover; seccomp cannot tell paths
// apart, so they are refused everywhere then.
var modeSyscalls = []string{"chmod", "fchmod", "fchmodat", "fchmodat2"}

// timeSyscalls set a file's times; like modeSyscalls they are refused when
// the commands act as the server's uid, but only with explicit times (the
// times argument non-NULL): "now" needs write access, which Landlock
// already grants only in the workspace and temp dir, and refusing it would
// break every touch. The argument index of the times pointer by call.
var timeSyscalls = map[string]int{"utime": 1, "utimes": 1, "futimesat": 2, "utimensat": 2}

// networkFamilies are the socket families a command may open when the
// network is on. Unix sockets are never allowed: a path such as a
// container runtime's socket would reach out of every other layer.
var networkFamilies = []uint64{unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

// helperUnshare are the namespaces a helper thread enters per command.
const helperUnshare = unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET | unix.CLONE_NEWNS

// helperMounts are the calls the helper's threads make to build a
// command's view of the filesystem (view.go); the helper's filter allows
// them, and the lockdown filter each command's thread adds before the fork
// refuses them again, with unshare.
var helperMounts = []string{"mount", "move_mount", "unshare"}

// lockdownPolicy is that per-command filter: stacked on the helper's, it
// takes back what the helper needed and the command must not have.
func lockdownPolicy() seccomp.Policy {
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{Action: seccomp.ActionErrno, Names: helperMounts},
	}}
}

// seccompPolicy is the filter for a sandbox with or without network. The
// helper's variant (forHelper) is loaded once on every thread of the
// helper, and its commands inherit it: it lets unshare enter the PID, IPC,
// UTS and network namespaces the helper's threads make per command — which
// need CAP_SYS_ADMIN, which no command has, so for a command it refuses
// them as surely — and refuses unshare with any other flag, a user
// namespace (which needs no capability) among them.
//
// With ownership, the mode and explicit-time calls are refused too.
func seccompPolicy(network, forHelper, ownership bool) seccomp.Policy {
	names := append(slices.Clip(deniedSyscalls), ownershipSyscalls...)
	var conds []seccomp.NameWithConditions
	if forHelper {
		names = nil
		for _, n := range append(slices.Clip(deniedSyscalls), ownershipSyscalls...) {
			if !slices.Contains(helperMounts, n) {
				names = append(names, n)
			}
		}
		conds = append(conds, seccomp.NameWithConditions{Name: "unshare", Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.BitsSet, Value: ^uint64(helperUnshare)},
		}})
	}
	if ownership {
		names = append(names, modeSyscalls...)
		for name, arg := range timeSyscalls {
			conds = append(conds, seccomp.NameWithConditions{Name: name, Conditions: seccomp.ArgumentConditions{
				{Argument: uint32(arg), Operation: seccomp.NotEqual, Value: 0},
			}})
		}
	}
	deny := seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: knownOnly(names), NamesWithCondtions: knownOnlyConds(conds)}
	if network {
		var conds seccomp.ArgumentConditions
		for _, f := range networkFamilies {
			conds = append(conds, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: f})
		}
		deny.NamesWithCondtions = append(deny.NamesWithCondtions, seccomp.NameWithConditions{Name: "socket", Conditions: conds})
	} else {
		deny.Names = append(deny.Names, "socket")
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{deny}}
}

// filterProg is an assembled filter, ready to load.
type filterProg struct {
	filter []unix.SockFilter
}

// knownOnly drops the names this architecture does not have (chown32 is
// 32-bit only, arm64 has no chmod or utime): the filter refuses what
// exists.
func knownOnly(names []string) []string {
	info, err := arch.GetInfo("")
	if err != nil {
		return names
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if _, ok := info.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func knownOnlyConds(conds []seccomp.NameWithConditions) []seccomp.NameWithConditions {
	info, err := arch.GetInfo("")
	if err != nil {
		return conds
	}
	out := conds[:0:0]
	for _, c := range conds {
		if _, ok := info.SyscallNames[c.Name]; ok {
			out = append(out, c)
		}
	}
	return out
}

func assemble(network, forHelper, ownership bool) (*filterProg, error) {
	return assemblePolicy(seccompPolicy(network, forHelper, ownership))
}

func assemblePolicy(p seccomp.Policy) (*filterProg, error) {
	insts, err := p.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return &filterProg{filter: f}, nil
}

// load installs the filter on the calling thread only (no TSYNC); the
// caller holds the thread locked. no_new_privs must be set first.
func (f *filterProg) load() error { return f.install(0) }

// loadAll installs the filter on every thread of the process (TSYNC).
func (f *filterProg) loadAll() error { return f.install(unix.SECCOMP_FILTER_FLAG_TSYNC) }

func (f *filterProg) install(flags uintptr) error {
	prog := unix.SockFprog{Len: uint16(len(f.filter)), Filter: &f.filter[0]}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return errno
	}
	if r != 0 {
		return fmt.Errorf("thread %d could not take the filter", r)
	}
	return nil
}
