package testutil

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StartTied starts cmd so that it cannot outlive the test process: the
// kernel sends it SIGKILL (Pdeathsig) when the test binary ends, however it
// ends — a test that panics, `go test -timeout`, a kill — when no cleanup
// runs. The test still stops it with t.Cleanup and waits for it; this is
// the net under that. A process that starts children of its own must take
// them with it (a process group killed by the cleanup, or a single-process
// mode: nginx's `master_process off`).
func StartTied(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return startOnSpawner(cmd)
}

// spawner is an OS thread that forks the tests' processes and lives as
// long as any of them does. Pdeathsig fires when the *thread* that forked
// a process ends, not the process; Go ends a thread whose locked goroutine
// returns (the sandbox does that on purpose), so a process forked from an
// ordinary goroutine could be killed in the middle of its test. Forked
// here, it is killed only with the test binary. The thread ends (and its
// goroutine, which goleak would otherwise count) once every process it
// forked has been waited for.
type spawner struct {
	reqs    chan func()
	pending int   // requests sent and not yet run; guarded by spawnMu
	pids    []int // processes forked and not yet reaped; guarded by spawnMu
}

var (
	spawnMu      sync.Mutex
	spawnCurrent *spawner
)

func startOnSpawner(cmd *exec.Cmd) error {
	spawnMu.Lock()
	s := spawnCurrent
	if s == nil {
		s = &spawner{reqs: make(chan func())}
		spawnCurrent = s
		go s.run()
	}
	s.pending++
	spawnMu.Unlock()
	errc := make(chan error, 1)
	s.reqs <- func() {
		err := cmd.Start()
		spawnMu.Lock()
		s.pending--
		if err == nil {
			s.pids = append(s.pids, cmd.Process.Pid)
		}
		spawnMu.Unlock()
		errc <- err
	}
	return <-errc
}

func (s *spawner) run() {
	runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after its processes
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case f := <-s.reqs:
			f()
		case <-tick.C:
			spawnMu.Lock()
			// A process is gone once reaped: kill(pid, 0) still finds a
			// zombie, so the thread outlives every process until its Wait.
			s.pids = slices.DeleteFunc(s.pids, func(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH })
			if len(s.pids) == 0 && s.pending == 0 {
				spawnCurrent = nil
				spawnMu.Unlock()
				return
			}
			spawnMu.Unlock()
		}
	}
}

// KillSession sends SIGKILL to every process of the session sid (a
// process started with Setsid leads the session of its pid): what it
// started in process groups of its own — a server's stdio MCP servers —
// included, which a kill of its group misses and which may outlive it (a
// node server ignores its stdin closing).
func KillSession(sid int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		// pid (comm) state ppid pgrp session ...
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
