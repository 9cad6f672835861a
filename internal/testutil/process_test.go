package testutil_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

const orphanChildEnv = "TESTUTIL_ORPHAN_CHILD"

// orphanChild is the test binary re-executed: it starts one process the
// way kind says, prints its pid and exits at once, as a test binary does
// on a panic or a -timeout: no cleanup runs.
func orphanChild(t *testing.T, kind string) {
	var pid int
	switch kind {
	case "redis":
		r := testutil.StartRedis(t)
		pid = r.Pid()
	default:
		cmd := exec.Command("sleep", "300")
		if err := testutil.StartTied(cmd); err != nil {
			t.Fatal(err)
		}
		pid = cmd.Process.Pid
	}
	fmt.Printf("pid=%d\n", pid)
	os.Exit(3)
}

// alive says whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// A process a test starts ends with the test binary even when no cleanup
// runs (a panic, a -timeout, a kill): `make test` left redis-servers
// running after it ended.
func TestStartedProcessesEndWithTheTestBinary(t *testing.T) {
	if kind := os.Getenv(orphanChildEnv); kind != "" {
		orphanChild(t, kind)
		return
	}
	for _, kind := range []string{"sleep", "redis"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartedProcessesEndWithTheTestBinary$")
			cmd.Env = append(os.Environ(), orphanChildEnv+"="+kind)
			out, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "pid="); ok {
					pid, _ = strconv.Atoi(v)
				}
			}
			_ = cmd.Wait()
			if pid == 0 {
				if kind == "redis" && os.Getenv("TOOLNEXUS_REQUIRE_E2E") != "1" {
					if _, err := exec.LookPath("redis-server"); err != nil {
						t.Skip("redis-server is not installed")
					}
				}
				t.Fatal("the child printed no pid")
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // when the test fails
			deadline := time.Now().Add(5 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the %s process (pid %d) outlived the test binary that started it", kind, pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
