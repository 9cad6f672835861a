// Command subreaper runs a command and fails when a process it started
// outlives it: `make test` must leave nothing behind (a redis-server, an
// nginx, an npm peer, a server replica), whatever a test's outcome.
//
//	go run ./internal/testutil/cmd/subreaper -- make test
//
// It marks itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every
// process the command starts that is orphaned — its parent ended without
// stopping it — is re-parented to subreaper instead of init. Once the
// command has exited, subreaper gives the stragglers a grace period to end
// (a test's cleanup may still be killing one), then names each survivor,
// kills it and exits 1. Otherwise it exits with the command's own status.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("subreaper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	grace := fs.Duration("grace", 5*time.Second, "how long processes left behind may take to end on their own")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: subreaper [-grace 5s] -- COMMAND [ARGS...]")
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "subreaper: prctl(PR_SET_CHILD_SUBREAPER): %v\n", err)
		return 2
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "subreaper: %v\n", err)
		return 2
	}
	// Ctrl-C and a CI runner's SIGTERM go to the command, which stops its
	// own children; what it does not stop is reported like any leak.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	// Orphans that end while the command runs are reaped as they end, as
	// init would: a zombie left in its process group would keep a test's
	// kill(-pgid, 0) succeeding, a wait for the group to be gone.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-tick.C:
				for _, pid := range orphanZombies(os.Getpid(), cmd.Process.Pid) {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				}
			case <-done:
				return
			}
		}
	}()
	code := exitCode(cmd.Wait())
	left := survivors(*grace)
	if len(left) == 0 {
		return code
	}
	fmt.Fprintf(stderr, "subreaper: %d process(es) started by %q outlived it (a test started them and did not stop them; stop every process with t.Cleanup):\n", len(left), fs.Args())
	for _, p := range left {
		fmt.Fprintf(stderr, "  pid %d: %s\n", p.pid, p.cmdline)
		_ = unix.Kill(p.pid, unix.SIGKILL)
	}
	reapAll(2 * time.Second)
	return 1
}

// exitCode is the command's status as a shell reports it.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		return 1
	}
}

// survivors reaps the orphans that end within grace and returns the
// processes still re-parented to us after it, with their descendants.
func survivors(grace time.Duration) []proc {
	deadline := time.Now().Add(grace)
	for {
		reapAll(0)
		left := descendants(os.Getpid())
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reapAll collects every exited child, waiting up to wait for the rest.
func reapAll(wait time.Duration) {
	deadline := time.Now().Add(wait)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case pid > 0:
			continue
		case err != nil || time.Now().After(deadline): // ECHILD: none left
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
