package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// interpreters are the pids of the run_code interpreters this test
// process started (directly, or through the sandbox's helper).
func interpreters() []int {
	me := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmdline, []byte(childArg0+"\x00")) {
			continue
		}
		for p, i := pid, 0; i < 8 && p > 1; i++ {
			if p = statusInt(p, "PPid"); p == me {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// status is one field of /proc/<pid>/status ("" when the process is gone).
func status(pid int, field string) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.Join(strings.Fields(rest), " ")
		}
	}
	return ""
}

func statusInt(pid int, field string) int {
	n, _ := strconv.Atoi(status(pid, field))
	return n
}

func needHelper(t *testing.T) {
	t.Helper()
	st := box.Status()
	if box == nil || !st.Active(sandbox.LayerUserNS) || !st.Active(sandbox.LayerPIDNS) || !st.Active(sandbox.LayerSeccomp) || !st.Active(sandbox.LayerNoNewPrivs) {
		t.Skipf("the sandbox here cannot run the interpreter as bash's commands run: %s", st)
	}
}

// Issue 45, 7: the interpreter is not the server's child running as root
// with every capability in the host's namespaces any more; it runs as
// bash's commands do. Checked on the real child, from /proc, while it waits
// for an inner call: the sandbox's unprivileged uid (under a root server),
// no capability, no_new_privs, a seccomp filter, namespaces of its own, and
// an address-space limit.
func TestInterpreterRunsInTheSandbox(t *testing.T) {
	needHelper(t)
	var seen map[string]string
	inspect := func(_ context.Context, name string, _ json.RawMessage) InnerResult {
		pids := interpreters()
		if len(pids) != 1 {
			return InnerResult{Output: fmt.Sprintf("%d interpreters", len(pids)), IsError: true}
		}
		pid := pids[0]
		seen = map[string]string{}
		for _, f := range []string{"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapAmb", "NoNewPrivs", "Seccomp"} {
			seen[f] = status(pid, f)
		}
		for _, ns := range []string{"user", "pid", "net", "ipc", "uts"} {
			theirs, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
			ours, _ := os.Readlink("/proc/self/ns/" + ns)
			seen["ns/"+ns] = fmt.Sprint(theirs != "" && theirs != ours)
		}
		limits, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
		for _, l := range strings.Split(string(limits), "\n") {
			if strings.HasPrefix(l, "Max address space") {
				seen["as"] = strings.Fields(l)[3]
			}
		}
		return InnerResult{Output: "seen"}
	}
	if r := Run(context.Background(), `return tools.inspect({})`, testLimits(), inspect); r.Error != "" || seen == nil {
		t.Fatalf("run: %+v", r)
	}
	t.Logf("the interpreter, from /proc: %v", seen)
	id := fmt.Sprint(os.Getuid())
	if os.Geteuid() == 0 {
		id = "65534" // a root server's commands act as sandbox.uid
	}
	want := map[string]string{
		"Uid": strings.Repeat(id+" ", 3) + id, "Groups": "",
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000", "CapAmb": "0000000000000000",
		"NoNewPrivs": "1", "Seccomp": "2",
		"ns/user": "true", "ns/pid": "true", "ns/net": "true", "ns/ipc": "true", "ns/uts": "true",
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("%s: %q, want %q", k, seen[k], v)
		}
	}
	if as, err := strconv.ParseUint(seen["as"], 10, 64); err != nil || as < 512<<20 || as > 1<<40 {
		t.Errorf("address-space limit %q: want the runtime's mapping plus 512 MiB", seen["as"])
	}
}

// Issue 45, 7: sixteen scripts at once never run more interpreters than
// the caps, in total and per principal — in the sandbox and without one
// (sandbox.mode off). Counted twice: the interpreter processes alive (in
// /proc) and the scripts inside an inner call at once, each held there
// for a while so that the runs overlap.
func TestPoolCapsTheInterpreters(t *testing.T) {
	for _, sandboxed := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			lim := testLimits()
			lim.MaxConcurrent, lim.MaxPerPrincipal = 3, 2
			if !sandboxed {
				lim.Sandbox = nil
			}
			var pool Pool
			var alive, mostAlive, inCall atomic.Int64
			mostInCall := map[string]*atomic.Int64{"a": {}, "b": {}}
			inCallBy := map[string]*atomic.Int64{"a": {}, "b": {}}
			stop := make(chan struct{})
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				for {
					n := int64(len(interpreters()))
					alive.Store(n)
					if n > mostAlive.Load() {
						mostAlive.Store(n)
					}
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			var wg sync.WaitGroup
			for i := 0; i < 16; i++ {
				principal := []string{"a", "b"}[i%2]
				hold := func(_ context.Context, _ string, _ json.RawMessage) InnerResult {
					n := inCallBy[principal].Add(1)
					if n > mostInCall[principal].Load() {
						mostInCall[principal].Store(n)
					}
					inCall.Add(1)
					time.Sleep(100 * time.Millisecond)
					inCall.Add(-1)
					inCallBy[principal].Add(-1)
					return InnerResult{Output: "held"}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r := pool.Run(context.Background(), principal, `return tools.hold({})`, lim, hold); r.Error != "" {
						t.Errorf("run: %s", r.Error)
					}
				}()
			}
			wg.Wait()
			close(stop)
			<-watched
			if n := mostAlive.Load(); n > 3 || n < 2 {
				t.Errorf("at most %d interpreters alive at once; want 2 or 3 (the cap is 3)", n)
			}
			for p, n := range mostInCall {
				if n.Load() > 2 {
					t.Errorf("principal %s had %d scripts running at once; the cap is 2", p, n.Load())
				}
			}
			if n := len(interpreters()); n != 0 {
				t.Errorf("%d interpreters left", n)
			}
		})
	}
}

// A run that finds its caller's interpreters busy until its deadline is
// not started, and says which cap held it.
func TestPoolWaitsUntilTheDeadline(t *testing.T) {
	lim := testLimits()
	lim.MaxConcurrent, lim.MaxPerPrincipal = 8, 1
	var pool Pool
	release := make(chan struct{})
	held := make(chan struct{})
	done := make(chan Result)
	go func() {
		done <- pool.Run(context.Background(), "a", `return tools.hold({})`, lim, func(context.Context, string, json.RawMessage) InnerResult {
			close(held)
			<-release
			return InnerResult{Output: "1"}
		})
	}()
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	r := pool.Run(ctx, "a", `return 1`, lim, echo)
	cancel()
	if !strings.Contains(r.Error, "not started: this caller's 1 interpreters (codeMode.maxConcurrencyPerPrincipal) stayed busy until the call's deadline") {
		t.Fatalf("%q", r.Error)
	}
	if r := pool.Run(context.Background(), "b", `return 2`, lim, echo); r.Error != "" || string(r.Value) != "2" {
		t.Fatalf("another caller: %+v", r)
	}
	close(release)
	if r := <-done; r.Error != "" {
		t.Fatalf("%+v", r)
	}
}
