package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pidsGroups bounds the processes of a command when RLIMIT_NPROC cannot:
// the kernel does not apply that limit to uid 0, and a server running as
// root runs its commands as uid 0 of the host (mapped to nobody inside).
// It uses the cgroup v1 pids controller: the locked thread that forks the
// command joins a fresh group (a v1 group may hold single threads) with
// pids.max set, so the command and every descendant are counted from
// their first instruction on, with no window after the fork.
//
// Groups are reused: a group whose thread has exited and whose processes
// are gone is put back; Close removes them all.
type pidsGroups struct {
	dir string // our own group directory, where the groups are made

	mu   sync.Mutex
	free []string
	all  []string
	next int
}

// findPidsGroups returns the pids groups, or why they cannot be used.
func findPidsGroups() (*pidsGroups, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("cannot read /proc/self/cgroup: %v", pathless(err))
	}
	own := ""
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "pids" {
				own = parts[2]
			}
		}
	}
	if own == "" {
		return nil, errors.New("no cgroup v1 pids controller is mounted")
	}
	mount := "/sys/fs/cgroup/pids"
	base := filepath.Join(mount, own)
	if _, err := os.Stat(filepath.Join(base, "tasks")); err != nil {
		return nil, fmt.Errorf("the pids controller is not mounted at %s", mount)
	}
	removeStale(base)
	dir, err := os.MkdirTemp(base, fmt.Sprintf("toolnexus-sandbox-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("cannot create a pids cgroup under %s: %v", base, pathless(err))
	}
	return &pidsGroups{dir: dir}, nil
}

// acquire returns a group with pids.max set to max.
func (g *pidsGroups) acquire(max int) (string, error) {
	g.mu.Lock()
	var dir string
	for i, d := range g.free {
		if cur, err := os.ReadFile(filepath.Join(d, "pids.current")); err == nil && strings.TrimSpace(string(cur)) == "0" {
			dir = d
			g.free = append(g.free[:i], g.free[i+1:]...)
			break
		}
	}
	if dir == "" {
		dir = filepath.Join(g.dir, strconv.Itoa(g.next))
		g.next++
		g.all = append(g.all, dir)
	}
	g.mu.Unlock()
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		return "", err
	}
	return dir, nil
}

// join moves the calling thread (tid) into dir.
func (g *pidsGroups) join(dir string, tid int) error {
	return os.WriteFile(filepath.Join(dir, "tasks"), []byte(strconv.Itoa(tid)), 0)
}

func (g *pidsGroups) release(dir string) {
	g.mu.Lock()
	g.free = append(g.free, dir)
	g.mu.Unlock()
}

// close removes every group that is empty, and the parent.
func (g *pidsGroups) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range g.all {
		// A thread that forked a command leaves its group a moment
		// after the command is reaped.
		for i := 0; i < 100; i++ {
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	_ = os.Remove(g.dir)
}

func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// removeStale removes the groups of servers that are gone (killed before
// they could clean up): toolnexus-sandbox-PID-* where PID no longer runs.
func removeStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "toolnexus-sandbox-")
		if !ok || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			continue
		}
		dir := filepath.Join(base, e.Name())
		subs, _ := os.ReadDir(dir)
		for _, sub := range subs {
			if sub.IsDir() {
				_ = os.Remove(filepath.Join(dir, sub.Name()))
			}
		}
		_ = os.Remove(dir)
	}
}
