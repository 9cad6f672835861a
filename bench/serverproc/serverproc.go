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
// returning once it says it is serving.
func Start(bin, dir, cfg string) (*Proc, error) {
	cfgPath := filepath.Join(dir, fmt.Sprintf("server-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", cfgPath, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
		"--workspace", filepath.Join(dir, "ws"))
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
