package sandbox

import (
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperEnv marks a process as the sandbox helper: the sandbox starts
// its helper by re-executing the running program (/proc/self/exe) with it
// set, and EnterHelper, called first in that program's main (or a test
// binary's TestMain), serves as the helper and never returns. The value
// says whether the helper's commands may use the network ("net") or not
// ("nonet"). The socketpair to the server is fd 3.
const (
	helperEnv  = "TOOLNEXUS_SANDBOX_HELPER"
	helperArg0 = "toolnexus-sandbox-helper"
)

// lockdown is the filter each command's thread adds (lockdownPolicy);
// set once, before the first request.
var lockdown *filterProg

// entered records that this program calls EnterHelper: a program that
// does not would, re-executed as the helper, run its own main instead —
// so the sandbox refuses to start a helper for it (NewAs).
var entered atomic.Bool

// EnterHelper turns this process into the sandbox helper when the sandbox
// started it as one, and then never returns; otherwise it returns at once.
// It is an explicit call, not an init function, so that importing a
// package never changes what a program does before its main.
func EnterHelper() {
	entered.Store(true)
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	os.Exit(helperMain(mode))
}

// errNoHelperEntry is NewAs's refusal for a program that never called
// EnterHelper.
var errNoHelperEntry = errors.New("sandbox: this program cannot start the sandbox helper: call server.EnterSandboxHelper() first in main " +
	"(server.Main does; a test package that starts sandboxed commands calls it first in TestMain), or set sandbox.mode off")

// helperMain serves start requests until the server closes the socket (or
// dies: the helper's parent-death signal is SIGKILL). Its commands die with
// it: each is forked by a thread of the helper with SIGKILL as its
// parent-death signal, and that thread stays until the command exits.
func helperMain(mode string) int {
	os.Unsetenv(helperEnv)
	f := os.NewFile(3, "sandbox-helper")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return 3
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 3
	}
	w := newWire(uc)
	// With seccomp on, every thread of the helper takes the filter now
	// (with no_new_privs), and each command inherits it: one load instead
	// of one per command.
	seccompOn := strings.Contains(mode, "+seccomp")
	if seccompOn {
		prog, err := assemble(strings.HasPrefix(mode, "net"), true, strings.HasSuffix(mode, "+ownership"))
		if err == nil {
			lockdown, err = assemblePolicy(lockdownPolicy())
		}
		if err == nil {
			err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		}
		if err == nil {
			err = prog.loadAll()
		}
		if err != nil {
			_ = w.send(msgReady, []byte("seccomp: "+err.Error()), nil)
			return 3
		}
	}
	if err := w.send(msgReady, nil, nil); err != nil {
		return 3
	}
	jobs := make(chan job)
	go worker(w, jobs, seccompOn)
	for {
		typ, payload, fds, err := w.recv()
		if err != nil {
			return 0
		}
		r, err := decodeStart(payload)
		if typ != msgStart && err == nil {
			err = errors.New("sandbox: the helper got a frame of an unknown type")
		}
		if err != nil {
			// Every frame is answered: the server's call ends with
			// this error instead of waiting for a reply that never
			// comes. A frame too short to carry an id is answered
			// under id 0, which no call uses: the server drops it.
			closeAll(fds)
			d := dec{b: payload}
			_ = w.send(msgStarted, encodeStarted(d.u64(), 0, err), nil)
			continue
		}
		jobs <- job{r, fds}
	}
}

type job struct {
	r   *startRequest
	fds []int
}

// worker waits, on a locked thread of its own, for one request: the
// thread is made before the request comes, and a worker for the next
// request is started as soon as this one takes its request.
func worker(w *wire, jobs <-chan job, seccompOn bool) {
	runtime.LockOSThread() // never unlocked: see serveStart
	j := <-jobs
	go worker(w, jobs, seccompOn)
	serveStart(w, j.r, j.fds, seccompOn)
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// serveStart starts one command and reports its pid, then its exit. It
// runs on a thread of its own that takes the call's rules and is never
// given back to the runtime: the runtime ends it when this returns, after
// the command has exited, and the command's parent-death signal is tied
// to it.
func serveStart(w *wire, r *startRequest, fds []int, seccompOn bool) {
	runtime.LockOSThread()         // never unlocked
	listener, err := r.egressNet() // egress.go; -1 without egress
	pid := 0
	if err == nil {
		pid, err = r.spawn(fds, seccompOn)
	}
	closeAll(fds)
	var sendFDs []int
	if listener >= 0 && err == nil {
		sendFDs = []int{listener}
	}
	sendErr := w.send(msgStarted, encodeStarted(r.id, pid, err), sendFDs)
	if listener >= 0 {
		unix.Close(listener) // the server has its own now
	}
	if sendErr != nil || err != nil {
		if err == nil {
			// The server is gone: end the command rather than leave it
			// running unwatched (the thread's exit would too).
			unix.Kill(pid, unix.SIGKILL)
		}
		if err != nil {
			return
		}
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	_ = w.send(msgExited, encodeExited(r.id, ws), nil)
}

// spawn confines the calling (locked) thread and forks the command from
// it: the pids group, the call's own PID, IPC and UTS namespaces (entered
// by this thread, so the command is the PID namespace's init), no
// capabilities at all (the helper's CAP_SYS_ADMIN in its user namespace
// was needed only for that), no_new_privs and Landlock; the seccomp
// filter is already on every helper thread.
func (r *startRequest) spawn(fds []int, seccompOn bool) (int, error) {
	want := int(r.nfiles)
	if r.flags&reqRuleset != 0 {
		want++
	}
	if r.flags&reqCgroup != 0 {
		want++
	}
	nview := 0
	for _, op := range r.view {
		if op.kind == viewBindFD {
			nview++
		}
	}
	want += nview
	if len(fds) != want {
		return 0, errors.New("sandbox: the request's descriptors do not match")
	}
	files := make([]uintptr, r.nfiles)
	for i := range files {
		files[i] = uintptr(fds[i])
	}
	rest := fds[r.nfiles:]
	ruleset, cgroup := -1, -1
	if r.flags&reqRuleset != 0 {
		ruleset, rest = rest[0], rest[1:]
	}
	if r.flags&reqCgroup != 0 {
		cgroup, rest = rest[0], rest[1:]
	}

	if cgroup >= 0 {
		if _, err := unix.Write(cgroup, []byte(strconv.Itoa(unix.Gettid()))); err != nil {
			return 0, errors.New("sandbox: pids cgroup: " + err.Error())
		}
	}
	if r.unshare != 0 {
		if err := unix.Unshare(int(r.unshare)); err != nil {
			return 0, errors.New("sandbox: namespaces: " + err.Error())
		}
	}
	if r.flags&reqView != 0 {
		if err := applyView(r.view, rest); err != nil {
			return 0, errors.New("sandbox: the command's view of the filesystem: " + err.Error())
		}
	}
	if err := dropCaps(); err != nil {
		return 0, errors.New("sandbox: dropping capabilities: " + err.Error())
	}
	if r.flags&reqNoNewPrivs != 0 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return 0, errors.New("sandbox: no_new_privs: " + err.Error())
		}
	}
	if ruleset >= 0 {
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
			return 0, errors.New("sandbox: landlock: " + errno.Error())
		}
	}
	if r.flags&reqSeccomp != 0 && !seccompOn {
		return 0, errors.New("sandbox: seccomp: the helper has no filter")
	}
	if seccompOn {
		// The helper's filter lets its threads mount (applyView);
		// the command's does not.
		if err := lockdown.load(); err != nil {
			return 0, errors.New("sandbox: seccomp: " + err.Error())
		}
	}
	var clone uintptr
	if r.flags&reqNewUser != 0 {
		// A user namespace of the command's own, for RLIMIT_NPROC to
		// count its processes alone (it counts per user namespace).
		clone = syscall.CLONE_NEWUSER
	}
	attr := &syscall.ProcAttr{
		Dir:   r.dir,
		Env:   r.env,
		Files: files,
		Sys: &syscall.SysProcAttr{
			Setpgid:    r.flags&reqSetpgid != 0,
			Pgid:       int(r.pgid),
			Setsid:     r.flags&reqSetsid != 0,
			Pdeathsig:  syscall.SIGKILL,
			Cloneflags: clone,
		},
	}
	pid, err := syscall.ForkExec(r.path, r.argv, attr)
	if err != nil {
		return 0, err
	}
	return pid, nil
}

// dropCaps empties the calling thread's capability sets (and with them
// its ambient set), so the command starts with none and, under
// no_new_privs, cannot gain any from a file's capabilities on exec.
func dropCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}
