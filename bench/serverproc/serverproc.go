// Package serverproc runs the real toolnexus server binary as a child
// process for the benchmark and soak programs: the shape it has in
// production, with its own /metrics to read.
package serverproc

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is the toolnexus server under test, as a real child process:
// the drills kill its children and send it signals, as an operator would.
type Proc struct {
	Cmd         *exec.Cmd
	Addr        string
	MetricsAddr string
	cfgPath     string
	log         *os.File
}

var servingRe = regexp.MustCompile(`msg="toolnexus serving" grpc=(\S+) metrics=(\S+)`)

// Start writes cfg into dir and starts bin on ephemeral loopback ports,
// returning once it says it is serving. extra are more flags for bin.
func Start(bin, dir, cfg string, extra ...string) (*Proc, error) {
	cfgPath := filepath.Join(dir, fmt.Sprintf("server-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	args := append([]string{"--config", cfgPath, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
		"--workspace", filepath.Join(dir, "ws")}, extra...)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, cfgPath: cfgPath, log: logf}
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if !sent {
				if m := servingRe.FindStringSubmatch(line); m != nil {
					p.Addr, p.MetricsAddr = m[1], m[2]
					sent = true
					found <- true
				}
			}
		}
		if !sent {
			found <- false
		}
	}()
	select {
	case ok := <-found:
		if !ok {
			return nil, fmt.Errorf("server exited before serving; see %s", logf.Name())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("server did not start within 60s; see %s", logf.Name())
	}
	return p, nil
}

// Build compiles the bench module's command pkg (a directory under bench/,
// such as "mcpecho") to out. It runs go from the current directory, which
// must be inside the bench module.
func Build(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, "github.com/toolnexus/toolnexus/bench/"+pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Stop sends SIGTERM and waits up to 30 s for a clean exit.
func (p *Proc) Stop() error {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		p.Cmd.Process.Kill()
		return fmt.Errorf("server did not stop within 30s of SIGTERM")
	}
}

// Reload rewrites the config file and sends SIGHUP.
func (p *Proc) Reload(cfg string) error {
	if err := os.WriteFile(p.cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	return p.Cmd.Process.Signal(syscall.SIGHUP)
}

// Metric reads one sample from /metrics: the first line starting with
// name (including any label text given), as a float.
func (p *Proc) Metric(nameAndLabels string) (float64, error) {
	resp, err := http.Get("http://" + p.MetricsAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, nameAndLabels) {
			f := strings.Fields(line)
			return strconv.ParseFloat(f[len(f)-1], 64)
		}
	}
	return 0, nil
}

// Baseline is a benchmark baseline program (bench/minecho, bench/minproxy)
// running as its own process; it prints its gRPC address on stdout.
type Baseline struct {
	Cmd  *exec.Cmd
	Addr string
}

// StartBaseline starts bin with args and waits for the address line.
func StartBaseline(bin string, args ...string) (*Baseline, error) {
	return StartBaselineEnv(bin, nil, args...)
}

// StartBaselineEnv is StartBaseline with extra environment variables
// ("KEY=value") on top of the benchmark's own.
func StartBaselineEnv(bin string, env []string, args ...string) (*Baseline, error) {
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		line := ""
		if sc.Scan() {
			line = strings.TrimSpace(sc.Text())
		}
		addr <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a := <-addr:
		if a == "" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("%s exited before printing its address", filepath.Base(bin))
		}
		return &Baseline{Cmd: cmd, Addr: a}, nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s did not start within 60s", filepath.Base(bin))
	}
}

// Stop ends the baseline and its children (SIGTERM, then wait).
func (b *Baseline) Stop() {
	_ = b.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = b.Cmd.Process.Kill()
		<-done
	}
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// CPUTime is the user + system CPU time pid has used so far, over all its
// threads, read from /proc/<pid>/stat (10 ms resolution).
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	// After the command: state(3) ppid(4) ... utime(14) stime(15).
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(u+st) * clockTick, nil
}

// Children lists the PIDs whose parent is pid (from /proc).
func Children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				out = append(out, n)
			}
		}
	}
	return out
}
