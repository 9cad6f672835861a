package builtin_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A bash loop swaps a path component between a directory inside the
// workspace and a symlink to one outside while read, write, grep and
// apply_patch run through that component: the tools open every path
// beneath the workspace's root descriptor, so none of 1,000 calls reads,
// writes or creates anything outside.
func TestSymlinkSwapRaceHasNoEscapes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the swapping loop")
	}
	k := newKit(t)
	out := outside(t)
	must(t, os.WriteFile(filepath.Join(out, "secret.txt"), []byte("OUTSIDE-SECRET\n"), 0o644))
	k.write("d/secret.txt", "inside\n")

	must(t, os.MkdirAll(filepath.Join(k.dir, "e"), 0o755))
	// p and q are symlinks that flip between a directory inside (d, e)
	// and the outside one, each time replaced in one rename. Reads and
	// searches go through p, writes and patches through q (so the
	// searched directory stays small).
	must(t, os.Symlink("d", filepath.Join(k.dir, "p")))
	must(t, os.Symlink("e", filepath.Join(k.dir, "q")))
	loop := exec.Command(bash, "-c", `while :; do
		ln -sfn d p.tmp && mv -T p.tmp p; ln -sfn e q.tmp && mv -T q.tmp q
		ln -sfn `+out+` p.tmp && mv -T p.tmp p; ln -sfn `+out+` q.tmp && mv -T q.tmp q
	done`)
	loop.Dir = k.dir
	loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, loop.Start())
	defer func() {
		// The loop and any ln or mv it runs, before the workspace is
		// removed.
		syscall.Kill(-loop.Process.Pid, syscall.SIGKILL)
		loop.Wait()
		// Until the group is gone (its killed members reaped), for at
		// most ten seconds: a zombie nobody reaps would hold it forever.
		for end := time.Now().Add(10 * time.Second); syscall.Kill(-loop.Process.Pid, 0) == nil && time.Now().Before(end); {
			runtime.Gosched()
		}
	}()
	// The calls start once the loop is swapping: p seen pointing out.
	for {
		if target, _ := os.Readlink(filepath.Join(k.dir, "p")); target == out {
			break
		}
		runtime.Gosched()
	}

	const calls = 250
	var escapes, refused, ok atomic.Int64
	var perTool sync.Map
	var wg sync.WaitGroup
	for _, name := range []string{"read", "write", "grep", "apply_patch"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inside int
			defer func() { perTool.Store(name, inside) }()
			for i := 0; i < calls; i++ {
				// Leave the swapping loop a core: it must keep
				// flipping while the calls run.
				time.Sleep(time.Millisecond)
				var args map[string]any
				switch name {
				case "read":
					args = map[string]any{"path": "p/secret.txt"}
				case "write":
					args = map[string]any{"path": fmt.Sprintf("q/w-%d.txt", i), "content": "planted"}
				case "grep":
					args = map[string]any{"pattern": "SECRET|inside", "path": "p"}
				case "apply_patch":
					args = map[string]any{"patchText": fmt.Sprintf("*** Begin Patch\n*** Add File: q/a-%d.txt\n+planted\n*** End Patch", i)}
				}
				r := k.run(name, args)
				switch {
				case strings.Contains(r.Output, "OUTSIDE-SECRET"):
					escapes.Add(1)
				case r.IsError:
					refused.Add(1)
				default:
					ok.Add(1)
					inside++
				}
			}
		}()
	}
	wg.Wait()
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if e.Name() != "secret.txt" {
			escapes.Add(1)
			t.Errorf("created outside the workspace: %s", e.Name())
		}
	}
	t.Logf("%d calls: %d ran inside, %d refused, %d escapes", 4*calls, ok.Load(), refused.Load(), escapes.Load())
	perTool.Range(func(name, n any) bool { t.Logf("%s: %d of %d ran inside", name, n, calls); return true })
	if escapes.Load() != 0 {
		t.Fatalf("%d escapes", escapes.Load())
	}
	if ok.Load() == 0 {
		t.Fatal("no call ran while the link pointed inside: the race was not exercised")
	}
}
