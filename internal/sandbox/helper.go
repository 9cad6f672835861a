package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// helper is a running sandbox helper: this program re-executed (see
// helperMain) inside a user namespace, and with the network off inside a
// network namespace, both made once and kept. Per command it only enters
// fresh PID, IPC and UTS namespaces on a thread of its own: no user
// namespace per command, so the fork is a vfork (CLONE_VM) of a small
// process instead of a copy of the server's page tables, and no network
// namespace is made and torn down per command.
type helper struct {
	network bool
	w       *wire
	proc    *os.Process

	pending sync.Map // id → *Process awaiting its start reply or exit
	dead    chan struct{}
	err     error // why the helper is gone; set before dead is closed
}

var nextID atomic.Uint64

var errClosed = errors.New("sandbox: closed")

// errHelperGone is wrapped in the error a command gets when the helper
// that started it ended before the command did.
var errHelperGone = errors.New("sandbox: the sandbox helper process ended")

// alive reports whether h can take requests.
func (h *helper) alive() bool {
	select {
	case <-h.dead:
		return false
	default:
		return true
	}
}

// helperFor returns the running helper for the network setting, starting
// one when there is none or the last one died.
func (s *Sandbox) helperFor(network bool) (*helper, error) {
	slot := &s.helpers[0]
	if network {
		slot = &s.helpers[1]
	}
	if h := slot.Load(); h != nil && h.alive() {
		return h, nil
	}
	s.helperMu.Lock()
	defer s.helperMu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if h := slot.Load(); h != nil && h.alive() {
		return h, nil
	}
	h, err := s.startHelper(network)
	if err != nil {
		return nil, err
	}
	slot.Store(h)
	return h, nil
}

// startHelper starts a helper. It is forked by a thread locked for the
// helper's whole life: the helper's parent-death signal (SIGKILL) is tied
// to that thread, so the helper — and with it every command it started —
// dies with the server.
func (s *Sandbox) startHelper(network bool) (*helper, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: helper socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "sandbox-helper"), os.NewFile(uintptr(pair[1]), "sandbox-helper")
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("sandbox: helper socket: %w", err)
	}
	h := &helper{network: network, w: newWire(c.(*net.UnixConn)), dead: make(chan struct{})}

	mode := "nonet"
	if network {
		mode = "net"
	}
	if s.prog[network] != nil {
		mode += "+seccomp"
		if !s.mapped {
			mode += "+ownership"
		}
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{helperArg0}
	cmd.Env = []string{helperEnv + "=" + mode}
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr // a helper's panic is worth seeing
	flags := uintptr(unix.CLONE_NEWUSER)
	if !network && s.sharedNet {
		flags |= unix.CLONE_NEWNET
	}
	// Inside, the helper is uid and gid 65534 (nobody), with
	// CAP_SYS_ADMIN kept across exec as an ambient capability to make
	// namespaces; each command's thread drops it, and every other
	// capability, before the fork. Outside, a non-root server can map
	// only its own ids; a root server maps the commands' unprivileged
	// ids (identity.go) and the helper becomes them before it execs, with
	// no supplementary groups, so nothing it starts acts as root on the
	// host.
	hostUID, hostGID := os.Geteuid(), os.Getegid()
	if s.mapped {
		hostUID, hostGID = s.uid, s.gid
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: nsCommandID, HostID: hostUID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: nsCommandID, HostID: hostGID, Size: 1}},
		// CAP_NET_ADMIN brings up the loopback of a command's own
		// network namespace when it has egress (egress.go).
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN},
		Pdeathsig:   syscall.SIGKILL,
	}
	if s.mapped {
		cmd.SysProcAttr.GidMappingsEnableSetgroups = true
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nsCommandID, Gid: nsCommandID}
	}

	started := make(chan error, 1)
	s.helperWG.Add(2)
	go func() {
		defer s.helperWG.Done()
		runtime.LockOSThread() // never unlocked: see above
		err := cmd.Start()
		theirs.Close()
		started <- err
		if err != nil {
			return
		}
		err = cmd.Wait()
		// Closing our end ends the reader, which marks the helper dead.
		h.w.c.Close()
		_ = err
	}()
	if err := <-started; err != nil {
		s.helperWG.Done() // the reader never starts
		h.w.c.Close()
		return nil, fmt.Errorf("sandbox: starting the sandbox helper: %w", err)
	}
	h.proc = cmd.Process
	// The helper says when it is set up (or why it cannot be); reading
	// here needs no lock: the reader starts after.
	typ, payload, fds, err := h.w.recv()
	closeAll(fds)
	if err == nil && (typ != msgReady || len(payload) > 0) {
		err = fmt.Errorf("%s", payload)
	}
	if err != nil {
		h.kill()
		s.helperWG.Done() // the reader never starts
		return nil, fmt.Errorf("sandbox: the sandbox helper did not start: %w", err)
	}
	go func() {
		defer s.helperWG.Done()
		h.read()
	}()
	return h, nil
}

// read dispatches the helper's replies until the socket ends, then fails
// every command still waiting on it.
func (h *helper) read() {
	var err error
	for {
		var typ byte
		var payload []byte
		var fds []int
		typ, payload, fds, err = h.w.recv()
		if err != nil {
			break
		}
		d := dec{b: payload}
		id := d.u64()
		v, ok := h.pending.Load(id)
		if !ok || d.bad {
			closeAll(fds)
			continue
		}
		p := v.(*Process)
		if typ == msgStarted && len(fds) == 1 {
			p.egressFile = os.NewFile(uintptr(fds[0]), "egress-listener") // egress.go
			fds = nil
		}
		closeAll(fds)
		switch typ {
		case msgStarted:
			pid, errno, msg := int(d.u32()), unix.Errno(d.u32()), d.str()
			var serr error
			switch {
			case msg == "":
			case errno != 0:
				serr = &os.PathError{Op: "fork/exec", Path: p.Cmd.Path, Err: syscall.Errno(errno)}
			default:
				serr = errors.New(msg)
			}
			if serr == nil {
				// Found now, while the helper has not reaped it: the
				// helper reaps only after this reply was sent.
				p.pid = pid
				p.Cmd.Process, _ = os.FindProcess(pid)
			} else {
				h.pending.Delete(id)
			}
			p.started <- serr
		case msgExited:
			h.pending.Delete(id)
			p.exited <- unix.WaitStatus(d.u32())
		}
	}
	h.w.c.Close()
	h.w.closeFDs()
	h.err = err
	close(h.dead)
	if h.proc != nil {
		_ = h.proc.Kill() // a helper that broke the protocol is not kept
	}
}

// kill ends the helper (Close): its commands die with it.
func (h *helper) kill() {
	if h.proc != nil {
		_ = h.proc.Kill()
	}
	h.w.c.Close()
}
