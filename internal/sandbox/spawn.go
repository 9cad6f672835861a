package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sandbox starts commands under a Policy with every layer its Status
// lists as active. It is safe for concurrent use; Close releases what New
// opened.
type Sandbox struct {
	status Status
	abi    int // Landlock ABI in use; 0 when Landlock is off
	clone  uintptr
	nnp    bool
	prog   map[bool]*filterProg // by Policy.Network
	// uid and gid are the host ids commands act as; mapped: they are not
	// the server's own (the server is root), see identity.go.
	uid, gid int
	mapped   bool
	pids     *pidsGroups
	limits   bool
	// viewErr is why a root server cannot put the directories its
	// commands' uid may not walk to into their view (view.go).
	viewErr error
	// searchCache: whether the commands' uid may not search a
	// directory (blockedFor); searchCacheN counts its entries.
	searchCache  sync.Map
	searchCacheN atomic.Int64

	fixedMu sync.Mutex
	fixed   map[string][]openRule // system rules by mask set

	// The helper (helper.go): used when the user and PID namespaces are
	// in force. sharedNet: the helper's network namespace is made once
	// and shared by its commands (safe when no command can open a socket
	// there, or Landlock scopes abstract unix sockets per command);
	// otherwise each command gets its own.
	useHelper bool
	sharedNet bool
	perCall   uintptr // namespaces the helper enters per command
	// nprocUserNS: the process limit is RLIMIT_NPROC (the server is not
	// root), which counts per user namespace, so each command gets a
	// user namespace of its own below the helper's.
	nprocUserNS bool
	helpers     [2]atomic.Pointer[helper] // by Policy.Network
	helperMu    sync.Mutex
	helperWG    sync.WaitGroup
	closed      bool
	// helperErr is why the helper could not be started; commands then
	// start from the server directly.
	helperErr atomic.Pointer[error]
}

// testDisabled names layers a test turned off to play a kernel without
// them (DisableForTest).
var (
	testMu       sync.Mutex
	testDisabled = map[string]bool{}
)

// DisableForTest makes New report the named layer as missing, as on a
// kernel without it, until the returned function is called. Tests use it
// to check ModeRequired and the degraded ModeAuto.
func DisableForTest(layer string) (restore func()) {
	testMu.Lock()
	testDisabled[layer] = true
	testMu.Unlock()
	return func() {
		testMu.Lock()
		delete(testDisabled, layer)
		testMu.Unlock()
	}
}

func disabledForTest(layer string) bool {
	testMu.Lock()
	defer testMu.Unlock()
	return testDisabled[layer]
}

// New probes the kernel and returns a Sandbox in the given mode. In
// ModeRequired a missing layer is a *MissingError; in ModeOff the Sandbox
// starts commands unconfined. A nil Sandbox is a valid "off" sandbox.
func New(mode Mode) (*Sandbox, error) { return NewAs(mode, CommandID{}) }

// NewAs is New with the host ids a root server's commands act as.
func NewAs(mode Mode, id CommandID) (*Sandbox, error) {
	s := &Sandbox{status: Status{Mode: mode}, prog: map[bool]*filterProg{}, fixed: map[string][]openRule{}}
	if mode == ModeOff {
		return s, nil
	}
	if mode != ModeAuto && mode != ModeRequired {
		return nil, fmt.Errorf("sandbox: unknown mode %q; use auto, required or off", mode)
	}
	s.uid, s.gid, s.mapped = commandIDs(id)
	s.probeNamespaces()
	nnpErr := unix.Prctl(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	s.addLayer(LayerNoNewPrivs, nnpErr == nil, explain(nnpErr, "set-user-ID programs gain nothing", "prctl(PR_GET_NO_NEW_PRIVS) failed"))
	s.nnp = s.status.Active(LayerNoNewPrivs)
	s.probeLandlock()
	s.probeSeccompLayer()
	s.addLayer(LayerLimits, true, "memory, file size, open files and CPU time per process (the shell's ulimit before the command)")
	s.limits = true
	s.probeProcessLimit()

	s.useHelper = s.clone&unix.CLONE_NEWUSER != 0 && s.clone&unix.CLONE_NEWPID != 0
	if s.useHelper && !entered.Load() {
		s.Close()
		return nil, errNoHelperEntry
	}
	s.perCall = s.clone &^ (unix.CLONE_NEWUSER | unix.CLONE_NEWNET)
	if s.mapped {
		switch {
		case disabledForTest(MountView):
			s.viewErr = errors.New("turned off by a test")
		case s.useHelper:
			s.viewErr = probeView()
		default:
			s.viewErr = probeDirectView()
		}
	}
	// A root server counts a call's processes in its pids group, not by
	// RLIMIT_NPROC (ScriptLimits), so it needs no user namespace per
	// command, whose teardown alone cost a millisecond or more per call.
	s.nprocUserNS = s.pids == nil && s.status.Active(LayerProcesses)
	s.sharedNet = s.clone&unix.CLONE_NEWNET != 0 && (s.prog[false] != nil || s.abi >= 6)

	if mode == ModeRequired {
		if missing := s.status.Missing(); len(missing) > 0 {
			s.Close()
			return nil, &MissingError{Layers: missing}
		}
	}
	return s, nil
}

// addLayer records one layer's status (a test may turn a layer off).
func (s *Sandbox) addLayer(name string, active bool, detail string) {
	if active && disabledForTest(name) {
		active, detail = false, "turned off by a test"
	}
	s.status.Layers = append(s.status.Layers, Layer{Name: name, Active: active, Detail: detail})
}

// probeNamespaces finds the namespaces the kernel lets this process make:
// each is probed on its own with a real child, as the kernel, a
// container's seccomp profile or AppArmor may refuse any.
func (s *Sandbox) probeNamespaces() {
	userErr := probeClone(unix.CLONE_NEWUSER)
	s.addLayer(LayerUserNS, userErr == nil, explain(userErr, "the command runs with no capabilities, as sandbox.uid (default 65534) on the host when the server is root, as the server's own uid otherwise", "cannot create a user namespace"))
	userns := s.status.Active(LayerUserNS)
	base := uintptr(0)
	if userns {
		base = unix.CLONE_NEWUSER
		s.clone |= unix.CLONE_NEWUSER
	}
	for _, ns := range []struct {
		layer, on, why string
		flag           uintptr
	}{
		{LayerPIDNS, "the command sees only its own processes, cannot signal the server, and every descendant dies with the call", "cannot create a PID namespace", unix.CLONE_NEWPID},
		{LayerNetNS, "with the network off the command has only a down loopback interface", "cannot create a network namespace", unix.CLONE_NEWNET},
		{LayerIPCNS, "System V IPC and POSIX message queues are private to the command", "cannot create IPC and UTS namespaces", unix.CLONE_NEWIPC | unix.CLONE_NEWUTS},
	} {
		var err error
		if !userns && os.Geteuid() != 0 {
			err = errors.New("needs a user namespace when the server is not root")
		} else {
			err = probeClone(base | ns.flag)
		}
		s.addLayer(ns.layer, err == nil, explain(err, ns.on, ns.why))
		if s.status.Active(ns.layer) {
			s.clone |= ns.flag
		}
	}
	if !userns {
		// Without a user namespace the namespaces are made by the
		// root server, and the command would keep root's capabilities.
		s.clone &^= unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
		for i := range s.status.Layers {
			if s.status.Layers[i].Name != LayerUserNS && s.status.Layers[i].Active {
				s.status.Layers[i].Active = false
				s.status.Layers[i].Detail = "not used without a user namespace (the command would keep the server's capabilities)"
			}
		}
	}
}

// probeLandlock finds the Landlock ABI, which needs no_new_privs.
func (s *Sandbox) probeLandlock() {
	abi := landlockABI()
	llDetail := fmt.Sprintf("ABI %d: filesystem read-write only in the workspace and temp dir, read-only system paths", abi)
	if abi >= 4 {
		llDetail += "; TCP bind and connect refused with the network off"
	}
	if abi >= 6 {
		llDetail += "; no signals or abstract unix sockets out of the sandbox"
	}
	var llErr error
	switch {
	case abi == 0:
		llErr = errors.New("the kernel has no Landlock (needs Linux 5.13+ with landlock in the lsm= list)")
	case !s.nnp:
		llErr = errors.New("needs no_new_privs")
	}
	s.addLayer(LayerLandlock, llErr == nil, explain(llErr, llDetail, ""))
	if s.status.Active(LayerLandlock) {
		s.abi = abi
	}
}

// probeSeccompLayer assembles the filters (with and without network) and
// checks that the kernel loads one.
func (s *Sandbox) probeSeccompLayer() {
	var scErr error
	if !s.nnp {
		scErr = errors.New("needs no_new_privs")
	} else {
		for _, network := range []bool{false, true} {
			p, err := assemble(network, false, !s.mapped)
			if err != nil {
				scErr = err
				break
			}
			s.prog[network] = p
		}
		if scErr == nil {
			scErr = probeSeccomp(s.prog[false])
		}
	}
	s.addLayer(LayerSeccomp, scErr == nil, explain(scErr, "ptrace, mount, bpf, io_uring, keyrings, namespaces and unix sockets refused; sockets only with the network on", "cannot load a seccomp filter"))
	if !s.status.Active(LayerSeccomp) {
		s.prog = map[bool]*filterProg{}
	}
}

// probeProcessLimit picks how a call's processes are counted: RLIMIT_NPROC
// in the call's user namespace, or for a root server (which RLIMIT_NPROC
// does not bind) a cgroup v1 pids group per call.
func (s *Sandbox) probeProcessLimit() {
	var procErr error
	procDetail := "RLIMIT_NPROC counts the processes of the call's user namespace"
	if os.Geteuid() == 0 {
		procDetail = "a cgroup v1 pids group per call (RLIMIT_NPROC does not bind uid 0)"
		if g, err := findPidsGroups(); err != nil {
			procErr = fmt.Errorf("the server runs as root, where RLIMIT_NPROC does not apply, and %v", err)
		} else {
			s.pids = g
		}
	}
	s.addLayer(LayerProcesses, procErr == nil, explain(procErr, procDetail, ""))
	if !s.status.Active(LayerProcesses) && s.pids != nil {
		s.pids.close()
		s.pids = nil
	}
}

func explain(err error, on, why string) string {
	if err == nil {
		return on
	}
	if why == "" {
		return err.Error()
	}
	return why + ": " + err.Error()
}

// Status reports the mode and each layer.
func (s *Sandbox) Status() Status {
	if s == nil {
		return Status{Mode: ModeOff}
	}
	return s.status
}

// On reports whether commands are confined at all.
func (s *Sandbox) On() bool { return s != nil && s.status.Mode != ModeOff }

// Close ends the helpers (and with them every command still running in
// the sandbox) and releases the cached rules and the pids groups.
func (s *Sandbox) Close() {
	if s == nil {
		return
	}
	s.helperMu.Lock()
	s.closed = true
	for i := range s.helpers {
		if h := s.helpers[i].Load(); h != nil {
			h.kill()
		}
	}
	s.helperMu.Unlock()
	s.helperWG.Wait()
	s.fixedMu.Lock()
	for _, rs := range s.fixed {
		closeRules(rs)
	}
	s.fixed = map[string][]openRule{}
	s.fixedMu.Unlock()
	if s.pids != nil {
		s.pids.close()
	}
}

// probeTrue is a harmless program for probing namespaces.
func probeTrue() (string, error) {
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("true")
}

func probeClone(flags uintptr) error {
	t, err := probeTrue()
	if err != nil {
		return fmt.Errorf("no true program to probe with: %v", err)
	}
	cmd := exec.Command(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	if err := cmd.Run(); err != nil {
		return pathless(err)
	}
	return nil
}

// probeSeccomp loads the filter on a throwaway locked thread.
func probeSeccomp(p *filterProg) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		done <- p.load()
	}()
	return <-done
}

// startDirect starts cmd confined by the policy from a locked OS thread
// of the server itself, when there is no helper (no user or PID
// namespace to make one with, or a SysProcAttr the helper does not
// carry). The command is started and reaped by that thread, which carries
// the rules and stays alive while the command runs (the kernel ties the
// child's death signal to that thread).
func (s *Sandbox) startDirect(cmd *exec.Cmd, p *Policy) (*Process, error) {
	proc := &Process{Cmd: cmd, done: make(chan struct{})}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	sys := cmd.SysProcAttr
	sys.Cloneflags |= s.clone
	if p.Network {
		sys.Cloneflags &^= unix.CLONE_NEWNET
	}
	sys.Pdeathsig = syscall.SIGKILL
	s.actAsCommandIDs(sys)

	rulesetFD := -1
	if s.abi > 0 {
		fd, err := s.ruleset(p)
		if err != nil {
			return nil, fmt.Errorf("sandbox: landlock: %w", err)
		}
		rulesetFD = fd
	}
	var cgroup string
	if s.pids != nil && p.Limits.Processes > 0 {
		dir, err := s.pids.acquire(p.Limits.Processes + 1) // +1: the forking thread
		if err != nil {
			if rulesetFD >= 0 {
				unix.Close(rulesetFD)
			}
			return nil, fmt.Errorf("sandbox: pids cgroup: %w", err)
		}
		cgroup = dir
	}
	prog := s.prog[p.Network]
	ops := s.directView(p)

	started := make(chan error, 1)
	go func() {
		// Never unlocked: the rules below stay on this thread, which
		// the runtime ends when this goroutine returns, and the runtime
		// makes new threads from a clean template, never from this one.
		runtime.LockOSThread()
		err := enterDirectView(ops)
		if err == nil {
			err = s.confineThread(rulesetFD, prog, cgroup)
		}
		if rulesetFD >= 0 {
			unix.Close(rulesetFD)
		}
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err == nil {
			proc.err = cmd.Wait()
		}
		if cgroup != "" {
			defer s.pids.release(cgroup)
		}
		close(proc.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return proc, nil
}

// actAsCommandIDs makes a command the server starts itself act as the
// commands' unprivileged host ids when the server is root: through a user
// namespace that maps them when sys makes one, else by setting them.
func (s *Sandbox) actAsCommandIDs(sys *syscall.SysProcAttr) {
	if !s.mapped {
		return
	}
	if sys.Cloneflags&unix.CLONE_NEWUSER != 0 {
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: nsCommandID, HostID: s.uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: nsCommandID, HostID: s.gid, Size: 1}}
		sys.GidMappingsEnableSetgroups = true
		sys.Credential = &syscall.Credential{Uid: nsCommandID, Gid: nsCommandID}
		return
	}
	sys.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}
}

// nsCommandID is the uid and gid of the helper and its commands inside
// their user namespace.
const nsCommandID = 65534

// confineThread applies the layers to the calling, locked thread.
func (s *Sandbox) confineThread(rulesetFD int, prog *filterProg, cgroup string) error {
	if cgroup != "" {
		if err := s.pids.join(cgroup, unix.Gettid()); err != nil {
			return fmt.Errorf("sandbox: pids cgroup: %w", err)
		}
	}
	if s.nnp {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("sandbox: no_new_privs: %w", err)
		}
	}
	if rulesetFD >= 0 {
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rulesetFD), 0, 0); errno != 0 {
			return fmt.Errorf("sandbox: landlock: %w", errno)
		}
	}
	if prog != nil {
		if err := prog.load(); err != nil {
			return fmt.Errorf("sandbox: seccomp: %w", err)
		}
	}
	return nil
}

// ruleset builds the call's Landlock ruleset: the system paths (opened
// once per set of masks and kept), the read paths, the workspace and the
// temp dir.
func (s *Sandbox) ruleset(p *Policy) (int, error) {
	masks := cleanAll(p.Masks)
	key := fmt.Sprint(masks, cleanAll(p.ReadPaths), p.ExecFiles)
	s.fixedMu.Lock()
	fixed, ok := s.fixed[key]
	if !ok {
		var allowed []pathRule
		for _, d := range SystemPaths {
			allowed = append(allowed, pathRule{path: d, access: accessRead})
		}
		for _, d := range cleanAll(p.ReadPaths) {
			allowed = append(allowed, pathRule{path: d, access: accessRead})
		}
		rules := expand(allowed, masks)
		for _, f := range p.ExecFiles {
			rules = append(rules, pathRule{path: f, access: accessExec})
		}
		for _, d := range devFiles {
			rules = append(rules, pathRule{path: d, access: accessDev})
		}
		var err error
		if fixed, err = openRules(rules); err != nil {
			s.fixedMu.Unlock()
			return -1, err
		}
		s.fixed[key] = fixed
	}
	s.fixedMu.Unlock()

	var own []pathRule
	for _, d := range append([]string{p.Workspace, p.TempDir}, p.WritePaths...) {
		if d != "" {
			own = append(own, pathRule{path: filepath.Clean(d), access: accessReadWrite})
		}
	}
	call, err := openRules(expand(own, masks))
	if err != nil {
		return -1, err
	}
	defer closeRules(call)
	return ruleset(s.abi, p.Network, fixed, call)
}

func cleanAll(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != "" {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}
