package docs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The well-known addresses the pages use, and what the runner puts in
// their place: the shared server's (docs/README.md).
func substitute(line string) string {
	return strings.NewReplacer("127.0.0.1:50051", shared.grpc, "127.0.0.1:9464", shared.metrics, "127.0.0.1:8080", shared.mcp, "127.0.0.1:8090", shared.web).Replace(line)
}

var buildOnce struct {
	sync.Once
	err error
}

// buildBinaries builds bin/toolnexus and bin/toolnexus-server into the
// tour directory once, as `make build` does.
func buildBinaries(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		for _, b := range [][2]string{{"toolnexus", "../cmd/client"}, {"toolnexus-server", "../cmd/server"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(shared.dir, "bin", b[0]), b[1])
			if out, err := cmd.CombinedOutput(); err != nil {
				buildOnce.err = &buildError{b[0], string(out), err}
				return
			}
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
}

type buildError struct {
	bin, out string
	err      error
}

func (e *buildError) Error() string { return "go build " + e.bin + ": " + e.err.Error() + "\n" + e.out }

// Every shell command in the pages runs, against the shared server: the
// tour, the sessions, the CLI, curl, --check of every server start,
// Kustomize builds, make targets (dry run). docs/README.md says how each
// kind of line is run.
func TestShellCommands(t *testing.T) {
	buildBinaries(t)
	n := 0
	for _, b := range allBlocks(t) {
		if b.lang != "sh" || b.marker != "" {
			continue
		}
		n++
		t.Run(b.String(), func(t *testing.T) {
			cwd := ".."
			for _, l := range commandLines(b.text, b.line+1) {
				cwd = runLine(t, cwd, l.text, l.at)
			}
		})
	}
	if n < 5 {
		t.Fatalf("only %d shell blocks run", n)
	}
}

// cmdLine is one command of a block and the page line it starts on.
type cmdLine struct {
	text string
	at   int
}

// commandLines are the block's commands: continuation lines joined, blank
// lines dropped, a comment-only line dropped or — when indented under a
// command, as the tour writes long comments — appended to it as its
// comment. first is the page line of the block's first line.
func commandLines(text string, first int) []cmdLine {
	var out []cmdLine
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(l)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			if strings.HasPrefix(trimmed, "#") && strings.HasPrefix(l, " ") && len(out) > 0 {
				out[len(out)-1].text += " " + trimmed
			}
			continue
		}
		if cur.Len() == 0 {
			start = first + i
		}
		if c, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(c + " ")
			continue
		}
		cur.WriteString(trimmed)
		out = append(out, cmdLine{cur.String(), start})
		cur.Reset()
	}
	return out
}

// lineTimeout bounds one command line.
const lineTimeout = 3 * time.Minute

var (
	envPrefixRE = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*`)
	mayFailRE   = regexp.MustCompile(`exit \$\?|is_error|suspends|exit 1`)
)

// runLine runs one command line as the runner's rules say and returns the
// working directory for the next (a `cd` changes it).
func runLine(t *testing.T, cwd, line string, at int) string {
	t.Helper()
	code, comment, _ := strings.Cut(line, " #")
	code = strings.TrimSpace(substitute(code))
	mayFail := mayFailRE.MatchString(line)
	env := envPrefixRE.FindString(code)
	cmd := strings.TrimSpace(strings.TrimPrefix(code, env))
	dir := ".."
	timeout := time.Duration(0)
	switch {
	case strings.HasPrefix(cmd, "cd "):
		return filepath.Join(cwd, strings.TrimSpace(strings.TrimPrefix(cmd, "cd ")))
	case cmd == "make run":
		cmd, dir = "bin/toolnexus-server --check", shared.dir // the shared server stands in for it
	case strings.HasPrefix(cmd, "make "):
		cmd = "make -n " + strings.TrimPrefix(cmd, "make ") + " >/dev/null" // the target exists and its recipe expands
	case strings.HasPrefix(cmd, "bin/toolnexus-server"):
		cmd, dir = strings.TrimSuffix(strings.TrimSpace(cmd), "&"), shared.dir
		if !strings.Contains(cmd, "--check") {
			cmd += " --check" // a start: its flags and environment, checked; the shared server serves
		}
	case strings.HasPrefix(cmd, "bin/toolnexus watch"):
		cmd, dir, timeout = "timeout 2 "+cmd, shared.dir, 2*time.Second // runs until Ctrl-C
	case strings.HasPrefix(cmd, "bin/") || strings.HasPrefix(cmd, "curl "):
		dir = shared.dir
	case strings.HasPrefix(cmd, "kubectl apply -k "):
		cmd = "kubectl kustomize " + strings.TrimPrefix(cmd, "kubectl apply -k ") + " >/dev/null" // no cluster here: built, not applied
	case strings.HasPrefix(cmd, "kubectl create "):
		cmd += " --dry-run=client -o yaml >/dev/null"
	default:
		dir = cwd
	}
	// A bound, so a line that serves forever fails instead of hanging the run.
	ctx, cancel := context.WithTimeout(context.Background(), lineTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+env+cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	c.Dir = dir
	c.Env = append(os.Environ(), "TOOLNEXUS_ADDR="+shared.grpc)
	out, err := c.CombinedOutput()
	codeOf := 0
	if ee, ok := err.(*exec.ExitError); ok {
		codeOf = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("line %d: %v", at, err)
	}
	switch {
	case codeOf == 0, codeOf == 1 && mayFail, codeOf == 124 && timeout > 0:
	default:
		t.Errorf("line %d: %s\n  ran as: (cd %s && %s)\n  exit %d (comment %q):\n%s", at, line, dir, env+cmd, codeOf, comment, out)
	}
	return cwd
}
